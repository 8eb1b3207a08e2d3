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
  formatIpv6Groups,
  parseIpv4Number,
  parseIpv6Groups,
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

/**
 * Per-parse memo: equal address text and bigint counters are shared between
 * entries, which keeps a million-entry table compact. Bounded, so a table of
 * all-distinct addresses does not grow it without limit.
 */
export class ConntrackInterner {
  private readonly addrs = new Map<string, string>();
  private static readonly MAX = 1 << 16;

  /** Canonical address text for `text`, or `undefined` when it is not an address. */
  address(text: string): string | undefined {
    const hit = this.addrs.get(text);
    if (hit !== undefined) return hit;
    let canonical: string | undefined;
    if (text.indexOf(':') >= 0) {
      const groups = parseIpv6Groups(text);
      canonical = groups === undefined ? undefined : formatIpv6Groups(groups);
    } else {
      canonical = parseIpv4Number(text) === undefined ? undefined : text;
    }
    if (canonical === undefined) return undefined;
    if (this.addrs.size >= ConntrackInterner.MAX) this.addrs.clear();
    // Share the canonical string too, so /proc and tool forms point at one string.
    const shared = this.addrs.get(canonical) ?? canonical;
    this.addrs.set(text, shared);
    if (shared === canonical) this.addrs.set(canonical, canonical);
    return shared;
  }
}

const SMALL_BIGINTS: bigint[] = Array.from({ length: 1024 }, (_, i) => BigInt(i));

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

/** The shared, frozen flag array for a set of flags (in printing order). */
export function conntrackFlags(flags: Iterable<ConntrackFlag>): readonly ConntrackFlag[] {
  let mask = 0;
  for (const f of flags) mask |= FLAG_BITS[f];
  return FLAG_SETS[mask] ?? [];
}

const U32_MAX = 4294967295;

// Keys printed inside a tuple or right after it (per direction).
const TUPLE_KEYS = new Set(['src', 'dst', 'sport', 'dport', 'type', 'code', 'id', 'srckey', 'dstkey',
  'zone-orig', 'zone-reply', 'packets', 'bytes']);

/** Mutable tuple under construction. */
interface TupleDraft {
  src?: string;
  dst?: string;
  sport?: number;
  dport?: number;
  icmpType?: number;
  icmpCode?: number;
  icmpId?: number;
  srcKey?: number;
  dstKey?: number;
  zone?: number;
  packets?: bigint;
  bytes?: bigint;
}

function isSpace(c: number): boolean {
  return c === 32 || c === 9;
}

/** Decimal digits in `s[from, to)` → number; -1 when empty, not all digits, or above `max`. */
function parseUint(s: string, from: number, to: number, max: number): number {
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
function parseHex(s: string, from: number, to: number, max: number): number {
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
function parseCounter(s: string, from: number, to: number): bigint | undefined {
  const n = to - from;
  if (n <= 0 || n > 20) return undefined;
  if (n <= 15) {
    const v = parseUint(s, from, to, Number.MAX_SAFE_INTEGER);
    if (v < 0) return undefined;
    return v < SMALL_BIGINTS.length ? SMALL_BIGINTS[v] : BigInt(v);
  }
  for (let i = from; i < to; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return undefined;
  }
  const big = BigInt(s.slice(from, to));
  return big > 0xffffffffffffffffn ? undefined : big;
}

function fail(code: LineFailure['code'], message: string): LineOutcome {
  return { ok: false, failure: { code, message } };
}

/** Ends of the word starting at `i` (stops at a space or tab). */
function wordEnd(s: string, i: number, end: number): number {
  while (i < end && !isSpace(s.charCodeAt(i))) i++;
  return i;
}

function skipSpaces(s: string, i: number, end: number): number {
  while (i < end && isSpace(s.charCodeAt(i))) i++;
  return i;
}

function allUpperWord(s: string, from: number, to: number): boolean {
  if (from >= to) return false;
  const first = s.charCodeAt(from);
  if (first < 65 || first > 90) return false;
  for (let i = from + 1; i < to; i++) {
    const c = s.charCodeAt(i);
    if (!((c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95)) return false;
  }
  return true;
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

/**
 * Parses one conntrack line (`line` without its line terminator) from index
 * `start` (see {@link entryStart}). `lineNo` is recorded in the entry; `raw` is
 * the whole `line`. Never throws.
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
    else if (kind === undefined && eventTime === undefined && event === undefined && parseTimestampOk(tag)) eventTime = tag;
    else return fail('not-conntrack', `unexpected "[${tag}]" at the start of the line`);
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

  const notes: LineNote[] = [];
  if (proto !== 'unknown' && CONNTRACK_PROTO_NUMBERS[proto] !== protoNum) {
    notes.push({ code: 'proto-mismatch', message: `"${proto}" printed with protocol number ${protoNum}` });
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
      notes.push({ code: 'unknown-state', message: `unknown state "${st}" kept in extra` });
      (extra ??= []).push({ key: st });
    }
    i = skipSpaces(s, w, end);
  }

  const orig: TupleDraft = {};
  const reply: TupleDraft = {};
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
  let userspace: { portid?: number; progname?: string } | undefined;
  // Set by the first item that is not part of a tuple: an `id=` after it is the conntrack id.
  let metaSeen = false;

  const dup = (key: string): void => {
    notes.push({ code: 'duplicate-field', message: `"${key}" appears twice; the second kept in extra` });
  };

  while (i < end) {
    const c0 = s.charCodeAt(i);
    if (c0 === 91 /* [ */) {
      // A bracketed item; [start=Thu Jan  1 00:00:00 1970] holds spaces.
      const close = s.indexOf(']', i);
      if (close < 0 || close >= end) return fail('truncated', `unterminated "${s.slice(i, i + 20)}"`);
      const inner = s.slice(i + 1, close);
      i = skipSpaces(s, close + 1, end);
      if (inner !== 'UNREPLIED') metaSeen = true;
      if (inner in FLAG_BITS) {
        const bit = FLAG_BITS[inner as ConntrackFlag];
        if ((flagMask & bit) !== 0) dup(`[${inner}]`);
        flagMask |= bit;
        continue;
      }
      if (inner === 'USERSPACE') {
        userspace ??= {};
        continue;
      }
      if (inner.startsWith('start=')) {
        startText = inner.slice(6);
        continue;
      }
      if (inner.startsWith('stop=')) {
        stopText = inner.slice(5);
        continue;
      }
      notes.push({ code: 'unknown-field', message: `unknown item "[${inner.slice(0, 40)}]" kept in extra` });
      (extra ??= []).push({ key: `[${inner}]` });
      continue;
    }
    w = wordEnd(s, i, end);
    const eq = s.indexOf('=', i);
    if (eq < 0 || eq >= w) {
      // A bare word: keep it, but a tuple is never made of bare words.
      const bare = s.slice(i, w);
      if (orig.src === undefined) return fail('malformed', `unexpected "${bare.slice(0, 40)}" before the original tuple`);
      notes.push({ code: 'unknown-field', message: `unexpected word "${bare.slice(0, 40)}" kept in extra` });
      (extra ??= []).push({ key: bare });
      i = skipSpaces(s, w, end);
      continue;
    }
    const key = s.slice(i, eq);
    const vs = eq + 1;
    const ve = w;
    i = skipSpaces(s, w, end);
    let n: number;
    if (!TUPLE_KEYS.has(key)) metaSeen = true;
    switch (key) {
      case 'src': {
        if (orig.src === undefined) cur = orig;
        else if (reply.src === undefined) {
          cur = reply;
        } else return fail('malformed', 'a third "src=": two lines run together');
        const a = interner.address(s.slice(vs, ve));
        if (a === undefined) return fail('bad-address', `bad address "${s.slice(vs, ve).slice(0, 60)}"`);
        cur.src = a;
        continue;
      }
      case 'dst': {
        if (cur.dst !== undefined) return fail('malformed', '"dst=" twice in one tuple');
        const a = interner.address(s.slice(vs, ve));
        if (a === undefined) return fail('bad-address', `bad address "${s.slice(vs, ve).slice(0, 60)}"`);
        cur.dst = a;
        continue;
      }
      case 'sport':
      case 'dport':
        n = parseUint(s, vs, ve, 65535);
        if (n < 0) return fail('bad-value', `bad ${key} "${s.slice(vs, ve).slice(0, 40)}"`);
        if (cur[key] !== undefined) return fail('malformed', `"${key}=" twice in one tuple`);
        cur[key] = n;
        continue;
      case 'type':
      case 'code':
        n = parseUint(s, vs, ve, 255);
        if (n < 0) return fail('bad-value', `bad icmp ${key} "${s.slice(vs, ve).slice(0, 40)}"`);
        if (key === 'type') cur.icmpType = n;
        else cur.icmpCode = n;
        continue;
      case 'id':
        // In an icmp tuple `id=` is the echo id; after it, the conntrack id.
        if (icmpLike && !metaSeen && cur.icmpType !== undefined && cur.icmpId === undefined) {
          n = parseUint(s, vs, ve, 65535);
          if (n < 0) return fail('bad-value', `bad icmp id "${s.slice(vs, ve).slice(0, 40)}"`);
          cur.icmpId = n;
          continue;
        }
        n = parseUint(s, vs, ve, U32_MAX);
        if (n < 0) return fail('bad-value', `bad id "${s.slice(vs, ve).slice(0, 40)}"`);
        if (id !== undefined) dup(key);
        id = n;
        continue;
      case 'srckey':
      case 'dstkey':
        n = parseHex(s, vs, ve, 0xffffffff);
        if (n < 0) return fail('bad-value', `bad GRE ${key} "${s.slice(vs, ve).slice(0, 40)}"`);
        if (key === 'srckey') cur.srcKey = n;
        else cur.dstKey = n;
        continue;
      case 'zone-orig':
      case 'zone-reply':
        n = parseUint(s, vs, ve, 65535);
        if (n < 0) return fail('bad-value', `bad ${key} "${s.slice(vs, ve).slice(0, 40)}"`);
        (key === 'zone-orig' ? orig : reply).zone = n;
        continue;
      case 'packets':
      case 'bytes': {
        const v = parseCounter(s, vs, ve);
        if (v === undefined) return fail('bad-value', `bad ${key} "${s.slice(vs, ve).slice(0, 40)}"`);
        if (cur[key] !== undefined) return fail('malformed', `"${key}=" twice in one direction`);
        cur[key] = v;
        continue;
      }
      case 'mark':
      case 'secmark':
      case 'zone':
      case 'use':
      case 'delta-time':
        n = parseUint(s, vs, ve, key === 'delta-time' ? Number.MAX_SAFE_INTEGER : U32_MAX);
        if (n < 0) return fail('bad-value', `bad ${key} "${s.slice(vs, ve).slice(0, 40)}"`);
        if (key === 'mark') mark === undefined ? (mark = n) : dup(key);
        else if (key === 'secmark') secmark === undefined ? (secmark = n) : dup(key);
        else if (key === 'zone') zone === undefined ? (zone = n) : dup(key);
        else if (key === 'use') use === undefined ? (use = n) : dup(key);
        else deltaTime === undefined ? (deltaTime = n) : dup(key);
        continue;
      case 'secctx':
        secctx = s.slice(vs, ve);
        continue;
      case 'helper':
        helper = s.slice(vs, ve);
        continue;
      case 'labels':
        labels = vs < ve ? s.slice(vs, ve).split(',') : [];
        continue;
      case 'portid':
      case 'progname':
        if (userspace !== undefined) {
          if (key === 'progname') userspace.progname = s.slice(vs, ve);
          else {
            n = parseUint(s, vs, ve, U32_MAX);
            if (n < 0) return fail('bad-value', `bad portid "${s.slice(vs, ve).slice(0, 40)}"`);
            userspace.portid = n;
          }
          continue;
        }
        break;
      default:
        break;
    }
    notes.push({ code: 'unknown-field', message: `unknown field "${key.slice(0, 40)}" kept in extra` });
    (extra ??= []).push({ key, value: s.slice(vs, ve) });
  }

  // Completeness: both tuples with addresses, and the protocol's own fields.
  if (orig.src === undefined || orig.dst === undefined) return fail('truncated', 'no original tuple');
  if (reply.src === undefined || reply.dst === undefined) return fail('truncated', 'no reply tuple');
  const family: ConntrackFamily = orig.src.indexOf(':') >= 0 ? 'ipv6' : 'ipv4';
  for (const a of [orig.dst, reply.src, reply.dst]) {
    if ((a.indexOf(':') >= 0 ? 'ipv6' : 'ipv4') !== family) return fail('malformed', 'IPv4 and IPv6 addresses mixed in one entry');
  }
  if (l3 !== undefined && (l3 !== family || l3Num !== (family === 'ipv4' ? 2 : 10))) {
    return fail('malformed', `layer-3 prefix "${l3} ${l3Num}" does not match the ${family} addresses`);
  }
  const ported = proto === 'tcp' || proto === 'udp' || proto === 'udplite' || proto === 'sctp' || proto === 'dccp';
  if (ported && (orig.sport === undefined || orig.dport === undefined || reply.sport === undefined || reply.dport === undefined)) {
    return fail('truncated', `${proto} entry without ports in both tuples`);
  }
  if (icmpLike && (orig.icmpType === undefined || orig.icmpCode === undefined || orig.icmpId === undefined || reply.icmpId === undefined)) {
    return fail('truncated', `${proto} entry without type/code/id in both tuples`);
  }
  if (userspace !== undefined && userspace.portid === undefined) return fail('truncated', '"[USERSPACE]" without portid=');

  const entry: ConntrackEntry = {
    line: lineNo,
    raw: line,
    event,
    eventTime,
    family,
    proto,
    protoNum,
    timeout,
    state,
    orig: finishTuple(orig),
    reply: finishTuple(reply),
    flags: FLAG_SETS[flagMask] ?? [],
    mark,
    secmark,
    secctx,
    zone,
    deltaTime,
    start: startText,
    stop: stopText,
    helper,
    use,
    id,
    labels,
    userspace: userspace as ConntrackUserspace | undefined,
    extra,
  };
  return { ok: true, entry, notes };
}

/** One object shape for every tuple (all keys present) keeps V8's maps monomorphic. */
function finishTuple(t: TupleDraft): ConntrackTuple {
  return {
    src: t.src as string,
    dst: t.dst as string,
    sport: t.sport,
    dport: t.dport,
    icmpType: t.icmpType,
    icmpCode: t.icmpCode,
    icmpId: t.icmpId,
    srcKey: t.srcKey,
    dstKey: t.dstKey,
    zone: t.zone,
    packets: t.packets,
    bytes: t.bytes,
  };
}
