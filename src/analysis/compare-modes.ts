/**
 * "How much does each proxy mode program for these Services?" For the Services of any
 * capture (its API objects), what kube-proxy's iptables mode, its nftables mode and
 * Cilium's kube-proxy replacement would each write — computed with the real generators
 * (src/analysis/kubeproxy-iptables.ts, kubeproxy-nftables.ts; Cilium's LB table encoded
 * with src/parsers/bpftool-lb-encode.ts), read back with nodescope's own parsers, and
 * counted — next to what the node actually has, counted the same way from the snapshot.
 *
 * Units, the same for prediction and node:
 * - iptables: `chains` = KUBE-* chains of the filter and nat tables but the canaries (the header's
 *   count too: src/analysis/proxy-mode.ts `isCountedKubeChain`), `rules` = their rules
 *   (the jumps kube-proxy adds to built-in chains are not counted), `elements` 0;
 * - nftables: chains, rules and set/map `elements` of kube-proxy's `ip`/`ip6 kube-proxy` tables;
 * - Cilium: `elements` = LB map entries (services: one master entry per frontend plus one
 *   per backend slot; backends; reverse NAT), `rules` 0, `chains` 0; `maps` per map.
 *
 * Per Service: the cost of a Service is what the generators write for the input with only
 * that Service minus what they write with none (the fixed base rules), and `names` are the
 * chains (or LB frontends) that Service alone adds. Pure.
 */
import type { LbTable } from '../model/cilium.js';
import { CILIUM_LB_MAPS, formatFrontend } from '../model/cilium.js';
import type { IptablesRuleset } from '../model/iptables.js';
import type { NftRuleset } from '../model/nftables.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import { encodeLbTable } from '../parsers/bpftool-lb-encode.js';
import { parseIptablesSave } from '../parsers/iptables-save.js';
import { parseNftText } from '../parsers/nft-text.js';
import { ciliumTableOf, kubeProxyInputOf, type CompareNote } from './compare-modes-input.js';
import { generateIptablesRestore } from './kubeproxy-iptables.js';
import { generateNftablesRules } from './kubeproxy-nftables.js';
import type { KubeProxyInput } from './lab-scenario-types.js';
import { detectProxyMode, isCountedKubeChain, type ProxyMode } from './proxy-mode.js';
import { formatServiceRef } from '../model/service-ref.js';

/** The three dataplanes compared. */
export type CompareMode = 'iptables' | 'nftables' | 'cilium';

/** Every compared mode, in display order. */
export const COMPARE_MODES: readonly CompareMode[] = ['iptables', 'nftables', 'cilium'];

/** Counts of one dataplane (see the module comment for the units). `maps`: Cilium entries per map name. */
export interface ModeCount {
  readonly chains: number;
  readonly rules: number;
  readonly elements: number;
  readonly maps: Readonly<Record<string, number>>;
}

/** What one Service costs in each mode, and the chains / LB frontends it alone adds. */
export interface ServiceCost {
  readonly service: string;
  readonly ports: number;
  readonly endpoints: number;
  readonly cost: Readonly<Record<CompareMode, ModeCount>>;
  readonly names: Readonly<Record<CompareMode, readonly string[]>>;
  /** Rules and elements it adds to chains and sets that exist without it ({@link grownIn}); empty for Cilium. */
  readonly grown: Readonly<Record<CompareMode, readonly string[]>>;
}

/** A mode the node really runs, counted from the snapshot. */
export interface ActualCount {
  readonly mode: CompareMode;
  /**
   * The IP family of the rules counted: IPv4 (`iptables-save`, `table ip kube-proxy`, Cilium's
   * maps) is compared with the prediction; IPv6 (`ip6tables-save`, `table ip6 kube-proxy`) is
   * shown beside it and never set against the IPv4 prediction (the generators write IPv4 only).
   */
  readonly family: 'ipv4' | 'ipv6';
  readonly count: ModeCount;
  /** Where it was counted: `iptables-save (nat, filter)`, `nft table ip kube-proxy`, `cilium_lb4_services_v2, …`. */
  readonly source: string;
}

/**
 * The whole comparison.
 * - `detectedMode`: what the node runs (src/analysis/proxy-mode.ts);
 * - `services` / `servicePorts` / `endpoints`: what the generators were given (programmed
 *   Services only: not headless, not ExternalName);
 * - `base`: what each mode writes with no Service at all;
 * - `predicted`: what each mode writes for all the Services;
 * - `actual`: what the node has, for each mode the snapshot holds data of;
 * - `notes`: what was inferred or left out.
 */
export interface ModeComparison {
  readonly node: string;
  readonly detectedMode: ProxyMode;
  readonly services: number;
  readonly servicePorts: number;
  readonly endpoints: number;
  readonly base: Readonly<Record<CompareMode, ModeCount>>;
  readonly predicted: Readonly<Record<CompareMode, ModeCount>>;
  readonly actual: readonly ActualCount[];
  readonly perService: readonly ServiceCost[];
  readonly notes: readonly CompareNote[];
}

const NO_MAPS: Readonly<Record<string, number>> = {};

/**
 * A mode's count with the names of its chains (or frontends) and, for iptables and nftables,
 * `sizes`: rules per chain (`nat/KUBE-SERVICES`, nft `services`) and distinct elements per
 * set or map (`@no-endpoint-services`), to say what a Service adds to what exists without it.
 */
export type NamedCount = ModeCount & { names: string[]; sizes?: ReadonlyMap<string, number> };

/** KUBE-* chains ({@link isCountedKubeChain}: nat and filter, canaries left out) and their rules. */
export function countIptables(ruleset: IptablesRuleset | null | undefined): NamedCount {
  const names: string[] = [];
  const sizes = new Map<string, number>();
  let rules = 0;
  for (const table of ruleset?.tables ?? []) {
    for (const chain of table.chains) {
      if (!isCountedKubeChain(table.name, chain.name)) continue;
      names.push(chain.name);
      sizes.set(`${table.name}/${chain.name}`, chain.rules.length);
      rules += chain.rules.length;
    }
  }
  return { chains: names.length, rules, elements: 0, maps: NO_MAPS, names, sizes };
}

/**
 * What `one` adds to the chains and sets that `base` already has: `filter/KUBE-SERVICES +1`
 * (rules), `@no-endpoint-services +1` (elements). A Service without endpoints adds no chain
 * of its own, only such rules and elements (kube-proxy's REJECT rule, its no-endpoint map entry).
 */
export function grownIn(one: NamedCount, base: NamedCount): string[] {
  const out: string[] = [];
  for (const [key, n] of one.sizes ?? []) {
    const before = base.sizes?.get(key);
    if (before !== undefined && n > before) out.push(`${key} +${n - before}`);
  }
  return out;
}

function bigintText(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? value.toString() : value;
}

/** Chains, rules and set/map elements (distinct keys) of kube-proxy's tables (`ip kube-proxy`, `ip6 kube-proxy`). */
export function countNftables(ruleset: NftRuleset | null | undefined, family?: string): NamedCount {
  const d = nftablesDetail(ruleset, family);
  return { chains: d.chains, rules: d.rules, elements: d.elements, maps: d.maps, names: d.names, sizes: d.sizes };
}

/**
 * {@link countNftables} plus the distinct element keys of every set and map (`family table set`
 * → keys); `family` (`ip`, `ip6`) counts only that family's `kube-proxy` table, else all.
 */
export function nftablesDetail(ruleset: NftRuleset | null | undefined, family?: string): NamedCount & { keys: Map<string, Set<string>> } {
  const names: string[] = [];
  const keys = new Map<string, Set<string>>();
  const sizes = new Map<string, number>();
  let rules = 0;
  let elements = 0;
  for (const table of ruleset?.tables ?? []) {
    if (table.name !== 'kube-proxy' || (family !== undefined && table.family !== family)) continue;
    for (const chain of table.chains) {
      names.push(chain.name);
      sizes.set(chain.name, (sizes.get(chain.name) ?? 0) + chain.rules.length);
      rules += chain.rules.length;
    }
    // The kernel keeps one element per key: kube-proxy adds a dual-protocol ClusterIP to `cluster-ips` twice.
    for (const set of table.sets) {
      const distinct = new Set(set.elements.map((e) => JSON.stringify(e.key, bigintText)));
      keys.set(`${table.family} ${table.name} ${set.name}`, distinct);
      sizes.set(`@${set.name}`, (sizes.get(`@${set.name}`) ?? 0) + distinct.size);
      elements += distinct.size;
    }
  }
  return { chains: names.length, rules, elements, maps: NO_MAPS, names, sizes, keys };
}

/** LB map entries of a table, per map (IPv4 and IPv6 maps), as the agent writes them. */
export function countLbTable(table: LbTable | null | undefined): ModeCount {
  const maps: Record<string, number> = {};
  const add = (name: string, n: number) => {
    if (n > 0) maps[name] = (maps[name] ?? 0) + n;
  };
  const v6 = (ip: string) => ip.includes(':');
  for (const s of table?.services ?? []) add(v6(s.frontend.ip) ? CILIUM_LB_MAPS.services6 : CILIUM_LB_MAPS.services4, 1 + s.slots.length);
  for (const b of table?.backends ?? []) add(v6(b.ip) ? CILIUM_LB_MAPS.backends6 : CILIUM_LB_MAPS.backends4, 1);
  for (const r of table?.revNats ?? []) add(v6(r.ip) ? CILIUM_LB_MAPS.revNat6 : CILIUM_LB_MAPS.revNat4, 1);
  const elements = Object.values(maps).reduce((s, n) => s + n, 0);
  return { chains: 0, rules: 0, elements, maps };
}

/** Options of the iptables generator that match a real node (no nfacct, `--random-fully`). */
const IPTABLES_OPTIONS = { nfacct: false, randomFully: true } as const;

/** Everything each mode writes for `input`, counted, with the names of chains / frontends. */
export function programmedBy(input: KubeProxyInput): Record<CompareMode, NamedCount> {
  const ipt = parseIptablesSave(generateIptablesRestore(input, IPTABLES_OPTIONS), 'kube-proxy iptables (generated)').value;
  const nft = parseNftText(generateNftablesRules(input), 'kube-proxy nftables (generated)').value;
  const table = ciliumTableOf(input);
  const encoded = encodeLbTable(table);
  const maps: Record<string, number> = {};
  for (const m of encoded) if (m.entries.length > 0) maps[m.name] = m.entries.length;
  const elements = encoded.reduce((s, m) => s + m.entries.length, 0);
  return {
    iptables: countIptables(ipt),
    nftables: countNftables(nft),
    cilium: { chains: 0, rules: 0, elements, maps, names: table.services.map((s) => `${formatFrontend(s.frontend)} (${s.type ?? '?'})`) },
  };
}

/** `a − b`, field by field (maps: per map name, zero differences left out). */
export function minus(a: ModeCount, b: ModeCount): ModeCount {
  const maps: Record<string, number> = {};
  for (const [k, v] of Object.entries(a.maps)) if (v - (b.maps[k] ?? 0) !== 0) maps[k] = v - (b.maps[k] ?? 0);
  return { chains: a.chains - b.chains, rules: a.rules - b.rules, elements: a.elements - b.elements, maps };
}

/** The counts alone of `c` (its names and keys dropped). */
export function strip(c: ModeCount & { names?: string[] }): ModeCount {
  return { chains: c.chains, rules: c.rules, elements: c.elements, maps: c.maps };
}

/** `{iptables: f('iptables'), nftables: …, cilium: …}`. */
export function perMode<T>(f: (m: CompareMode) => T): Record<CompareMode, T> {
  return { iptables: f('iptables'), nftables: f('nftables'), cilium: f('cilium') };
}

/** What the node has, for each mode the snapshot holds data of. */
export function actualCounts(snapshot: NodeSnapshot): ActualCount[] {
  const out: ActualCount[] = [];
  const ipt = countIptables(snapshot.iptables?.value);
  if (ipt.chains > 0) out.push({ mode: 'iptables', family: 'ipv4', count: strip(ipt), source: 'iptables-save: KUBE-* chains of nat and filter' });
  const nft = countNftables(snapshot.nft?.value, 'ip');
  if (nft.chains > 0) out.push({ mode: 'nftables', family: 'ipv4', count: strip(nft), source: 'nft: table ip kube-proxy' });
  const lb = snapshot.lb?.value;
  if (lb && lb.services.length > 0) out.push({ mode: 'cilium', family: 'ipv4', count: countLbTable(lb), source: `LB maps (${lb.source})` });
  const ipt6 = countIptables(snapshot.ip6tables?.value);
  if (ipt6.chains > 0) out.push({ mode: 'iptables', family: 'ipv6', count: strip(ipt6), source: 'ip6tables-save: KUBE-* chains of nat and filter' });
  const nft6 = countNftables(snapshot.nft?.value, 'ip6');
  if (nft6.chains > 0) out.push({ mode: 'nftables', family: 'ipv6', count: strip(nft6), source: 'nft: table ip6 kube-proxy' });
  return out;
}

/**
 * Compares the three modes for the snapshot's Services (its API objects), or returns
 * null when the snapshot has no API objects (nothing to generate from). `service`
 * (`ns/name`) limits `perService` to that Service.
 */
export function compareModes(snapshot: NodeSnapshot, options: { service?: string } = {}): ModeComparison | null {
  const objects = snapshot.api?.value;
  if (!objects) return null;
  const { input, notes } = kubeProxyInputOf(snapshot, objects);
  const programmed = input.services.filter((s) => s.clusterIP !== 'None');
  const empty = programmedBy({ ...input, services: [] });
  const all = programmedBy(input);
  const perService = programmed
    .filter((s) => options.service === undefined || formatServiceRef(s) === options.service)
    .map((s): ServiceCost => {
      const one = programmedBy({ ...input, services: [s] });
      return {
        service: formatServiceRef(s),
        ports: s.ports.length,
        endpoints: s.endpoints.length,
        cost: perMode((m) => minus(one[m], empty[m])),
        names: perMode((m) => one[m].names.filter((n) => !empty[m].names.includes(n))),
        grown: perMode((m) => grownIn(one[m], empty[m])),
      };
    });
  return {
    node: snapshot.meta.node,
    detectedMode: detectProxyMode(snapshot).mode,
    services: programmed.length,
    servicePorts: programmed.reduce((n, s) => n + s.ports.length, 0),
    endpoints: programmed.reduce((n, s) => n + s.endpoints.length, 0),
    base: perMode((m) => strip(empty[m])),
    predicted: perMode((m) => strip(all[m])),
    actual: actualCounts(snapshot),
    perService,
    notes,
  };
}

/** The total a mode is summarised by: rules + elements (iptables: rules; nftables: rules + elements; Cilium: map entries). */
export function modeTotal(c: ModeCount): number {
  return c.rules + c.elements;
}
