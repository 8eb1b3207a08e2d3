/**
 * The mode comparison of src/analysis/compare-modes.ts, computed per Service on demand for
 * the TUI. `compareModes` generates every Service's rules twice (once all together for the
 * totals, once alone for its own cost): ~15 s at 10,000 Services, too long for a keypress.
 * A {@link ModeComparer} instead knows at once the programmed Services (names only) and
 * the base rules; a Service's cost is generated when asked (~1–2 ms) and cached; the totals
 * come from one pass over the Services in slices ({@link ModeComparer.advance}), each
 * Service generated alone and summed — chains and rules add up, since every Service's
 * chains are its own; set/map elements and Cilium backends are counted as distinct keys,
 * as the all-Services tables hold them. Same numbers as `compareModes` (unit-tested).
 */
import { CILIUM_LB_MAPS, formatFrontend } from '../model/cilium.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import { parseIptablesSave } from '../parsers/iptables-save.js';
import { parseNftText } from '../parsers/nft-text.js';
import {
  actualCounts,
  COMPARE_MODES,
  countIptables,
  grownIn,
  countLbTable,
  minus,
  nftablesDetail,
  perMode,
  strip,
  type ActualCount,
  type CompareMode,
  type ModeCount,
  type NamedCount,
  type ServiceCost,
} from './compare-modes.js';
import { ciliumTableOf, compareContextOf, programmedClusterIP, scenarioService, type CompareContext, type CompareNote } from './compare-modes-input.js';
import { generateIptablesRestore } from './kubeproxy-iptables.js';
import { generateNftablesRules } from './kubeproxy-nftables.js';
import { isProxied } from './kubeproxy-serviceports.js';
import type { KubeProxyInput, ScenarioService } from './lab-scenario-types.js';
import { buildServiceView, type ServiceRow } from './service-view.js';
import { formatServiceRef } from '../model/service-ref.js';

/** Why a Service of the capture is (not) among the compared ones. */
export type ServiceStanding = 'programmed' | 'headless' | 'externalName' | 'ipv6-only';

/** A Service's cost without the names of what it adds (what a list row shows). */
export type ServiceCount = Omit<ServiceCost, 'names' | 'grown'>;

/** The whole-capture part of the comparison (the fields of `ModeComparison` of the same names). */
export interface CompareTotals {
  readonly services: number;
  readonly servicePorts: number;
  readonly endpoints: number;
  readonly predicted: Readonly<Record<CompareMode, ModeCount>>;
  readonly actual: readonly ActualCount[];
  readonly notes: readonly CompareNote[];
}

/** Counts, chain names and the distinct keys that do not add up across Services. */
interface Detail {
  readonly counts: Record<CompareMode, NamedCount>;
  /** nftables set/map element keys by set; Cilium backend keys by map name. */
  readonly keys: Record<'nftables' | 'cilium', Map<string, Set<string>>>;
}

const IPTABLES_OPTIONS = { nfacct: false, randomFully: true } as const;
const BACKEND_MAPS: ReadonlySet<string> = new Set([CILIUM_LB_MAPS.backends4, CILIUM_LB_MAPS.backends6]);

type Part<M extends CompareMode> = { count: NamedCount; keys?: Map<string, Set<string>>; mode: M };

/** One mode's share of {@link Detail}: what it writes for `input`, counted. */
const PARTS = {
  iptables: (input: KubeProxyInput): Part<'iptables'> => ({ mode: 'iptables', count: countIptables(parseIptablesSave(generateIptablesRestore(input, IPTABLES_OPTIONS), 'kube-proxy iptables (generated)').value) }),
  nftables: (input: KubeProxyInput): Part<'nftables'> => {
    const { keys, ...count } = nftablesDetail(parseNftText(generateNftablesRules(input), 'kube-proxy nftables (generated)').value);
    return { mode: 'nftables', count, keys };
  },
  cilium: (input: KubeProxyInput): Part<'cilium'> => {
    const table = ciliumTableOf(input);
    const keys = new Map<string, Set<string>>();
    for (const b of table.backends) {
      const map = b.ip.includes(':') ? CILIUM_LB_MAPS.backends6 : CILIUM_LB_MAPS.backends4;
      if (!keys.has(map)) keys.set(map, new Set());
      keys.get(map)!.add(`${b.ip} ${b.port} ${b.protocol}`);
    }
    return { mode: 'cilium', count: { ...countLbTable(table), names: table.services.map((s) => `${formatFrontend(s.frontend)} (${s.type ?? '?'})`) }, keys };
  },
} as const;

function detailFrom(parts: { iptables: Part<'iptables'>; nftables: Part<'nftables'>; cilium: Part<'cilium'> }): Detail {
  return {
    counts: { iptables: parts.iptables.count, nftables: parts.nftables.count, cilium: parts.cilium.count },
    keys: { nftables: parts.nftables.keys ?? new Map(), cilium: parts.cilium.keys ?? new Map() },
  };
}

/** What each mode writes for `services` in `context` (as `programmedBy`; Cilium counted from its table, which `encodeLbTable` writes entry for entry), with the keys to merge totals by. */
function detailOf(context: CompareContext, services: readonly ScenarioService[]): Detail {
  const input = { ...context, services: [...services] };
  return detailFrom({ iptables: PARTS.iptables(input), nftables: PARTS.nftables(input), cilium: PARTS.cilium(input) });
}

function mergeKeys(into: Map<string, Set<string>>, from: ReadonlyMap<string, ReadonlySet<string>>): void {
  for (const [name, keys] of from) {
    let set = into.get(name);
    if (!set) into.set(name, (set = new Set()));
    for (const k of keys) set.add(k);
  }
}

/** Sums of the per-Service passes, merged into totals when the pass ends. */
interface Accumulator {
  chains: Record<CompareMode, number>;
  rules: Record<CompareMode, number>;
  ciliumMaps: Record<string, number>;
  keys: Record<'nftables' | 'cilium', Map<string, Set<string>>>;
  services: number;
  ports: number;
  endpoints: number;
  notes: CompareNote[];
}

/** Every how many rows the pass looks at the clock. */
const CLOCK_EVERY = 4;
/** How many full costs (with names) are kept: the shown Service and a few before it. */
const FULL_KEPT = 8;

/**
 * The comparison of one snapshot, per Service on demand. Create with
 * {@link createModeComparer} (`clusterIPs[i]`: `programmedClusterIP(rows[i])`); not pure
 * (caches), never throws for any capture.
 */
export class ModeComparer {
  /** The programmed Services (`ns/name`), in the Services view's order. */
  readonly services: readonly string[];
  private readonly rows: readonly ServiceRow[];
  private readonly programmedRows: readonly ServiceRow[];
  private readonly index = new Map<string, number>();
  private readonly standing = new Map<string, ServiceStanding>();
  private baseDone: { detail: Detail; counts: Record<CompareMode, ModeCount> } | null = null;
  private readonly counts = new Map<string, ServiceCount>();
  private readonly full = new Map<string, ServiceCost>();
  private readonly clusterIPs: readonly string[];
  private shared: { context: CompareContext; notes: readonly CompareNote[] } | null = null;
  private actual: readonly ActualCount[] | null = null;
  private next = 0;
  private acc: Accumulator;
  private done: CompareTotals | null = null;

  constructor(
    private readonly snapshot: NodeSnapshot,
    rows: readonly ServiceRow[],
    clusterIPs: readonly (string | undefined)[],
  ) {
    this.rows = rows;
    const programmed: ServiceRow[] = [];
    const names: string[] = [];
    for (const [i, row] of rows.entries()) {
      const name = formatServiceRef(row);
      const ip = clusterIPs[i];
      const standing: ServiceStanding = row.type === 'ExternalName' ? 'externalName' : row.headless ? 'headless' : ip === undefined ? 'ipv6-only' : 'programmed';
      if (!this.standing.has(name)) this.standing.set(name, standing);
      if (standing !== 'programmed' || this.index.has(name)) continue;
      this.index.set(name, names.length);
      names.push(name);
      programmed.push(row);
    }
    this.services = names;
    this.programmedRows = programmed;
    this.clusterIPs = clusterIPs.filter((ip): ip is string => ip !== undefined);
    const zero = perMode(() => 0);
    this.acc = { chains: { ...zero }, rules: { ...zero }, ciliumMaps: {}, keys: { nftables: new Map(), cilium: new Map() }, services: 0, ports: 0, endpoints: 0, notes: [] };
  }

  /** Whether the base rules are generated yet: until then a cost takes ~10–40 ms more (first generation and parse of the process). */
  get ready(): boolean {
    return this.baseDone !== null;
  }

  /** What each mode writes with no Service at all (generated on first use). */
  get base(): Readonly<Record<CompareMode, ModeCount>> {
    return this.baseOnce().counts;
  }

  /** What every Service's rules share (computed on first use: it reads the node's rules). */
  private get context(): CompareContext {
    return this.sharedOnce().context;
  }

  private sharedOnce(): { context: CompareContext; notes: readonly CompareNote[] } {
    this.shared ??= compareContextOf(this.snapshot, this.snapshot.api!.value!, this.clusterIPs);
    return this.shared;
  }

  private get baseDetail(): Detail {
    return this.baseOnce().detail;
  }

  /**
   * One step towards {@link ready}: the shared context, then each mode's base rules, one
   * per call — the first generation and parse of the process run cold code (tens of ms
   * each), so the totals pass takes them one slice at a time. True once ready.
   */
  warmUp(): boolean {
    if (this.baseDone) return true;
    if (!this.shared) {
      this.sharedOnce();
      return false;
    }
    const input = { ...this.context, services: [] };
    for (const m of COMPARE_MODES) {
      if (this.baseParts[m]) continue;
      (this.baseParts as Record<CompareMode, unknown>)[m] = PARTS[m](input);
      return m === 'cilium' ? (this.baseOnce(), true) : false;
    }
    this.baseOnce();
    return true;
  }

  private readonly baseParts: { iptables?: Part<'iptables'>; nftables?: Part<'nftables'>; cilium?: Part<'cilium'> } = {};

  private baseOnce(): { detail: Detail; counts: Record<CompareMode, ModeCount> } {
    if (!this.baseDone) {
      const input = { ...this.context, services: [] };
      const p = this.baseParts;
      const detail = detailFrom({ iptables: p.iptables ?? PARTS.iptables(input), nftables: p.nftables ?? PARTS.nftables(input), cilium: p.cilium ?? PARTS.cilium(input) });
      this.baseDone = { detail, counts: perMode((m) => strip(detail.counts[m])) };
      mergeKeys(this.acc.keys.nftables, detail.keys.nftables);
    }
    return this.baseDone;
  }

  /** The node the snapshot is of. */
  get node(): string {
    return this.snapshot.meta.node;
  }

  /** Where `service` is in {@link services}, or -1. */
  indexOf(service: string): number {
    return this.index.get(service) ?? -1;
  }

  /** Whether `service` is compared, and if not why; undefined for a Service not in the capture. */
  standingOf(service: string): ServiceStanding | undefined {
    return this.standing.get(service);
  }

  /** `service`'s cost if already computed (by {@link costOf} or the totals pass), else undefined. */
  countOf(service: string): ServiceCount | undefined {
    return this.counts.get(service);
  }

  /** `service`'s cost with the names of what it adds, computed now if needed (~1–2 ms); null when not programmed. */
  costOf(service: string): ServiceCost | null {
    const kept = this.full.get(service);
    if (kept) return kept;
    const row = this.programmedRows[this.indexOf(service)];
    const scenario = row ? scenarioService(row, []) : null;
    if (!scenario || !isProxied(scenario)) return null;
    const cost = this.costFrom(service, scenario, detailOf(this.context, [scenario]));
    if (this.full.size >= FULL_KEPT) this.full.delete(this.full.keys().next().value!);
    this.full.set(service, cost);
    return cost;
  }

  /** Computes the costs of `services` not known yet, until `deadline` (ms, `performance.now()`). */
  prefetch(services: readonly string[], deadline: number): void {
    for (const s of services) {
      if (performance.now() >= deadline) return;
      if (!this.counts.has(s)) this.costOf(s);
    }
  }

  /** Rows of the totals pass done, of all (every Service of the capture, programmed or not). */
  progress(): { readonly done: number; readonly total: number } {
    return { done: this.next, total: this.rows.length };
  }

  /** The totals once the pass is over, else null (see {@link advance}). */
  totals(): CompareTotals | null {
    return this.done;
  }

  /**
   * Runs the totals pass until it ends or `budgetMs` has passed (checked every few
   * Services, so a slice overruns by at most a few ms); true when the totals are ready.
   */
  advance(budgetMs: number): boolean {
    if (this.done) return true;
    const deadline = performance.now() + budgetMs;
    if (this.actual === null) {
      this.actual = actualCounts(this.snapshot);
      if (performance.now() >= deadline) return false;
    }
    while (this.next < this.rows.length) {
      this.step(this.rows[this.next]!);
      this.next++;
      if (this.next % CLOCK_EVERY === 0 && performance.now() >= deadline) return false;
    }
    this.done = this.finish();
    return true;
  }

  /** Runs the totals pass to its end (the command line, tests) and returns the totals. */
  runToEnd(): CompareTotals {
    while (!this.advance(1000));
    return this.done!;
  }

  private costFrom(service: string, scenario: ScenarioService, detail: Detail): ServiceCost {
    const base = this.baseDetail.counts;
    const cost: ServiceCost = {
      service,
      ports: scenario.ports.length,
      endpoints: scenario.endpoints.length,
      cost: perMode((m) => minus(detail.counts[m], base[m])),
      names: perMode((m) => detail.counts[m].names.filter((n) => !base[m].names.includes(n))),
      grown: perMode((m) => grownIn(detail.counts[m], base[m])),
    };
    if (!this.counts.has(service)) this.counts.set(service, { service, ports: cost.ports, endpoints: cost.endpoints, cost: cost.cost });
    return cost;
  }

  private step(row: ServiceRow): void {
    const acc = this.acc;
    const scenario = scenarioService(row, acc.notes);
    if (!scenario || !isProxied(scenario)) return;
    const name = formatServiceRef(row);
    // A name listed twice is counted once, as the Services view's first row (see the constructor).
    if (this.programmedRows[this.indexOf(name)] !== row) return;
    const detail = detailOf(this.context, [scenario]);
    const cost = this.costFrom(name, scenario, detail).cost;
    for (const m of COMPARE_MODES) {
      acc.chains[m] += cost[m].chains;
      acc.rules[m] += cost[m].rules;
    }
    for (const [map, n] of Object.entries(detail.counts.cilium.maps)) if (!BACKEND_MAPS.has(map)) acc.ciliumMaps[map] = (acc.ciliumMaps[map] ?? 0) + n;
    mergeKeys(acc.keys.nftables, detail.keys.nftables);
    mergeKeys(acc.keys.cilium, detail.keys.cilium);
    acc.services++;
    acc.ports += scenario.ports.length;
    acc.endpoints += scenario.endpoints.length;
  }

  private finish(): CompareTotals {
    const acc = this.acc;
    const base = this.base;
    let nftElements = 0;
    for (const keys of acc.keys.nftables.values()) nftElements += keys.size;
    const maps: Record<string, number> = { ...acc.ciliumMaps };
    for (const [map, keys] of acc.keys.cilium) if (keys.size > 0) maps[map] = keys.size;
    const ciliumElements = Object.values(maps).reduce((s, n) => s + n, 0);
    const predicted: Record<CompareMode, ModeCount> = {
      iptables: { ...base.iptables, chains: base.iptables.chains + acc.chains.iptables, rules: base.iptables.rules + acc.rules.iptables },
      nftables: { ...base.nftables, chains: base.nftables.chains + acc.chains.nftables, rules: base.nftables.rules + acc.rules.nftables, elements: nftElements },
      cilium: { chains: base.cilium.chains + acc.chains.cilium, rules: base.cilium.rules + acc.rules.cilium, elements: ciliumElements, maps },
    };
    // The pass is over: its keys are not needed any more.
    this.acc = { ...acc, keys: { nftables: new Map(), cilium: new Map() } };
    return { services: acc.services, servicePorts: acc.ports, endpoints: acc.endpoints, predicted, actual: this.actual ?? [], notes: [...acc.notes, ...this.sharedOnce().notes] };
  }
}

/**
 * The comparer of `snapshot`'s Services, or null when it has no API objects. Builds the
 * Services view (cached per API objects) and reads each row's ClusterIP: a few ms at
 * 10,000 Services; the shared context and the rules wait for {@link ModeComparer.base}.
 */
export function createModeComparer(snapshot: NodeSnapshot): ModeComparer | null {
  const objects = snapshot.api?.value;
  if (!objects) return null;
  const rows = buildServiceView(objects, { nodeName: snapshot.meta.node }).rows;
  return new ModeComparer(snapshot, rows, rows.map(programmedClusterIP));
}
