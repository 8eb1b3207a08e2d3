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
 */
import { CONNTRACK_STATES, type ConntrackEntry, type ConntrackFlag, type ConntrackProto, type ConntrackState, type ConntrackTuple } from '../model/conntrack.js';
import { ConntrackInterner, parseCounter, U32_MAX } from './conntrack-scan.js';

// Port-based protocols with their numbers (linux/in.h): the only ones the fast path takes.
const PORTED: readonly (readonly [ConntrackProto, number])[] = [
  ['tcp', 6],
  ['udp', 17],
  ['sctp', 132],
  ['dccp', 33],
  ['udplite', 136],
];

const STATES: readonly ConntrackState[] = [...CONNTRACK_STATES];

const FLAG_ORDER: readonly ConntrackFlag[] = ['UNREPLIED', 'ASSURED', 'OFFLOAD', 'HW_OFFLOAD'];
// The general parser's shared frozen flag arrays are per module; these are equal in value.
const FLAG_SETS: readonly (readonly ConntrackFlag[])[] = Array.from({ length: 16 }, (_, mask) =>
  Object.freeze(FLAG_ORDER.filter((_f, k) => (mask & (1 << k)) !== 0)),
);

/** True when `s` holds `word` at `i` (char by char: inlined, no builtin call). */
function at(s: string, i: number, word: string): boolean {
  const n = word.length;
  if (i + n > s.length) return false;
  for (let k = 0; k < n; k++) if (s.charCodeAt(i + k) !== word.charCodeAt(k)) return false;
  return true;
}

/** The entry of `words` spelled by `s[from, to)`, if any. */
function wordIn<T extends string>(words: readonly T[], s: string, from: number, to: number): T | undefined {
  const len = to - from;
  for (const w of words) if (w.length === len && at(s, from, w)) return w;
  return undefined;
}

/**
 * Reads one line's fields in place. The cursor is an index into the capture; every
 * reader returns -1 when the text is not what the fast path expects there.
 */
class FastLine {
  s = '';
  end = 0;
  i = 0;
  value = 0;
  big: bigint | undefined = undefined;

  /** Skips one or more blanks; false when there are none (or the line ended). */
  blanks(): boolean {
    const s = this.s;
    let i = this.i;
    const start = i;
    while (i < this.end) {
      const c = s.charCodeAt(i);
      if (c !== 32 && c !== 9) break;
      i++;
    }
    this.i = i;
    return i > start;
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

  /** `key=` then a number up to `max`, then blanks or the end. */
  field(key: string, max: number): boolean {
    if (!at(this.s, this.i, key)) return false;
    this.i += key.length;
    if (!this.uint(max)) return false;
    this.blanks();
    return true;
  }

  /** `key=` then a u64 counter into `big`. */
  counter(key: string): boolean {
    if (!at(this.s, this.i, key)) return false;
    const from = this.i + key.length;
    this.i = from;
    const to = this.wordEnd();
    const v = parseCounter(this.s, from, to);
    if (v === undefined) return false;
    this.big = v;
    this.i = to;
    this.blanks();
    return true;
  }

  /** `key=` then an address, interned; an IPv4 address is read in the same pass that finds its end. */
  address(key: string, interner: ConntrackInterner): string | undefined {
    const s = this.s;
    if (!at(s, this.i, key)) return undefined;
    const from = this.i + key.length;
    const end = this.end;
    let i = from;
    let parts = 0;
    let value = 0;
    let octet = 0;
    let digits = 0;
    let v4 = true;
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
        octet = octet * 10 + (c - 48);
        digits++;
        if (octet > 255 || digits > 3) v4 = false;
      } else v4 = false;
    }
    const a =
      v4 && digits !== 0 && parts === 3
        ? interner.ipv4(s, from, i, (value * 256 + octet) | 0)
        : interner.address(s, from, i);
    if (a === undefined) return undefined;
    this.i = i;
    if (!this.blanks()) return undefined;
    return a;
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

// The meta fields the fast path reads, in print order, with their largest values.
const META_KEYS: readonly string[] = ['mark=', 'secmark=', 'zone=', 'delta-time=', 'use=', 'id='];
const META_MAX: readonly number[] = [U32_MAX, U32_MAX, U32_MAX, Number.MAX_SAFE_INTEGER, U32_MAX, U32_MAX];
const META_VALUES: (number | undefined)[] = [undefined, undefined, undefined, undefined, undefined, undefined];

/** One tuple of a port-based protocol: `src= dst= sport= dport=` and optional counters. */
function readTuple(r: FastLine, interner: ConntrackInterner): ConntrackTuple | undefined {
  const src = r.address('src=', interner);
  if (src === undefined) return undefined;
  const dst = r.address('dst=', interner);
  if (dst === undefined) return undefined;
  if (!r.field('sport=', 65535)) return undefined;
  const sport = r.value;
  if (!r.field('dport=', 65535)) return undefined;
  const dport = r.value;
  let packets: bigint | undefined;
  let bytes: bigint | undefined;
  if (at(r.s, r.i, 'packets=')) {
    if (!r.counter('packets=')) return undefined;
    packets = r.big;
    if (!r.counter('bytes=')) return undefined;
    bytes = r.big;
  }
  // The general parser's literal for a port-based tuple, key for key.
  return { src, dst, sport, dport, packets, bytes };
}

/**
 * Lets go of the text the fast path last read: its cursor is shared between calls
 * (one object, no allocation per line) and would otherwise keep a whole capture — up
 * to hundreds of MB — alive after the parse. Call once when a parse ends.
 */
export function releaseConntrackFast(): void {
  CUR.s = '';
}

/**
 * Parses `s[from, end)` (one line: no terminator, no carriage return) as an entry of
 * the common shape, or returns `undefined` so the general parser takes the line.
 * `raw` is `s[from, end)` (a slice, as the general parser keeps it). Never throws.
 */
export function parseConntrackFast(
  s: string,
  from: number,
  end: number,
  lineNo: number,
  interner: ConntrackInterner,
): ConntrackEntry | undefined {
  const rawEnd = end;
  while (end > from) {
    const c = s.charCodeAt(end - 1);
    if (c !== 32 && c !== 9) break;
    end--;
  }
  const r = CUR;
  r.s = s;
  r.end = end;
  r.i = from;
  const c0 = s.charCodeAt(from);
  if (c0 < 97 || c0 > 122) return undefined;

  // [ipv4 2 | ipv6 10] proto num
  let l3 = 0;
  if (at(s, from, 'ipv4') || at(s, from, 'ipv6')) {
    l3 = s.charCodeAt(from + 3) === 52 ? 4 : 6;
    r.i = from + 4;
    if (!r.blanks() || !r.uint(255) || r.value !== (l3 === 4 ? 2 : 10) || !r.blanks()) return undefined;
  }
  let proto: ConntrackProto | undefined;
  let protoNum = -1;
  const pe = r.wordEnd();
  for (const [name, num] of PORTED) {
    if (name.length === pe - r.i && at(s, r.i, name)) {
      proto = name;
      protoNum = num;
      break;
    }
  }
  if (proto === undefined) return undefined;
  r.i = pe;
  if (!r.blanks() || !r.uint(255) || r.value !== protoNum || !r.blanks()) return undefined;

  // timeout, state
  let timeout: number | undefined;
  let state: ConntrackState | undefined;
  let c = s.charCodeAt(r.i);
  if (c >= 48 && c <= 57) {
    if (!r.uint(U32_MAX) || !r.blanks()) return undefined;
    timeout = r.value;
    c = s.charCodeAt(r.i);
  }
  if (c >= 65 && c <= 90) {
    const we = r.wordEnd();
    state = wordIn(STATES, s, r.i, we);
    if (state === undefined) return undefined;
    r.i = we;
    if (!r.blanks()) return undefined;
  }

  const orig = readTuple(r, interner);
  if (orig === undefined) return undefined;
  let flags = r.flag();
  if (flags !== 0 && flags !== 1) return undefined;
  const reply = readTuple(r, interner);
  if (reply === undefined) return undefined;
  const late = r.flag();
  if (late === 1) return undefined;
  flags |= late;
  if (r.i < end && s.charCodeAt(r.i) === 91) return undefined;

  // Meta fields, each at most once, in conntrack's print order (one loop: a small
  // function compiles sooner, and a cold parse of 10^5 lines waits for the compiler).
  const meta = META_VALUES;
  meta.fill(undefined);
  let k = 0;
  while (r.i < end && k < META_KEYS.length) {
    const key = META_KEYS[k]!;
    if (at(s, r.i, key)) {
      if (!r.field(key, META_MAX[k]!)) return undefined;
      meta[k] = r.value;
    }
    k++;
  }
  const mark = meta[0];
  const secmark = meta[1];
  const zone = meta[2];
  const deltaTime = meta[3];
  const use = meta[4];
  const id = meta[5];
  if (r.i < end) return undefined;

  // Both tuples of one family, matching the layer-3 prefix if there is one.
  const v6 = orig.src.indexOf(':') >= 0;
  if ((orig.dst.indexOf(':') >= 0) !== v6 || (reply.src.indexOf(':') >= 0) !== v6 || (reply.dst.indexOf(':') >= 0) !== v6) {
    return undefined;
  }
  if (l3 !== 0 && (l3 === 6) !== v6) return undefined;
  const entry = {
    line: lineNo,
    raw: s.slice(from, rawEnd),
    family: v6 ? ('ipv6' as const) : ('ipv4' as const),
    proto,
    protoNum,
    timeout,
    state,
    orig,
    reply,
    flags: FLAG_SETS[flags]!,
    mark,
    zone,
    deltaTime,
    use,
    id,
  };
  if (secmark !== undefined) return { ...entry, secmark };
  return entry;
}
