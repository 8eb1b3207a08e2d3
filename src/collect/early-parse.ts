/**
 * Parses done while the heavy dumps run, so that the snapshot build after the last dump only
 * joins them (a live load: src/collect/beside-dumps.ts): the API objects' text, and each
 * Cilium LB map dump as soon as it ends. The build (src/collect/build-snapshot.ts) takes a
 * result instead of parsing again only for the very input it is the parse of — the same
 * API text and origin, the same run object — with the same parser and options it would call.
 */
import type { ParseResult } from '../model/diagnostics.js';
import type { ApiObjects } from '../model/k8s.js';
import { decodeCiliumLbMapDump, type DecodedLbMap, type LbMapDumpText } from '../parsers/bpftool-lb-decode.js';
import { tallyLbMapDump, type LbMapTally } from '../parsers/bpftool-lb-tally.js';
import { parseK8sObjects } from '../parsers/k8s-objects.js';
import { parseRulesApi } from '../parsers/k8s-rules-api.js';
import type { ProbeRun } from '../sources/probe-runner.js';
import { catalog } from '../sources/catalog.js';
import { LB_MAPS_PARSER } from './parts.js';

/** Parses made before the build: `api` of `text` from `origin` (`parseK8sObjects`), `lbMaps` per run ({@link decodeLbMapRun}). */
export interface EarlyParses {
  readonly api?: { readonly text: string; readonly origin: string; readonly result: ParseResult<ApiObjects> };
  readonly lbMaps?: { get(run: ProbeRun): ParseResult<DecodedLbMap> | undefined };
  /**
   * Each LB map run's tally ({@link tallyLbMapRun}; null: not the usual case, undefined: not
   * made yet). Given only by a load whose runs outlive the snapshot (a one-shot load): the LB
   * part may then be counted from the tallies and decoded from the runs on first read
   * (src/collect/lb-lazy.ts `tallyLbPart`).
   */
  readonly lbTallies?: { get(run: ProbeRun): LbMapTally | null | undefined };
}

/**
 * The API objects of `text` as the snapshot build parses them (`parseK8sObjects(text, origin)`),
 * kept with their input; with `rulesOnly` (a load for `show rules` alone, nothing else reads
 * its snapshot), only what `show rules` reads of them (k8s-rules-api.ts `parseRulesApi`).
 */
export function earlyApi(text: string, origin: string, rulesOnly = false): NonNullable<EarlyParses['api']> {
  return { text, origin, result: rulesOnly ? parseRulesApi(text, origin) : parseK8sObjects(text, origin) };
}

/** The API parse of `early` when it is the parse of `text` from `origin`; else undefined (parse it). */
export function earlyApiOf(early: EarlyParses | undefined, text: string, origin: string): ParseResult<ApiObjects> | undefined {
  const api = early?.api;
  return api && api.text === text && api.origin === origin ? api.result : undefined;
}

/** True for a run the LB part decodes: a raw LB map dump (commands/probes.yaml `parser: bpftool-map`) that ended ok. */
export function isLbMapRun(run: ProbeRun): boolean {
  return run.status === 'ok' && catalog().probes.find((p) => p.id === run.id)?.parser === LB_MAPS_PARSER;
}

/** One LB map run as the dump the LB part decodes: the pin (argv's last word), stdout or its pieces, the probe id as origin. */
export function lbMapDumpOf(run: ProbeRun): LbMapDumpText {
  return { name: run.argv[run.argv.length - 1]!, text: run.result.stdout, origin: run.id, ...(run.result.stdoutPieces ? { pieces: run.result.stdoutPieces } : {}) };
}

/** Tallies one LB map run ({@link lbMapDumpOf}) for the LB table's counts (bpftool-lb-tally.ts `tallyLbMapDump`; null: decode it). */
export function tallyLbMapRun(run: ProbeRun): LbMapTally | null {
  return tallyLbMapDump(lbMapDumpOf(run));
}

/** Decodes one LB map run ({@link lbMapDumpOf}) as the LB part does (`decodeCiliumLbMapDump`, default options). */
export function decodeLbMapRun(run: ProbeRun): ParseResult<DecodedLbMap> {
  return decodeCiliumLbMapDump(lbMapDumpOf(run));
}
