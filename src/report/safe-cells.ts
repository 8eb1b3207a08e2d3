/**
 * Table cells for cli-table3 made terminal-safe before the table measures them: cli-table3
 * takes ESC sequences in a cell for colour (zero width, re-emitted), so a node's or the API's
 * string must be escaped first (src/text/terminal-safe.ts, `line` mode), or the table would
 * both misalign and pass the sequence on.
 */
import { terminalSafe } from '../text/terminal-safe.js';

/** One cell: a single line, or the lines of a multi-line cell (each escaped, then joined with `\n`). */
export type TextCell = string | readonly string[];

/** The row's cells as cli-table3 strings, every line escaped (a `\n` inside a value shows as `\n`). */
export function safeCells(row: readonly TextCell[]): string[] {
  return row.map((cell) => (typeof cell === 'string' ? terminalSafe(cell) : cell.map((line) => terminalSafe(line)).join('\n')));
}
