/**
 * The output of `nodescope dig +search NAME` (src/dns/dig-search.ts runs it): the questions
 * in order, each with its reply and answer records, and the count — as dig(1)-style text or JSON.
 */
import type { DnsRecord, DnsSearchRun } from '../model/dns.js';
import { toDocument } from '../text/document.js';
import { searchLines } from './dns.js';
import { podViewLines, podViewMissingLines } from '../analysis/dns-pod-view.js';
import { tf, type Lang } from '../text/i18n.js';
import { whyText } from '../text/why.js';

const recordText = (r: DnsRecord) => `${r.name}.\t${r.ttl}\tIN\t${r.type}\t${r.type === 'CNAME' || r.type === 'NS' || r.type === 'PTR' || r.type === 'SRV' ? `${r.data}.` : r.data}`;

/** The transport's note when the run shows a reply, else null (a replay's note is about recorded answers: with none shown it would mislead). */
function shownNote(run: DnsSearchRun, note: string | null): string | null {
  return run.steps.some((st) => st.exchanges.some((e) => e.outcome !== 'not-captured')) ? note : null;
}

/** The run as text: each question in order with its reply and answer records, then the count (in `lang`, default `en`); `note` only when a reply is shown. */
export function digSearchText(run: DnsSearchRun, transportNote: string | null, lang: Lang = 'en'): string {
  const note = shownNote(run, transportNote);
  const lines = searchLines(run, lang);
  const out: string[] = [`; <<>> nodescope dig +search <<>> ${run.name}`, lines[0]!];
  if (run.podView) out.push(...podViewLines(run.podView, run.nameserver, lang).map((l) => `  ${l}`));
  if (run.podViewMissing) out.push(...podViewMissingLines(lang).map((l) => `  ${l}`));
  run.steps.forEach((st, i) => {
    out.push(lines[i + 1]!);
    for (const e of st.exchanges) for (const r of e.answers) out.push(`        ${recordText(r)}`);
  });
  out.push(lines[lines.length - 1]!);
  if (lang === 'en') {
    const verb = run.incomplete ? 'asked of the capture, which does not hold them all,' : 'sent';
    out.push(`;; ${run.queries} ${run.queries === 1 ? 'question' : 'questions'} ${verb} for ${run.steps.length} ${run.steps.length === 1 ? 'name' : 'names'}`);
  } else out.push(tf(lang, run.incomplete ? 'cli.dig.searchCountIncomplete' : 'cli.dig.searchCount', { queries: run.queries, names: run.steps.length }));
  if (note) out.push(tf(lang, 'cli.dig.note', { note: whyText(lang, note) }));
  return `${out.join('\n')}\n`;
}

/**
 * The run as JSON (or the same document as YAML): `{name, resolvOrigin, podView, ndots, searchList, nameserver,
 * answeredBy, stopReason, queries, steps: [{qname, origin, outcome, queries: [{qtype, outcome, rcode, answers}]}], note}`;
 * `podView` (null unless resolvOrigin is `kubernetes-default`): `{namespace, namespaceGiven, clusterDomain,
 * clusterDomainSource, nameserverService, nodeSearch}` (`nodeSearch` null: the node's resolv.conf was not read);
 * `note` null unless a reply is shown.
 */
export function digSearchJson(run: DnsSearchRun, note: string | null, format: 'json' | 'yaml' = 'json'): string {
  return toDocument('DigSearch', {
    name: run.name, resolvOrigin: run.resolvOrigin, podView: run.podView ?? null, podViewMissing: run.podViewMissing ?? null, ndots: run.ndots, searchList: run.searchList, nameserver: run.nameserver,
    answeredBy: run.answeredBy, stopReason: run.stopReason, queries: run.queries, incomplete: run.incomplete,
    steps: run.steps.map((st) => ({
      qname: st.qname, origin: st.origin, outcome: st.outcome,
      queries: st.exchanges.map((e) => ({ qtype: e.qtype, outcome: e.outcome, rcode: e.rcode, answers: e.answers.map(recordText) })),
    })),
    note: shownNote(run, note),
  }, format);
}
