/**
 * The LB part of a one-shot load with its table joined on first read: a command that prints
 * only the table's counts (`show rules`: the mode's evidence) never makes the join
 * (`assembleLbTable`), one that reads the table gets exactly the joined one. The counts
 * ({@link countLbServices}, equal to the table's) and the diagnostics (equal to the join's)
 * are made at once; the join's own diagnostics are not read again.
 */
import type { ParseResult } from '../model/diagnostics.js';
import type { LbTable } from '../model/cilium.js';
import type { Parsed, ProbeSummary } from '../model/snapshot.js';
import { joinDecodedLbMaps, type DecodedLbMap } from '../parsers/bpftool-lb-decode.js';
import { countLbServices, withLbCount } from '../parsers/bpftool-lb-count.js';
import { countLbTallies, type LbMapTally } from '../parsers/bpftool-lb-tally.js';
import type { ProbeRun } from '../sources/probe-runner.js';
import { decodeLbMapRun } from './early-parse.js';

/** How many lazily built LB parts made their join (first reads of `value`): for tests, which count work. */
export const lazyLbJoins = { count: 0 };

/**
 * The LB part of the maps' decodes `results` (in the part's runs' order) from `probe`: its
 * diagnostics those of {@link joinDecodedLbMaps} (each decode's, then the join's, in order),
 * made without the join; `value` the joined table, made on first read and kept (the decodes
 * are let go then). The counts are remembered for the part ({@link withLbCount}).
 */
export function lazyLbPart(results: readonly ParseResult<DecodedLbMap>[], probe: ProbeSummary): Parsed<LbTable> {
  const counted = countLbServices(results.map((r) => r.value));
  return lazyPart(() => joinDecodedLbMaps(results).value.table, [...results.flatMap((r) => r.diagnostics), ...counted.diagnostics], probe, counted.value);
}

/**
 * An LB part whose `value` is `join()` made on first read and kept (`join` and what it holds let
 * go then: {@link lazyLbJoins} counts it), the counts remembered for the part ({@link withLbCount}).
 */
function lazyPart(join: () => LbTable, diagnostics: Parsed<LbTable>['diagnostics'], probe: ProbeSummary, counts: Parameters<typeof withLbCount>[1]): Parsed<LbTable> {
  let pending: (() => LbTable) | null = join;
  let table: LbTable | null = null;
  const part: Parsed<LbTable> = {
    get value(): LbTable {
      if (pending !== null) {
        table = pending();
        pending = null;
        lazyLbJoins.count++;
      }
      return table!;
    },
    diagnostics,
    probe,
    error: null,
  };
  return withLbCount(part, counts);
}

/**
 * The LB part of the LB map `runs` (in the part's order) counted from their tallies
 * (`tallyOf`, src/parsers/bpftool-lb-tally.ts) without decoding them: the counts
 * `countLbTallies`' and its diagnostics (equal to {@link countLbServices}' of the decodes; the
 * decodes give none when every tally answers), `value` the table decoded from the runs and
 * joined on first read ({@link lazyLbPart}'s `value`), so the runs' texts must outlive the
 * part. Null when a tally is null: take {@link lazyLbPart} of the decodes instead.
 */
export function tallyLbPart(runs: readonly ProbeRun[], tallyOf: (run: ProbeRun) => LbMapTally | null, probe: ProbeSummary): Parsed<LbTable> | null {
  const tallies: LbMapTally[] = [];
  for (const run of runs) {
    const tally = tallyOf(run);
    if (tally === null) return null;
    tallies.push(tally);
  }
  const counted = countLbTallies(tallies);
  return lazyPart(() => joinDecodedLbMaps(runs.map(decodeLbMapRun)).value.table, counted.diagnostics, probe, counted.value);
}
