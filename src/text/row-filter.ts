/**
 * The `/` filter's language, as k9s has it: the text is a regular expression matched
 * case-insensitively anywhere in what a row shows; a leading `!` keeps the rows that do
 * NOT match. Text that is not a valid expression (`10.96.0.1[`) is matched literally, so a
 * typo filters rather than failing. Plain text (no expression characters, no `!`) stays a
 * substring test, which the panes' fast paths (refining a growing filter) rely on.
 */

/** Characters that make a filter a regular expression rather than plain text. */
const REGEX_CHARS = /[.*+?^${}()|[\]\\]/;

/** Whether `filter` is plain text (no leading `!`, no expression characters other than `.`): a substring test suffices. */
export function isPlainFilter(filter: string): boolean {
  // `.` alone is kept plain: IP addresses are the most typed filter and mean their dots.
  return !filter.startsWith('!') && !REGEX_CHARS.test(filter.replace(/\./g, ''));
}

/** A compiled filter: the test of one row's text, and whether it inverts. */
export interface RowMatcher {
  readonly test: (text: string) => boolean;
  readonly inverse: boolean;
  /** The expression as compiled (`null` for a plain substring test). */
  readonly regex: RegExp | null;
}

/** Compiles `filter` (see the module note); the empty filter (or a lone `!`) keeps every row. */
export function rowMatcher(filter: string): RowMatcher {
  const inverse = filter.startsWith('!');
  const body = inverse ? filter.slice(1) : filter;
  if (body === '') return { test: () => true, inverse: false, regex: null };
  let regex: RegExp | null = null;
  if (!isPlainFilter(body)) {
    try {
      regex = new RegExp(body, 'i');
    } catch {
      regex = null;
    }
  }
  const needle = body.toLowerCase();
  const hit = regex ? (text: string) => regex.test(text) : (text: string) => text.toLowerCase().includes(needle);
  return { test: inverse ? (text) => !hit(text) : hit, inverse, regex };
}
