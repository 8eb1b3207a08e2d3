/**
 * Compact conntrack entries: what the fast path (`conntrack-fast.ts`) returns for the
 * lines it reads. A million-entry table is the largest model nodescope holds, and on
 * Node's 64-bit heap (8-byte fields, 24-byte object headers) a plain-object entry with
 * its two tuples and its line text costs some 330 bytes. These classes hold the same
 * values in fewer fields, read through prototype getters:
 *
 * - an entry keeps `line`, `orig`, `reply` and one small integer `k`: the timeout and
 *   the index of its "kind" — family, protocol, state, flags, layout and the usual
 *   `mark=0 use=1`, packed in a header integer (`packHeader`) that few lines differ in,
 *   kept once in a module-wide table of up to 1024 kinds. Anything rarer (other
 *   mark/use values, secmark, zone, delta-time, id, a timeout above 24 days, a kind
 *   past the table's end) goes in the subclass' `x`; absent optional fields store nothing;
 * - `raw` is not stored: the fast path checked that the line is exactly what
 *   `formatConntrackEntry(entry, style)` prints for its layout (single spaces, the
 *   tool's padding, canonical numbers and addresses), so the getter formats it again.
 *   A line that is not (tabs, extra blanks, a leading zero…) keeps a flat copy of its
 *   text in `x.raw`. Nothing here refers to the capture text;
 * - a tuple keeps `src`, `dst` and both ports in one integer; with accounting on, a
 *   subclass adds both counters in one integer when they are small (packets < 2048,
 *   bytes < 2^20), else as bigints.
 *
 * The values read equal the general parser's entry for the same line field for field
 * (`conntrack-fast.test.ts`). What differs is what sees own properties only: object
 * spread, `Object.keys`, `structuredClone`, deep-equality helpers see the internal
 * fields, not the getters; use `plainConntrackEntry` (`src/model/conntrack.ts`) for a
 * plain copy. `JSON.stringify` gives the plain form (`toJSON`).
 */
import {
  CONNTRACK_STATES,
  plainConntrackEntry,
  plainConntrackTuple,
  type ConntrackEntry,
  type ConntrackFamily,
  type ConntrackFlag,
  type ConntrackProto,
  type ConntrackState,
  type ConntrackStyle,
  type ConntrackTuple,
} from '../model/conntrack.js';
import { PLAIN_FORM } from '../model/plain.js';
import { formatConntrackEntry } from './conntrack-format.js';
import { counterBigint } from './conntrack-scan.js';

/** The port-based protocols a compact entry can hold, with their numbers (linux/in.h); `h` stores the index. */
export const COMPACT_PROTOS: readonly (readonly [ConntrackProto, number])[] = [
  ['tcp', 6],
  ['udp', 17],
  ['sctp', 132],
  ['dccp', 33],
  ['udplite', 136],
];

/** State words in `h` order (index + 1; 0 for no state). */
export const COMPACT_STATES: readonly ConntrackState[] = [...CONNTRACK_STATES];

const FLAG_ORDER: readonly ConntrackFlag[] = ['UNREPLIED', 'ASSURED', 'OFFLOAD', 'HW_OFFLOAD'];

/** One shared frozen flag array per mask (1 UNREPLIED, 2 ASSURED, 4 OFFLOAD, 8 HW_OFFLOAD). */
export const COMPACT_FLAG_SETS: readonly (readonly ConntrackFlag[])[] = Array.from({ length: 16 }, (_, mask) =>
  Object.freeze(FLAG_ORDER.filter((_f, k) => (mask & (1 << k)) !== 0)),
);

/** Layouts in `h` order; 0 means "the text is kept in `x.raw`". */
const STYLES: readonly (ConntrackStyle | undefined)[] = [undefined, 'conntrack', 'extended', 'proc'];

// Bits of `h`.
const H_V6 = 1;
const H_PROTO_SHIFT = 1; // 3 bits: index in COMPACT_PROTOS
const H_STATE_SHIFT = 4; // 5 bits: index in COMPACT_STATES + 1
const H_FLAGS_SHIFT = 9; // 4 bits: flag mask
const H_STYLE_SHIFT = 13; // 2 bits: index in STYLES
const H_USE_SHIFT = 15; // 3 bits: 0 absent, 1..6 use = code - 1, 7 in x
const H_MARK_SHIFT = 18; // 2 bits: 0 absent, 1 mark = 0, 2 in x

/** Layout code for {@link packHeader}: 0 when the line's text must be kept. */
export type CompactStyleCode = 0 | 1 | 2 | 3;

/** Use values up to this are held in `h`. */
const USE_INLINE_MAX = 5;

/**
 * The header integer of a compact entry (see the module doc); `protoIndex` into
 * {@link COMPACT_PROTOS}, `stateIndex` into {@link COMPACT_STATES} or -1.
 */
export function packHeader(
  v6: boolean,
  protoIndex: number,
  stateIndex: number,
  flagMask: number,
  style: CompactStyleCode,
  mark: number | undefined,
  use: number | undefined,
): number {
  const useCode = use === undefined ? 0 : use <= USE_INLINE_MAX ? use + 1 : 7;
  const markCode = mark === undefined ? 0 : mark === 0 ? 1 : 2;
  return (
    (v6 ? H_V6 : 0) |
    (protoIndex << H_PROTO_SHIFT) |
    ((stateIndex + 1) << H_STATE_SHIFT) |
    (flagMask << H_FLAGS_SHIFT) |
    (style << H_STYLE_SHIFT) |
    (useCode << H_USE_SHIFT) |
    (markCode << H_MARK_SHIFT)
  );
}

/** True when an entry with this header needs {@link CompactExtras} (text kept, or mark/use not inline). */
export function headerNeedsExtras(h: number): boolean {
  return ((h >>> H_STYLE_SHIFT) & 3) === 0 || ((h >>> H_USE_SHIFT) & 7) === 7 || ((h >>> H_MARK_SHIFT) & 3) === 2;
}

// The kinds: header integers by index (module-wide; a capture has a handful).
const KIND_HEADERS: number[] = [];
const KIND_OF = new Map<number, number>();
const MAX_KINDS = 1024;
const K_TIMEOUT_SHIFT = 10;
const KIND_MEMO_SIZE = 64;
// Header integers are ≥ 0 (20 bits), so -1 marks an empty memo slot.
const KIND_MEMO_H = new Int32Array(KIND_MEMO_SIZE).fill(-1);
const KIND_MEMO_K = new Int32Array(KIND_MEMO_SIZE);
/** Largest timeout a `k` holds: (timeout + 1) in 21 bits, so `k` stays a small integer. */
const K_TIMEOUT_MAX = (1 << 21) - 2;

/**
 * The `k` of a {@link CompactConntrackEntry} with header `h` and `timeout` (seconds,
 * -1 when absent); -1 when they do not fit (a timeout above 2,097,150 s, or a 1025th
 * kind): such an entry keeps them in {@link CompactExtras}.
 */
export function packKind(h: number, timeout: number): number {
  if (timeout > K_TIMEOUT_MAX) return -1;
  // Consecutive lines are mostly of a few kinds: a small direct-mapped memo before the Map.
  const m = (h ^ (h >>> 7) ^ (h >>> 13)) & (KIND_MEMO_SIZE - 1);
  if (KIND_MEMO_H[m] === h) return KIND_MEMO_K[m]! | ((timeout + 1) << K_TIMEOUT_SHIFT);
  let kind = KIND_OF.get(h);
  if (kind === undefined) {
    if (KIND_HEADERS.length >= MAX_KINDS) return -1;
    kind = KIND_HEADERS.length;
    KIND_HEADERS.push(h);
    KIND_OF.set(h, kind);
  }
  KIND_MEMO_H[m] = h;
  KIND_MEMO_K[m] = kind;
  return kind | ((timeout + 1) << K_TIMEOUT_SHIFT);
}

/** Counters too large to pack: both as bigints (u64). Exported for the fast path's own tuple store, never built outside this module but by {@link packCounters}. */
export class CounterPair {
  constructor(
    readonly packets: bigint,
    readonly bytes: bigint,
  ) {}
}

const BYTES_LIMIT = 1 << 20;
const PACKETS_LIMIT = 1 << 11;

/**
 * The `c` field of a {@link CompactCountedTuple}: packets and bytes (numbers, exact
 * up to 2^53, or -1 with the value in `big*`) in one small integer when they are small,
 * else both as bigints.
 */
export function packCounters(packets: number, bytes: number, bigPackets?: bigint, bigBytes?: bigint): number | CounterPair {
  if (packets >= 0 && bytes >= 0 && packets < PACKETS_LIMIT && bytes < BYTES_LIMIT) return packets * BYTES_LIMIT + bytes;
  return new CounterPair(bigPackets ?? BigInt(packets), bigBytes ?? BigInt(bytes));
}

/**
 * One direction of a port-based flow (see the module doc), without counters (the
 * kernel's default, `nf_conntrack_acct=0`). `sport`, `dport`, `packets`, `bytes` are
 * getters; `src`, `dst` own fields. Never throws.
 */
export class CompactConntrackTuple implements ConntrackTuple {
  readonly src: string;
  readonly dst: string;
  /** sport × 65536 + dport, as an int32. */
  private readonly p: number;

  constructor(src: string, dst: string, sport: number, dport: number) {
    this.src = src;
    this.dst = dst;
    this.p = (sport << 16) | dport;
  }

  get sport(): number {
    return this.p >>> 16;
  }

  get dport(): number {
    return this.p & 0xffff;
  }

  get packets(): bigint | undefined {
    return undefined;
  }

  get bytes(): bigint | undefined {
    return undefined;
  }

  /** The plain form for `JSON.stringify`. */
  toJSON(): ConntrackTuple {
    return plainConntrackTuple(this);
  }

  /** The plain form for `toPlain` (src/model/plain.ts). */
  [PLAIN_FORM](): ConntrackTuple {
    return plainConntrackTuple(this);
  }
}

/** A {@link CompactConntrackTuple} with its direction's counters (packets, bytes). */
export class CompactCountedTuple extends CompactConntrackTuple {
  /** packets × 2^20 + bytes, or a {@link CounterPair} (see packCounters). */
  private readonly c: number | CounterPair;

  constructor(src: string, dst: string, sport: number, dport: number, counters: number | CounterPair) {
    super(src, dst, sport, dport);
    this.c = counters;
  }

  override get packets(): bigint {
    const c = this.c;
    return typeof c === 'number' ? counterBigint(Math.floor(c / BYTES_LIMIT)) : c.packets;
  }

  override get bytes(): bigint {
    const c = this.c;
    return typeof c === 'number' ? counterBigint(c % BYTES_LIMIT) : c.bytes;
  }
}

/** What a compact entry holds besides its header: values not inline, and the text when it is kept. */
export class CompactExtras {
  constructor(
    /** The header integer (see packHeader). */
    readonly h: number,
    /** Timeout in seconds, -1 when absent. */
    readonly t: number,
    readonly raw: string | undefined,
    readonly mark: number | undefined,
    readonly secmark: number | undefined,
    readonly zone: number | undefined,
    readonly deltaTime: number | undefined,
    readonly use: number | undefined,
    readonly id: number | undefined,
  ) {}
}

/**
 * A conntrack entry of the common shape, as the fast path reads it (see the module
 * doc). `line`, `orig`, `reply` are own fields; everything else getters. Never throws.
 */
export class CompactConntrackEntry implements ConntrackEntry {
  readonly line: number;
  readonly orig: CompactConntrackTuple;
  readonly reply: CompactConntrackTuple;
  /** Kind index and timeout (see packKind). */
  private readonly k: number;

  constructor(line: number, orig: CompactConntrackTuple, reply: CompactConntrackTuple, k: number) {
    this.line = line;
    this.orig = orig;
    this.reply = reply;
    this.k = k;
  }

  /** Family, protocol, state, flags, layout, mark and use (see packHeader). */
  protected get h(): number {
    return KIND_HEADERS[this.k & (MAX_KINDS - 1)]!;
  }

  /** Timeout in seconds, -1 when absent. */
  protected get t(): number {
    return (this.k >>> K_TIMEOUT_SHIFT) - 1;
  }

  /** The line as printed, formatted again in the layout it was printed in. */
  get raw(): string {
    return formatConntrackEntry(this, STYLES[(this.h >>> H_STYLE_SHIFT) & 3] ?? 'extended');
  }

  get family(): ConntrackFamily {
    return (this.h & H_V6) !== 0 ? 'ipv6' : 'ipv4';
  }

  get proto(): ConntrackProto {
    return COMPACT_PROTOS[(this.h >>> H_PROTO_SHIFT) & 7]![0];
  }

  get protoNum(): number {
    return COMPACT_PROTOS[(this.h >>> H_PROTO_SHIFT) & 7]![1];
  }

  get timeout(): number | undefined {
    return this.t < 0 ? undefined : this.t;
  }

  get state(): ConntrackState | undefined {
    const k = (this.h >>> H_STATE_SHIFT) & 31;
    return k === 0 ? undefined : COMPACT_STATES[k - 1];
  }

  get flags(): readonly ConntrackFlag[] {
    return COMPACT_FLAG_SETS[(this.h >>> H_FLAGS_SHIFT) & 15]!;
  }

  get mark(): number | undefined {
    return ((this.h >>> H_MARK_SHIFT) & 3) === 0 ? undefined : 0;
  }

  get use(): number | undefined {
    const k = (this.h >>> H_USE_SHIFT) & 7;
    return k === 0 ? undefined : k - 1;
  }

  get secmark(): number | undefined {
    return undefined;
  }

  get zone(): number | undefined {
    return undefined;
  }

  get deltaTime(): number | undefined {
    return undefined;
  }

  get id(): number | undefined {
    return undefined;
  }

  /** The plain form for `JSON.stringify`. */
  toJSON(): ConntrackEntry {
    return plainConntrackEntry(this);
  }

  /** The plain form for `toPlain` (src/model/plain.ts). */
  [PLAIN_FORM](): ConntrackEntry {
    return plainConntrackEntry(this);
  }
}

/** A compact entry with {@link CompactExtras}: rarer meta fields, or a line kept as text. */
export class CompactConntrackEntryWithExtras extends CompactConntrackEntry {
  private readonly x: CompactExtras;

  constructor(line: number, orig: CompactConntrackTuple, reply: CompactConntrackTuple, x: CompactExtras) {
    super(line, orig, reply, 0);
    this.x = x;
  }

  protected override get h(): number {
    return this.x.h;
  }

  protected override get t(): number {
    return this.x.t;
  }

  override get raw(): string {
    return this.x.raw ?? super.raw;
  }

  override get mark(): number | undefined {
    return this.x.mark;
  }

  override get use(): number | undefined {
    return this.x.use;
  }

  override get secmark(): number | undefined {
    return this.x.secmark;
  }

  override get zone(): number | undefined {
    return this.x.zone;
  }

  override get deltaTime(): number | undefined {
    return this.x.deltaTime;
  }

  override get id(): number | undefined {
    return this.x.id;
  }
}

// Reading the stored fields, for the transfer codec (src/parsers/conntrack-transfer.ts)
// that moves a table between threads: structured clone keeps own fields only, no classes.

/** True when `e` is exactly a {@link CompactConntrackEntry} (not the subclass with extras, not plain data). */
export function isCompactEntry(e: ConntrackEntry): e is CompactConntrackEntry {
  return e.constructor === CompactConntrackEntry;
}

/** The stored `k` of a compact entry (kind index | (timeout + 1) << 10, see packKind). */
export function compactEntryKind(e: CompactConntrackEntry): number {
  return (e as unknown as { readonly k: number }).k;
}

/** The stored extras of exactly a {@link CompactConntrackEntryWithExtras}; undefined for any other entry. */
export function compactEntryExtras(e: ConntrackEntry): CompactExtras | undefined {
  return e.constructor === CompactConntrackEntryWithExtras ? (e as unknown as { readonly x: CompactExtras }).x : undefined;
}

/** The header integer of kind index `kind` in this thread's kind table (see packKind). */
export function kindHeader(kind: number): number | undefined {
  return KIND_HEADERS[kind];
}

/** True when `t` is exactly a {@link CompactConntrackTuple} or {@link CompactCountedTuple}. */
export function isCompactTuple(t: ConntrackTuple): t is CompactConntrackTuple {
  return t.constructor === CompactConntrackTuple || t.constructor === CompactCountedTuple;
}

/** A compact tuple's counters as stored: undefined without counters, a number (packets × 2^20 + bytes), or both as bigints. */
export function compactTupleCounters(t: CompactConntrackTuple): number | { readonly packets: bigint; readonly bytes: bigint } | undefined {
  return t instanceof CompactCountedTuple ? (t as unknown as { readonly c: number | CounterPair }).c : undefined;
}

/** A compact tuple made again from {@link compactTupleCounters}' value (same class, same fields). */
export function makeCompactTuple(src: string, dst: string, sport: number, dport: number, counters: number | readonly [bigint, bigint] | undefined): CompactConntrackTuple {
  if (counters === undefined) return new CompactConntrackTuple(src, dst, sport, dport);
  return new CompactCountedTuple(src, dst, sport, dport, typeof counters === 'number' ? counters : new CounterPair(counters[0], counters[1]));
}

/** A compact tuple with counters as {@link packCounters} gave them (undefined: none). */
export function makeCompactTupleFromCounters(src: string, dst: string, sport: number, dport: number, counters: number | CounterPair | undefined): CompactConntrackTuple {
  return counters === undefined ? new CompactConntrackTuple(src, dst, sport, dport) : new CompactCountedTuple(src, dst, sport, dport, counters);
}

/** The protocol of a compact entry's stored `k` (see packKind), read without the entry. */
export function compactKindProto(k: number): ConntrackProto {
  return COMPACT_PROTOS[(KIND_HEADERS[k & (MAX_KINDS - 1)]! >>> H_PROTO_SHIFT) & 7]![0];
}

/** The state of a compact entry's stored `k` (see packKind), read without the entry. */
export function compactKindState(k: number): ConntrackState | undefined {
  const code = (KIND_HEADERS[k & (MAX_KINDS - 1)]! >>> H_STATE_SHIFT) & 31;
  return code === 0 ? undefined : COMPACT_STATES[code - 1];
}

/** The flags of a compact entry's stored `k`, read without the entry (the shared frozen arrays the entry gives). */
export function compactKindFlags(k: number): readonly ConntrackFlag[] {
  return COMPACT_FLAG_SETS[(KIND_HEADERS[k & (MAX_KINDS - 1)]! >>> H_FLAGS_SHIFT) & 15]!;
}

/** The mark of a compact entry's stored `k` (0 or absent: other marks need extras), read without the entry. */
export function compactKindMark(k: number): number | undefined {
  return ((KIND_HEADERS[k & (MAX_KINDS - 1)]! >>> H_MARK_SHIFT) & 3) === 0 ? undefined : 0;
}

/** The timeout (seconds) of a compact entry's stored `k`, read without the entry. */
export function compactKindTimeout(k: number): number | undefined {
  const t = (k >>> K_TIMEOUT_SHIFT) - 1;
  return t < 0 ? undefined : t;
}

/** Packets (or bytes) of counters packed by {@link packCounters} as a number (-1: none): undefined for none. */
export function packedCounter(c: number, which: 'packets' | 'bytes'): number | undefined {
  if (c < 0) return undefined;
  return which === 'packets' ? Math.floor(c / BYTES_LIMIT) : c % BYTES_LIMIT;
}
