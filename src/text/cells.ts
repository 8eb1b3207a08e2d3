/**
 * Terminal text measurement: cell widths (double-width CJK counted as 2 via
 * string-width), truncation with an ellipsis, padding and column layout. Pure.
 */
import stringWidth from 'string-width';
import { terminalSafe } from './terminal-safe.js';

/**
 * Printable ASCII and the narrow marks nodescope's own columns use (`·`, `—`, `→`, `…`),
 * nothing that could join them into a wider grapheme: one cell per character, what
 * string-width says too (test/unit/cell-width.test.ts).
 */
const ONE_CELL_EACH = /^[\x20-\x7e\u00b7\u2014\u2026\u2192]*$/;

/** Display width of `text` in terminal cells. */
export function cellWidth(text: string): number {
  // string-width segments graphemes even for plain ASCII: the common case skips it.
  return ONE_CELL_EACH.test(text) ? text.length : stringWidth(text);
}

/**
 * Cuts `text` to at most `width` cells (adding `…` when cut) and pads it to exactly
 * `width` cells, left or right aligned. Never splits a double-width character. The text is
 * made terminal-safe first (one line: controls and invisible characters as `\x1b`, `\n`,
 * `\u202e`, see src/text/terminal-safe.ts), so what is cut and padded is what is drawn.
 */
export function fitCell(text: string, width: number, align: 'left' | 'right' = 'left'): string {
  if (width <= 0) return '';
  let out = terminalSafe(text);
  if (cellWidth(out) > width) {
    let acc = '';
    let used = 0;
    for (const ch of out) {
      const w = cellWidth(ch);
      if (used + w > width - 1) break;
      acc += ch;
      used += w;
    }
    out = acc + '…';
  }
  const pad = ' '.repeat(Math.max(0, width - cellWidth(out)));
  return align === 'right' ? pad + out : out + pad;
}

/**
 * {@link fitCell}, cutting in the middle: `default/web-frontend…:8080` keeps both ends, so a
 * long name still shows the endpoint address or port at its end (as k9s elides long names).
 * The end gets three fifths, or more to keep its last word whole (an address with its port);
 * text that fits is only padded.
 */
export function fitCellMiddle(text: string, width: number, align: 'left' | 'right' = 'left'): string {
  if (width <= 0) return '';
  const safe = terminalSafe(text);
  if (cellWidth(safe) <= width || width < 5) return fitCell(safe, width, align);
  const chars = [...safe];
  const room = width - 1;
  // The last word (an address with its port) is kept whole when it leaves the head 3 cells.
  const lastWord = cellWidth(safe.slice(safe.lastIndexOf(' ') + 1));
  const headRoom = Math.min(Math.floor((room * 2) / 5), Math.max(3, room - lastWord));
  let head = '';
  let used = 0;
  for (const ch of chars) {
    const w = cellWidth(ch);
    if (used + w > headRoom) break;
    head += ch;
    used += w;
  }
  let tail = '';
  let tailUsed = 0;
  for (let i = chars.length - 1; i >= 0; i--) {
    const w = cellWidth(chars[i]!);
    if (used + tailUsed + w > room) break;
    tail = chars[i]! + tail;
    tailUsed += w;
  }
  return fitCell(`${head}…${tail}`, width, align);
}

/** A table column: a fixed `width` in cells, or a share of what remains (`flex`). */
export interface ColumnSpec {
  readonly key: string;
  readonly title: string;
  readonly width?: number;
  readonly flex?: number;
  readonly minWidth?: number;
  readonly align?: 'left' | 'right';
  /** Where a cell too long is cut: at its end (default) or in its middle ({@link fitCellMiddle}). */
  readonly elide?: 'end' | 'middle';
}

/**
 * Gives every column a width so that all columns plus one-space gaps fill
 * `total` cells. Fixed columns keep their width; flex columns share the rest
 * (at least `minWidth`, default 4). Columns that do not fit get width 0.
 */
export function layoutColumns(columns: readonly ColumnSpec[], total: number): number[] {
  const gaps = Math.max(0, columns.length - 1);
  const fixed = columns.reduce((s, c) => s + (c.width ?? 0), 0);
  const flexSum = columns.reduce((s, c) => s + (c.width === undefined ? (c.flex ?? 1) : 0), 0);
  let rest = Math.max(0, total - gaps - fixed);
  const widths = columns.map((c) => {
    if (c.width !== undefined) return c.width;
    return Math.max(c.minWidth ?? 4, Math.floor((rest * (c.flex ?? 1)) / (flexSum || 1)));
  });
  // Shrink from the last flex column if minimum widths overflowed.
  let over = widths.reduce((s, w) => s + w, 0) + gaps - total;
  for (let i = widths.length - 1; i >= 0 && over > 0; i--) {
    const cut = Math.min(over, widths[i]!);
    widths[i]! -= cut;
    over -= cut;
  }
  rest = total - gaps - widths.reduce((s, w) => s + w, 0);
  // Give rounding leftovers to the first flex column so rows span the full width.
  const firstFlex = columns.findIndex((c) => c.width === undefined);
  if (rest > 0 && firstFlex >= 0) widths[firstFlex]! += rest;
  return widths;
}

/** Formats an integer count (bigint or number) with thin grouping: 1234567 → `1.2M`. */
export function humanCount(n: bigint | number): string {
  const v = typeof n === 'bigint' ? Number(n) : n;
  if (v < 1000) return String(n);
  const units = ['K', 'M', 'G', 'T', 'P'];
  let x = v;
  let i = -1;
  while (x >= 1000 && i < units.length - 1) {
    x /= 1000;
    i++;
  }
  return `${x >= 100 ? x.toFixed(0) : x.toFixed(1)}${units[i]}`;
}

/** Formats a byte count: 1536 → `1.5KiB`. */
export function humanBytes(n: bigint | number): string {
  const v = typeof n === 'bigint' ? Number(n) : n;
  if (v < 1024) return `${v}B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let x = v;
  let i = -1;
  while (x >= 1024 && i < units.length - 1) {
    x /= 1024;
    i++;
  }
  return `${x >= 100 ? x.toFixed(0) : x.toFixed(1)}${units[i]}`;
}

/** Formats a rate in units per second: 0 → `0/s`, 2.5 → `2.5/s`, 12000 → `12K/s`. */
export function humanRate(perSecond: number): string {
  if (perSecond === 0) return '0/s';
  if (perSecond < 10) return `${perSecond.toFixed(1)}/s`;
  return `${humanCount(Math.round(perSecond))}/s`;
}

/** Formats an age in seconds: 5 → `5s`, 125 → `2m05s`, 7300 → `2h01m`. */
export function humanAge(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

export { percentText } from './percent.js';

/**
 * `text` cut into lines of `width` cells, at most `lines` (the last one ellipsised when
 * longer); `exact`: always `lines` lines, each filled to `width` (blank ones at the end).
 */
export function wrapLines(text: string, width: number, lines: number, exact = false): string[] {
  const out: string[] = [];
  let rest = text;
  while (out.length < lines - 1 && (exact || (rest && rest.length > width))) {
    out.push(exact ? fitCell(rest.slice(0, width), width) : rest.slice(0, width));
    rest = rest.slice(width);
  }
  out.push(fitCell(rest, width));
  return out;
}
