/**
 * Cheap "this rule cannot match" answers for the rule shapes that fill kube-proxy's big
 * chains, so a 10,000-Service KUBE-SERVICES costs a comparison per rule instead of a full
 * evaluation. Each rule is read once (kept in a WeakMap by rule object); the answer and its
 * reason are exactly what {@link evalIptablesMatches} would say, so the steps do not change:
 *
 * - `-d ADDR[/LEN]` without `-s` (`-A KUBE-SERVICES -d 10.96.0.10/32 -p udp … -j KUBE-SVC-…`):
 *   the destination is the first condition checked, so a packet outside the range fails
 *   there, with addrCond's words `daddr D is not in ADDR/LEN`;
 * - `-p tcp|udp|sctp [-m comment …] -m tcp --dport N` with no address or interface
 *   (`-A KUBE-NODEPORTS -p tcp -m comment … -m tcp --dport 30080 -j KUBE-EXT-…`): fails
 *   on the protocol (`protocol udp ≠ tcp`) or on the port (`dport 80 not in 30080`).
 *
 * Anything else (negations, other modules first, several options) gets no prefilter and
 * is evaluated in full. Source of the order: ipt_do_table → ip_packet_match (addresses,
 * interfaces, protocol, fragment), then the matches in rule order (xt_tcpudp.c).
 */
import type { IptablesChain, IptablesRule } from '../model/iptables.js';
import { parseIp, type IpValue } from '../model/iproute.js';
import type { WalkPacket } from './context.js';
import type { TraceProtocol } from './packet.js';
import { ipv4Number } from '../net/address.js';
import { addrRangeOf, parsePortRange } from './values.js';

/**
 * What one rule's prefilter checks. `daddr`: the packet's destination must lie in
 * [lo, hi] of `family` (IPv4 as plain numbers, IPv6 as bigints); `dport`: the protocol
 * must be `proto` and the destination port in [lo, hi].
 */
export type Prefilter = (
  | { readonly kind: 'daddr4'; readonly lo: number; readonly hi: number; readonly text: string }
  | { readonly kind: 'daddr'; readonly family: 'inet' | 'inet6'; readonly lo: bigint; readonly hi: bigint; readonly text: string }
  | { readonly kind: 'dport'; readonly proto: TraceProtocol; readonly protoText: string; readonly lo: number; readonly hi: number; readonly spec: string }
) & ReasonMemo;

/** The last destination a `daddr` prefilter turned away and its words (walks repeat packets). */
interface ReasonMemo {
  lastDst?: string;
  lastReason?: string;
}

const chainFilters = new WeakMap<IptablesChain, readonly (Prefilter | null)[]>();

/** Modules that never fail a match (as in iptables-match.ts: they count or label). */
const NO_OP = new Set(['comment', 'nfacct']);

const PROTO_BY_NUMBER: Readonly<Record<string, TraceProtocol>> = { '6': 'tcp', '17': 'udp', '132': 'sctp' };
const L4: ReadonlySet<string> = new Set(['tcp', 'udp', 'sctp']);

/** `A.B.C.D` or `A.B.C.D/LEN` as a number range (what parseAddrRange gives, without bigints); null for other forms. */
function ipv4Range(text: string): { lo: number; hi: number } | null {
  const slash = text.indexOf('/');
  const n = ipv4Number(slash < 0 ? text : text.slice(0, slash));
  if (n === null) return null;
  let len = 32;
  if (slash >= 0) {
    const m = text.slice(slash + 1);
    if (!/^[0-9]{1,3}$/.test(m)) return null;
    len = Number(m);
    if (len > 32) return null;
  }
  const size = 2 ** (32 - len);
  const lo = Math.floor(n / size) * size;
  return { lo, hi: lo + size - 1 };
}

function compile(rule: IptablesRule): Prefilter | null {
  if (rule.source) return null;
  const d = rule.destination;
  if (d) {
    if (d.negated) return null;
    const v4 = ipv4Range(d.value);
    if (v4) return { kind: 'daddr4', lo: v4.lo, hi: v4.hi, text: d.value };
    const range = addrRangeOf(d.value);
    return range ? { kind: 'daddr', family: range.family, lo: range.lo, hi: range.hi, text: d.value } : null;
  }
  const p = rule.protocol;
  if (rule.inInterface || rule.outInterface || rule.fragment || !p || p.negated) return null;
  const want = p.value.toLowerCase();
  const proto = PROTO_BY_NUMBER[want] ?? want;
  if (!L4.has(proto)) return null;
  const m = rule.matches.find((x) => !NO_OP.has(x.module));
  if (!m || m.module !== proto || m.options.length !== 1) return null;
  const o = m.options[0]!;
  if (o.negated || (o.name !== 'dport' && o.name !== 'destination-port')) return null;
  const spec = o.values[0] ?? '';
  const r = parsePortRange(spec);
  if (!r) return null;
  return { kind: 'dport', proto: proto as TraceProtocol, protoText: p.value, lo: r[0], hi: r[1], spec };
}

/** The prefilter of every rule of `chain`, by position (null where a rule has none); built once per chain object. */
export function chainPrefilters(chain: IptablesChain): readonly (Prefilter | null)[] {
  let f = chainFilters.get(chain);
  if (f === undefined) {
    f = chain.rules.map(compile);
    chainFilters.set(chain, f);
  }
  return f;
}

/** Prefilters by rule position, filled as {@link prefilterAt} meets the rules (undefined: not compiled yet). */
const chainFiltersSoFar = new WeakMap<IptablesChain, (Prefilter | null | undefined)[]>();

/**
 * The prefilter of `rule`, the rule at 0-based position `k` of `chain` (null when it has none):
 * what {@link chainPrefilters} gives at `k`, compiled when first asked and kept by chain and
 * position, so a walk that reads a chain's first rules compiles (and parses) only those.
 */
export function prefilterAt(chain: IptablesChain, k: number, rule: IptablesRule): Prefilter | null {
  let f = chainFiltersSoFar.get(chain);
  if (f === undefined) {
    f = [];
    chainFiltersSoFar.set(chain, f);
  }
  const known = f[k];
  if (known !== undefined) return known;
  return (f[k] = compile(rule));
}

// The packet's destination as numbers, remembered for the last text (it rarely changes).
let lastDst = '';
let lastDst4: number | null = null;
let lastDstIp: IpValue | null = null;

function readDst(dst: string): void {
  if (dst === lastDst && lastDst !== '') return;
  lastDst4 = ipv4Number(dst);
  lastDstIp = lastDst4 === null ? parseIp(dst) : { family: 'inet', value: BigInt(lastDst4) };
  lastDst = dst;
}

function daddrReason(f: Prefilter & { readonly text: string }, dst: string): string {
  f.lastDst = dst;
  f.lastReason = `daddr ${dst} is not in ${f.text}`;
  return f.lastReason;
}

/**
 * The reason the rule of prefilter `f` cannot match `pkt`, in the words a full evaluation
 * gives; null when the rule may match or `f` is null (then evaluate it in full).
 */
export function prefilterReject(f: Prefilter | null, pkt: WalkPacket): string | null {
  if (f === null) return null;
  switch (f.kind) {
    case 'daddr4':
      if (f.lastDst === pkt.dst) return f.lastReason!;
      readDst(pkt.dst);
      return lastDst4 !== null && lastDst4 >= f.lo && lastDst4 <= f.hi ? null : daddrReason(f, pkt.dst);
    case 'daddr':
      if (f.lastDst === pkt.dst) return f.lastReason!;
      readDst(pkt.dst);
      return lastDstIp !== null && lastDstIp.family === f.family && lastDstIp.value >= f.lo && lastDstIp.value <= f.hi ? null : daddrReason(f, pkt.dst);
    case 'dport': {
      if (pkt.proto !== f.proto) return `protocol ${pkt.proto} ≠ ${f.protoText}`;
      const port = pkt.dport;
      if (port !== null && port >= f.lo && port <= f.hi) return null;
      return `dport ${port ?? '(none)'} not in ${f.spec}`;
    }
  }
}
