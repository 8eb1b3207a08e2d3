/**
 * The fast path of the conntrack parser: the line shape that makes up nearly every
 * large table (`conntrack -L [-o extended]` or `/proc/net/nf_conntrack`, a port-based
 * protocol, both tuples in print order, the usual flags and meta fields) read in
 * place from the whole capture, in one strictly ordered pass without a line copy.
 *
 * It only ever accepts: anything else (events, icmp/gre, zones, labels, unknown or
 * repeated fields, a protocol number that does not match its name, bad values)
 * returns `undefined`, and the caller hands the line to the general parser
 * (`parseConntrackLine`), which then reports what it finds. So for every line it
 * accepts, the entry equals the general parser's, field for field (the unit test
 * `conntrack-fast.test.ts` checks this on generated captures and the corpus).
 *
 * Its entries are compact (`conntrack-compact.ts`) and keep no part of the text: a
 * line exactly as `formatConntrackEntry` prints it for its layout gets its `raw`
 * formatted again on demand, any other line keeps a flat copy of its text.
 *
 * Shortcuts for the common line (each one falls back to the field-by-field reading, so
 * results do not depend on them; `conntrack-fast-paths.test.ts`): the prefix compared
 * with the last canonical one, dotted quads read octet by octet, the reply's destination
 * taken from the original's source when the value is the same (no interner lookup: on a
 * table of 10^5+ addresses each lookup is a cache miss), the `mark=0 use=1` tail in one
 * compare. Read `deferred` (the whole-capture parse), a canonical dotted quad's lookup is
 * queued in the interner and made with a batch of others (`ConntrackInterner.defer`), so
 * their cache misses overlap; ids are the same as one by one (`conntrack-fast-batch.test.ts`
 * against `parseConntrackReference`).
 */
import type { ConntrackEntry, ConntrackState } from '../model/conntrack.js';
import {
  COMPACT_PROTOS,
  COMPACT_STATES,
  CompactConntrackEntry,
  CompactConntrackEntryWithExtras,
  CompactExtras,
  makeCompactTupleFromCounters,
  type CompactConntrackTuple,
  type CounterPair,
  headerNeedsExtras,
  packCounters,
  packHeader,
  packKind,
  type CompactStyleCode,
} from './conntrack-compact.js';
import { flatSlice } from '../flat-string.js';
import { ConntrackInterner, parseCounter, U32_MAX } from './conntrack-scan.js';

/** True when `s` holds `word` at `i` (char by char: inlined, no builtin call). */
function at(s: string, i: number, word: string): boolean {
  const n = word.length;
  if (i + n > s.length) return false;
  for (let k = 0; k < n; k++) if (s.charCodeAt(i + k) !== word.charCodeAt(k)) return false;
  return true;
}

/** True when `s[from, from + 39)` is an IPv6 address in the kernel's `%pI6` form (eight groups of four lowercase hex digits). */
function expandedV6At(s: string, from: number, to: number): boolean {
  if (to - from !== 39) return false;
  for (let k = 0; k < 39; k++) {
    const c = s.charCodeAt(from + k);
    if (k % 5 === 4) {
      if (c !== 58) return false;
    } else if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 102))) return false;
  }
  return true;
}

/**
 * Reads one line's fields in place. The cursor is an index into the capture; every
 * reader returns -1 / false when the text is not what the fast path expects there.
 *
 * On the way it notes whether the line is exactly what the formatter prints
 * (`canon`: single spaces, no leading zeros; `compressed` / `expanded`: every address
 * as conntrack / the kernel's /proc prints it), so the entry need not keep its text.
 */
class FastLine {
  s = '';
  end = 0;
  i = 0;
  value = 0;
  /** A counter read by `counter`: its value, or -1 when it is above 2^53 (then in `big`). */
  count = 0;
  big: bigint | undefined = undefined;
  canon = true;
  compressed = true;
  expanded = true;

  /** Skips spaces and tabs and returns how many; a tab makes the line non-canonical. */
  private skipBlanks(): number {
    const s = this.s;
    let i = this.i;
    const start = i;
    while (i < this.end) {
      const c = s.charCodeAt(i);
      if (c !== 32) {
        if (c !== 9) break;
        this.canon = false;
      }
      i++;
    }
    this.i = i;
    return i - start;
  }

  /** Skips blanks and returns how many; more than one, or a tab, makes the line non-canonical. */
  blanks(): number {
    // Nearly always one space before the next field.
    const s = this.s;
    const i = this.i;
    if (i + 1 < this.end && s.charCodeAt(i) === 32) {
      const c = s.charCodeAt(i + 1);
      if (c !== 32 && c !== 9) {
        this.i = i + 1;
        return 1;
      }
    }
    const n = this.skipBlanks();
    if (n > 1) this.canon = false;
    return n;
  }

  /** Skips exactly `n` spaces (the formatter's padding) or, non-canonically, other blanks; false when there are none. */
  padding(n: number): boolean {
    const k = this.skipBlanks();
    if (k !== n) this.canon = false;
    return k > 0;
  }

  /** True when the cursor is before the end and at `key`, whose first character is `c`. */
  atKey(c: number, key: string): boolean {
    return this.i < this.end && this.s.charCodeAt(this.i) === c && at(this.s, this.i, key);
  }

  /** True at a blank or at the end of the line. */
  atBreak(i: number): boolean {
    if (i >= this.end) return true;
    const c = this.s.charCodeAt(i);
    return c === 32 || c === 9;
  }

  /** Decimal digits up to a break → `value`; false when not digits, more than 10 of them or above `max`. */
  uint(max: number): boolean {
    const s = this.s;
    let i = this.i;
    const from = i;
    let v = 0;
    while (i < this.end) {
      const c = s.charCodeAt(i);
      if (c < 48 || c > 57) break;
      v = v * 10 + (c - 48);
      i++;
    }
    if (i === from || i - from > 10 || v > max || !this.atBreak(i)) return false;
    if (i - from > 1 && s.charCodeAt(from) === 48) this.canon = false;
    this.value = v;
    this.i = i;
    return true;
  }

  /** Index just past the word at the cursor. */
  wordEnd(): number {
    const s = this.s;
    let i = this.i;
    while (i < this.end) {
      const c = s.charCodeAt(i);
      if (c === 32 || c === 9) break;
      i++;
    }
    return i;
  }

  /**
   * Skips the `skip` characters of a key already matched, then reads what `uint` reads
   * (→ `value`) and the blanks after it; false when `uint` would be.
   */
  num(skip: number, max: number): boolean {
    const s = this.s;
    const end = this.end;
    const from = this.i + skip;
    let i = from;
    let v = 0;
    while (i < end) {
      const c = s.charCodeAt(i) - 48;
      if (c < 0 || c > 9) break;
      v = v * 10 + c;
      i++;
    }
    const n = i - from;
    if (n === 0 || n > 10 || v > max) return false;
    if (n > 1 && s.charCodeAt(from) === 48) this.canon = false;
    this.value = v;
    this.i = i;
    if (i < end) {
      const c = s.charCodeAt(i);
      if (c !== 32 && c !== 9) return false;
      this.blanks();
    }
    return true;
  }

  /** After a key of `skip` characters already matched (`packets=`, `bytes=`): a u64 counter into `count` (or `big`), then blanks. */
  counter(skip: number): boolean {
    const s = this.s;
    const from = this.i + skip;
    const end = this.end;
    let i = from;
    let v = 0;
    for (; i < end; i++) {
      const c = s.charCodeAt(i) - 48;
      if (c < 0 || c > 9) break;
      v = v * 10 + c;
    }
    const n = i - from;
    if (n > 15 || n === 0 || !this.atBreak(i)) {
      // Not digits, or beyond 15 of them (a double may not be exact): let the scanner decide and make the bigint.
      this.i = from;
      const to = this.wordEnd();
      const big = parseCounter(s, from, to);
      if (big === undefined) return false;
      if (s.charCodeAt(from) === 48 && to - from > 1) this.canon = false;
      this.big = big;
      this.count = big <= 9007199254740991n ? Number(big) : -1;
      i = to;
    } else {
      if (n > 1 && s.charCodeAt(from) === 48) this.canon = false;
      this.count = v;
      this.big = undefined;
    }
    this.i = i;
    this.blanks();
    return true;
  }

  /**
   * `key=` then an address, interned: true when it was one (its id is then the next of
   * `ids`). A canonical dotted quad (the common case) is read octet by octet and looked
   * up by value, its text not read back; anything else goes the general way.
   */
  address(key: string, interner: ConntrackInterner): boolean {
    const s = this.s;
    const k = this.i;
    // key is `src=` or `dst=`
    if (s.charCodeAt(k) !== key.charCodeAt(0) || s.charCodeAt(k + 1) !== key.charCodeAt(1) || s.charCodeAt(k + 2) !== key.charCodeAt(2) || s.charCodeAt(k + 3) !== 61) return false;
    const from = k + 4;
    const v = this.quad(from);
    if (v < 0) return this.otherAddress(from, interner);
    const to = this.qEnd;
    // The reply's destination is nearly always the original's source: no lookup then.
    // Deferred: a queue place q as -2 - q (see `ConntrackInterner.defer`), resolved in batches.
    this.ids[this.nIds++] = v === this.hintKey ? this.hintId : this.deferred ? -2 - interner.defer(s, from, to, v | 0) : interner.ipv4Id(s, from, to, v | 0);
    this.lastKey = v;
    this.i = to;
    return this.blanks() !== 0;
  }

  /** End of the dotted quad `quad` last read. */
  private qEnd = 0;
  /** The value of the last address read when it was a canonical dotted quad, else -1. */
  lastKey = -1;
  /** How many IPv6 addresses the line has had. */
  sixes = 0;
  /** An IPv4 value (≥ 0) whose interner id is `hintId` (-1: none). */
  hintKey = -1;
  hintId = -1;
  /** The interner of the line last read (its addresses' texts by id). */
  interner: ConntrackInterner | undefined = undefined;
  /** Canonical IPv4 lookups queued in the interner (`ids` then holds -2 - place) rather than made one by one. */
  deferred = false;
  /** The tuples of the line (0 original, 1 reply): ports (sport << 16 | dport), counters (undefined: none); addresses in `ids`. */
  readonly tPorts = new Int32Array(2);
  readonly tCounters: (number | CounterPair | undefined)[] = [undefined, undefined];
  /** What the line last read gave: its kind (see packKind, -1: it needs `extras`). */
  outK = -1;
  outX: CompactExtras | undefined = undefined;
  /**
   * The interner's ids of the line's addresses read so far, in print order (orig src, dst,
   * reply src, dst), and how many; -2 - q for a lookup queued at place q (`deferred`).
   */
  readonly ids = new Int32Array(4);
  nIds = 0;

  /**
   * The value of the canonical dotted quad at `i` (four octets of 1–3 digits, no
   * leading zero, ≤ 255, then a blank or the end) with its end in `qEnd`; -1 when
   * the text there is anything else.
   */
  private quad(i: number): number {
    const s = this.s;
    const end = this.end;
    let v = 0;
    for (let part = 0; part < 4; part++) {
      let o = s.charCodeAt(i) - 48;
      if (!(o >= 0 && o <= 9)) return -1;
      i++;
      const d1 = s.charCodeAt(i) - 48;
      if (d1 >= 0 && d1 <= 9) {
        if (o === 0) return -1;
        o = o * 10 + d1;
        i++;
        const d2 = s.charCodeAt(i) - 48;
        if (d2 >= 0 && d2 <= 9) {
          o = o * 10 + d2;
          if (o > 255) return -1;
          i++;
        }
      }
      v = v * 256 + o;
      if (part < 3) {
        if (s.charCodeAt(i) !== 46) return -1;
        i++;
      }
    }
    if (i > end || (i < end && s.charCodeAt(i) !== 32 && s.charCodeAt(i) !== 9)) return -1;
    this.qEnd = i;
    return v;
  }

  /** An address that is not a canonical dotted quad (IPv6, leading zeros…) at `from`, interned; the cursor moves past it and its blanks. */
  private otherAddress(from: number, interner: ConntrackInterner): boolean {
    const s = this.s;
    const end = this.end;
    let i = from;
    let parts = 0;
    let value = 0;
    let octet = 0;
    let digits = 0;
    let v4 = true;
    let leadingZero = false;
    for (; i < end; i++) {
      const c = s.charCodeAt(i);
      if (c === 32 || c === 9) break;
      if (c === 46) {
        if (digits === 0 || parts === 3) v4 = false;
        value = value * 256 + octet;
        parts++;
        octet = 0;
        digits = 0;
      } else if (c >= 48 && c <= 57) {
        if (digits === 1 && octet === 0) leadingZero = true;
        octet = octet * 10 + (c - 48);
        digits++;
        if (octet > 255 || digits > 3) v4 = false;
      } else v4 = false;
    }
    const isV4 = v4 && digits !== 0 && parts === 3;
    this.lastKey = -1;
    if (!isV4) this.sixes++;
    const a = isV4 ? interner.ipv4(s, from, i, (value * 256 + octet) | 0, !leadingZero) : interner.address(s, from, i);
    if (a === undefined) return false;
    this.ids[this.nIds++] = interner.lastId;
    // Printed as the entry holds it? A canonical IPv4 spelling always is (the interner
    // keeps canonical spellings only); IPv6 is compared with its canonical text.
    const same = isV4 ? !leadingZero : a.length === i - from && at(s, from, a);
    if (!same) this.compressed = false;
    if (isV4 ? !same : !expandedV6At(s, from, i)) this.expanded = false;
    this.i = i;
    return this.blanks() !== 0;
  }

  /** `[WORD]` flag at the cursor → its bit (1 UNREPLIED, 2 ASSURED, 4 OFFLOAD, 8 HW_OFFLOAD), 0 when none. */
  flag(): number {
    const s = this.s;
    const i = this.i;
    if (s.charCodeAt(i) !== 91) return 0;
    let bit = 0;
    let len = 0;
    if (at(s, i, '[UNREPLIED]')) (bit = 1), (len = 11);
    else if (at(s, i, '[ASSURED]')) (bit = 2), (len = 9);
    else if (at(s, i, '[OFFLOAD]')) (bit = 4), (len = 9);
    else if (at(s, i, '[HW_OFFLOAD]')) (bit = 8), (len = 12);
    if (bit === 0 || !this.atBreak(i + len)) return 0;
    this.i = i + len;
    this.blanks();
    return bit;
  }
}

const CUR = new FastLine();

/** True when `s` holds `sport=` (`c` is `s`) or `dport=` (`c` is `d`) at `i`. */
function port(s: string, i: number, c: number): boolean {
  return (
    s.charCodeAt(i) === c &&
    s.charCodeAt(i + 1) === 112 &&
    s.charCodeAt(i + 2) === 111 &&
    s.charCodeAt(i + 3) === 114 &&
    s.charCodeAt(i + 4) === 116 &&
    s.charCodeAt(i + 5) === 61
  );
}

/** The prefix (`ipv4     2 tcp      6 `, `tcp      6 `…) of the last line whose prefix was exactly as printed, and its values. */
const LAST_PREFIX = { text: '', l3: 0, protoIndex: 0 };

/**
 * Reads `[ipv4 2 | ipv6 10] proto num` and its blanks at `from` into {@link LAST_PREFIX}
 * (its `text` too when it is printed as the formatter prints it); false when the line
 * is not of the fast path's shape.
 */
function readPrefix(r: FastLine, s: string, from: number): boolean {
  const canon = r.canon;
  r.canon = true;
  let l3 = 0;
  if (at(s, from, 'ipv4') || at(s, from, 'ipv6')) {
    l3 = s.charCodeAt(from + 3) === 52 ? 4 : 6;
    r.i = from + 4;
    if (!r.padding(5) || !r.uint(255) || r.value !== (l3 === 4 ? 2 : 10) || r.blanks() === 0) return false;
  }
  let protoIndex = -1;
  const pe = r.wordEnd();
  for (let k = 0; k < COMPACT_PROTOS.length; k++) {
    const name = COMPACT_PROTOS[k]![0];
    if (name.length === pe - r.i && at(s, r.i, name)) {
      protoIndex = k;
      break;
    }
  }
  if (protoIndex < 0) return false;
  const protoLen = pe - r.i;
  r.i = pe;
  if (!r.padding(9 - protoLen) || !r.uint(255) || r.value !== COMPACT_PROTOS[protoIndex]![1] || r.blanks() === 0) return false;
  const last = LAST_PREFIX;
  last.l3 = l3;
  last.protoIndex = protoIndex;
  // Remembered only when printed exactly so: a line that matches it then reads the same, canonical too.
  if (r.canon) last.text = flatSlice(s, from, r.i);
  else last.text = '';
  r.canon = canon && r.canon;
  return true;
}

/** True when `s` holds `bytes=` at `i`. */
function bytesAt(s: string, i: number): boolean {
  return (
    s.charCodeAt(i) === 98 &&
    s.charCodeAt(i + 1) === 121 &&
    s.charCodeAt(i + 2) === 116 &&
    s.charCodeAt(i + 3) === 101 &&
    s.charCodeAt(i + 4) === 115 &&
    s.charCodeAt(i + 5) === 61
  );
}

/** One tuple of a port-based protocol: `src= dst= sport= dport=` and optional counters, into direction `d` of `r` (0 original, 1 reply). */
function readTuple(r: FastLine, interner: ConntrackInterner, d: number): boolean {
  if (!r.address('src=', interner)) return false;
  // Remembered for the reply's destination (see `address`); the reply's own resets nothing: the hint is set per line.
  if (r.hintKey === -2) {
    r.hintKey = r.lastKey;
    r.hintId = r.ids[r.nIds - 1]!;
  }
  if (!r.address('dst=', interner)) return false;
  if (!port(r.s, r.i, 115 /* s */) || !r.num(6, 65535)) return false;
  const sport = r.value;
  if (!port(r.s, r.i, 100 /* d */) || !r.num(6, 65535)) return false;
  const dport = r.value;
  r.tPorts[d] = (sport << 16) | dport;
  const s = r.s;
  const i = r.i;
  if (i >= r.end || s.charCodeAt(i) !== 112 /* p */ || !at(s, i, 'packets=')) {
    r.tCounters[d] = undefined;
    return true;
  }
  if (!r.counter(8)) return false;
  const packets = r.count;
  const bigPackets = r.big;
  if (!bytesAt(s, r.i) || !r.counter(6)) return false;
  r.tCounters[d] = packCounters(packets, r.count, bigPackets, r.big);
  return true;
}

/** Replaces the queued lookups among `r.ids` by their ids (resolving the interner's queue). */
function resolveIds(r: FastLine): void {
  const ids = r.ids;
  for (let j = 0; j < r.nIds; j++) {
    const v = ids[j]!;
    if (v <= -2) {
      r.interner!.resolve();
      ids[j] = r.interner!.queuedId(-2 - v);
    }
  }
}

/** Direction `d` of the line last read, as a compact tuple (its ids resolved). */
function tupleOf(r: FastLine, d: number): CompactConntrackTuple {
  const p = r.tPorts[d]!;
  const c = r.tCounters[d];
  const texts = r.interner!.texts;
  return makeCompactTupleFromCounters(texts[r.ids[2 * d]!]!, texts[r.ids[2 * d + 1]!]!, p >>> 16, p & 0xffff, c);
}

/**
 * The interner's ids of the four addresses of the entry {@link parseConntrackFast} last
 * returned (original source, destination, reply source, destination). A view of a buffer
 * the next call overwrites: copy the values out.
 */
export function lastConntrackFastIds(): Int32Array {
  resolveIds(CUR);
  return CUR.ids;
}

/**
 * {@link lastConntrackFastIds} as read: when the line was read `deferred`, an id may still
 * be a queued lookup, -2 - q for place q of the interner's queue (its id is the interner's
 * `queuedId(q)` after `resolve()`, until `clearQueue()`). A view the next read overwrites.
 */
export function lastConntrackFastQueuedIds(): Int32Array {
  return CUR.ids;
}

/**
 * Lets go of the text the fast path last read: its cursor is shared between calls
 * (one object, no allocation per line) and would otherwise keep a whole capture — up
 * to hundreds of MB — alive after the parse. Call once when a parse ends.
 */
export function releaseConntrackFast(): void {
  CUR.s = '';
  CUR.interner = undefined;
  CUR.deferred = false;
}

/** The meta fields of the line last read by {@link readMeta} (one reused object: parsing is synchronous). */
class FastMeta {
  mark: number | undefined = undefined;
  secmark: number | undefined = undefined;
  zone: number | undefined = undefined;
  deltaTime: number | undefined = undefined;
  use: number | undefined = undefined;
  id: number | undefined = undefined;
}

const META = new FastMeta();

/**
 * Reads the meta fields after the reply tuple into `m`, each at most once and in
 * conntrack's print order (`mark= secmark= zone= delta-time= use= id=`), up to `end`.
 * False when the tail is anything else (the general parser then takes the line).
 */
function readMeta(r: FastLine, s: string, end: number, m: FastMeta): boolean {
  m.mark = m.secmark = m.zone = m.deltaTime = m.use = m.id = undefined;
  if (r.i + 12 === end && at(s, r.i, 'mark=0 use=1')) {
    // The usual tail, exactly as printed.
    m.mark = 0;
    m.use = 1;
    return true;
  }
  if (r.i >= end) return true;
  if (r.atKey(109 /* m */, 'mark=')) {
    if (!r.num(5, U32_MAX)) return false;
    m.mark = r.value;
  }
  if (r.atKey(115 /* s */, 'secmark=')) {
    if (!r.num(8, U32_MAX)) return false;
    m.secmark = r.value;
  }
  if (r.atKey(122 /* z */, 'zone=')) {
    if (!r.num(5, U32_MAX)) return false;
    m.zone = r.value;
  }
  if (r.atKey(100 /* d */, 'delta-time=')) {
    if (!r.num(11, Number.MAX_SAFE_INTEGER)) return false;
    m.deltaTime = r.value;
  }
  if (r.atKey(117 /* u */, 'use=')) {
    if (!r.num(4, U32_MAX)) return false;
    m.use = r.value;
  }
  if (r.atKey(105 /* i */, 'id=')) {
    if (!r.num(3, U32_MAX)) return false;
    m.id = r.value;
  }
  return r.i >= end;
}

/**
 * Parses `s[from, end)` (one line: no terminator, no carriage return) as an entry of
 * the common shape, or returns `undefined` so the general parser takes the line.
 * The entry is a {@link CompactConntrackEntry} that holds nothing of `s`: its `raw`
 * is formatted again when the line is what the formatter prints, else a flat copy of
 * `s[from, end)` (as the general parser keeps it). Never throws.
 */
export function parseConntrackFast(
  s: string,
  from: number,
  end: number,
  lineNo: number,
  interner: ConntrackInterner,
): ConntrackEntry | undefined {
  if (!readConntrackFast(s, from, end, interner)) return undefined;
  return lastConntrackFastEntry(lineNo);
}

/**
 * The entry of the line {@link readConntrackFast} last read (true), as line `lineNo`: a
 * {@link CompactConntrackEntry}, or the subclass with extras.
 */
export function lastConntrackFastEntry(lineNo: number): ConntrackEntry {
  const r = CUR;
  resolveIds(r);
  const orig = tupleOf(r, 0);
  const reply = tupleOf(r, 1);
  if (r.outX === undefined) return new CompactConntrackEntry(lineNo, orig, reply, r.outK);
  return new CompactConntrackEntryWithExtras(lineNo, orig, reply, r.outX);
}

/**
 * What the fast path read last (after {@link readConntrackFast} returned true), for the
 * column store (src/parsers/conntrack-columns.ts): the kind (-1 when the entry needs
 * extras), each direction's ports (sport << 16 | dport) and counters, and the address
 * ids ({@link lastConntrackFastIds}). Views of buffers the next read overwrites.
 */
export function lastConntrackFastLine(): { readonly k: number; readonly ports: Int32Array; readonly counters: readonly (number | object | undefined)[] } {
  const r = CUR;
  return { k: r.outX === undefined ? r.outK : -1, ports: r.tPorts, counters: r.tCounters };
}

/**
 * Reads `s[from, end)` like {@link parseConntrackFast} without making the entry: true
 * when the line is of the common shape (its values are then held until the next read:
 * {@link lastConntrackFastEntry}, {@link lastConntrackFastLine}). `deferred`: canonical
 * IPv4 addresses are queued in the interner ({@link lastConntrackFastQueuedIds}; the
 * reader then resolves and clears the queue), else looked up one by one. Same ids either
 * way. Never throws.
 */
export function readConntrackFast(s: string, from: number, end: number, interner: ConntrackInterner, deferred = false): boolean {
  const rawEnd = end;
  while (end > from) {
    const c = s.charCodeAt(end - 1);
    if (c !== 32 && c !== 9) break;
    end--;
  }
  const r = CUR;
  r.s = s;
  r.interner = interner;
  r.deferred = deferred;
  r.end = end;
  r.i = from;
  r.canon = end === rawEnd;
  r.compressed = true;
  r.expanded = true;
  r.sixes = 0;
  r.hintKey = -2; // the original's source sets it
  r.nIds = 0;
  const c0 = s.charCodeAt(from);
  if (c0 < 97 || c0 > 122) return false;

  // [ipv4 2 | ipv6 10] proto num ("%-8s %u "): first as the line before (a capture's
  // lines mostly share a few prefixes), then field by field.
  const last = LAST_PREFIX;
  const n = last.text.length;
  if (n !== 0 && at(s, from, last.text) && !r.atBreak(from + n)) {
    r.i = from + n;
  } else if (!readPrefix(r, s, from)) return false;
  const l3 = last.l3;
  const protoIndex = last.protoIndex;
  // timeout, state
  let timeout = -1;
  let stateIndex = -1;
  let c = s.charCodeAt(r.i);
  if (c >= 48 && c <= 57) {
    if (!r.uint(U32_MAX) || r.blanks() === 0) return false;
    timeout = r.value;
    c = s.charCodeAt(r.i);
  }
  if (c >= 65 && c <= 90) {
    stateIndex = stateAt(r, s, r.i);
    if (stateIndex < 0) return false;
    r.i += COMPACT_STATES[stateIndex]!.length;
    if (r.blanks() === 0) return false;
  }

  if (!readTuple(r, interner, 0)) return false;
  let flags = r.flag();
  if (flags !== 0 && flags !== 1) return false;
  if (!readTuple(r, interner, 1)) return false;
  const late = r.flag();
  if (late === 1) return false;
  flags |= late;
  if (r.i < end && s.charCodeAt(r.i) === 91) return false;

  const m = META;
  if (!readMeta(r, s, end, m)) return false;
  const { mark, secmark, zone, deltaTime, use, id } = m;

  // Both tuples of one family, matching the layer-3 prefix if there is one.
  // (An entry's canonical address text has a colon exactly when it is IPv6: `sixes` counts those.)
  if (r.sixes !== 0 && r.sixes !== 4) return false;
  const v6 = r.sixes === 4;
  if (l3 !== 0 && (l3 === 6) !== v6) return false;

  // The layout the line is printed in, when it is exactly what the formatter gives.
  let style: CompactStyleCode = 0;
  if (r.canon) {
    if (l3 === 0) style = r.compressed ? 1 : 0;
    else if (r.compressed) style = 2;
    else if (r.expanded && secmark === undefined && id === undefined) style = 3;
  }
  const h = packHeader(v6, protoIndex, stateIndex, flags, style, mark, use);
  if (!headerNeedsExtras(h) && secmark === undefined && zone === undefined && deltaTime === undefined && id === undefined) {
    const k = packKind(h, timeout);
    if (k >= 0) {
      r.outK = k;
      r.outX = undefined;
      return true;
    }
  }
  const raw = style === 0 ? flatSlice(s, from, rawEnd) : undefined;
  r.outK = -1;
  r.outX = new CompactExtras(h, timeout, raw, mark, secmark, zone, deltaTime, use, id);
  return true;
}

// Indexes in COMPACT_STATES by first letter (A–Z): a state word is compared with two or three candidates, not 28.
const STATES_BY_LETTER: readonly (readonly number[])[] = Array.from({ length: 26 }, (_, l) =>
  COMPACT_STATES.flatMap((w, k) => (w.charCodeAt(0) === 65 + l ? [k] : [])),
);

/** Index in {@link COMPACT_STATES} of the state word at `from` (its first character is A–Z; a break follows it), -1 when it is none. */
function stateAt(r: FastLine, s: string, from: number): number {
  const candidates = STATES_BY_LETTER[s.charCodeAt(from) - 65]!;
  for (let j = 0; j < candidates.length; j++) {
    const k = candidates[j]!;
    const w = COMPACT_STATES[k]!;
    if (at(s, from, w) && r.atBreak(from + w.length)) return k;
  }
  return -1;
}
