/**
 * Flat copies of substrings. V8 makes a substring of 13 or more characters a view into
 * its parent string, so one kept word or line would keep a whole capture (up to hundreds
 * of MB) alive; `join` always allocates a new flat string, and shorter substrings are
 * copies already.
 */

/** `s[from, to)` as a flat string of its own: no view into, nor tree over, `s`. */
export function flatSlice(s: string, from: number, to: number): string {
  if (to - from < 13) return s.slice(from, to);
  const mid = (from + to) >> 1;
  return [s.slice(from, mid), s.slice(mid, to)].join('');
}

/** `s` as a flat string of its own (see {@link flatSlice}). */
export function flatCopy(s: string): string {
  return flatSlice(s, 0, s.length);
}
