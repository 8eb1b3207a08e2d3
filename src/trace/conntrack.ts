/**
 * Conntrack as step mode needs it: find the flow a packet belongs to in the captured
 * table (original or reply direction), the state rules see (`ct state`, `--ctstate`),
 * the NAT a known flow carries, and the entry a new flow creates, printed in
 * conntrack's own words (libnetfilter_conntrack `__snprintf_conntrack_default`).
 *
 * Kernel sources: net/netfilter/nf_conntrack_core.c `resolve_normal_ct` (a packet in the
 * original direction is ESTABLISHED once the flow has seen a reply, else still NEW; the
 * reply direction is ESTABLISHED), nf_conntrack_proto_{tcp,udp,icmp}.c (initial
 * timeouts), nf_nat_core.c (a flow's NAT is applied to every later packet).
 */
import { canonicalIp, CONNTRACK_PROTO_NUMBERS, type ConntrackEntry, type ConntrackTuple } from '../model/conntrack.js';
import type { PacketHeader, TraceConntrack, TraceTuple } from './types.js';
import type { TraceProtocol } from './packet.js';

/** A flow of the capture that the packet belongs to, and in which direction. */
export interface FlowMatch {
  readonly entry: ConntrackEntry;
  readonly direction: 'original' | 'reply';
}

function sameAddr(a: string, b: string): boolean {
  return a === b || canonicalIp(a) === canonicalIp(b);
}

function tupleMatches(t: ConntrackTuple, h: PacketHeader): boolean {
  // Numbers first: they rule out almost every flow without parsing an address.
  if (h.proto === 'icmp' || h.proto === 'icmpv6') {
    if (t.icmpType !== h.icmpType || t.icmpCode !== h.icmpCode || t.icmpId !== h.icmpId) return false;
  } else if (t.sport !== h.sport || t.dport !== h.dport) return false;
  return sameAddr(t.src, h.src) && sameAddr(t.dst, h.dst);
}

/** ICMP echo reply types that answer a request (RFC 792 / RFC 4443): 8 → 0, 128 → 129. */
const ICMP_REPLY_TYPE: Readonly<Record<number, number>> = { 8: 0, 128: 129, 13: 14, 15: 16, 17: 18 };

/**
 * The captured flow whose original or reply tuple is the packet's 5-tuple (protocol,
 * addresses, ports; type/code/id for ICMP), or null: the first such entry in table
 * order, its original tuple before its reply tuple. Zones are not compared (all flows
 * are taken as zone 0).
 *
 * The first lookups in an `entries` array scan it ({@link findFlowLinear}, numbers
 * compared before addresses); from the {@link INDEX_AFTER_LOOKUPS}th on, an index by ports
 * (ICMP: type, code, id) built once for that array answers (kept in a WeakMap), with the
 * same result. A one-off walk (or a table replaced every refresh) never pays for the
 * index; repeated walks on one capture do not rescan it. `indexed: false` always scans.
 */
export function findFlow(entries: readonly ConntrackEntry[], h: PacketHeader, indexed = true): FlowMatch | null {
  const key = indexed ? headerKey(h) : null;
  if (key === null) return findFlowLinear(entries, h);
  const index = flowIndexOf(entries);
  if (index === null) return findFlowLinear(entries, h);
  for (let slot = index.first(key); slot >= 0; slot = index.next[slot]!) {
    const entry = entries[slot >> 1]!;
    const direction = (slot & 1) === 0 ? 'original' : 'reply';
    if (entry.proto === h.proto && entry.family === h.family && tupleMatches(direction === 'original' ? entry.orig : entry.reply, h)) return { entry, direction };
  }
  return null;
}

/** {@link findFlow} by a scan of every entry in order (the reference the index must agree with). */
export function findFlowLinear(entries: readonly ConntrackEntry[], h: PacketHeader): FlowMatch | null {
  for (const entry of entries) {
    if (entry.proto !== h.proto) continue;
    if (entry.family !== h.family) continue;
    if (tupleMatches(entry.orig, h)) return { entry, direction: 'original' };
    if (tupleMatches(entry.reply, h)) return { entry, direction: 'reply' };
  }
  return null;
}

/** Lookups in one conntrack table answered by a scan before its index is built (building it costs about ten scans). */
export const INDEX_AFTER_LOOKUPS = 8;

/**
 * Candidate tuples by a 32-bit key of their numbers: sport·65536+dport (every protocol but
 * ICMP), type·2^24+code·2^16+id (ICMP); candidates of another protocol fail the protocol
 * check. A slot is entry·2 (original tuple) or entry·2+1 (reply tuple). An open-addressing
 * table (typed arrays: a million flows without a million Map entries) holds each key's
 * first slot, `next` the following one (−1 at the end), in table order with an entry's
 * original tuple before its reply tuple, so the first candidate whose tuple matches is
 * the entry a linear scan finds first.
 */
class FlowIndex {
  readonly next: Int32Array;
  private readonly keys: Uint32Array;
  private readonly heads: Int32Array;
  private readonly shift: number;
  private readonly mask: number;

  constructor(slots: number) {
    let bits = 4;
    while (1 << bits < slots * 2 && bits < 30) bits++;
    this.keys = new Uint32Array(1 << bits);
    this.heads = new Int32Array(1 << bits).fill(-1);
    this.next = new Int32Array(slots);
    this.shift = 32 - bits;
    this.mask = (1 << bits) - 1;
  }

  private home(key: number): number {
    return Math.imul(key, 0x9e3779b1) >>> this.shift;
  }

  /** Puts `slot` in front of the list of `key`. */
  add(key: number, slot: number): void {
    let i = this.home(key);
    while (this.heads[i] !== -1 && this.keys[i] !== key) i = (i + 1) & this.mask;
    this.keys[i] = key;
    this.next[slot] = this.heads[i]!;
    this.heads[i] = slot;
  }

  /** The first slot of `key`, −1 when none. */
  first(key: number): number {
    for (let i = this.home(key); this.heads[i] !== -1; i = (i + 1) & this.mask) if (this.keys[i] === key) return this.heads[i]!;
    return -1;
  }
}

const flowIndexes = new WeakMap<readonly ConntrackEntry[], FlowIndex | number>();

const isIcmp = (proto: string) => proto === 'icmp' || proto === 'icmpv6';

function portKey(sport: number | null | undefined, dport: number | null | undefined): number | null {
  return typeof sport === 'number' && typeof dport === 'number' && Number.isInteger(sport) && Number.isInteger(dport) && sport >= 0 && sport < 65536 && dport >= 0 && dport < 65536 ? sport * 65536 + dport : null;
}

function icmpKey(type: number | null | undefined, code: number | null | undefined, id: number | null | undefined): number | null {
  const ok = (n: number | null | undefined, max: number): n is number => typeof n === 'number' && Number.isInteger(n) && n >= 0 && n < max;
  return ok(type, 256) && ok(code, 256) && ok(id, 65536) ? type * 16777216 + code * 65536 + id : null;
}

/** The packet's key; null when it has none (then the linear scan decides, as before). */
function headerKey(h: PacketHeader): number | null {
  return isIcmp(h.proto) ? icmpKey(h.icmpType, h.icmpCode, h.icmpId) : portKey(h.sport, h.dport);
}

/** The index of `entries` once it has been looked up {@link INDEX_AFTER_LOOKUPS} times, else null. */
function flowIndexOf(entries: readonly ConntrackEntry[]): FlowIndex | null {
  const seen = flowIndexes.get(entries) ?? 0;
  if (typeof seen !== 'number') return seen;
  if (seen + 1 < INDEX_AFTER_LOOKUPS) {
    flowIndexes.set(entries, seen + 1);
    return null;
  }
  const index = buildFlowIndex(entries);
  flowIndexes.set(entries, index);
  return index;
}

function buildFlowIndex(entries: readonly ConntrackEntry[]): FlowIndex {
  const index = new FlowIndex(entries.length * 2);
  // Backwards, each slot put in front of its key's list: the lists end up in table order.
  for (let i = entries.length - 1; i >= 0; i--) {
    const entry = entries[i]!;
    const icmpEntry = isIcmp(entry.proto);
    for (let d = 1; d >= 0; d--) {
      const t = d === 0 ? entry.orig : entry.reply;
      // A tuple without a key cannot equal a packet's numbers (undefined ≠ number): left out.
      const key = icmpEntry ? icmpKey(t.icmpType, t.icmpCode, t.icmpId) : portKey(t.sport, t.dport);
      if (key !== null) index.add(key, i * 2 + d);
    }
  }
  return index;
}

/** The state a rule sees for a packet of a known flow (`resolve_normal_ct`). */
export function knownFlowState(m: FlowMatch): 'new' | 'established' {
  if (m.direction === 'reply') return 'established';
  return m.entry.flags.includes('UNREPLIED') ? 'new' : 'established';
}

/** Whether a flow's NAT changed its destination (`IPS_DST_NAT`) and source (`IPS_SRC_NAT`). */
export function flowNat(entry: ConntrackEntry): { dnat: boolean; snat: boolean } {
  const o = entry.orig;
  const r = entry.reply;
  const dnat = !sameAddr(o.dst, r.src) || (o.dport !== undefined && o.dport !== r.sport);
  const snat = !sameAddr(o.src, r.dst) || (o.sport !== undefined && o.sport !== r.dport);
  return { dnat, snat };
}

/** An address/port rewrite of one side of the packet. `port` null: unchanged (or none). */
export interface Rewrite {
  readonly addr: string;
  readonly port: number | null;
}

/**
 * The NAT conntrack applies to a packet of a known flow: `dst` at the destination NAT
 * station (prerouting/output), `src` at the source NAT station (postrouting/input).
 * Original direction: the flow's DNAT/SNAT; reply direction: their inverse.
 */
export function storedNat(m: FlowMatch): { dst: Rewrite | null; src: Rewrite | null } {
  const o = m.entry.orig;
  const r = m.entry.reply;
  const nat = flowNat(m.entry);
  if (m.direction === 'original') {
    return {
      dst: nat.dnat ? { addr: r.src, port: r.sport ?? null } : null,
      src: nat.snat ? { addr: r.dst, port: r.dport ?? null } : null,
    };
  }
  return {
    dst: nat.snat ? { addr: o.src, port: o.sport ?? null } : null,
    src: nat.dnat ? { addr: o.dst, port: o.dport ?? null } : null,
  };
}

/** The tuple of a packet header (`sport` null after fully-random NAT). */
export function tupleOf(h: PacketHeader): TraceTuple {
  return { src: h.src, dst: h.dst, sport: h.sport, dport: h.dport, icmpType: h.icmpType, icmpCode: h.icmpCode, icmpId: h.icmpId };
}

/** The tuple of a captured conntrack tuple. */
export function tupleOfConntrack(t: ConntrackTuple): TraceTuple {
  return {
    src: t.src,
    dst: t.dst,
    sport: t.sport ?? null,
    dport: t.dport ?? null,
    icmpType: t.icmpType ?? null,
    icmpCode: t.icmpCode ?? null,
    icmpId: t.icmpId ?? null,
  };
}

/**
 * The reply tuple the kernel stores for a flow whose first packet entered as `orig` and
 * left as `out` (after DNAT and SNAT): source and destination swapped, ICMP echo
 * requests answered by echo replies.
 */
export function replyTupleOf(out: TraceTuple): TraceTuple {
  const icmpType = out.icmpType === null ? null : (ICMP_REPLY_TYPE[out.icmpType] ?? out.icmpType);
  return { src: out.dst, dst: out.src, sport: out.dport, dport: out.sport, icmpType, icmpCode: out.icmpCode, icmpId: out.icmpId };
}

/** A port as conntrack prints it; null (a fully-random source port the kernel picks) names what is unknown. */
function port(p: number | null): string {
  return p === null ? '<random>' : String(p);
}

/** A tuple in conntrack's words: `src=… dst=… sport=… dport=… ` (trailing blank, as conntrack prints). */
export function formatTuple(t: TraceTuple, proto: TraceProtocol): string {
  let out = `src=${t.src} dst=${t.dst} `;
  if (proto === 'icmp' || proto === 'icmpv6') return `${out}type=${t.icmpType ?? 0} code=${t.icmpCode ?? 0} id=${t.icmpId ?? 0} `;
  out += `sport=${port(t.sport)} dport=${port(t.dport)} `;
  return out;
}

/** Initial timeout (seconds) and state of a new flow's first packet (the kernel's defaults). */
function initialState(proto: TraceProtocol, tcpSyn: boolean): { timeout: number | null; state: string | null } {
  switch (proto) {
    case 'tcp':
      // nf_conntrack_tcp_timeout_syn_sent = 120 s; a mid-stream pickup (loose) is ESTABLISHED.
      return tcpSyn ? { timeout: 120, state: 'SYN_SENT' } : { timeout: null, state: 'ESTABLISHED' };
    case 'sctp':
      return { timeout: 3, state: 'CLOSED' };
    default:
      // udp: nf_conntrack_udp_timeout = 30 s; icmp: nf_conntrack_icmp_timeout = 30 s.
      return { timeout: 30, state: null };
  }
}

/**
 * The entry a NEW flow creates when its first packet is confirmed, printed as
 * `conntrack -L` prints it right after (`[UNREPLIED]`, ct mark 0, use 1). Ports chosen
 * at random by NAT are printed `*`. `tcpSyn`: the first packet had SYN set.
 */
export function newFlowEntry(proto: TraceProtocol, original: TraceTuple, reply: TraceTuple, tcpSyn: boolean): TraceConntrack {
  const { timeout, state } = initialState(proto, tcpSyn);
  const num = CONNTRACK_PROTO_NUMBERS[proto];
  const text = `${proto.padEnd(8)} ${num} ${timeout === null ? '' : `${timeout} `}${state ? `${state} ` : ''}${formatTuple(original, proto)}[UNREPLIED] ${formatTuple(reply, proto)}mark=0 use=1`;
  const dnat = original.dst !== reply.src || original.dport !== reply.sport;
  const snat = original.src !== reply.dst || original.sport !== reply.dport;
  return { proto, original, reply, state, dnat, snat, existing: false, text };
}

/** A captured flow as a {@link TraceConntrack} (its text is the line as captured). */
export function existingFlow(m: FlowMatch): TraceConntrack {
  const nat = flowNat(m.entry);
  return {
    proto: m.entry.proto as TraceProtocol,
    original: tupleOfConntrack(m.entry.orig),
    reply: tupleOfConntrack(m.entry.reply),
    state: m.entry.state ?? null,
    dnat: nat.dnat,
    snat: nat.snat,
    existing: true,
    text: m.entry.raw.trim(),
  };
}
