/**
 * One read of a node into one snapshot ({@link loadSnapshot}: what `show`, `trace`, `diagnose`
 * and the fleet's per-node read call) and the snapshot build's input from a session's options
 * ({@link inputOf}, also the live `Session`'s). Apart from session.ts so that a one-shot
 * command does not load the session's refresh, rates and DNS code; a live node's parse beside
 * the dumps (beside-dumps.ts) and `show services`' cheap evidence (evidence-load.ts) are
 * imported only by the reads that use them.
 */
import { buildSnapshot, partProbes, type SnapshotInput } from './build-snapshot.js';
import { isParsedRun, loadParsers } from './parts.js';
import type { NodeSnapshot, SnapshotPart, SnapshotSource } from '../model/snapshot.js';
import { catalog } from '../sources/catalog.js';
import type { ApiFeed } from '../sources/cluster-api.js';
import { runProbes, type ProbeRun } from '../sources/probe-runner.js';
import { firstStageIds, partStageIds, planOf, runPlanned } from './planned-runs.js';
import type { BesideApi } from './beside-dumps.js';
import type { EarlyParses } from './early-parse.js';
import type { ProbePlan } from './probe-plan.js';
import { onDemandProbeIds } from './session-probes.js';
import { ReplayTransport } from '../sources/replay.js';
import type { Transport } from '../sources/transport.js';

/** Options of session.ts's `Session` (and of {@link loadSnapshot}). `intervalMs`: live counter refresh period (default: sources/refresh-interval.ts `DEFAULT_INTERVAL_MS`). */
export interface SessionOptions {
  readonly transport: Transport;
  readonly apiText?: string;
  readonly apiOrigin?: string;
  /** `-n NAMESPACE`: keep only this namespace's API objects (and the cluster-scoped ones), whatever the source. */
  readonly apiNamespace?: string;
  readonly live: boolean;
  readonly intervalMs?: number;
  readonly params?: Readonly<Record<string, string | undefined>>;
  readonly now?: () => number;
  /** Live API objects (cluster list/watch): used instead of `apiText`; a watch update rebuilds the snapshot. */
  readonly api?: ApiFeed;
  /** Runs the `where: cilium-agent` probes (exec into the Cilium agent pod), when the source found one. */
  readonly ciliumAgent?: Transport;
  /**
   * On-demand probes (commands/probes.yaml `onDemand`) to read with the others, e.g.
   * `conntrack-events` for `show conntrack --events` (bounded by the probe's timeout).
   * A replay also reads the on-demand part probes its bundle holds.
   */
  readonly onDemand?: readonly string[];
  /** `--cluster-domain` for the DNS pane's questions; default: what the node shows (readClusterDomain). */
  readonly clusterDomain?: string;
  /** `--probe`: heavy probes to read even when the probe plan (src/collect/probe-plan.ts) would skip them. */
  readonly probes?: readonly string[];
  /** A full read at least every this many refreshes while a chain is open (default: refresh-cost.ts `FULL_READ_EVERY`). */
  readonly fullReadEvery?: number;
}

/**
 * Runs the node's probes once by the probe plan (the light ones, then the heavy dumps the
 * node's mode needs: src/collect/planned-runs.ts) and builds a snapshot; `runs` in catalog
 * order, `plan` says what was skipped; `lazyRules`: see `SnapshotInput.lazyRules`. Throws
 * only if the transport itself breaks.
 */
export async function loadSnapshot(options: SessionOptions & { readonly parts?: readonly SnapshotPart[]; readonly lazyRules?: boolean; readonly apiFor?: 'rules' }): Promise<{ snapshot: NodeSnapshot; runs: ProbeRun[]; plan: ProbePlan }> {
  const params = options.params ? { params: options.params } : {};
  const firstRuns = await runProbes(options.transport, { ...params, ids: firstStageIds() });
  // `parts`: only these parts' probes are read (`show services`: none; the mode from cheap evidence).
  const wanted = options.parts ? new Set(options.parts.flatMap((part) => partProbes()[part])) : null;
  const ids = [...partStageIds(), ...onDemandProbeIds(options)].filter((id) => !wanted || wanted.has(id));
  const plan = planOf(options.transport, firstRuns, options.probes);
  // A live load parses while the dumps run (beside-dumps.ts); a replay reads its files as before.
  // `parts` (a reader of the LB table's counts alone, `show rules`): the LB dumps are tallied, not decoded, and the runs outlive the snapshot (the table is decoded from them on first read).
  // `apiFor: 'rules'` (`show rules`, nothing else reads the snapshot): only what it reads of the API objects is parsed (early-parse.ts `earlyApi`).
  const rulesOnly = options.apiFor === 'rules';
  const planned: Awaited<ReturnType<typeof runPlanned>> & { early?: EarlyParses } = options.transport instanceof ReplayTransport ? { ...(await runPlanned(options.transport, plan, ids, params)), ...(await replayEarly(options, rulesOnly)) } : await (await import('./beside-dumps.js')).runPlannedBeside(options.transport, plan, ids, params, apiOf(options), options.parts !== undefined, rulesOnly);
  const order = new Map(catalog().probes.map((p, i) => [p.id, i]));
  const runs = [...firstRuns, ...planned.runs].sort((a, b) => (order.get(a.id) ?? 0) - (order.get(b.id) ?? 0));
  if (options.ciliumAgent && (!wanted || partProbes().lb.some((id) => wanted.has(id)))) runs.push(...(await runProbes(options.ciliumAgent, { ...params, where: 'cilium-agent' })));
  const cheap = options.parts !== undefined && !options.parts.includes('iptables');
  // A replay's evidence scan starts (on a worker) before the API objects parse; a live node's evidence is read after, as before.
  const evidenceLoad = cheap ? await import('./evidence-load.js') : undefined;
  const replayEvidence = evidenceLoad && options.transport instanceof ReplayTransport ? await evidenceLoad.startCheapEvidence(options.transport, firstRuns, options.params ?? {}) : undefined;
  const snapshot = await buildSnapshotLoading(inputOf(options, runs, { skipped: planned.plan.skipped, ...(options.lazyRules ? { lazyRules: true } : {}), ...(options.parts ? { lazyLb: true } : {}), ...(planned.early ? { early: planned.early } : {}) }));
  if (!evidenceLoad) return { snapshot, runs, plan: planned.plan };
  const evidence = replayEvidence ? await replayEvidence() : await evidenceLoad.cheapEvidence(options.transport, firstRuns, options.params ?? {});
  const nftTableNames = snapshot.nftTableNames ?? evidence.nftTableNames ?? undefined;
  return { snapshot: { ...snapshot, chainSummaries: evidence.chainSummaries, ...(nftTableNames ? { nftTableNames } : {}) }, runs, plan: planned.plan };
}

/** A replay's early parses: the LB tallies' map when `parts` is given, `show rules`' API objects (`rulesOnly`, from `apiText`). */
async function replayEarly(options: SessionOptions & { readonly parts?: readonly SnapshotPart[] }, rulesOnly: boolean): Promise<{ early?: EarlyParses }> {
  const api = rulesOnly && !options.api && options.apiText !== undefined ? (await import('./early-parse.js')).earlyApi(options.apiText, options.apiOrigin ?? 'api.json', true) : undefined;
  if (!options.parts && !api) return {};
  return { early: { ...(options.parts ? { lbTallies: new WeakMap() } : {}), ...(api ? { api } : {}) } };
}

/** The API objects' text and origin the snapshot build reads (the feed's current text, else `apiText`). */
function apiOf(options: SessionOptions): BesideApi {
  return options.api ? { text: options.api.text(), origin: options.api.origin } : { text: options.apiText, origin: options.apiOrigin ?? 'api.json' };
}

/** The snapshot build's input from the session's options and `runs` (`extra`: a refresh's cache/reuse, the probe plan's skips, lazy rules, early parses). */
export function inputOf(options: SessionOptions, runs: readonly ProbeRun[], extra: Pick<SnapshotInput, 'cache' | 'reuse' | 'skipped' | 'lazyRules' | 'lazyLb' | 'early'> = {}): SnapshotInput {
  // A probe a replay's bundle does not hold carries the manifest's time, not a run's: left out,
  // so a load that asks for it (one-shot) and one that does not (staged) agree.
  const first = runs.filter((r) => !r.result.notCaptured).map((r) => r.result.startedAt).sort()[0];
  const feed = options.api;
  const apiText = feed ? (feed.textWaits ? undefined : feed.text()) : options.apiText;
  const apiOrigin = feed ? feed.origin : options.apiOrigin;
  return {
    runs,
    ...(apiText !== undefined ? { apiText } : feed?.textWaits ? { apiTextLater: () => feed.text() } : {}),
    ...(apiOrigin ? { apiOrigin } : {}),
    ...(options.apiNamespace !== undefined ? { apiNamespace: options.apiNamespace } : {}),
    // The node the capture opened: what a replay's endpoints are on the node or not against.
    ...(options.transport instanceof ReplayTransport ? { recordedNode: options.transport.bundle.manifest.node, ...(options.transport.bundle.manifest.note ? { note: options.transport.bundle.manifest.note } : {}) } : {}),
    source: { kind: options.transport.kind, label: options.transport.label, live: options.live } satisfies SnapshotSource,
    capturedAt: first ?? new Date((options.now ?? Date.now)()).toISOString(),
    ...extra,
  };
}

/** build-snapshot.ts `buildSnapshot` once the parsers of `input.runs` are loaded (each parser's code is imported on first need: parts.ts). */
export async function buildSnapshotLoading(input: SnapshotInput): Promise<NodeSnapshot> {
  await loadParsers(input.runs.filter(isParsedRun).map((r) => r.id));
  return buildSnapshot(input);
}
