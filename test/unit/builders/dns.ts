/**
 * Builders for DNS tests: a real DNS server on 127.0.0.1 (UDP and TCP, messages through
 * dns-packet) serving a small zone, and {@link DnsExchange}/{@link ServiceDnsResult}
 * values with defaults, so tests state only what matters.
 */
import dgram from 'node:dgram';
import net from 'node:net';
import dnsPacket from 'dns-packet';
import type { DnsCheck, DnsExchange, DnsRecord, DnsSearchRun, ServiceDnsResult } from '../../../src/model/dns.js';

/** One record of the test zone: owner name, type, dns-packet `data`, TTL (default 5 s). */
export interface ZoneRecord {
  readonly name: string;
  readonly type: 'A' | 'AAAA' | 'CNAME' | 'SRV';
  readonly data: string | dnsPacket.SrvData;
  readonly ttl?: number;
}

/**
 * Behaviour of the test server: `records`; `truncateUdpAbove` answers over UDP with TC
 * set and no records when a reply would hold more answers than this; `silent` names get
 * no reply; `servfail` names get SERVFAIL; `strayFirst` sends a datagram with another
 * id before each real UDP reply (a resolver must ignore it); `delayMs` before replying.
 */
export interface TestDnsServerOptions {
  readonly records: readonly ZoneRecord[];
  readonly truncateUdpAbove?: number;
  readonly silent?: readonly string[];
  readonly servfail?: readonly string[];
  readonly strayFirst?: boolean;
  readonly delayMs?: number;
}

/** A running test server: its port (same for UDP and TCP) and the questions it saw. */
export interface TestDnsServer {
  readonly port: number;
  readonly seen: { transport: 'udp' | 'tcp'; name: string; type: string }[];
  close(): Promise<void>;
}

const lc = (s: string) => s.toLowerCase().replace(/\.$/, '');

function reply(opts: TestDnsServerOptions, query: dnsPacket.DecodedPacket, udp: boolean): dnsPacket.Packet {
  const q = query.questions?.[0];
  const base = { type: 'response' as const, id: query.id, questions: query.questions, flags: dnsPacket.RECURSION_DESIRED | dnsPacket.AUTHORITATIVE_ANSWER };
  if (!q) return { ...base, flags: base.flags | 1 };
  const name = lc(q.name);
  if (opts.servfail?.includes(name)) return { ...base, flags: base.flags | 2 };
  const owned = opts.records.filter((r) => lc(r.name) === name);
  if (owned.length === 0) return { ...base, flags: base.flags | 3 }; // NXDOMAIN
  const answer = (r: ZoneRecord) => ({ name: r.name, type: r.type, ttl: r.ttl ?? 5, data: r.data }) as dnsPacket.Answer;
  let answers = owned.filter((r) => r.type === q.type).map(answer);
  const cname = owned.find((r) => r.type === 'CNAME');
  if (answers.length === 0 && cname && q.type !== 'CNAME') {
    // As CoreDNS: a CNAME is given only together with records of the asked type behind it.
    const behind = opts.records.filter((r) => lc(r.name) === lc(String(cname.data)) && r.type === q.type).map(answer);
    answers = behind.length > 0 ? [answer(cname), ...behind] : [];
  }
  if (udp && opts.truncateUdpAbove !== undefined && answers.length > opts.truncateUdpAbove) {
    return { ...base, flags: base.flags | dnsPacket.TRUNCATED_RESPONSE };
  }
  return { ...base, answers };
}

/** Starts the server on 127.0.0.1 with a free port (UDP and TCP share it). */
export async function startTestDnsServer(opts: TestDnsServerOptions): Promise<TestDnsServer> {
  const seen: TestDnsServer['seen'] = [];
  const tcp = net.createServer((sock) => {
    let buf = Buffer.alloc(0);
    sock.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      if (buf.length < 2 || buf.length < 2 + buf.readUInt16BE(0)) return;
      const query = dnsPacket.decode(buf.subarray(2, 2 + buf.readUInt16BE(0)));
      const q = query.questions?.[0];
      seen.push({ transport: 'tcp', name: q?.name ?? '', type: q?.type ?? '' });
      if (q && opts.silent?.includes(lc(q.name))) return;
      setTimeout(() => sock.end(dnsPacket.streamEncode(reply(opts, query, false))), opts.delayMs ?? 0);
    });
    sock.on('error', () => {});
  });
  await new Promise<void>((resolve) => tcp.listen(0, '127.0.0.1', resolve));
  const port = (tcp.address() as net.AddressInfo).port;
  const udp = dgram.createSocket('udp4');
  udp.on('message', (m, rinfo) => {
    const query = dnsPacket.decode(m);
    const q = query.questions?.[0];
    seen.push({ transport: 'udp', name: q?.name ?? '', type: q?.type ?? '' });
    if (q && opts.silent?.includes(lc(q.name))) return;
    setTimeout(() => {
      if (opts.strayFirst) udp.send(dnsPacket.encode({ ...reply(opts, query, true), id: ((query.id ?? 0) + 1) % 65536 }), rinfo.port, rinfo.address);
      udp.send(dnsPacket.encode(reply(opts, query, true)), rinfo.port, rinfo.address);
    }, opts.delayMs ?? 0);
  });
  await new Promise<void>((resolve) => udp.bind(port, '127.0.0.1', resolve));
  return {
    port,
    seen,
    close: () =>
      new Promise((resolve) => {
        udp.close();
        tcp.close(() => resolve());
      }),
  };
}

/** A record of a reply (answer section, TTL 5 s unless given). */
export function makeRecord(type: string, data: string, name = 'web.default.svc.cluster.local', overrides: Partial<DnsRecord> = {}): DnsRecord {
  return { section: 'answer', name, type, ttl: 5, data, ...overrides };
}

/** An exchange: by default `A web.default.svc.cluster.local` from 10.96.0.10 answered 10.96.0.11 over UDP in 1.5 ms. */
export function makeExchange(overrides: Partial<DnsExchange> = {}): DnsExchange {
  const qname = overrides.qname ?? 'web.default.svc.cluster.local';
  return {
    server: '10.96.0.10', port: 53, qname, qtype: 'A', via: 'netns:ns-node', transport: 'udp', truncated: false, tries: 1,
    outcome: 'answer', rcode: 'NOERROR', flags: { aa: true, tc: false, rd: true, ra: false },
    answers: [makeRecord('A', '10.96.0.11', qname)], authorities: [], additionals: [],
    startedAt: '2026-01-12T09:00:00.000Z', latencyMs: 1.5, error: null, replyHex: null,
    ...overrides,
  };
}

/** An exchange that got no reply: a timeout after `latencyMs`. */
export function makeTimeout(overrides: Partial<DnsExchange> = {}): DnsExchange {
  return makeExchange({ outcome: 'timeout', rcode: null, flags: null, answers: [], tries: 2, latencyMs: 3000, error: 'timeout', ...overrides });
}

/** An NXDOMAIN exchange for `qname`. */
export function makeNxdomain(qname: string, overrides: Partial<DnsExchange> = {}): DnsExchange {
  return makeExchange({ qname, outcome: 'nxdomain', rcode: 'NXDOMAIN', answers: [], latencyMs: 0.8, ...overrides });
}

/** A check wrapping an exchange (verdict ok, one matching record, unless overridden). */
export function makeCheck(overrides: Partial<DnsCheck> = {}): DnsCheck {
  const exchange = overrides.exchange ?? makeExchange();
  return {
    qname: exchange.qname, qtype: exchange.qtype, exchange, expectedRcode: 'NOERROR', expectedReason: 'Service default/web', rcodeMatches: true,
    records: exchange.answers.map((a) => ({ verdict: 'match' as const, name: a.name, type: a.type, expected: `${a.type} ${a.data}`, actual: `${a.type} ${a.data}` })),
    verdict: 'ok',
    ...overrides,
  };
}

/** A search run of `name` through the pod default search list, answered at the last step. */
export function makeSearch(name: string, steps: DnsSearchRun['steps'], overrides: Partial<DnsSearchRun> = {}): DnsSearchRun {
  const last = steps[steps.length - 1];
  const answered = last?.outcome === 'answer' ? last : undefined;
  const queries = steps.reduce((n, s) => n + s.exchanges.length, 0);
  return {
    name, resolvOrigin: 'kubernetes-default', ndots: 5, searchList: ['default.svc.cluster.local', 'svc.cluster.local', 'cluster.local'],
    nameserver: '10.96.0.10', sending: 'parallel', steps, answeredBy: answered?.qname ?? null, stopReason: answered ? 'answered' : 'exhausted',
    queries, wastedQueries: answered ? queries - answered.exchanges.length : queries,
    elapsedMs: steps.reduce((t, s) => t + s.elapsedMs, 0), incomplete: false, ...overrides,
  };
}

/** A Service result with the given checks and searches. */
export function makeResult(overrides: Partial<ServiceDnsResult> = {}): ServiceDnsResult {
  return {
    namespace: 'default', name: 'web', fqdn: 'web.default.svc.cluster.local', zone: 'cluster.local', serviceExists: true,
    server: { address: '10.96.0.10', port: 53, source: 'kube-dns-service', service: 'kube-system/kube-dns' },
    via: 'netns:ns-node', checks: [makeCheck()], searches: [], notes: ['TTLs are not compared; the additional section is shown, not compared'],
    ...overrides,
  };
}
