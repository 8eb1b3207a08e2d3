/**
 * The `?` overlay listing every key, generated from the key bindings (src/ui/key-bindings.ts),
 * then the capture note and the probes. It is as tall as the terminal leaves it and scrolls
 * (the move keys of the key bindings) with a `lines x–y of z` hint, as k9s' help does.
 */
import { Box } from 'ink';
import { Text } from './SafeText.js';
import React from 'react';
import { t, tf, type Lang } from '../../text/i18n.js';
import { cellWidth, fitCell } from '../../text/cells.js';
import { wrapCells } from '../../tour/wrap.js';
import { helpRows, scrollKeyLabels } from '../key-bindings.js';
import { theme, type ColorToken } from '../theme.js';

/** One probe under `?`: its wall and node CPU time (ms; CPU unknown over SSH), or why the probe plan skipped it. */
export interface HelpProbeRow {
  readonly id: string;
  readonly status: string;
  readonly durationMs: number;
  readonly cpuMs?: number;
  readonly skipped?: string;
}

/** Milliseconds rounded, for the probe rows. */
const ms = (n: number): string => String(Math.round(n));

const PROBE_STATUS = { ok: 'help.status.ok', failed: 'help.status.failed', missing: 'help.status.missing', timeout: 'help.status.timeout' } as const;

/** A probe's status (src/sources/probe-runner.ts `ProbeStatus`) in `lang`; an unknown word as it is. */
function probeStatus(lang: Lang, status: string): string {
  return status in PROBE_STATUS ? t(lang, PROBE_STATUS[status as keyof typeof PROBE_STATUS]) : status;
}

/** The probe rows of `?` from a snapshot's probe summaries and skipped probes (heavy ones first are not reordered: catalog order). */
export function helpProbeRows(probes: readonly { id: string; status: string; durationMs: number; cpuMs?: number }[], skipped: readonly { id: string; reason: string }[] = []): HelpProbeRow[] {
  return [...probes.map((p) => ({ id: p.id, status: p.status, durationMs: p.durationMs, ...(p.cpuMs !== undefined ? { cpuMs: p.cpuMs } : {}) })), ...skipped.map((s) => ({ id: s.id, status: 'skipped', durationMs: 0, skipped: s.reason }))];
}

/**
 * What the help box shows: `apiError` (`SessionState.apiError`: why the API objects shown
 * are not the source's latest, which the header only names in short), the replay's `note`
 * (its provenance) and the `probes` (each probe's wall and node CPU time, and the ones the
 * probe plan skipped with why).
 */
export interface HelpContent {
  readonly lang: Lang;
  readonly apiError?: string | null;
  readonly probes?: readonly HelpProbeRow[];
  readonly note?: string;
}

/** One line of the box, already cut to its inner width: a key column (accent colour) and its text. */
export interface HelpLine {
  readonly key: string;
  readonly text: string;
  readonly color?: ColorToken;
  readonly bold?: boolean;
}

/** The key column of the key rows and of the probe rows, in cells. */
const KEY_CELLS = 12;
const PROBE_CELLS = 22;
/** The box's border (one cell each side) and its padding (one cell each side). */
const FRAME_CELLS = 4;
/** The border's top and bottom rows and the hint row. */
const FRAME_ROWS = 3;

/**
 * `text` wrapped to `width` cells after a key column of `keyCells` (the key padded to it, or
 * followed by one blank when longer): every wrapped line keeps the text's indent under the
 * first, so a long description or reason stays in its column.
 */
function keyed(key: string, text: string, width: number, keyCells: number, more: Omit<HelpLine, 'key' | 'text'> = {}): HelpLine[] {
  const keyText = cellWidth(key) < keyCells ? fitCell(key, keyCells) : `${key} `;
  const room = Math.max(8, width - cellWidth(keyText));
  const lines = cellWidth(text) <= room ? [text] : wrapCells(text, room);
  return lines.map((line, i) => ({ key: i === 0 ? keyText : ' '.repeat(cellWidth(keyText)), text: line, ...more }));
}

/** A paragraph without a key column, wrapped to `width`, its wrapped lines indented by two cells. */
function paragraph(text: string, width: number, more: Omit<HelpLine, 'key' | 'text'> = {}): HelpLine[] {
  const lines = cellWidth(text) <= width ? [text] : wrapCells(text, width - 2);
  return lines.map((line, i) => ({ key: i === 0 ? '' : '  ', text: line, ...more }));
}

/**
 * Every line of the help for a box `width` cells wide inside: the title, the API warning,
 * one row per key binding, the capture note, then the probes. Wrapped lines keep their
 * column (a key's description stays right of the key column).
 */
export function helpLines(content: HelpContent, width: number): HelpLine[] {
  const { lang, apiError, probes, note } = content;
  const lines: HelpLine[] = [{ key: '', text: t(lang, 'help.title'), bold: true }];
  if (apiError) lines.push(...paragraph(tf(lang, 'help.apiError', { reason: apiError }), width, { color: 'warn' }));
  for (const [keys, msg] of helpRows()) lines.push(...keyed(keys, t(lang, msg), width, KEY_CELLS));
  // A replay's provenance: a re-captured replay says it is a copy, and of what.
  if (note) lines.push(...paragraph(tf(lang, 'help.note', { note }), width, { color: 'info' }));
  if (probes?.length) lines.push({ key: '', text: t(lang, 'help.probes'), bold: true });
  for (const p of probes ?? []) {
    const text = p.skipped === undefined ? `${ms(p.durationMs)} / ${p.cpuMs === undefined ? '?' : ms(p.cpuMs)}  ${probeStatus(lang, p.status)}` : tf(lang, 'help.skipped', { reason: p.skipped });
    lines.push(...keyed(p.id, text, width, PROBE_CELLS));
  }
  return lines;
}

/**
 * The scroll of a help of `lineCount` lines in a box `height` rows tall (border and hint
 * row included): how many lines show at once (`rows`, at least 1) and the largest first
 * line (`maxTop`, 0 when all fit).
 */
export function helpWindow(lineCount: number, height: number): { readonly rows: number; readonly maxTop: number } {
  const rows = Math.max(1, height - FRAME_ROWS);
  return { rows, maxTop: Math.max(0, lineCount - rows) };
}

/** The help's lines and scroll for a terminal area `width` × `height` cells (what App sizes the box to and scrolls by). */
export function helpLayout(content: HelpContent, width: number, height: number): { readonly lines: HelpLine[]; readonly rows: number; readonly maxTop: number } {
  const lines = helpLines(content, Math.max(10, width - FRAME_CELLS));
  return { lines, ...helpWindow(lines.length, height) };
}

/** Props of {@link Help}: its content, the area it may fill, and its first line shown (clamped to the scroll). */
export interface HelpProps extends HelpContent {
  readonly width: number;
  readonly height: number;
  readonly top?: number;
}

/**
 * Renders the help box: as tall as its lines or `height`, whichever is less, showing the
 * lines from `top`; the last row says which lines show, how to scroll (the key bindings'
 * move keys) and how to close, or only how to close when everything fits.
 */
export function Help({ width, height, top = 0, ...content }: HelpProps): React.JSX.Element {
  const inner = Math.max(10, width - FRAME_CELLS);
  const { lines, rows, maxTop } = helpLayout(content, width, height);
  const first = Math.max(0, Math.min(top, maxTop));
  const shown = lines.slice(first, first + rows);
  const lang = content.lang;
  const hint =
    maxTop === 0
      ? t(lang, 'help.close')
      : tf(lang, 'help.scroll', { from: first + 1, to: first + shown.length, total: lines.length, keys: scrollKeyLabels().join('  ') });
  return (
    <Box flexDirection="column" borderStyle="round" borderColor={theme.accent} paddingX={1} width={width} flexShrink={0}>
      {shown.map((line, i) => (
        <Text key={first + i} bold={line.bold ?? false} {...(line.color ? { color: theme[line.color] } : {})}>
          <Text color={theme.accent}>{line.key}</Text>
          {fitCell(line.text, inner - cellWidth(line.key)).trimEnd()}
        </Text>
      ))}
      <Text color={theme.muted}>{fitCell(hint, inner)}</Text>
    </Box>
  );
}
