/**
 * Refreshing the Cilium LB maps while the LB pane is on screen. The pane lists Cilium's
 * frontends, which the service maps hold (`cilium_lb4_services_v2`, `cilium_lb6_services_v2`:
 * one entry per frontend and backend slot, bpf/lib/lb.h); a refresh re-dumps those alone
 * (`bpftool -j map dump pinned`, the catalog's `bpf-lb4-services`/`bpf-lb6-services`). BPF
 * hash maps keep no change counter, so "changed" is the dump's text against the last one:
 * unchanged, the table stays as read; changed, every LB map is read again (the session's full
 * read with {@link LB_MAP_PROBES}). A change in the backend or rev-NAT maps alone (a backend's
 * state) shows at the periodic full read (src/collect/refresh-cost.ts `FULL_READ_EVERY`).
 */
import { createHash } from 'node:crypto';
import type { NodeSnapshot } from '../model/snapshot.js';
import { catalog } from '../sources/catalog.js';
import { runProbes, type ProbeRun } from '../sources/probe-runner.js';
import type { Transport } from '../sources/transport.js';
import { partProbes, summarize } from './build-snapshot.js';
import type { ChainFocus } from './chain-refresh.js';
import type { FocusedResult } from './focused-refresh.js';

/** The focus the LB pane gives the session (src/ui/App.tsx) when the maps were read from their pins. */
export const LB_MAPS_FOCUS: ChainFocus = { ruleset: 'bpf', table: 'lb', chain: 'services' };

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

  /** Remembers the service-map dumps among `runs` (runs that still hold their text; failed ones forget). */
  remember(runs: readonly ProbeRun[]): void {
    for (const r of runs) {
      if (!SERVICE_MAP_PROBES.includes(r.id)) continue;
      if (r.status === 'ok') this.digests.set(r.id, digest(r.result.stdout));
      else this.digests.delete(r.id);
    }
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

/**
 * One refresh of the LB pane: the service maps re-dumped ({@link SERVICE_MAP_PROBES} that the
 * last read had). `chain` with the snapshot as it was (the probes' summaries renewed) when
 * every dump printed what it printed last time; `full` when one changed, failed, or none was read.
 */
export async function serviceMapsRefresh(input: { transport: Transport; params: Readonly<Record<string, string | undefined>>; snapshot: NodeSnapshot; digests: ServiceMapDigests }): Promise<FocusedResult> {
  const ids = input.digests.known();
  if (ids.length === 0) return { kind: 'full', reason: 'no service map read', fingerprint: null };
  const runs = await runProbes(input.transport, { ids, params: input.params });
  const changed = runs.find((r) => !input.digests.same(r));
  if (changed || runs.length !== ids.length) return { kind: 'full', reason: changed ? `${changed.id}: ${changed.status === 'ok' ? 'changed' : changed.status}` : 'not run', fingerprint: null, runs };
  const renewed = new Map(runs.map((r) => [r.id, summarize(r)]));
  return { kind: 'chain', snapshot: { ...input.snapshot, probes: input.snapshot.probes.map((p) => renewed.get(p.id) ?? p) }, rates: new Map(), runs };
}
