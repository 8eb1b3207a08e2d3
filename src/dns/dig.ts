/**
 * `nodescope dig NAME [--type A|AAAA|SRV|CNAME] [--server IP]`: one question, asked the
 * way the source reaches DNS (this process, the node's namespace, an SSH channel, a
 * replay), printed in dig's layout (sections with `name. TTL IN TYPE data`) and, when the
 * name is in the cluster zone and API objects are at hand, checked against the answer
 * the kubernetes plugin should give. No search list: the name is asked as written.
 */
import { expectedAnswer, type DnsExpectOptions } from '../analysis/dns-expected.js';
import { clusterDomainText, type ClusterDomain } from './cluster-domain.js';
import { said, UserError } from '../errors.js';
import { REPLY_OUTCOMES, type DnsCheck, type DnsExchange, type DnsRecord } from '../model/dns.js';
import type { ApiObjects } from '../model/k8s.js';
import { toDocument } from '../text/document.js';
import { compareExchange, TTL_NOTE } from './compare.js';
import { answeringServers, comparedCell, msText, noReplyText, STAND_IN_REASON, type DnsServerAddress } from '../analysis/dns-describe.js';
import { chooseServer } from './resolve.js';
import { checkQuery, type DnsQueryOptions, type DnsTransport } from './transport.js';
import { isQuestionType } from './wire.js';
import { REPLAY_NOTE } from './replay.js';
import { terminalSafe } from '../text/terminal-safe.js';
import { tf, type Lang } from '../text/i18n.js';
import { whyText } from '../text/why.js';

/**
 * Options of {@link runDigCommand}: the name and type (default A), the server and port
 * (default: the kube-dns Service's ClusterIP from `api`), the transport, the Corefile
 * settings for the expected answer, the output format (default text), query options.
 */
export interface DigCommandOptions {
  readonly name: string;
  readonly type?: string;
  readonly server?: string;
  readonly port?: number;
  readonly dns: DnsTransport;
  readonly api?: ApiObjects | null;
  readonly expect?: DnsExpectOptions;
  readonly format?: 'text' | 'json' | 'yaml';
  readonly query?: DnsQueryOptions;
}

/**
 * What `dig` found: the exchange, when predictable the comparison, the transport's note
 * on its path (null: none), and the server asked (`asked`; a replay may answer with the
 * capture's only recorded server instead: then `exchange.server` differs from it).
 */
export interface DigResult {
  readonly exchange: DnsExchange;
  readonly check: DnsCheck | null;
  readonly note: string | null;
  readonly asked?: DnsServerAddress;
}

/**
 * Asks one question and returns it with its check. Throws `UserError` for an invalid
 * name or type, or when there is no server to ask (no `--server`, no kube-dns Service).
 */
export async function dig(options: DigCommandOptions): Promise<DigResult> {
  const type = (options.type ?? 'A').toUpperCase();
  if (!isQuestionType(type)) throw new UserError(said('ue.dig.type', { type: String(options.type) }), said('ue.dig.typeHint'));
  const server = chooseServer(options.api ?? null, options.server, options.port);
  const q = { server: server.address, port: server.port, qname: options.name, qtype: type };
  checkQuery(q, options.query);
  const exchange = await options.dns.query(q, options.query);
  const expected = options.api ? expectedAnswer(options.api, options.name, type, options.expect) : null;
  // Beside a question the capture does not hold, the plain replay note is not said; a damaged
  // capture file still is (the question may be in its unreadable part).
  return {
    exchange, check: options.api ? compareExchange(expected, exchange, options.expect?.zone) : null, note: exchange.outcome === 'not-captured' && options.dns.note === REPLAY_NOTE ? null : (options.dns.note ?? null),
    asked: { address: server.address, port: server.port },
  };
}

/** The asked server when the reply came from another (a replay's stand-in), else null. */
function standInOf(r: DigResult): DnsServerAddress | null {
  return r.asked ? (answeringServers(r.asked, [r.exchange])[0]?.standsInFor ?? null) : null;
}

const line = (r: DnsRecord) => `${r.name}.\t${r.ttl}\tIN\t${r.type}\t${r.type === 'CNAME' || r.type === 'NS' || r.type === 'PTR' ? `${r.data}.` : r.type === 'SRV' ? `${r.data}.` : r.data}`;

// A DNS label may hold any byte (RFC 2181, section 11): each entry of the text stays one line,
// its own tab stops kept.
const oneLine = (l: string): string => l.split('\t').map((part) => terminalSafe(part)).join('\t');

/**
 * dig-like text of a result. dig(1)'s own layout (HEADER, SECTION, Query time, SERVER, WHEN)
 * stays as dig prints it whatever `lang`; nodescope's lines (no reply, the check against the
 * API, notes) are in `lang` (default `en`).
 */
export function digText(r: DigResult, zone = 'cluster.local', lang: Lang = 'en'): string {
  const e = r.exchange;
  const out = [`; <<>> nodescope dig <<>> ${e.qname} ${e.qtype} @${e.server} via ${e.via}`];
  if (e.rcode === null || e.flags === null) {
    out.push(tf(lang, 'cli.dig.noReply', { reason: whyText(lang, noReplyText(e)) }));
  } else {
    const flags = ['qr', ...(['aa', 'tc', 'rd', 'ra'] as const).filter((f) => e.flags?.[f])].join(' ');
    out.push(`;; ->>HEADER<<- status: ${e.rcode}, flags: ${flags}; ANSWER: ${e.answers.length}, AUTHORITY: ${e.authorities.length}, ADDITIONAL: ${e.additionals.length}`);
    out.push('', ';; QUESTION SECTION:', `;${e.qname}.\t\tIN\t${e.qtype}`);
    for (const [title, list] of [['ANSWER', e.answers], ['AUTHORITY', e.authorities], ['ADDITIONAL', e.additionals]] as const) {
      if (list.length > 0) out.push('', `;; ${title} SECTION:`, ...list.map(line));
    }
    out.push('', `;; Query time: ${msText(e.latencyMs)} msec over ${e.transport.toUpperCase()}${e.truncated ? ' (the UDP reply was truncated)' : ''}, ${e.tries} ${e.tries === 1 ? 'try' : 'tries'}`);
  }
  const standIn = standInOf(r);
  // The server line names who answered; a recorded server standing in for the asked one says so.
  out.push(`;; SERVER: ${e.server}#${e.port}${standIn ? ` (recorded; stands in for ${standIn.address}#${standIn.port}, the server asked: ${STAND_IN_REASON})` : ''}`);
  // A question the capture never asked has no time: no WHEN rather than the epoch.
  if (e.outcome !== 'not-captured') out.push(`;; WHEN: ${e.startedAt}`);
  if (r.note) out.push(tf(lang, 'cli.dig.note', { note: whyText(lang, r.note) }));
  const c = r.check;
  if (c && c.verdict !== 'unpredicted' && c.expectedRcode) {
    out.push('', tf(lang, 'cli.dig.expected', { rcode: c.expectedRcode, reason: whyText(lang, c.expectedReason ?? ''), verdict: c.verdict }));
    for (const x of c.records) out.push(tf(lang, 'cli.dig.record', { verdict: x.verdict.padEnd(10), expected: comparedCell(x.expected, zone), actual: comparedCell(x.actual, zone) }));
    out.push(`;; ${whyText(lang, TTL_NOTE)}`);
  }
  return out.map(oneLine).join('\n') + '\n';
}

/** dig(1)'s exit status for "no reply from the server". */
export const DIG_NO_REPLY_EXIT = 9;

/**
 * The exit status of `nodescope dig`, as dig(1) has it: 0 for any reply (NXDOMAIN and
 * SERVFAIL included; a mismatch with the API is not an error), {@link DIG_NO_REPLY_EXIT}
 * when no reply came (timeout, network error, undecodable reply, not in the capture,
 * the query could not be sent).
 */
export function digExitCode(exchange: DnsExchange): number {
  return REPLY_OUTCOMES.has(exchange.outcome) ? 0 : DIG_NO_REPLY_EXIT;
}

/**
 * `nodescope dig`: asks and renders (`text`, dig's layout; `json`, `{exchange, check,
 * ttlCompared, note?, askedServer?, standsInFor?}`: `exchange.server` is the server that
 * answered; `askedServer` `{address, port}` the one asked; `standsInFor` (the asked
 * server) only when a recorded server's answer stands in for it in a replay).
 * Throws like {@link dig}.
 */
export async function runDigCommand(options: DigCommandOptions): Promise<string> {
  return digOutput(await dig(options), options);
}

/** Renders a {@link dig} result in `options.format` (see {@link runDigCommand}). */
export function digOutput(r: DigResult, options: Pick<DigCommandOptions, 'format' | 'expect'>, domain?: ClusterDomain, lang: Lang = 'en'): string {
  if (options.format === 'json' || options.format === 'yaml') {
    const { replyHex: _hex, ...exchange } = r.exchange;
    const standIn = standInOf(r);
    return toDocument('Dig', {
      exchange, check: r.check && { ...r.check, exchange: undefined }, ttlCompared: false, ...(r.note ? { note: r.note } : {}),
      ...(r.asked ? { askedServer: r.asked } : {}), ...(standIn ? { standsInFor: standIn } : {}), ...(domain ? { clusterDomain: domain } : {}),
    }, options.format);
  }
  return digText(r, options.expect?.zone, lang) + (domain ? `${tf(lang, 'cli.dig.domain', { domain: whyText(lang, clusterDomainText(domain)) })}\n` : '');
}
