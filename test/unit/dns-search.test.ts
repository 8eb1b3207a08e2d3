import { describe, expect, it } from 'vitest';
import {
  dnsSearchPlan,
  isValidDnsName,
  kubernetesDefaultResolvConf,
  validateDnsName,
  type DnsOutcome,
  type DnsQueryType,
} from '../../src/analysis/dns-search.js';
import { parseResolvConf } from '../../src/parsers/resolv-conf.js';

const conf = (...lines: string[]) => parseResolvConf(`${lines.join('\n')}\n`, 'test').value;
const pod = kubernetesDefaultResolvConf('default');
const qnames = (p: ReturnType<typeof dnsSearchPlan>) => p.steps.map((s) => s.qname);
/** An oracle: `answers` get an answer for every type, everything else NXDOMAIN, `overrides` per name. */
const oracle =
  (answers: string[], overrides: Record<string, DnsOutcome> = {}) =>
  (qname: string, _t: DnsQueryType): DnsOutcome =>
    overrides[qname] ?? (answers.includes(qname) ? 'answer' : 'nxdomain');

describe('glibc search expansion', () => {
  it('kubernetes.default from a pod: 1 dot < ndots:5, so the search list comes first, then as-is', () => {
    const p = dnsSearchPlan(pod, 'kubernetes.default');
    expect([p.dots, p.ndots, p.result, p.stopReason]).toEqual([1, 5, 'failed', 'exhausted']);
    expect(qnames(p)).toEqual([
      'kubernetes.default.default.svc.cluster.local.',
      'kubernetes.default.svc.cluster.local.',
      'kubernetes.default.cluster.local.',
      'kubernetes.default.',
    ]);
    expect(p.steps.map((s) => s.origin)).toEqual(['search', 'search', 'search', 'as-is']);
    for (const s of p.steps) expect([s.types, s.sending, s.transport]).toEqual([['A', 'AAAA'], 'parallel', 'udp']);
  });

  it('stops at the first step that answers', () => {
    const p = dnsSearchPlan(pod, 'kubernetes.default', { answer: oracle(['kubernetes.default.svc.cluster.local.']) });
    expect([p.result, p.stopReason, p.steps.length]).toEqual(['answer', 'answered', 2]);
    expect(p.steps.map((s) => s.outcome)).toEqual(['nxdomain', 'answer']);
  });

  it('an external name with fewer than 5 dots costs (search domains + 1) × 2 queries from a pod', () => {
    const name = 's3.eu-west-1.amazonaws.com';
    const p = dnsSearchPlan(pod, name, { answer: oracle([`${name}.`]) });
    expect(qnames(p)).toEqual([...pod.search.map((d) => `${name}.${d}.`), `${name}.`]);
    expect(p.steps.flatMap((s) => s.types)).toHaveLength((pod.search.length + 1) * 2);
    expect(p.result).toBe('answer');
  });

  it('with dots >= ndots the name goes as-is first, then through the search list', () => {
    const node = conf('nameserver 10.0.0.2', 'search corp.example');
    expect(qnames(dnsSearchPlan(node, 'www.example.com'))).toEqual(['www.example.com.', 'www.example.com.corp.example.']);
    const five = dnsSearchPlan(pod, 'a.b.c.d.e.f');
    expect(qnames(five)[0]).toBe('a.b.c.d.e.f.');
    expect(qnames(five)).toHaveLength(1 + pod.search.length); // never as-is twice
  });

  it('a trailing dot means absolute: one query, never searched, even when it fails', () => {
    const p = dnsSearchPlan(pod, 'web.default.svc.cluster.local.');
    expect(qnames(p)).toEqual(['web.default.svc.cluster.local.']);
    expect([p.absolute, p.stopReason]).toEqual([true, 'absolute-name-failed']);
  });

  it('NXDOMAIN, NODATA and SERVFAIL continue the search; REFUSED or a timeout end it', () => {
    const o = { 'web.default.svc.cluster.local.': 'servfail', 'web.svc.cluster.local.': 'nodata' } as const;
    expect(qnames(dnsSearchPlan(pod, 'web', { answer: oracle([], o) }))).toHaveLength(4);
    for (const stop of ['refused', 'timeout'] as const) {
      const p = dnsSearchPlan(pod, 'web', { answer: oracle([], { 'web.svc.cluster.local.': stop }) });
      expect([qnames(p).length, p.stopReason, p.steps.at(-1)!.outcome]).toEqual([2, 'search-aborted', stop]);
    }
  });

  it('one answered type is enough (A answers, AAAA has no data)', () => {
    const answer = (q: string, t: DnsQueryType): DnsOutcome => (q === 'web.default.svc.cluster.local.' ? (t === 'A' ? 'answer' : 'nodata') : 'nxdomain');
    const p = dnsSearchPlan(pod, 'web', { answer });
    expect([p.steps.length, p.steps[0]!.outcomes, p.result]).toEqual([1, { A: 'answer', AAAA: 'nodata' }, 'answer']);
  });

  it('no-tld-query drops the final as-is query of a dotless name only', () => {
    const c = conf('search svc.cluster.local', 'options no-tld-query');
    expect(qnames(dnsSearchPlan(c, 'web'))).toEqual(['web.svc.cluster.local.']);
    // ndots is 1 here: a dotted name went as-is first, so there is no final as-is query.
    expect(qnames(dnsSearchPlan(c, 'web.default'))).toEqual(['web.default.', 'web.default.svc.cluster.local.']);
    const ndots5 = conf('search svc.cluster.local', 'options no-tld-query ndots:5');
    expect(qnames(dnsSearchPlan(ndots5, 'web.default'))).toEqual(['web.default.svc.cluster.local.', 'web.default.']);
  });

  it('a root domain in the search list ("." ) replaces the final as-is query; leading dots are stripped', () => {
    const c = conf('search .cluster.local .');
    expect(qnames(dnsSearchPlan(c, 'web'))).toEqual(['web.cluster.local.', 'web.']);
  });

  it('domain vs search: the last line decides the search list', () => {
    expect(qnames(dnsSearchPlan(conf('search a.example', 'domain b.example'), 'x'))).toEqual(['x.b.example.', 'x.']);
    expect(qnames(dnsSearchPlan(conf('domain b.example', 'search a.example c.example'), 'x'))).toEqual(['x.a.example.', 'x.c.example.', 'x.']);
  });

  it('without search or domain, glibc uses the domain of the host name', () => {
    expect(qnames(dnsSearchPlan(conf('nameserver 10.0.0.1'), 'x', { hostname: 'node-1.corp.example' }))).toEqual(['x.corp.example.', 'x.']);
    expect(qnames(dnsSearchPlan(conf('nameserver 10.0.0.1'), 'x', { hostname: 'node-1' }))).toEqual(['x.']);
  });

  it('single-request, single-request-reopen, use-vc, no-aaaa and the getaddrinfo family', () => {
    const one = (opts: string, family?: 'inet' | 'inet6') =>
      dnsSearchPlan(conf(`options ${opts}`), 'x.', family ? { family } : {}).steps[0]!;
    expect(one('single-request').sending).toBe('sequential');
    expect(one('single-request-reopen').sending).toBe('sequential-reopen');
    expect(one('use-vc').transport).toBe('tcp');
    expect(one('no-aaaa').types).toEqual(['A']);
    expect(one('edns0', 'inet').types).toEqual(['A']);
    expect(one('edns0', 'inet6').types).toEqual(['AAAA']);
    expect(dnsSearchPlan(conf('options no-aaaa'), 'x', { family: 'inet6' }).stopReason).toBe('no-query-types');
  });

  it('AI_ADDRCONFIG: only families with a non-loopback address are asked for', () => {
    const types = (ipv4: boolean, ipv6: boolean, family?: 'inet' | 'inet6') =>
      dnsSearchPlan(pod, 'x.', { addrconfig: { ipv4, ipv6 }, ...(family ? { family } : {}) }).steps.map((s) => s.types)[0] ?? [];
    expect(types(true, false)).toEqual(['A']);
    expect(types(true, true)).toEqual(['A', 'AAAA']);
    expect(types(false, false)).toEqual(['A', 'AAAA']);
    expect(types(false, true)).toEqual(['AAAA', 'A']);
    expect(types(false, true, 'inet')).toEqual([]);
    expect(types(true, false, 'inet6')).toEqual([]);
  });

  it('legacy glibc (< 2.26) keeps 6 search domains and 255 characters; 2.26+ keeps all', () => {
    const seven = conf(`search ${Array.from({ length: 7 }, (_, i) => `d${i}.example`).join(' ')}`);
    expect(dnsSearchPlan(seven, 'x').searchList).toHaveLength(7);
    const legacy = dnsSearchPlan(seven, 'x', { glibc: 'legacy' });
    expect([legacy.searchList.length, legacy.droppedSearch]).toEqual([6, ['d6.example']]);
    const long = conf(`search ${'a'.repeat(60)}.example ${'b'.repeat(60)}.example ${'c'.repeat(60)}.example ${'d'.repeat(60)}.example`);
    const cut = dnsSearchPlan(long, 'x', { glibc: 'legacy' });
    expect(cut.searchList.join(' ').length).toBeLessThanOrEqual(255);
    // Three 68-character names and their separators take 207 characters: the fourth is cut mid-way.
    expect(cut.searchList.at(-1)).toBe('d'.repeat(255 - (3 * 68 + 3)));
    expect(cut.droppedSearch).toEqual([`${'d'.repeat(60)}.example`]);
  });

  it('servers: the first three, with rotate/timeout/attempts; 127.0.0.1 when none', () => {
    const c = conf('nameserver 10.0.0.1', 'nameserver 10.0.0.2', 'nameserver 10.0.0.3', 'nameserver 10.0.0.4', 'options rotate timeout:2 attempts:3');
    expect(dnsSearchPlan(c, 'x').nameservers).toEqual(['10.0.0.1', '10.0.0.2', '10.0.0.3']);
    expect([dnsSearchPlan(c, 'x').rotate, dnsSearchPlan(c, 'x').timeout, dnsSearchPlan(c, 'x').attempts]).toEqual([true, 2, 3]);
    expect(dnsSearchPlan(conf('search a'), 'x').nameservers).toEqual(['127.0.0.1']);
  });

  it('IP literals and invalid names send nothing', () => {
    expect(dnsSearchPlan(pod, '10.96.0.10').stopReason).toBe('ip-literal');
    expect(dnsSearchPlan(pod, 'fd00::10').stopReason).toBe('ip-literal');
    const bad = dnsSearchPlan(pod, 'my_service.default');
    expect([bad.stopReason, bad.steps, bad.problem?.code]).toEqual(['invalid-name', [], 'bad-character']);
  });

  it('kubernetesDefaultResolvConf: namespace, cluster domain, servers and node search domains', () => {
    const c = kubernetesDefaultResolvConf('kube-system', 'corp.local', ['10.0.0.10', 'fd00::a'], ['localdomain']);
    expect(c.search).toEqual(['kube-system.svc.corp.local', 'svc.corp.local', 'corp.local', 'localdomain']);
    expect(c.nameservers.map((n) => [n.address, n.family])).toEqual([['10.0.0.10', 'inet'], ['fd00::a', 'inet6']]);
    expect(c.options.ndots).toBe(5);
  });
});

describe('DNS name validation', () => {
  it.each([
    'kubernetes.default.svc.cluster.local',
    'kubernetes.default.svc.cluster.local.',
    '_dns._udp.kube-dns.kube-system.svc.cluster.local',
    '1password.com',
    `${'x'.repeat(63)}.com`,
    Array.from({ length: 4 }, () => 'a'.repeat(62)).join('.').slice(0, 253),
    'WEB',
  ])('%s is valid', (name) => {
    expect(validateDnsName(name)).toBeNull();
    expect(isValidDnsName(name)).toBe(true);
  });

  it.each([
    ['', 'empty'],
    ['.', 'empty'],
    ['a..b', 'empty-label'],
    ['.a', 'empty-label'],
    ['-a.com', 'hyphen-edge'],
    ['a-.com', 'hyphen-edge'],
    ['_-a.com', 'hyphen-edge'],
    ['a_b.com', 'bad-character'],
    ['*.example.com', 'bad-character'],
    ['é.example', 'bad-character'],
    ['a b', 'bad-character'],
    [`${'x'.repeat(64)}.com`, 'label-too-long'],
    [Array.from({ length: 5 }, () => 'a'.repeat(60)).join('.'), 'too-long'],
  ])('%j is invalid (%s)', (name, code) => {
    expect(validateDnsName(name)?.code).toBe(code);
    expect(isValidDnsName(name)).toBe(false);
  });
});
