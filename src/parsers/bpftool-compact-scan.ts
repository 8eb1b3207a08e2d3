/**
 * The usual `bpftool -j map dump` output read in place, entry by entry, with no text, array
 * or object made per entry: `[` + entries + `]`, every entry exactly
 * `{"key":["0x0a",…],"value":["0x00",…]}` (bpftool `src/map.c` `print_entry_json` through
 * its non-pretty json_writer: no blanks, members in that order, each byte `"0x"` and one or
 * two hex digits), ASCII blanks only before `[` and after `]`.
 *
 * This is a fast path of {@link parseBpftoolMapDump} (src/parsers/bpftool-map-dump.ts): for
 * that shape it hands over the same bytes, entry indexes and line numbers, and that parser
 * gives no diagnostic for it. Anything else — `-p` output, BTF `formatted` members, per-CPU
 * `values`, `inner_map_id`, a blank or newline inside the array, an empty or cut dump, an
 * `{"error"}` object, trailing text, a non-ASCII blank — makes the scan answer null, and the
 * caller reads the dump with the whole-text parser instead.
 */

/** Code of one hex digit's char code (either case, as bpftool-map-dump.ts reads them); -1 when it is not one. */
function hexDigit(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 97 && c <= 102) return c - 87;
  if (c >= 65 && c <= 70) return c - 55;
  return -1;
}

/** ASCII blanks (space, \n, \r, \t, \v, \f): what may stand before `[` and after `]`. */
function isAsciiBlank(c: number): boolean {
  return c === 32 || c === 10 || c === 13 || c === 9 || c === 11 || c === 12;
}

/**
 * Called per entry with its key and value bytes, its 0-based index and 1-based line. The
 * arrays are the scanner's own and are overwritten by the next entry: read, never keep them.
 */
export type CompactEntryVisitor = (key: Uint8Array, value: Uint8Array, index: number, line: number) => void;

/** A reusable byte buffer and its views per length (the key and value sizes of one map repeat). */
class Scratch {
  private buf = new Uint8Array(64);
  private readonly views = new Map<number, Uint8Array>();
  /** The buffer, at least `n` bytes long, its first `keep` bytes kept when it grows. */
  room(n: number, keep = 0): Uint8Array {
    if (this.buf.length < n) {
      const grown = new Uint8Array(n * 2);
      grown.set(this.buf.subarray(0, keep));
      this.buf = grown;
      this.views.clear();
    }
    return this.buf;
  }
  /** The first `n` bytes of the buffer, one view per length. */
  view(n: number): Uint8Array {
    let v = this.views.get(n);
    if (v === undefined) this.views.set(n, (v = this.buf.subarray(0, n)));
    return v;
  }
}

/**
 * The bytes of `"0xNN","0xN",…]` read from `s` at `at` into `into`: the index after `]` and the
 * byte count, or null when the text is anything else. `into` is grown as needed.
 */
function readBytes(s: string, at: number, into: Scratch): { end: number; n: number } | null {
  let i = at;
  let n = 0;
  let buf = into.room(64);
  if (s.charCodeAt(i) === 93) return { end: i + 1, n: 0 };
  for (;;) {
    if (s.charCodeAt(i) !== 34 || s.charCodeAt(i + 1) !== 48 || s.charCodeAt(i + 2) !== 120) return null;
    const hi = hexDigit(s.charCodeAt(i + 3));
    if (hi < 0) return null;
    const lo = hexDigit(s.charCodeAt(i + 4));
    if (n >= buf.length) buf = into.room(n + 1, n);
    if (lo >= 0) {
      if (s.charCodeAt(i + 5) !== 34) return null;
      buf[n++] = hi * 16 + lo;
      i += 6;
    } else {
      if (s.charCodeAt(i + 4) !== 34) return null;
      buf[n++] = hi;
      i += 5;
    }
    const c = s.charCodeAt(i);
    if (c === 93) return { end: i + 1, n };
    if (c !== 44) return null;
    i++;
  }
}

/** Longest entry text carried from one piece to the next before the scan gives up (the whole-text parser then reads it). */
const MAX_ENTRY_CHARS = 4 << 20;

const KEY_OPEN = '{"key":[';
const VALUE_OPEN = ',"value":[';

/**
 * Scans a dump given in pieces (`pieces` yields the text in order; one piece is the whole
 * text) and calls `visit` per entry. Returns the entry count, or null as soon as the text is
 * not the usual shape (see the module comment) — entries visited until then are to be
 * discarded by the caller. Never throws (but `visit` may).
 */
export function scanCompactDump(pieces: Iterable<string>, visit: CompactEntryVisitor): { readonly entries: number } | null {
  const keys = new Scratch();
  const values = new Scratch();
  let index = 0;
  let line = 1;
  /** The entry `s[i … end + 1]` (`end`: the index of its closing `]}`) read and visited; false when it is not the usual shape. */
  const entry = (s: string, i: number, end: number): boolean => {
    if (!s.startsWith(KEY_OPEN, i)) return false;
    const key = readBytes(s, i + KEY_OPEN.length, keys);
    if (key === null || !s.startsWith(VALUE_OPEN, key.end)) return false;
    const keyBytes = keys.view(key.n);
    const value = readBytes(s, key.end + VALUE_OPEN.length, values);
    if (value === null || value.end !== end + 1) return false;
    visit(keyBytes, values.view(value.n), index++, line);
    return true;
  };
  // 0: before `[`; 1: after `[` or `,` (an entry, or `]` right after `[`); 3: after an entry (`,` or `]`); 2: after `]`.
  let phase = 0;
  let afterOpen = false;
  // The start of an entry cut at a piece's end (it holds no `]}`): completed from the next piece, which is not copied.
  let carry = '';
  for (const s of pieces) {
    let i = 0;
    if (carry !== '') {
      // Its first `]}`: across the join, or in this piece.
      const across = carry.charCodeAt(carry.length - 1) === 93 && s.charCodeAt(0) === 125;
      const k = across ? -1 : s.indexOf(']}');
      if (!across && k < 0) {
        if (carry.length + s.length > MAX_ENTRY_CHARS) return null;
        carry += s;
        continue;
      }
      const upTo = across ? 1 : k + 2;
      const text = carry + s.slice(0, upTo);
      if (!entry(text, 0, text.length - 2)) return null;
      [carry, phase, i] = ['', 3, upTo];
    }
    while (i < s.length) {
      const c = s.charCodeAt(i);
      if (phase === 0) {
        if (c === 91) [phase, afterOpen] = [1, true];
        else if (!isAsciiBlank(c)) return null;
        else if (c === 10) line++;
        i++;
      } else if (phase === 2) {
        if (!isAsciiBlank(c)) return null;
        i++;
      } else if (phase === 3) {
        if (c === 44) [phase, afterOpen] = [1, false];
        else if (c === 93) phase = 2;
        else return null;
        i++;
      } else if (c === 93 && afterOpen) {
        phase = 2;
        i++;
      } else {
        // An entry: it ends at the first `]}` (the key's array ends with `],`); not all here yet: carried.
        const end = s.indexOf(']}', i);
        if (end < 0) {
          // No entry of the usual shape is this long (a Maglev inner table's is under 2 MB of text).
          if (c !== 123 || s.length - i > MAX_ENTRY_CHARS) return null;
          carry = s.slice(i);
          break;
        }
        if (!entry(s, i, end)) return null;
        phase = 3;
        i = end + 2;
      }
    }
  }
  return phase === 2 && carry === '' ? { entries: index } : null;
}
