/**
 * Which Service dataplane a node runs, with the evidence a reader can check:
 * kube-proxy iptables (nf_tables or legacy backend, or both holding rules),
 * kube-proxy nftables, IPVS, Cilium kube-proxy replacement, or none. Pure.
 */
import type { IptablesRuleset } from '../model/iptables.js';
import type { NodeSnapshot } from '../model/snapshot.js';

/** The detected mode. `iptables-mixed`: KUBE- chains in both iptables backends. */
export type ProxyMode = 'iptables' | 'iptables-legacy' | 'iptables-mixed' | 'nftables' | 'ipvs' | 'cilium' | 'none' | 'unknown';

/** A mode and why: each evidence line is a fact read from the snapshot. */
export interface ProxyModeResult {
  readonly mode: ProxyMode;
  readonly evidence: readonly string[];
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
  /** Number of entries in Cilium's lb4+lb6 service maps, when read. */
  readonly ciliumServiceEntries?: number | null;
  /** Interface names on the node (kube-ipvs0, cilium_host, …). */
  readonly interfaces?: readonly string[];
}

/** The hints a snapshot itself carries: its nftables tables and interface names. */
export function snapshotHints(snapshot: NodeSnapshot): ModeHints {
  const nft = snapshot.nft?.value;
  const addrs = snapshot.addrs?.value;
  const lb = snapshot.lb?.value;
  return {
    // One entry per frontend (slot 0) plus one per backend slot, as the map holds them.
    ...(lb ? { ciliumServiceEntries: lb.services.reduce((n, svc) => n + 1 + svc.slots.length, 0) } : {}),
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
  const evidence: string[] = [];
  const nftKube = countChains(snapshot.iptables?.value, 'KUBE-');
  const legacyKube = countChains(snapshot.iptablesLegacy?.value, 'KUBE-');
  const ciliumChains = countChains(snapshot.iptables?.value, 'CILIUM_');
  const backend = snapshot.iptables?.value?.generator?.backend ?? null;
  const kubeProxyTable = hints.nftTables?.some((t) => /^(ip|ip6|inet) kube-proxy$/.test(t)) ?? false;
  const ipvsServers = snapshot.ipvs?.value?.virtualServers.length ?? 0;
  const hasIpvsIface = hints.interfaces?.includes('kube-ipvs0') ?? false;
  const ciliumEntries = hints.ciliumServiceEntries ?? null;

  if (kubeProxyTable) evidence.push('nftables: table ip kube-proxy present');
  if (nftKube > 0) evidence.push(`iptables${backend ? ` (${backend})` : ''}: ${nftKube} KUBE- chains`);
  if (legacyKube > 0) evidence.push(`iptables-legacy: ${legacyKube} KUBE- chains`);
  if (hasIpvsIface || ipvsServers > 0) evidence.push(`IPVS: ${ipvsServers} virtual servers${hasIpvsIface ? ', kube-ipvs0 present' : ''}`);
  if (ciliumEntries !== null && ciliumEntries > 0) evidence.push(`Cilium: lb services map has ${ciliumEntries} entries`);
  if (ciliumChains > 0) evidence.push(`iptables: ${ciliumChains} CILIUM_ chains`);

  let mode: ProxyMode;
  if (hasIpvsIface && ipvsServers > 0) mode = 'ipvs';
  else if (kubeProxyTable) mode = 'nftables';
  else if (nftKube > 0 && legacyKube > 0) mode = 'iptables-mixed';
  else if (nftKube > 0) mode = backend === 'legacy' ? 'iptables-legacy' : 'iptables';
  else if (legacyKube > 0) mode = 'iptables-legacy';
  else if ((ciliumEntries ?? 0) > 0 || ciliumChains > 0) {
    mode = 'cilium';
    // The KPR line below already says how full the map is.
    const dup = evidence.findIndex((e) => e.startsWith('Cilium: lb services map'));
    if (dup >= 0) evidence.splice(dup, 1);
    evidence.unshift(`Cilium KPR: 0 KUBE- chains${ciliumEntries !== null ? `, lb services map has ${ciliumEntries} entries` : ''}`);
  } else if (snapshot.iptables?.value || hints.nftTables) {
    mode = 'none';
    evidence.push('no KUBE- chains, no kube-proxy table, no Cilium LB maps');
  } else {
    mode = 'unknown';
    evidence.push('no netfilter rules were read');
  }
  return { mode, evidence };
}
