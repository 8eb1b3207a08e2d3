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
import { clusterDomainText, type ClusterDomain } from '../analysis/cluster-domain.js';
import { answersCell, comparedCell, msText, noReplyText, relativeName, resultAnsweringServers, standInText, statusWord } from '../analysis/dns-describe.js';
import type { DnsCheck, DnsExchange, DnsRecord, DnsSearchRun, ServiceDnsResult } from '../model/dns.js';
import { answersAge, answersAgeText } from '../analysis/dns-age.js';
import type { ApiObjects } from '../model/k8s.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import { headText, showHead } from './header.js';
import type { Lang } from '../text/i18n.js';
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

const SOURCE_TEXT = { 'kube-dns-service': 'kube-dns ClusterIP', flag: '--dns-server', 'resolv-conf': 'resolv.conf' } as const;
const RESOLV_TEXT = { 'kubernetes-default': 'the Kubernetes default resolv.conf', node: "the node's resolv.conf", pod: "the pod's resolv.conf" } as const;

function checksTable(r: ServiceDnsResult): string {
  const rows = r.checks.map((c) => {
    const e = c.exchange;
    const replied = c.verdict !== 'no-reply';
    const answer = replied ? answersCell(e, r.zone) || '(no data)' : noReplyText(e);
    return [relativeName(c.qname, r.zone), c.qtype, statusWord(e) + (e.truncated ? ' (TC→TCP)' : ''), answer, msText(e.latencyMs), c.verdict];
  });
  return plainTable(['QUESTION', 'TYPE', 'REPLY', 'ANSWER', 'MS', 'CHECK'], rows).trimEnd();
}

function detailLines(r: ServiceDnsResult): string[] {
  const out: string[] = [];
  for (const c of r.checks) {
    if (c.verdict !== 'mismatch') continue;
    out.push(`${c.qtype} ${c.qname}: expected ${c.expectedRcode} (${c.expectedReason}), got ${statusWord(c.exchange)}`);
    for (const x of c.records) {
      if (x.verdict === 'match') continue;
      out.push(`  ${x.verdict.padEnd(10)} expected ${comparedCell(x.expected, r.zone)}  got ${comparedCell(x.actual, r.zone)}`);
    }
  }
  return out;
}

/** The text lines of one search run (`search "web.default"` … and the ndots cost). */
export function searchLines(s: DnsSearchRun): string[] {
  const head = `search "${s.name}" with ${RESOLV_TEXT[s.resolvOrigin]} (ndots:${s.ndots}; search ${s.searchList.join(' ') || '-'}; nameserver ${s.nameserver}):`;
  const width = Math.max(0, ...s.steps.map((st) => st.qname.length));
  const steps = s.steps.map((st, i) => {
    const qs = st.exchanges.map((e) => `${e.qtype} ${statusWord(e).padEnd(8)} ${msText(e.latencyMs).padStart(5)} ms`).join('  ');
    return `  ${String(i + 1).padStart(2)}  ${st.qname.padEnd(width)}  ${qs}${st.outcome === 'answer' ? '  ← answer' : ''}`;
  });
  const end = s.answeredBy
    ? `  answered by ${s.answeredBy} after ${s.queries} queries in ${msText(s.elapsedMs)} ms; ${s.wastedQueries} queries before it (ndots:${s.ndots})`
    : `  not answered (${s.stopReason}) after ${s.queries} queries in ${msText(s.elapsedMs)} ms${s.incomplete ? '; the capture lacks the rest of the sequence' : ''}`;
  return [head, ...steps, end];
}

/** The text report of one Service; `age`: when a replay's answers were taken against the capture (src/analysis/dns-age.ts), a line under the server. */
export function dnsResultText(r: ServiceDnsResult, age: string | null = null): string {
  const server = `server ${r.server.address}:${r.server.port} (${SOURCE_TEXT[r.server.source]}${r.server.service ? ` ${r.server.service}` : ''}) via ${r.via}`;
  const standIns = resultAnsweringServers(r).filter((s) => s.standsInFor).map(standInText);
  // Every entry but the table (its cells escaped) is one line: a name from DNS or the API stays on it.
  const one = (l: string) => terminalSafe(l);
  const lines = [...[`${r.namespace}/${r.name}  ${r.fqdn}`, server, ...(age ? [age] : []), ...standIns].map(one), checksTable(r), ...detailLines(r).map(one)];
  for (const s of r.searches) lines.push('', ...searchLines(s).map(one));
  lines.push('', ...r.notes.map((n) => one(`note: ${n}`)));
  return lines.join('\n') + '\n';
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
    return dnsResultText(r, age ? answersAgeText(lang, age) : null);
  };
  return (head ? headText(head, lang) : '') + (domain ? `cluster domain ${clusterDomainText(domain)}\n` : '') + results.map(text).join('\n');
}
