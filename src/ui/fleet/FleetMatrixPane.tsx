/**
 * The fleet matrix (`nodescope --fleet DIR`): a header with the node counts, under the node
 * names each node's proxy freshness (kube-proxy's last sync, Cilium's pending frontends), one row per
 * Service with a non-ok node (rows at a node's fault first), one column per node (nodes at
 * fault first, failed ones last, as many as fit around the cursor), each cell the verdict;
 * under it, the cursor cell's findings and backend differences. Props only.
 */
import { Box } from 'ink';
import React from 'react';
import { findingMessage } from '../../analysis/diagnose/say.js';
import { freshnessBrief } from '../../analysis/proxy-freshness.js';
import type { FleetDiagnosis, FleetServiceRow } from '../../fleet/diagnose.js';
import { cellWidth, fitCell, humanAge } from '../../text/cells.js';
import { wrapCellsAtMost } from '../../tour/wrap.js';
import { t, tf, type Lang, type MessageKey } from '../../text/i18n.js';
import { whyText } from '../../text/why.js';
import { Text } from '../components/SafeText.js';
import { theme } from '../theme.js';
import { matrixColumns, serviceColumnWidth, visibleColumns, type MatrixColumn } from './fleet-matrix.js';

/** Props of {@link FleetMatrixPane}; `cursor` is the row (Service) and column (node) selected. */
export interface FleetMatrixProps {
  readonly data: FleetDiagnosis;
  readonly dir: string;
  readonly cursor: { readonly row: number; readonly col: number };
  readonly width: number;
  readonly height: number;
  readonly lang: Lang;
  /** A line under the matrix (`opening lab-node2…`, a failure to open), else null. */
  readonly notice: string | null;
}

const VERDICT_COLOR: Readonly<Record<string, string>> = { ok: theme.ok, degraded: theme.warn, broken: theme.error, unknown: theme.muted, failed: theme.muted };

function verdictWord(lang: Lang, v: string): string {
  return t(lang, `fleet.verdict.${v}` as MessageKey);
}

/** The cursor cell's explanation: its findings, its backend difference, or why the node failed. */
export function cellDetail(data: FleetDiagnosis, row: FleetServiceRow | undefined, col: MatrixColumn | undefined, lang: Lang): string[] {
  if (!row || !col) return [];
  if (col.failed) {
    const n = data.nodes.find((x) => x.name === col.node);
    return [tf(lang, 'fleet.nodeFailed', { node: col.node, reason: whyText(lang, n?.reason ?? '') })];
  }
  const cell = row.nodes[col.node];
  const verdict = cell?.verdict ?? 'ok';
  const out = [tf(lang, 'fleet.cellDetail', { node: col.node, service: `${row.namespace}/${row.name}`, verdict: verdictWord(lang, verdict) })];
  for (const f of cell?.findings ?? []) out.push(`  ${findingMessage(f, lang)}`);
  const d = row.divergent.find((x) => x.node === col.node);
  if (d) {
    const against = [d.differsFromApi ? t(lang, 'fleet.against.api') : null, d.differsFromMajority ? t(lang, 'fleet.against.majority') : null].filter(Boolean).join(' / ');
    const detail = [d.stale.length ? `+${d.stale.join(' +')}` : null, d.missing.length ? `-${d.missing.join(' -')}` : null].filter(Boolean).join(' ');
    out.push(`  ${tf(lang, 'fleet.divergent', { against, detail })}`);
  }
  return out;
}

/**
 * A node's freshness in a matrix column's few cells (src/analysis/proxy-freshness.ts
 * `freshnessBrief`: the worst fact first); empty for a failed node.
 */
export function freshnessWord(data: FleetDiagnosis, col: MatrixColumn, lang: Lang): string {
  if (col.failed) return '';
  const b = freshnessBrief(data.nodes.find((n) => n.name === col.node)?.freshness);
  switch (b.kind) {
    case 'synced':
      return b.seconds === null ? t(lang, 'fleet.fresh.syncedNoAge') : tf(lang, 'fleet.fresh.synced', { age: humanAge(b.seconds) });
    case 'pending':
      return tf(lang, 'fleet.fresh.pending', { age: humanAge(b.seconds) });
    case 'errors':
      return tf(lang, 'fleet.fresh.errors', { n: b.count });
    case 'failing':
      return tf(lang, 'fleet.fresh.failing', { n: b.count });
    case 'watch':
      return tf(lang, 'fleet.fresh.watch', { state: b.state });
    case 'unknown':
      return t(lang, 'fleet.fresh.unknown');
  }
}

/** The header line: the fleet, the counts, when it was captured. */
export function countsLine(data: FleetDiagnosis, lang: Lang): string {
  const c = data.counts;
  return tf(lang, 'fleet.counts', { nodes: data.nodes.length, ok: c.ok, degraded: c.degraded, broken: c.broken, failed: c.failed }) + (c.unknown ? tf(lang, 'fleet.unknownCount', { unknown: c.unknown }) : '');
}

/** The matrix pane. */
export function FleetMatrixPane({ data, dir, cursor, width, height, lang, notice }: FleetMatrixProps): React.JSX.Element {
  // A column is as wide as its node's name or its freshness word, whichever is wider (16 at most).
  const columns = matrixColumns(data).map((c) => ({ ...c, width: Math.min(16, Math.max(c.width, cellWidth(freshnessWord(data, c, lang)))) }));
  const rows = data.services;
  const svcW = serviceColumnWidth(rows, width);
  const moreW = 14;
  const { first, count } = visibleColumns(columns, cursor.col, Math.max(10, width - svcW - 2 - moreW));
  const shown = columns.slice(first, first + count);
  const hidden = columns.length - first - count;
  const detail = cellDetail(data, rows[cursor.row], columns[cursor.col], lang).flatMap((l) => wrapCellsAtMost(l, width, 3));
  const bodyRows = Math.max(1, height - 7 - Math.min(detail.length, 6));
  const top = Math.max(0, Math.min(cursor.row - bodyRows + 1, rows.length - bodyRows));
  return (
    <Box flexDirection="column" width={width}>
      <Text color={theme.header}>{fitCell(`${tf(lang, 'fleet.title', { dir })} · ${tf(lang, 'fleet.captured', { at: data.capturedAt })}`, width)}</Text>
      <Text>{fitCell(countsLine(data, lang), width)}</Text>
      {rows.length === 0 ? (
        <Text color={theme.ok}>{t(lang, 'fleet.allOk')}</Text>
      ) : (
        <Box flexDirection="column">
          <Text color={theme.muted}>
            {fitCell(t(lang, 'fleet.colService'), svcW)}
            {shown.map((c) => `  ${fitCell(c.node, c.width)}`).join('')}
            {hidden > 0 ? `  ${tf(lang, 'fleet.more', { n: hidden })}` : ''}
          </Text>
          <Text color={theme.muted}>
            {fitCell(t(lang, 'fleet.fresh.label'), svcW)}
            {shown.map((c) => `  ${fitCell(freshnessWord(data, c, lang), c.width)}`).join('')}
          </Text>
          {rows.slice(top, top + bodyRows).map((r, i) => {
            const at = top + i;
            const name = `${r.namespace}/${r.name}`;
            return (
              <Text key={name}>
                <Text color={at === cursor.row ? theme.selected : undefined} dimColor={r.scope === 'api'}>{fitCell(name, svcW)}</Text>
                {shown.map((c, j) => {
                  const v = c.failed ? 'failed' : (r.nodes[c.node]?.verdict ?? 'ok');
                  const here = at === cursor.row && first + j === cursor.col;
                  return (
                    <Text key={c.node} color={VERDICT_COLOR[v]} inverse={here} dimColor={r.scope === 'api' && !here}>
                      {`  ${fitCell(verdictWord(lang, v), c.width)}`}
                    </Text>
                  );
                })}
              </Text>
            );
          })}
          {rows.some((r) => r.scope === 'api') ? <Text color={theme.muted}>{t(lang, 'fleet.apiScope')}</Text> : null}
        </Box>
      )}
      {detail.slice(0, 6).map((l, i) => (
        <Text key={i}>{fitCell(l, width)}</Text>
      ))}
      {notice ? <Text color={theme.warn}>{fitCell(notice, width)}</Text> : null}
      <Text color={theme.muted}>{fitCell(t(lang, 'fleet.footer'), width)}</Text>
    </Box>
  );
}
