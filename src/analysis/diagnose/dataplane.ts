/**
 * Which dataplane a node's Services are compared against, and its frontends read once:
 * kube-proxy's iptables rules (and ip6tables for IPv6), its `ip`/`ip6 kube-proxy` tables, or Cilium's lb4/lb6 maps, as the detected proxy
 * mode says; plus the rules another mode left behind (kubernetes#102314, #88698) and, on an
 * iptables node, the iptables-legacy rules beside the iptables-nft ones. When the part the
 * mode needs was not read (probe failed, still loading) or the mode is one not compared
 * (IPVS), `problem` says so and every Service is `unknown`. Pure.
 */
import type { NodeSnapshot, Parsed } from '../../model/snapshot.js';
import { detectProxyMode, type ProxyMode } from '../proxy-mode.js';
import { indexFrontends, type FrontendIndex, type ProgrammedFrontend } from './frontends.js';
import { readCiliumFrontends } from './read-cilium.js';
import { readIptablesFrontends } from './read-iptables.js';
import { readNftFrontends } from './read-nftables.js';
import { said, sayIn, type Said } from './say.js';

/** The dataplane a node is compared against. */
export type DiagnosedDataplane = 'iptables' | 'nftables' | 'cilium';

/** The node's frontends as read, and what else is there. */
export interface NodeDataplane {
  readonly mode: ProxyMode;
  readonly dataplane: DiagnosedDataplane | null;
  /** Why the dataplane cannot be compared (null when it can), in English and as said. */
  readonly problem: string | null;
  readonly problemSaid: Said | null;
  readonly frontends: FrontendIndex;
  /** Frontends of another mode's rules left on the node, with the mode they belong to. */
  readonly leftovers: readonly { readonly mode: DiagnosedDataplane; readonly frontend: ProgrammedFrontend }[];
  /** On an iptables node with both backends holding rules: the iptables-legacy frontends. */
  readonly legacy: FrontendIndex | null;
  /** Why the IPv6 frontends cannot be compared (ip6tables-save not read), else null. */
  readonly v6Problem: string | null;
  readonly v6ProblemSaid: Said | null;
}

/** IPv6 frontends of kube-proxy's IPv6 proxier: a NodePort on every IPv6 node address is keyed `[::]:port`. */
function asV6(frontends: readonly ProgrammedFrontend[]): ProgrammedFrontend[] {
  return frontends.map((f) => (f.kind === 'nodePort' && f.ip === '*' ? { ...f, ip: '::' } : f));
}

/** The IPv6 frontends of the mode's second family (ip6tables-save, `ip6 kube-proxy`), and why not when they cannot be read. */
function readV6(snapshot: NodeSnapshot, dataplane: DiagnosedDataplane | null, mode: ProxyMode): { frontends: ProgrammedFrontend[]; problem: Said | null } {
  if (dataplane === 'nftables' && snapshot.nft?.value) return { frontends: asV6(readNftFrontends(snapshot.nft.value, 'ip6')), problem: null };
  if (dataplane !== 'iptables' || mode === 'iptables-legacy') return { frontends: [], problem: null };
  const problem = notRead(snapshot.ip6tables, 'ip6tables-save', snapshot.pending?.includes('ip6tables') ?? false);
  return problem === null ? { frontends: asV6(readIptablesFrontends(snapshot.ip6tables!.value!, 'ip6tables')), problem: null } : { frontends: [], problem };
}

const EMPTY: FrontendIndex = { byKey: new Map(), duplicates: [] };

function notRead<T>(part: Parsed<T> | null | undefined, name: string, pending: boolean): Said | null {
  if (pending) return said('dg.dp.pending', { part: name });
  if (!part) return said('dg.dp.notRead', { part: name });
  if (part.value === null) return said('dg.dp.failed', { part: name, error: part.error ?? part.probe?.status ?? 'no output' });
  return null;
}

function dataplaneOf(mode: ProxyMode): DiagnosedDataplane | null {
  if (mode === 'iptables' || mode === 'iptables-legacy' || mode === 'iptables-mixed') return 'iptables';
  if (mode === 'nftables') return 'nftables';
  if (mode === 'cilium') return 'cilium';
  return null;
}

/** Reads the node's dataplane once for the whole diagnosis (see the module comment). */
export function readNodeDataplane(snapshot: NodeSnapshot): NodeDataplane {
  const mode = detectProxyMode(snapshot).mode;
  const dataplane = dataplaneOf(mode);
  const pending = (p: string) => snapshot.pending?.includes(p as never) ?? false;
  const ipt = mode === 'iptables-legacy' ? snapshot.iptablesLegacy : snapshot.iptables;
  let problem: Said | null = null;
  let frontends: ProgrammedFrontend[] = [];
  if (dataplane === null) problem = mode === 'ipvs' ? said('dg.dp.ipvs') : said('dg.dp.none', { mode });
  else if (dataplane === 'iptables') problem = notRead(ipt, 'iptables-save', pending(mode === 'iptables-legacy' ? 'iptablesLegacy' : 'iptables'));
  else if (dataplane === 'nftables') problem = notRead(snapshot.nft, 'the nftables ruleset', pending('nft'));
  else problem = notRead(snapshot.lb, "Cilium's LB maps", pending('lb'));
  if (problem === null) {
    if (dataplane === 'iptables') frontends = readIptablesFrontends(ipt!.value!, mode === 'iptables-legacy' ? 'iptables-legacy' : 'iptables');
    else if (dataplane === 'nftables') frontends = readNftFrontends(snapshot.nft!.value!);
    else if (dataplane === 'cilium') frontends = readCiliumFrontends(snapshot.lb!.value!);
  }
  if (problem === null && snapshot.lb?.value?.unreadable?.length && dataplane === 'cilium') {
    problem = said('dg.dp.lbUnreadable', { entries: snapshot.lb.value.unreadable.map((u) => `${u.map} (${u.entries})`).join(', ') });
  }
  const leftovers: { mode: DiagnosedDataplane; frontend: ProgrammedFrontend }[] = [];
  if (dataplane !== 'iptables' && snapshot.iptables?.value) for (const f of readIptablesFrontends(snapshot.iptables.value)) leftovers.push({ mode: 'iptables', frontend: f });
  if (dataplane !== 'iptables' && snapshot.iptablesLegacy?.value) for (const f of readIptablesFrontends(snapshot.iptablesLegacy.value, 'iptables-legacy')) leftovers.push({ mode: 'iptables', frontend: f });
  if (dataplane !== 'nftables' && snapshot.nft?.value) for (const f of readNftFrontends(snapshot.nft.value)) leftovers.push({ mode: 'nftables', frontend: f });
  let legacy: FrontendIndex | null = null;
  if (dataplane === 'iptables' && mode !== 'iptables-legacy' && snapshot.iptablesLegacy?.value) {
    const l = readIptablesFrontends(snapshot.iptablesLegacy.value, 'iptables-legacy');
    if (l.length > 0) legacy = indexFrontends(l);
  }
  const v6 = problem === null ? readV6(snapshot, dataplane, mode) : { frontends: [], problem: null };
  return { mode, dataplane, problem: problem === null ? null : sayIn(problem, 'en'), problemSaid: problem, frontends: problem === null ? indexFrontends([...frontends, ...v6.frontends]) : EMPTY, leftovers, legacy, v6Problem: v6.problem === null ? null : sayIn(v6.problem, 'en'), v6ProblemSaid: v6.problem };
}
