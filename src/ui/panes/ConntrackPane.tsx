/**
 * The Conntrack pane: the node's conntrack entries as NAT views (`client → VIP:port ⇒
 * endpoint`, with the SNAT the endpoint sees), the Service each belongs to, and stale
 * entries — those still sending a Service's flow to an address that is no longer one of
 * its endpoints — in the warning colour. A summary line above (entries shown / total,
 * `nf_conntrack_count` / `nf_conntrack_max`, stale count, sort order); the selected
 * entry's verdict, NAT, counters and raw line below.
 *
 * Only the visible rows are turned into display rows, so a million entries cost what
 * twenty do. Timeouts count down between refreshes by `elapsedSeconds`.
 */
import { Box } from 'ink';
import { Text } from '../components/SafeText.js';
import React from 'react';
import { formatEndpoint } from '../../analysis/conntrack-nat.js';
import { conntrackRow, type ConntrackRowView, type ConntrackSortColumn, type ConntrackView } from '../../analysis/conntrack-view.js';
import { Diagnostics, diagnosticsHeight } from '../components/Diagnostics.js';
import { Table, windowStart, type TableRow } from '../components/Table.js';
import { t, tf, type Lang } from '../../text/i18n.js';
import { shownServiceLabel, type ShownService } from '../shown-service.js';
import { cellWidth, fitCell, layoutColumns, percentText, type ColumnSpec, wrapLines } from '../../text/cells.js';
import { theme, type ColorToken } from '../theme.js';

/**
 * Props of {@link ConntrackPane}. `data` from `conntrackView`; `elapsedSeconds` since
 * the table was read (`conntrackElapsedSeconds`, 0 in a replay); `cursor` indexes
 * `data.order`; `height`: lines available; `sessionError`: why loading failed, shown
 * instead of "loading…".
 */
export interface ConntrackPaneProps {
  readonly data: ConntrackView;
  readonly elapsedSeconds: number;
  readonly cursor: number;
  readonly width: number;
  readonly height: number;
  readonly focused: boolean;
  readonly lang: Lang;
  readonly sessionError?: string | null;
  /** The Service the app shows (pinned or under the Services cursor): the summary names it. */
  readonly shown?: ShownService | null;
}

/** Wide layouts (≥ 100 columns) add the status, Service and packet columns. */
const WIDE = 100;

/**
 * The columns at `width`. The narrow layout keeps the column the rows are sorted by, as k9s
 * keeps the sorted column, so the summary's `sort service↑` points at a column on screen:
 * sorted by Service (the default) it shows the Service in place of the state (the selected
 * entry's lines below still say it), so the NAT view keeps its client; sorted by packets or
 * bytes it adds the packets. A view `scoped` to one Service (`a`) names it in the summary:
 * every row's is that one, and the state keeps its column.
 */
function columns(lang: Lang, width: number, sort: ConntrackSortColumn, scoped: boolean): ColumnSpec[] {
  const service: ColumnSpec = { key: 'service', title: t(lang, 'col.service'), flex: 1, minWidth: 20, elide: 'middle' };
  const state: ColumnSpec = { key: 'state', title: t(lang, 'col.state'), width: 11 };
  const pkts: ColumnSpec = { key: 'pkts', title: t(lang, 'col.pkts'), width: 8, align: 'right' };
  if (width < WIDE) {
    const byService = sort === 'service' && !scoped;
    return [
      { key: 'mark', title: ' ', width: 1 },
      { key: 'proto', title: t(lang, 'col.proto'), width: 6 },
      ...(byService ? [] : [state]),
      { key: 'ttl', title: t(lang, 'col.ttl'), width: 6, align: 'right' },
      // At 80 columns: `default/web` whole, and `client:port → VIP:port ⇒ endpoint:port` (52 cells).
      ...(byService ? [{ ...service, minWidth: 11 }] : []),
      { key: 'nat', title: t(lang, 'col.nat'), flex: 6 },
      ...(sort === 'packets' || sort === 'bytes' ? [pkts] : []),
    ];
  }
  return [
    { key: 'status', title: t(lang, 'col.status'), width: 6 },
    { key: 'proto', title: t(lang, 'col.proto'), width: 6 },
    state,
    { key: 'ttl', title: t(lang, 'col.ttl'), width: 6, align: 'right' },
    service,
    { key: 'nat', title: t(lang, 'col.nat'), flex: 3, minWidth: 52 },
    pkts,
  ];
}

function ttl(r: ConntrackRowView): string {
  return r.timeoutLeft === null ? '-' : String(r.timeoutLeft);
}

function statusWord(r: ConntrackRowView, lang: Lang): string {
  return r.status === 'stale' ? t(lang, 'conntrack.status.stale') : r.status === 'ok' ? t(lang, 'conntrack.status.ok') : '-';
}

/** `client → VIP ⇒ endpoint` without the SNAT note. */
function natCore(r: ConntrackRowView): string {
  return `${formatEndpoint(r.nat.client)} → ${formatEndpoint(r.nat.destination)} ⇒ ${formatEndpoint(r.nat.answeredBy)}`;
}

/**
 * The NAT view as a cell of `width` cells: whole when it fits, else without the SNAT
 * note, then without the client's port, then without the client — the VIP and the
 * endpoint are what the reader follows, so they are the last to go.
 */
export function natCell(r: ConntrackRowView, width: number): string {
  const tail = `${formatEndpoint(r.nat.destination)} ⇒ ${formatEndpoint(r.nat.answeredBy)}`;
  const candidates = [r.nat.text, natCore(r), `${r.nat.client.ip} → ${tail}`, `… → ${tail}`];
  return candidates.find((c) => cellWidth(c) <= width) ?? tail;
}

/** The row's cells for `cols` (by column key). */
function cells(r: ConntrackRowView, natWidth: number, cols: readonly ColumnSpec[], lang: Lang): string[] {
  const proto = r.entry.proto === 'unknown' ? String(r.entry.protoNum) : r.entry.proto;
  const pkts = r.packets ? String(r.packets.orig + r.packets.reply) : '';
  const cell: Readonly<Record<string, () => string>> = {
    mark: () => (r.status === 'stale' ? '!' : ''),
    status: () => statusWord(r, lang),
    proto: () => proto,
    state: () => r.entry.state ?? '',
    ttl: () => ttl(r),
    service: () => r.service ?? '',
    nat: () => natCell(r, natWidth),
    pkts: () => pkts,
  };
  return cols.map((c) => cell[c.key]?.() ?? '');
}

function rowColor(r: ConntrackRowView): ColorToken | undefined {
  return r.status === 'stale' ? 'warn' : undefined;
}

/** The verdict on one entry, in words: why it is stale, or which Service answered it. */
export function conntrackVerdict(r: ConntrackRowView, lang: Lang): string {
  if (r.status === 'stale' && r.staleReason === 'endpoint-gone') {
    return tf(lang, 'conntrack.staleGone', { endpoint: formatEndpoint(r.pointsAt ?? r.nat.answeredBy), service: r.service ?? '' });
  }
  if (r.status === 'stale') return tf(lang, 'conntrack.staleUntranslated', { service: r.service ?? '' });
  if (r.status === 'ok' && r.via === 'endpoint') return tf(lang, 'conntrack.okEndpoint', { service: r.service ?? '', endpoint: formatEndpoint(r.nat.destination) });
  if (r.status === 'ok') return tf(lang, 'conntrack.ok', { service: r.service ?? '', via: r.via === 'nodePort' ? 'NodePort' : 'VIP' });
  return tf(lang, 'conntrack.noService', { destination: formatEndpoint(r.nat.destination) });
}

/**
 * `tcp TIME_WAIT · timeout 118s · [ASSURED] mark=0 zone=1 · packets 5/5 bytes 369/477
 * (original/reply) · line 12`, led by `SNAT as ip:port` when `withSnat` (the NAT line
 * had no room for it).
 */
function facts(r: ConntrackRowView, lang: Lang, withSnat: boolean): string {
  const e = r.entry;
  const parts = [`${e.proto}${e.state ? ` ${e.state}` : ''}`];
  if (withSnat && r.nat.snat) parts.unshift(`SNAT as ${formatEndpoint(r.nat.clientAsSeen)}`);
  if (r.timeoutLeft !== null) parts.push(tf(lang, 'conntrack.timeout', { seconds: r.timeoutLeft }));
  const fields = [...e.flags.map((f) => `[${f}]`), ...(e.mark !== undefined ? [`mark=${e.mark}`] : []), ...(e.zone !== undefined ? [`zone=${e.zone}`] : [])];
  if (fields.length) parts.push(fields.join(' '));
  if (r.packets && r.bytes) {
    parts.push(tf(lang, 'conntrack.counters', { po: String(r.packets.orig), pr: String(r.packets.reply), bo: String(r.bytes.orig), br: String(r.bytes.reply) }));
  }
  parts.push(tf(lang, 'conntrack.line', { line: e.line }));
  return parts.join(' · ');
}

/**
 * The summary line: scope first (the Service shown, pinned or under the Services cursor,
 * or all Services), entries shown / total, sort order, table usage, stale count (or that
 * stale flows are not checked: a Cilium node).
 */
export function conntrackSummaryLine(data: ConntrackView, lang: Lang, shown: ShownService | null = null): string {
  const s = data.summary;
  const parts: string[] = [];
  if (data.scope) {
    const label = shown?.service === data.scope.service ? shownServiceLabel(lang, shown) : data.scope.service;
    parts.push(tf(lang, 'conntrack.scope', { service: label }));
  } else if (shown) parts.push(tf(lang, 'conntrack.allServices', { service: shown.service }));
  // Cilium's CT map has no reply tuple: say where the rows come from when it is that table.
  if (data.source === 'cilium') parts.push(t(lang, 'conntrack.fromCilium'));
  parts.push(s.tableRead === false ? t(lang, 'conntrack.tableNotRead') : tf(lang, 'conntrack.entries', { shown: s.shown, total: s.total }));
  // The order early: at 80 columns the end of the line is cut (the narrow table keeps the sorted column).
  parts.push(tf(lang, 'conntrack.sort', { column: data.query.sort.column, dir: data.query.sort.descending ? '↓' : '↑' }));
  if (s.events) parts.push(tf(lang, 'conntrack.events', { events: s.events, flows: s.eventFlows ?? 0 }));
  if (s.count !== null && s.max !== null && s.percent !== null) parts.push(tf(lang, 'conntrack.usage', { count: s.count, max: s.max, pct: percentText(s.percent) }));
  if (!s.staleChecked) parts.push(t(lang, 'conntrack.staleNotChecked'));
  else parts.push(s.shown === s.total ? tf(lang, 'conntrack.stale', { count: s.stale }) : tf(lang, 'conntrack.staleShown', { count: s.stale, shown: s.staleShown }));
  return parts.join(' · ');
}

/** Renders the pane. */
export function ConntrackPane({ data, elapsedSeconds, cursor, width, height, focused, lang, sessionError, shown = null }: ConntrackPaneProps): React.JSX.Element {
  const a = data.availability;
  if (a.kind !== 'table') {
    const text =
      a.kind === 'loading'
        ? sessionError ? tf(lang, 'status.failed', { reason: sessionError }) : t(lang, 'status.loading')
        : a.reason ? tf(lang, 'status.failed', { reason: a.reason }) : tf(lang, 'status.notCaptured', { what: 'conntrack' });
    return (
      <Box flexDirection="column">
        <Text color={theme.muted}>{fitCell(text, width)}</Text>
        <Diagnostics diagnostics={data.diagnostics} width={width} lang={lang} />
      </Box>
    );
  }
  const notes: { text: string; color: ColorToken }[] = [];
  if (data.error) notes.push({ text: tf(lang, 'conntrack.partial', { reason: data.error }), color: 'error' });
  if (!data.index.servicesKnown) notes.push({ text: t(lang, 'conntrack.noApi'), color: 'muted' });
  else if (data.scope && !data.scope.found) notes.push({ text: tf(lang, 'conntrack.scopeMissing', { service: data.scope.service }), color: 'warn' });

  const rawLines = width >= 120 ? 2 : 3;
  const detailLines = 3 + rawLines;
  const bodyHeight = Math.max(1, height - 1 - notes.length - 1 - detailLines - diagnosticsHeight(data.diagnostics));
  const count = data.order.length;
  const at = Math.max(0, Math.min(cursor, count - 1));
  const start = windowStart(count, at, bodyHeight);
  const visible = [...data.order.subarray(start, start + bodyHeight)].map((i) => conntrackRow(data.index, i, elapsedSeconds));
  const cols = columns(lang, width, data.query.sort.column, data.scope !== null);
  const natWidth = layoutColumns(cols, width)[cols.findIndex((c) => c.key === 'nat')] ?? width;
  const rows: TableRow[] = visible.map((r) => {
    const color = rowColor(r);
    return { key: String(r.index), cells: cells(r, natWidth, cols, lang), ...(color ? { color } : {}), ...(r.status === 'no-service' ? { dim: true } : {}) };
  });
  const selected = visible[at - start];
  const empty = data.scope ? tf(lang, 'conntrack.noneFor', { service: data.scope.service }) : data.query.filter ? t(lang, 'conntrack.noneMatch') : t(lang, 'conntrack.none');

  return (
    <Box flexDirection="column">
      <Text bold>{fitCell(conntrackSummaryLine(data, lang, shown), width)}</Text>
      {notes.map((n, i) => (
        <Text key={i} color={theme[n.color]}>
          {fitCell(n.text, width)}
        </Text>
      ))}
      {count === 0 ? (
        <Box height={bodyHeight + 1}>
          <Text color={theme.muted}>{fitCell(empty, width)}</Text>
        </Box>
      ) : (
        <Box height={bodyHeight + 1} flexDirection="column">
          <Table columns={cols} rows={rows} cursor={at - start} width={width} height={bodyHeight} focused={focused} />
        </Box>
      )}
      {selected ? (
        <Box flexDirection="column">
          <Text color={selected.status === 'stale' ? theme.warn : selected.status === 'ok' ? theme.ok : theme.muted}>{fitCell(conntrackVerdict(selected, lang), width)}</Text>
          <Text color={theme.nat}>{fitCell(cellWidth(selected.nat.text) <= width ? selected.nat.text : natCore(selected), width)}</Text>
          <Text>{fitCell(facts(selected, lang, cellWidth(selected.nat.text) > width), width)}</Text>
          {wrapLines(selected.entry.raw, width, rawLines, true).map((l, i) => (
            <Text key={i}>{l}</Text>
          ))}
        </Box>
      ) : null}
      <Diagnostics diagnostics={data.diagnostics} width={width} lang={lang} />
    </Box>
  );
}
