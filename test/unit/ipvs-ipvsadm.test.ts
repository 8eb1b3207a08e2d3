import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  ipvsCountUpperBound,
  type IpvsAddress,
  type IpvsCount,
  type IpvsListing,
  type IpvsRealServer,
  type IpvsRealServerValues,
  type IpvsServiceKey,
  type IpvsServiceValues,
  type IpvsVirtualServer,
} from '../../src/model/ipvs.js';
import {
  createIpvsadmParser,
  formatIpvsListing,
  parseEtcServices,
  parseIpvsadm,
  parseIpvsCount,
} from '../../src/parsers/ipvsadm.js';

const repoRoot = path.resolve(import.meta.dirname, '../..');
const corpus = path.resolve(repoRoot, '../shared/corpus');
const haveCorpus = existsSync(corpus);
if (!haveCorpus) console.warn(`skipping corpus tests: ${corpus} is absent`);
const readCorpus = (rel: string): string => readFileSync(path.join(corpus, rel), 'utf8');

/** Cuts a capture into `{command, body}` sections at shell-prompt / `#` heading lines. */
function sections(text: string): { command: string; body: string }[] {
  const out: { command: string; body: string[] }[] = [];
  for (const line of text.split('\n')) {
    const prompt = /^(?:\S*[$#] |\[[^\]]+\][$#] |# )(.*)$/.exec(line);
    if (prompt) out.push({ command: prompt[1]!.trim(), body: [] });
    else out[out.length - 1]?.body.push(line);
  }
  return out.map((s) => ({ command: s.command, body: `${s.body.join('\n').replace(/\n+$/, '')}\n` }));
}

/** The model without source positions, for parse(format(x)) == x. */
function strip(l: IpvsListing): unknown {
  return {
    ...l,
    virtualServers: l.virtualServers.map(({ line: _l, raw: _r, realServers, ...vs }) => ({
      ...vs,
      realServers: realServers.map(({ line: _l2, raw: _r2, ...rs }) => rs),
    })),
  };
}

// ---- builders ----
const count = (value: bigint, suffix: IpvsCount['suffix'] = null): IpvsCount => ({ value, suffix });
const addr = (host: string, port: number, o: Partial<IpvsAddress> = {}): IpvsAddress => ({
  host,
  family: host.includes(':') ? 'ipv6' : 'ipv4',
  bracketed: host.includes(':'),
  port,
  portName: null,
  ...o,
});
const tcp = (host: string, port: number): IpvsServiceKey => ({ kind: 'address', protocol: 'TCP', address: addr(host, port) });
const scheduled = (o: Partial<Extract<IpvsServiceValues, { kind: 'scheduled' }>> = {}): IpvsServiceValues => ({
  kind: 'scheduled',
  scheduler: 'rr',
  schedFlags: [],
  persistence: null,
  onePacket: false,
  ...o,
});
const masq = (o: Partial<Extract<IpvsRealServerValues, { kind: 'list' }>> = {}): IpvsRealServerValues => ({
  kind: 'list',
  forward: 'Masq',
  tunnelInfo: null,
  weight: 1,
  activeConn: 0,
  inActConn: 0,
  ...o,
});
const rs = (a: IpvsAddress, values: IpvsRealServerValues): IpvsRealServer => ({ address: a, values, line: 0, raw: '' });
const vs = (key: IpvsServiceKey, values: IpvsServiceValues, realServers: IpvsRealServer[] = []): IpvsVirtualServer => ({
  key,
  values,
  realServers,
  line: 0,
  raw: '',
});
const listing = (kind: IpvsListing['kind'], virtualServers: IpvsVirtualServer[], o: Partial<IpvsListing> = {}): IpvsListing => ({
  kind,
  version: '1.2.1',
  connTableSize: 4096,
  tunnelInfo: false,
  virtualServers,
  ...o,
});
const stats5 = (n: (i: number) => IpvsCount) => ({ conns: n(0), inPkts: n(1), outPkts: n(2), inBytes: n(3), outBytes: n(4) });
const rate5 = (n: (i: number) => IpvsCount) => ({ cps: n(0), inPps: n(1), outPps: n(2), inBps: n(3), outBps: n(4) });

describe.runIf(haveCorpus)('ipvsadm corpus', () => {
  it('k8s 1.20 -Ln: every VS line is a virtual server, one has no real servers, trailing spaces kept', () => {
    const text = readCorpus('ipvs/k8s-1.20-ipvsadm-Ln-nodeport-multi-ip-empty-svc.txt');
    const [sec] = sections(text);
    const { value, diagnostics } = parseIpvsadm(sec!.body, 'k8s-1.20');
    expect(diagnostics).toEqual([]);
    const vsLines = sec!.body.split('\n').filter((l) => /^(TCP|UDP) /.test(l));
    const rsLines = sec!.body.split('\n').filter((l) => l.startsWith('  -> ') && !l.includes('RemoteAddress'));
    expect(value.kind).toBe('list');
    expect(value.version).toBe('1.2.1');
    expect(value.virtualServers.map((v) => v.raw)).toEqual(vsLines);
    expect(value.virtualServers.flatMap((v) => v.realServers.map((r) => r.raw))).toEqual(rsLines);
    const empty = value.virtualServers.filter((v) => v.realServers.length === 0);
    expect(empty.map((v) => v.raw)).toEqual(['TCP  10.97.105.36:80 rr']);
    // kube-proxy adds one NodePort VS per node address (quirk 26).
    const nodePorts = value.virtualServers.filter((v) => v.key.kind === 'address' && v.key.address.port === 30023);
    expect(nodePorts.map((v) => (v.key.kind === 'address' ? v.key.address.host : ''))).toEqual([
      '172.17.0.1', '10.10.110.190', '10.244.235.192', '127.0.0.1',
    ]);
    // ipvsadm prints `%-10u\n`: the formatter reproduces each line byte for byte,
    // including trailing spaces (the capture lost them only on its very last line).
    const formatted = formatIpvsListing(value).split('\n');
    const original = sec!.body.split('\n');
    expect(formatted.slice(0, -2)).toEqual(original.slice(0, -2));
  });

  it('mixed ipvsadm/ip a/ipset capture: the ipvsadm section parses and matches kube-ipvs0 /32 addresses', () => {
    const text = readCorpus('ipvs/ipvs-mode-ipvsadm-ipset-kube-ipvs0.txt');
    const secs = sections(text);
    expect(secs.map((s) => s.command)).toEqual(['sudo ipvsadm -L -n', 'ip a', 'ipset -L']);
    const { value, diagnostics } = parseIpvsadm(secs[0]!.body, 'mixed');
    expect(diagnostics).toEqual([]);
    // Each ClusterIP bound to the kube-ipvs0 dummy has a virtual server.
    const dummyIps = [...secs[1]!.body.matchAll(/inet (\S+)\/32 scope global kube-ipvs0/g)].map((m) => m[1]);
    expect(dummyIps.length).toBeGreaterThan(0);
    const vips = new Set(value.virtualServers.map((v) => (v.key.kind === 'address' ? v.key.address.host : '')));
    for (const ip of dummyIps) expect(vips.has(ip!), ip).toBe(true);
    const busy = value.virtualServers.find((v) => v.raw.startsWith('TCP  10.101.177.188:443'))!;
    expect(busy.realServers.map((r) => r.values)).toEqual([
      masq({ activeConn: 1, inActConn: 1 }),
      masq({ activeConn: 1, inActConn: 0 }),
    ]);
    expect(strip(parseIpvsadm(formatIpvsListing(value), 'rt').value)).toEqual(strip(value));
  });

  it('--stats (source A): service counters are the sums of their real servers', () => {
    const secs = sections(readCorpus('ipvs/ipvsadm-Ln-stats-and-rate-real.txt'));
    const statsA = secs.find((s) => s.command === 'ipvsadm -Ln --stats')!;
    const { value, diagnostics } = parseIpvsadm(statsA.body, 'stats-a');
    expect(diagnostics).toEqual([]);
    expect(value.kind).toBe('stats');
    expect(value.virtualServers).toHaveLength(3);
    for (const v of value.virtualServers) {
      if (v.values.kind !== 'stats') throw new Error('expected stats');
      expect(v.realServers).toHaveLength(3);
      for (const field of ['conns', 'inPkts', 'outPkts', 'inBytes', 'outBytes'] as const) {
        const sum = v.realServers.reduce((acc, r) => acc + (r.values.kind === 'stats' ? r.values.stats[field].value : -1n), 0n);
        expect(sum, `${v.raw} ${field}`).toBe(v.values.stats[field].value);
      }
    }
    expect(strip(parseIpvsadm(formatIpvsListing(value), 'rt').value)).toEqual(strip(value));
    expect(formatIpvsListing(value)).toBe(statsA.body);
  });

  it('without -n (source B): service-name ports are kept, and resolved only with /etc/services data', () => {
    const secs = sections(readCorpus('ipvs/ipvsadm-Ln-stats-and-rate-real.txt'));
    const statsB = secs.find((s) => s.command === 'ipvsadm  -l  --stats')!;
    const rateB = secs.find((s) => s.command === 'ipvsadm   -l  --rate')!;
    const plain = parseIpvsadm(statsB.body, 'stats-b');
    expect(plain.diagnostics).toEqual([]);
    const key = plain.value.virtualServers[0]!.key;
    expect(key).toEqual({ kind: 'address', protocol: 'TCP', address: addr('172.18.10.246', 0, { port: null, portName: 'http-alt' }) });
    const services = parseEtcServices('http-alt\t8080/tcp\twebcache\t# WWW caching service\n', 'services');
    const resolved = parseIpvsadm(statsB.body, 'stats-b', { services: services.value });
    const a = resolved.value.virtualServers[0]!.realServers.map((r) => r.address);
    expect(a.map((x) => [x.port, x.portName])).toEqual([[8080, 'http-alt'], [8080, 'http-alt']]);
    expect(formatIpvsListing(resolved.value)).toBe(statsB.body);

    const rate = parseIpvsadm(rateB.body, 'rate-b');
    expect(rate.diagnostics).toEqual([]);
    expect(rate.value.kind).toBe('rate');
    const v = rate.value.virtualServers[0]!.values;
    expect(v.kind === 'rate' ? v.rate.inBps : null).toEqual(count(3n));
    expect(formatIpvsListing(rate.value)).toBe(rateB.body);
  });

  it('the raw capture files (with prompts and # headings) report those lines, never throw', () => {
    for (const f of ['ipvs/ipvs-mode-ipvsadm-ipset-kube-ipvs0.txt', 'ipvs/ipvsadm-Ln-stats-and-rate-real.txt']) {
      const text = readCorpus(f);
      const { value, diagnostics } = parseIpvsadm(text, f);
      // Every non-blank line is modelled, a version/title line, or diagnosed.
      const modelled = new Set(value.virtualServers.flatMap((v) => [v.line, ...v.realServers.map((r) => r.line)]));
      const diagnosed = new Set(diagnostics.map((d) => d.line));
      text.split('\n').forEach((line, i) => {
        if (line.trim() === '' || /^IP Virtual Server version|^Prot |^ {2}-> RemoteAddress/.test(line)) return;
        expect(modelled.has(i + 1) || diagnosed.has(i + 1), `${f}:${i + 1} ${line}`).toBe(true);
      });
    }
  });
});

describe('ipvsadm formats from ipvsadm.c', () => {
  it('K/M/G/T suffixes lose precision; the true value lies in [value, upper bound)', () => {
    expect(parseIpvsCount('123456K')).toEqual(count(123_456_000n, 'K'));
    expect(ipvsCountUpperBound(parseIpvsCount('123456K')!)).toBe(123_457_000n);
    expect(parseIpvsCount('99999M')).toEqual(count(99_999_000_000n, 'M'));
    expect(parseIpvsCount('12G')!.value).toBe(12n * 10n ** 9n);
    expect(parseIpvsCount('7T')!.value).toBe(7n * 10n ** 12n);
    expect(ipvsCountUpperBound(count(42n))).toBe(43n);
    expect(parseIpvsCount('12k')).toBeNull();
    expect(parseIpvsCount('-1')).toBeNull();
  });

  it('stats with suffixes and --exact values beyond 2^53 round-trip through the formatter', () => {
    const big = 18_446_744_073_709_551_615n; // u64 max, as --exact prints it
    const l = listing('stats', [
      vs(tcp('10.96.0.10', 53), { kind: 'stats', stats: stats5((i) => [count(5n), count(812_000n, 'K'), count(3_000_000n, 'M'), count(big), count(9n * 10n ** 12n, 'T')][i]!) }, [
        rs(addr('10.244.1.2', 53), { kind: 'stats', stats: stats5(() => count(big)) }),
      ]),
    ]);
    const text = formatIpvsListing(l);
    expect(text).toContain('     812K');
    expect(text).toContain(` ${big}`);
    const back = parseIpvsadm(text, 'fmt');
    expect(back.diagnostics).toEqual([]);
    expect(strip(back.value)).toEqual(strip(l));
  });

  it('IPv6, SCTP, FWM, persistence with mask/pe, scheduler flags and ops round-trip', () => {
    const v6: IpvsServiceKey = { kind: 'address', protocol: 'UDP', address: addr('fd00:10:96::a', 53) };
    const sctp: IpvsServiceKey = { kind: 'address', protocol: 'SCTP', address: addr('10.96.0.20', 3868) };
    const fwm4: IpvsServiceKey = { kind: 'fwmark', fwmark: 5, family: 'ipv4' };
    const fwm6: IpvsServiceKey = { kind: 'fwmark', fwmark: 6, family: 'ipv6' };
    const l = listing('list', [
      vs(v6, scheduled({ scheduler: 'wlc', persistence: { timeout: 10800, mask: '64', pe: null } }), [
        rs(addr('fd00:10:244::5', 53), masq({ weight: 0 })),
      ]),
      vs(sctp, scheduled({ scheduler: 'sh', schedFlags: ['sh-fallback', 'sh-port'], onePacket: true })),
      vs(fwm4, scheduled({ persistence: { timeout: 300, mask: '255.255.255.0', pe: 'sip' } }), [
        rs(addr('10.0.0.2', 0), masq({ forward: 'Route', weight: 3, activeConn: 12, inActConn: 4000 })),
        rs(addr('10.0.0.3', 0), masq({ forward: 'Tunnel' })),
        rs(addr('127.0.0.1', 0), masq({ forward: 'Local' })),
      ]),
      vs(fwm6, scheduled({ scheduler: 'mh', schedFlags: ['mh-port'] })),
    ]);
    const text = formatIpvsListing(l);
    expect(text.split('\n').slice(3, 5)).toEqual([
      'UDP  [fd00:10:96::a]:53 wlc persistent 10800 mask 64',
      '  -> [fd00:10:244::5]:53          Masq    0      0          0         ',
    ]);
    expect(text).toContain('SCTP 10.96.0.20:3868 sh (sh-fallback,sh-port) ops\n');
    expect(text).toContain('FWM  6 IPv6 mh (mh-port)\n');
    const back = parseIpvsadm(text, 'fmt');
    expect(back.diagnostics).toEqual([]);
    expect(strip(back.value)).toEqual(strip(l));
  });

  it.each([
    ['thresholds', { kind: 'thresholds', uThreshold: 100, lThreshold: 10, activeConn: 3, inActConn: 7 }],
    ['persistent-conn', { kind: 'persistent-conn', weight: 2, persistConn: 4, activeConn: 3, inActConn: 7 }],
    ['rate', { kind: 'rate', rate: rate5((i) => count(BigInt(i * 1000))) }],
  ] as const)('%s listing round-trips', (kind, values) => {
    const svcValues: IpvsServiceValues = kind === 'rate' ? { kind: 'rate', rate: rate5(() => count(250_000n, 'K')) } : scheduled();
    const l = listing(kind, [vs(tcp('10.96.0.1', 443), svcValues, [rs(addr('172.18.0.2', 6443), values)])]);
    const back = parseIpvsadm(formatIpvsListing(l), kind);
    expect(back.diagnostics).toEqual([]);
    expect(strip(back.value)).toEqual(strip(l));
  });

  it('--tun-info adds a TunnelInfo column', () => {
    const l = listing('list', [vs(tcp('10.0.0.9', 80), scheduled(), [
      rs(addr('10.0.1.1', 80), masq({ forward: 'Tunnel', tunnelInfo: 'gue:6080:nocsum' })),
      rs(addr('10.0.1.2', 80), masq({ tunnelInfo: 'n/a' })),
    ])], { tunnelInfo: true });
    const text = formatIpvsListing(l);
    expect(text).toContain('Forward TunnelInfo    Weight');
    expect(strip(parseIpvsadm(text, 'tun').value)).toEqual(strip(l));
  });

  it('a single-service listing (-t vip:port) has no version line', () => {
    const l = listing('list', [vs(tcp('10.96.0.1', 443), scheduled())], { version: null, connTableSize: null });
    const text = formatIpvsListing(l);
    expect(text.startsWith('Prot LocalAddress:Port')).toBe(true);
    expect(strip(parseIpvsadm(text, 'one').value)).toEqual(strip(l));
  });
});

describe('ipvsadm bad input', () => {
  it('reports malformed and orphan lines with their 1-based numbers and keeps the rest', () => {
    const good = formatIpvsListing(listing('list', [vs(tcp('10.96.0.1', 443), scheduled(), [rs(addr('172.18.0.2', 6443), masq())])]));
    const text = [
      '  -> 10.0.0.1:80 Masq 1 0 0', // before any VS
      ...good.trimEnd().split('\n'),
      'TCP  10.96.0.2:80', // no scheduler
      '  -> 10.0.0.1:80 Bogus 1 0 0',
      '  -> 10.0.0.1:99999 Masq 1 0 0',
      'TCP  10.96.0.3:80 rr frobnicate',
      '\u0000\u0001binary\uFFFD',
    ].join('\r\n');
    const { value, diagnostics } = parseIpvsadm(text, 'bad');
    expect(value.virtualServers.map((v) => v.raw)).toEqual(['TCP  10.96.0.1:443 rr', 'TCP  10.96.0.3:80 rr frobnicate']);
    expect(value.virtualServers[0]!.realServers).toHaveLength(1);
    expect(diagnostics.map((d) => [d.line, d.code])).toEqual([
      [1, 'orphan-real-server'],
      [7, 'bad-virtual-server'],
      [8, 'bad-real-server'],
      [9, 'bad-real-server'],
      [10, 'unknown-flags'],
      [11, 'unrecognized-line'],
    ]);
  });

  it('counter lines without a title cannot be told apart (stats vs rate): error, not a guess', () => {
    const { value, diagnostics } = parseIpvsadm('TCP  10.0.0.1:80        1        2        3        4        5\n', 'cut');
    expect(value.virtualServers).toEqual([]);
    expect(diagnostics.map((d) => d.code)).toEqual(['missing-title']);
  });

  it('never throws on random bytes, truncated text or a huge line', () => {
    const good = formatIpvsListing(listing('stats', [vs(tcp('10.1.1.1', 80), { kind: 'stats', stats: stats5(() => count(1n)) })]));
    let seed = 7;
    const rnd = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let i = 0; i < 200; i += 1) {
      const junk = Array.from({ length: 200 }, () => String.fromCharCode(Math.floor(rnd() * 256))).join('');
      expect(() => parseIpvsadm(junk, 'junk')).not.toThrow();
      expect(() => parseIpvsadm(good.slice(0, Math.floor(rnd() * good.length)), 'cut')).not.toThrow();
    }
    const huge = parseIpvsadm(`TCP  ${'9'.repeat(100_000)}`, 'huge');
    expect(huge.diagnostics[0]!.text.length).toBeLessThanOrEqual(201);
  });

  it('the line-fed parser gives the same result as the whole-text parser', () => {
    const text = formatIpvsListing(listing('list', [vs(tcp('10.96.0.1', 443), scheduled(), [rs(addr('172.18.0.2', 6443), masq())])]));
    const p = createIpvsadmParser('stream');
    for (const line of text.split('\n').slice(0, -1)) p.push(line);
    expect(p.end()).toEqual(parseIpvsadm(text, 'stream'));
  });
});
