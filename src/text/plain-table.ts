/**
 * Plain text tables as kubectl's printer prints them (k8s.io/cli-runtime printers, tabwriter
 * with padding 3): an upper-case header row, columns aligned with spaces by display width, no
 * box-drawing characters, so `awk`, `cut` and `column -t` read the output. A cell holding
 * several values prints them comma-separated, as kubectl does for PORT(S) and ENDPOINTS.
 */
import { cellWidth } from './cells.js';
import { terminalSafe } from './terminal-safe.js';

/** One cell: a value, or several values printed comma-separated; an empty cell prints `<none>`. */
export type PlainCell = string | readonly string[];

/** The table as text, one line per row, each ending in a newline; every cell made terminal-safe first. */
export function plainTable(head: readonly string[], rows: readonly (readonly PlainCell[])[]): string {
  const text = (c: PlainCell | undefined) => {
    const s = typeof c === 'string' ? terminalSafe(c) : (c ?? []).map((v) => terminalSafe(v)).join(',');
    return s === '' ? '<none>' : s;
  };
  const lines = [head.map((h) => terminalSafe(h)), ...rows.map((r) => head.map((_, i) => text(r[i])))];
  // Each cell measured once (a column's width and the cell's padding read the same width).
  const cells = lines.map((l) => l.map(cellWidth));
  const widths = head.map(() => 0);
  for (const l of cells) for (let i = 0; i < l.length; i++) if (l[i]! > widths[i]!) widths[i] = l[i]!;
  return lines.map((l, r) => l.map((c, i) => (i === l.length - 1 ? c : c + pad(widths[i]! - cells[r]![i]! + 3))).join('').trimEnd() + '\n').join('');
}

/** `n` spaces; the few widths a table pads with are made once each. */
const pads: string[] = [];
function pad(n: number): string {
  return (pads[n] ??= ' '.repeat(n));
}
