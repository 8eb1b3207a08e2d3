/**
 * Real traffic between lab namespaces: HTTP with curl, DNS with a small in-namespace
 * wire client (the query is built and the answer decoded here with `dns-packet`, so the
 * lab does not depend on dig being installed).
 */
import dnsPacket from 'dns-packet';
import { TransportError, tail } from '../../src/errors.js';
import { nsExec } from './exec.js';
import { writeLabScripts } from './servers.js';

/** Outcome of one HTTP request with curl: `exitCode` 0 ok, 7 connection refused, 28 timeout. */
export interface HttpProbe {
  readonly exitCode: number | null;
  /** HTTP status, 0 when no response. */
  readonly status: number;
  readonly body: string;
  readonly stderr: string;
  /** Wall time of the whole curl run, milliseconds. */
  readonly durationMs: number;
}

/** Options of an HTTP request: `timeoutMs` (default 5,000 ms, curl `--max-time`). */
export interface HttpOptions {
  readonly timeoutMs?: number;
}

/** Runs one `curl` inside `fromNs` and reports what happened; never throws for HTTP failures. */
export async function httpProbe(fromNs: string, url: string, options: HttpOptions = {}): Promise<HttpProbe> {
  const secs = String((options.timeoutMs ?? 5000) / 1000);
  const marker = '\n--nodescope-status:';
  const r = await nsExec(fromNs, ['curl', '-sS', '--max-time', secs, '-w', `${marker}%{http_code}`, url], {
    timeoutMs: (options.timeoutMs ?? 5000) + 5000,
  });
  const cut = r.stdout.lastIndexOf(marker);
  const body = cut === -1 ? r.stdout : r.stdout.slice(0, cut);
  const status = cut === -1 ? 0 : Number(r.stdout.slice(cut + marker.length)) || 0;
  return { exitCode: r.exitCode, status, body, stderr: r.stderr, durationMs: r.durationMs };
}

/**
 * GETs `url` from namespace `fromNs` with curl and returns the body exactly (a lab web
 * pod answers `POD_NAME\n`). Throws {@link TransportError} when curl fails.
 */
export async function httpGet(fromNs: string, url: string, options: HttpOptions = {}): Promise<string> {
  const p = await httpProbe(fromNs, url, options);
  if (p.exitCode !== 0) {
    throw new TransportError(`GET ${url} from ${fromNs}: curl exited ${p.exitCode}: ${p.stderr.trim()}`, `netns:${fromNs}`,
      ['curl', url], p.exitCode, tail(p.stderr));
  }
  return p.body;
}

/** How `n` requests were answered: count per body (trimmed), and how many failed. */
export interface HttpTally {
  readonly byBody: Readonly<Record<string, number>>;
  readonly failures: number;
}

/**
 * Sends `n` GET requests to `url` from `fromNs`, each on a new TCP connection (so each is
 * a new conntrack entry and a new load-balancing decision), with one curl process.
 * Returns the tally of bodies. Never throws for failed requests (counted in `failures`).
 */
export async function sendHttp(fromNs: string, url: string, n: number, options: HttpOptions = {}): Promise<HttpTally> {
  const secs = String((options.timeoutMs ?? 5000) / 1000);
  const sep = '--nodescope-end:';
  const argv = ['curl', '-sS', '--max-time', secs, '-H', 'Connection: close', '-w', `\n${sep}%{http_code}\n`];
  for (let i = 0; i < n; i++) argv.push(url);
  const r = await nsExec(fromNs, argv, { timeoutMs: n * ((options.timeoutMs ?? 5000) + 1000) + 5000 });
  const byBody: Record<string, number> = {};
  let ok = 0;
  let rest = r.stdout;
  for (;;) {
    const at = rest.indexOf(`\n${sep}`);
    if (at === -1) break;
    const body = rest.slice(0, at).trim();
    const lineEnd = rest.indexOf('\n', at + 1 + sep.length);
    const status = rest.slice(at + 1 + sep.length, lineEnd === -1 ? undefined : lineEnd);
    rest = lineEnd === -1 ? '' : rest.slice(lineEnd + 1);
    if (status === '200') {
      byBody[body] = (byBody[body] ?? 0) + 1;
      ok++;
    }
  }
  return { byBody, failures: n - ok };
}

/** One decoded DNS answer record; `data` is zone-file text (`10.96.0.10`, SRV `0 0 80 target`). */
export interface DnsRecordAnswer {
  readonly name: string;
  readonly type: string;
  /** Seconds. */
  readonly ttl: number;
  readonly data: string;
}

/** A DNS reply: `rcode` (`NOERROR`, `NXDOMAIN`, …), answers, the reply's source `ip:port`. */
export interface DnsReply {
  readonly rcode: string;
  readonly answers: readonly DnsRecordAnswer[];
  /** Source address of the reply as the client saw it (after any reverse NAT). */
  readonly from: string;
  readonly durationMs: number;
}

/** DNS query options: record type (default A), port (53), TCP instead of UDP, timeout (2,000 ms). */
export interface DnsQueryOptions {
  readonly type?: 'A' | 'AAAA' | 'SRV' | 'PTR' | 'CNAME' | 'TXT';
  readonly port?: number;
  readonly tcp?: boolean;
  readonly timeoutMs?: number;
}

let queryId = 1;

/**
 * Asks `server` for `name` from namespace `fromNs` (UDP by default) and decodes the
 * reply. Throws {@link TransportError} on timeout or socket error.
 */
export async function dnsQuery(fromNs: string, name: string, server: string, options: DnsQueryOptions = {}): Promise<DnsReply> {
  const { wireClient } = writeLabScripts();
  const type = options.type ?? 'A';
  const timeoutMs = options.timeoutMs ?? 2000;
  queryId = (queryId % 65535) + 1;
  const packet = { type: 'query' as const, id: queryId, flags: dnsPacket.RECURSION_DESIRED, questions: [{ type, name }] };
  const wire = options.tcp ? dnsPacket.streamEncode(packet) : dnsPacket.encode(packet);
  const argv = [process.execPath, wireClient, options.tcp ? 'tcp' : 'udp', server, String(options.port ?? 53), wire.toString('hex'), String(timeoutMs)];
  const r = await nsExec(fromNs, argv, { timeoutMs: timeoutMs + 5000 });
  if (r.exitCode !== 0) {
    throw new TransportError(`DNS ${type} ${name} @${server} from ${fromNs}: ${r.stderr.trim() || `exit ${r.exitCode}`}`,
      `netns:${fromNs}`, argv, r.exitCode, tail(r.stderr));
  }
  const { from, hex } = JSON.parse(r.stdout) as { from: string; hex: string };
  const buf = Buffer.from(hex, 'hex');
  const decoded = options.tcp ? dnsPacket.streamDecode(buf) : dnsPacket.decode(buf);
  return {
    // dns-packet's decode sets `rcode` (a string); its type definitions omit it.
    rcode: (decoded as { rcode?: string }).rcode ?? 'NOERROR',
    answers: (decoded.answers ?? []).map((a) => ({ name: a.name, type: a.type, ttl: 'ttl' in a ? (a.ttl ?? 0) : 0, data: answerData(a) })),
    from,
    durationMs: r.durationMs,
  };
}

function answerData(a: dnsPacket.Answer): string {
  const data = (a as { data?: unknown }).data;
  if (a.type === 'SRV' && typeof data === 'object' && data !== null) {
    const s = data as { priority?: number; weight?: number; port?: number; target?: string };
    return `${s.priority ?? 0} ${s.weight ?? 0} ${s.port ?? 0} ${s.target ?? ''}`;
  }
  if (Array.isArray(data)) return data.map((d) => (Buffer.isBuffer(d) ? d.toString('utf8') : String(d))).join(' ');
  return Buffer.isBuffer(data) ? data.toString('hex') : String(data);
}
