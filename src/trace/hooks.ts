/**
 * Hook order as the kernel runs it: for each netfilter hook, every base chain of every
 * table registered there (iptables tables of both backends, nft tables of every family
 * that sees the packet) and the kernel's own stations (conntrack, NAT, confirmation),
 * ordered by priority, lower first.
 *
 * Sources: include/uapi/linux/netfilter_ipv4.h `enum nf_ip_hook_priorities` (and the
 * same values in netfilter_ipv6.h), net/ipv4/netfilter/iptable_{raw,mangle,nat,filter,
 * security}.c (legacy tables register at those priorities), iptables/nft.c
 * `xtables_ipv4` builtin table (iptables-nft registers the same priorities),
 * net/netfilter/nf_nat_proto.c `nf_nat_ipv4_ops` and net/netfilter/nf_nat_core.c
 * `nf_nat_inet_fn` (all nat-type chains of a hook run inside the NAT station at
 * NF_IP_PRI_NAT_DST/SRC, in their own priority order, until one sets up a binding).
 */
import type { IptablesChain, IptablesRuleset, IptablesTableName, NetfilterHook } from '../model/iptables.js';
import { chainHook, isIptablesTableName } from '../model/iptables.js';
import type { NftBaseChain, NftChain, NftChainType, NftFamily, NftRuleset, NftTable } from '../model/nftables.js';
import type { TraceInput } from './input.js';
import type { PacketFamily } from './packet.js';

/** A kernel step that is not a chain: conntrack lookup, NAT, conntrack confirmation. */
export type StationKind = 'conntrack-in' | 'nat' | 'confirm';

/** One row of the kernel's own hook table: a station, its hook and priority, and why. */
export interface KernelStationRow {
  readonly station: StationKind;
  readonly hook: NetfilterHook;
  readonly priority: number;
  readonly reason: string;
}

/** INT_MAX: NF_IP_PRI_CONNTRACK_CONFIRM, the last thing on input and postrouting. */
export const PRI_LAST = 2147483647;

/** The kernel stations, as data (a row per station and hook). */
export const KERNEL_STATIONS: readonly KernelStationRow[] = [
  { station: 'conntrack-in', hook: 'prerouting', priority: -200, reason: 'nf_conntrack_in at NF_IP_PRI_CONNTRACK (-200): finds the flow of the packet in the conntrack table, or starts a NEW one' },
  { station: 'nat', hook: 'prerouting', priority: -100, reason: 'nf_nat_ipv4_pre_routing at NF_IP_PRI_NAT_DST (-100): runs the nat chains of a NEW flow until one sets up DNAT, else applies the flow\'s stored destination NAT' },
  { station: 'nat', hook: 'input', priority: 100, reason: 'nf_nat_ipv4_local_in at NF_IP_PRI_NAT_SRC (100): source NAT for packets delivered to this host' },
  { station: 'confirm', hook: 'input', priority: PRI_LAST, reason: 'nf_conntrack_confirm at NF_IP_PRI_CONNTRACK_CONFIRM (INT_MAX): a NEW flow enters the conntrack table once the packet is accepted' },
  { station: 'conntrack-in', hook: 'output', priority: -200, reason: 'nf_conntrack_in at NF_IP_PRI_CONNTRACK (-200): locally generated packets are tracked too' },
  { station: 'nat', hook: 'output', priority: -100, reason: 'nf_nat_ipv4_local_fn at NF_IP_PRI_NAT_DST (-100): destination NAT for locally generated packets, then a new route if the destination changed' },
  { station: 'nat', hook: 'postrouting', priority: 100, reason: 'nf_nat_ipv4_out at NF_IP_PRI_NAT_SRC (100): source NAT (SNAT, MASQUERADE) of a NEW flow, else the flow\'s stored source NAT' },
  { station: 'confirm', hook: 'postrouting', priority: PRI_LAST, reason: 'nf_conntrack_confirm at NF_IP_PRI_CONNTRACK_CONFIRM (INT_MAX): a NEW flow enters the conntrack table as the packet leaves' },
];

/** Where an iptables table's built-in chains hook in: chain type and priority per hook. */
export interface IptablesPlacement {
  readonly table: IptablesTableName;
  readonly priority: Readonly<Partial<Record<NetfilterHook, number>>>;
  readonly type: Readonly<Partial<Record<NetfilterHook, NftChainType>>>;
  readonly reason: string;
}

/** The iptables tables as the kernel (legacy) and iptables-nft register them. */
export const IPTABLES_PLACEMENT: Readonly<Record<IptablesTableName, IptablesPlacement>> = {
  raw: {
    table: 'raw',
    priority: { prerouting: -300, output: -300 },
    type: { prerouting: 'filter', output: 'filter' },
    reason: 'NF_IP_PRI_RAW (-300): before conntrack, so NOTRACK/CT can act first (iptable_raw.c)',
  },
  mangle: {
    table: 'mangle',
    priority: { prerouting: -150, input: -150, forward: -150, output: -150, postrouting: -150 },
    type: { prerouting: 'filter', input: 'filter', forward: 'filter', output: 'route', postrouting: 'filter' },
    reason: 'NF_IP_PRI_MANGLE (-150); OUTPUT is a route chain: a changed mark or address re-routes (iptable_mangle.c)',
  },
  nat: {
    table: 'nat',
    priority: { prerouting: -100, output: -100, input: 100, postrouting: 100 },
    type: { prerouting: 'nat', output: 'nat', input: 'nat', postrouting: 'nat' },
    reason: 'NF_IP_PRI_NAT_DST (-100) on prerouting/output, NF_IP_PRI_NAT_SRC (100) on input/postrouting (iptable_nat.c)',
  },
  filter: {
    table: 'filter',
    priority: { input: 0, forward: 0, output: 0 },
    type: { input: 'filter', forward: 'filter', output: 'filter' },
    reason: 'NF_IP_PRI_FILTER (0) (iptable_filter.c)',
  },
  security: {
    table: 'security',
    priority: { input: 50, forward: 50, output: 50 },
    type: { input: 'filter', forward: 'filter', output: 'filter' },
    reason: 'NF_IP_PRI_SECURITY (50): after filter, for SELinux labels (iptable_security.c)',
  },
};

/** A path through the hooks: which hooks a packet meets in order, and why. */
export interface PacketPathRow {
  readonly path: 'local-in' | 'forward' | 'local-out';
  readonly hooks: readonly NetfilterHook[];
  readonly reason: string;
}

/** The three IPv4/IPv6 paths (net/ipv4/ip_input.c, ip_forward.c, ip_output.c). */
export const PACKET_PATHS: readonly PacketPathRow[] = [
  { path: 'local-in', hooks: ['prerouting', 'input'], reason: 'ip_rcv → PREROUTING → routing decision says local (RTN_LOCAL) → ip_local_deliver → INPUT → socket' },
  { path: 'forward', hooks: ['prerouting', 'forward', 'postrouting'], reason: 'ip_rcv → PREROUTING → routing decision says unicast elsewhere → ip_forward → FORWARD → ip_output → POSTROUTING → device' },
  { path: 'local-out', hooks: ['output', 'postrouting'], reason: 'a local socket → routing decision (output route) → OUTPUT → re-route if NAT/mangle changed the packet → POSTROUTING → device' },
];

/** A chain registered at a hook, from iptables or nft. */
export type HookedChainItem =
  | {
      readonly kind: 'iptables';
      readonly ruleset: IptablesRuleset;
      readonly table: IptablesTableName;
      readonly chain: IptablesChain;
      readonly family: 'ip' | 'ip6';
      readonly priority: number;
      readonly type: NftChainType;
      /** The same chain as nft lists it (iptables-nft), for rule handles. */
      readonly nftChain: NftChain | null;
    }
  | {
      readonly kind: 'nft';
      readonly table: NftTable;
      readonly chain: NftChain;
      readonly base: NftBaseChain;
      readonly priority: number;
      readonly type: NftChainType;
    };

/** One thing the packet meets at a hook: a chain, or a kernel station. */
export type HookItem = HookedChainItem | { readonly kind: 'station'; readonly station: StationKind; readonly priority: number; readonly reason: string };

/**
 * What runs at one hook: `items` in order (chains that are not nat chains, and the
 * stations); `natChains`: the nat-type chains the NAT station runs, in priority order;
 * `skippedNftTables`: nft tables left out because iptables-nft manages them (evaluated
 * through the iptables model instead).
 */
export interface HookPlan {
  readonly hook: NetfilterHook;
  readonly items: readonly HookItem[];
  readonly natChains: readonly HookedChainItem[];
  readonly skippedNftTables: readonly string[];
}

/** nft families whose base chains see an IPv4 / IPv6 packet on the IP hooks. */
const NFT_FAMILIES_OF: Readonly<Record<PacketFamily, readonly NftFamily[]>> = { ipv4: ['ip', 'inet'], ipv6: ['ip6', 'inet'] };

/** True when the iptables ruleset may be iptables-nft (tagged nf_tables, or no header to tell). */
function mayBeNfTables(ruleset: IptablesRuleset): boolean {
  return ruleset.generator === null || ruleset.generator.backend === 'nf_tables';
}

function rulesetFamily(ruleset: IptablesRuleset): PacketFamily {
  return ruleset.family === 'ipv6' ? 'ipv6' : 'ipv4';
}

/**
 * The nft table iptables-nft keeps for `table` of `ruleset`: same family (ip/ip6), same
 * name, and every user chain of the iptables table present in it. Built-in chains may be
 * missing: iptables-nft registers a base chain only once it is used, while
 * iptables-nft-save prints every built-in chain of a table. Null for legacy dumps.
 */
export function iptablesNftTwin(ruleset: IptablesRuleset, table: IptablesTableName, nft: NftRuleset | undefined): NftTable | null {
  if (!nft || !mayBeNfTables(ruleset)) return null;
  const fam: NftFamily = rulesetFamily(ruleset) === 'ipv6' ? 'ip6' : 'ip';
  const twin = nft.tables.find((t) => t.family === fam && t.name === table);
  if (!twin) return null;
  const tbl = ruleset.tables.find((t) => t.name === table);
  if (!tbl) return null;
  const names = new Set(twin.chains.map((c) => c.name));
  return tbl.chains.every((c) => c.builtin || names.has(c.name)) ? twin : null;
}

const planCache = new WeakMap<TraceInput, Map<string, HookPlan>>();

function stationItems(hook: NetfilterHook): HookItem[] {
  return KERNEL_STATIONS.filter((s) => s.hook === hook).map((s) => ({ kind: 'station' as const, station: s.station, priority: s.priority, reason: s.reason }));
}

/**
 * The plan of `hook` for a packet of `family` on the node of `input` (see {@link HookPlan}).
 * Ties in priority keep this order: kernel stations, iptables chains, nft chains (in
 * ruleset order) — the kernel's order for equal priorities is registration order, which
 * no capture records. Cached per input object.
 */
export function hookPlan(input: TraceInput, hook: NetfilterHook, family: PacketFamily): HookPlan {
  let perInput = planCache.get(input);
  if (!perInput) {
    perInput = new Map();
    planCache.set(input, perInput);
  }
  const key = `${hook}/${family}`;
  const cached = perInput.get(key);
  if (cached) return cached;

  const chains: HookedChainItem[] = [];
  const covered = new Set<NftTable>();
  for (const ruleset of input.iptables ?? []) {
    if (rulesetFamily(ruleset) !== family) continue;
    for (const tbl of ruleset.tables) {
      if (!isIptablesTableName(tbl.name)) continue;
      const placement = IPTABLES_PLACEMENT[tbl.name];
      const twin = iptablesNftTwin(ruleset, tbl.name, input.nft);
      if (twin) covered.add(twin);
      for (const chain of tbl.chains) {
        if (!chain.builtin || chainHook(chain.name) !== hook) continue;
        const nftChain = twin?.chains.find((c) => c.name === chain.name) ?? null;
        if (twin && !nftChain?.base) continue; // printed by iptables-nft-save, but not registered in the kernel
        const priority = nftChain?.base?.priority ?? placement.priority[hook];
        const type = nftChain?.base?.type ?? placement.type[hook];
        if (priority === undefined || type === undefined) continue; // a chain this table does not have at this hook
        chains.push({ kind: 'iptables', ruleset, table: tbl.name, chain, family: family === 'ipv6' ? 'ip6' : 'ip', priority, type, nftChain });
      }
    }
  }
  const skippedNftTables: string[] = [];
  for (const table of input.nft?.tables ?? []) {
    if (!NFT_FAMILIES_OF[family].includes(table.family)) continue;
    if (covered.has(table)) {
      skippedNftTables.push(`${table.family} ${table.name}`);
      continue;
    }
    if (table.flags?.includes('dormant')) continue;
    for (const chain of table.chains) {
      const base = chain.base;
      if (!base || base.hook !== hook) continue;
      chains.push({ kind: 'nft', table, chain, base, priority: base.priority, type: base.type });
    }
  }
  const byPriority = (a: { priority: number }, b: { priority: number }) => a.priority - b.priority;
  const natChains = chains.filter((c) => c.type === 'nat').sort(byPriority);
  const items: HookItem[] = [...stationItems(hook), ...chains.filter((c) => c.type !== 'nat')].sort(byPriority);
  // Without a nat chain the NAT station still applies a known flow's stored NAT.
  const plan: HookPlan = { hook, items, natChains, skippedNftTables };
  perInput.set(key, plan);
  return plan;
}
