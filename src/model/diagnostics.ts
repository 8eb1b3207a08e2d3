/**
 * Diagnostics: what a parser says about input it could not fully understand.
 *
 * Every parser in `src/parsers/` is a pure function `(text, origin) → ParseResult<T>`.
 * A line it cannot understand becomes a {@link Diagnostic} carrying the 1-based line
 * number and the line itself; everything else that parses is kept in `value`.
 */
import { flatCopy, flatSlice } from '../flat-string.js';

/** How bad a diagnostic is. `error`: input lost; `warning`: kept but not modelled; `info`: noted. */
export type Severity = 'error' | 'warning' | 'info';

/**
 * One finding about one line of input.
 *
 * - `origin`: where the text came from (probe id, file path, `"stdin"`).
 * - `line`: 1-based line number in that text; 0 when the finding is about the whole text.
 * - `text`: the offending line exactly as read (truncated to 200 characters).
 * - `code`: a stable machine-readable kind, e.g. `'unknown-option'`, `'truncated'`.
 */
export interface Diagnostic {
  readonly severity: Severity;
  readonly origin: string;
  readonly line: number;
  readonly text: string;
  readonly message: string;
  readonly code: string;
}

/** The result of every parser: the model of what parsed, and what did not. */
export interface ParseResult<T> {
  readonly value: T;
  readonly diagnostics: readonly Diagnostic[];
}

/** Characters of the offending line a diagnostic keeps (more are cut, with `…`). */
export const EXCERPT_MAX = 200;

/**
 * Builds a {@link Diagnostic}, cutting `text` to 200 characters so a binary or
 * megabyte-long line cannot flood a pane, and copying it flat: the line is often a
 * view into the whole capture, which one kept diagnostic would otherwise keep alive.
 */
export function diagnostic(
  severity: Severity,
  origin: string,
  line: number,
  text: string,
  code: string,
  message: string,
): Diagnostic {
  const excerpt = text.length > EXCERPT_MAX ? `${flatSlice(text, 0, EXCERPT_MAX)}…` : flatCopy(text);
  return { severity, origin, line, text: excerpt, code, message };
}

/** Formats a diagnostic the way compilers do: `origin:line: severity: message: text`. */
export function formatDiagnostic(d: Diagnostic): string {
  const where = d.line > 0 ? `${d.origin}:${d.line}` : d.origin;
  return `${where}: ${d.severity}: ${d.message}${d.text ? `: ${d.text}` : ''}`;
}
