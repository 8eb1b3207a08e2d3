/**
 * The conntrack fast path on bytes: the common line of a large table (`conntrack -L [-o
 * extended]`, conntrack-tools `src/conntrack.c` printing through libnetfilter_conntrack
 * `src/conntrack/snprintf_default.c`) read straight from the file's bytes, so a replay's
 * 220 MB capture is never decoded into strings.
 *
 * It is a strict subset of the string fast path (`conntrack-fast.ts`, the reference): it
 * accepts a line only when that path would make a plain column row of it — IPv4 in the
 * canonical dotted quad, a port-based protocol, printed exactly as the formatter prints it
 * (single spaces, `%-8s` padding, no leading zeros), counters that pack into an int32, the
 * flags and `mark=0` / `use=0…5` tail that fit the kind integer (`packKind`). Any other line
 * (IPv6, icmp, zones, labels, events, odd spacing, big counters, non-ASCII bytes, a summary
 * line) is rejected: the caller decodes it and hands it to the string path, which then reads
 * it as before. Its address lookups are queued in the interner in the same order as the
 * string path makes them (`ConntrackInterner.defer`), so ids are numbered identically
 * (`conntrack-bytes.test.ts` against `parseConntrackReference`).
 */
import { COMPACT_PROTOS, COMPACT_STATES, packCounters, packHeader, packKind } from './conntrack-compact.js';
import type { ConntrackInterner } from './conntrack-scan.js';

const SP = 32;
const U32_MAX = 4294967295;

/**
 * The row of the line {@link readConntrackBytes} last accepted: [0] the kind (`packKind`),
 * [1] / [2] the original / reply ports (sport << 16 | dport), [3] / [4] their packed
 * counters (`packCounters`, -1 none), [5…8] the four address ids (orig src, dst, reply src,
 * dst) — -2 - q for a lookup queued at place q of the interner's queue. Overwritten by the next read.
 */
export const CONNTRACK_BYTES_ROW = new Int32Array(9);

const ROW = CONNTRACK_BYTES_ROW;
// The value of the number the last `num` read; the end of the last quad `quad` read.
let VAL = 0;

function bytesOf(word: string): Uint8Array {
  const out = new Uint8Array(word.length);
  for (let k = 0; k < word.length; k++) out[k] = word.charCodeAt(k);
  return out;
}

const STATE_BYTES: readonly Uint8Array[] = COMPACT_STATES.map(bytesOf);
// Indexes in COMPACT_STATES by first letter (A–Z).
const STATES_BY_LETTER: readonly (readonly number[])[] = Array.from({ length: 26 }, (_, l) =>
  COMPACT_STATES.flatMap((w, k) => (w.charCodeAt(0) === 65 + l ? [k] : [])),
);
const PROTO_BYTES: readonly Uint8Array[] = COMPACT_PROTOS.map(([name]) => bytesOf(name));
const FLAG_BYTES: readonly Uint8Array[] = ['[UNREPLIED]', '[ASSURED]', '[OFFLOAD]', '[HW_OFFLOAD]'].map(bytesOf);

/** True when `b[i…]` holds `w` (within `end`). */
function has(b: Uint8Array, i: number, end: number, w: Uint8Array): boolean {
  const n = w.length;
  if (i + n > end) return false;
  for (let k = 0; k < n; k++) if (b[i + k] !== w[k]) return false;
  return true;
}

/**
 * A canonical decimal at `i` (1 to `maxDigits` digits, no leading zero, ≤ `max`) followed
 * by one space or the end → `VAL`; the index after the space (or `end`), -1 otherwise
 * (a second blank is caught by the next field's first byte).
 */
function num(b: Uint8Array, i: number, end: number, maxDigits: number, max: number): number {
  const from = i;
  let v = 0;
  while (i < end) {
    const c = b[i]! - 48;
    if (c < 0 || c > 9) break;
    v = v * 10 + c;
    i++;
  }
  const n = i - from;
  if (n === 0 || n > maxDigits || v > max || (n > 1 && b[from] === 48)) return -1;
  VAL = v;
  if (i === end) return i;
  return b[i] === SP ? i + 1 : -1;
}

/**
 * A canonical dotted quad at `i` (four octets of 1–3 digits, no leading zero, ≤ 255) followed
 * by one space: its value (≥ 0), the index after the space in `VAL`; -1 otherwise.
 */
function quad(b: Uint8Array, i: number, end: number): number {
  let v = 0;
  for (let part = 0; part < 4; part++) {
    let o = b[i]! - 48;
    if (!(o >= 0 && o <= 9)) return -1;
    i++;
    const d1 = b[i]! - 48;
    if (d1 >= 0 && d1 <= 9) {
      if (o === 0) return -1;
      o = o * 10 + d1;
      i++;
      const d2 = b[i]! - 48;
      if (d2 >= 0 && d2 <= 9) {
        o = o * 10 + d2;
        if (o > 255) return -1;
        i++;
      }
    }
    v = v * 256 + o;
    if (part < 3) {
      if (b[i] !== 46) return -1;
      i++;
    }
  }
  if (i >= end || b[i] !== SP) return -1;
  VAL = i + 1;
  return v;
}

/** True when `b[i…]` is `src=` (`c` 115) or `dst=` (`c` 100). */
function addrKey(b: Uint8Array, i: number, c: number): boolean {
  return b[i] === c && b[i + 1] === (c === 115 ? 114 : 115) && b[i + 2] === (c === 115 ? 99 : 116) && b[i + 3] === 61;
}

/** True when `b[i…]` is `sport=` (`c` 115) or `dport=` (`c` 100). */
function portKey(b: Uint8Array, i: number, c: number): boolean {
  return b[i] === c && b[i + 1] === 112 && b[i + 2] === 111 && b[i + 3] === 114 && b[i + 4] === 116 && b[i + 5] === 61;
}

// The line's original source (value, id or queued place): the reply's destination is nearly always it.
let hintKey = -1;
let hintId = 0;

/**
 * One tuple at `i` (`src=Q dst=Q sport=N dport=N [packets=N bytes=N]`) into direction `d`
 * of {@link CONNTRACK_BYTES_ROW}: the index after it, -1 when it is not of the shape.
 */
function tuple(b: Uint8Array, i: number, end: number, d: number, interner: ConntrackInterner): number {
  if (!addrKey(b, i, 115)) return -1;
  let v = quad(b, i + 4, end);
  if (v < 0) return -1;
  // As the string path: every address after the original's source equal to it takes its id (no lookup).
  let id = d === 1 && v === hintKey ? hintId : -2 - interner.defer(b, i + 4, VAL - 1, v | 0);
  ROW[5 + 2 * d] = id;
  if (d === 0) {
    hintKey = v;
    hintId = id;
  }
  i = VAL;
  if (!addrKey(b, i, 100)) return -1;
  v = quad(b, i + 4, end);
  if (v < 0) return -1;
  id = v === hintKey ? hintId : -2 - interner.defer(b, i + 4, VAL - 1, v | 0);
  ROW[6 + 2 * d] = id;
  i = VAL;
  if (!portKey(b, i, 115)) return -1;
  i = num(b, i + 6, end, 5, 65535);
  if (i < 0 || i === end) return -1;
  const sport = VAL;
  if (!portKey(b, i, 100)) return -1;
  i = num(b, i + 6, end, 5, 65535);
  if (i < 0) return -1;
  ROW[1 + d] = (sport << 16) | VAL;
  // packets=
  if (i < end && b[i] === 112 && b[i + 1] === 97 && b[i + 2] === 99 && b[i + 3] === 107 && b[i + 4] === 101 && b[i + 5] === 116 && b[i + 6] === 115 && b[i + 7] === 61) {
    i = num(b, i + 8, end, 15, Number.MAX_SAFE_INTEGER);
    if (i < 0 || i === end) return -1;
    const packets = VAL;
    // bytes=
    if (!(b[i] === 98 && b[i + 1] === 121 && b[i + 2] === 116 && b[i + 3] === 101 && b[i + 4] === 115 && b[i + 5] === 61)) return -1;
    i = num(b, i + 6, end, 15, Number.MAX_SAFE_INTEGER);
    if (i < 0) return -1;
    const c = packCounters(packets, VAL);
    if (typeof c !== 'number') return -1;
    ROW[3 + d] = c;
  } else ROW[3 + d] = -1;
  return i;
}

/** The `[FLAG]` at `i` → its bit (1 UNREPLIED, 2 ASSURED, 4 OFFLOAD, 8 HW_OFFLOAD) and its end in `VAL`; 0 when none. */
function flag(b: Uint8Array, i: number, end: number): number {
  for (let k = 0; k < FLAG_BYTES.length; k++) {
    const w = FLAG_BYTES[k]!;
    if (has(b, i, end, w)) {
      const j = i + w.length;
      if (j === end) VAL = j;
      else if (b[j] === SP) VAL = j + 1;
      else return 0;
      return 1 << k;
    }
  }
  return 0;
}

/**
 * Reads `b[from, end)` (one line without its `\n` and trailing `\r`) as a row of the column
 * table: true when it is of the shape in the module doc (the row is then in
 * {@link CONNTRACK_BYTES_ROW}, its canonical IPv4 lookups queued in `interner`), false for
 * any other line — the string fast path (`readConntrackFast`) then reads it as the
 * reference does. Never throws.
 */
export function readConntrackBytes(b: Uint8Array, from: number, end: number, interner: ConntrackInterner): boolean {
  // A blank at the end makes the line non-canonical (its text is kept: the string path's).
  if (end - from < 40 || b[end - 1] === SP || b[end - 1] === 9) return false;
  let i = from;
  let style: 1 | 2 = 1;
  // `ipv4     2 ` ("%-8s %u ")
  if (b[i] === 105 && b[i + 1] === 112 && b[i + 2] === 118 && b[i + 3] === 52) {
    if (b[i + 4] !== SP || b[i + 5] !== SP || b[i + 6] !== SP || b[i + 7] !== SP || b[i + 8] !== SP || b[i + 9] !== 50 || b[i + 10] !== SP) return false;
    i += 11;
    style = 2;
  }
  // proto name padded to 8, a space, its number, a space
  let protoIndex = -1;
  for (let k = 0; k < PROTO_BYTES.length; k++) {
    const w = PROTO_BYTES[k]!;
    if (has(b, i, end, w) && b[i + w.length] === SP) {
      protoIndex = k;
      break;
    }
  }
  if (protoIndex < 0) return false;
  const pad = i + PROTO_BYTES[protoIndex]!.length;
  for (let k = pad; k < i + 9; k++) if (b[k] !== SP) return false;
  i = num(b, i + 9, end, 3, 255);
  if (i < 0 || i === end || VAL !== COMPACT_PROTOS[protoIndex]![1]) return false;
  // timeout, state
  let timeout = -1;
  let stateIndex = -1;
  let c = b[i]!;
  if (c >= 48 && c <= 57) {
    i = num(b, i, end, 10, U32_MAX);
    if (i < 0 || i === end) return false;
    timeout = VAL;
    c = b[i]!;
  }
  if (c >= 65 && c <= 90) {
    const candidates = STATES_BY_LETTER[c - 65]!;
    for (let j = 0; j < candidates.length; j++) {
      const k = candidates[j]!;
      const w = STATE_BYTES[k]!;
      if (has(b, i, end, w) && b[i + w.length] === SP) {
        stateIndex = k;
        break;
      }
    }
    if (stateIndex < 0) return false;
    i += STATE_BYTES[stateIndex]!.length + 1;
  }
  i = tuple(b, i, end, 0, interner);
  if (i < 0 || i === end) return false;
  let flags = 0;
  if (b[i] === 91) {
    flags = flag(b, i, end);
    if (flags !== 1) return false;
    i = VAL;
  }
  i = tuple(b, i, end, 1, interner);
  if (i < 0) return false;
  if (i < end && b[i] === 91) {
    const late = flag(b, i, end);
    if (late === 0 || late === 1) return false;
    flags |= late;
    i = VAL;
  }
  // The tail: `mark=0` then `use=N` (N ≤ 5), each optional; anything else needs the entry's extras.
  let mark: number | undefined;
  let use: number | undefined;
  if (i < end && b[i] === 109) {
    if (!(b[i + 1] === 97 && b[i + 2] === 114 && b[i + 3] === 107 && b[i + 4] === 61 && b[i + 5] === 48)) return false;
    i += 6;
    if (i < end) {
      if (b[i] !== SP) return false;
      i++;
    }
    mark = 0;
  }
  if (i < end) {
    if (!(b[i] === 117 && b[i + 1] === 115 && b[i + 2] === 101 && b[i + 3] === 61 && i + 5 === end)) return false;
    const u = b[i + 4]! - 48;
    if (u < 0 || u > 5) return false;
    use = u;
    i = end;
  }
  if (i !== end) return false;
  const k = packKind(packHeader(false, protoIndex, stateIndex, flags, style, mark, use), timeout);
  if (k < 0) return false;
  ROW[0] = k;
  return true;
}
