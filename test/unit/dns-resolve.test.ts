/**
 * resolveServiceDns and the real search expansion against a DNS server on 127.0.0.1
 * serving the cluster's records (one of them deliberately wrong): the questions asked per
 * Service kind, expected-vs-actual verdicts, the search sequence a pod sends for a short
 * name (NXDOMAIN … then NOERROR) with the server's own log as the oracle, ndots costs,
 * and a replay that lacks part of the sequence.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubernetesDefaultResolvConf } from '../../src/analysis/dns-search.js';
import { DirectDnsTransport } from '../../src/dns/direct.js';
import { RecordingDnsTransport, ReplayDnsTransport } from '../../src/dns/replay.js';
import { chooseServer, kubeDnsServer, resolveServiceDns, serviceQuestions } from '../../src/dns/resolve.js';
import { requireServiceRef } from '../../src/model/service-ref.js';
import { runSearch, searchOutcome } from '../../src/dns/search.js';
import { UserError } from '../../src/errors.js';
import { parseResolvConf } from '../../src/parsers/resolv-conf.js';
import { startTestDnsServer, type TestDnsServer, type ZoneRecord } from './builders/dns.js';
import { makeEndpointSlice, makeService, objectsOf } from './builders/k8s.js';

const Z = 'default.svc.cluster.local';
const api = objectsOf(
  makeService({ name: 'kube-dns', namespace: 'kube-system', clusterIP: '10.96.0.10', ports: [{ name: 'dns', protocol: 'UDP', port: 53 }, { name: 'dns-tcp', protocol: 'TCP', port: 53 }] }),
  makeService({ name: 'web', clusterIP: '10.96.12.34', ports: [{ name: 'http', port: 80 }] }),
  makeService({ name: 'stale', clusterIP: '10.96.50.5', ports: [{ name: '', port: 80 }] }),
  makeService({ name: 'db', clusterIP: 'None', clusterIPs: ['None'], ports: [{ name: 'pg', port: 5432 }] }),
  makeEndpointSlice({ service: 'db', name: 'db-1', ports: [{ name: 'pg', port: 5432 }], endpoints: [{ address: '10.244.1.5' }, { address: '10.244.2.6', hostname: 'db-1' }] }),
  makeService({ name: 'alias', type: 'ExternalName', clusterIP: null, externalName: `web.${Z}`, ports: [] }),
);
const ZONE: ZoneRecord[] = [
  { name: `web.${Z}`, type: 'A', data: '10.96.12.34' },
  { name: `_http._tcp.web.${Z}`, type: 'SRV', data: { priority: 0, weight: 100, port: 80, target: `web.${Z}` } },
  { name: `stale.${Z}`, type: 'A', data: '10.96.50.99' }, // wrong on purpose
  { name: `db.${Z}`, type: 'A', data: '10.244.1.5' },
  { name: `db.${Z}`, type: 'A', data: '10.244.2.6' },
  { name: `10-244-1-5.db.${Z}`, type: 'A', data: '10.244.1.5' },
  { name: `db-1.db.${Z}`, type: 'A', data: '10.244.2.6' },
  { name: `_pg._tcp.db.${Z}`, type: 'SRV', data: { priority: 0, weight: 50, port: 5432, target: `10-244-1-5.db.${Z}` } },
  { name: `_pg._tcp.db.${Z}`, type: 'SRV', data: { priority: 0, weight: 50, port: 5432, target: `db-1.db.${Z}` } },
  { name: `alias.${Z}`, type: 'CNAME', data: `web.${Z}` },
];

let server: TestDnsServer;
beforeAll(async () => {
  server = await startTestDnsServer({ records: ZONE, servfail: [`flaky.${Z}`], silent: [`mute.${Z}`, `mute.svc.cluster.local`] });
});
afterAll(async () => server.close());

const dns = new DirectDnsTransport();
const resolve = (service: string, extra: Partial<Parameters<typeof resolveServiceDns>[0]> = {}) =>
  resolveServiceDns({ api, service, dns, server: '127.0.0.1', port: server.port, ...extra });
const summary = (r: Awaited<ReturnType<typeof resolve>>) => r.checks.map((c) => `${c.qtype} ${c.qname} ${c.exchange.rcode} ${c.verdict}`);

describe('resolveServiceDns', () => {
  it('asks A, AAAA and SRV of a ClusterIP Service and finds them as predicted', async () => {
    const r = await resolve('default/web');
    expect(summary(r)).toEqual([`A web.${Z} NOERROR ok`, `AAAA web.${Z} NOERROR ok`, `SRV _http._tcp.web.${Z} NOERROR ok`]);
    expect(r).toMatchObject({ fqdn: `web.${Z}`, serviceExists: true, via: 'direct', server: { address: '127.0.0.1', source: 'flag' } });
    expect(r.notes.join(' ')).toMatch(/TTLs are not compared/);
  });

  it('flags the wrong record of a Service', async () => {
    const r = await resolve('default/stale');
    const a = r.checks[0]!;
    expect(a.verdict).toBe('mismatch');
    expect(a.records.map((x) => [x.verdict, x.expected, x.actual])).toEqual([['mismatch', 'A 10.96.50.5', 'A 10.96.50.99']]);
  });

  it('asks each ready endpoint name and the per-endpoint SRV of a headless Service', async () => {
    const r = await resolve('default/db');
    expect(summary(r)).toEqual([
      `A db.${Z} NOERROR ok`, `AAAA db.${Z} NOERROR ok`, `SRV _pg._tcp.db.${Z} NOERROR ok`,
      `A 10-244-1-5.db.${Z} NOERROR ok`, `A db-1.db.${Z} NOERROR ok`,
    ]);
  });

  it('asks the CNAME of an ExternalName Service and follows it inside the zone', async () => {
    const r = await resolve('default/alias');
    expect(summary(r)).toEqual([`A alias.${Z} NOERROR ok`, `AAAA alias.${Z} NOERROR ok`, `CNAME alias.${Z} NOERROR ok`]);
    expect(r.checks[0]!.exchange.answers.map((a) => `${a.type} ${a.data}`)).toEqual([`CNAME web.${Z}`, 'A 10.96.12.34']);
  });

  it('expects NXDOMAIN for a Service that is not in the API and says so', async () => {
    const r = await resolve('default/nosuch');
    expect(summary(r)).toEqual([`A nosuch.${Z} NXDOMAIN ok`, `AAAA nosuch.${Z} NXDOMAIN ok`]);
    expect([r.serviceExists, r.notes[0]]).toEqual([false, 'no Service default/nosuch in the API objects: NXDOMAIN is expected']);
  });

  it('shows a server that does not answer as no-reply with the time spent', async () => {
    const mute = await resolve('default/mute', { query: { timeoutMs: 100, tries: 2 }, shortNames: [] });
    expect(mute.checks.map((c) => [c.verdict, c.exchange.outcome])).toEqual([['no-reply', 'timeout'], ['no-reply', 'timeout']]);
    expect(mute.checks[0]!.exchange.latencyMs).toBeGreaterThanOrEqual(190);
  });

  it('takes the kube-dns ClusterIP from the API, and refuses when there is none', () => {
    expect(kubeDnsServer(api)).toEqual({ address: '10.96.0.10', port: 53, source: 'kube-dns-service', service: 'kube-system/kube-dns' });
    expect(chooseServer(api)).toMatchObject({ address: '10.96.0.10' });
    expect(() => chooseServer(objectsOf(makeService({ name: 'web' })))).toThrow(UserError);
    expect(() => requireServiceRef('web')).toThrow(UserError);
    expect(serviceQuestions(api, 'default', 'alias').map((q) => q.qtype)).toEqual(['A', 'AAAA', 'CNAME']);
  });
});

describe('search expansion sent for real', () => {
  const conf = () => kubernetesDefaultResolvConf('default', 'cluster.local', '127.0.0.1');
  const run = (name: string, text?: string) =>
    runSearch(dns, text ? parseResolvConf(text, 'resolv.conf').value : conf(), name, { resolvOrigin: 'pod', port: server.port, query: { timeoutMs: 100, tries: 1 } });
  const seenSince = (n: number) => server.seen.slice(n).map((s) => `${s.type} ${s.name}`).sort();

  it('answers "web" on the first search domain: one step, A and AAAA', async () => {
    const before = server.seen.length;
    const r = await run('web');
    expect(r.steps.map((s) => [s.qname, s.outcome])).toEqual([[`web.${Z}.`, 'answer']]);
    expect([r.answeredBy, r.queries, r.wastedQueries, r.ndots, r.stopReason]).toEqual([`web.${Z}.`, 2, 0, 5, 'answered']);
    expect(seenSince(before)).toEqual([`A web.${Z}`, `AAAA web.${Z}`]);
  });

  it('sends web.default through NXDOMAIN first, then NOERROR: the ndots:5 cost', async () => {
    const before = server.seen.length;
    const r = await run('web.default');
    expect(r.steps.map((s) => [s.qname, s.outcome, s.exchanges.map((e) => e.rcode)])).toEqual([
      [`web.default.${Z}.`, 'nxdomain', ['NXDOMAIN', 'NXDOMAIN']],
      [`web.${Z}.`, 'answer', ['NOERROR', 'NOERROR']],
    ]);
    expect([r.queries, r.wastedQueries, r.answeredBy]).toEqual([4, 2, `web.${Z}.`]);
    const seen = server.seen.slice(before).map((s) => `${s.type} ${s.name}`);
    expect([seen.slice(0, 2).sort(), seen.slice(2).sort()]).toEqual([[`A web.default.${Z}`, `AAAA web.default.${Z}`], [`A web.${Z}`, `AAAA web.${Z}`]]);
    expect(r.elapsedMs).toBeCloseTo(r.steps.reduce((t, s) => t + Math.max(...s.exchanges.map((e) => e.latencyMs)), 0), 1);
  });

  it('tries every search domain and then the name as-is when nothing answers', async () => {
    const r = await run('nosuch');
    expect(r.steps.map((s) => s.qname)).toEqual([`nosuch.${Z}.`, 'nosuch.svc.cluster.local.', 'nosuch.cluster.local.', 'nosuch.']);
    expect([r.answeredBy, r.queries, r.wastedQueries, r.stopReason]).toEqual([null, 8, 8, 'exhausted']);
  });

  it('goes on after SERVFAIL and stops at a timeout, as glibc does', async () => {
    const flaky = await run('flaky');
    expect(flaky.steps[0]!.outcome).toBe('servfail');
    expect(flaky.steps).toHaveLength(4);
    const mute = await run('mute');
    expect(mute.steps.map((s) => [s.qname, s.outcome])).toEqual([[`mute.${Z}.`, 'timeout']]);
    expect(mute.stopReason).toBe('search-aborted');
    expect(mute.elapsedMs).toBeGreaterThanOrEqual(95);
  });

  it('sends A then AAAA one after the other with single-request (time adds up)', async () => {
    const r = await run('web', 'search default.svc.cluster.local\nnameserver 127.0.0.1\noptions ndots:5 single-request\n');
    expect(r.sending).toBe('sequential');
    const [a, aaaa] = r.steps[0]!.exchanges;
    expect(r.steps[0]!.elapsedMs).toBeCloseTo(a!.latencyMs + aaaa!.latencyMs, 1);
  });

  it('says incomplete when a replay lacks a question of the sequence', async () => {
    const rec = new RecordingDnsTransport(dns);
    await runSearch(rec, conf(), 'web', { resolvOrigin: 'kubernetes-default', port: server.port });
    const replay = new ReplayDnsTransport(rec.capture(), 'replay:x');
    const same = await runSearch(replay, conf(), 'web', { resolvOrigin: 'kubernetes-default', port: server.port });
    expect([same.answeredBy, same.incomplete]).toEqual([`web.${Z}.`, false]);
    const other = await runSearch(replay, conf(), 'web.default', { resolvOrigin: 'kubernetes-default', port: server.port });
    expect([other.incomplete, other.stopReason, other.answeredBy]).toEqual([true, 'not-captured', null]);
  });

  it('maps exchange outcomes to what the resolver does next', () => {
    expect(['answer', 'nodata', 'other-rcode', 'network-error', 'bad-reply'].map((o) => searchOutcome(o as never))).toEqual(['answer', 'nodata', 'refused', 'timeout', 'timeout']);
  });
});
