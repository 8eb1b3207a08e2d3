/**
 * Which probes a session reads and which texts it keeps (src/collect/session.ts): the
 * on-demand probes a load reads, and the runs kept without the text a part was parsed from.
 */
import { catalog } from '../sources/catalog.js';
import type { ProbeRun } from '../sources/probe-runner.js';
import { ReplayTransport } from '../sources/replay.js';
import type { Transport } from '../sources/transport.js';
import { partProbes } from './build-snapshot.js';

/** What the choice of on-demand probes depends on: the source and `SessionOptions.onDemand`. */
export interface ProbeChoice {
  readonly transport: Transport;
  readonly onDemand?: readonly string[];
}

/**
 * The on-demand probes a load reads: `options.onDemand`, and on a replay the on-demand
 * probes of a snapshot part that the bundle holds (a capture with `conntrack -E` output).
 * Never the others: an on-demand probe may run long (conntrack -E ends by its timeout).
 */
export function onDemandProbeIds(options: ProbeChoice): string[] {
  const wanted = new Set(options.onDemand ?? []);
  if (options.transport instanceof ReplayTransport) {
    const held = new Set(options.transport.bundle.manifest.probes.map((p) => p.id));
    for (const p of catalog().probes) if (p.onDemand && PART_PROBE_IDS().has(p.id) && held.has(p.id)) wanted.add(p.id);
  }
  return [...wanted];
}

/** `ids` without the on-demand probes this load does not read (see {@link onDemandProbeIds}). */
export function withoutUnwanted(options: ProbeChoice, ids: readonly string[]): string[] {
  const onDemand = new Set(catalog().probes.filter((p) => p.onDemand).map((p) => p.id));
  const wanted = new Set(onDemandProbeIds(options));
  return ids.filter((id) => !onDemand.has(id) || wanted.has(id));
}

/** Probes whose output becomes a {@link SnapshotPart}: their text is dropped once parsed. */
let partProbeIds: ReadonlySet<string> | undefined;
/** Every probe that fills a snapshot part (the catalog is read on first use). */
export const PART_PROBE_IDS = (): ReadonlySet<string> => (partProbeIds ??= new Set(Object.values(partProbes()).flat()));

/** The run without its stdout when that stdout is parsed into a part (its text is never read again). */
export function withoutPartText(run: ProbeRun): ProbeRun {
  return PART_PROBE_IDS().has(run.id) && run.result.stdout !== '' ? { ...run, result: { ...run.result, stdout: '' } } : run;
}
