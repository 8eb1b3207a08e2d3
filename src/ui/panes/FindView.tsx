/**
 * The cross-pane find view (`:find TEXT`, src/ui/find-view.ts): one row per hit — the pane it
 * is in, where (chain and rule number, set element, LB frontend or backend, flow, Service),
 * and its text — the cursor's hit opened by Enter. It covers the pane while open; Esc closes it.
 */
import { Box } from 'ink';
import { Text } from '../components/SafeText.js';
import React from 'react';
import { Table, type TableRow } from '../components/Table.js';
import { FIND_LIMIT, type FindResult } from '../find-view.js';
import { paneEntry, type PaneEntry } from '../pane-registry.js';
import { t, tf, type Lang } from '../../text/i18n.js';
import { cellWidth, fitCell, type ColumnSpec } from '../../text/cells.js';
import { theme } from '../theme.js';

/** Props of {@link FindView}: the hits, the cursor (a hit's index), the size. */
export interface FindViewProps {
  readonly result: FindResult;
  readonly cursor: number;
  readonly width: number;
  readonly height: number;
  readonly lang: Lang;
}

/** Widest pane name the PANE column holds; a longer one (`コネクション追跡`) is its short title (`追跡`), as in the tabs. */
const PANE_CELLS = 10;

/** A hit's pane name: its tab title, or its short title when that is wider than {@link PANE_CELLS}. */
function paneName(pane: FindResult['hits'][number]['pane'], lang: Lang): string {
  const entry: PaneEntry = paneEntry(pane);
  const title = t(lang, entry.title);
  return cellWidth(title) > PANE_CELLS && entry.short ? t(lang, entry.short) : title;
}

/**
 * The columns: PANE as wide as the longest pane name among the hits, WHERE as wide as its longest entry (an address with its port is the
 * point of a hit), TEXT the rest — at least 12 cells; the selected hit's text is whole below.
 */
function columns(lang: Lang, width: number, hits: FindResult['hits']): ColumnSpec[] {
  const titles = [t(lang, 'col.find.pane'), ...hits.map((h) => paneName(h.pane, lang))];
  const pane = Math.min(Math.max(...titles.map(cellWidth)), PANE_CELLS);
  const longest = Math.max(cellWidth(t(lang, 'col.find.where')), ...hits.map((h) => cellWidth(h.where)));
  const where = Math.max(16, Math.min(longest, width - pane - 2 - 12));
  return [
    { key: 'pane', title: t(lang, 'col.find.pane'), width: pane },
    { key: 'where', title: t(lang, 'col.find.where'), width: where, elide: 'middle' },
    { key: 'text', title: t(lang, 'col.find.text'), flex: 1, minWidth: 12 },
  ];
}

/** Renders the view. */
export function FindView({ result, cursor, width, height, lang }: FindViewProps): React.JSX.Element {
  const { hits, query } = result;
  const title = hits.length === 0 ? tf(lang, 'find.none', { query }) : tf(lang, 'find.title', { query, count: hits.length });
  const rows: TableRow[] = hits.map((h, i) => ({ key: String(i), cells: [paneName(h.pane, lang), h.where, h.text] }));
  const at = Math.max(0, Math.min(cursor, hits.length - 1));
  const selected = hits[at];
  const detail = selected ? [selected.where, selected.text] : [];
  const tableHeight = Math.max(1, height - 2 - detail.length - (result.capped ? 1 : 0));
  return (
    <Box flexDirection="column">
      <Text bold>{fitCell(title, width)}</Text>
      {result.capped ? <Text color={theme.warn}>{fitCell(tf(lang, 'find.more', { limit: FIND_LIMIT }), width)}</Text> : null}
      {hits.length > 0 ? <Table columns={columns(lang, width, hits)} rows={rows} cursor={at} width={width} height={tableHeight} focused /> : null}
      {detail.map((d, i) => (
        <Text key={i} color={i === 0 ? theme.accent : undefined}>
          {fitCell(d, width)}
        </Text>
      ))}
    </Box>
  );
}
