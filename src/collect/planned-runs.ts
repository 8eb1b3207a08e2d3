/**
 * Running the node's probes by the probe plan (src/collect/probe-plan.ts): the light
 * probes first (identity, addresses, versions, the detection probes), then only the heavy
 * dumps the plan keeps, one at a time (src/sources/probe-runner.ts), and a fallback when a
 * planned dump gave nothing (`nft list ruleset` text for an nft without JSON).
 */
import { catalog } from '../sources/catalog.js';
import { said, UserError } from '../errors.js';
import { runProbes, type ProbeRun, type RunProbesOptions } from '../sources/probe-runner.js';
import type { Transport } from '../sources/transport.js';
import { ReplayTransport } from '../sources/replay.js';
import { fallbackProbes, plannedIds, planProbes, type ProbePlan } from './probe-plan.js';

/** The node probes read before the plan: every one that fills no snapshot part (and is not on demand). */
export function firstStageIds(): string[] {
  return catalog()
    .probes.filter((p) => p.where === 'node' && !p.onDemand && !p.part)
    .map((p) => p.id);
}

/** The node probes of the snapshot parts (not on demand), in catalog order. */
export function partStageIds(): string[] {
  return catalog()
    .probes.filter((p) => p.where === 'node' && !p.onDemand && p.part)
    .map((p) => p.id);
}

/**
 * The plan of a load from its first-stage runs and the probes the user asked for (`--probe`).
 * A replay keeps its capture's plan (manifest.json `skipped`): it reads what the bundle holds,
 * as before the plan existed, and never re-decides for the node it no longer sees.
 */
export function planOf(transport: Transport, firstRuns: readonly ProbeRun[], asked: readonly string[] = []): ProbePlan {
  if (transport instanceof ReplayTransport) return { skipped: transport.bundle.manifest.skipped ?? [] };
  return planProbes(new Map(firstRuns.map((r) => [r.id, r])), new Set(asked));
}

/**
 * Runs `ids` less what `plan` skips, then any fallback the runs call for. Returns the runs
 * and the plan without the probes that ran as fallbacks.
 */
export async function runPlanned(transport: Transport, plan: ProbePlan, ids: readonly string[], options: Omit<RunProbesOptions, 'ids'> = {}): Promise<{ runs: ProbeRun[]; plan: ProbePlan }> {
  const runs = await runProbes(transport, { ...options, ids: plannedIds(plan, ids) });
  const extra = fallbackProbes(plan, new Map(runs.map((r) => [r.id, r]))).filter((id) => ids.includes(id));
  if (extra.length === 0) return { runs, plan };
  runs.push(...(await runProbes(transport, { ...options, ids: extra })));
  return { runs, plan: { skipped: plan.skipped.filter((s) => !extra.includes(s.id)) } };
}

/**
 * Checks `--probe` ids: each must be a node probe of the catalog that is read by default
 * (the plan may skip it). Throws `UserError` naming the probes it could be.
 */
export function checkAskedProbes(ids: readonly string[]): void {
  const known = catalog().probes.filter((p) => p.where === 'node' && !p.onDemand && p.part);
  for (const id of ids) {
    if (!known.some((p) => p.id === id)) throw new UserError(said('err.probe', { id }), said('err.oneOf', { list: known.map((p) => p.id).join(', ') }));
  }
}
