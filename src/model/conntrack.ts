/**
 * The conntrack model: one tracked flow (`nf_conn`) with its original and reply
 * tuples, as printed by `conntrack -L` / `-E` (conntrack-tools, through
 * libnetfilter_conntrack `src/conntrack/snprintf_default.c`) and by the kernel's
 * `/proc/net/nf_conntrack` (`net/netfilter/nf_conntrack_standalone.c`,
 * `ct_seq_show`).
 *
 * Field names are conntrack's own (`src`, `dst`, `sport`, `dport`, `mark`, `zone`,
 * `use`, `secctx`, …). Addresses are kept as canonical text: IPv4 dotted quad,
 * IPv6 in glibc `inet_ntop` form (what the conntrack tool prints), so a `/proc`
 * line (kernel `%pI6`, fully expanded) and a `conntrack -L` line for the same flow
 * compare equal. The text as printed stays in {@link ConntrackEntry.raw}.
 */
import { ipv4NumberAt } from '../net/address.js';

/** Layer-3 family as conntrack prints it (`l3proto2str` / kernel `l3proto_name`). */
export type ConntrackFamily = 'ipv4' | 'ipv6';

/**
 * Layer-4 protocol name as conntrack prints it (`proto2str` / kernel
 * `l4proto_name`); `'unknown'` for any other protocol, whose number is in
 * {@link ConntrackEntry.protoNum}.
 */
export type ConntrackProto =
  | 'tcp'
  | 'udp'
  | 'udplite'
  | 'icmp'
  | 'icmpv6'
  | 'sctp'
  | 'dccp'
  | 'gre'
  | 'unknown';

/** IANA protocol numbers of the named {@link ConntrackProto}s (linux/in.h). */
export const CONNTRACK_PROTO_NUMBERS: Readonly<Record<Exclude<ConntrackProto, 'unknown'>, number>> = {
  icmp: 1,
  tcp: 6,
  udp: 17,
  dccp: 33,
  gre: 47,
  icmpv6: 58,
  sctp: 132,
  udplite: 136,
};

/** The number printed after the family name: `AF_INET` = 2, `AF_INET6` = 10 (linux/socket.h). */
export const CONNTRACK_FAMILY_NUMBERS: Readonly<Record<ConntrackFamily, number>> = { ipv4: 2, ipv6: 10 };

/** TCP states (kernel `tcp_conntrack_names`; `LISTEN` from libnetfilter_conntrack ≤ 1.0.4). */
export type TcpConntrackState =
  | 'NONE'
  | 'SYN_SENT'
  | 'SYN_RECV'
  | 'ESTABLISHED'
  | 'FIN_WAIT'
  | 'CLOSE_WAIT'
  | 'LAST_ACK'
  | 'TIME_WAIT'
  | 'CLOSE'
  | 'SYN_SENT2'
  | 'LISTEN';

/** SCTP states (kernel `sctp_conntrack_names`, libnetfilter_conntrack `sctp_states`). */
export type SctpConntrackState =
  | 'NONE'
  | 'CLOSED'
  | 'COOKIE_WAIT'
  | 'COOKIE_ECHOED'
  | 'ESTABLISHED'
  | 'SHUTDOWN_SENT'
  | 'SHUTDOWN_RECD'
  | 'SHUTDOWN_ACK_SENT'
  | 'HEARTBEAT_SENT'
  | 'HEARTBEAT_ACKED';

/** DCCP states (kernel `dccp_state_names`, libnetfilter_conntrack `dccp_states`). */
export type DccpConntrackState =
  | 'NONE'
  | 'REQUEST'
  | 'RESPOND'
  | 'PARTOPEN'
  | 'OPEN'
  | 'CLOSEREQ'
  | 'CLOSING'
  | 'TIMEWAIT'
  | 'IGNORE'
  | 'INVALID';

/** The protocol state word printed after the timeout (TCP, SCTP and DCCP only). */
export type ConntrackState = TcpConntrackState | SctpConntrackState | DccpConntrackState;

/** Every state word of {@link ConntrackState}. */
export const CONNTRACK_STATES: ReadonlySet<ConntrackState> = new Set<ConntrackState>([
  'NONE', 'SYN_SENT', 'SYN_RECV', 'ESTABLISHED', 'FIN_WAIT', 'CLOSE_WAIT', 'LAST_ACK', 'TIME_WAIT',
  'CLOSE', 'SYN_SENT2', 'LISTEN', 'CLOSED', 'COOKIE_WAIT', 'COOKIE_ECHOED', 'SHUTDOWN_SENT',
  'SHUTDOWN_RECD', 'SHUTDOWN_ACK_SENT', 'HEARTBEAT_SENT', 'HEARTBEAT_ACKED', 'REQUEST', 'RESPOND',
  'PARTOPEN', 'OPEN', 'CLOSEREQ', 'CLOSING', 'TIMEWAIT', 'IGNORE', 'INVALID',
]);

/**
 * Status flags conntrack prints in brackets. `UNREPLIED` (no `IPS_SEEN_REPLY`) is
 * printed after the original tuple; `ASSURED`, `OFFLOAD` (flowtable) and
 * `HW_OFFLOAD` after the reply tuple (only the strongest of the three).
 */
export type ConntrackFlag = 'UNREPLIED' | 'ASSURED' | 'OFFLOAD' | 'HW_OFFLOAD';

/** Event kind of a `conntrack -E` line (the right-aligned `[NEW]`, ` [UPDATE]`, `[DESTROY]` tag). */
export type ConntrackEventKind = 'NEW' | 'UPDATE' | 'DESTROY';

/**
 * The layout of one line:
 * - `'conntrack'`: `conntrack -L` / `-E` default (`tcp      6 …`);
 * - `'extended'`: `conntrack -L -o extended` (`ipv4     2 tcp      6 …`);
 * - `'proc'`: `/proc/net/nf_conntrack` (same prefix, IPv6 fully expanded, kernel field set).
 */
export type ConntrackStyle = 'conntrack' | 'extended' | 'proc';

/**
 * One direction of a flow: the tuple and what conntrack prints with it.
 *
 * - `src`/`dst`: canonical address text (see the module doc).
 * - `sport`/`dport`: ports (tcp, udp, udplite, sctp, dccp), 0–65535.
 * - `icmpType`/`icmpCode`/`icmpId`: icmp and icmpv6 (`type= code= id=`).
 * - `srcKey`/`dstKey`: GRE keys (`srckey=0x… dstkey=0x…`), 0–65535.
 * - `zone`: a per-direction zone (`zone-orig=` / `zone-reply=`), when the zone is directional.
 * - `packets`/`bytes`: this direction's counters, present only when accounting is on
 *   (`net.netfilter.nf_conntrack_acct=1`); packets and bytes.
 *
 * May be a compact object (fields read through its prototype): copy it with `toPlain`
 * (src/model/plain.ts) before a spread, `Object.keys`, `structuredClone` or a deep compare.
 */
export interface ConntrackTuple {
  readonly src: string;
  readonly dst: string;
  readonly sport?: number;
  readonly dport?: number;
  readonly icmpType?: number;
  readonly icmpCode?: number;
  readonly icmpId?: number;
  readonly srcKey?: number;
  readonly dstKey?: number;
  readonly zone?: number;
  readonly packets?: bigint;
  readonly bytes?: bigint;
}

/** A `key=value` (or bare word, `value` undefined) conntrack printed that this model does not know. */
export interface ConntrackExtraField {
  readonly key: string;
  readonly value?: string;
}

/** The ` [USERSPACE] portid=N progname=X` suffix conntrack ≥ 1.4.6 adds to events caused by a program. */
export interface ConntrackUserspace {
  readonly portid: number;
  readonly progname?: string;
}

/**
 * One conntrack entry (or one `conntrack -E` event about an entry).
 *
 * - `line`: 1-based line number in the parsed text; `raw`: the line as printed
 *   (for `cat -n` captures, including the line-number prefix).
 * - `event`, `eventTime`: `-E` only; `eventTime` is the `[seconds.microseconds]`
 *   prefix of `-E -o timestamp`, as printed (Unix time, wall clock of the node).
 * - `protoNum`: the layer-4 protocol number as printed.
 * - `timeout`: seconds left before the entry expires (absent for offloaded flows).
 * - `state`: tcp/sctp/dccp only.
 * - `flags`: in the order conntrack prints them.
 * - `mark`, `secmark`, `zone`, `use`, `id`: unsigned 32-bit integers.
 * - `deltaTime`: seconds since the flow started (`nf_conntrack_timestamp=1`).
 * - `start`/`stop`: `-o ktimestamp` `[start=…]`/`[stop=…]` text (C `ctime()` in the
 *   node's local time zone), kept as printed.
 * - `labels`: `-o labels` connlabel names.
 * - `extra`: fields not modelled, in order (each also reported as a diagnostic).
 *
 * May be a compact object (fields read through its prototype): copy it with `toPlain`
 * (src/model/plain.ts) before a spread, `Object.keys`, `structuredClone` or a deep compare.
 */
export interface ConntrackEntry {
  readonly line: number;
  readonly raw: string;
  readonly event?: ConntrackEventKind;
  readonly eventTime?: string;
  readonly family: ConntrackFamily;
  readonly proto: ConntrackProto;
  readonly protoNum: number;
  readonly timeout?: number;
  readonly state?: ConntrackState;
  readonly orig: ConntrackTuple;
  readonly reply: ConntrackTuple;
  readonly flags: readonly ConntrackFlag[];
  readonly mark?: number;
  readonly secmark?: number;
  readonly secctx?: string;
  readonly zone?: number;
  readonly deltaTime?: number;
  readonly start?: string;
  readonly stop?: string;
  readonly helper?: string;
  readonly use?: number;
  readonly id?: number;
  readonly labels?: readonly string[];
  readonly userspace?: ConntrackUserspace;
  readonly extra?: readonly ConntrackExtraField[];
}

/** What a trailer counted (`conntrack.c`: "%d flow entries have been shown.", …). */
export type ConntrackTrailerUnit = 'flow entries' | 'flow events' | 'expectation entries' | 'expectation events';

/** What the command did to them. */
export type ConntrackTrailerAction = 'shown' | 'deleted' | 'updated' | 'created';

/**
 * The summary conntrack prints on stderr when it ends, e.g.
 * `conntrack v1.4.6 (conntrack-tools): 296 flow entries have been shown.` It is
 * often captured together with stdout, even in the middle of the output.
 * `count` is conntrack's own count (entries, or events for `-E`), not the number
 * of lines parsed: a `| grep` in the capture makes them differ.
 */
export interface ConntrackTrailer {
  readonly line: number;
  readonly version: string;
  readonly count: number;
  readonly unit: ConntrackTrailerUnit;
  readonly action: ConntrackTrailerAction;
}

/**
 * A parsed conntrack capture.
 *
 * - `entries`: every table line (`conntrack -L`, /proc), in input order: the live flows.
 * - `events`: every `conntrack -E` event line (an entry with `event` set), in input order;
 *   never part of `entries` — four events of one flow are one flow, and a `[DESTROY]` is not
 *   a live flow (src/analysis/conntrack-events.ts groups them by flow). Absent: none.
 * - `trailers`: every summary line found.
 * - `reportedCount`: the count of the last trailer of unit `flow entries`; undefined when
 *   the capture has none. `reportedEvents`: the same for `flow events` (`conntrack -E`).
 */
export interface ConntrackTable {
  readonly entries: readonly ConntrackEntry[];
  readonly events?: readonly ConntrackEntry[];
  readonly trailers: readonly ConntrackTrailer[];
  readonly reportedCount?: number;
  readonly reportedEvents?: number;
}

// ---------------------------------------------------------------------------
// Address text. Conntrack prints IPv4 with inet_ntoa, IPv6 with glibc inet_ntop
// (tool) or the kernel's %pI6 (fully expanded, /proc). These helpers move between
// them without a regular expression, because they run once per address per line.

/**
 * Parses an IPv6 address text (any RFC 4291 form, including `::` and an embedded
 * dotted IPv4 tail) into its eight 16-bit groups; `undefined` when it is not one.
 */
export function parseIpv6Groups(text: string): number[] | undefined {
  const len = text.length;
  if (len < 2 || len > 45) return undefined;
  const head: number[] = [];
  const tail: number[] = [];
  let cur = head;
  let seenGap = false;
  let i = 0;
  if (text.charCodeAt(0) === 58 /* : */) {
    if (text.charCodeAt(1) !== 58) return undefined;
    seenGap = true;
    cur = tail;
    i = 2;
    if (i === len) return [0, 0, 0, 0, 0, 0, 0, 0];
  }
  while (i < len) {
    // One group: hex digits, or a dotted IPv4 tail.
    let value = 0;
    let digits = 0;
    const groupStart = i;
    while (i < len && digits <= 4) {
      const c = text.charCodeAt(i);
      const h = hexValue(c);
      if (h < 0) break;
      value = value * 16 + h;
      digits++;
      i++;
    }
    if (i < len && text.charCodeAt(i) === 46 /* . */) {
      const v4 = parseIpv4Number(text.slice(groupStart));
      if (v4 === undefined) return undefined;
      cur.push((v4 >>> 16) & 0xffff, v4 & 0xffff);
      i = len;
      break;
    }
    if (digits === 0 || digits > 4) return undefined;
    cur.push(value);
    if (i === len) break;
    if (text.charCodeAt(i) !== 58) return undefined;
    i++;
    if (i < len && text.charCodeAt(i) === 58) {
      if (seenGap) return undefined;
      seenGap = true;
      cur = tail;
      i++;
      if (i === len) break;
    } else if (i === len) {
      return undefined; // trailing single colon
    }
  }
  const total = head.length + tail.length;
  if (seenGap ? total > 7 : total !== 8) return undefined;
  const groups = head.slice();
  for (let k = total; k < 8; k++) groups.push(0);
  for (const g of tail) groups.push(g);
  return groups;
}

function hexValue(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 97 && c <= 102) return c - 87;
  if (c >= 65 && c <= 70) return c - 55;
  return -1;
}

/** Parses dotted-quad IPv4 text to an unsigned 32-bit number; `undefined` when it is not one. */
export function parseIpv4Number(text: string): number | undefined {
  const n = ipv4NumberAt(text, 0, text.length);
  return n < 0 ? undefined : n;
}

/**
 * IPv6 groups → glibc `inet_ntop` text: lowercase hex without leading zeros, the
 * longest run of two or more zero groups (the first, on ties) as `::`, and a
 * dotted IPv4 tail for IPv4-mapped (`::ffff:a.b.c.d`) and IPv4-compatible
 * (`::a.b.c.d`) addresses.
 */
export function formatIpv6Groups(groups: readonly number[]): string {
  let bestBase = -1;
  let bestLen = 0;
  let curBase = -1;
  let curLen = 0;
  for (let k = 0; k < 8; k++) {
    if (groups[k] === 0) {
      if (curBase < 0) {
        curBase = k;
        curLen = 1;
      } else curLen++;
      if (curLen > bestLen) {
        bestBase = curBase;
        bestLen = curLen;
      }
    } else curBase = -1;
  }
  if (bestLen < 2) bestBase = -1;
  let out = '';
  for (let k = 0; k < 8; k++) {
    if (bestBase >= 0 && k >= bestBase && k < bestBase + bestLen) {
      if (k === bestBase) out += ':';
      continue;
    }
    if (k !== 0) out += ':';
    // glibc: an IPv4 tail for ::a.b.c.d and ::ffff:a.b.c.d
    if (k === 6 && bestBase === 0 && (bestLen === 6 || (bestLen === 5 && groups[5] === 0xffff))) {
      const hi = groups[6] ?? 0;
      const lo = groups[7] ?? 0;
      out += `${hi >>> 8}.${hi & 0xff}.${lo >>> 8}.${lo & 0xff}`;
      return out;
    }
    out += (groups[k] ?? 0).toString(16);
  }
  if (bestBase >= 0 && bestBase + bestLen === 8) out += ':';
  return out;
}

/**
 * Canonical address text for comparisons: IPv4 unchanged when valid; IPv6 in glibc
 * `inet_ntop` form (`fd02:0000:…:0020` → `fd02::20`). Returns `undefined` for text
 * that is neither.
 */
export function canonicalIp(text: string): string | undefined {
  if (text.indexOf(':') >= 0) {
    const groups = parseIpv6Groups(text);
    return groups === undefined ? undefined : formatIpv6Groups(groups);
  }
  return parseIpv4Number(text) === undefined ? undefined : text;
}

/**
 * The kernel's `%pI6` form of an IPv6 address (eight groups of four lowercase hex
 * digits), as `/proc/net/nf_conntrack` prints it. IPv4 text is returned unchanged;
 * `undefined` for text that is not an address.
 */
export function expandIpv6(text: string): string | undefined {
  if (text.indexOf(':') < 0) return parseIpv4Number(text) === undefined ? undefined : text;
  const groups = parseIpv6Groups(text);
  if (groups === undefined) return undefined;
  return groups.map((g) => g.toString(16).padStart(4, '0')).join(':');
}

/** The family of canonical address text: `'ipv6'` when it holds a colon. */
export function familyOfAddress(text: string): ConntrackFamily {
  return text.indexOf(':') >= 0 ? 'ipv6' : 'ipv4';
}

// ---------------------------------------------------------------------------
// Plain copies. The parser may return entries and tuples as class instances whose
// values are read through prototype getters (a million-entry table is kept compact
// that way), which object spread, `Object.keys`, `structuredClone` and deep-equality
// helpers do not see. These give the same values as plain data; `toPlain`
// (src/model/plain.ts) is the one entry point that picks the right one.

/**
 * A plain-object copy of `t`: every defined field as an own enumerable property, in
 * the order src, dst, sport, dport, icmpType, icmpCode, icmpId, srcKey, dstKey, zone,
 * packets, bytes; absent (undefined) fields are left out. Never throws.
 */
export function plainConntrackTuple(t: ConntrackTuple): ConntrackTuple {
  const out: { -readonly [K in keyof ConntrackTuple]: ConntrackTuple[K] } = { src: t.src, dst: t.dst };
  if (t.sport !== undefined) out.sport = t.sport;
  if (t.dport !== undefined) out.dport = t.dport;
  if (t.icmpType !== undefined) out.icmpType = t.icmpType;
  if (t.icmpCode !== undefined) out.icmpCode = t.icmpCode;
  if (t.icmpId !== undefined) out.icmpId = t.icmpId;
  if (t.srcKey !== undefined) out.srcKey = t.srcKey;
  if (t.dstKey !== undefined) out.dstKey = t.dstKey;
  if (t.zone !== undefined) out.zone = t.zone;
  if (t.packets !== undefined) out.packets = t.packets;
  if (t.bytes !== undefined) out.bytes = t.bytes;
  return out;
}

/**
 * A plain-object copy of `e` (what `{...e}` would give for an entry made of plain
 * data): every defined field as an own enumerable property, `raw` included, tuples
 * through {@link plainConntrackTuple}; absent fields are left out, so two entries with
 * equal values give deep-equal copies however they were built. Arrays (`flags`,
 * `labels`, `extra`) are shared with `e`. Never throws.
 */
export function plainConntrackEntry(e: ConntrackEntry): ConntrackEntry {
  const out: { -readonly [K in keyof ConntrackEntry]: ConntrackEntry[K] } = {
    line: e.line,
    raw: e.raw,
    family: e.family,
    proto: e.proto,
    protoNum: e.protoNum,
    orig: plainConntrackTuple(e.orig),
    reply: plainConntrackTuple(e.reply),
    flags: e.flags,
  };
  if (e.event !== undefined) out.event = e.event;
  if (e.eventTime !== undefined) out.eventTime = e.eventTime;
  if (e.timeout !== undefined) out.timeout = e.timeout;
  if (e.state !== undefined) out.state = e.state;
  if (e.mark !== undefined) out.mark = e.mark;
  if (e.secmark !== undefined) out.secmark = e.secmark;
  if (e.secctx !== undefined) out.secctx = e.secctx;
  if (e.zone !== undefined) out.zone = e.zone;
  if (e.deltaTime !== undefined) out.deltaTime = e.deltaTime;
  if (e.start !== undefined) out.start = e.start;
  if (e.stop !== undefined) out.stop = e.stop;
  if (e.helper !== undefined) out.helper = e.helper;
  if (e.use !== undefined) out.use = e.use;
  if (e.id !== undefined) out.id = e.id;
  if (e.labels !== undefined) out.labels = e.labels;
  if (e.userspace !== undefined) out.userspace = e.userspace;
  if (e.extra !== undefined) out.extra = e.extra;
  return out;
}
