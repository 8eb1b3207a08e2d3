/**
 * Whether one iptables rule's matches hold for the packet, condition by condition in the
 * kernel's order (generic `-s -d -i -o -p -f` first, ipt_do_table's `ip_packet_match`,
 * then each `-m` module in order), stopping at the first that fails, with the reason in
 * words. A module or option nodescope cannot evaluate makes the rule `unsupported`.
 *
 * Module semantics from iptables' extensions/libxt_*.man and the kernel's
 * net/netfilter/xt_{tcpudp,multiport,addrtype,mark,conntrack,state,statistic,recent,
 * comment,iprange}.c.
 */
import type { IptablesMatch, IptablesNegatable, IptablesOption, IptablesRule } from '../model/iptables.js';
import type { IpsetMember, IpsetPart } from '../model/ipvs.js';
import { parseIp } from '../model/iproute.js';
import type { WalkContext } from './context.js';
import { PROTOCOL_NUMBERS, TCP_FLAG_BITS, type TcpFlag } from './packet.js';
import { addressType, interfaceMatches } from './routing.js';
import { addrRangeOf, inRange, parseMarkMask, parsePortRange } from './values.js';

/** The outcome of a rule's matches: held (with what held), failed (with why), or unsupported. */
export type MatchVerdict =
  | { readonly kind: 'match'; readonly reason: string; readonly probability: number | null }
  | { readonly kind: 'nomatch'; readonly reason: string }
  | { readonly kind: 'unsupported'; readonly reason: string };

type Cond = { ok: boolean; text: string } | { unsupported: string };

const neg = (n: boolean) => (n ? '! ' : '');

/** The reason of a rule with nothing to check (a bare `-j`, or only a random draw). */
export const NO_CONDITIONS = 'no conditions: every packet matches';

/**
 * A `!` match: the packet's fact as it is, then that the rule negates it and whether the
 * negation holds — "✗ saddr 10.244.0.9 is in 10.244.0.0/16" alone reads as a contradiction,
 * and "✓ ! (mark 0x0 & 0x4000 ≠ 0x4000)" as a double negative.
 */
function negate(c: Cond, negated: boolean): Cond {
  if ('unsupported' in c || !negated) return c;
  return { ok: !c.ok, text: `${c.text} (negated match !: ${c.ok ? 'fails' : 'holds'})` };
}

function addrCond(opt: string, what: 'saddr' | 'daddr', value: string, a: IptablesNegatable): Cond {
  const r = addrRangeOf(a.value);
  if (!r) return { unsupported: `${opt} ${a.value}: not an address` };
  const inside = inRange(value, r);
  return negate({ ok: inside, text: `${what} ${value} ${inside ? 'is' : 'is not'} in ${a.value}` }, a.negated);
}

const PROTO_BY_NUMBER: Readonly<Record<string, string>> = { '1': 'icmp', '6': 'tcp', '17': 'udp', '58': 'icmpv6', '132': 'sctp' };

function protoCond(ctx: WalkContext, p: IptablesNegatable): Cond {
  const want = p.value.toLowerCase();
  const name = PROTO_BY_NUMBER[want] ?? (want === 'ipv6-icmp' ? 'icmpv6' : want);
  if (name === 'all' || name === '0') return negate({ ok: true, text: `-p ${p.value} matches every protocol` }, p.negated);
  if (!Object.hasOwn(PROTOCOL_NUMBERS, name)) return { unsupported: `-p ${p.value}: protocol not modelled` };
  const ok = ctx.pkt.proto === name;
  return negate({ ok, text: `protocol ${ctx.pkt.proto} ${ok ? '=' : '≠'} ${p.value}` }, p.negated);
}

/** `-i`/`-o`: the kernel compares with the device name; a hook without that device sees "". */
function ifaceCond(flag: '-i' | '-o', dev: string | null, p: IptablesNegatable): Cond {
  const ok = p.value === '+' || interfaceMatches(p.value, dev);
  const shown = dev ?? '(none at this hook)';
  return negate({ ok, text: `${flag === '-i' ? 'input' : 'output'} interface ${shown} ${ok ? 'matches' : 'does not match'} ${p.value}` }, p.negated);
}

function portIn(port: number | null, spec: string): boolean | null {
  if (port === null) return false;
  const r = parsePortRange(spec);
  if (!r) return null;
  return port >= r[0] && port <= r[1];
}

function opt(m: IptablesMatch, name: string): IptablesOption | undefined {
  return m.options.find((o) => o.name === name);
}

function portOption(ctx: WalkContext, o: IptablesOption, which: 'sport' | 'dport'): Cond {
  const value = which === 'sport' ? ctx.pkt.sport : ctx.pkt.dport;
  const spec = o.values[0] ?? '';
  const ok = portIn(value, spec);
  if (ok === null) return { unsupported: `--${o.name} ${spec}: not a port` };
  return negate({ ok, text: `${which} ${value ?? '(none)'} ${ok ? 'in' : 'not in'} ${spec}` }, o.negated);
}

function tcpFlagsMask(list: string): number | null {
  let bits = 0;
  for (const w of list.toLowerCase().split(',')) {
    if (w === 'all') bits |= 0x3f;
    else if (w === 'none') continue;
    else if (Object.hasOwn(TCP_FLAG_BITS, w)) bits |= TCP_FLAG_BITS[w as TcpFlag];
    else return null;
  }
  return bits;
}

function flagBits(flags: readonly TcpFlag[]): number {
  return flags.reduce((b, f) => b | TCP_FLAG_BITS[f], 0);
}

/** `-m tcp` / `-m udp` / `-m sctp` (xt_tcpudp.c, xt_sctp.c). */
function l4Module(ctx: WalkContext, m: IptablesMatch): Cond[] {
  const out: Cond[] = [];
  // The module only matches its own protocol (tcp_mt returns false for other packets).
  if (ctx.pkt.proto !== m.module) return [{ ok: false, text: `-m ${m.module} on a ${ctx.pkt.proto} packet` }];
  for (const o of m.options) {
    switch (o.name) {
      case 'sport':
      case 'source-port':
        out.push(portOption(ctx, o, 'sport'));
        break;
      case 'dport':
      case 'destination-port':
        out.push(portOption(ctx, o, 'dport'));
        break;
      case 'syn':
      case 'tcp-flags': {
        if (m.module !== 'tcp') return [{ unsupported: `--${o.name} outside -m tcp` }];
        const mask = o.name === 'syn' ? 0x17 : tcpFlagsMask(o.values[0] ?? '');
        const comp = o.name === 'syn' ? 0x02 : tcpFlagsMask(o.values[1] ?? '');
        if (mask === null || comp === null) return [{ unsupported: `--tcp-flags ${o.values.join(' ')}: unknown flag` }];
        const have = flagBits(ctx.pkt.tcpFlags);
        const ok = (have & mask) === comp;
        out.push(negate({ ok, text: `tcp flags ${ctx.pkt.tcpFlags.join(',') || 'none'} ${ok ? 'match' : 'do not match'} --${o.name}${o.values.length ? ' ' + o.values.join(' ') : ''}` }, o.negated));
        break;
      }
      default:
        return [{ unsupported: `-m ${m.module} --${o.name} is not modelled` }];
    }
  }
  return out;
}

function multiportModule(ctx: WalkContext, m: IptablesMatch): Cond[] {
  const out: Cond[] = [];
  for (const o of m.options) {
    const ports = (o.values[0] ?? '').split(',');
    const check = (p: number | null) => ports.some((spec) => portIn(p, spec) === true);
    if (ports.some((spec) => parsePortRange(spec) === null)) return [{ unsupported: `--${o.name} ${o.values[0] ?? ''}: not a port list` }];
    let ok: boolean;
    let shown: string;
    if (o.name === 'dports' || o.name === 'destination-ports') {
      ok = check(ctx.pkt.dport);
      shown = `dport ${ctx.pkt.dport}`;
    } else if (o.name === 'sports' || o.name === 'source-ports') {
      ok = check(ctx.pkt.sport);
      shown = `sport ${ctx.pkt.sport}`;
    } else if (o.name === 'ports') {
      ok = check(ctx.pkt.sport) || check(ctx.pkt.dport);
      shown = `ports ${ctx.pkt.sport}/${ctx.pkt.dport}`;
    } else return [{ unsupported: `-m multiport --${o.name} is not modelled` }];
    out.push(negate({ ok, text: `${shown} ${ok ? 'in' : 'not in'} ${o.values[0]}` }, o.negated));
  }
  return out;
}

function addrtypeModule(ctx: WalkContext, m: IptablesMatch): Cond[] {
  const out: Cond[] = [];
  for (const o of m.options) {
    if (o.name !== 'src-type' && o.name !== 'dst-type') return [{ unsupported: `-m addrtype --${o.name} is not modelled` }];
    const addr = o.name === 'src-type' ? ctx.pkt.src : ctx.pkt.dst;
    const type = addressType(ctx.net, addr).toUpperCase();
    const wanted = (o.values[0] ?? '').toUpperCase().split(',');
    const ok = wanted.includes(type);
    out.push(negate({ ok, text: `${o.name === 'src-type' ? 'saddr' : 'daddr'} ${addr} is ${type}${ok ? '' : `, not ${wanted.join(',')}`}` }, o.negated));
  }
  return out;
}

function markModule(ctx: WalkContext, m: IptablesMatch): Cond[] {
  const o = opt(m, 'mark');
  if (!o || m.options.length !== 1) return [{ unsupported: '-m mark without a single --mark' }];
  const vm = parseMarkMask(o.values[0] ?? '');
  if (!vm) return [{ unsupported: `--mark ${o.values[0] ?? ''}: not a mark` }];
  const [v, mask] = vm;
  const ok = ((ctx.pkt.mark & mask) >>> 0) === v;
  return [negate({ ok, text: `mark 0x${ctx.pkt.mark.toString(16)} & 0x${mask.toString(16)} ${ok ? '=' : '≠'} 0x${v.toString(16)}` }, o.negated)];
}

/** The `--ctstate` words that hold for the packet now (xt_conntrack.c `conntrack_mt`). */
function ctStates(ctx: WalkContext): Set<string> {
  const s = new Set<string>([ctx.pkt.ct.toUpperCase()]);
  if (ctx.flow.dnat) s.add('DNAT');
  if (ctx.flow.snat) s.add('SNAT');
  return s;
}

function ctStatuses(ctx: WalkContext): Set<string> {
  const s = new Set<string>();
  if (ctx.flow.seenReply) s.add('SEEN_REPLY');
  if (ctx.flow.assured) s.add('ASSURED');
  if (ctx.flow.confirmed) s.add('CONFIRMED');
  if (s.size === 0) s.add('NONE');
  return s;
}

function conntrackModule(ctx: WalkContext, m: IptablesMatch): Cond[] {
  const out: Cond[] = [];
  for (const o of m.options) {
    const words = (o.values[0] ?? '').toUpperCase().split(',');
    if (o.name === 'ctstate' || o.name === 'state') {
      const have = ctStates(ctx);
      const ok = words.some((w) => have.has(w));
      out.push(negate({ ok, text: `ct state ${[...have].join(',')} ${ok ? 'in' : 'not in'} ${words.join(',')}` }, o.negated));
    } else if (o.name === 'ctstatus') {
      const have = ctStatuses(ctx);
      const ok = words.some((w) => have.has(w));
      out.push(negate({ ok, text: `ct status ${[...have].join(',')} ${ok ? 'in' : 'not in'} ${words.join(',')}` }, o.negated));
    } else if (o.name === 'ctdir') {
      const dir = (ctx.flow.direction ?? 'original').toUpperCase();
      const ok = words[0] === dir;
      out.push(negate({ ok, text: `ct direction ${dir} ${ok ? '=' : '≠'} ${words[0]}` }, o.negated));
    } else return [{ unsupported: `-m conntrack --${o.name} is not modelled` }];
  }
  return out;
}

function recentModule(ctx: WalkContext, m: IptablesMatch): Cond[] {
  const name = opt(m, 'name')?.values[0] ?? 'DEFAULT';
  if (opt(m, 'set')) return [{ ok: true, text: `recent --set: adds the source to list ${name}` }];
  const check = opt(m, 'rcheck') ?? opt(m, 'update') ?? opt(m, 'remove');
  if (!check) return [{ unsupported: `-m recent without --set/--rcheck/--update/--remove` }];
  const list = ctx.input.xtRecent?.[name] ?? (ctx.input.xtRecentComplete ? [] : undefined);
  if (!list) return [{ unsupported: `-m recent --${check.name} --name ${name}: the list's contents (/proc/net/xt_recent/${name}) are not in the capture` }];
  if (opt(m, 'hitcount') || opt(m, 'rttl')) return [{ unsupported: '-m recent --hitcount/--rttl is not modelled' }];
  const addr = opt(m, 'rdest') ? ctx.pkt.dst : ctx.pkt.src;
  const maskText = opt(m, 'mask')?.values[0];
  const masked = (a: string) => {
    if (!maskText) return parseIp(a)?.value ?? null;
    const mv = parseIp(maskText);
    const av = parseIp(a);
    return mv && av ? av.value & mv.value : null;
  };
  const want = masked(addr);
  const seconds = opt(m, 'seconds')?.values[0];
  const hit = list.find((e) => masked(e.address) === want);
  if (hit && seconds !== undefined && hit.ageSeconds === null) return [{ unsupported: `-m recent --seconds ${seconds}: the age of ${addr} in list ${name} is unknown` }];
  const ok = hit !== undefined && (seconds === undefined || (hit.ageSeconds ?? 0) <= Number(seconds));
  return [negate({ ok, text: `${addr} ${ok ? 'is' : 'is not'} in recent list ${name}${seconds ? ` (within ${seconds}s)` : ''}` }, check.negated)];
}

/** Whether one decoded ipset element part holds for the packet's `src`/`dst` side. */
function partHolds(ctx: WalkContext, part: IpsetPart, side: 'src' | 'dst'): boolean | null {
  const addr = side === 'src' ? ctx.pkt.src : ctx.pkt.dst;
  switch (part.dim) {
    case 'ip':
      return parseIp(part.address)?.value === parseIp(addr)?.value;
    case 'net': {
      const r = addrRangeOf(part.prefixLen === null ? part.address : `${part.address}/${part.prefixLen}`);
      return r ? inRange(addr, r) : null;
    }
    case 'port': {
      const port = side === 'src' ? ctx.pkt.sport : ctx.pkt.dport;
      if (part.port === null) return null;
      return (part.protocol === null || part.protocol === ctx.pkt.proto) && port === part.port;
    }
    case 'mark':
      return ctx.pkt.mark === part.mark;
    default:
      return null;
  }
}

/**
 * `-m set --match-set NAME src|dst[,…]` (xt_set.c `set_match_v4`, ipset(8)): each flag
 * says which side of the packet fills the set's dimension of the same position; the
 * members come from the captured `ipset list`. Other xt_set options are not modelled.
 */
function setModule(ctx: WalkContext, m: IptablesMatch): Cond[] {
  const o = opt(m, 'match-set');
  if (!o || m.options.length !== 1) return [{ unsupported: `-m set ${m.options.map((x) => `--${x.name}`).join(' ')}: only --match-set is modelled` }];
  const [name, flagText] = o.values;
  if (!name || !flagText) return [{ unsupported: '--match-set without a set name and flags' }];
  const set = ctx.input.ipsets?.[name];
  if (!set) return [{ unsupported: `-m set --match-set ${name}: the set's members (ipset list) are not in the capture` }];
  if (set.members === null) return [{ unsupported: `-m set --match-set ${name}: the capture lists the set without its members (ipset list -t)` }];
  const flags = flagText.split(',');
  if (flags.some((f) => f !== 'src' && f !== 'dst') || flags.length < set.dims.length) return [{ unsupported: `--match-set ${name} ${flagText}: ${set.dims.length} dimensions (${set.type}) need as many src/dst flags` }];
  const hits: IpsetMember[] = [];
  for (const member of set.members) {
    if (member.parts === null) return [{ unsupported: `ipset ${name} member "${member.element}" could not be decoded as ${set.type}` }];
    let all = true;
    for (let i = 0; i < member.parts.length; i++) {
      const h = partHolds(ctx, member.parts[i]!, flags[i] as 'src' | 'dst');
      if (h === null) return [{ unsupported: `ipset ${name} (${set.type}): the ${member.parts[i]!.dim} dimension is not modelled` }];
      if (!h) {
        all = false;
        break;
      }
    }
    if (all) hits.push(member);
  }
  if (hits.some((h) => h.options.some(([k]) => k === 'nomatch'))) return [{ unsupported: `ipset ${name}: a nomatch element covers the packet (the most specific element decides, not modelled)` }];
  const ok = hits.length > 0;
  const what = flags.slice(0, set.dims.length).map((f, i) => `${f} ${set.dims[i]}`).join(',');
  return [negate({ ok, text: `${what} of the packet ${ok ? `is in set ${name} (${hits[0]!.element})` : `is not in set ${name} (${set.members.length} members)`}` }, o.negated)];
}

function iprangeModule(ctx: WalkContext, m: IptablesMatch): Cond[] {
  const out: Cond[] = [];
  for (const o of m.options) {
    const [a, b] = (o.values[0] ?? '').split('-');
    const lo = a ? parseIp(a) : null;
    const hi = b ? parseIp(b) : lo;
    if (!lo || !hi || (o.name !== 'src-range' && o.name !== 'dst-range')) return [{ unsupported: `-m iprange --${o.name} ${o.values[0] ?? ''}` }];
    const addr = o.name === 'src-range' ? ctx.pkt.src : ctx.pkt.dst;
    const ok = inRange(addr, { family: lo.family, lo: lo.value, hi: hi.value });
    out.push(negate({ ok, text: `${addr} ${ok ? 'in' : 'not in'} ${o.values[0]}` }, o.negated));
  }
  return out;
}

function icmpModule(ctx: WalkContext, m: IptablesMatch): Cond[] {
  if (ctx.pkt.proto !== 'icmp' && ctx.pkt.proto !== 'icmpv6') return [{ ok: false, text: `-m ${m.module} on a ${ctx.pkt.proto} packet` }];
  const o = opt(m, 'icmp-type') ?? opt(m, 'icmpv6-type');
  if (!o) return [{ ok: true, text: `-m ${m.module}` }];
  const names: Readonly<Record<string, number>> = { 'echo-reply': 0, 'destination-unreachable': 3, 'echo-request': 8, 'time-exceeded': 11 };
  const v = o.values[0] ?? '';
  if (v === 'any') return [negate({ ok: true, text: 'any icmp type' }, o.negated)];
  const [t, c] = v.split('/');
  const type = names[t ?? ''] ?? (/^[0-9]+$/.test(t ?? '') ? Number(t) : null);
  if (type === null) return [{ unsupported: `--${o.name} ${v} is not modelled` }];
  const ok = ctx.pkt.icmpType === type && (c === undefined || ctx.pkt.icmpCode === Number(c));
  return [negate({ ok, text: `icmp type ${ctx.pkt.icmpType} ${ok ? '=' : '≠'} ${v}` }, o.negated)];
}

function statisticProbabilityOf(m: IptablesMatch): number | Cond {
  const mode = opt(m, 'mode')?.values[0];
  const p = opt(m, 'probability');
  if (mode !== 'random' || !p) return { unsupported: `-m statistic --mode ${mode ?? '?'} (only --mode random is modelled)` };
  const v = Number(p.values[0]);
  if (!Number.isFinite(v) || v < 0 || v > 1) return { unsupported: `--probability ${p.values[0] ?? ''}` };
  return p.negated ? 1 - v : v;
}

/** Modules that never fail a match (they count, label or log). */
const NO_OP_MODULES: ReadonlySet<string> = new Set(['comment', 'nfacct']);

function moduleConds(ctx: WalkContext, m: IptablesMatch): Cond[] {
  switch (m.module) {
    case 'tcp':
    case 'udp':
    case 'sctp':
      return l4Module(ctx, m);
    case 'multiport':
      return multiportModule(ctx, m);
    case 'addrtype':
      return addrtypeModule(ctx, m);
    case 'mark':
      return markModule(ctx, m);
    case 'conntrack':
    case 'state':
      return conntrackModule(ctx, m);
    case 'recent':
      return recentModule(ctx, m);
    case 'iprange':
      return iprangeModule(ctx, m);
    case 'set':
      return setModule(ctx, m);
    case 'icmp':
    case 'icmp6':
      return icmpModule(ctx, m);
    case 'physdev':
      return [{ unsupported: '-m physdev: bridge port matching is not modelled' }];
    default:
      if (NO_OP_MODULES.has(m.module)) return [];
      return [{ unsupported: `-m ${m.module} is not modelled` }];
  }
}

/**
 * Evaluates the matches of `rule` for the packet in `ctx`, in order, stopping at the
 * first that fails. A random `-m statistic` is not decided here: it is reported as
 * `probability` of a rule whose other matches hold (the caller picks the branch).
 */
export function evalIptablesMatches(ctx: WalkContext, rule: IptablesRule): MatchVerdict {
  const held: string[] = [];
  let probability: number | null = null;
  const check = (c: Cond): MatchVerdict | null => {
    if ('unsupported' in c) return { kind: 'unsupported', reason: c.unsupported };
    if (!c.ok) return { kind: 'nomatch', reason: c.text };
    held.push(c.text);
    return null;
  };
  const generic: Cond[] = [];
  if (rule.source) generic.push(addrCond('-s', 'saddr', ctx.pkt.src, rule.source));
  if (rule.destination) generic.push(addrCond('-d', 'daddr', ctx.pkt.dst, rule.destination));
  if (rule.inInterface) generic.push(ifaceCond('-i', ctx.pkt.iif, rule.inInterface));
  if (rule.outInterface) generic.push(ifaceCond('-o', ctx.pkt.oif, rule.outInterface));
  if (rule.protocol) generic.push(protoCond(ctx, rule.protocol));
  // nodescope's packet is never a non-first fragment.
  if (rule.fragment) generic.push({ ok: rule.fragment.negated, text: `${neg(rule.fragment.negated)}-f: the packet is not a fragment` });
  for (const c of generic) {
    const r = check(c);
    if (r) return r;
  }
  for (const m of rule.matches) {
    if (m.module === 'statistic') {
      const p = statisticProbabilityOf(m);
      if (typeof p !== 'number') {
        const r = check(p);
        if (r) return r;
        continue;
      }
      probability = probability === null ? p : probability * p;
      continue;
    }
    for (const c of moduleConds(ctx, m)) {
      const r = check(c);
      if (r) return r;
    }
  }
  return { kind: 'match', reason: held.length === 0 ? NO_CONDITIONS : held.join('; '), probability };
}
