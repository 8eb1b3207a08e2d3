/**
 * One conntrack line → one {@link ConntrackEntry}, or the reason it is not one.
 *
 * Layout (libnetfilter_conntrack `__snprintf_conntrack_default`, kernel
 * `ct_seq_show`), each item followed by one space:
 *
 * ```
 * [sec.usec]\t            -E -o timestamp only (conntrack.c event_cb)
 * %9s  [NEW]|[UPDATE]|[DESTROY]   -E only
 * %-8s %u  ipv4 2 | ipv6 10       -o extended and /proc only
 * %-8s %u  tcp 6 | udp 17 | …     always
 * %u       timeout (seconds)      absent for offloaded flows
 * %s       TCP/SCTP/DCCP state
 * src= dst= sport= dport= | type= code= id= | srckey=0x dstkey=0x   original tuple
 * zone-orig=  packets= bytes=  [UNREPLIED]
 * src= dst= …                    reply tuple
 * zone-reply= packets= bytes=  [ASSURED]|[OFFLOAD]|[HW_OFFLOAD]
 * mark= secmark= secctx= zone= delta-time= [start=ctime] [stop=ctime] helper= use= id= labels=a,b
 * [USERSPACE] portid= progname=  -E only (conntrack ≥ 1.4.6)
 * ```
 *
 * The scanner walks the line once with `charCodeAt`; it has no regular
 * expression, so a hostile line costs time linear in its length.
 */
import {
  CONNTRACK_PROTO_NUMBERS,
  CONNTRACK_STATES,
  type ConntrackEntry,
  type ConntrackEventKind,
  type ConntrackExtraField,
  type ConntrackFamily,
  type ConntrackFlag,
  type ConntrackProto,
  type ConntrackState,
  type ConntrackTuple,
  type ConntrackUserspace,
} from '../model/conntrack.js';
import {
  allUpperWord,
  ConntrackInterner,
  isSpace,
  parseCounter,
  parseHex,
  parseUint,
  skipSpaces,
  U32_MAX,
  wordEnd,
} from './conntrack-scan.js';
import { flatCopy, flatSlice } from '../flat-string.js';

export { ConntrackInterner } from './conntrack-scan.js';

/** A finding about a line that still produced an entry. */
export interface LineNote {
  readonly code: 'unknown-field' | 'unknown-state' | 'proto-mismatch' | 'duplicate-field';
  readonly message: string;
}

/** Why a line is not an entry. `'not-conntrack'`: it does not start like one at all. */
export interface LineFailure {
  readonly code: 'not-conntrack' | 'malformed' | 'truncated' | 'bad-value' | 'bad-address';
  readonly message: string;
}

/** Result of {@link parseConntrackLine}. */
export type LineOutcome =
  | { readonly ok: true; readonly entry: ConntrackEntry; readonly notes: readonly LineNote[] }
  | { readonly ok: false; readonly failure: LineFailure };

const PROTO_BY_NAME = new Map<string, ConntrackProto>(
  (Object.keys(CONNTRACK_PROTO_NUMBERS) as ConntrackProto[]).concat('unknown').map((p) => [p, p]),
);
const FAMILY_BY_NAME = new Map<string, ConntrackFamily>([
  ['ipv4', 'ipv4'],
  ['ipv6', 'ipv6'],
]);
const EVENT_BY_TAG = new Map<string, ConntrackEventKind>([
  ['NEW', 'NEW'],
  ['UPDATE', 'UPDATE'],
  ['DESTROY', 'DESTROY'],
]);

// Flags as a bitmask, turned back into one shared frozen array per combination.
const FLAG_BITS: Readonly<Record<ConntrackFlag, number>> = { UNREPLIED: 1, ASSURED: 2, OFFLOAD: 4, HW_OFFLOAD: 8 };
const FLAG_ORDER: readonly ConntrackFlag[] = ['UNREPLIED', 'ASSURED', 'OFFLOAD', 'HW_OFFLOAD'];
const FLAG_SETS: readonly (readonly ConntrackFlag[])[] = Array.from({ length: 16 }, (_, mask) =>
  Object.freeze(FLAG_ORDER.filter((f) => (mask & FLAG_BITS[f]) !== 0)),
);

function fail(code: LineFailure['code'], message: string): LineOutcome {
  return { ok: false, failure: { code, message } };
}

/**
 * Where an entry starts in `line`, skipping a `cat -n` line-number prefix:
 * returns the index of the first significant character and whether a prefix was
 * skipped. A conntrack line never starts with a number, so digits followed by
 * blanks and a protocol word can only be such a prefix.
 */
export function entryStart(line: string): { start: number; numbered: boolean } {
  const end = line.length;
  const i = skipSpaces(line, 0, end);
  let j = i;
  while (j < end) {
    const c = line.charCodeAt(j);
    if (c < 48 || c > 57) break;
    j++;
  }
  if (j > i && j < end && isSpace(line.charCodeAt(j))) {
    const k = skipSpaces(line, j, end);
    const w = wordEnd(line, k, end);
    const word = line.slice(k, w);
    if (FAMILY_BY_NAME.has(word) || PROTO_BY_NAME.has(word)) return { start: k, numbered: true };
  }
  return { start: i, numbered: false };
}

/**
 * True when `line` (from `start`) begins like a conntrack line: an event
 * timestamp or tag, or a family/protocol name followed by a number.
 */
export function looksLikeEntry(line: string, start: number): boolean {
  const end = line.length;
  if (start >= end) return false;
  if (line.charCodeAt(start) === 91 /* [ */) {
    const close = line.indexOf(']', start);
    if (close < 0) return false;
    const tag = line.slice(start + 1, close);
    return EVENT_BY_TAG.has(tag) || (tag.length > 2 && parseTimestampOk(tag));
  }
  const w = wordEnd(line, start, end);
  const word = line.slice(start, w);
  if (!FAMILY_BY_NAME.has(word) && !PROTO_BY_NAME.has(word)) return false;
  const n = skipSpaces(line, w, end);
  const ne = wordEnd(line, n, end);
  return parseUint(line, n, ne, 255) >= 0;
}

function parseTimestampOk(tag: string): boolean {
  const dot = tag.indexOf('.');
  if (dot <= 0 || dot === tag.length - 1) return false;
  return parseUint(tag, 0, dot, Number.MAX_SAFE_INTEGER) >= 0 && parseUint(tag, dot + 1, tag.length, 999999999) >= 0;
}

// ---------------------------------------------------------------------------
// Field keys are resolved from the line without allocating a key string: by
// length and first character, then `startsWith` (a million-line table has tens
// of millions of keys, and a fresh string per key costs hashing and GC).

const K_SRC = 1;
const K_DST = 2;
const K_SPORT = 3;
const K_DPORT = 4;
const K_TYPE = 5;
const K_CODE = 6;
const K_ID = 7;
const K_SRCKEY = 8;
const K_DSTKEY = 9;
const K_ZONE_ORIG = 10;
const K_ZONE_REPLY = 11;
const K_PACKETS = 12;
const K_BYTES = 13;
const LAST_TUPLE_KEY = 13; // keys up to here belong to a tuple (or follow it)
const K_MARK = 14;
const K_SECMARK = 15;
const K_ZONE = 16;
const K_USE = 17;
const K_DELTA_TIME = 18;
const K_SECCTX = 19;
const K_HELPER = 20;
const K_LABELS = 21;
const K_PORTID = 22;
const K_PROGNAME = 23;

const KEY_NAMES: readonly (readonly [string, number])[] = [
  ['src', K_SRC], ['dst', K_DST], ['sport', K_SPORT], ['dport', K_DPORT], ['type', K_TYPE], ['code', K_CODE],
  ['id', K_ID], ['srckey', K_SRCKEY], ['dstkey', K_DSTKEY], ['zone-orig', K_ZONE_ORIG], ['zone-reply', K_ZONE_REPLY],
  ['packets', K_PACKETS], ['bytes', K_BYTES], ['mark', K_MARK], ['secmark', K_SECMARK], ['zone', K_ZONE],
  ['use', K_USE], ['delta-time', K_DELTA_TIME], ['secctx', K_SECCTX], ['helper', K_HELPER], ['labels', K_LABELS],
  ['portid', K_PORTID], ['progname', K_PROGNAME],
];
// Keys by a hash computed while scanning the token (see `keyHash`).
const KEY_BY_HASH = new Map<number, readonly [string, number]>();
for (const kv of KEY_NAMES) {
  let h = 0;
  for (let k = 0; k < kv[0].length; k++) h = (Math.imul(h, 31) + kv[0].charCodeAt(k)) | 0;
  KEY_BY_HASH.set(h, kv);
}

/** The key code of `s[from, to)` whose hash is `h`; 0 for a key this parser does not know. */
function keyCode(s: string, from: number, to: number, h: number): number {
  const kv = KEY_BY_HASH.get(h);
  if (kv === undefined) return 0;
  const name = kv[0];
  if (name.length !== to - from) return 0;
  for (let k = 0; k < name.length; k++) if (name.charCodeAt(k) !== s.charCodeAt(from + k)) return 0;
  return kv[1];
}

/** A tuple under construction: one reused object per direction, all keys present. */
class TupleDraft {
  src: string | undefined = undefined;
  dst: string | undefined = undefined;
  sport: number | undefined = undefined;
  dport: number | undefined = undefined;
  icmpType: number | undefined = undefined;
  icmpCode: number | undefined = undefined;
  icmpId: number | undefined = undefined;
  srcKey: number | undefined = undefined;
  dstKey: number | undefined = undefined;
  zone: number | undefined = undefined;
  packets: bigint | undefined = undefined;
  bytes: bigint | undefined = undefined;

  reset(): void {
    this.src = this.dst = undefined;
    this.sport = this.dport = this.icmpType = this.icmpCode = this.icmpId = undefined;
    this.srcKey = this.dstKey = this.zone = undefined;
    this.packets = this.bytes = undefined;
  }
}

// Parsing is synchronous, so two drafts serve every line.
const ORIG = new TupleDraft();
const REPLY = new TupleDraft();

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

const SHAPE_PORTED = 1;
const SHAPE_ICMP = 2;
const SHAPE_GRE = 3;
const SHAPE_BARE = 4;

function shapeOf(proto: ConntrackProto): number {
  switch (proto) {
    case 'tcp':
    case 'udp':
    case 'udplite':
    case 'sctp':
    case 'dccp':
      return SHAPE_PORTED;
    case 'icmp':
    case 'icmpv6':
      return SHAPE_ICMP;
    case 'gre':
      return SHAPE_GRE;
    default:
      return SHAPE_BARE;
  }
}

/**
 * The final tuple holds only the keys its protocol prints (fewer slots per
 * object); anything printed that the protocol does not have is added after.
 */
function finishTuple(d: TupleDraft, shape: number): ConntrackTuple {
  let t: Mutable<ConntrackTuple>;
  const src = d.src as string;
  const dst = d.dst as string;
  if (shape === SHAPE_PORTED) t = { src, dst, sport: d.sport, dport: d.dport, packets: d.packets, bytes: d.bytes };
  else if (shape === SHAPE_ICMP) {
    t = { src, dst, icmpType: d.icmpType, icmpCode: d.icmpCode, icmpId: d.icmpId, packets: d.packets, bytes: d.bytes };
  } else if (shape === SHAPE_GRE) t = { src, dst, srcKey: d.srcKey, dstKey: d.dstKey, packets: d.packets, bytes: d.bytes };
  else t = { src, dst, packets: d.packets, bytes: d.bytes };
  if (shape !== SHAPE_PORTED && (d.sport !== undefined || d.dport !== undefined)) {
    t.sport = d.sport;
    t.dport = d.dport;
  }
  if (shape !== SHAPE_ICMP && (d.icmpType !== undefined || d.icmpCode !== undefined || d.icmpId !== undefined)) {
    t.icmpType = d.icmpType;
    t.icmpCode = d.icmpCode;
    t.icmpId = d.icmpId;
  }
  if (shape !== SHAPE_GRE && (d.srcKey !== undefined || d.dstKey !== undefined)) {
    t.srcKey = d.srcKey;
    t.dstKey = d.dstKey;
  }
  if (d.zone !== undefined) t.zone = d.zone;
  return t;
}

function note(notes: LineNote[] | undefined, code: LineNote['code'], message: string): LineNote[] {
  const out = notes ?? [];
  out.push({ code, message });
  return out;
}

const NO_NOTES: readonly LineNote[] = Object.freeze([]);

/**
 * The state of the line being read, one reused object (parsing is synchronous): the
 * scan position `i` in `s` up to `end`, the head (event, family, protocol, timeout,
 * state) and every field met so far. {@link LineDraft.reset} clears it for a line.
 */
class LineDraft {
  s = '';
  end = 0;
  i = 0;
  eventTime: string | undefined = undefined;
  event: ConntrackEventKind | undefined = undefined;
  l3: ConntrackFamily | undefined = undefined;
  l3Num = -1;
  proto: ConntrackProto = 'unknown';
  protoNum = -1;
  timeout: number | undefined = undefined;
  state: ConntrackState | undefined = undefined;
  notes: LineNote[] | undefined = undefined;
  extra: ConntrackExtraField[] | undefined = undefined;
  cur: TupleDraft = ORIG;
  flagMask = 0;
  mark: number | undefined = undefined;
  secmark: number | undefined = undefined;
  secctx: string | undefined = undefined;
  zone: number | undefined = undefined;
  deltaTime: number | undefined = undefined;
  startText: string | undefined = undefined;
  stopText: string | undefined = undefined;
  helper: string | undefined = undefined;
  use: number | undefined = undefined;
  id: number | undefined = undefined;
  labels: string[] | undefined = undefined;
  userspace: Mutable<ConntrackUserspace> | undefined = undefined;
  /** Set by the first item that is not part of a tuple: an `id=` after it is the conntrack id. */
  metaSeen = false;

  reset(s: string, start: number): void {
    let end = s.length;
    while (end > start && (isSpace(s.charCodeAt(end - 1)) || s.charCodeAt(end - 1) === 13)) end--;
    this.s = s;
    this.end = end;
    this.i = skipSpaces(s, start, end);
    this.eventTime = this.event = this.l3 = undefined;
    this.l3Num = this.protoNum = -1;
    this.proto = 'unknown';
    this.timeout = this.state = undefined;
    this.notes = this.extra = undefined;
    ORIG.reset();
    REPLY.reset();
    this.cur = ORIG;
    this.flagMask = 0;
    this.mark = this.secmark = this.zone = this.deltaTime = this.use = this.id = undefined;
    this.secctx = this.startText = this.stopText = this.helper = undefined;
    this.labels = undefined;
    this.userspace = undefined;
    this.metaSeen = false;
  }

  note(code: LineNote['code'], message: string): void {
    this.notes = note(this.notes, code, message);
  }

  keepExtra(field: ConntrackExtraField): void {
    (this.extra ??= []).push(field);
  }
}

const LINE = new LineDraft();

/**
 * Reads the head of the line into `d`: the `[sec.usec]` and `[NEW]` prefixes, the
 * optional family and its number, the protocol and its number, the timeout and the
 * state. Returns the failure, or undefined when the head is well-formed.
 */
function readHead(d: LineDraft): LineOutcome | undefined {
  const s = d.s;
  const end = d.end;
  let i = d.i;
  for (let guard = 0; guard < 2 && i < end && s.charCodeAt(i) === 91; guard++) {
    const close = s.indexOf(']', i);
    if (close < 0 || close >= end) return fail('malformed', 'unterminated "[" at the start of the line');
    const tag = s.slice(i + 1, close);
    const kind = EVENT_BY_TAG.get(tag);
    if (kind !== undefined && d.event === undefined) d.event = kind;
    else if (kind === undefined && d.eventTime === undefined && d.event === undefined && parseTimestampOk(tag)) d.eventTime = flatCopy(tag);
    else return fail('not-conntrack', `unexpected "[${tag.slice(0, 40)}]" at the start of the line`);
    i = skipSpaces(s, close + 1, end);
  }

  // [family num] proto num
  let w = wordEnd(s, i, end);
  let word = s.slice(i, w);
  const fam = FAMILY_BY_NAME.get(word);
  if (fam !== undefined) {
    d.l3 = fam;
    i = skipSpaces(s, w, end);
    w = wordEnd(s, i, end);
    d.l3Num = parseUint(s, i, w, 255);
    if (d.l3Num < 0) return fail('malformed', `expected the layer-3 protocol number after "${fam}"`);
    i = skipSpaces(s, w, end);
    w = wordEnd(s, i, end);
    word = s.slice(i, w);
  }
  const proto = PROTO_BY_NAME.get(word);
  if (proto === undefined) {
    if (d.l3 !== undefined) return fail('malformed', `unknown layer-4 protocol "${word.slice(0, 40)}"`);
    return fail('not-conntrack', 'not a conntrack line');
  }
  d.proto = proto;
  i = skipSpaces(s, w, end);
  w = wordEnd(s, i, end);
  const protoNum = parseUint(s, i, w, 255);
  if (protoNum < 0) {
    return fail(d.l3 !== undefined || d.event !== undefined ? 'malformed' : 'not-conntrack', `expected the protocol number after "${proto}"`);
  }
  d.protoNum = protoNum;
  i = skipSpaces(s, w, end);
  if (proto !== 'unknown' && CONNTRACK_PROTO_NUMBERS[proto] !== protoNum) {
    d.note('proto-mismatch', `"${proto}" printed with protocol number ${protoNum}`);
  }

  // timeout, state
  w = wordEnd(s, i, end);
  if (w > i && s.charCodeAt(i) >= 48 && s.charCodeAt(i) <= 57) {
    const t = parseUint(s, i, w, U32_MAX);
    if (t < 0) return fail('bad-value', `bad timeout "${s.slice(i, w).slice(0, 40)}"`);
    d.timeout = t;
    i = skipSpaces(s, w, end);
    w = wordEnd(s, i, end);
  }
  if (allUpperWord(s, i, w)) {
    const st = s.slice(i, w);
    if (CONNTRACK_STATES.has(st as ConntrackState)) d.state = st as ConntrackState;
    else {
      d.note('unknown-state', `unknown state "${st.slice(0, 40)}" kept in extra`);
      d.keepExtra({ key: flatCopy(st) });
    }
    i = skipSpaces(s, w, end);
  }
  d.i = i;
  return undefined;
}

/**
 * Reads the bracketed item at `d.i` (a flag, `[USERSPACE]`, `[start=…]`/`[stop=…]`,
 * which hold spaces, or an unknown item kept in extra). Returns the failure, or
 * undefined when it was read.
 */
function readBracketItem(d: LineDraft): LineOutcome | undefined {
  const s = d.s;
  const i = d.i;
  const close = s.indexOf(']', i);
  if (close < 0 || close >= d.end) return fail('truncated', `unterminated "${s.slice(i, i + 20)}"`);
  const from = i + 1;
  const len = close - from;
  d.i = skipSpaces(s, close + 1, d.end);
  let bit = 0;
  if (len === 9 && s.startsWith('UNREPLIED', from)) bit = 1;
  else if (len === 7 && s.startsWith('ASSURED', from)) bit = 2;
  else if (len === 7 && s.startsWith('OFFLOAD', from)) bit = 4;
  else if (len === 10 && s.startsWith('HW_OFFLOAD', from)) bit = 8;
  if (bit !== 0) {
    if (bit !== 1) d.metaSeen = true;
    if ((d.flagMask & bit) !== 0) d.note('duplicate-field', `"${s.slice(from - 1, close + 1)}" appears twice`);
    d.flagMask |= bit;
    return undefined;
  }
  d.metaSeen = true;
  if (len === 9 && s.startsWith('USERSPACE', from)) d.userspace ??= { portid: -1 };
  else if (s.startsWith('start=', from)) d.startText = flatSlice(s, from + 6, close);
  else if (s.startsWith('stop=', from)) d.stopText = flatSlice(s, from + 5, close);
  else {
    const item = s.slice(from - 1, close + 1);
    d.note('unknown-field', `unknown item "${item.slice(0, 40)}" kept in extra`);
    d.keepExtra({ key: flatCopy(item) });
  }
  return undefined;
}

/**
 * Reads the token at `d.i`: a bare word (kept in extra; never before the original
 * tuple) or a `key=value` field. Returns the failure, or undefined when it was read.
 */
function readToken(d: LineDraft, interner: ConntrackInterner): LineOutcome | undefined {
  const s = d.s;
  const end = d.end;
  const i = d.i;
  // Find the token's end and its first '=', hashing the key on the way.
  let eq = -1;
  let h = 0;
  let w = i;
  while (w < end) {
    const c = s.charCodeAt(w);
    if (c === 32 || c === 9) break;
    if (eq < 0) {
      if (c === 61) eq = w;
      else h = (Math.imul(h, 31) + c) | 0;
    }
    w++;
  }
  d.i = skipSpaces(s, w, end);
  if (eq < 0) {
    const bare = s.slice(i, w);
    if (ORIG.src === undefined) return fail('malformed', `unexpected "${bare.slice(0, 40)}" before the original tuple`);
    d.note('unknown-field', `unexpected word "${bare.slice(0, 40)}" kept in extra`);
    d.keepExtra({ key: flatCopy(bare) });
    return undefined;
  }
  const k = keyCode(s, i, eq, h);
  if (k === 0 || k > LAST_TUPLE_KEY) d.metaSeen = true;
  const read = k === 0 ? false : k <= LAST_TUPLE_KEY ? readTupleField(d, k, i, eq, w, interner) : readMetaField(d, k, i, eq, w);
  if (read !== false) return read;
  const key = s.slice(i, eq);
  d.note('unknown-field', `unknown field "${key.slice(0, 40)}" kept in extra`);
  d.keepExtra({ key: flatCopy(key), value: flatSlice(s, eq + 1, w) });
  return undefined;
}

/**
 * Reads a tuple field (`src`…`bytes`, and `id`, which is the ICMP echo id inside an
 * ICMP tuple and the conntrack id after the tuples): key `s[ks, eq)`, value
 * `s[eq+1, ve)`. Returns the failure, or undefined when it was read.
 */
function readTupleField(d: LineDraft, k: number, ks: number, eq: number, ve: number, interner: ConntrackInterner): LineOutcome | undefined {
  const s = d.s;
  const vs = eq + 1;
  const orig = ORIG;
  const reply = REPLY;
  let cur = d.cur;
  let n: number;
  switch (k) {
    case K_SRC: {
      if (orig.src === undefined) cur = d.cur = orig;
      else if (reply.src === undefined) cur = d.cur = reply;
      else return fail('malformed', 'a third "src=": two lines run together');
      const a = interner.address(s, vs, ve);
      if (a === undefined) return fail('bad-address', `bad address "${s.slice(vs, ve).slice(0, 60)}"`);
      cur.src = a;
      return undefined;
    }
    case K_DST: {
      if (cur.dst !== undefined) return fail('malformed', '"dst=" twice in one tuple');
      const a = interner.address(s, vs, ve);
      if (a === undefined) return fail('bad-address', `bad address "${s.slice(vs, ve).slice(0, 60)}"`);
      cur.dst = a;
      return undefined;
    }
    case K_SPORT:
    case K_DPORT:
      n = parseUint(s, vs, ve, 65535);
      if (n < 0) return fail('bad-value', `bad ${s.slice(ks, eq)} "${s.slice(vs, ve).slice(0, 40)}"`);
      if (k === K_SPORT) {
        if (cur.sport !== undefined) return fail('malformed', '"sport=" twice in one tuple');
        cur.sport = n;
      } else {
        if (cur.dport !== undefined) return fail('malformed', '"dport=" twice in one tuple');
        cur.dport = n;
      }
      return undefined;
    case K_TYPE:
    case K_CODE:
      n = parseUint(s, vs, ve, 255);
      if (n < 0) return fail('bad-value', `bad icmp ${s.slice(ks, eq)} "${s.slice(vs, ve).slice(0, 40)}"`);
      if (k === K_TYPE) cur.icmpType = n;
      else cur.icmpCode = n;
      return undefined;
    case K_ID:
      return readId(d, vs, ve);
    case K_SRCKEY:
    case K_DSTKEY:
      n = parseHex(s, vs, ve, 0xffffffff);
      if (n < 0) return fail('bad-value', `bad GRE ${s.slice(ks, eq)} "${s.slice(vs, ve).slice(0, 40)}"`);
      if (k === K_SRCKEY) cur.srcKey = n;
      else cur.dstKey = n;
      return undefined;
    case K_ZONE_ORIG:
    case K_ZONE_REPLY:
      n = parseUint(s, vs, ve, 65535);
      if (n < 0) return fail('bad-value', `bad ${s.slice(ks, eq)} "${s.slice(vs, ve).slice(0, 40)}"`);
      (k === K_ZONE_ORIG ? orig : reply).zone = n;
      return undefined;
    default: {
      // K_PACKETS, K_BYTES
      const v = parseCounter(s, vs, ve);
      if (v === undefined) return fail('bad-value', `bad ${s.slice(ks, eq)} "${s.slice(vs, ve).slice(0, 40)}"`);
      if (k === K_PACKETS) {
        if (cur.packets !== undefined) return fail('malformed', '"packets=" twice in one direction');
        cur.packets = v;
      } else {
        if (cur.bytes !== undefined) return fail('malformed', '"bytes=" twice in one direction');
        cur.bytes = v;
      }
      return undefined;
    }
  }
}

/** `id=`: the echo id in an ICMP tuple (before any item that is not part of a tuple), else the conntrack id. */
function readId(d: LineDraft, vs: number, ve: number): LineOutcome | undefined {
  const s = d.s;
  const cur = d.cur;
  const icmpLike = d.proto === 'icmp' || d.proto === 'icmpv6';
  if (icmpLike && !d.metaSeen && cur.icmpType !== undefined && cur.icmpId === undefined) {
    const n = parseUint(s, vs, ve, 65535);
    if (n < 0) return fail('bad-value', `bad icmp id "${s.slice(vs, ve).slice(0, 40)}"`);
    cur.icmpId = n;
    return undefined;
  }
  d.metaSeen = true;
  const n = parseUint(s, vs, ve, U32_MAX);
  if (n < 0) return fail('bad-value', `bad id "${s.slice(vs, ve).slice(0, 40)}"`);
  if (d.id !== undefined) d.note('duplicate-field', '"id=" appears twice; the last kept');
  d.id = n;
  return undefined;
}

/**
 * Reads an entry-level field (`mark`…`progname`): key `s[ks, eq)`, value `s[eq+1, ve)`.
 * Returns the failure, undefined when it was read, or false when it is not one this
 * parser keeps (`portid`/`progname` without `[USERSPACE]`): the caller keeps it in extra.
 */
function readMetaField(d: LineDraft, k: number, ks: number, eq: number, ve: number): LineOutcome | undefined | false {
  const s = d.s;
  const vs = eq + 1;
  switch (k) {
    case K_MARK:
    case K_SECMARK:
    case K_ZONE:
    case K_USE:
    case K_DELTA_TIME: {
      const n = parseUint(s, vs, ve, k === K_DELTA_TIME ? Number.MAX_SAFE_INTEGER : U32_MAX);
      if (n < 0) return fail('bad-value', `bad ${s.slice(ks, eq)} "${s.slice(vs, ve).slice(0, 40)}"`);
      let before: number | undefined;
      if (k === K_MARK) (before = d.mark), (d.mark = n);
      else if (k === K_SECMARK) (before = d.secmark), (d.secmark = n);
      else if (k === K_ZONE) (before = d.zone), (d.zone = n);
      else if (k === K_USE) (before = d.use), (d.use = n);
      else (before = d.deltaTime), (d.deltaTime = n);
      if (before !== undefined) d.note('duplicate-field', `"${s.slice(ks, eq)}=" appears twice; the last kept`);
      return undefined;
    }
    case K_SECCTX:
      d.secctx = flatSlice(s, vs, ve);
      return undefined;
    case K_HELPER:
      d.helper = flatSlice(s, vs, ve);
      return undefined;
    case K_LABELS:
      d.labels = vs < ve ? s.slice(vs, ve).split(',').map(flatCopy) : [];
      return undefined;
    case K_PORTID:
    case K_PROGNAME: {
      const userspace = d.userspace;
      if (userspace === undefined) return false;
      if (k === K_PROGNAME) userspace.progname = flatSlice(s, vs, ve);
      else {
        const n = parseUint(s, vs, ve, U32_MAX);
        if (n < 0) return fail('bad-value', `bad portid "${s.slice(vs, ve).slice(0, 40)}"`);
        userspace.portid = n;
      }
      return undefined;
    }
    default:
      return false;
  }
}

/**
 * Checks the line read into `d` is complete (both tuples with addresses of one family
 * matching the layer-3 prefix, the protocol's own fields, `portid=` with `[USERSPACE]`)
 * and builds its entry.
 */
function finishEntry(d: LineDraft, line: string, lineNo: number): LineOutcome {
  const orig = ORIG;
  const reply = REPLY;
  const proto = d.proto;
  if (orig.src === undefined || orig.dst === undefined) return fail('truncated', 'no original tuple');
  if (reply.src === undefined || reply.dst === undefined) return fail('truncated', 'no reply tuple');
  const family: ConntrackFamily = orig.src.indexOf(':') >= 0 ? 'ipv6' : 'ipv4';
  if (
    (orig.dst.indexOf(':') >= 0) !== (family === 'ipv6') ||
    (reply.src.indexOf(':') >= 0) !== (family === 'ipv6') ||
    (reply.dst.indexOf(':') >= 0) !== (family === 'ipv6')
  ) {
    return fail('malformed', 'IPv4 and IPv6 addresses mixed in one entry');
  }
  if (d.l3 !== undefined && (d.l3 !== family || d.l3Num !== (family === 'ipv4' ? 2 : 10))) {
    return fail('malformed', `layer-3 prefix "${d.l3} ${d.l3Num}" does not match the ${family} addresses`);
  }
  const shape = shapeOf(proto);
  if (shape === SHAPE_PORTED && (orig.sport === undefined || orig.dport === undefined || reply.sport === undefined || reply.dport === undefined)) {
    return fail('truncated', `${proto} entry without ports in both tuples`);
  }
  if (shape === SHAPE_ICMP && (orig.icmpType === undefined || orig.icmpCode === undefined || orig.icmpId === undefined || reply.icmpId === undefined)) {
    return fail('truncated', `${proto} entry without type/code/id in both tuples`);
  }
  if (d.userspace !== undefined && d.userspace.portid < 0) return fail('truncated', '"[USERSPACE]" without portid=');

  // Common fields in one literal (one shape); the rare ones only when present.
  const entry: Mutable<ConntrackEntry> = {
    line: lineNo,
    raw: flatCopy(line),
    family,
    proto,
    protoNum: d.protoNum,
    timeout: d.timeout,
    state: d.state,
    orig: finishTuple(orig, shape),
    reply: finishTuple(reply, shape),
    flags: FLAG_SETS[d.flagMask] ?? [],
    mark: d.mark,
    zone: d.zone,
    deltaTime: d.deltaTime,
    use: d.use,
    id: d.id,
  };
  if (d.event !== undefined) entry.event = d.event;
  if (d.eventTime !== undefined) entry.eventTime = d.eventTime;
  if (d.secmark !== undefined) entry.secmark = d.secmark;
  if (d.secctx !== undefined) entry.secctx = d.secctx;
  if (d.startText !== undefined) entry.start = d.startText;
  if (d.stopText !== undefined) entry.stop = d.stopText;
  if (d.helper !== undefined) entry.helper = d.helper;
  if (d.labels !== undefined) entry.labels = d.labels;
  if (d.userspace !== undefined) entry.userspace = d.userspace;
  if (d.extra !== undefined) entry.extra = d.extra;
  return { ok: true, entry, notes: d.notes ?? NO_NOTES };
}

/**
 * Parses one conntrack line (`line` without its line terminator) from index
 * `start` (see {@link entryStart}). `lineNo` is recorded in the entry; `raw` is
 * the whole `line`. Every string the entry keeps is a copy (`flatSlice`): none is a view
 * into `line`, which may be a slice of a whole capture. Never throws.
 */
export function parseConntrackLine(line: string, start: number, lineNo: number, interner: ConntrackInterner): LineOutcome {
  const d = LINE;
  d.reset(line, start);
  const outcome = readLine(d, line, lineNo, interner);
  // Drop the reference to the line so the reused draft keeps no capture alive.
  d.s = '';
  return outcome;
}

/** Reads the whole line in `d` (reset for it) into an entry or the failure. */
function readLine(d: LineDraft, line: string, lineNo: number, interner: ConntrackInterner): LineOutcome {
  const head = readHead(d);
  if (head !== undefined) return head;
  while (d.i < d.end) {
    const failed = d.s.charCodeAt(d.i) === 91 /* [ */ ? readBracketItem(d) : readToken(d, interner);
    if (failed !== undefined) return failed;
  }
  return finishEntry(d, line, lineNo);
}
