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
import { paneEntry } from '../pane-registry.js';
import { t, tf, type Lang } from '../../text/i18n.js';
import { fitCell, type ColumnSpec } from '../../text/cells.js';
import { theme } from '../theme.js';

/** Props of {@link FindView}: the hits, the cursor (a hit's index), the size. */
export interface FindViewProps {
  readonly result: FindResult;
  readonly cursor: number;
  readonly width: number;
  readonly height: number;
  readonly lang: Lang;
}

function columns(lang: Lang, width: number): ColumnSpec[] {
  return [
    { key: 'pane', title: t(lang, 'col.find.pane'), width: width >= 100 ? 11 : 9 },
    { key: 'where', title: t(lang, 'col.find.where'), flex: 2, minWidth: 16, elide: 'middle' },
    { key: 'text', title: t(lang, 'col.find.text'), flex: 3, minWidth: 12 },
  ];
}

/** Renders the view. */
export function FindView({ result, cursor, width, height, lang }: FindViewProps): React.JSX.Element {
  const { hits, query } = result;
  const title = hits.length === 0 ? tf(lang, 'find.none', { query }) : tf(lang, 'find.title', { query, count: hits.length });
  const rows: TableRow[] = hits.map((h, i) => ({ key: String(i), cells: [t(lang, paneEntry(h.pane).title), h.where, h.text] }));
  const at = Math.max(0, Math.min(cursor, hits.length - 1));
  const selected = hits[at];
  const detail = selected ? [selected.where, selected.text] : [];
  const tableHeight = Math.max(1, height - 2 - detail.length - (result.capped ? 1 : 0));
  return (
    <Box flexDirection="column">
      <Text bold>{fitCell(title, width)}</Text>
      {result.capped ? <Text color={theme.warn}>{fitCell(tf(lang, 'find.more', { limit: FIND_LIMIT }), width)}</Text> : null}
      {hits.length > 0 ? <Table columns={columns(lang, width)} rows={rows} cursor={at} width={width} height={tableHeight} focused /> : null}
      {detail.map((d, i) => (
        <Text key={i} color={i === 0 ? theme.accent : undefined}>
          {fitCell(d, width)}
        </Text>
      ))}
    </Box>
  );
}
