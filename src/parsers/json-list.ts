/**
 * A JSON `List` read item by item: {@link scanJsonList} walks the text of one JSON object
 * whose `items` is an array of objects (what `kubectl get -o json` and `nodescope capture`
 * write) once, checking the JSON grammar (RFC 8259, as `JSON.parse` accepts it), and returns
 * where each item starts and ends and the raw text of a few values inside each item (its
 * `kind`, `metadata.name`, …). A caller then `JSON.parse`s only the items it keeps, or each
 * item on its own so that its tree dies young, instead of one tree of the whole text.
 *
 * The scan answers null (the caller reads the text whole) on anything it does not read the way
 * `JSON.parse` would: text that is not exactly one valid JSON object, an `items` key twice, an
 * `items` that is not an array or holds a non-object, a key written with an escape at a
 * watched depth. A watched value follows `JSON.parse`'s last-key-wins: a later key of the same
 * name, or of any ancestor on the path, replaces it. Pure; never throws.
 */

/** Where one item is in the text (`start` at its `{`, `end` just after its `}`), and its watched values. */
export interface ListItem {
  readonly start: number;
  readonly end: number;
  /** Per watched path (same order): the raw JSON text span `[start, end)` of its value, or undefined when absent. */
  readonly fields: readonly (readonly [number, number] | undefined)[];
}

/** A scanned List: its items, and where its `items` array's brackets are. */
export interface JsonList {
  readonly items: readonly ListItem[];
  /** Index of the items array's `[`. */
  readonly open: number;
  /** Index of the items array's `]`. */
  readonly close: number;
}

/** The text of `list` with its items array empty (`JSON.parse` of it is the List without items, keys in order). */
export function listHead(text: string, list: JsonList): string {
  return text.slice(0, list.open + 1) + text.slice(list.close);
}

/** The raw text of an item's watched value `w`, undefined when absent. */
export function fieldText(text: string, item: ListItem, w: number): string | undefined {
  const span = item.fields[w];
  return span === undefined ? undefined : text.slice(span[0], span[1]);
}

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
function blanks(text: string, i: number): number {
  for (;;) {
    const c = text.charCodeAt(i);
    if (c === 32 || c === 10 || c === 13 || c === 9) i++;
    else return i;
  }
}

const isHex = (c: number) => (c >= ZERO && c <= NINE) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102);

/** The index after the string opening at `i` (its `"`); -1 when it is no valid string. Sets {@link escaped}. */
let escaped = false;
function stringEnd(text: string, i: number): number {
  escaped = false;
  for (let j = i + 1; ; j++) {
    const c = text.charCodeAt(j);
    if (c === QUOTE) return j + 1;
    if (c === BACKSLASH) {
      escaped = true;
      const e = text.charCodeAt(++j);
      if (e === 117) {
        if (!(isHex(text.charCodeAt(j + 1)) && isHex(text.charCodeAt(j + 2)) && isHex(text.charCodeAt(j + 3)) && isHex(text.charCodeAt(j + 4)))) return -1;
        j += 4;
      } else if (!(e === QUOTE || e === BACKSLASH || e === 47 || e === 98 || e === 102 || e === 110 || e === 114 || e === 116)) return -1;
    } else if (!(c >= 32)) return -1; // a control character, or the end of the text (NaN)
  }
}

/** The index after the digits from `i` (at least one), -1 when there is none. */
function digitsEnd(text: string, i: number): number {
  let j = i;
  while (text.charCodeAt(j) >= ZERO && text.charCodeAt(j) <= NINE) j++;
  return j > i ? j : -1;
}

/** The index after the number or literal starting at `i`; -1 when it is neither. */
function scalarEnd(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c === 116) return text.startsWith('true', i) ? i + 4 : -1;
  if (c === 102) return text.startsWith('false', i) ? i + 5 : -1;
  if (c === 110) return text.startsWith('null', i) ? i + 4 : -1;
  let j = c === MINUS ? i + 1 : i;
  if (text.charCodeAt(j) === ZERO) j++;
  else if ((j = digitsEnd(text, j)) < 0) return -1;
  if (text.charCodeAt(j) === 46 && (j = digitsEnd(text, j + 1)) < 0) return -1;
  const e = text.charCodeAt(j);
  if (e === 101 || e === 69) {
    const s = text.charCodeAt(j + 1);
    j = digitsEnd(text, s === 43 || s === MINUS ? j + 2 : j + 1);
  }
  return j;
}

/** Cursors over the text for the string fast path (see {@link Scan.stringEnd}). */
class Scan {
  /** Next index of a backslash / newline at or after the last string read (text length when none). */
  private backslash = -1;
  private newline = -1;
  /** True when the text holds a control character other than a newline (the slow path reads every string then). */
  private readonly slow: boolean;
  /** Whether the last string read held an escape. */
  escaped = false;

  constructor(private readonly text: string) {
    this.slow = /[\x00-\x09\x0b-\x1f]/.test(text);
  }

  /**
   * The index after the string opening at `i` (its `"`), -1 when it is no valid JSON string.
   * A string with no backslash is found with one `indexOf` of its closing quote; it is valid
   * when no control character comes before it (a newline is the only one the text holds, else
   * the slow path reads it character by character).
   */
  stringEnd(i: number): number {
    const text = this.text;
    if (!this.slow) {
      const q = text.indexOf('"', i + 1);
      if (q < 0) return -1;
      if (this.backslash <= i) this.backslash = indexOrEnd(text, '\\', i + 1);
      if (this.backslash > q) {
        if (this.newline <= i) this.newline = indexOrEnd(text, '\n', i + 1);
        this.escaped = false;
        return this.newline > q ? q + 1 : -1;
      }
    }
    const e = stringEnd(text, i);
    this.escaped = escaped;
    return e;
  }
}

function indexOrEnd(text: string, what: string, from: number): number {
  const at = text.indexOf(what, from);
  return at < 0 ? text.length : at;
}

/** The watched paths of `mask` that go on through an object that is the value of key `key` at `level`. */
function through(watch: readonly (readonly string[])[], mask: number, level: number, key: string): number {
  let out = 0;
  for (let w = 0; w < watch.length; w++) if (mask & (1 << w) && watch[w]!.length > level && watch[w]![level - 1] === key) out |= 1 << w;
  return out;
}

/** Container kinds on the scan's stack. */
const OBJECT = 0;
const ARRAY = 1;

/**
 * The items of the JSON List `text` (see the module comment), with the raw spans of the values
 * at `watch` (at most 30 paths of keys inside an item, e.g. `['metadata', 'name']`; more: null); null when
 * the text is not read that way.
 */
export function scanJsonList(text: string, watch: readonly (readonly string[])[]): JsonList | null {
  if (watch.length > 30) return null;
  const scan = new Scan(text);
  const items: ListItem[] = [];
  const all = (1 << watch.length) - 1;
  // The stack of open containers, one entry per depth: kind, start, key level inside an item
  // (1: the item's own keys; 0 outside items), watched paths still live inside it, and the
  // watched paths whose value it is (bit masks over `watch`).
  const [kind, start, level, live, recs] = [[], [], [], [], []] as [number[], number[], number[], number[], number[]];
  /** The keys on the path inside the current item, by level. */
  const keys: string[] = [];
  let fields: ([number, number] | undefined)[] = [];
  let [depth, open, close] = [0, -1, -1];
  let itemsKey = false;
  /** The watched paths whose value starts next. */
  let records = 0;
  let i = blanks(text, 0);
  if (text.charCodeAt(i) !== LBRACE) return null;
  for (;;) {
    // A value starts at i.
    const c = text.charCodeAt(i);
    if (c === LBRACE || c === LBRACKET) {
      const inItems = depth === 2 && start[1] === open;
      const isArray = c === LBRACKET;
      if (inItems && isArray) return null;
      if (depth === 1 && itemsKey) {
        if (!isArray) return null;
        open = i;
      }
      const up = depth - 1;
      let lv = 0;
      let lvMask = 0;
      if (inItems) {
        lv = 1;
        lvMask = all;
        fields = watch.map(() => undefined);
      } else if (depth > 0 && level[up]! > 0) {
        lv = isArray ? level[up]! : level[up]! + 1;
        // An object as the value of a key: the paths through it stay live.
        if (live[up] !== 0 && !isArray && kind[up] === OBJECT) lvMask = through(watch, live[up]!, level[up]!, keys[level[up]!]!);
      }
      kind[depth] = isArray ? ARRAY : OBJECT;
      start[depth] = i;
      level[depth] = lv;
      live[depth] = lvMask;
      recs[depth] = records;
      depth++;
      records = 0;
      i = blanks(text, i + 1);
      const next = text.charCodeAt(i);
      if (next !== (isArray ? RBRACKET : RBRACE)) {
        if (isArray) continue;
        if (next !== QUOTE || (i = readKey(i)) < 0) return null;
        continue;
      }
    } else {
      if (depth === 2 && start[1] === open) return null;
      const e = c === QUOTE ? scan.stringEnd(i) : scalarEnd(text, i);
      if (e < 0) return null;
      if (records !== 0) records = record(i, e, records);
      i = e;
    }
    // After a value (or at an empty container's closing bracket): close, or go on to the next.
    for (;;) {
      i = blanks(text, i);
      const top = depth - 1;
      const ch = text.charCodeAt(i);
      if (ch === COMMA) {
        i = blanks(text, i + 1);
        if (kind[top] !== ARRAY && (text.charCodeAt(i) !== QUOTE || (i = readKey(i)) < 0)) return null;
        break;
      }
      if (ch !== (kind[top] === ARRAY ? RBRACKET : RBRACE)) return null;
      depth--;
      i++;
      if (recs[top] !== 0) record(start[top]!, i, recs[top]!);
      if (depth === 2 && level[top] === 1) items.push({ start: start[top]!, end: i, fields });
      else if (depth === 1 && start[top] === open) close = i - 1;
      else if (depth === 0) return blanks(text, i) === text.length && open >= 0 ? { items, open, close } : null;
    }
  }

  /** Records `[from, to)` as the value of the paths of `mask`; returns 0 (no path waits for a value now). */
  function record(from: number, to: number, mask: number): number {
    for (let w = 0; w < watch.length; w++) if (mask & (1 << w)) fields[w] = [from, to];
    return 0;
  }

  /** Reads the key at `at` (a `"`) of the object on top and its `:`; returns where its value starts, -1 when invalid. */
  function readKey(at: number): number {
    const e = scan.stringEnd(at);
    if (e < 0) return -1;
    const top = depth - 1;
    if (depth === 1) {
      const isItems = e - at === 7 && text.startsWith('"items"', at);
      // A key written with escapes could be `items`.
      if ((isItems && open >= 0) || scan.escaped) return -1;
      itemsKey = isItems;
    } else if (live[top] !== 0) {
      if (scan.escaped) return -1;
      const lv = level[top]!;
      const key = text.slice(at + 1, e - 1);
      keys[lv] = key;
      const m = live[top]!;
      for (let w = 0; w < watch.length; w++) {
        if (!(m & (1 << w)) || watch[w]![lv - 1] !== key) continue;
        // A later key of the same name (or of an ancestor) replaces what was read before.
        fields[w] = undefined;
        if (watch[w]!.length === lv) records |= 1 << w;
      }
    }
    const colon = blanks(text, e);
    if (text.charCodeAt(colon) !== COLON) return -1;
    return blanks(text, colon + 1);
  }
}
