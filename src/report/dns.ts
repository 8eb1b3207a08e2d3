/**
 * `nodescope show dns --service NS/NAME`: what the Service's names really resolved to,
 * checked against the API, as JSON or text.
 *
 * JSON document (stable):
 * `{node?, kernel?, source?, live?, capturedAt?, mode?, evidence?, clusterDomain?: {name, source:
 * 'flag'|'kubelet-config'|'resolv-conf'|'corefile'|'default'}, ttlCompared: false,
 * dns: [{namespace, name, fqdn, zone, serviceExists, server: {address, port, source,
 * service}, answeredBy: [{address, port, standsInFor: {address, port} | null}], via, checks: [{qname, qtype, verdict, expected: {rcode, reason} | null,
 * rcodeMatches, reply: {outcome, rcode, flags, transport, truncated, tries, latencyMs,
 * startedAt, error, answers, authorities, additionals: [{name, type, ttl, data}]},
 * records: [{verdict, name, type, expected, actual}]}], searches: [{name, resolvOrigin,
 * ndots, searchList, nameserver, sending, answeredBy, stopReason, queries,
 * wastedQueries, elapsedMs, incomplete, steps: [{qname, origin, outcome, elapsedMs,
 * queries: [{qtype, outcome, rcode, latencyMs}]}]}], notes}]}` — the head fields come
 * from the snapshot when one is given; latencies in milliseconds, TTLs in seconds.
 * `server` is the server asked; `answeredBy` the servers whose replies are shown (checks
 * and searches), with `standsInFor` the asked server when another answered for it (a
 * replay of a capture that recorded only that server), null when the asked one replied.
 */
import type { ClusterDomain } from '../analysis/cluster-domain.js';
import { answersCell, comparedCell, msText, relativeName, resultAnsweringServers, statusWord, type AnsweringServer } from '../analysis/dns-describe.js';
import type { DnsCheck, DnsExchange, DnsRecord, DnsSearchRun, ServiceDnsResult } from '../model/dns.js';
import { answersAge, answersAgeText } from '../analysis/dns-age.js';
import type { ApiObjects } from '../model/k8s.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import { headText, showHead } from './header.js';
import stringWidth from 'string-width';
import { t, tf, type Lang, type MessageKey } from '../text/i18n.js';
import { whyText } from '../text/why.js';
import { isDocumentFormat, toDocument, type OutputFormat } from '../text/document.js';
import { plainTable } from '../text/plain-table.js';
import { terminalSafe } from '../text/terminal-safe.js';

const rec = (r: DnsRecord) => ({ name: r.name, type: r.type, ttl: r.ttl, data: r.data });

function replyJson(e: DnsExchange) {
  return {
    outcome: e.outcome, rcode: e.rcode, flags: e.flags, transport: e.transport, truncated: e.truncated, tries: e.tries,
    latencyMs: e.latencyMs, startedAt: e.startedAt, error: e.error,
    answers: e.answers.map(rec), authorities: e.authorities.map(rec), additionals: e.additionals.map(rec),
  };
}

function checkJson(c: DnsCheck) {
  return {
    qname: c.qname, qtype: c.qtype, verdict: c.verdict,
    expected: c.expectedRcode === null ? null : { rcode: c.expectedRcode, reason: c.expectedReason },
    rcodeMatches: c.rcodeMatches, reply: replyJson(c.exchange), records: c.records,
  };
}

function searchJson(s: DnsSearchRun) {
  return {
    name: s.name, resolvOrigin: s.resolvOrigin, ndots: s.ndots, searchList: s.searchList, nameserver: s.nameserver, sending: s.sending,
    answeredBy: s.answeredBy, stopReason: s.stopReason, queries: s.queries, wastedQueries: s.wastedQueries, elapsedMs: s.elapsedMs,
    incomplete: s.incomplete,
    steps: s.steps.map((st) => ({
      qname: st.qname, origin: st.origin, outcome: st.outcome, elapsedMs: st.elapsedMs,
      queries: st.exchanges.map((e) => ({ qtype: e.qtype, outcome: e.outcome, rcode: e.rcode, latencyMs: e.latencyMs })),
    })),
  };
}

/** One Service's result as the JSON document's `dns[]` item. */
export function dnsResultJson(r: ServiceDnsResult) {
  return {
    namespace: r.namespace, name: r.name, fqdn: r.fqdn, zone: r.zone, serviceExists: r.serviceExists, server: r.server,
    answeredBy: resultAnsweringServers(r), via: r.via,
    checks: r.checks.map(checkJson), searches: r.searches.map(searchJson), notes: r.notes,
  };
}

const SOURCE_KEY = { 'kube-dns-service': 'dns.source.kube-dns-service', flag: 'dns.source.flag', 'resolv-conf': 'dns.source.resolv-conf' } as const;

/** A check's verdict word, as the text always printed it (`ok`, `no-reply`, …). */
const CHECK_KEYS: Readonly<Record<string, MessageKey>> = { ok: 'cli.dns.check.ok', mismatch: 'cli.dns.check.mismatch', 'no-reply': 'cli.dns.check.no-reply', unpredicted: 'cli.dns.check.unpredicted' };
const checkWord = (lang: Lang, verdict: string) => (CHECK_KEYS[verdict] ? t(lang, CHECK_KEYS[verdict]!) : verdict);
const RECORD_KEYS: Readonly<Record<string, MessageKey>> = { mismatch: 'cli.dns.record.mismatch', missing: 'cli.dns.record.missing', unexpected: 'cli.dns.record.unexpected', upstream: 'cli.dns.record.upstream' };

/** `text` padded with spaces to `width` terminal cells. */
const padCells = (text: string, width: number) => text + ' '.repeat(Math.max(0, width - stringWidth(text)));

/** The "no reply" cell: `TIMEOUT from 10.96.0.10:53 after 3001 ms (2 tries)` (as `noReplyText` in English). */
function noReplyCell(e: DnsExchange, lang: Lang): string {
  const tries = e.tries === 1 ? t(lang, 'cli.dns.try') : tf(lang, 'cli.dns.tries', { n: e.tries });
  return tf(lang, 'cli.dns.noReply', { status: statusWord(e), server: e.server, port: e.port, ms: msText(e.latencyMs), tries, error: e.error && e.error !== 'timeout' ? `: ${e.error}` : '' });
}

function checksTable(r: ServiceDnsResult, lang: Lang): string {
  const rows = r.checks.map((c) => {
    const e = c.exchange;
    const replied = c.verdict !== 'no-reply';
    const answer = replied ? answersCell(e, r.zone) || t(lang, 'cli.dns.noData') : noReplyCell(e, lang);
    return [relativeName(c.qname, r.zone), c.qtype, statusWord(e) + (e.truncated ? ' (TC→TCP)' : ''), answer, msText(e.latencyMs), checkWord(lang, c.verdict)];
  });
  const head = (['dns.col.question', 'dns.col.type', 'dns.col.reply', 'dns.col.answer', 'dns.col.ms', 'dns.col.check'] as const).map((k) => t(lang, k));
  return plainTable(head, rows).trimEnd();
}

function detailLines(r: ServiceDnsResult, lang: Lang): string[] {
  const out: string[] = [];
  for (const c of r.checks) {
    if (c.verdict !== 'mismatch') continue;
    out.push(tf(lang, 'cli.dns.mismatch', { qtype: c.qtype, qname: c.qname, rcode: c.expectedRcode ?? 'null', reason: whyText(lang, c.expectedReason ?? 'null'), status: statusWord(c.exchange) }));
    for (const x of c.records) {
      if (x.verdict === 'match') continue;
      const verdict = RECORD_KEYS[x.verdict] ? t(lang, RECORD_KEYS[x.verdict]!) : x.verdict;
      out.push(tf(lang, 'cli.dns.record', { verdict: padCells(verdict, 10), expected: comparedCell(x.expected, r.zone), actual: comparedCell(x.actual, r.zone) }));
    }
  }
  return out;
}

/** The text lines of one search run (`search "web.default"` … and the ndots cost), in `lang` (default `en`). */
export function searchLines(s: DnsSearchRun, lang: Lang = 'en'): string[] {
  const head = tf(lang, 'cli.search.head', { name: s.name, resolv: t(lang, `cli.search.resolv.${s.resolvOrigin}` as const), ndots: s.ndots, list: s.searchList.join(' ') || '-', nameserver: s.nameserver });
  const width = Math.max(0, ...s.steps.map((st) => st.qname.length));
  const steps = s.steps.map((st, i) => {
    // A question the capture never asked has no time: its cell says so alone, as wide as a timed one.
    const qs = st.exchanges.map((e) => `${e.qtype} ${e.outcome === 'not-captured' ? statusWord(e).padEnd(17) : `${statusWord(e).padEnd(8)} ${msText(e.latencyMs).padStart(5)} ms`}`).join('  ');
    return `  ${String(i + 1).padStart(2)}  ${st.qname.padEnd(width)}  ${qs}${st.outcome === 'answer' ? t(lang, 'cli.search.answer') : ''}`.trimEnd();
  });
  const totals = { queries: s.queries, ms: msText(s.elapsedMs), ndots: s.ndots };
  // No question in the capture: no time to total.
  const timed = s.steps.some((st) => st.exchanges.some((e) => e.outcome !== 'not-captured'));
  const end = s.answeredBy
    ? tf(lang, 'cli.search.answered', { ...totals, by: s.answeredBy, wasted: s.wastedQueries })
    : tf(lang, timed ? 'cli.search.notAnswered' : 'cli.search.notAnsweredUntimed', { ...totals, reason: s.stopReason, incomplete: s.incomplete ? t(lang, 'cli.search.incomplete') : '' });
  return [head, ...steps, end];
}

/** `answered by 10.244.0.2:53 (recorded), standing in for 10.96.0.10:53 asked: …` (as `standInText` in English). */
function standInLine(s: AnsweringServer, lang: Lang): string {
  return tf(lang, 'cli.dns.standIn', { address: s.address, port: s.port, askedAddress: String(s.standsInFor?.address), askedPort: String(s.standsInFor?.port) });
}

/** The text report of one Service (in `lang`, default `en`); `age`: when a replay's answers were taken against the capture (src/analysis/dns-age.ts), a line under the server. */
export function dnsResultText(r: ServiceDnsResult, lang: Lang = 'en', age: string | null = null): string {
  const server = tf(lang, 'cli.dns.server', { address: r.server.address, port: r.server.port, source: t(lang, SOURCE_KEY[r.server.source]), service: r.server.service ? ` ${r.server.service}` : '', via: r.via });
  const standIns = resultAnsweringServers(r).filter((s) => s.standsInFor).map((s) => standInLine(s, lang));
  // Every entry but the table (its cells escaped) is one line: a name from DNS or the API stays on it.
  const one = (l: string) => terminalSafe(l);
  const lines = [...[`${r.namespace}/${r.name}  ${r.fqdn}`, server, ...(age ? [age] : []), ...standIns].map(one), checksTable(r, lang), ...detailLines(r, lang).map(one)];
  for (const s of r.searches) lines.push('', ...searchLines(s, lang).map(one));
  lines.push('', ...r.notes.map((n) => one(tf(lang, 'cli.dns.note', { note: whyText(lang, n) }))));
  return lines.join('\n') + '\n';
}

/** `cluster.local (from the default: …)`: the domain and where it came from (as `clusterDomainText` in English). */
function domainText(d: ClusterDomain, lang: Lang): string {
  return tf(lang, 'cli.dns.domain', { name: d.name, from: t(lang, `cli.dns.domain.${d.source}` as const) });
}

function isSnapshot(x: NodeSnapshot | ApiObjects): x is NodeSnapshot {
  return 'meta' in x;
}

/**
 * Renders `show dns`: `results` (from `resolveServiceDns`) as JSON or text; with a
 * snapshot, the common head (node, source, mode) comes first. Never throws.
 */
export function showDns(snapshotOrApi: NodeSnapshot | ApiObjects, results: readonly ServiceDnsResult[], format: OutputFormat, domain?: ClusterDomain, lang: Lang = 'en'): string {
  const snapshot = isSnapshot(snapshotOrApi) ? snapshotOrApi : null;
  const head = snapshot ? showHead(snapshot) : null;
  const ageOf = (r: ServiceDnsResult) => (snapshot ? answersAge(r, snapshot.meta.capturedAt, snapshot.meta.source.live) : null);
  if (isDocumentFormat(format)) {
    const dns = results.map((r) => ({ ...dnsResultJson(r), ...(ageOf(r) ? { answersTakenAfterCaptureMin: ageOf(r)!.minutes } : {}) }));
    return toDocument('DnsAnswers', { ...(head ?? {}), ...(domain ? { clusterDomain: domain } : {}), ttlCompared: false, dns }, format);
  }
  const text = (r: ServiceDnsResult) => {
    const age = ageOf(r);
    return dnsResultText(r, lang, age ? answersAgeText(lang, age) : null);
  };
  return (head ? headText(head, lang) : '') + (domain ? `${domainText(domain, lang)}\n` : '') + results.map(text).join('\n');
}
