/**
 * The planned probes of a live load run with the main thread's parsing beside them: the heavy
 * dumps' pipes are read on a thread of their own (`ExecOptions.readOffThread`, so a dump
 * never waits on a full pipe while a parse holds the event loop; nothing written to disk), the API objects are parsed while they run, and
 * each Cilium LB map dump is decoded as soon as it ends, while the next one runs. Still one
 * heavy dump at a time (src/sources/probe-runner.ts). The parses are handed to the snapshot
 * build as {@link EarlyParses}, which takes them only for the inputs they are of.
 */
import type { ParseResult } from '../model/diagnostics.js';
import type { DecodedLbMap } from '../parsers/bpftool-lb-decode.js';
import type { LbMapTally } from '../parsers/bpftool-lb-tally.js';
import type { ProbeSpec } from '../sources/catalog.js';
import type { ProbeRun, RunProbesOptions } from '../sources/probe-runner.js';
import type { Transport } from '../sources/transport.js';
import { decodeLbMapRun, earlyApi, isLbMapRun, tallyLbMapRun, type EarlyParses } from './early-parse.js';
import { runPlanned } from './planned-runs.js';
import type { ProbePlan } from './probe-plan.js';

/** The API objects' text and origin to parse beside the dumps (what the build would parse), if any. */
export interface BesideApi {
  readonly text: string | undefined;
  readonly origin: string;
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
/**
 * Decodes each Cilium LB map run ({@link decodeLbMapRun}) one turn of the event loop after it
 * ended — the runner starts the next dump first — into {@link lbMaps}, for the snapshot build
 * ({@link EarlyParses.lbMaps}). Pass {@link onRun} as `RunProbesOptions.onRun`. Held (runs wait)
 * until {@link flush} when made with `free` false; {@link flush} decodes those still waiting
 * at once (call it when the runs are back, before the build parses them). With `countOnly`
 * (a reader of the LB table's counts alone, whose runs outlive the build: `show rules`, the
 * TUI's live load), each run is tallied instead ({@link lbTallies}: bpftool-lb-tally.ts) and decoded only when its
 * tally is null.
 */
export class LbDecodesBeside {
  /** Weak: a run let go (its text dropped once parsed) takes its decode with it. */
  readonly lbMaps = new WeakMap<ProbeRun, ParseResult<DecodedLbMap>>();
  /** With `countOnly`: each run's tally (null: not the usual case; the run is then decoded into {@link lbMaps}). */
  readonly lbTallies = new WeakMap<ProbeRun, LbMapTally | null>();
  /** How many runs were decoded here (not by the build). */
  decoded = 0;
  private readonly waiting: ProbeRun[] = [];

  constructor(
    private free = true,
    private readonly countOnly = false,
  ) {}

  /** Takes a run as it ends: an LB map dump that ended ok is decoded on the next turn (when free). */
  readonly onRun = (run: ProbeRun): void => {
    if (!isLbMapRun(run)) return;
    this.waiting.push(run);
    if (this.free) void nextTurn().then(() => this.drain());
  };

  /** Decodes what waits now, and each run from now on. */
  flush(): void {
    this.free = true;
    this.drain();
  }

  private drain(): void {
    while (this.free && this.waiting.length > 0) {
      const run = this.waiting.shift()!;
      const tally = this.countOnly ? tallyLbMapRun(run) : null;
      if (this.countOnly) this.lbTallies.set(run, tally);
      if (tally !== null) continue;
      this.lbMaps.set(run, decodeLbMapRun(run));
      this.decoded++;
    }
  }
}

/**
 * {@link runPlanned} with the API parse and the LB map decodes beside the dumps (see the
 * module's comment). Returns what `runPlanned` returns and the early parses. The runs are the
 * same as `runPlanned`'s; throws only when it does (a transport failure). `countOnly`: the LB
 * dumps tallied, not decoded ({@link LbDecodesBeside}), and the tallies handed over
 * (`EarlyParses.lbTallies`): only for a load whose runs outlive the snapshot. `rulesOnly`: only
 * what `show rules` reads of the API objects is parsed (early-parse.ts `earlyApi`).
 */
export async function runPlannedBeside(transport: Transport, plan: ProbePlan, ids: readonly string[], options: Omit<RunProbesOptions, 'ids'>, api: BesideApi, countOnly = false, rulesOnly = false): Promise<{ runs: ProbeRun[]; plan: ProbePlan; early: EarlyParses }> {
  const decodes = new LbDecodesBeside(false, countOnly);
  let mainDump: () => void = () => {};
  const mainStarted = new Promise<void>((resolve) => (mainDump = resolve));
  const onStart = (spec: ProbeSpec) => {
    if (spec.heavy && spec.part !== 'iptablesLegacy') mainDump();
  };
  // The heavy dumps' reader starts while the light probes run, not at the first dump.
  transport.prepareOffThread?.();
  const running = runPlanned(transport, plan, ids, { ...options, heavyOffThread: true, onRun: decodes.onRun, onStart });
  // The parse holds the event loop, and the runner starts each dump from it: so it waits for
  // the first of the mode's own dumps (the legacy tables, a leftover check, are small on a node
  // of any mode), started just before this resumes; with none, it runs after the dumps.
  await Promise.race([mainStarted, running]);
  const parsed = api.text !== undefined ? earlyApi(api.text, api.origin, rulesOnly) : undefined;
  decodes.flush();
  const planned = await running;
  decodes.flush();
  return { ...planned, early: { ...(parsed ? { api: parsed } : {}), lbMaps: decodes.lbMaps, ...(countOnly ? { lbTallies: decodes.lbTallies } : {}) } };
}
