/**
 * The fleet matrix's layout: which node is each column (nodes at fault first, then the
 * other captured nodes, then the failed ones), how wide the columns are, and which of them
 * fit the width around the cursor. Pure; the pane (FleetMatrixPane.tsx) draws it.
 */
import type { FleetDiagnosis, FleetServiceRow } from '../../fleet/diagnose.js';
import { cellWidth } from '../../text/cells.js';

/** One column: a node, and whether it failed to be captured. */
export interface MatrixColumn {
  readonly node: string;
  readonly failed: boolean;
  readonly width: number;
}

/** Columns in display order (see the module comment). */
export function matrixColumns(d: FleetDiagnosis): MatrixColumn[] {
  const atFault = new Set(d.services.flatMap((s) => [...Object.entries(s.nodes).filter(([, c]) => c.ownFault).map(([n]) => n), ...s.divergent.map((x) => x.node)]));
  const width = (n: string) => Math.max(8, Math.min(16, cellWidth(n)));
  const captured = d.nodes.filter((n) => n.status !== 'failed');
  const first = captured.filter((n) => atFault.has(n.name));
  const rest = captured.filter((n) => !atFault.has(n.name));
  const failed = d.nodes.filter((n) => n.status === 'failed');
  return [...first, ...rest].map((n) => ({ node: n.name, failed: false, width: width(n.name) })).concat(failed.map((n) => ({ node: n.name, failed: true, width: width(n.name) })));
}

/** The width of the SERVICE column for `rows` (8 to 40, or a third of the screen). */
export function serviceColumnWidth(rows: readonly FleetServiceRow[], total: number): number {
  const longest = Math.max(8, ...rows.map((r) => cellWidth(`${r.namespace}/${r.name}`)));
  return Math.min(longest, 40, Math.max(12, Math.floor(total / 3)));
}

/**
 * The first column shown so that column `cursor` is visible with as many columns as fit in
 * `room` characters (two spaces between columns); `count` the columns that then fit.
 */
export function visibleColumns(columns: readonly MatrixColumn[], cursor: number, room: number): { first: number; count: number } {
  const fits = (from: number) => {
    let used = 0;
    let n = 0;
    for (let i = from; i < columns.length; i++) {
      const w = columns[i]!.width + 2;
      if (used + w > room) break;
      used += w;
      n++;
    }
    return Math.max(1, n);
  };
  let first = 0;
  while (first < cursor && first + fits(first) <= cursor) first++;
  return { first, count: Math.min(fits(first), columns.length - first) };
}
