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
 * Parses one conntrack line (`line` without its line terminator) from index
 * `start` (see {@link entryStart}). `lineNo` is recorded in the entry; `raw` is
 * the whole `line`. Every string the entry keeps is a copy (`flatSlice`): none is a view
 * into `line`, which may be a slice of a whole capture. Never throws.
 */
export function parseConntrackLine(line: string, start: number, lineNo: number, interner: ConntrackInterner): LineOutcome {
  const s = line;
  let end = s.length;
  while (end > start && (isSpace(s.charCodeAt(end - 1)) || s.charCodeAt(end - 1) === 13)) end--;
  let i = skipSpaces(s, start, end);

  let eventTime: string | undefined;
  let event: ConntrackEventKind | undefined;

  // [sec.usec]\t and [NEW] prefixes
  for (let guard = 0; guard < 2 && i < end && s.charCodeAt(i) === 91; guard++) {
    const close = s.indexOf(']', i);
    if (close < 0 || close >= end) return fail('malformed', 'unterminated "[" at the start of the line');
    const tag = s.slice(i + 1, close);
    const kind = EVENT_BY_TAG.get(tag);
    if (kind !== undefined && event === undefined) event = kind;
    else if (kind === undefined && eventTime === undefined && event === undefined && parseTimestampOk(tag)) eventTime = flatCopy(tag);
    else return fail('not-conntrack', `unexpected "[${tag.slice(0, 40)}]" at the start of the line`);
    i = skipSpaces(s, close + 1, end);
  }

  // [family num] proto num
  let w = wordEnd(s, i, end);
  let word = s.slice(i, w);
  let l3: ConntrackFamily | undefined;
  let l3Num = -1;
  const fam = FAMILY_BY_NAME.get(word);
  if (fam !== undefined) {
    l3 = fam;
    i = skipSpaces(s, w, end);
    w = wordEnd(s, i, end);
    l3Num = parseUint(s, i, w, 255);
    if (l3Num < 0) return fail('malformed', `expected the layer-3 protocol number after "${fam}"`);
    i = skipSpaces(s, w, end);
    w = wordEnd(s, i, end);
    word = s.slice(i, w);
  }
  const proto = PROTO_BY_NAME.get(word);
  if (proto === undefined) {
    if (l3 !== undefined) return fail('malformed', `unknown layer-4 protocol "${word.slice(0, 40)}"`);
    return fail('not-conntrack', 'not a conntrack line');
  }
  i = skipSpaces(s, w, end);
  w = wordEnd(s, i, end);
  const protoNum = parseUint(s, i, w, 255);
  if (protoNum < 0) {
    return fail(l3 !== undefined || event !== undefined ? 'malformed' : 'not-conntrack', `expected the protocol number after "${proto}"`);
  }
  i = skipSpaces(s, w, end);

  let notes: LineNote[] | undefined;
  if (proto !== 'unknown' && CONNTRACK_PROTO_NUMBERS[proto] !== protoNum) {
    notes = note(notes, 'proto-mismatch', `"${proto}" printed with protocol number ${protoNum}`);
  }

  // timeout, state
  let timeout: number | undefined;
  let state: ConntrackState | undefined;
  let extra: ConntrackExtraField[] | undefined;
  w = wordEnd(s, i, end);
  if (w > i && s.charCodeAt(i) >= 48 && s.charCodeAt(i) <= 57) {
    const t = parseUint(s, i, w, U32_MAX);
    if (t < 0) return fail('bad-value', `bad timeout "${s.slice(i, w).slice(0, 40)}"`);
    timeout = t;
    i = skipSpaces(s, w, end);
    w = wordEnd(s, i, end);
  }
  if (allUpperWord(s, i, w)) {
    const st = s.slice(i, w);
    if (CONNTRACK_STATES.has(st as ConntrackState)) state = st as ConntrackState;
    else {
      notes = note(notes, 'unknown-state', `unknown state "${st.slice(0, 40)}" kept in extra`);
      (extra ??= []).push({ key: flatCopy(st) });
    }
    i = skipSpaces(s, w, end);
  }

  const orig = ORIG;
  const reply = REPLY;
  orig.reset();
  reply.reset();
  let cur = orig;
  const icmpLike = proto === 'icmp' || proto === 'icmpv6';
  let flagMask = 0;
  let mark: number | undefined;
  let secmark: number | undefined;
  let secctx: string | undefined;
  let zone: number | undefined;
  let deltaTime: number | undefined;
  let startText: string | undefined;
  let stopText: string | undefined;
  let helper: string | undefined;
  let use: number | undefined;
  let id: number | undefined;
  let labels: string[] | undefined;
  let userspace: Mutable<ConntrackUserspace> | undefined;
  // Set by the first item that is not part of a tuple: an `id=` after it is the conntrack id.
  let metaSeen = false;

  while (i < end) {
    if (s.charCodeAt(i) === 91 /* [ */) {
      // A bracketed item; [start=Thu Jan  1 00:00:00 1970] holds spaces.
      const close = s.indexOf(']', i);
      if (close < 0 || close >= end) return fail('truncated', `unterminated "${s.slice(i, i + 20)}"`);
      const from = i + 1;
      const len = close - from;
      i = skipSpaces(s, close + 1, end);
      let bit = 0;
      if (len === 9 && s.startsWith('UNREPLIED', from)) bit = 1;
      else if (len === 7 && s.startsWith('ASSURED', from)) bit = 2;
      else if (len === 7 && s.startsWith('OFFLOAD', from)) bit = 4;
      else if (len === 10 && s.startsWith('HW_OFFLOAD', from)) bit = 8;
      if (bit !== 0) {
        if (bit !== 1) metaSeen = true;
        if ((flagMask & bit) !== 0) notes = note(notes, 'duplicate-field', `"${s.slice(from - 1, close + 1)}" appears twice`);
        flagMask |= bit;
        continue;
      }
      metaSeen = true;
      if (len === 9 && s.startsWith('USERSPACE', from)) {
        userspace ??= { portid: -1 };
        continue;
      }
      if (s.startsWith('start=', from)) {
        startText = flatSlice(s, from + 6, close);
        continue;
      }
      if (s.startsWith('stop=', from)) {
        stopText = flatSlice(s, from + 5, close);
        continue;
      }
      const item = s.slice(from - 1, close + 1);
      notes = note(notes, 'unknown-field', `unknown item "${item.slice(0, 40)}" kept in extra`);
      (extra ??= []).push({ key: flatCopy(item) });
      continue;
    }
    // One token: find its end and its first '='.
    let eq = -1;
    let h = 0;
    w = i;
    while (w < end) {
      const c = s.charCodeAt(w);
      if (c === 32 || c === 9) break;
      if (eq < 0) {
        if (c === 61) eq = w;
        else h = (Math.imul(h, 31) + c) | 0;
      }
      w++;
    }
    if (eq < 0) {
      // A bare word: keep it, but a tuple is never made of bare words.
      const bare = s.slice(i, w);
      if (orig.src === undefined) return fail('malformed', `unexpected "${bare.slice(0, 40)}" before the original tuple`);
      notes = note(notes, 'unknown-field', `unexpected word "${bare.slice(0, 40)}" kept in extra`);
      (extra ??= []).push({ key: flatCopy(bare) });
      i = skipSpaces(s, w, end);
      continue;
    }
    const ks = i;
    const vs = eq + 1;
    const ve = w;
    i = skipSpaces(s, w, end);
    const k = keyCode(s, ks, eq, h);
    if (k === 0 || k > LAST_TUPLE_KEY) metaSeen = true;
    let n: number;
    switch (k) {
      case K_SRC: {
        if (orig.src === undefined) cur = orig;
        else if (reply.src === undefined) cur = reply;
        else return fail('malformed', 'a third "src=": two lines run together');
        const a = interner.address(s, vs, ve);
        if (a === undefined) return fail('bad-address', `bad address "${s.slice(vs, ve).slice(0, 60)}"`);
        cur.src = a;
        continue;
      }
      case K_DST: {
        if (cur.dst !== undefined) return fail('malformed', '"dst=" twice in one tuple');
        const a = interner.address(s, vs, ve);
        if (a === undefined) return fail('bad-address', `bad address "${s.slice(vs, ve).slice(0, 60)}"`);
        cur.dst = a;
        continue;
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
        continue;
      case K_TYPE:
      case K_CODE:
        n = parseUint(s, vs, ve, 255);
        if (n < 0) return fail('bad-value', `bad icmp ${s.slice(ks, eq)} "${s.slice(vs, ve).slice(0, 40)}"`);
        if (k === K_TYPE) cur.icmpType = n;
        else cur.icmpCode = n;
        continue;
      case K_ID:
        // In an icmp tuple `id=` is the echo id; after the tuples, the conntrack id.
        if (icmpLike && !metaSeen && cur.icmpType !== undefined && cur.icmpId === undefined) {
          n = parseUint(s, vs, ve, 65535);
          if (n < 0) return fail('bad-value', `bad icmp id "${s.slice(vs, ve).slice(0, 40)}"`);
          cur.icmpId = n;
          continue;
        }
        metaSeen = true;
        n = parseUint(s, vs, ve, U32_MAX);
        if (n < 0) return fail('bad-value', `bad id "${s.slice(vs, ve).slice(0, 40)}"`);
        if (id !== undefined) notes = note(notes, 'duplicate-field', '"id=" appears twice; the last kept');
        id = n;
        continue;
      case K_SRCKEY:
      case K_DSTKEY:
        n = parseHex(s, vs, ve, 0xffffffff);
        if (n < 0) return fail('bad-value', `bad GRE ${s.slice(ks, eq)} "${s.slice(vs, ve).slice(0, 40)}"`);
        if (k === K_SRCKEY) cur.srcKey = n;
        else cur.dstKey = n;
        continue;
      case K_ZONE_ORIG:
      case K_ZONE_REPLY:
        n = parseUint(s, vs, ve, 65535);
        if (n < 0) return fail('bad-value', `bad ${s.slice(ks, eq)} "${s.slice(vs, ve).slice(0, 40)}"`);
        (k === K_ZONE_ORIG ? orig : reply).zone = n;
        continue;
      case K_PACKETS:
      case K_BYTES: {
        const v = parseCounter(s, vs, ve);
        if (v === undefined) return fail('bad-value', `bad ${s.slice(ks, eq)} "${s.slice(vs, ve).slice(0, 40)}"`);
        if (k === K_PACKETS) {
          if (cur.packets !== undefined) return fail('malformed', '"packets=" twice in one direction');
          cur.packets = v;
        } else {
          if (cur.bytes !== undefined) return fail('malformed', '"bytes=" twice in one direction');
          cur.bytes = v;
        }
        continue;
      }
      case K_MARK:
      case K_SECMARK:
      case K_ZONE:
      case K_USE:
      case K_DELTA_TIME: {
        n = parseUint(s, vs, ve, k === K_DELTA_TIME ? Number.MAX_SAFE_INTEGER : U32_MAX);
        if (n < 0) return fail('bad-value', `bad ${s.slice(ks, eq)} "${s.slice(vs, ve).slice(0, 40)}"`);
        let before: number | undefined;
        if (k === K_MARK) (before = mark), (mark = n);
        else if (k === K_SECMARK) (before = secmark), (secmark = n);
        else if (k === K_ZONE) (before = zone), (zone = n);
        else if (k === K_USE) (before = use), (use = n);
        else (before = deltaTime), (deltaTime = n);
        if (before !== undefined) notes = note(notes, 'duplicate-field', `"${s.slice(ks, eq)}=" appears twice; the last kept`);
        continue;
      }
      case K_SECCTX:
        secctx = flatSlice(s, vs, ve);
        continue;
      case K_HELPER:
        helper = flatSlice(s, vs, ve);
        continue;
      case K_LABELS:
        labels = vs < ve ? s.slice(vs, ve).split(',').map(flatCopy) : [];
        continue;
      case K_PORTID:
      case K_PROGNAME:
        if (userspace === undefined) break;
        if (k === K_PROGNAME) userspace.progname = flatSlice(s, vs, ve);
        else {
          n = parseUint(s, vs, ve, U32_MAX);
          if (n < 0) return fail('bad-value', `bad portid "${s.slice(vs, ve).slice(0, 40)}"`);
          userspace.portid = n;
        }
        continue;
      default:
        break;
    }
    const key = s.slice(ks, eq);
    notes = note(notes, 'unknown-field', `unknown field "${key.slice(0, 40)}" kept in extra`);
    (extra ??= []).push({ key: flatCopy(key), value: flatSlice(s, vs, ve) });
  }

  // Completeness: both tuples with addresses, and the protocol's own fields.
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
  if (l3 !== undefined && (l3 !== family || l3Num !== (family === 'ipv4' ? 2 : 10))) {
    return fail('malformed', `layer-3 prefix "${l3} ${l3Num}" does not match the ${family} addresses`);
  }
  const shape = shapeOf(proto);
  if (shape === SHAPE_PORTED && (orig.sport === undefined || orig.dport === undefined || reply.sport === undefined || reply.dport === undefined)) {
    return fail('truncated', `${proto} entry without ports in both tuples`);
  }
  if (shape === SHAPE_ICMP && (orig.icmpType === undefined || orig.icmpCode === undefined || orig.icmpId === undefined || reply.icmpId === undefined)) {
    return fail('truncated', `${proto} entry without type/code/id in both tuples`);
  }
  if (userspace !== undefined && userspace.portid < 0) return fail('truncated', '"[USERSPACE]" without portid=');

  // Common fields in one literal (one shape); the rare ones only when present.
  const entry: Mutable<ConntrackEntry> = {
    line: lineNo,
    raw: flatCopy(line),
    family,
    proto,
    protoNum,
    timeout,
    state,
    orig: finishTuple(orig, shape),
    reply: finishTuple(reply, shape),
    flags: FLAG_SETS[flagMask] ?? [],
    mark,
    zone,
    deltaTime,
    use,
    id,
  };
  if (event !== undefined) entry.event = event;
  if (eventTime !== undefined) entry.eventTime = eventTime;
  if (secmark !== undefined) entry.secmark = secmark;
  if (secctx !== undefined) entry.secctx = secctx;
  if (startText !== undefined) entry.start = startText;
  if (stopText !== undefined) entry.stop = stopText;
  if (helper !== undefined) entry.helper = helper;
  if (labels !== undefined) entry.labels = labels;
  if (userspace !== undefined) entry.userspace = userspace;
  if (extra !== undefined) entry.extra = extra;
  return { ok: true, entry, notes: notes ?? NO_NOTES };
}
