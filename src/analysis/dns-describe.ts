/**
 * Short texts of DNS results shared by the `show dns` report, `dig` and the DNS pane:
 * names relative to the cluster zone, milliseconds, a reply's status word and the
 * answer data in one cell. Language-neutral (protocol words only); the pane adds its
 * translated words around them. Pure.
 */
import type { DnsExchange, DnsRecord, ServiceDnsResult } from '../model/dns.js';
import { REPLY_OUTCOMES } from '../model/dns.js';

/** `web.default.svc` for `web.default.svc.cluster.local` in zone `cluster.local`; other names unchanged. */
export function relativeName(name: string, zone: string): string {
  const n = name.replace(/\.$/, '');
  const z = zone.replace(/\.$/, '');
  return n.toLowerCase().endsWith(`.${z.toLowerCase()}`) ? n.slice(0, -(z.length + 1)) : n;
}

/** Milliseconds for display: one decimal under 100 ms (`1.2`), whole above (`3001`). */
export function msText(ms: number): string {
  return ms < 100 ? ms.toFixed(1) : String(Math.round(ms));
}

/** The reply's status: its RCODE (`NOERROR`, `NXDOMAIN`…) or, without a reply, the outcome upper-cased (`TIMEOUT`). */
export function statusWord(e: DnsExchange): string {
  return REPLY_OUTCOMES.has(e.outcome) && e.rcode ? e.rcode : e.outcome.toUpperCase();
}

/** One record's data for a cell: SRV/CNAME targets relative to the zone, CNAME as `→ target`. */
export function recordCell(r: Pick<DnsRecord, 'type' | 'data'>, zone: string): string {
  if (r.type === 'CNAME') return `→ ${relativeName(r.data, zone)}`;
  if (r.type === 'SRV') {
    const p = r.data.split(' ');
    return `${p.slice(0, 3).join(' ')} ${relativeName(p.slice(3).join(' '), zone)}`;
  }
  return r.data;
}

/** The answer section in one cell (`10.96.12.34, 10.96.12.35`); `''` when there is none. */
export function answersCell(e: DnsExchange, zone: string): string {
  return e.answers.map((a) => recordCell(a, zone)).join(', ');
}

/** `a`/`b` comparison texts such as `A 10.96.0.10` with SRV/CNAME targets relative to the zone. */
export function comparedCell(text: string | null, zone: string): string {
  if (text === null) return '—';
  const sp = text.indexOf(' ');
  return sp === -1 ? text : `${text.slice(0, sp)} ${recordCell({ type: text.slice(0, sp), data: text.slice(sp + 1) }, zone).replace(/^→ /, '')}`;
}

/** The "no reply" sentence of an exchange: `TIMEOUT from 10.96.0.10:53 after 3001 ms (2 tries)`. */
export function noReplyText(e: DnsExchange): string {
  // A question the capture never asked has no time and no tries to report.
  if (e.outcome === 'not-captured') return `${statusWord(e)} from ${e.server}:${e.port}${e.error ? `: ${e.error}` : ''}`;
  return `${statusWord(e)} from ${e.server}:${e.port} after ${msText(e.latencyMs)} ms (${e.tries} ${e.tries === 1 ? 'try' : 'tries'})${e.error && e.error !== 'timeout' ? `: ${e.error}` : ''}`;
}

/** A server address and port, as asked or as recorded in an exchange. */
export interface DnsServerAddress {
  readonly address: string;
  readonly port: number;
}

/**
 * A server whose reply was used: `standsInFor` is the server that was asked when the
 * reply came from another one (a replay of a capture that recorded only that server,
 * see `ReplayDnsTransport`), null when the asked server replied itself.
 */
export interface AnsweringServer extends DnsServerAddress {
  readonly standsInFor: DnsServerAddress | null;
}

/**
 * The distinct servers that replied in `exchanges` (outcomes with a reply, in first-seen
 * order), each marked with the server asked (`asked`) when it is another one. Pure.
 */
export function answeringServers(asked: DnsServerAddress, exchanges: readonly DnsExchange[]): AnsweringServer[] {
  const out: AnsweringServer[] = [];
  for (const e of exchanges) {
    if (!REPLY_OUTCOMES.has(e.outcome) || out.some((x) => x.address === e.server && x.port === e.port)) continue;
    const same = e.server === asked.address && e.port === asked.port;
    out.push({ address: e.server, port: e.port, standsInFor: same ? null : { address: asked.address, port: asked.port } });
  }
  return out;
}

/** Why a recorded server answers for another: only a replay does this (`ReplayDnsTransport`'s fallback). */
export const STAND_IN_REASON = 'the capture holds answers from that server only';

/** `answered by 10.244.0.2:53 (recorded), standing in for 10.96.0.10:53 asked: <reason>`. */
export function standInText(s: AnsweringServer): string {
  return `answered by ${s.address}:${s.port} (recorded), standing in for ${s.standsInFor?.address}:${s.standsInFor?.port} asked: ${STAND_IN_REASON}`;
}

/** The servers whose replies a result shows (checks, then searches), see {@link answeringServers}. */
export function resultAnsweringServers(r: ServiceDnsResult): AnsweringServer[] {
  const out = answeringServers(r.server, r.checks.map((c) => c.exchange));
  for (const s of r.searches) {
    // A search asks its resolv.conf's name server (port 53), or the checks' server when that is the one named.
    const asked = s.nameserver === r.server.address ? r.server : { address: s.nameserver, port: 53 };
    for (const a of answeringServers(asked, s.steps.flatMap((st) => st.exchanges))) {
      if (!out.some((x) => x.address === a.address && x.port === a.port && x.standsInFor?.address === a.standsInFor?.address)) out.push(a);
    }
  }
  return out;
}

/** The note every result asked through the port-forward transport (`src/dns/portforward.ts`) carries (shown by `show dns`, `dig` and the DNS pane). */
export const PORT_FORWARD_NOTE =
  'asked through a port-forward (Kubernetes API) to one CoreDNS pod: the node\'s ClusterIP DNAT (kube-proxy rules, Cilium LB map) is not on this path';
