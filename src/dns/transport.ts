/**
 * How nodescope reaches a DNS server. Five implementations share {@link DnsTransport}:
 * - {@link DirectDnsTransport} (`direct.ts`): this process's own UDP/TCP sockets (`--local`);
 * - {@link ProbeDnsTransport} (`probe.ts`): the declared `dns-query` probe, so the query
 *   leaves from inside the node's network namespace as a pod's would (`--netns`);
 * - {@link StreamDnsTransport} (`direct.ts`): DNS over TCP through a stream opened
 *   elsewhere, e.g. an SSH `forwardOut` channel (`--ssh`);
 * - {@link PortForwardDnsTransport} (`portforward.ts`): DNS over TCP through a Kubernetes
 *   port-forward to a CoreDNS pod (`--node`), around the node's ClusterIP DNAT;
 * - {@link ReplayDnsTransport} (`replay.ts`): the exchanges a capture recorded.
 * Each returns the same {@link DnsExchange} model.
 */
import { isIP } from 'node:net';
import { validateDnsName } from '../analysis/dns-search.js';
import { said, UserError } from '../errors.js';
import type { DnsExchange, DnsExchangeOutcome, DnsQuestionType } from '../model/dns.js';
import { isQuestionType } from './wire.js';

/** One question for one server; `qname` with or without the final dot. */
export interface DnsQuery {
  readonly server: string;
  readonly port: number;
  readonly qname: string;
  readonly qtype: DnsQuestionType;
}

/**
 * Per-query options: `proto` `udp` (UDP, then TCP on truncation; default) or `tcp`;
 * `timeoutMs` per attempt (milliseconds); `tries` UDP sends.
 */
export interface DnsQueryOptions {
  readonly proto?: 'udp' | 'tcp';
  readonly timeoutMs?: number;
  readonly tries?: number;
}

/** Which implementation a transport is. */
export type DnsTransportKind = 'direct' | 'netns-probe' | 'tcp-stream' | 'port-forward' | 'replay' | 'recording';

/**
 * Asks DNS questions. `query` throws `UserError` for an invalid question (a name that
 * fails `validateDnsName`, a server that is not an IP address, a port outside 1–65535,
 * an unknown type) and never for a DNS or network failure, which is an outcome.
 * `label` says how the server is reached (`direct`, `netns:NAME`, `tcp-stream:HOST`,
 * `port-forward to NS/POD:PORT`, `replay:DIR`). `note`, when set, says what this path
 * leaves out compared with a pod's query (results carry it in their notes).
 */
export interface DnsTransport {
  readonly kind: DnsTransportKind;
  readonly label: string;
  readonly note?: string;
  query(q: DnsQuery, options?: DnsQueryOptions): Promise<DnsExchange>;
  close(): Promise<void>;
}

/** Longest wait per attempt, milliseconds: keeps one query under the probe's kill timeout (15 s). */
export const MAX_TIMEOUT_MS = 5000;
/** Most UDP sends per question (with {@link MAX_TIMEOUT_MS}, under the probe's 15 s). */
export const MAX_TRIES = 3;

/**
 * Validates a question and its options before anything is sent or run; throws
 * `UserError` saying what to fix. The name check is `validateDnsName` (RFC 1035/1123).
 */
export function checkQuery(q: DnsQuery, options: DnsQueryOptions = {}): void {
  const problem = validateDnsName(q.qname);
  if (problem) throw new UserError(said('ue.dns.badName', { name: JSON.stringify(q.qname), problem: problem.message }), said('ue.dns.badNameHint'));
  if (isIP(q.server) === 0) throw new UserError(said('ue.dns.serverNotIp', { server: JSON.stringify(q.server) }), said('ue.dns.serverHint'));
  if (!Number.isInteger(q.port) || q.port < 1 || q.port > 65535) throw new UserError(said('ue.dns.port', { port: q.port }));
  if (!isQuestionType(q.qtype)) throw new UserError(said('ue.dns.type', { type: String(q.qtype) }), said('ue.dig.typeHint'));
  const t = options.timeoutMs;
  if (t !== undefined && !(Number.isInteger(t) && t >= 10 && t <= MAX_TIMEOUT_MS)) throw new UserError(said('ue.dns.timeout', { ms: t, max: MAX_TIMEOUT_MS }));
  const n = options.tries;
  if (n !== undefined && !(Number.isInteger(n) && n >= 1 && n <= MAX_TRIES)) throw new UserError(said('ue.dns.tries', { n, max: MAX_TRIES }));
}

/** An exchange that never got a reply: `outcome` says why (`failed`, `not-captured`, …), `error` the detail. */
export function exchangeWithoutReply(
  q: DnsQuery,
  via: string,
  outcome: DnsExchangeOutcome,
  error: string,
  startedAt: string,
  latencyMs = 0,
): DnsExchange {
  return {
    server: q.server, port: q.port, qname: q.qname.replace(/\.$/, ''), qtype: q.qtype, via, transport: 'udp', truncated: false,
    tries: 0, outcome, rcode: null, flags: null, answers: [], authorities: [], additionals: [], startedAt, latencyMs, error, replyHex: null,
  };
}
