/**
 * The mode a staged load can name before the LB maps are dumped: Cilium, from the names
 * pinned in its tc globals directory (the `bpf-pinned` probe, read with the light probes)
 * once the rulesets are parsed. Issue 23 item 1: detect the mode from cheap probes first.
 * It is a claim on indirect evidence (the maps' content is not read yet), so the header words
 * it as such (`cilium? (LB maps pinned; reading them…)`) until {@link detectProxyMode} has
 * the dumps. Pure.
 */
import { isPending, type NodeSnapshot, type SnapshotPart } from '../model/snapshot.js';
import { detectProxyMode } from './proxy-mode.js';

/** The early reading: the mode and the pinned Cilium LB maps it stands on. */
export interface EarlyMode {
  readonly mode: 'cilium';
  readonly pinned: readonly string[];
}

/** The parts {@link detectProxyMode} reads KUBE- and CILIUM_ chains and kube-proxy's tables from. */
const RULES_PARTS: readonly SnapshotPart[] = ['iptables', 'iptablesLegacy', 'nft'];

/**
 * `cilium` when everything {@link detectProxyMode} reads but the LB maps' content is known and
 * leaves Cilium as the only reading: `pinned` (src/collect/probe-plan.ts `pinnedCiliumLbMaps`)
 * names a Cilium LB map; the rulesets are parsed, none failed (a part with an error could hide
 * KUBE- chains); the interfaces were read and hold no `kube-ipvs0` (IPVS would win once
 * `ipvsadm` is read); and the detection, given that the pinned services maps hold a frontend,
 * says `cilium` (no kube-proxy table, no live KUBE- chain, no KUBE- ipset match). What is left
 * unread is the maps' content: empty maps and no CILIUM_ chain would make it `none`, which is
 * why it is only ever shown as a question. Null whenever it cannot decide, and once the LB
 * part is parsed (the full detection speaks then).
 */
export function earlyProxyMode(snapshot: NodeSnapshot | null, pinned: readonly string[] | null | undefined): EarlyMode | null {
  if (!snapshot || !pinned || pinned.length === 0 || !isPending(snapshot, 'lb')) return null;
  for (const part of RULES_PARTS) if (isPending(snapshot, part) || snapshot[part]?.error) return null;
  const interfaces = snapshot.addrs?.value?.map((i) => i.ifname);
  if (!interfaces || interfaces.includes('kube-ipvs0')) return null;
  const ifFrontend = detectProxyMode(snapshot, { ciliumServices: { maps: [], frontends: 1, backendSlots: 0 } });
  return ifFrontend.mode === 'cilium' && ifFrontend.unconfirmed === null ? { mode: 'cilium', pinned } : null;
}
