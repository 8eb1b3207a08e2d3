/**
 * Scanning primitives for the conntrack line parser: numbers and words read
 * in place from `s[from, to)` with `charCodeAt` (no substring, no regular
 * expression), and the per-parse address memo.
 */
import { flatCopy, flatSlice } from '../flat-string.js';
import { formatIpv6Groups, parseIpv6Groups } from '../model/conntrack.js';
import { ipv4NumberAt } from '../net/address.js';

// The IPv4 table starts small (most captures are small) and doubles up to this many
// slots (a million-flow table of a large cluster has some 300,000 distinct addresses).
const V4_MIN_SLOTS = 1 << 12;
const V4_MAX_SLOTS = 1 << 20;

/**
 * Per-parse memo of canonical address text: entries with equal addresses share
 * one string, which keeps a million-entry table compact (small bigint counters
 * likewise come from one table). Bounded, so a table of all-distinct addresses
 * does not grow it without limit.
 */
export class ConntrackInterner {
  // IPv4 by value in an open-addressing table (a Map costs a hashing builtin call per
  // address, four per line); emptied when three quarters full at its largest.
  private v4Keys = new Int32Array(V4_MIN_SLOTS);
  private v4Texts: (string | undefined)[] = new Array<string | undefined>(V4_MIN_SLOTS).fill(undefined);
  private v4Shift = 32 - Math.log2(V4_MIN_SLOTS);
  private v4Count = 0;
  private readonly v6 = new Map<string, string>();
  private static readonly MAX = 1 << 16;

  /**
   * Canonical address text for `s[from, to)`, or `undefined` when it is not an
   * address. IPv4 is looked up by its value, so a repeated address costs no string.
   */
  address(s: string, from: number, to: number): string | undefined {
    const n = ipv4NumberAt(s, from, to);
    if (n >= 0) return this.ipv4(s, from, to, n | 0, !leadingZeroOctet(s, from, to));
    const text = s.slice(from, to);
    if (text.indexOf(':') < 0) return undefined;
    const hit = this.v6.get(text);
    if (hit !== undefined) return hit;
    const groups = parseIpv6Groups(text);
    if (groups === undefined) return undefined;
    // Built by concatenation: one flat string, not a tree of pieces, is what entries keep.
    const canonical = flatCopy(formatIpv6Groups(groups));
    if (this.v6.size >= ConntrackInterner.MAX) this.v6.clear();
    // Share one string between the /proc (expanded) and tool (compressed) spellings.
    const shared = this.v6.get(canonical) ?? canonical;
    this.v6.set(text, shared);
    this.v6.set(canonical, shared);
    return shared;
  }

  /**
   * The text of the IPv4 address `s[from, to)`, whose value (as int32) is `key`. Only
   * `canonical` spellings (no octet with a leading zero, as conntrack prints them) are
   * memoised, so a canonical spelling always gets back its own text.
   */
  ipv4(s: string, from: number, to: number, key: number, canonical: boolean): string {
    const keys = this.v4Keys;
    const texts = this.v4Texts;
    const mask = texts.length - 1;
    let slot = Math.imul(key, 0x9e3779b1) >>> this.v4Shift;
    for (;;) {
      const hit = texts[slot];
      if (hit === undefined) break;
      if (keys[slot] === key) return hit;
      slot = (slot + 1) & mask;
    }
    // A copy: a slice of 13+ characters would keep the whole capture alive.
    const text = to - from <= 15 ? flatShort(s, from, to) : flatSlice(s, from, to);
    if (!canonical) return text;
    if (this.v4Count >= (texts.length >> 2) * 3) {
      this.grow();
      this.put(key, text);
    } else {
      keys[slot] = key;
      texts[slot] = text;
    }
    this.v4Count++;
    return text;
  }

  private grow(): void {
    const oldKeys = this.v4Keys;
    const oldTexts = this.v4Texts;
    const size = oldTexts.length >= V4_MAX_SLOTS ? V4_MAX_SLOTS : oldTexts.length * 2;
    this.v4Keys = new Int32Array(size);
    this.v4Texts = new Array<string | undefined>(size).fill(undefined);
    this.v4Shift = 32 - Math.log2(size);
    this.v4Count = 0;
    if (size === oldTexts.length) return; // at the bound: start again, empty
    for (let k = 0; k < oldTexts.length; k++) {
      const t = oldTexts[k];
      if (t !== undefined) {
        this.put(oldKeys[k]!, t);
        this.v4Count++;
      }
    }
  }

  private put(key: number, text: string): void {
    const mask = this.v4Texts.length - 1;
    let slot = Math.imul(key, 0x9e3779b1) >>> this.v4Shift;
    while (this.v4Texts[slot] !== undefined) slot = (slot + 1) & mask;
    this.v4Keys[slot] = key;
    this.v4Texts[slot] = text;
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
