/**
 * nft expressions evaluated against the packet, and constants read with the datatype of
 * the expression they are compared with (nft(8) "DATA TYPES"): addresses and prefixes as
 * integer ranges, `tcp` as 6, `new` as the ct_state bit, interface names as strings.
 * Set and map elements (values, prefixes, ranges, concatenations) become matchers.
 *
 * Kernel sources for the values: include/uapi/linux/netfilter/nf_conntrack_common.h
 * (`NF_CT_STATE_*_BIT`, `IPS_*`), include/uapi/linux/rtnetlink.h (`RTN_*`, what `fib …
 * type` yields), net/netfilter/nft_ct.c, nft_meta.c, nft_payload.c, nft_fib.c.
 */
import { parseIp } from '../model/iproute.js';
import type { NftElement, NftExpr } from '../model/nftables.js';
import { exprType } from '../parsers/nft-types.js';
import type { WalkContext } from './context.js';
import { PROTOCOL_NUMBERS, TCP_FLAG_BITS, type TcpFlag } from './packet.js';
import { addressType, ifindexOf } from './routing.js';
import { ipv4Number } from '../net/address.js';

/** A runtime value: an integer of some width, a string (interface names), or a concatenation. */
export type NftValue =
  | { readonly t: 'int'; readonly v: bigint }
  | { readonly t: 'str'; readonly v: string }
  | { readonly t: 'concat'; readonly items: readonly NftValue[] };

/** Evaluation that cannot go on: `absent` (the header is not there: no match), `unsupported`. */
export type NftEvalStop = { readonly stop: 'absent'; readonly why: string } | { readonly stop: 'unsupported'; readonly why: string };

/** A value, or why there is none. */
export type NftEval = NftValue | NftEvalStop;

/** ct_state bits (`NF_CT_STATE_BIT(ctinfo)`, `NF_CT_STATE_INVALID_BIT`, `NF_CT_STATE_UNTRACKED_BIT`). */
export const CT_STATE_BITS: Readonly<Record<string, number>> = { invalid: 1, established: 2, related: 4, new: 8, untracked: 64 };

/** ct_status bits (`enum ip_conntrack_status`). */
export const CT_STATUS_BITS: Readonly<Record<string, number>> = {
  expected: 1, 'seen-reply': 2, assured: 4, confirmed: 8, snat: 16, dnat: 32, dying: 512,
};

/** Route types as `fib … type` yields them (`RTN_*`). */
export const FIB_TYPES: Readonly<Record<string, number>> = {
  unspec: 0, unicast: 1, local: 2, broadcast: 3, anycast: 4, multicast: 5, blackhole: 6, unreachable: 7, prohibit: 8, throw: 9, nat: 10,
};

/** Well-known service names nft may print for ports (`/etc/services` subset). */
const SERVICES: Readonly<Record<string, number>> = { ssh: 22, domain: 53, http: 80, https: 443, 'http-alt': 8080, bootps: 67, bootpc: 68, ntp: 123 };

/** True for an {@link NftEvalStop} (no value: header absent, or not modelled). */
export function isStop(x: NftEval | unknown): x is NftEvalStop {
  return typeof x === 'object' && x !== null && 'stop' in x;
}

const int = (v: number | bigint): NftValue => ({ t: 'int', v: BigInt(v) });

function ctStateBits(ctx: WalkContext): number {
  return CT_STATE_BITS[ctx.pkt.ct] ?? 1;
}

function ctStatusBits(ctx: WalkContext): number {
  const f = ctx.flow;
  let bits = 0;
  if (f.seenReply) bits |= CT_STATUS_BITS['seen-reply']!;
  if (f.assured) bits |= CT_STATUS_BITS['assured']!;
  if (f.confirmed) bits |= CT_STATUS_BITS['confirmed']!;
  if (f.snat) bits |= CT_STATUS_BITS['snat']!;
  if (f.dnat) bits |= CT_STATUS_BITS['dnat']!;
  return bits;
}

function addrValue(text: string): NftValue {
  const ip = parseIp(text);
  return ip ? int(ip.value) : { t: 'str', v: text };
}

const L4 = new Set(['tcp', 'udp', 'sctp', 'udplite', 'dccp']);

function payload(ctx: WalkContext, protocol: string, field: string): NftEval {
  const p = ctx.pkt;
  if (protocol === 'ip' || protocol === 'ip6') {
    if ((protocol === 'ip') !== (p.family === 'ipv4')) return { stop: 'absent', why: `${protocol} header on an ${p.family} packet` };
    if (field === 'saddr') return addrValue(p.src);
    if (field === 'daddr') return addrValue(p.dst);
    if (field === 'protocol' || field === 'nexthdr') return int(PROTOCOL_NUMBERS[p.proto]);
    return { stop: 'unsupported', why: `${protocol} ${field} is not modelled` };
  }
  if (protocol === 'th' || L4.has(protocol)) {
    const hasPorts = p.proto === 'tcp' || p.proto === 'udp' || p.proto === 'sctp';
    if (!hasPorts || (protocol !== 'th' && protocol !== p.proto)) return { stop: 'absent', why: `${protocol} ${field} on a ${p.proto} packet` };
    if (field === 'sport') return p.sport === null ? { stop: 'unsupported', why: 'source port chosen at random by NAT' } : int(p.sport);
    if (field === 'dport') return int(p.dport ?? 0);
    if (field === 'flags' && protocol === 'tcp') return int(p.tcpFlags.reduce((b, f) => b | TCP_FLAG_BITS[f], 0));
    return { stop: 'unsupported', why: `${protocol} ${field} is not modelled` };
  }
  if (protocol === 'icmp' || protocol === 'icmpv6') {
    if (p.proto !== protocol) return { stop: 'absent', why: `${protocol} header on a ${p.proto} packet` };
    if (field === 'type') return int(p.icmpType ?? 0);
    if (field === 'code') return int(p.icmpCode ?? 0);
    if (field === 'id') return int(p.icmpId ?? 0);
  }
  return { stop: 'unsupported', why: `${protocol} ${field} is not modelled` };
}

function meta(ctx: WalkContext, key: string): NftEval {
  const p = ctx.pkt;
  switch (key) {
    case 'l4proto':
      return int(PROTOCOL_NUMBERS[p.proto]);
    case 'nfproto':
      return int(p.family === 'ipv4' ? 2 : 10);
    case 'protocol':
      return int(p.family === 'ipv4' ? 0x0800 : 0x86dd);
    case 'mark':
      return int(p.mark);
    case 'iifname':
      return p.iif === null ? { stop: 'absent', why: 'no input interface at this hook' } : { t: 'str', v: p.iif };
    case 'oifname':
      return p.oif === null ? { stop: 'absent', why: 'no output interface at this hook' } : { t: 'str', v: p.oif };
    case 'iif':
    case 'oif': {
      const idx = ifindexOf(ctx.net, key === 'iif' ? p.iif : p.oif);
      return idx === null ? { stop: 'absent', why: `no ${key} at this hook` } : int(idx);
    }
    default:
      return { stop: 'unsupported', why: `meta ${key} is not modelled` };
  }
}

function ct(ctx: WalkContext, key: string, dir: string | undefined): NftEval {
  if (dir !== undefined) return { stop: 'unsupported', why: `ct ${dir} ${key} is not modelled` };
  switch (key) {
    case 'state':
      return int(ctStateBits(ctx));
    case 'status':
      if (ctx.flow.tracked === 'not-yet' || ctx.flow.tracked === 'untracked') return { stop: 'absent', why: 'no conntrack entry yet' };
      return int(ctStatusBits(ctx));
    case 'mark':
      return int(ctx.flow.ctMark);
    case 'direction':
      return ctx.flow.direction === null ? { stop: 'absent', why: 'no conntrack entry yet' } : int(ctx.flow.direction === 'original' ? 0 : 1);
    default:
      return { stop: 'unsupported', why: `ct ${key} is not modelled` };
  }
}

/** Evaluates an expression for the packet (left sides, map keys, mangle values). */
export function evalNftExpr(ctx: WalkContext, e: NftExpr): NftEval {
  switch (e.kind) {
    case 'payload':
      return payload(ctx, e.protocol, e.field);
    case 'meta':
      return meta(ctx, e.key);
    case 'ct':
      return ct(ctx, e.key, e.dir);
    case 'fib': {
      const flags = [...e.flags].sort().join(',');
      if (e.result !== 'type' || (flags !== 'daddr' && flags !== 'saddr')) return { stop: 'unsupported', why: `fib ${e.flags.join(' . ')} ${e.result} is not modelled` };
      const addr = flags === 'daddr' ? ctx.pkt.dst : ctx.pkt.src;
      return int(FIB_TYPES[addressType(ctx.net, addr)] ?? 0);
    }
    case 'binop': {
      const l = evalNftExpr(ctx, e.left);
      if (isStop(l)) return l;
      const r = constant(e.right, exprType(e.left));
      if (isStop(r)) return r;
      if (l.t !== 'int' || r.t !== 'int') return { stop: 'unsupported', why: `${e.op} on non-integers` };
      const v = e.op === '&' ? l.v & r.v : e.op === '|' ? l.v | r.v : e.op === '^' ? l.v ^ r.v : e.op === '<<' ? l.v << r.v : l.v >> r.v;
      return int(v & 0xffffffffffffffffn);
    }
    case 'concat': {
      const items: NftValue[] = [];
      for (const i of e.items) {
        const v = evalNftExpr(ctx, i);
        if (isStop(v)) return v;
        items.push(v);
      }
      return { t: 'concat', items };
    }
    case 'numgen':
      return { stop: 'unsupported', why: 'numgen outside a map lookup' };
    default:
      return constant(e, undefined);
  }
}

function symbolic(text: string, type: string | undefined): NftEval {
  switch (type) {
    case 'ipv4_addr':
    case 'ipv6_addr': {
      // Dotted quads without parseIp's regex and bigint arithmetic: maps hold thousands of them.
      const v4 = ipv4Number(text);
      if (v4 !== null) return int(BigInt(v4));
      const ip = parseIp(text);
      return ip ? int(ip.value) : { stop: 'unsupported', why: `${text} is not an address` };
    }
    case 'inet_proto': {
      const n = PROTOCOL_NUMBERS[text as keyof typeof PROTOCOL_NUMBERS];
      return n === undefined ? { stop: 'unsupported', why: `protocol ${text}` } : int(n);
    }
    case 'inet_service': {
      const n = SERVICES[text];
      return n === undefined ? { stop: 'unsupported', why: `service name ${text}` } : int(n);
    }
    case 'ct_state':
      return CT_STATE_BITS[text] === undefined ? { stop: 'unsupported', why: `ct state ${text}` } : int(CT_STATE_BITS[text]!);
    case 'ct_status':
      return CT_STATUS_BITS[text] === undefined ? { stop: 'unsupported', why: `ct status ${text}` } : int(CT_STATUS_BITS[text]!);
    case 'ct_dir':
      return text === 'original' ? int(0) : text === 'reply' ? int(1) : { stop: 'unsupported', why: `ct direction ${text}` };
    case 'tcp_flag':
      return Object.hasOwn(TCP_FLAG_BITS, text) ? int(TCP_FLAG_BITS[text as TcpFlag]) : { stop: 'unsupported', why: `tcp flag ${text}` };
    case 'fib_addrtype':
      return FIB_TYPES[text] === undefined ? { stop: 'unsupported', why: `address type ${text}` } : int(FIB_TYPES[text]!);
    case 'nf_proto':
      return text === 'ipv4' ? int(2) : text === 'ipv6' ? int(10) : { stop: 'unsupported', why: `nfproto ${text}` };
    case 'ifname':
    case 'string':
      return { t: 'str', v: text };
    default: {
      if (/^0x[0-9a-f]+$/i.test(text) || /^[0-9]+$/.test(text)) return int(BigInt(text));
      const ip = parseIp(text);
      if (ip) return int(ip.value);
      return { stop: 'unsupported', why: `constant ${text} of type ${type ?? 'unknown'}` };
    }
  }
}

/** A constant value of the expression's datatype (`type` from `exprType`, or the set's key type). */
export function constant(e: NftExpr, type: string | undefined): NftEval {
  if (e.kind === 'value') {
    if (typeof e.value === 'number') return int(e.value);
    if (typeof e.value === 'boolean') return int(e.value ? 1 : 0);
    return symbolic(e.value, type);
  }
  if (e.kind === 'list' || e.kind === 'binop') {
    // Flag lists (`established,related`) and constant expressions (`syn | ack`) fold to bits.
    const parts = e.kind === 'list' ? e.items : [e.left, e.right];
    let acc: bigint | null = null;
    for (const part of parts) {
      const v = constant(part, type);
      if (isStop(v)) return v;
      if (v.t !== 'int') return { stop: 'unsupported', why: `${e.kind} of non-integers` };
      if (acc === null) acc = v.v;
      else if (e.kind === 'list' || e.op === '|') acc |= v.v;
      else if (e.op === '&') acc &= v.v;
      else if (e.op === '^') acc ^= v.v;
      else return { stop: 'unsupported', why: `constant ${e.op}` };
    }
    return int(acc ?? 0n);
  }
  return { stop: 'unsupported', why: `${e.kind} where a constant is expected` };
}

/** A test of one value (of one concatenation field): equal, in a prefix, in a range, a wildcard name. */
export type ValueTest = (v: NftValue) => boolean;

/** The test a constant, prefix or range stands for, read with datatype `type`. */
export function valueTest(e: NftExpr, type: string | undefined): ValueTest | NftEvalStop {
  if (e.kind === 'prefix') {
    const ip = parseIp(e.addr);
    if (!ip) return { stop: 'unsupported', why: `prefix ${e.addr}/${e.len}` };
    const bits = ip.family === 'inet' ? 32 : 128;
    const host = (1n << BigInt(bits - e.len)) - 1n;
    const lo = ip.value & ~host;
    const hi = lo | host;
    return (v) => v.t === 'int' && v.v >= lo && v.v <= hi;
  }
  if (e.kind === 'range') {
    const lo = constant(e.from, type);
    const hi = constant(e.to, type);
    if (isStop(lo)) return lo;
    if (isStop(hi)) return hi;
    if (lo.t !== 'int' || hi.t !== 'int') return { stop: 'unsupported', why: 'range of non-integers' };
    return (v) => v.t === 'int' && v.v >= lo.v && v.v <= hi.v;
  }
  const c = constant(e, type);
  if (isStop(c)) return c;
  if (c.t === 'str' && c.v.endsWith('*')) {
    const stem = c.v.slice(0, -1);
    return (v) => v.t === 'str' && v.v.startsWith(stem);
  }
  return (v) => sameValue(v, c);
}

/** Equality of two values. */
export function sameValue(a: NftValue, b: NftValue): boolean {
  if (a.t !== b.t) return false;
  if (a.t === 'concat' && b.t === 'concat') return a.items.length === b.items.length && a.items.every((x, i) => sameValue(x, b.items[i]!));
  return (a as { v: unknown }).v === (b as { v: unknown }).v;
}

/** A matcher for a set/map element key: one test per concatenation field. */
export function elementTest(el: NftElement, keyTypes: readonly (string | undefined)[]): ValueTest | NftEvalStop {
  const key = el.key;
  if (key.kind === 'concat') {
    const tests: ValueTest[] = [];
    for (const [i, item] of key.items.entries()) {
      const t = valueTest(item, keyTypes[i]);
      if (isStop(t)) return t;
      tests.push(t);
    }
    return (v) => v.t === 'concat' && v.items.length === tests.length && tests.every((t, i) => t(v.items[i]!));
  }
  return valueTest(key, keyTypes[0]);
}

/** The datatypes of the fields of an expression (concatenation items, or the one expression). */
export function keyTypesOf(e: NftExpr): (string | undefined)[] {
  return e.kind === 'concat' ? e.items.map((i) => exprType(i)) : [exprType(e)];
}

/** Text of a value for reasons (`10.96.12.34 . tcp . 80`). */
export function showValue(v: NftValue, e?: NftExpr): string {
  if (v.t === 'concat') return v.items.map((x, i) => showValue(x, e?.kind === 'concat' ? e.items[i] : undefined)).join(' . ');
  if (v.t === 'str') return `"${v.v}"`;
  const type = e ? exprType(e) : undefined;
  if (type === 'ipv4_addr') return [24n, 16n, 8n, 0n].map((s) => String((v.v >> s) & 255n)).join('.');
  if (type === 'inet_proto') {
    const name = Object.entries(PROTOCOL_NUMBERS).find(([, n]) => BigInt(n) === v.v)?.[0];
    return name ?? String(v.v);
  }
  if (type === 'mark') return `0x${v.v.toString(16).padStart(8, '0')}`;
  if (type === 'ct_state') return Object.entries(CT_STATE_BITS).filter(([, b]) => (BigInt(b) & v.v) !== 0n).map(([n]) => n).join(',') || '0';
  if (type === 'fib_addrtype') return Object.entries(FIB_TYPES).find(([, n]) => BigInt(n) === v.v)?.[0] ?? String(v.v);
  if (type === 'ipv6_addr') {
    const groups: string[] = [];
    for (let s = 112n; s >= 0n; s -= 16n) groups.push(((v.v >> s) & 0xffffn).toString(16));
    return groups.join(':').replace(/\b:?(?:0:){2,}/, '::');
  }
  return String(v.v);
}

/** A hash key of a value (`i167772170`, `s"eth0"`, concatenations joined by `|`). */
export function valueKey(v: NftValue): string {
  if (v.t === 'int') return `i${v.v}`;
  if (v.t === 'str') return `s${v.v}`;
  return v.items.map(valueKey).join('|');
}

/**
 * `valueKey(constant(value, type))` without bigints for the values that fill kube-proxy's
 * maps (safe integers, dotted quads as addresses, protocol names); null for the rest.
 */
function quickIntKey(value: string | number | boolean, type: string | undefined): string | null {
  if (typeof value === 'number') return Number.isSafeInteger(value) ? `i${value}` : null;
  if (typeof value === 'boolean') return value ? 'i1' : 'i0';
  if (type === 'ipv4_addr' || type === 'ipv6_addr') {
    const v4 = ipv4Number(value);
    return v4 === null ? null : `i${v4}`;
  }
  if (type === 'inet_proto' && Object.hasOwn(PROTOCOL_NUMBERS, value)) return `i${PROTOCOL_NUMBERS[value as keyof typeof PROTOCOL_NUMBERS]}`;
  return null;
}

/**
 * The hash key of an element whose key is exact (constants only, no prefix, range or
 * wildcard), read with `types`; null when the element needs a scan.
 */
export function exactKeyOf(el: NftElement, types: readonly (string | undefined)[]): string | null {
  const parts = el.key.kind === 'concat' ? el.key.items : [el.key];
  const keys: string[] = [];
  for (const [i, p] of parts.entries()) {
    if (p.kind !== 'value') return null;
    const quick = quickIntKey(p.value, types[i]);
    if (quick !== null) {
      keys.push(quick);
      continue;
    }
    const c = constant(p, types[i]);
    if (isStop(c) || (c.t === 'str' && c.v.endsWith('*'))) return null;
    keys.push(valueKey(c));
  }
  if (el.key.kind === 'concat') return keys.join('|');
  return keys[0] ?? null;
}
