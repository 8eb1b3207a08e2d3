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
  for (const el of elements) {
    const line = lineOf(el.at);
    let doc: Record<string, unknown>;
    try {
      const parsed: unknown = JSON.parse(el.text);
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not an object');
      doc = parsed as Record<string, unknown>;
    } catch (e) {
      diags.push(diagnostic('error', origin, line, el.text, 'bad-entry', `entry is not a JSON object: ${(e as Error).message}`));
      continue;
    }
    const key = hexBytes(doc.key);
    const value = hexBytes(doc.value);
    const perCpu = Array.isArray(doc.values) ? doc.values.map((v) => hexBytes((v as { value?: unknown } | null)?.value)) : null;
    const perCpuValues = perCpu && perCpu.every((v) => v !== null) ? (perCpu as Uint8Array[]) : null;
    if (key === null) diags.push(diagnostic('error', origin, line, el.text, 'bad-key', 'entry key is not an array of 0xNN bytes'));
    else if (value === null && perCpuValues === null) {
      diags.push(diagnostic('warning', origin, line, el.text, 'bad-value', typeof doc.value === 'string' ? `entry value unreadable: ${doc.value}` : 'entry value is not an array of 0xNN bytes'));
    }
    entries.push({
      index: entries.length,
      line,
      key,
      value,
      perCpuValues,
      innerMapId: typeof doc.inner_map_id === 'number' ? doc.inner_map_id : null,
      formatted: doc.formatted ?? null,
      raw: el.text,
    });
  }
  if (!complete) {
    diags.push(diagnostic('error', origin, lineOf(endAt), text.slice(endAt).split('\n')[0] ?? '', 'truncated', `dump ends before the closing ]; kept ${entries.length} complete entries`));
  } else if (text.slice(endAt + 1).trim() !== '') {
    const at = endAt + 1 + text.slice(endAt + 1).search(/\S/);
    diags.push(diagnostic('warning', origin, lineOf(at), text.slice(at).split('\n')[0] ?? '', 'trailing-text', 'text after the JSON array'));
  }
  return { value: { entries }, diagnostics: diags };
}
