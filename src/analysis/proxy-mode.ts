/**
 * Which Service dataplane a node runs, with the evidence a reader can check:
 * kube-proxy iptables (nf_tables or legacy backend, or both holding rules),
 * kube-proxy nftables, IPVS, Cilium kube-proxy replacement, or none. Pure.
 */
import { CILIUM_LB_MAPS, type LbTable } from '../model/cilium.js';
import type { IptablesRuleset } from '../model/iptables.js';
import type { NodeSnapshot } from '../model/snapshot.js';

/** The detected mode. `iptables-mixed`: KUBE- chains in both iptables backends. */
export type ProxyMode = 'iptables' | 'iptables-legacy' | 'iptables-mixed' | 'nftables' | 'ipvs' | 'cilium' | 'none' | 'unknown';

/**
 * What Cilium's services maps (`cilium_lb{4,6}_services_v2`) hold: one master entry
 * (backend slot 0) per frontend plus one entry per backend slot, so `frontends +
 * backendSlots` is the maps' entry count. `maps`: the map names holding them, by family.
 */
export interface CiliumServicesCount {
  readonly maps: readonly string[];
  readonly frontends: number;
  readonly backendSlots: number;
}

/**
 * One fact behind the detected mode, as data, so each reader words it: {@link modeFactText}
 * in English (reports, `evidence`), src/text/i18n.ts `mode.fact.*` per UI language.
 * - `kubeProxyTable`: nftables table `ip kube-proxy` exists;
 * - `kubeChains`: KUBE- chains (not kubelet's own) in one iptables backend;
 * - `ipvs`: IPVS virtual servers, and whether the `kube-ipvs0` dummy interface exists;
 * - `ciliumKpr`: Cilium replaces kube-proxy (no KUBE- chains);
 * - `ciliumServices`: the services maps' content ({@link CiliumServicesCount});
 * - `ciliumChains`: CILIUM_ chains in iptables;
 * - `noProxy`: rules were read but no dataplane was found; `noRules`: no rules were read.
 */
export type ModeFact =
  | { readonly kind: 'kubeProxyTable' }
  | { readonly kind: 'kubeChains'; readonly ruleset: 'iptables' | 'iptables-legacy'; readonly backend: string | null; readonly chains: number }
  | { readonly kind: 'ipvs'; readonly virtualServers: number; readonly kubeIpvs0: boolean }
  | { readonly kind: 'ciliumKpr' }
  | ({ readonly kind: 'ciliumServices' } & CiliumServicesCount)
  | { readonly kind: 'ciliumChains'; readonly chains: number }
  | { readonly kind: 'noProxy' }
  | { readonly kind: 'noRules' };

/** A mode and why: each fact is read from the snapshot; `evidence` is their English text, in order. */
export interface ProxyModeResult {
  readonly mode: ProxyMode;
  readonly facts: readonly ModeFact[];
  readonly evidence: readonly string[];
}

/** `iptables (nf_tables)`, `iptables-legacy`: the ruleset a `kubeChains` fact is about. */
export function kubeChainsRuleset(f: Extract<ModeFact, { kind: 'kubeChains' }>): string {
  return `${f.ruleset}${f.backend ? ` (${f.backend})` : ''}`;
}

/** One fact in English, e.g. `cilium_lb4_services_v2: 7 frontends + 14 backend slots = 21 entries`. */
export function modeFactText(f: ModeFact): string {
  switch (f.kind) {
    case 'kubeProxyTable':
      return 'nftables: table ip kube-proxy present';
    case 'kubeChains':
      return `${kubeChainsRuleset(f)}: ${f.chains} KUBE- chains`;
    case 'ipvs':
      return `IPVS: ${f.virtualServers} virtual servers${f.kubeIpvs0 ? ', kube-ipvs0 present' : ''}`;
    case 'ciliumKpr':
      return 'Cilium KPR: 0 KUBE- chains';
    case 'ciliumServices':
      return `${f.maps.join(' + ')}: ${f.frontends} frontends + ${f.backendSlots} backend slots = ${f.frontends + f.backendSlots} entries`;
    case 'ciliumChains':
      return `iptables: ${f.chains} CILIUM_ chains`;
    case 'noProxy':
      return 'no KUBE- chains, no kube-proxy table, no Cilium LB maps';
    case 'noRules':
      return 'no netfilter rules were read';
  }
}

/**
 * KUBE- chains that exist whatever the Service proxy is: kubelet's canary and
 * firewall chains, and the hint chain iptables-wrapper reads. They say nothing about
 * kube-proxy's mode (a Cilium node has them too).
 */
export const NON_PROXY_KUBE_CHAINS: ReadonlySet<string> = new Set(['KUBE-KUBELET-CANARY', 'KUBE-FIREWALL', 'KUBE-IPTABLES-HINT', 'KUBE-MARK-DROP', 'KUBE-PROXY-CANARY']);

/**
 * Counts chains whose name starts with `prefix` across all tables of a ruleset,
 * leaving out {@link NON_PROXY_KUBE_CHAINS}.
 */
export function countChains(ruleset: IptablesRuleset | null | undefined, prefix: string): number {
  if (!ruleset) return 0;
  let n = 0;
  for (const t of ruleset.tables) for (const c of t.chains) if (c.name.startsWith(prefix) && !NON_PROXY_KUBE_CHAINS.has(c.name)) n++;
  return n;
}

/** Extra facts from parts other modules parse (nftables tables, Cilium maps, interfaces). */
export interface ModeHints {
  /** Names of nftables tables as `family name`, e.g. `ip kube-proxy`. */
  readonly nftTables?: readonly string[];
  /** What Cilium's lb4+lb6 services maps hold, when read. */
  readonly ciliumServices?: CiliumServicesCount | null;
  /** Interface names on the node (kube-ipvs0, cilium_host, …). */
  readonly interfaces?: readonly string[];
}

/** Frontends and backend slots of an LB table, and the services maps (by family) that hold them. */
export function ciliumServicesCount(lb: LbTable): CiliumServicesCount {
  const families = new Set(lb.services.map((svc) => (svc.frontend.ip.includes(':') ? 6 : 4)));
  const maps = [...(families.has(4) ? [CILIUM_LB_MAPS.services4] : []), ...(families.has(6) ? [CILIUM_LB_MAPS.services6] : [])];
  return { maps, frontends: lb.services.length, backendSlots: lb.services.reduce((n, svc) => n + svc.slots.length, 0) };
}

/** The hints a snapshot itself carries: its nftables tables and interface names. */
export function snapshotHints(snapshot: NodeSnapshot): ModeHints {
  const nft = snapshot.nft?.value;
  const addrs = snapshot.addrs?.value;
  const lb = snapshot.lb?.value;
  return {
    ...(lb ? { ciliumServices: ciliumServicesCount(lb) } : {}),
    ...(nft ? { nftTables: nft.tables.map((t) => `${t.family} ${t.name}`) } : {}),
    ...(addrs ? { interfaces: addrs.map((i) => i.ifname) } : {}),
  };
}

/**
 * Detects the mode from the snapshot (plus `extra` hints, e.g. Cilium map entry
 * counts). Order matters: a node mid-migration can show several; the evidence lists them all.
 */
export function detectProxyMode(snapshot: NodeSnapshot, extra: ModeHints = {}): ProxyModeResult {
  const hints: ModeHints = { ...snapshotHints(snapshot), ...extra };
  const nftKube = countChains(snapshot.iptables?.value, 'KUBE-');
  const legacyKube = countChains(snapshot.iptablesLegacy?.value, 'KUBE-');
  const ciliumChains = countChains(snapshot.iptables?.value, 'CILIUM_');
  const backend = snapshot.iptables?.value?.generator?.backend ?? null;
  const kubeProxyTable = hints.nftTables?.some((t) => /^(ip|ip6|inet) kube-proxy$/.test(t)) ?? false;
  const ipvsServers = snapshot.ipvs?.value?.virtualServers.length ?? 0;
  const hasIpvsIface = hints.interfaces?.includes('kube-ipvs0') ?? false;
  const cilium = hints.ciliumServices && hints.ciliumServices.frontends > 0 ? hints.ciliumServices : null;
  const facts: ModeFact[] = [];

  if (kubeProxyTable) facts.push({ kind: 'kubeProxyTable' });
  if (nftKube > 0) facts.push({ kind: 'kubeChains', ruleset: 'iptables', backend, chains: nftKube });
  if (legacyKube > 0) facts.push({ kind: 'kubeChains', ruleset: 'iptables-legacy', backend: null, chains: legacyKube });
  if (hasIpvsIface || ipvsServers > 0) facts.push({ kind: 'ipvs', virtualServers: ipvsServers, kubeIpvs0: hasIpvsIface });
  if (cilium) facts.push({ kind: 'ciliumServices', ...cilium });
  if (ciliumChains > 0) facts.push({ kind: 'ciliumChains', chains: ciliumChains });

  let mode: ProxyMode;
  if (hasIpvsIface && ipvsServers > 0) mode = 'ipvs';
  else if (kubeProxyTable) mode = 'nftables';
  else if (nftKube > 0 && legacyKube > 0) mode = 'iptables-mixed';
  else if (nftKube > 0) mode = backend === 'legacy' ? 'iptables-legacy' : 'iptables';
  else if (legacyKube > 0) mode = 'iptables-legacy';
  else if (cilium || ciliumChains > 0) {
    mode = 'cilium';
    facts.unshift({ kind: 'ciliumKpr' });
  } else if (snapshot.iptables?.value || hints.nftTables) {
    mode = 'none';
    facts.push({ kind: 'noProxy' });
  } else {
    mode = 'unknown';
    facts.push({ kind: 'noRules' });
  }
  return { mode, facts, evidence: facts.map(modeFactText) };
}
