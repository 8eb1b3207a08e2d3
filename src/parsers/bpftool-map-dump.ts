/**
 * `bpftool -j map dump …` (and `-p`): the raw bytes of every entry of one BPF map.
 *
 * Format source: bpftool `src/map.c` `print_entry_json` (bpftool v5–v7): a JSON array of
 * `{"key": ["0x0a", …], "value": ["0x00", …]}`. When the map carries BTF, each entry also has
 * `"formatted": {"key": …, "value": …}` (field names from the C structs); the hex arrays are
 * printed either way, so the bytes are always taken from them. Map-in-map entries add
 * `"inner_map_id"`; per-CPU maps print `"values": [{"cpu": N, "value": […]}]` instead of `"value"`.
 * On failure bpftool prints `{"error": "…"}` instead of an array.
 *
 * A truncated dump keeps every complete entry; the cut-off tail becomes a diagnostic.
 */
import type { Diagnostic, ParseResult } from '../model/diagnostics.js';
import { diagnostic } from '../model/diagnostics.js';
import { parseJsonObject } from '../text/json.js';

/**
 * One map entry. `key`/`value` are null when absent or not an array of `0xNN` strings
 * (per-CPU maps have `perCpuValues` instead of `value`). `line` is 1-based where the entry
 * starts; `raw` its JSON text.
 */
export interface BpftoolMapEntry {
  readonly index: number;
  readonly line: number;
  readonly key: Uint8Array | null;
  readonly value: Uint8Array | null;
  readonly perCpuValues: readonly Uint8Array[] | null;
  readonly innerMapId: number | null;
  readonly formatted: unknown;
  readonly raw: string;
}

/** The entries of one dump, in bpftool's order (hash bucket order, not sorted). */
export interface BpftoolMapDump {
  readonly entries: readonly BpftoolMapEntry[];
}

/** `["0x0a", …]` → bytes; null if not exactly that shape. */
export function hexBytes(v: unknown): Uint8Array | null {
  if (!Array.isArray(v)) return null;
  const out = new Uint8Array(v.length);
  for (let i = 0; i < v.length; i++) {
    const s = v[i];
    // `0x` and one or two hex digits (what /^0x[0-9a-fA-F]{1,2}$/ accepts), read without a regex or substring.
    if (typeof s !== 'string' || (s.length !== 3 && s.length !== 4) || s.charCodeAt(0) !== 48 || s.charCodeAt(1) !== 120) return null;
    const hi = hexDigit(s.charCodeAt(2));
    const lo = s.length === 4 ? hexDigit(s.charCodeAt(3)) : 0;
    if (hi < 0 || lo < 0) return null;
    out[i] = s.length === 4 ? hi * 16 + lo : hi;
  }
  return out;
}

/** Value of one hex digit's char code; -1 when it is not one. */
function hexDigit(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 97 && c <= 102) return c - 87;
  if (c >= 65 && c <= 70) return c - 55;
  return -1;
}

const BYTE_HEX: readonly string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/** Bytes → `0a 60 0c 22` (bpftool's plain-text spelling), for diagnostics and panes. */
export function bytesToHex(b: Uint8Array | null): string {
  if (b === null) return '';
  const parts = new Array<string>(b.length);
  for (let i = 0; i < b.length; i++) parts[i] = BYTE_HEX[b[i]!]!;
  return parts.join(' ');
}

// ASCII codes of the hex digits, and a scratch buffer the text of one entry is written into.
const HEX_DIGITS = Uint8Array.from('0123456789abcdef', (c) => c.charCodeAt(0));
let scratch = Buffer.alloc(1024);

function putHex(b: Uint8Array, at: number): number {
  for (let i = 0; i < b.length; i++) {
    const v = b[i]!;
    if (i > 0) scratch[at++] = 32;
    scratch[at++] = HEX_DIGITS[v >>> 4]!;
    scratch[at++] = HEX_DIGITS[v & 15]!;
  }
  return at;
}

function putAscii(text: string, at: number): number {
  for (let i = 0; i < text.length; i++) scratch[at++] = text.charCodeAt(i);
  return at;
}

/**
 * `key 0a 60 … value 00 …`: both byte strings as {@link bytesToHex} spells them, in one
 * string made once (not a list of two-digit strings joined, twice per entry).
 */
export function entryHex(key: Uint8Array, value: Uint8Array): string {
  const need = 12 + 3 * (key.length + value.length);
  if (scratch.length < need) scratch = Buffer.alloc(need * 2);
  let at = putAscii('key ', 0);
  at = putHex(key, at);
  at = putAscii(' value ', at);
  at = putHex(value, at);
  return scratch.toString('latin1', 0, at);
}

/**
 * The entry `{"key":["0x0a",…],"value":["0x00",…]}` exactly as `bpftool -j` prints it (no
 * blanks, no other member, every byte `"0x"` + one or two hex digits), read in place: the
 * bytes {@link hexBytes} would return from `JSON.parse`. Null for anything else (`-p` output,
 * BTF `formatted`, per-CPU values, escapes): the caller then parses the element as JSON.
 */
function compactEntry(text: string, store: ByteStore): { key: Uint8Array; value: Uint8Array } | null {
  if (!text.startsWith('{"key":[')) return null;
  const mark = store.used;
  const key = compactBytes(text, 8, store);
  if (key !== null && text.startsWith(',"value":[', key.end)) {
    const value = compactBytes(text, key.end + 10, store);
    if (value !== null && value.end === text.length - 1 && text.charCodeAt(value.end) === 125) return { key: key.bytes, value: value.bytes };
  }
  store.used = mark;
  return null;
}

/**
 * The bytes of one dump's compact entries, in one buffer: each key and value is a view of
 * it (a typed array with a buffer of its own per key and per value made half a million
 * buffers for a large node's maps). Sized for the text's worst case, 5 characters a byte.
 */
class ByteStore {
  used = 0;
  constructor(private readonly bytes: Uint8Array) {}
  static forText(text: string): ByteStore {
    return new ByteStore(new Uint8Array(Math.ceil(text.length / 5)));
  }
  push(b: number): void {
    this.bytes[this.used++] = b;
  }
  view(from: number): Uint8Array {
    return this.bytes.subarray(from, this.used);
  }
}

/** `"0xNN","0xN",…]` from `at` → the bytes (in `store`) and the index after `]`; null on any other text. */
function compactBytes(text: string, at: number, store: ByteStore): { bytes: Uint8Array; end: number } | null {
  const from = store.used;
  let i = at;
  if (text.charCodeAt(i) === 93) return { bytes: store.view(from), end: i + 1 };
  for (;;) {
    // "0x then one or two hex digits then "
    if (text.charCodeAt(i) !== 34 || text.charCodeAt(i + 1) !== 48 || text.charCodeAt(i + 2) !== 120) return null;
    const hi = hexDigit(text.charCodeAt(i + 3));
    if (hi < 0) return null;
    const lo = hexDigit(text.charCodeAt(i + 4));
    if (lo >= 0) {
      if (text.charCodeAt(i + 5) !== 34) return null;
      store.push(hi * 16 + lo);
      i += 6;
    } else {
      if (text.charCodeAt(i + 4) !== 34) return null;
      store.push(hi);
      i += 5;
    }
    const c = text.charCodeAt(i);
    if (c === 93) return { bytes: store.view(from), end: i + 1 };
    if (c !== 44) return null;
    i++;
  }
}

/** Splits the top-level array into element texts; `complete` is false when the text ends mid-array. */
function splitTopLevel(text: string, start: number): { elements: { text: string; at: number }[]; complete: boolean; endAt: number } {
  const elements: { text: string; at: number }[] = [];
  let depth = 0;
  let inString = false;
  let elemStart = -1;
  // Char codes: quote 34, backslash 92, [ 91, ] 93, { 123, } 125.
  for (let i = start + 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92) i++;
      else if (c === 34) inString = false;
      continue;
    }
    if (c === 34) inString = true;
    else if (c === 123 || c === 91) {
      if (depth === 0) elemStart = i;
      depth++;
    } else if (c === 125 || c === 93) {
      if (depth === 0) return { elements, complete: c === 93, endAt: i };
      depth--;
      if (depth === 0) elements.push({ text: text.slice(elemStart, i + 1), at: elemStart });
    }
  }
  return { elements, complete: false, endAt: text.length };
}

/** offset → 1-based line, by binary search over newline offsets (dumps can be megabytes). */
function lineIndex(text: string): (offset: number) => number {
  const newlines: number[] = [];
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) newlines.push(i);
  return (offset) => {
    let lo = 0;
    let hi = newlines.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((newlines[mid] ?? 0) < offset) lo = mid + 1;
      else hi = mid;
    }
    return lo + 1;
  };
}

/**
 * One element that is not a compact entry, read with `JSON.parse`: the entry (numbered
 * `index`) with its problems added to `diags` (`bad-key`, `bad-value`), or null — and a
 * `bad-entry` error — when it is not a JSON object.
 */
function jsonEntry(text: string, line: number, index: number, origin: string, diags: Diagnostic[]): BpftoolMapEntry | null {
  const { object: doc, error } = parseJsonObject(text);
  if (doc === null) {
    diags.push(diagnostic('error', origin, line, text, 'bad-entry', `entry is not a JSON object: ${error}`));
    return null;
  }
  const key = hexBytes(doc.key);
  const value = hexBytes(doc.value);
  const perCpu = Array.isArray(doc.values) ? doc.values.map((v) => hexBytes((v as { value?: unknown } | null)?.value)) : null;
  const perCpuValues = perCpu && perCpu.every((v) => v !== null) ? (perCpu as Uint8Array[]) : null;
  if (key === null) diags.push(diagnostic('error', origin, line, text, 'bad-key', 'entry key is not an array of 0xNN bytes'));
  else if (value === null && perCpuValues === null) {
    diags.push(diagnostic('warning', origin, line, text, 'bad-value', typeof doc.value === 'string' ? `entry value unreadable: ${doc.value}` : 'entry value is not an array of 0xNN bytes'));
  }
  return { index, line, key, value, perCpuValues, innerMapId: typeof doc.inner_map_id === 'number' ? doc.inner_map_id : null, formatted: doc.formatted ?? null, raw: text };
}

/**
 * Parses `bpftool -j map dump` output. Never throws: malformed entries and a truncated
 * tail become diagnostics, `{"error": …}` output becomes one error diagnostic.
 */
export function parseBpftoolMapDump(text: string, origin: string): ParseResult<BpftoolMapDump> {
  const diags: Diagnostic[] = [];
  const entries: BpftoolMapEntry[] = [];
  const lineOf = lineIndex(text);
  const start = text.search(/\S/);
  if (start < 0) {
    diags.push(diagnostic('warning', origin, 0, '', 'empty', 'no output (bpftool prints [] for an empty map)'));
    return { value: { entries }, diagnostics: diags };
  }
  if (text[start] === '{') {
    let msg = 'bpftool printed an object instead of an entry array';
    try {
      const doc = JSON.parse(text) as { error?: unknown };
      if (typeof doc.error === 'string') msg = `bpftool error: ${doc.error}`;
    } catch {
      /* keep the generic message */
    }
    diags.push(diagnostic('error', origin, lineOf(start), text.slice(start).split('\n')[0] ?? '', 'bpftool-error', msg));
    return { value: { entries }, diagnostics: diags };
  }
  if (text[start] !== '[') {
    diags.push(diagnostic('error', origin, lineOf(start), text.slice(start).split('\n')[0] ?? '', 'not-json', 'not bpftool -j output (expected a JSON array)'));
    return { value: { entries }, diagnostics: diags };
  }
  const { elements, complete, endAt } = splitTopLevel(text, start);
  const store = ByteStore.forText(text);
  for (const el of elements) {
    const line = lineOf(el.at);
    const compact = compactEntry(el.text, store);
    if (compact !== null) {
      entries.push({ index: entries.length, line, key: compact.key, value: compact.value, perCpuValues: null, innerMapId: null, formatted: null, raw: el.text });
      continue;
    }
    const entry = jsonEntry(el.text, line, entries.length, origin, diags);
    if (entry !== null) entries.push(entry);
  }
  if (!complete) {
    diags.push(diagnostic('error', origin, lineOf(endAt), text.slice(endAt).split('\n')[0] ?? '', 'truncated', `dump ends before the closing ]; kept ${entries.length} complete entries`));
  } else if (text.slice(endAt + 1).trim() !== '') {
    const at = endAt + 1 + text.slice(endAt + 1).search(/\S/);
    diags.push(diagnostic('warning', origin, lineOf(at), text.slice(at).split('\n')[0] ?? '', 'trailing-text', 'text after the JSON array'));
  }
  return { value: { entries }, diagnostics: diags };
}

/** ASCII blanks: what may come before bpftool's `[` and after its `]` on the piece path. */
function isAsciiBlank(c: number): boolean {
  return c === 32 || c === 10 || c === 13 || c === 9 || c === 11 || c === 12;
}

/**
 * The element scanner of {@link scanBpftoolMapDumpPieces}: {@link splitTopLevel}'s state
 * machine kept across pieces (a string or an escape may be cut between two), counting
 * lines as it goes ({@link lineIndex}'s numbers).
 */
class PieceScanner {
  depth = 0;
  inString = false;
  escaped = false;
  line = 1;
  /** 0: before the array's `[`; 1: inside it; 2: after its `]`; -1: a shape the piece path leaves to the whole-text parser. */
  phase = 0;
  /** The start of the element under way in earlier pieces (its text so far), or null. */
  carry: string | null = null;
  elementLine = 0;

  constructor(private readonly element: (text: string, line: number) => void) {}

  /** Scans one piece; elements complete in it are handed to `element`. */
  piece(p: string): void {
    let from = this.carry === null ? -1 : 0;
    for (let i = 0; i < p.length; i++) {
      const c = p.charCodeAt(i);
      if (c === 10) this.line++;
      if (this.phase !== 1) {
        if (isAsciiBlank(c)) continue;
        if (this.phase === 0 && c === 91) this.phase = 1;
        else return void (this.phase = -1);
        continue;
      }
      if (this.escaped) this.escaped = false;
      else if (this.inString) {
        if (c === 92) this.escaped = true;
        else if (c === 34) this.inString = false;
      } else if (c === 34) this.inString = true;
      else if (c === 123 || c === 91) {
        if (this.depth === 0) [from, this.elementLine] = [i, this.line];
        this.depth++;
      } else if (c === 125 || c === 93) {
        // `}` closing the array, or `]` ending it: the whole-text parser reports either.
        if (this.depth === 0) {
          this.phase = c === 93 ? 2 : -1;
          continue;
        }
        if (--this.depth === 0) {
          const tail = p.slice(from, i + 1);
          this.element(this.carry === null ? tail : this.carry + tail, this.elementLine);
          [this.carry, from] = [null, -1];
        }
      }
    }
    if (this.depth > 0) this.carry = this.carry === null ? p.slice(from) : this.carry + p.slice(Math.max(from, 0));
  }
}

/**
 * {@link parseBpftoolMapDump} of a dump read in pieces (a replay's bundle file: the whole
 * text is never held), for the usual shape — blanks, one JSON array, blanks: each entry is
 * handed to `onEntry` as it is read (with the diagnostics the whole-text parser gives for
 * it, in its order) and the result holds only those diagnostics. Null for any other shape
 * (empty output, `{"error": …}`, a dump cut before its `]`, text after it, non-ASCII
 * blanks): the caller then parses the whole text with {@link parseBpftoolMapDump}, whose
 * entries and diagnostics those are. Never throws.
 */
export function scanBpftoolMapDumpPieces(pieces: Iterable<string>, origin: string, onEntry: (entry: BpftoolMapEntry) => void): ParseResult<{ readonly entries: number }> | null {
  const diags: Diagnostic[] = [];
  let index = 0;
  let store = new ByteStore(new Uint8Array(0));
  let capacity = 0;
  const scanner = new PieceScanner((text, line) => {
    // Views of one block each: a block is let go with the last entry that views it.
    const need = Math.ceil(text.length / 5);
    if (capacity - store.used < need) [store, capacity] = [new ByteStore(new Uint8Array(Math.max(need, 1 << 16))), Math.max(need, 1 << 16)];
    const compact = compactEntry(text, store);
    const entry = compact !== null ? { index, line, key: compact.key, value: compact.value, perCpuValues: null, innerMapId: null, formatted: null, raw: text } : jsonEntry(text, line, index, origin, diags);
    if (entry === null) return;
    index++;
    onEntry(entry);
  });
  for (const p of pieces) {
    scanner.piece(p);
    if (scanner.phase === -1) return null;
  }
  if (scanner.phase !== 2) return null;
  return { value: { entries: index }, diagnostics: diags };
}
