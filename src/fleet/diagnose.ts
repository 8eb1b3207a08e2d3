/**
 * `nodescope fleet diagnose DIR`: every node's per-Service diagnosis folded into a
 * Service × node matrix. Streams: one node's snapshot is read, diagnosed and dropped
 * before the next (what stays is each node's non-ok cells and, per Service, the nodes
 * grouped by their programmed backend set).
 *
 * Per Service, a node is named when its programmed backend set differs from the API's
 * (stale endpoints still programmed, current ones missing) or from the set most nodes
 * programmed (the majority; none on a tie), with the endpoints named.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ciliumFreshness, kubeProxyFreshness, type ProxyFreshness } from '../analysis/proxy-freshness.js';
import { parseCiliumAgentFacts } from '../parsers/cilium-controllers.js';
import { parseCiliumStateDbTables } from '../parsers/cilium-statedb.js';
import { loadSnapshot } from '../collect/load-snapshot.js';
import type { ApiObjects } from '../model/k8s.js';
import { parseK8sObjects } from '../parsers/k8s-objects.js';
import { parsePrometheusText } from '../parsers/prometheus-text.js';
import { bundleFilePath } from '../sources/bundle.js';
import { ReplayTransport } from '../sources/replay.js';
import { fleetApiPath, readFleetManifest, type FleetManifest } from './bundle.js';
import { VERDICTS } from '../analysis/diagnose/index.js';
import { diagnoseNode, worse, type DiagnoseNode, type Finding, type NodeDiagnosis, type NodeRules, type Verdict } from './node-diagnosis.js';
import { nodeFactsOf, rulesKey, type DigestMemo } from './node-key.js';
import { counterFreeLine } from './rules-digest.js';
import { partProbes } from '../collect/build-snapshot.js';
import { buildSnapshotLoading } from '../collect/load-snapshot.js';
import { firstStageIds, partStageIds, planOf, runPlanned } from '../collect/planned-runs.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import { runProbes } from '../sources/probe-runner.js';

/**
 * A node's overall status: the worst verdict of its Services where the node itself is at
 * fault ({@link FleetCell.ownFault}; a Service without endpoints is broken on every node
 * alike and does not make a node bad), or `failed` when it was not captured.
 */
export type FleetNodeStatus = Verdict | 'failed';

/** One node of the result. `reason`: why it failed (capture or read). */
export interface FleetNodeResult {
  readonly name: string;
  readonly status: FleetNodeStatus;
  readonly mode: string | null;
  readonly reason?: string;
  readonly freshness?: ProxyFreshness;
}

/**
 * One matrix cell. `ownFault`: some finding is about this node's own layers (dataplane,
 * conntrack, DNS) rather than the API objects every node reads alike (api, endpoints).
 */
export interface FleetCell {
  readonly verdict: Verdict;
  readonly findings: readonly Finding[];
  readonly ownFault: boolean;
}

/** Layers every node reads alike: a finding there is the cluster's, not one node's. */
const SHARED_LAYERS: ReadonlySet<string> = new Set(['api', 'endpoints']);

/** Whether a cell's findings name something of the node itself (not only the API's). */
export function ownFault(findings: readonly Finding[]): boolean {
  return findings.some((f) => !SHARED_LAYERS.has(f.layer) && f.severity !== 'info');
}

/** A node whose programmed backend set differs from the API's or the majority's. */
export interface BackendDivergence {
  readonly node: string;
  readonly programmed: readonly string[];
  readonly differsFromApi: boolean;
  readonly differsFromMajority: boolean;
  /** Programmed but not in the API (`ip:port`). */
  readonly stale: readonly string[];
  /** In the API but not programmed. */
  readonly missing: readonly string[];
}

/**
 * One matrix row: a Service with at least one non-ok node. `nodes` holds a cell for every
 * captured node. `scope`: `nodes` when some node's own layers are at fault, `api` when
 * every non-ok cell is so for the API objects alone (the same on every node).
 */
export interface FleetServiceRow {
  readonly namespace: string;
  readonly name: string;
  readonly verdict: Verdict;
  readonly scope: 'nodes' | 'api';
  readonly nodes: Readonly<Record<string, FleetCell>>;
  /** The backend set most nodes programmed (null: no majority). */
  readonly majority: readonly string[] | null;
  readonly divergent: readonly BackendDivergence[];
}

/** The whole fleet diagnosis. Counts: nodes per status. */
export interface FleetDiagnosis {
  readonly capturedAt: string;
  readonly cluster?: string;
  readonly nodes: readonly FleetNodeResult[];
  readonly services: readonly FleetServiceRow[];
  readonly counts: Readonly<Record<FleetNodeStatus, number>>;
}

/**
 * Options of {@link diagnoseFleet}. `onNode` is told after each node (progress; `reused`: its
 * rules diagnosis was another node's). `reuse`
 * (default true): a node whose rules diagnosis has the key of one made before
 * (src/fleet/node-key.ts) reuses it; false diagnoses every node whole (the equivalence test).
 */
export interface FleetDiagnoseOptions {
  readonly diagnose: DiagnoseNode;
  readonly onNode?: (name: string, index: number, total: number, reused: boolean) => void;
  readonly reuse?: boolean;
}

/** Rules diagnoses kept for reuse (each holds a whole expectation: a few). */
const RULES_KEPT = 4;

/** Per Service while streaming: its non-ok cells, and nodes grouped by programmed set. */
interface Accumulator {
  readonly namespace: string;
  readonly name: string;
  readonly cells: Map<string, FleetCell>;
  readonly bySet: Map<string, string[]>;
  /** Each node's expected set key (it depends on the node for internalTrafficPolicy Local). */
  readonly expected: Map<string, string>;
}

/** Between the members of a set key (a member may hold spaces: `backend 17 (not in the backend map)`). */
const SEP = '\n';
/** Set keys by array: a reused rules diagnosis hands every node the same arrays. */
const keys = new WeakMap<readonly string[], string>();
function keyOf(xs: readonly string[]): string {
  let k = keys.get(xs);
  if (k === undefined) keys.set(xs, (k = xs.join(SEP)));
  return k;
}
const setOf = (key: string) => (key === '' ? [] : key.split(SEP));

/** A probe's stdout in a node bundle, or why it cannot be read (`reason`: the probe's status and last stderr line). */
function probeOutput(dir: string, manifest: ReplayTransport['bundle']['manifest'], id: string, what: string): { text: string; startedAt: string } | { reason: string } {
  const probe = manifest.probes.find((p) => p.id === id);
  if (!probe) return { reason: `the capture did not read ${id}` };
  if (probe.status !== 'ok') {
    const file = bundleFilePath(dir, probe.stderrFile, 'stderrFile');
    const err = file ? readFileSync(file, 'utf8').trim().split('\n').at(-1) ?? '' : '';
    return { reason: `${what} not readable (${probe.status}${err ? `: ${err}` : ''})` };
  }
  const file = bundleFilePath(dir, probe.stdoutFile, 'stdoutFile');
  return { text: file ? readFileSync(file, 'utf8') : '', startedAt: probe.startedAt };
}

/** The node's kube-proxy freshness from its bundle's `kube-proxy-metrics` output. */
export function bundleFreshness(dir: string, manifest: ReplayTransport['bundle']['manifest']): ProxyFreshness {
  const out = probeOutput(dir, manifest, 'kube-proxy-metrics', "kube-proxy's metrics were");
  if ('reason' in out) return { source: 'unknown', reason: out.reason };
  return kubeProxyFreshness(parsePrometheusText(out.text, `${dir}/probes/kube-proxy-metrics`).value, Date.parse(out.startedAt));
}

/**
 * A Cilium node's freshness from its bundle: `cilium-status` (`cilium-dbg status --verbose`)
 * and `cilium-statedb-frontends` (the StateDB frontends table; Cilium 1.17+), each read or
 * said why not (an agent without the table answers with an error: that reason is kept).
 */
export function bundleCiliumFreshness(dir: string, manifest: ReplayTransport['bundle']['manifest']): ProxyFreshness {
  const status = probeOutput(dir, manifest, 'cilium-status', 'cilium-dbg status was');
  const frontends = probeOutput(dir, manifest, 'cilium-statedb-frontends', "the agent's StateDB frontends were");
  const rows = 'reason' in frontends ? frontends.reason : parseCiliumStateDbTables(frontends.text, `${dir}/probes/cilium-statedb-frontends`).value.frontends;
  const agent = 'reason' in status ? status.reason : parseCiliumAgentFacts(status.text, `${dir}/probes/cilium-status`).value;
  return ciliumFreshness(agent, typeof rows !== 'string' && rows.length === 0 ? 'the StateDB frontends table was empty or not understood' : rows);
}

/** The API objects of a fleet bundle (DIR/api.json), parsed once; null when it has none. */
export function fleetApi(dir: string): ApiObjects | null {
  try {
    return parseK8sObjects(readFileSync(fleetApiPath(dir), 'utf8'), fleetApiPath(dir)).value;
  } catch {
    return null;
  }
}

/**
 * A node's snapshot of its cheap probes and conntrack table (no ruleset parsed): what
 * {@link rulesKey} and `finish` read. The capture's probe plan is kept, as a whole load keeps it.
 */
async function lightSnapshot(transport: ReplayTransport): Promise<NodeSnapshot> {
  const first = await runProbes(transport, { ids: firstStageIds() });
  const conntrack = partProbes().conntrack.filter((id) => partStageIds().includes(id));
  const planned = await runPlanned(transport, planOf(transport, first), conntrack);
  const runs = [...first, ...planned.runs];
  const capturedAt = runs.filter((r) => !r.result.notCaptured).map((r) => r.result.startedAt).sort()[0] ?? transport.bundle.manifest.capturedAt;
  return buildSnapshotLoading({ runs, recordedNode: transport.bundle.manifest.node, source: { kind: transport.kind, label: transport.label, live: false }, capturedAt, skipped: planned.plan.skipped });
}

/** Rules diagnoses by {@link rulesKey}, the most recently used last; a few at most (memory). */
class RulesCache {
  private readonly entries = new Map<string, NodeRules>();
  constructor(private readonly size: number) {}
  get(key: string): NodeRules | undefined {
    const hit = this.entries.get(key);
    if (hit) {
      this.entries.delete(key);
      this.entries.set(key, hit);
    }
    return hit;
  }
  set(key: string, value: NodeRules): void {
    if (this.entries.size >= this.size) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, value);
  }
}

/** What stays from node to node while a fleet is diagnosed. */
interface FleetRun {
  readonly api: ApiObjects;
  readonly options: FleetDiagnoseOptions;
  readonly acc: Map<string, Accumulator>;
  readonly facts: (name: string) => string;
  readonly cache: RulesCache | null;
  readonly memo: DigestMemo;
  /** Whether the last node's rules diagnosis was reused. */
  reused: boolean;
}

/** A finding as a fleet cell keeps it: evidence without traffic counters (they differ from node to node). */
function cellFinding(f: Finding): Finding {
  return f.evidence.some((e) => e.text !== undefined) ? { ...f, evidence: f.evidence.map((e) => (e.text === undefined ? e : { ...e, text: counterFreeLine(e.text) })) } : f;
}

/** The node's diagnosis: its rules diagnosis reused when a node with the same key had one. */
async function nodeDiagnosis(transport: ReplayTransport, nodeDir: string, name: string, run: FleetRun): Promise<NodeDiagnosis> {
  const { diagnose } = run.options;
  if (run.cache === null) {
    const { snapshot } = await loadSnapshot({ transport, live: false });
    return diagnoseNode(diagnose, snapshot, run.api, { node: name });
  }
  const light = await lightSnapshot(transport);
  const key = rulesKey(nodeDir, transport.bundle.manifest, light, run.api, run.facts, name, run.memo);
  let rules = run.cache.get(key);
  run.reused = rules !== undefined;
  if (!rules) {
    const { snapshot } = await loadSnapshot({ transport, live: false });
    rules = diagnose.rules(snapshot, run.api, { node: name });
    run.cache.set(key, rules);
  }
  return diagnose.finish(rules, light, run.api);
}

/** Diagnoses one node into the accumulators; returns its result. */
async function diagnoseOne(dir: string, entry: FleetManifest['nodes'][number], run: FleetRun): Promise<FleetNodeResult> {
  if (entry.status === 'failed') return { name: entry.name, status: 'failed', mode: null, reason: entry.reason ?? 'not captured' };
  const nodeDir = path.join(dir, entry.dir);
  let transport: ReplayTransport;
  try {
    transport = new ReplayTransport(nodeDir);
  } catch (e) {
    return { name: entry.name, status: 'failed', mode: null, reason: `its bundle cannot be read: ${(e as Error).message}` };
  }
  const result = await nodeDiagnosis(transport, nodeDir, entry.name, run);
  let status: Verdict = 'ok';
  for (const s of result.services) {
    let a = run.acc.get(s.key);
    if (!a) run.acc.set(s.key, (a = { namespace: s.namespace, name: s.name, cells: new Map(), bySet: new Map(), expected: new Map() }));
    const own = ownFault(s.findings);
    if (own) status = worse(status, s.verdict);
    if (s.verdict !== 'ok') a.cells.set(entry.name, { verdict: s.verdict, findings: s.findings.map(cellFinding), ownFault: own });
    if (s.backends) {
      const k = keyOf(s.backends);
      const nodes = a.bySet.get(k);
      if (nodes) nodes.push(entry.name);
      else a.bySet.set(k, [entry.name]);
      a.expected.set(entry.name, keyOf(s.expected));
    }
  }
  const freshness = result.mode === 'cilium' ? bundleCiliumFreshness(nodeDir, transport.bundle.manifest) : bundleFreshness(nodeDir, transport.bundle.manifest);
  return { name: entry.name, status, mode: result.mode, freshness };
}

/** The set most nodes programmed; null on a tie or when none was read. */
function majorityOf(bySet: Map<string, string[]>): string | null {
  let best: string | null = null;
  let count = 0;
  let tie = false;
  for (const [k, nodes] of bySet) {
    if (nodes.length > count) [best, count, tie] = [k, nodes.length, false];
    else if (nodes.length === count) tie = true;
  }
  return tie ? null : best;
}

/** The row of one Service (null when every captured node is ok and agrees). */
function rowOf(a: Accumulator, captured: readonly string[]): FleetServiceRow | null {
  const majority = majorityOf(a.bySet);
  const divergent: BackendDivergence[] = [];
  for (const [k, nodes] of a.bySet) {
    for (const node of nodes) {
      const expected = a.expected.get(node) ?? '';
      const differsFromApi = k !== expected;
      const differsFromMajority = majority !== null && k !== majority;
      if (!differsFromApi && !differsFromMajority) continue;
      const have = setOf(k);
      const want = new Set(setOf(expected));
      const got = new Set(have);
      divergent.push({ node, programmed: have, differsFromApi, differsFromMajority, stale: have.filter((e) => !want.has(e)), missing: [...want].filter((e) => !got.has(e)) });
    }
  }
  if (a.cells.size === 0 && divergent.length === 0) return null;
  const nodes: Record<string, FleetCell> = {};
  let verdict: Verdict = 'ok';
  for (const n of captured) {
    const cell = a.cells.get(n) ?? { verdict: 'ok' as const, findings: [], ownFault: false };
    nodes[n] = cell;
    verdict = worse(verdict, cell.verdict);
  }
  divergent.sort((x, y) => (x.node < y.node ? -1 : 1));
  const scope = divergent.length > 0 || [...a.cells.values()].some((c) => c.ownFault) ? 'nodes' : 'api';
  return { namespace: a.namespace, name: a.name, verdict, scope, nodes, majority: majority === null ? null : setOf(majority), divergent };
}

/**
 * Diagnoses the fleet bundle in `dir`, one node at a time. Throws what
 * {@link readFleetManifest} throws; a node whose bundle cannot be read is `failed` with why.
 * Without API objects every node is `unknown` (nothing to compare with).
 */
export async function diagnoseFleet(dir: string, options: FleetDiagnoseOptions): Promise<FleetDiagnosis> {
  const manifest = readFleetManifest(dir);
  const api = fleetApi(dir);
  const acc = new Map<string, Accumulator>();
  const objects = api ?? EMPTY_API;
  const run: FleetRun = { api: objects, options, acc, facts: nodeFactsOf(objects), cache: options.reuse === false ? null : new RulesCache(RULES_KEPT), memo: new Map(), reused: false };
  const nodes: FleetNodeResult[] = [];
  for (const [i, entry] of manifest.nodes.entries()) {
    if (api === null && entry.status === 'ok') nodes.push({ name: entry.name, status: 'unknown', mode: null, reason: 'the fleet bundle has no API objects (api.json) to compare with' });
    else nodes.push(await diagnoseOne(dir, entry, run));
    options.onNode?.(entry.name, i, manifest.nodes.length, run.reused);
    run.reused = false;
  }
  const captured = nodes.filter((n) => n.status !== 'failed').map((n) => n.name);
  const rank = (v: Verdict) => -VERDICTS.indexOf(v);
  const services = [...acc.values()].map((a) => rowOf(a, captured)).filter((r): r is FleetServiceRow => r !== null);
  services.sort((x, y) => (x.scope === y.scope ? 0 : x.scope === 'nodes' ? -1 : 1) || rank(x.verdict) - rank(y.verdict) || `${x.namespace}/${x.name}`.localeCompare(`${y.namespace}/${y.name}`));
  const counts: Record<FleetNodeStatus, number> = { ok: 0, unknown: 0, degraded: 0, broken: 0, failed: 0 };
  for (const n of nodes) counts[n.status]++;
  return { capturedAt: manifest.capturedAt, ...(manifest.cluster ? { cluster: manifest.cluster } : {}), nodes, services, counts };
}

const EMPTY_API: ApiObjects = { services: [], endpointSlices: [], pods: [], nodes: [], others: [], serviceCIDRs: [], ipAddresses: [] };
