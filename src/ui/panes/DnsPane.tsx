/**
 * The DNS pane: for the selected Service, every question asked of the cluster DNS
 * server (names relative to the cluster zone) with the reply, the answer, the latency
 * and the check against the API; below, the selected question's expected-vs-actual
 * records; then the search expansion a pod sends for the Service's short names, step by
 * step with real replies, and what `ndots` cost. A timeout or SERVFAIL is shown as such,
 * with the server and the time spent.
 *
 * `n` asks any name instead: it is resolved as `nodescope dig +search NAME` resolves it
 * (the pod resolver's search expansion, src/dns/dig-search.ts) and the pane shows each
 * question sent in order, what answered and the answer; Esc returns to the Service.
 */
import { Box } from 'ink';
import { answersAge, answersAgeText } from '../../analysis/dns-age.js';
import { podViewLines, podViewMissingLines } from '../../analysis/dns-pod-view.js';
import { rowMatcher } from '../../text/row-filter.js';
import { Text } from '../components/SafeText.js';
import React from 'react';
import { answersCell, comparedCell, msText, relativeName, resultAnsweringServers, statusWord } from '../../analysis/dns-describe.js';
import { PORT_FORWARD_NOTE } from '../../analysis/dns-describe.js';
import type { DnsCheck, DnsCheckVerdict, DnsExchange, DnsRecordVerdict, DnsSearchRun, ServiceDnsResult } from '../../model/dns.js';
import { recordCell } from '../../analysis/dns-describe.js';
import { terminalSafe } from '../../text/terminal-safe.js';
import { Table, type TableRow } from '../components/Table.js';
import { t, tf, type Lang, type MessageKey } from '../../text/i18n.js';
import { shownServiceLabel } from '../shown-service.js';
import { fitCell, type ColumnSpec } from '../../text/cells.js';
import { theme, type ColorToken } from '../theme.js';
import { formatServiceRef } from '../../model/service-ref.js';

/**
 * What the pane shows: no API objects, no Service selected yet, a check in flight
 * (`server` when known), a check that could not run, or the result.
 */
export type DnsPaneData =
  | { readonly kind: 'no-api' }
  | { readonly kind: 'no-service' }
  | { readonly kind: 'loading'; readonly service: string; readonly server: string | null }
  | { readonly kind: 'failed'; readonly service: string; readonly reason: string }
  | { readonly kind: 'result'; readonly result: ServiceDnsResult }
  | { readonly kind: 'name'; readonly name: DnsNameData };

/**
 * A name asked with `n`: its search `run` once it ended (null while it runs), or the
 * `error` that stopped it; `zone`: the cluster domain the default resolv.conf was made with.
 */
export interface DnsNameData {
  readonly name: string;
  readonly run: DnsSearchRun | null;
  readonly error: string | null;
  readonly zone: string | null;
}

/**
 * Props of {@link DnsPane}. `cursor`: the selected question; `height`: lines available;
 * `pinned`: the Service is pinned (else it follows the Services cursor), said in the title.
 */
export interface DnsPaneProps {
  readonly data: DnsPaneData;
  readonly pinned?: boolean;
  readonly width: number;
  readonly height: number;
  readonly focused: boolean;
  readonly cursor: number;
  readonly lang: Lang;
  /** The snapshot's capture time and whether it is live: a replay's answers say how long after the capture they were taken. */
  readonly capture?: { readonly at: string; readonly live: boolean };
}

/**
 * The pane's data from what the app knows: whether there are API objects, the selected
 * Service (`ns/name`), the latest result for it, whether a check runs, its error.
 * A result for another Service than the selected one is not shown.
 */
export function dnsPaneData(input: {
  readonly hasApi: boolean;
  readonly selectedService: string | null;
  readonly result: ServiceDnsResult | null;
  readonly loading: boolean;
  readonly error: string | null;
  readonly server?: string | null;
  /** A name asked with `n` (it replaces the Service's questions until Esc). */
  readonly name?: DnsNameData | null;
}): DnsPaneData {
  if (input.name) return { kind: 'name', name: input.name };
  if (!input.hasApi) return { kind: 'no-api' };
  const service = input.selectedService;
  if (service === null) return { kind: 'no-service' };
  if (input.error !== null) return { kind: 'failed', service, reason: input.error };
  const r = input.result;
  if (r && formatServiceRef(r) === service && !input.loading) return { kind: 'result', result: r };
  return { kind: 'loading', service, server: input.server ?? null };
}

/**
 * The Service's questions whose row, as the pane shows it (question, type, reply, answer,
 * ms, check), matches `filter` (src/text/row-filter.ts: text, a regex, `!` inverse); other
 * data as it is.
 */
export function filterDnsData(data: DnsPaneData, filter: string, lang: Lang): DnsPaneData {
  if (!filter || data.kind !== 'result') return data;
  const { test } = rowMatcher(filter);
  const rows = checkRows(lang, data.result);
  return { kind: 'result', result: { ...data.result, checks: data.result.checks.filter((_, i) => test(rows[i]!.cells.join(' '))) } };
}

/** Rows the cursor moves over (the questions). */
export function dnsRowCount(data: DnsPaneData): number {
  return data.kind === 'result' ? data.result.checks.length : 0;
}

const VERDICT_COLOR: Readonly<Record<DnsCheckVerdict, ColorToken>> = { ok: 'ok', mismatch: 'error', 'no-reply': 'warn', unpredicted: 'muted' };
const RECORD_COLOR: Readonly<Record<DnsRecordVerdict, ColorToken>> = { match: 'ok', mismatch: 'error', missing: 'error', unexpected: 'error', upstream: 'muted' };

/** One text line of the pane below the table. */
interface Line {
  readonly text: string;
  readonly color?: ColorToken;
  readonly bold?: boolean;
}

function columns(lang: Lang, width: number): ColumnSpec[] {
  // At 80 columns `_http._tcp.<svc>.<ns>.svc` names and a server address both fit.
  return [
    { key: 'q', title: t(lang, 'dns.col.question'), flex: 13, minWidth: 12 },
    { key: 't', title: t(lang, 'dns.col.type'), width: 5 },
    { key: 'r', title: t(lang, 'dns.col.reply'), width: 9 },
    { key: 'a', title: t(lang, 'dns.col.answer'), flex: width >= 100 ? 16 : 10, minWidth: 10 },
    { key: 'm', title: t(lang, 'dns.col.ms'), width: 6, align: 'right' },
    { key: 'c', title: t(lang, 'dns.col.check'), width: 9 },
  ];
}

function triesText(lang: Lang, n: number): string {
  return n === 1 ? t(lang, 'dns.try') : tf(lang, 'dns.tries', { n });
}

function outcomeWord(lang: Lang, e: DnsExchange): string {
  return t(lang, `dns.outcome.${e.outcome}` as MessageKey);
}

function answerCell(lang: Lang, c: DnsCheck, zone: string): string {
  const e = c.exchange;
  if (c.verdict === 'no-reply') return tf(lang, 'dns.noReplyCell', { server: `${e.server}:${e.port}` });
  return answersCell(e, zone) || t(lang, 'dns.nodata');
}

function checkRows(lang: Lang, r: ServiceDnsResult): TableRow[] {
  return r.checks.map((c, i) => ({
    key: `${c.qtype} ${c.qname} ${i}`,
    cells: [
      relativeName(c.qname, r.zone),
      c.qtype,
      c.verdict === 'no-reply' ? outcomeWord(lang, c.exchange) : statusWord(c.exchange),
      answerCell(lang, c, r.zone),
      msText(c.exchange.latencyMs),
      t(lang, `dns.verdict.${c.verdict}` as MessageKey),
    ],
    color: VERDICT_COLOR[c.verdict],
  }));
}

function detailLines(lang: Lang, c: DnsCheck | undefined, zone: string): Line[] {
  if (!c) return [];
  const e = c.exchange;
  const qname = relativeName(c.qname, zone);
  const tries = triesText(lang, e.tries);
  const head = c.verdict === 'no-reply'
    ? `${c.qtype} ${qname}: ${outcomeWord(lang, e)}`
    : tf(lang, 'dns.detail', { qtype: c.qtype, qname, reply: statusWord(e), transport: e.transport.toUpperCase(), tries, ms: msText(e.latencyMs) });
  const lines: Line[] = [{ text: head, color: VERDICT_COLOR[c.verdict], bold: true }];
  if (c.verdict === 'no-reply') {
    // A replay answers only what was recorded: no time and no tries to speak of then.
    const key = e.outcome === 'not-captured' ? 'dns.notCaptured' : 'dns.noReply';
    lines.push({ text: `  ${tf(lang, key, { server: `${e.server}:${e.port}`, ms: msText(e.latencyMs), tries })}`, color: 'warn' });
  }
  if (e.truncated) lines.push({ text: `  ${t(lang, 'dns.truncated')}`, color: 'info' });
  if (c.verdict === 'no-reply' && e.error && e.error !== 'timeout') lines.push({ text: `  ${e.error}`, color: 'warn' });
  lines.push({
    text: `  ${c.expectedRcode === null ? t(lang, 'dns.unpredictedLine') : tf(lang, 'dns.expectedLine', { rcode: c.expectedRcode, reason: c.expectedReason ?? '' })}`,
    color: 'muted',
  });
  for (const x of c.records) {
    const word = t(lang, `dns.record.${x.verdict}` as MessageKey);
    const text = x.verdict === 'match' || x.verdict === 'upstream'
      ? `  ${word}: ${comparedCell(x.actual ?? x.expected, zone)}`
      : `  ${word}: ${t(lang, 'dns.want')} ${comparedCell(x.expected, zone)} · ${t(lang, 'dns.got')} ${comparedCell(x.actual, zone)}`;
    lines.push({ text, color: RECORD_COLOR[x.verdict] });
  }
  return lines;
}

function stepName(qname: string, origin: 'as-is' | 'search', zone: string): string {
  return origin === 'as-is' ? qname : relativeName(qname, zone);
}

function searchLines(lang: Lang, s: DnsSearchRun, zone: string): Line[] {
  const lines: Line[] = [{
    text: tf(lang, 'dns.search', { name: s.name, origin: t(lang, `dns.resolv.${s.resolvOrigin}` as MessageKey), ndots: s.ndots, server: s.nameserver }),
    bold: true, color: 'accent',
  }];
  const names = s.steps.map((st) => stepName(st.qname, st.origin, zone));
  const nameWidth = Math.max(0, ...names.map((n) => n.length));
  s.steps.forEach((st, i) => {
    const qs = st.exchanges.map((e) => `${e.qtype} ${REPLY_WORD(lang, e).padEnd(8)}`).join('  ');
    lines.push({
      text: `  ${String(i + 1).padStart(2)} ${names[i]!.padEnd(nameWidth)}  ${qs}  ${msText(st.elapsedMs).padStart(5)} ms`,
      color: st.outcome === 'answer' ? 'ok' : st.outcome === 'timeout' || st.outcome === 'servfail' || st.outcome === 'refused' ? 'warn' : 'muted',
    });
  });
  const totals = { queries: s.queries, ms: msText(s.elapsedMs) };
  lines.push(s.answeredBy
    ? { text: `  ${tf(lang, 'dns.answeredBy', { ...totals, qname: stepName(s.answeredBy, s.steps[s.steps.length - 1]?.origin ?? 'search', zone) })}` }
    : { text: `  ${tf(lang, 'dns.notAnswered', { ...totals, reason: s.stopReason })}`, color: 'warn' });
  if (s.incomplete) lines.push({ text: `  ${t(lang, 'dns.incomplete')}`, color: 'warn' });
  // "Before the answer" needs an answer.
  if (s.wastedQueries > 0 && s.answeredBy) lines.push({ text: `  ${tf(lang, 'dns.ndotsCost', { ndots: s.ndots, wasted: s.wastedQueries, queries: s.queries })}`, color: 'warn' });
  return lines;
}

function REPLY_WORD(lang: Lang, e: DnsExchange): string {
  return e.rcode ?? outcomeWord(lang, e);
}

function Lines({ lines, width }: { readonly lines: readonly Line[]; readonly width: number }): React.JSX.Element {
  return (
    <>
      {lines.map((l, i) => (
        <Text key={i} color={l.color ? theme[l.color] : undefined} bold={l.bold}>
          {fitCell(l.text, width)}
        </Text>
      ))}
    </>
  );
}

function message(text: string, width: number, color: ColorToken = 'muted'): React.JSX.Element {
  return (
    <Box flexDirection="column">
      <Text color={theme[color]}>{fitCell(text, width)}</Text>
    </Box>
  );
}

/** The lines of a name asked with `n`: the search step by step (full names), then the answer's records. */
function nameLines(lang: Lang, d: DnsNameData): Line[] {
  const name = terminalSafe(d.name);
  if (d.error !== null) return [{ text: tf(lang, 'dns.nameFailed', { name, reason: terminalSafe(d.error) }), color: 'error' }];
  if (d.run === null) return [{ text: tf(lang, 'dns.nameAsking', { name }), color: 'muted' }];
  const run = d.run;
  // Names are shown whole (zone ''): a typed name need not be in the cluster zone.
  const lines = searchLines(lang, { ...run, name }, '').map((l) => ({ ...l, text: terminalSafe(l.text) }));
  const last = run.steps[run.steps.length - 1];
  if (!run.answeredBy || !last) return lines;
  // The records go right under "answered by" (header, one line per step, then that line).
  const records = last.exchanges.flatMap((e) => e.answers.map((a): Line => ({ text: `  ${terminalSafe(`${a.type} ${recordCell(a, '')}`)}`, color: 'ok' })));
  const at = 2 + run.steps.length;
  return [...lines.slice(0, at), ...records, ...lines.slice(at)];
}

/** Renders the pane. */
export function DnsPane({ data, pinned = false, width, height, focused, cursor, lang, capture }: DnsPaneProps): React.JSX.Element {
  switch (data.kind) {
    case 'no-api':
      return message(t(lang, 'dns.noApi'), width);
    case 'no-service':
      return message(t(lang, 'dns.noService'), width);
    case 'loading':
      return message(tf(lang, 'dns.asking', { server: data.server ?? 'DNS', service: shownServiceLabel(lang, { service: data.service, pinned }) }), width);
    case 'failed':
      return message(tf(lang, 'dns.failed', { service: shownServiceLabel(lang, { service: data.service, pinned }), reason: data.reason }), width, 'error');
    case 'name': {
      const head: Line = { text: tf(lang, 'dns.nameTitle', { name: terminalSafe(data.name.name) }), bold: true, color: 'accent' };
      const run = data.name.run;
      // What the Pod's resolv.conf was built from, each part the source did not show said so.
      const built = run?.podView ? podViewLines(run.podView, run.nameserver, lang) : run?.podViewMissing ? podViewMissingLines(lang) : [];
      const view: Line[] = built.map((text) => ({ text, color: 'muted' }));
      return (
        <Box flexDirection="column">
          <Lines lines={[head, ...view, ...nameLines(lang, data.name)].slice(0, height)} width={width} />
        </Box>
      );
    }
    case 'result':
      break;
  }
  const r = data.result;
  const source = t(lang, `dns.source.${r.server.source}` as MessageKey);
  const head: Line[] = [
    { text: `${shownServiceLabel(lang, { service: formatServiceRef(r), pinned })} · ${r.fqdn} · ${tf(lang, 'dns.relative', { zone: r.zone })}`, bold: true, color: 'accent' },
    { text: tf(lang, 'dns.server', { server: `${r.server.address}:${r.server.port}`, source, via: r.via }), color: 'muted' },
  ];
  // Recorded answers taken long after the rules may describe another cluster state (src/analysis/dns-age.ts).
  const age = capture ? answersAge(r, capture.at, capture.live) : null;
  if (age) head.push({ text: answersAgeText(lang, age), color: age.late ? 'warn' : 'muted' });
  // --node asks one CoreDNS pod through the API: the answer is CoreDNS's, not the node's path to it.
  if (r.notes.includes(PORT_FORWARD_NOTE)) head.push({ text: t(lang, 'dns.portForwardNote'), color: 'warn' });
  // A replay may answer with the capture's only recorded server: name it next to the one asked.
  for (const s of resultAnsweringServers(r)) {
    if (s.standsInFor) head.push({ text: tf(lang, 'dns.standIn', { server: `${s.address}:${s.port}`, asked: `${s.standsInFor.address}:${s.standsInFor.port}` }), color: 'warn' });
  }
  const detail = detailLines(lang, r.checks[Math.min(cursor, r.checks.length - 1)], r.zone);
  const rest: Line[] = [];
  for (const s of r.searches) rest.push(...searchLines(lang, s, r.zone));
  if (!r.serviceExists) rest.push({ text: t(lang, 'dns.noSuchService'), color: 'warn' });
  rest.push({ text: t(lang, 'dns.ttlNote'), color: 'muted' });
  // The table keeps at least two rows; the lines below it give way first.
  const fixed = head.length + 1 + detail.length;
  const tableRows = Math.max(Math.min(2, r.checks.length), Math.min(r.checks.length, height - fixed - rest.length));
  const room = Math.max(0, height - head.length - 1 - tableRows);
  const below = [...detail, ...rest].slice(0, room);
  return (
    <Box flexDirection="column">
      <Lines lines={head} width={width} />
      <Table columns={columns(lang, width)} rows={checkRows(lang, r)} cursor={cursor} width={width} height={tableRows} focused={focused} />
      <Lines lines={below} width={width} />
    </Box>
  );
}
