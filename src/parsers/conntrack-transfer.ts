/**
 * Moves a parsed conntrack table between threads (a parse worker → the main thread) in
 * columns: `structuredClone`/`postMessage` would keep only the own fields of the compact
 * classes (src/parsers/conntrack-compact.ts) and make a million objects of plain data,
 * twice the size. The encoder writes one row per entry into typed arrays (transferred,
 * not copied) and the distinct address texts into one string; the decoder makes the same
 * compact entries again, re-packing each kind in this thread's kind table (module-wide,
 * see `packKind`). Entries that are not plain compact ones (with extras, from the general
 * parser, events) travel as plain data (`plainConntrackEntry`): the decoded table equals
 * the encoded one field for field (`toPlain`), it is not the same objects.
 *
 * Two codecs: {@link encodeConntrackColumns} sends the parser's column table
 * (src/parsers/conntrack-columns.ts) as it is held — its typed arrays, the interner's
 * lookup state, the kinds' headers, the few entries held as objects — and the receiver
 * rebuilds the same column table, no object per entry on either side (what the parse worker
 * sends). {@link encodeConntrack}, the entry codec above, is the fallback for any other table.
 */
import type { ParseResult } from '../model/diagnostics.js';
import { plainConntrackEntry, type ConntrackEntry, type ConntrackTable } from '../model/conntrack.js';
import { conntrackRows, textIds } from '../model/conntrack-ids.js';
import { ConntrackColumnRows, columnTable, internerIds } from './conntrack-columns.js';
import { ConntrackInterner, type ConntrackInternerState } from './conntrack-scan.js';
import { compactEntryExtras, CompactConntrackEntryWithExtras, CompactExtras, compactEntryKind, compactTupleCounters, isCompactEntry, isCompactTuple, kindHeader, makeCompactTuple, packKind, CompactConntrackEntry, type CompactConntrackTuple } from './conntrack-compact.js';

/** The columns of one encoded table (all typed arrays are transferable). */
export interface EncodedConntrack {
  /** Entries in order; `plain[i]` set: that entry travels as plain data (its columns are unused). */
  readonly count: number;
  readonly line: Int32Array;
  /** The entry's `k` with the kind index replaced by its header's index in `headers`. */
  readonly kind: Int32Array;
  /** Per tuple (orig at 2i, reply at 2i + 1): address ids into `addresses`, sport << 16 | dport. */
  readonly src: Int32Array;
  readonly dst: Int32Array;
  readonly ports: Int32Array;
  /** Per tuple: 0 no counters, 1 packed in `counters`, 2 bigints in `bigCounters` (by tuple index). */
  readonly counterKind: Uint8Array;
  readonly counters: Float64Array;
  readonly bigCounters: ReadonlyMap<number, readonly [bigint, bigint]>;
  /** Distinct address texts joined with `\n`. */
  readonly addresses: string;
  /** Header integers of the kinds used, by the index `kind` holds. */
  readonly headers: readonly number[];
  readonly plain: ReadonlyMap<number, ConntrackEntry>;
  readonly rest: Omit<ConntrackTable, 'entries'>;
  readonly diagnostics: ParseResult<ConntrackTable>['diagnostics'];
}

const KIND_BITS = 10;
const KIND_MASK = (1 << KIND_BITS) - 1;

/**
 * The columns of `result` (see the module doc) and the buffers to transfer. Never throws.
 */
export function encodeConntrack(result: ParseResult<ConntrackTable>): { readonly encoded: EncodedConntrack; readonly transfer: ArrayBuffer[] } {
  const entries = result.value.entries;
  const n = entries.length;
  const line = new Int32Array(n);
  const kind = new Int32Array(n);
  const src = new Int32Array(2 * n);
  const dst = new Int32Array(2 * n);
  const ports = new Int32Array(2 * n);
  const counterKind = new Uint8Array(2 * n);
  const counters = new Float64Array(2 * n);
  const bigCounters = new Map<number, readonly [bigint, bigint]>();
  const plain = new Map<number, ConntrackEntry>();
  const addresses = textIds();
  const headerIndex = new Map<number, number>();
  const headers: number[] = [];
  const tuple = (t: CompactConntrackTuple, at: number): void => {
    src[at] = addresses.id(t.src);
    dst[at] = addresses.id(t.dst);
    ports[at] = (t.sport! << 16) | t.dport!;
    const c = compactTupleCounters(t);
    if (c === undefined) return;
    if (typeof c === 'number') {
      counterKind[at] = 1;
      counters[at] = c;
    } else {
      counterKind[at] = 2;
      bigCounters.set(at, [c.packets, c.bytes]);
    }
  };
  for (let i = 0; i < n; i++) {
    const e = entries[i]!;
    if (!isCompactEntry(e) || !isCompactTuple(e.orig) || !isCompactTuple(e.reply)) {
      plain.set(i, plainConntrackEntry(e));
      continue;
    }
    const k = compactEntryKind(e);
    const h = kindHeader(k & KIND_MASK)!;
    let hi = headerIndex.get(h);
    if (hi === undefined) {
      hi = headers.length;
      headers.push(h);
      headerIndex.set(h, hi);
    }
    line[i] = e.line;
    kind[i] = (k & ~KIND_MASK) | hi;
    tuple(e.orig, 2 * i);
    tuple(e.reply, 2 * i + 1);
  }
  const { entries: _, ...rest } = result.value;
  const restPlain = { ...rest, ...(rest.events ? { events: rest.events.map(plainConntrackEntry) } : {}) };
  const encoded: EncodedConntrack = {
    count: n, line, kind, src, dst, ports, counterKind, counters, bigCounters,
    addresses: addresses.texts.join('\n'), headers, plain, rest: restPlain, diagnostics: result.diagnostics,
  };
  return { encoded, transfer: [line.buffer, kind.buffer, src.buffer, dst.buffer, ports.buffer, counterKind.buffer, counters.buffer] as ArrayBuffer[] };
}

/**
 * The table {@link encodeConntrack} encoded, as compact entries of this thread; undefined
 * when this thread's kind table has no room for a kind (the caller parses in-process).
 */
export function decodeConntrack(enc: EncodedConntrack): ParseResult<ConntrackTable> | undefined {
  const texts = enc.addresses === '' ? [] : enc.addresses.split('\n');
  const n = enc.count;
  const entries = new Array<ConntrackEntry>(n);
  const tuple = (at: number): CompactConntrackTuple => {
    const p = enc.ports[at]!;
    const ck = enc.counterKind[at];
    const counters = ck === 1 ? enc.counters[at]! : ck === 2 ? enc.bigCounters.get(at)! : undefined;
    return makeCompactTuple(texts[enc.src[at]!]!, texts[enc.dst[at]!]!, p >>> 16, p & 0xffff, counters);
  };
  for (let i = 0; i < n; i++) {
    const plain = enc.plain.get(i);
    if (plain !== undefined) {
      entries[i] = plain;
      continue;
    }
    const stored = enc.kind[i]!;
    const k = packKind(enc.headers[stored & KIND_MASK]!, (stored >>> KIND_BITS) - 1);
    if (k < 0) return undefined;
    entries[i] = new CompactConntrackEntry(enc.line[i]!, tuple(2 * i), tuple(2 * i + 1), k);
  }
  return { value: { entries, ...enc.rest }, diagnostics: enc.diagnostics };
}

/**
 * A column table (src/parsers/conntrack-columns.ts) as it moves between threads: its
 * typed arrays as they are (transferred), the parser's interner state (address texts and
 * the spellings looked up by text), the kinds' header integers by this thread's kind
 * index, and the few entries held as objects ("specials") through {@link encodeConntrack}.
 */
export interface EncodedConntrackColumns {
  readonly length: number;
  readonly line: Int32Array;
  /** As the rows hold it: ≥ 0 a `packKind` value of the sending thread, < 0 a special. */
  readonly kind: Int32Array;
  readonly ports: Int32Array;
  readonly counters: Int32Array;
  readonly origSrc: Int32Array;
  readonly origDst: Int32Array;
  readonly replySrc: Int32Array;
  readonly replyDst: Int32Array;
  readonly interner: ConntrackInternerState;
  /** `headers[j]`: header integer of the sender's kind index j (undefined: unused). */
  readonly headers: readonly (number | undefined)[];
  readonly special: readonly EncodedSpecial[];
  readonly events: readonly EncodedSpecial[] | undefined;
  readonly rest: Omit<ConntrackTable, 'entries' | 'events'>;
  readonly diagnostics: ParseResult<ConntrackTable>['diagnostics'];
}

/** A compact tuple's stored fields (counters as `compactTupleCounters` gives them, bigints as a pair). */
interface EncodedTuple {
  readonly src: string;
  readonly dst: string;
  readonly sport: number;
  readonly dport: number;
  readonly counters: number | readonly [bigint, bigint] | undefined;
}

/**
 * One entry held as an object, as it travels: plain data (the general parser's) as it is
 * — structured clone keeps every own field, undefined ones included —, or a compact
 * entry's stored fields, its class made again on arrival (`compact`: the kind by header
 * and timeout, re-packed here; `extras`: {@link CompactExtras}' fields).
 */
type EncodedSpecial =
  | { readonly t: 'plain'; readonly entry: ConntrackEntry }
  | { readonly t: 'compact'; readonly line: number; readonly h: number; readonly timeout: number; readonly orig: EncodedTuple; readonly reply: EncodedTuple }
  | { readonly t: 'extras'; readonly line: number; readonly x: CompactExtras; readonly orig: EncodedTuple; readonly reply: EncodedTuple };

function isPlainData(o: object): boolean {
  return Object.getPrototypeOf(o) === Object.prototype;
}

function encodeTuple(t: CompactConntrackTuple): EncodedTuple {
  const c = compactTupleCounters(t);
  return { src: t.src, dst: t.dst, sport: t.sport!, dport: t.dport!, counters: c === undefined || typeof c === 'number' ? c : [c.packets, c.bytes] };
}

function decodeTuple(t: EncodedTuple): CompactConntrackTuple {
  return makeCompactTuple(t.src, t.dst, t.sport, t.dport, t.counters);
}

/** `e` as it travels (see {@link EncodedSpecial}); undefined for a shape this codec does not know. */
function encodeSpecial(e: ConntrackEntry): EncodedSpecial | undefined {
  if (isPlainData(e) && isPlainData(e.orig) && isPlainData(e.reply)) return { t: 'plain', entry: e };
  if (!isCompactTuple(e.orig) || !isCompactTuple(e.reply)) return undefined;
  const x = compactEntryExtras(e);
  if (x !== undefined) return { t: 'extras', line: e.line, x: { ...x }, orig: encodeTuple(e.orig), reply: encodeTuple(e.reply) };
  if (!isCompactEntry(e)) return undefined;
  const k = compactEntryKind(e);
  const h = kindHeader(k & KIND_MASK);
  if (h === undefined) return undefined;
  return { t: 'compact', line: e.line, h, timeout: (k >>> KIND_BITS) - 1, orig: encodeTuple(e.orig), reply: encodeTuple(e.reply) };
}

/** The entry {@link encodeSpecial} encoded; undefined when this thread's kind table has no room for its kind. */
function decodeSpecial(s: EncodedSpecial): ConntrackEntry | undefined {
  if (s.t === 'plain') return s.entry;
  if (s.t === 'extras') {
    const x = s.x;
    const extras = new CompactExtras(x.h, x.t, x.raw, x.mark, x.secmark, x.zone, x.deltaTime, x.use, x.id);
    return new CompactConntrackEntryWithExtras(s.line, decodeTuple(s.orig), decodeTuple(s.reply), extras);
  }
  const k = packKind(s.h, s.timeout);
  return k < 0 ? undefined : new CompactConntrackEntry(s.line, decodeTuple(s.orig), decodeTuple(s.reply), k);
}

/** Every entry of `entries` encoded; undefined when one is of a shape {@link encodeSpecial} does not know. */
function encodeSpecials(entries: readonly ConntrackEntry[]): EncodedSpecial[] | undefined {
  const out: EncodedSpecial[] = [];
  for (const e of entries) {
    const s = encodeSpecial(e);
    if (s === undefined) return undefined;
    out.push(s);
  }
  return out;
}

/** Every entry of `specials` decoded; undefined when one cannot be (see {@link decodeSpecial}). */
function decodeSpecials(specials: readonly EncodedSpecial[]): ConntrackEntry[] | undefined {
  const out: ConntrackEntry[] = [];
  for (const s of specials) {
    const e = decodeSpecial(s);
    if (e === undefined) return undefined;
    out.push(e);
  }
  return out;
}

/**
 * The columns of `result`'s table and the buffers to transfer (they are detached from
 * this thread's table: the table must not be read after), or undefined when the table
 * is not a parser's column table (the caller sends it with {@link encodeConntrack}). Never throws.
 */
export function encodeConntrackColumns(result: ParseResult<ConntrackTable>): { readonly encoded: EncodedConntrackColumns; readonly transfer: ArrayBuffer[] } | undefined {
  const rows = conntrackRows(result.value);
  if (!(rows instanceof ConntrackColumnRows) || rows.materialized) return undefined;
  const { length, line, kind, ports, counters, special, ids, interner } = rows.parts();
  if (interner === undefined) return undefined;
  const headers: (number | undefined)[] = [];
  for (let i = 0; i < length; i++) {
    const k = kind[i]!;
    if (k < 0) continue;
    const j = k & KIND_MASK;
    if (headers[j] === undefined) headers[j] = kindHeader(j);
  }
  const specials = encodeSpecials(special);
  const { events } = result.value;
  const rest = tableRest(result.value);
  const sentEvents = events === undefined ? undefined : encodeSpecials(events);
  if (specials === undefined || (events !== undefined && sentEvents === undefined)) return undefined;
  const { origSrc, origDst, replySrc, replyDst } = ids;
  const state = interner.state();
  const encoded: EncodedConntrackColumns = {
    length, line, kind, ports, counters, origSrc, origDst, replySrc, replyDst,
    interner: state, headers, special: specials, events: sentEvents, rest, diagnostics: result.diagnostics,
  };
  const buffers = [line, kind, ports, counters, origSrc, origDst, replySrc, replyDst].map((a) => a.buffer as ArrayBuffer);
  // A buffer shared by two columns (a view of one another) would be transferred twice.
  if (new Set(buffers).size !== buffers.length) return undefined;
  // The interner's IPv4 table is a copy of its own (state()): sent as it is.
  if (state.v4) buffers.push(state.v4.slots.buffer as ArrayBuffer);
  return { encoded, transfer: buffers };
}

/**
 * The table's other keys (trailers, counts…) in its own key order, without `entries` and
 * `events`. Not by destructuring: `{ entries: _, ...rest }` reads `entries`, and a column
 * table's `entries` is a getter that makes an object per entry (a million on a huge replay).
 */
function tableRest(table: ConntrackTable): Omit<ConntrackTable, 'entries' | 'events'> {
  const rest: Record<string, unknown> = {};
  for (const key of Object.keys(table)) if (key !== 'entries' && key !== 'events') rest[key] = (table as unknown as Record<string, unknown>)[key];
  return rest as Omit<ConntrackTable, 'entries' | 'events'>;
}

/**
 * The column table {@link encodeConntrackColumns} encoded, in this thread: kinds re-packed
 * in this thread's kind table (the arrays given are rewritten in place), specials made
 * again as compact entries or plain data, the interner restored (same ids, same `idOf`).
 * Undefined when this thread's kind table has no room for a kind (the caller parses in-process).
 */
export function decodeConntrackColumns(enc: EncodedConntrackColumns): ParseResult<ConntrackTable> | undefined {
  const remap = new Int32Array(enc.headers.length);
  for (let j = 0; j < enc.headers.length; j++) {
    const h = enc.headers[j];
    if (h === undefined) continue;
    const k = packKind(h, -1);
    if (k < 0) return undefined;
    remap[j] = k;
  }
  const kind = enc.kind;
  for (let i = 0; i < enc.length; i++) {
    const k = kind[i]!;
    if (k >= 0) kind[i] = (k & ~KIND_MASK) | remap[k & KIND_MASK]!;
  }
  const special = decodeSpecials(enc.special);
  const events = enc.events === undefined ? undefined : decodeSpecials(enc.events);
  if (special === undefined || (enc.events !== undefined && events === undefined)) return undefined;
  const interner = ConntrackInterner.restore(enc.interner);
  const ids = internerIds(interner, enc.origSrc, enc.origDst, enc.replySrc, enc.replyDst);
  const rows = new ConntrackColumnRows(enc.length, enc.line, kind, enc.ports, enc.counters, special, ids, interner);
  // The table's keys in the parser's order (entries, events, trailers, …): its JSON is the same text.
  return { value: columnTable(rows, { ...(events !== undefined ? { events } : {}), ...enc.rest }), diagnostics: enc.diagnostics };
}
