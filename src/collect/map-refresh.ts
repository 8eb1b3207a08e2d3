/**
 * Refreshing the Cilium LB maps while the LB pane is on screen. The pane lists Cilium's
 * frontends, which the service maps hold (`cilium_lb4_services_v2`, `cilium_lb6_services_v2`:
 * one entry per frontend and backend slot, bpf/lib/lb.h). BPF hash maps keep no change
 * counter, so "changed" is what a read prints against the last full read:
 * - the frontends the pane may show (`ChainFocus.frontends`), on a transport that feeds stdin:
 *   their entries (slot 0 with the backend count, and the backend slots) looked up by key in one
 *   `bpftool -j batch file -` (the catalog's `bpf-lb-lookup`, src/collect/lb-lookup.ts);
 * - else (kubectl-debug, no frontends given, a table not read from the maps): the service maps
 *   re-dumped whole (`bpftool -j map dump pinned`, `bpf-lb4-services`/`bpf-lb6-services`),
 *   compared by digest.
 * Unchanged: the table stays as read; changed, missing or failed: every LB map is read again
 * (the session's full read with {@link lbMapProbes}). What is not read here shows at the periodic
 * full read (src/collect/refresh-cost.ts `FULL_READ_EVERY`): a change in the backend or rev-NAT
 * maps alone (a backend's state), and with the lookups a frontend off screen (a new Service).
 */
import { createHash } from 'node:crypto';
import type { NodeSnapshot } from '../model/snapshot.js';
import { catalog } from '../sources/catalog.js';
import { runProbe, runProbes, type ProbeRun } from '../sources/probe-runner.js';
import type { Transport } from '../sources/transport.js';
import { partProbes, summarize } from './build-snapshot.js';
import type { ChainFocus } from './chain-refresh.js';
import type { FocusedResult } from './focused-refresh.js';
import { lookupPlan, lookupsUnchanged, type ServiceMapPins } from './lb-lookup.js';

/** The focus the LB pane gives the session (src/ui/App.tsx) when the maps were read from their pins. */
export const LB_MAPS_FOCUS: ChainFocus = { ruleset: 'bpf', table: 'lb', chain: 'services' };

/** The probe that looks the service maps' entries up by key (one bpftool, `map lookup` lines on stdin). */
export const LOOKUP_PROBE = 'bpf-lb-lookup';

/** The service-map probes a focused refresh re-reads (the frontends the LB pane lists). */
export const SERVICE_MAP_PROBES: readonly string[] = ['bpf-lb4-services', 'bpf-lb6-services'];

/** Every node probe that dumps an LB map (catalog parser `bpftool-map`, part `lb`), as a full read with the LB pane open reads them. */
export function lbMapProbes(): string[] {
  const lb = new Set(partProbes().lb);
  return catalog()
    .probes.filter((p) => lb.has(p.id) && p.parser === 'bpftool-map' && p.where === 'node')
    .map((p) => p.id);
}

/** Whether `focus` is the LB pane's ({@link LB_MAPS_FOCUS}). */
export function isLbMapsFocus(focus: ChainFocus | null): boolean {
  return focus?.ruleset === LB_MAPS_FOCUS.ruleset && focus.table === LB_MAPS_FOCUS.table && focus.chain === LB_MAPS_FOCUS.chain;
}

/** The digests of the service maps' last dumps, by probe id: what "unchanged" is measured against. */
export class ServiceMapDigests {
  private readonly digests = new Map<string, string>();
  private readonly pinPaths = new Map<string, string>();

  /** Remembers the service-map dumps among `runs` (runs that still hold their text; failed ones forget), and the pin each read. */
  remember(runs: readonly ProbeRun[]): void {
    for (const r of runs) {
      if (!SERVICE_MAP_PROBES.includes(r.id)) continue;
      if (r.status === 'ok') {
        this.digests.set(r.id, digest(r.result.stdout));
        this.pinPaths.set(r.id, r.argv[r.argv.length - 1] ?? '');
      } else {
        this.digests.delete(r.id);
        this.pinPaths.delete(r.id);
      }
    }
  }

  /** The pin paths the last full read dumped the service maps from (the last argument of `bpftool -j map dump pinned PATH`). */
  pins(): ServiceMapPins {
    const v4 = this.pinPaths.get('bpf-lb4-services');
    const v6 = this.pinPaths.get('bpf-lb6-services');
    return { ...(v4 ? { v4 } : {}), ...(v6 ? { v6 } : {}) };
  }

  /** The probes whose last dump is remembered (the ones a focused refresh re-reads). */
  known(): string[] {
    return SERVICE_MAP_PROBES.filter((id) => this.digests.has(id));
  }

  /** Whether `run` printed what its probe printed last time. */
  same(run: ProbeRun): boolean {
    return run.status === 'ok' && this.digests.get(run.id) === digest(run.result.stdout);
  }
}

function digest(text: string): string {
  return createHash('sha1').update(text).digest('base64');
}

/** What {@link serviceMapsRefresh} needs; `frontends`: those the LB pane may show (absent: the dump path). */
export interface ServiceMapsInput {
  readonly transport: Transport;
  readonly params: Readonly<Record<string, string | undefined>>;
  readonly snapshot: NodeSnapshot;
  readonly digests: ServiceMapDigests;
  readonly frontends?: readonly string[];
}

/**
 * One refresh of the LB pane: the entries of the frontends on screen looked up by key
 * ({@link lookupRefresh}) when the transport feeds stdin and the shown table allows it, else
 * the service maps re-dumped ({@link dumpRefresh}). `chain` with the snapshot as it was when
 * nothing read changed; `full` when something did, failed, or nothing can be read alone.
 */
export async function serviceMapsRefresh(input: ServiceMapsInput): Promise<FocusedResult> {
  const table = input.snapshot.lb?.value;
  const plan = input.frontends && input.transport.feedsStdin && table ? lookupPlan(table, input.frontends, input.digests.pins()) : null;
  return plan && plan.lines.length > 0 ? lookupRefresh(input, plan) : dumpRefresh(input);
}

/** The lookups of `plan` in one bpftool: `chain` (the lookup's summary beside the probes) when every entry is as read last. */
async function lookupRefresh(input: ServiceMapsInput, plan: NonNullable<ReturnType<typeof lookupPlan>>): Promise<FocusedResult> {
  const spec = catalog().probes.find((p) => p.id === LOOKUP_PROBE);
  if (!spec) return dumpRefresh(input);
  const run = await runProbe(input.transport, spec, input.params, catalog(), { stdin: plan.lines });
  const runs = [run];
  if (run.status !== 'ok' || !lookupsUnchanged(plan, run.result.stdout)) return { kind: 'full', reason: `${run.id}: ${run.status === 'ok' ? 'changed' : run.status}`, fingerprint: null, runs };
  return { kind: 'chain', snapshot: { ...input.snapshot, probes: [...input.snapshot.probes.filter((p) => p.id !== run.id), summarize(run)] }, rates: new Map(), runs };
}

/**
 * The service maps re-dumped ({@link SERVICE_MAP_PROBES} that the last read had), compared by
 * digest: `chain` with the probes' summaries renewed when every dump printed what it printed
 * last time; `full` when one changed, failed, or none was read.
 */
async function dumpRefresh(input: ServiceMapsInput): Promise<FocusedResult> {
  const ids = input.digests.known();
  if (ids.length === 0) return { kind: 'full', reason: 'no service map read', fingerprint: null };
  const runs = await runProbes(input.transport, { ids, params: input.params });
  const changed = runs.find((r) => !input.digests.same(r));
  if (changed || runs.length !== ids.length) return { kind: 'full', reason: changed ? `${changed.id}: ${changed.status === 'ok' ? 'changed' : changed.status}` : 'not run', fingerprint: null, runs };
  const renewed = new Map(runs.map((r) => [r.id, summarize(r)]));
  return { kind: 'chain', snapshot: { ...input.snapshot, probes: input.snapshot.probes.map((p) => renewed.get(p.id) ?? p) }, rates: new Map(), runs };
}
