/**
 * Scanning primitives for the conntrack line parser: numbers and words read
 * in place from `s[from, to)` with `charCodeAt` (no substring, no regular
 * expression), and the per-parse address memo.
 */
import { flatCopy, flatSlice } from '../flat-string.js';
import { formatIpv6Groups, parseIpv6Groups } from '../model/conntrack.js';
import { ipv4NumberAt } from '../net/address.js';

// The IPv4 table starts small (most captures are small) and doubles as it fills
// (a million-flow table of a large cluster has some 300,000 distinct addresses).
const V4_MIN_SLOTS = 1 << 12;
// Deferred lookups (`defer`): the queue's first size; a reader resolves it about this often.
const Q_FIRST = 4096;

/**
 * A {@link ConntrackInterner}'s lookup state as plain data (structured-clonable), see `state()`.
 * `v4`, when present, is a copy of its canonical IPv4 table (open addressing, slot k: [2k] the
 * address as int32, [2k + 1] id + 1, 0 empty; `count` filled slots): `restore` adopts it instead
 * of hashing every IPv4 text again.
 */
export interface ConntrackInternerState {
  readonly texts: readonly string[];
  readonly v6: readonly (readonly [string, number])[];
  readonly odd: readonly (readonly [string, number])[];
  readonly v4?: { readonly slots: Int32Array<ArrayBuffer>; readonly count: number };
}

/**
 * Per-parse numbering of address text: entries with equal addresses share one string,
 * which keeps a million-entry table compact (small bigint counters likewise come from
 * one table), and every distinct text gets an id (0, 1, 2… in order of first sight), so
 * the table's address ids (src/model/conntrack-ids.ts) come with the parse. `lastId` is
 * the id of the address last returned. Not bounded: the ids must stay distinct for the
 * whole table (the table already holds each distinct text once; the ids add ~16 bytes
 * per distinct address).
 */
export class ConntrackInterner {
  // IPv4 by value in an open-addressing table (a Map costs a hashing builtin call per
  // address, four per line); slot k is [2k] the key, [2k + 1] id + 1 (0: empty).
  private v4Slots = new Int32Array(2 * V4_MIN_SLOTS);
  private v4Shift = 32 - Math.log2(V4_MIN_SLOTS);
  private v4Count = 0;
  // IPv6 spellings (as printed and canonical) → id of the canonical text.
  private readonly v6 = new Map<string, number>();
  // IPv4 spellings that are not canonical (an octet with a leading zero) → id.
  private readonly odd = new Map<string, number>();
  /** Text by id (complete once the queue of {@link defer}red lookups is resolved). */
  readonly texts: string[] = [];
  /** The id of the address text last returned by {@link address} or {@link ipv4}. */
  lastId = -1;
  // Canonical IPv4 lookups queued by `defer`, numbered by `resolve` in queue order: value,
  // span in its text, the text, and (once resolved) the id. `qDone` are resolved.
  private qKey = new Int32Array(Q_FIRST);
  private qFrom = new Int32Array(Q_FIRST);
  private qTo = new Int32Array(Q_FIRST);
  private qId = new Int32Array(Q_FIRST);
  private qText: (string | Uint8Array)[] = [];
  private qLen = 0;
  private qDone = 0;
  /** What the last `resolve`'s first pass read (kept so the pass is not optimized away). */
  private touched = 0;

  /**
   * Queues the lookup of the canonical IPv4 spelling `s[from, to)` (value `key` as int32)
   * and returns its place in the queue: its id is {@link queuedId} after {@link resolve}.
   * Every other method resolves the queue first, so ids are numbered exactly in call order,
   * as {@link ipv4} would number them one by one. Why: on a table of 10^5+ addresses each
   * lookup is a cache miss; a batch of them touched in one tight pass overlaps the misses.
   * `s` may be the line's bytes (latin1: `conntrack-bytes.ts`), held until {@link clearQueue}.
   */
  defer(s: string | Uint8Array, from: number, to: number, key: number): number {
    const q = this.qLen;
    if (q === this.qKey.length) this.growQueue();
    this.qKey[q] = key;
    this.qFrom[q] = from;
    this.qTo[q] = to;
    this.qText[q] = s;
    this.qLen = q + 1;
    return q;
  }

  /** How many lookups are queued (resolved or not) since the last {@link clearQueue}. */
  get queued(): number {
    return this.qLen;
  }

  /** Numbers every queued lookup not yet resolved, in queue order. Never throws. */
  resolve(): void {
    const from = this.qDone;
    const to = this.qLen;
    if (from === to) return;
    this.qDone = to;
    // First pass: only touch each lookup's first slot (independent loads, no branch), so the
    // cache misses overlap; the lookups then find their slots in the cache.
    const slots = this.v4Slots;
    const shift = this.v4Shift;
    const keys = this.qKey;
    let acc = 0;
    for (let q = from; q < to; q++) acc ^= slots[((Math.imul(keys[q]!, 0x9e3779b1) >>> shift) << 1) + 1]!;
    this.touched = acc;
    for (let q = from; q < to; q++) this.qId[q] = this.ipv4Id(this.qText[q]!, this.qFrom[q]!, this.qTo[q]!, keys[q]!);
  }

  /** The id of queued lookup `q` (its {@link defer} result); valid after {@link resolve}, until {@link clearQueue}. */
  queuedId(q: number): number {
    return this.qId[q]!;
  }

  /** Resolves, then forgets the queue (its places and the texts it held). */
  clearQueue(): void {
    this.resolve();
    this.qLen = this.qDone = 0;
    this.qText.length = 0;
  }

  private growQueue(): void {
    const size = this.qKey.length * 2;
    const grownCopy = (a: Int32Array): Int32Array<ArrayBuffer> => {
      const b = new Int32Array(size);
      b.set(a);
      return b;
    };
    this.qKey = grownCopy(this.qKey);
    this.qFrom = grownCopy(this.qFrom);
    this.qTo = grownCopy(this.qTo);
    this.qId = grownCopy(this.qId);
  }

  /**
   * Canonical address text for `s[from, to)`, or `undefined` when it is not an
   * address. IPv4 is looked up by its value, so a repeated address costs no string.
   */
  address(s: string, from: number, to: number): string | undefined {
    this.resolve();
    const n = ipv4NumberAt(s, from, to);
    if (n >= 0) return this.ipv4(s, from, to, n | 0, !leadingZeroOctet(s, from, to));
    const text = s.slice(from, to);
    if (text.indexOf(':') < 0) return undefined;
    const hit = this.v6.get(text);
    if (hit !== undefined) {
      this.lastId = hit;
      return this.texts[hit]!;
    }
    const groups = parseIpv6Groups(text);
    if (groups === undefined) return undefined;
    // Built by concatenation: one flat string, not a tree of pieces, is what entries keep.
    const canonical = flatCopy(formatIpv6Groups(groups));
    // One id (and one string) for the /proc (expanded) and tool (compressed) spellings.
    let id = this.v6.get(canonical);
    if (id === undefined) {
      id = this.newId(canonical);
      this.v6.set(canonical, id);
    }
    this.v6.set(flatCopy(text), id);
    this.lastId = id;
    return this.texts[id]!;
  }

  /**
   * The text of the IPv4 address `s[from, to)`, whose value (as int32) is `key`.
   * `canonical` spellings (no octet with a leading zero, as conntrack prints them) are
   * numbered by value, others by their text, so a spelling always gets back its own text.
   */
  ipv4(s: string, from: number, to: number, key: number, canonical: boolean): string {
    this.resolve();
    if (!canonical) {
      const text = flatSlice(s, from, to);
      let id = this.odd.get(text);
      if (id === undefined) {
        id = this.newId(text);
        this.odd.set(text, id);
      }
      this.lastId = id;
      return this.texts[id]!;
    }
    return this.texts[this.ipv4Id(s, from, to, key)]!;
  }

  /**
   * The id of the canonical IPv4 spelling `s[from, to)` (no octet with a leading zero),
   * whose value (as int32) is `key`: {@link ipv4}'s numbering without reading the text
   * back (the column store keeps ids only). Sets {@link lastId} too. Does not resolve the
   * queue: call it only with nothing queued, or from {@link resolve}. `s` may be bytes (ASCII).
   */
  ipv4Id(s: string | Uint8Array, from: number, to: number, key: number): number {
    const slots = this.v4Slots;
    const mask = slots.length - 2;
    // Key and id side by side: one cache line per probe on a table of 10^5+ addresses.
    let slot = (Math.imul(key, 0x9e3779b1) >>> this.v4Shift) << 1;
    for (;;) {
      const hit = slots[slot + 1]!;
      if (hit === 0) break;
      if (slots[slot] === key) return (this.lastId = hit - 1);
      slot = (slot + 2) & mask;
    }
    // A copy: a slice of 13+ characters would keep the whole capture alive.
    const text = typeof s !== 'string' ? bytesText(s, from, to) : to - from <= 15 ? flatShort(s, from, to) : flatSlice(s, from, to);
    const id = this.newId(text);
    if (this.v4Count >= (slots.length >> 3) * 3) {
      this.grow();
      this.put(key, id);
    } else {
      slots[slot] = key;
      slots[slot + 1] = id + 1;
    }
    this.v4Count++;
    return (this.lastId = id);
  }

  /**
   * The id of address text `text` as entries hold it (any text this interner returned);
   * -1 when it has not been seen.
   */
  idOf(text: string): number {
    this.resolve();
    if (text.indexOf(':') >= 0) return this.v6.get(text) ?? this.odd.get(text) ?? -1;
    const n = ipv4NumberAt(text, 0, text.length);
    if (n < 0 || leadingZeroOctet(text, 0, text.length)) return this.odd.get(text) ?? -1;
    const slots = this.v4Slots;
    const mask = slots.length - 2;
    const key = n | 0;
    let slot = (Math.imul(key, 0x9e3779b1) >>> this.v4Shift) << 1;
    for (;;) {
      const hit = slots[slot + 1]!;
      if (hit === 0) return -1;
      if (slots[slot] === key) return hit - 1;
      slot = (slot + 2) & mask;
    }
  }

  /**
   * {@link idOf}, numbering a text not seen before by the text itself (what an entry holds
   * came through this interner, so that is only a guard: distinct texts keep distinct ids).
   */
  intern(text: string): number {
    this.resolve();
    const id = this.idOf(text);
    if (id >= 0) return id;
    const k = this.newId(text);
    this.odd.set(text, k);
    return k;
  }

  /**
   * What a copy of this interner in another thread needs ({@link restore}): the texts by
   * id and the spellings looked up by text (IPv6 as printed and canonical, non-canonical
   * IPv4, texts numbered by {@link intern}). Canonical IPv4 is every other text.
   */
  state(): ConntrackInternerState {
    this.resolve();
    return { texts: this.texts, v6: [...this.v6], odd: [...this.odd], v4: { slots: this.v4Slots.slice(), count: this.v4Count } };
  }

  /**
   * An interner that answers {@link idOf} exactly as the one whose {@link state} this is
   * (same ids, same texts); it may go on numbering new addresses. The state's IPv4 table is
   * adopted (not copied: the state must not be used again) when its shape is one this class
   * makes (a power-of-two slot count, at least the first size, a count that fits); otherwise,
   * or without one, the table is made again from the texts. Never throws.
   */
  static restore(state: ConntrackInternerState): ConntrackInterner {
    const adopted = ConntrackInterner.adoptV4(state);
    if (adopted) return adopted;
    return ConntrackInterner.restoreByTexts(state);
  }

  /** {@link restore} with the IPv4 table made again from the texts (the state's `v4` not read): the reference of the adopted table. */
  static restoreByTexts(state: ConntrackInternerState): ConntrackInterner {
    const out = new ConntrackInterner();
    for (const text of state.texts) out.texts.push(text);
    const byText = new Uint8Array(state.texts.length);
    for (const [text, id] of state.v6) {
      out.v6.set(text, id);
      byText[id] = 1;
    }
    for (const [text, id] of state.odd) {
      out.odd.set(text, id);
      byText[id] = 1;
    }
    for (let id = 0; id < state.texts.length; id++) {
      if (byText[id] === 1) continue;
      const text = state.texts[id]!;
      const key = ipv4NumberAt(text, 0, text.length) | 0;
      if (out.v4Count >= (out.v4Slots.length >> 3) * 3) out.grow();
      out.put(key, id);
      out.v4Count++;
    }
    return out;
  }

  private static adoptV4(state: ConntrackInternerState): ConntrackInterner | undefined {
    const v4 = state.v4;
    if (v4 === undefined) return undefined;
    const slotCount = v4.slots.length >> 1;
    // At most the fill at which `grow` doubles the table (so a free slot always ends a probe), and no more than the texts.
    const fits = v4.count >= 0 && v4.count <= state.texts.length && v4.count <= ((2 * slotCount) >> 3) * 3;
    if (!(v4.slots instanceof Int32Array) || slotCount < V4_MIN_SLOTS || (slotCount & (slotCount - 1)) !== 0 || v4.slots.length !== 2 * slotCount || !fits) return undefined;
    const out = new ConntrackInterner();
    for (const text of state.texts) out.texts.push(text);
    for (const [text, id] of state.v6) out.v6.set(text, id);
    for (const [text, id] of state.odd) out.odd.set(text, id);
    out.v4Slots = v4.slots;
    out.v4Shift = 32 - Math.log2(slotCount);
    out.v4Count = v4.count;
    return out;
  }

  private newId(text: string): number {
    const id = this.texts.length;
    this.texts.push(text);
    return id;
  }

  private grow(): void {
    const old = this.v4Slots;
    const size = old.length; // slots: twice as many as before
    this.v4Slots = new Int32Array(2 * size);
    this.v4Shift = 32 - Math.log2(size);
    for (let k = 0; k < old.length; k += 2) {
      const id = old[k + 1]!;
      if (id !== 0) this.put(old[k]!, id - 1);
    }
  }

  private put(key: number, id: number): void {
    const slots = this.v4Slots;
    const mask = slots.length - 2;
    let slot = (Math.imul(key, 0x9e3779b1) >>> this.v4Shift) << 1;
    while (slots[slot + 1] !== 0) slot = (slot + 2) & mask;
    slots[slot] = key;
    slots[slot + 1] = id + 1;
  }
}

/** True when an octet of the dotted quad `s[from, to)` has a leading zero (`10.0.0.01`). */
function leadingZeroOctet(s: string, from: number, to: number): boolean {
  for (let i = from; i < to - 1; i++) {
    if (s.charCodeAt(i) === 48 && (i === from || s.charCodeAt(i - 1) === 46) && s.charCodeAt(i + 1) !== 46) return true;
  }
  return false;
}

// Counters below 65536 (most packet and many byte counts) share one bigint each,
// made on first use: a million-entry table then holds a few thousand counters, not millions.
const SMALL_BIGINT_LIMIT = 1 << 16;
const SMALL_BIGINTS: (bigint | undefined)[] = new Array<bigint | undefined>(SMALL_BIGINT_LIMIT).fill(undefined);

/**
 * {@link flatSlice} for at most 15 characters (a dotted quad), made in one step:
 * `String.fromCharCode` of the characters gives a new flat string.
 */
function flatShort(s: string, from: number, to: number): string {
  const n = to - from;
  if (n < 13) return s.slice(from, to);
  const c = (k: number) => s.charCodeAt(from + k);
  if (n === 13) return String.fromCharCode(c(0), c(1), c(2), c(3), c(4), c(5), c(6), c(7), c(8), c(9), c(10), c(11), c(12));
  if (n === 14) return String.fromCharCode(c(0), c(1), c(2), c(3), c(4), c(5), c(6), c(7), c(8), c(9), c(10), c(11), c(12), c(13));
  return String.fromCharCode(c(0), c(1), c(2), c(3), c(4), c(5), c(6), c(7), c(8), c(9), c(10), c(11), c(12), c(13), c(14));
}

/** The latin1 text of `b[from, to)` (a dotted quad: at most 15 bytes), as one flat string. */
function bytesText(b: Uint8Array, from: number, to: number): string {
  const n = to - from;
  const c = (k: number) => b[from + k]!;
  if (n === 7) return String.fromCharCode(c(0), c(1), c(2), c(3), c(4), c(5), c(6));
  if (n === 8) return String.fromCharCode(c(0), c(1), c(2), c(3), c(4), c(5), c(6), c(7));
  if (n === 9) return String.fromCharCode(c(0), c(1), c(2), c(3), c(4), c(5), c(6), c(7), c(8));
  if (n === 10) return String.fromCharCode(c(0), c(1), c(2), c(3), c(4), c(5), c(6), c(7), c(8), c(9));
  if (n === 11) return String.fromCharCode(c(0), c(1), c(2), c(3), c(4), c(5), c(6), c(7), c(8), c(9), c(10));
  if (n === 12) return String.fromCharCode(c(0), c(1), c(2), c(3), c(4), c(5), c(6), c(7), c(8), c(9), c(10), c(11));
  if (n === 13) return String.fromCharCode(c(0), c(1), c(2), c(3), c(4), c(5), c(6), c(7), c(8), c(9), c(10), c(11), c(12));
  if (n === 14) return String.fromCharCode(c(0), c(1), c(2), c(3), c(4), c(5), c(6), c(7), c(8), c(9), c(10), c(11), c(12), c(13));
  if (n === 15) return String.fromCharCode(c(0), c(1), c(2), c(3), c(4), c(5), c(6), c(7), c(8), c(9), c(10), c(11), c(12), c(13), c(14));
  return String.fromCharCode(...b.subarray(from, to));
}

/** The bigint of a counter `n` (0 ≤ n ≤ 2^53): one shared bigint each below 65536. */
export function counterBigint(n: number): bigint {
  if (n >= SMALL_BIGINT_LIMIT) return BigInt(n);
  return (SMALL_BIGINTS[n] ??= BigInt(n));
}

/** Largest unsigned 32-bit value (mark, id, use, zone, timeout are `%u`). */
export const U32_MAX = 4294967295;

/** True for a space or a tab (the separators conntrack and `cat -n` print). */
export function isSpace(c: number): boolean {
  return c === 32 || c === 9;
}

/** Decimal digits in `s[from, to)` → number; -1 when empty, not all digits, or above `max`. */
export function parseUint(s: string, from: number, to: number, max: number): number {
  if (from >= to || to - from > 10) return -1;
  let v = 0;
  for (let i = from; i < to; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return -1;
    v = v * 10 + (c - 48);
  }
  return v > max ? -1 : v;
}

/** `0x`-prefixed hex in `s[from, to)` → number (GRE keys); -1 when not one or above `max`. */
export function parseHex(s: string, from: number, to: number, max: number): number {
  if (to - from < 3 || s.charCodeAt(from) !== 48 || (s.charCodeAt(from + 1) | 32) !== 120) return -1;
  if (to - from > 10) return -1;
  let v = 0;
  for (let i = from + 2; i < to; i++) {
    const c = s.charCodeAt(i);
    let h: number;
    if (c >= 48 && c <= 57) h = c - 48;
    else if (c >= 97 && c <= 102) h = c - 87;
    else if (c >= 65 && c <= 70) h = c - 55;
    else return -1;
    v = v * 16 + h;
  }
  return v > max ? -1 : v;
}

/** Decimal counter → bigint (u64); undefined when not digits or above 2^64-1. */
export function parseCounter(s: string, from: number, to: number): bigint | undefined {
  const n = to - from;
  if (n <= 0 || n > 20) return undefined;
  let v = 0;
  for (let i = from; i < to; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return undefined;
    v = v * 10 + (c - 48);
  }
  // Up to 15 digits the double is exact; beyond, let BigInt read the digits.
  if (n <= 15) {
    if (v >= SMALL_BIGINT_LIMIT) return BigInt(v);
    return (SMALL_BIGINTS[v] ??= BigInt(v));
  }
  const big = BigInt(s.slice(from, to));
  return big > 0xffffffffffffffffn ? undefined : big;
}

/** Index just past the word starting at `i` (stops at a space or tab, at most `end`). */
export function wordEnd(s: string, i: number, end: number): number {
  while (i < end && !isSpace(s.charCodeAt(i))) i++;
  return i;
}

/** Index of the first non-blank at or after `i` (at most `end`). */
export function skipSpaces(s: string, i: number, end: number): number {
  while (i < end && isSpace(s.charCodeAt(i))) i++;
  return i;
}

/** True when `s[from, to)` is a state word: `A-Z` then `A-Z`, `0-9`, `_`. */
export function allUpperWord(s: string, from: number, to: number): boolean {
  if (from >= to) return false;
  const first = s.charCodeAt(from);
  if (first < 65 || first > 90) return false;
  for (let i = from + 1; i < to; i++) {
    const c = s.charCodeAt(i);
    if (!((c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95)) return false;
  }
  return true;
}
