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
  let decodes: readonly ParseResult<DecodedLbMap>[] | null = results;
  let table: LbTable | null = null;
  const part: Parsed<LbTable> = {
    get value(): LbTable {
      if (decodes !== null) {
        table = joinDecodedLbMaps(decodes).value.table;
        decodes = null;
        lazyLbJoins.count++;
      }
      return table!;
    },
    diagnostics: [...results.flatMap((r) => r.diagnostics), ...counted.diagnostics],
    probe,
    error: null,
  };
  return withLbCount(part, counted.value);
}
