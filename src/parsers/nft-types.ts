/**
 * The little nft datatype knowledge the parsers and the formatter share: which words start
 * an expression, which meta keys nft prints without `meta`, which keys are bitmasks (an
 * implicit `in`), the datatype of common expressions (for `typeof` sets and for printing
 * marks as `0x%08x` and interface names quoted), and nft's defaults that its text output
 * leaves out. Sources: nft(8) "PAYLOAD EXPRESSIONS", "META EXPRESSIONS", "CONNTRACK
 * EXPRESSIONS"; nftables src/meta.c `meta_key_is_unqualified()`, src/expression.c
 * `calculate_delim()`, src/statement.c `limit_stmt_print()`, `reject_stmt_print()`.
 */
import type { NftCounterStmt, NftExpr, NftFamily, NftRejectStmt } from '../model/nftables.js';

/** The largest value of a kernel packet or byte counter (`u64`, nft's `counter` expression): 2^64−1. */
export const NFT_COUNTER_MAX = 0xffffffffffffffffn;

/**
 * The first anonymous counter of `statements` whose packets or bytes exceed 2^64−1 (a
 * damaged or forged ruleset: the kernel's counters cannot hold it), for a diagnostic; the
 * parsers keep the value as read.
 */
export function counterAboveMax(statements: readonly { readonly kind: string }[]): NftCounterStmt | undefined {
  for (const s of statements) {
    if (s.kind !== 'counter') continue;
    const c = s as NftCounterStmt;
    if ((c.packets !== undefined && c.packets > NFT_COUNTER_MAX) || (c.bytes !== undefined && c.bytes > NFT_COUNTER_MAX)) return c;
  }
  return undefined;
}

/** The diagnostic message for {@link counterAboveMax}'s counter. */
export function counterAboveMaxMessage(c: NftCounterStmt): string {
  return `counter packets ${c.packets ?? 0n} bytes ${c.bytes ?? 0n} exceeds 2^64−1 (the kernel's 64-bit counter): kept as read, not a real count`;
}

/** Header names that start a payload expression (`ip saddr`, `th dport`). */
export const PAYLOAD_PROTOCOLS: ReadonlySet<string> = new Set([
  'ip', 'ip6', 'tcp', 'udp', 'udplite', 'sctp', 'dccp', 'th', 'ether', 'vlan', 'arp',
  'icmp', 'icmpv6', 'igmp', 'ah', 'esp', 'comp', 'gre', 'ipcomp',
]);

/** Meta keys nft accepts without the `meta` keyword (`iifname "lo"`, `mark set …`). */
export const UNQUALIFIED_META_KEYS: ReadonlySet<string> = new Set([
  'iif', 'oif', 'iifname', 'oifname', 'iiftype', 'oiftype', 'iifgroup', 'oifgroup', 'mark',
  'skuid', 'skgid', 'nftrace', 'rtclassid', 'ibrname', 'obrname', 'ibriport', 'obriport',
  'pkttype', 'cpu', 'cgroup', 'ipsec', 'iifkind', 'oifkind',
]);

/** Meta keys nft prints without `meta` (`meta_key_is_unqualified()`). */
export const PRINTED_UNQUALIFIED_META_KEYS: ReadonlySet<string> = new Set([
  'iif', 'oif', 'iifname', 'oifname', 'iifgroup', 'oifgroup',
]);

const BITMASK_TYPES: ReadonlySet<string> = new Set(['ct_state', 'ct_status', 'tcp_flag', 'ct_event']);

/** Bitmask datatypes: a bare value on the right means "any of these bits" (`in`). */
export function isBitmaskType(type: string | undefined): boolean {
  return type !== undefined && BITMASK_TYPES.has(type);
}

const PORT_FIELDS = new Set(['sport', 'dport']);
const L4_HEADERS = new Set(['tcp', 'udp', 'udplite', 'sctp', 'dccp', 'th']);

const META_TYPES: Readonly<Record<string, string>> = {
  l4proto: 'inet_proto',
  protocol: 'ether_type',
  nfproto: 'nf_proto',
  mark: 'mark',
  iifname: 'ifname',
  oifname: 'ifname',
  ibrname: 'ifname',
  obrname: 'ifname',
  iifkind: 'ifname',
  oifkind: 'ifname',
  iif: 'iface_index',
  oif: 'iface_index',
  skuid: 'uid',
  skgid: 'gid',
  pkttype: 'pkt_type',
  length: 'integer',
  random: 'integer',
  cpu: 'integer',
};

const CT_TYPES: Readonly<Record<string, string>> = {
  state: 'ct_state',
  status: 'ct_status',
  mark: 'mark',
  direction: 'ct_dir',
  'l3proto': 'nf_proto',
  protocol: 'inet_proto',
  'proto-src': 'inet_service',
  'proto-dst': 'inet_service',
  'ip saddr': 'ipv4_addr',
  'ip daddr': 'ipv4_addr',
  'ip6 saddr': 'ipv6_addr',
  'ip6 daddr': 'ipv6_addr',
  zone: 'integer',
  expiration: 'time',
  helper: 'string',
};

/**
 * The datatype nft gives an expression (`ip saddr` → `ipv4_addr`), or undefined when this
 * table does not know it. Used for `typeof` key types and for printing values.
 */
export function exprType(expr: NftExpr): string | undefined {
  switch (expr.kind) {
    case 'payload': {
      const { protocol, field } = expr;
      if (field === 'saddr' || field === 'daddr') {
        if (protocol === 'ip' || protocol === 'arp') return 'ipv4_addr';
        if (protocol === 'ip6') return 'ipv6_addr';
        if (protocol === 'ether') return 'ether_addr';
      }
      if (L4_HEADERS.has(protocol) && PORT_FIELDS.has(field)) return 'inet_service';
      if ((protocol === 'ip' && field === 'protocol') || (protocol === 'ip6' && field === 'nexthdr')) return 'inet_proto';
      if (protocol === 'ether' && field === 'type') return 'ether_type';
      if (protocol === 'tcp' && field === 'flags') return 'tcp_flag';
      return undefined;
    }
    case 'meta':
      return META_TYPES[expr.key];
    case 'ct':
      return CT_TYPES[expr.key];
    case 'fib':
      return expr.result === 'type' ? 'fib_addrtype' : expr.result === 'oifname' ? 'ifname' : 'iface_index';
    case 'numgen':
      return 'integer';
    case 'binop':
      return exprType(expr.left);
    case 'verdict':
      return 'verdict';
    default:
      return undefined;
  }
}

/** The operator a match without an explicit one has: `in` for bitmask keys, else `==`. */
export function implicitOp(left: NftExpr, right: NftExpr): '==' | 'in' {
  const type = exprType(left);
  // A set literal on the right is a lookup, not a bit test.
  return isBitmaskType(type) && right.kind !== 'set' ? 'in' : '==';
}

/** Whether values of `type` print in double quotes (interface names, strings). */
export function isQuotedType(type: string | undefined): boolean {
  return type === 'ifname' || type === 'string';
}

/**
 * How many elements of a named set nft prints per line (`calculate_delim()`): 5 for small
 * integer types, 2 for addresses and ct state, 1 for everything else (concatenations, maps).
 */
export function elementsPerLine(keyTypes: readonly string[]): number {
  if (keyTypes.length !== 1) return 1;
  const t = keyTypes[0];
  if (t === 'ipv4_addr' || t === 'ipv6_addr' || t === 'ct_state' || t === 'ct_status' || t === 'pkt_type') return 2;
  const fives = ['nf_proto', 'integer', 'arp_op', 'inet_proto', 'inet_service', 'tcp_flag', 'mark', 'iface_index', 'uid', 'gid', 'ct_dir'];
  return t !== undefined && fives.includes(t) ? 5 : 1;
}

/** The reject nft prints as a bare `reject` in this family (ip: icmp, ip6: icmpv6, others: icmpx). */
export function normalizeReject(stmt: NftRejectStmt, family: NftFamily): NftRejectStmt {
  const defaultType = family === 'ip' ? 'icmp' : family === 'ip6' ? 'icmpv6' : 'icmpx';
  if (stmt.type === defaultType && (stmt.code === undefined || stmt.code === 'port-unreachable')) {
    return { kind: 'reject' };
  }
  return stmt;
}

/** The burst nft leaves out of `limit` text: 5 for packet rates, 0 for byte rates. */
export function isDefaultBurst(unit: string, burst: number): boolean {
  return unit === 'packets' ? burst === 5 : burst === 0;
}

/** Splits a `type` text `ipv4_addr . inet_proto . inet_service` into its fields. */
export function splitConcatType(text: string): string[] {
  return text
    .split(' . ')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}
