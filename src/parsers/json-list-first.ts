/**
 * The first item of a JSON `List` whose `kind` is a string, found by one pass over the List's
 * bytes: what `scanJsonList(text, [['kind']])` (src/parsers/json-list.ts) and then the first of
 * its items whose `kind` value is a JSON string give, without the per-item records, the watched
 * paths' bookkeeping or a string per key. The `--api-file` check (src/sources/api-file.ts) needs
 * only that item and that the whole text is such a List; on a 46 MB List of 20,000 objects
 * that scan was most of the check.
 *
 * The grammar checked is JSON's (RFC 8259, as `JSON.parse` accepts it, and as scanJsonList
 * checks it): blanks are space, tab, CR, LF; strings hold no raw control character and only
 * the escapes `\" \\ \/ \b \f \n \r \t \uXXXX`; numbers `-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?`.
 * The answer is null — the caller then runs scanJsonList itself — on anything this pass does
 * not decide the way scanJsonList would: a byte outside ASCII (byte offsets would not be the
 * text's character offsets), a text that is not one valid JSON object, an `items` key twice or
 * whose value is not an array, a non-object in `items`, a key with an escape at the top level
 * or an item's own level, a nesting deeper than {@link MAX_DEPTH}, no item whose `kind` is a
 * string. Pure; never throws.
 */

/** Where the List's items array is and its first item whose `kind` is a string (byte offsets; equal to the text's for ASCII). */
export interface FirstKindItem {
  /** Index of the items array's `[`. */
  readonly open: number;
  /** Index of the items array's `]`. */
  readonly close: number;
  /** The item's `{`. */
  readonly start: number;
  /** Just after the item's `}`. */
  readonly end: number;
}

/** Deeper nesting answers null (the caller's scan reads it). */
export const MAX_DEPTH = 256;

const QUOTE = 34;
const BACKSLASH = 92;
const LBRACE = 123;
const RBRACE = 125;
const LBRACKET = 91;
const RBRACKET = 93;
const COMMA = 44;
const COLON = 58;
const MINUS = 45;
const ZERO = 48;
const NINE = 57;

/** The index after JSON blanks from `i`. */
function blanks(b: Uint8Array, i: number): number {
  for (;;) {
    const c = b[i];
    if (c === 32 || c === 10 || c === 13 || c === 9) i++;
    else return i;
  }
}

const isHex = (c: number | undefined) => c !== undefined && ((c >= ZERO && c <= NINE) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102));

/** The index after the string opening at `i` (its `"`); -1 when it is no valid JSON string or holds a non-ASCII byte. */
function stringEnd(b: Uint8Array, i: number): number {
  for (let j = i + 1; ; j++) {
    const c = b[j]!;
    if (c === QUOTE) return j + 1;
    if (c === BACKSLASH) {
      const e = b[++j];
      if (e === 117) {
        if (!(isHex(b[j + 1]) && isHex(b[j + 2]) && isHex(b[j + 3]) && isHex(b[j + 4]))) return -1;
        j += 4;
      } else if (!(e === QUOTE || e === BACKSLASH || e === 47 || e === 98 || e === 102 || e === 110 || e === 114 || e === 116)) return -1;
    } else if (!(c >= 32 && c < 128)) return -1; // a control character, a non-ASCII byte, or the end (undefined)
  }
}

/** Whether the string `[at, e)` holds a backslash (an escape). */
function hasEscape(b: Uint8Array, at: number, e: number): boolean {
  for (let j = at + 1; j < e - 1; j++) if (b[j] === BACKSLASH) return true;
  return false;
}

/** The index after the digits from `i` (at least one), -1 when there is none. */
function digitsEnd(b: Uint8Array, i: number): number {
  let j = i;
  for (let c = b[j]!; c >= ZERO && c <= NINE; c = b[++j]!);
  return j > i ? j : -1;
}

/** Whether the ASCII word `w` is at `i`. */
function wordAt(b: Uint8Array, i: number, w: string): boolean {
  for (let k = 0; k < w.length; k++) if (b[i + k] !== w.charCodeAt(k)) return false;
  return true;
}

/** The index after the number or literal starting at `i`; -1 when it is neither. */
function scalarEnd(b: Uint8Array, i: number): number {
  const c = b[i];
  if (c === 116) return wordAt(b, i, 'true') ? i + 4 : -1;
  if (c === 102) return wordAt(b, i, 'false') ? i + 5 : -1;
  if (c === 110) return wordAt(b, i, 'null') ? i + 4 : -1;
  let j = c === MINUS ? i + 1 : i;
  if (b[j] === ZERO) j++;
  else if ((j = digitsEnd(b, j)) < 0) return -1;
  if (b[j] === 46 && (j = digitsEnd(b, j + 1)) < 0) return -1;
  const e = b[j];
  if (e === 101 || e === 69) {
    const s = b[j + 1];
    j = digitsEnd(b, s === 43 || s === MINUS ? j + 2 : j + 1);
  }
  return j;
}

/** Whether the key text `[at + 1, e - 1)` is `word` (ASCII). */
const keyIs = (b: Uint8Array, at: number, e: number, word: string) => e - at === word.length + 2 && wordAt(b, at + 1, word);

/**
 * The List `bytes` (see the module comment) read once: its items array and first item whose
 * `kind` is a string, or null when this pass does not decide it as scanJsonList would.
 */
export function firstKindItem(bytes: Uint8Array): FirstKindItem | null {
  const b = bytes;
  /** 1 for an array, 0 for an object, per open container. */
  const isArr = new Uint8Array(MAX_DEPTH);
  let depth = 0;
  let [open, close, start, end, itemStart] = [-1, -1, -1, -1, -1];
  /** A key starts at i / the value about to start is the top-level `items` / the current item's `kind`. */
  let [atKey, itemsKey, kindKey] = [false, false, false];
  let kindIsString = false;
  let i = blanks(b, 0);
  if (b[i] !== LBRACE) return null;
  for (;;) {
    if (atKey) {
      // A key of the object on top, then its colon.
      const at = i;
      const e = b[at] === QUOTE ? stringEnd(b, at) : -1;
      if (e < 0) return null;
      if (depth === 1) {
        const isItems = keyIs(b, at, e, 'items');
        if ((isItems && open >= 0) || hasEscape(b, at, e)) return null;
        itemsKey = isItems;
      } else if (depth === 3 && open >= 0 && close < 0) {
        if (hasEscape(b, at, e)) return null;
        kindKey = keyIs(b, at, e, 'kind');
      }
      i = blanks(b, e);
      if (b[i] !== COLON) return null;
      i = blanks(b, i + 1);
      atKey = false;
    }
    // A value starts at i.
    const c = b[i];
    const inItems = depth === 2 && open >= 0 && close < 0;
    if (kindKey) {
      kindIsString = c === QUOTE;
      kindKey = false;
    }
    if (c === LBRACE || c === LBRACKET) {
      const arr = c === LBRACKET ? 1 : 0;
      if (inItems) {
        if (arr) return null;
        itemStart = i;
        kindIsString = false;
      }
      if (itemsKey) {
        if (!arr) return null;
        open = i;
        itemsKey = false;
      }
      if (depth === MAX_DEPTH) return null;
      isArr[depth++] = arr;
      i = blanks(b, i + 1);
      if (b[i] !== (arr ? RBRACKET : RBRACE)) {
        atKey = !arr;
        continue;
      }
    } else {
      if (inItems || itemsKey) return null;
      i = c === QUOTE ? stringEnd(b, i) : scalarEnd(b, i);
      if (i < 0) return null;
    }
    // After a value (or at an empty container's closing bracket): close, or go on to the next.
    for (;;) {
      i = blanks(b, i);
      const ch = b[i];
      const arr = isArr[depth - 1];
      if (ch === COMMA) {
        i = blanks(b, i + 1);
        atKey = !arr;
        break;
      }
      if (ch !== (arr ? RBRACKET : RBRACE)) return null;
      depth--;
      i++;
      if (depth === 2 && open >= 0 && close < 0) {
        if (start < 0 && kindIsString) [start, end] = [itemStart, i];
      } else if (depth === 1 && open >= 0 && close < 0) close = i - 1;
      else if (depth === 0) return blanks(b, i) === b.length && start >= 0 ? { open, close, start, end } : null;
    }
  }
}
