/**
 * Builds a {@link NodeSnapshot} from probe runs and API objects text: runs each
 * probe's parser (named in `commands/probes.yaml`) and keeps diagnostics and
 * failures beside the values. Pure apart from the parsers it calls.
 */
import { statSync } from 'node:fs';
import { diagnostic, type Diagnostic, type ParseResult } from '../model/diagnostics.js';
import { SNAPSHOT_PARTS, type NodeSnapshot, type Parsed, type ProbeSummary, type SnapshotPart, type SnapshotSource } from '../model/snapshot.js';
import type { ConntrackTable } from '../model/conntrack.js';
import type { IpvsListing } from '../model/ipvs.js';
import { localAddresses, type Route } from '../model/iproute.js';
import type { ApiObjects } from '../model/k8s.js';
import type { LbTable } from '../model/cilium.js';
import { joinDecodedLbMaps } from '../parsers/bpftool-lb-decode.js';
import { decodeLbMapRun, earlyApiOf, lbMapDumpOf, tallyLbMapRun, type EarlyParses } from './early-parse.js';
import { lazyLbPart, tallyLbPart } from './lb-lazy.js';
import { joinCiliumBackends, type CiliumCtTable } from '../parsers/cilium-ct.js';
import { parseIpAddrJson, parseIpRouteJson } from '../parsers/ip-json.js';
import { chunksOf, chunksOfPieces, turn } from './chunks.js';
import { conntrackJobResult, startConntrackJob, startsBesideRules, type ConntrackJob, type WorkerOptions } from './worker-parse.js';
import { parseConntrack } from '../parsers/conntrack.js';
import { compareMapsWithListings, mergeCiliumListings } from '../analysis/cilium-listings.js';
import { parseK8sObjects } from '../parsers/k8s-objects.js';
import { hasParser, isParsedRun, LB_MAPS_PARSER, loadParsers, parserOf, parseWith, parsesInChunks, partProbes, piecedProbes, type ParserEntry } from './parts.js';
import { catalog } from '../sources/catalog.js';
import { failureReason, ParseCache, parsedOf, parseRunCached, summarize } from './parse-run.js';
import { nftTableNames, type SkippedProbe } from './probe-plan.js';
import type { NftRuleset } from '../model/nftables.js';
import type { ProbeRun } from '../sources/probe-runner.js';
import { apiInNamespace } from '../model/api-namespace.js';

/** What {@link buildSnapshot} needs besides the runs. `capturedAt`: ISO-8601 UTC. */
export interface SnapshotInput {
  readonly runs: readonly ProbeRun[];
  readonly apiText?: string;
  /** The API text when `apiText` is absent, asked for after the parts are parsed (may block: src/cli/trace-api.ts). */
  readonly apiTextLater?: () => string;
  readonly apiOrigin?: string;
  /** `-n NAMESPACE`: only the API objects of this namespace (and the cluster-scoped ones) are kept. */
  readonly apiNamespace?: string;
  readonly source: SnapshotSource;
  readonly capturedAt: string;
  /** Node name when known from elsewhere (API, manifest); else from `uname -n`. */
  readonly node?: string;
  /** The node name a capture bundle's manifest recorded (a replay): taken over `uname -n` when no API Node owns one of the node's addresses (see {@link resolveNodeName}). */
  readonly recordedNode?: string;
  /** A replayed bundle's manifest note ({@link SnapshotMeta.note}). */
  readonly note?: string;
  /** Parses of earlier snapshots, reused when a probe printed the same text again (live refresh). */
  readonly cache?: ParseCache;
  /**
   * Parts taken as they are from an earlier snapshot instead of parsed (a refresh reuses
   * every part whose probes it did not re-read; `api`: the API objects did not change).
   */
  readonly reuse?: { readonly snapshot: NodeSnapshot; readonly parts: ReadonlySet<SnapshotPart | 'api'> };
  /** The heavy probes the probe plan left out, and why (src/collect/probe-plan.ts). */
  readonly skipped?: readonly SkippedProbe[];
  /** {@link buildSnapshot}: rulesets parsed lazily where parts.ts has `lazy` (a reader of a few chains: `trace`); values as the whole parse's. */
  readonly lazyRules?: boolean;
  /** {@link buildSnapshot}: the LB maps' table joined on first read, its counts and diagnostics at once (src/collect/lb-lazy.ts). */
  readonly lazyLb?: boolean;
  /** Parses made while the dumps ran (src/collect/early-parse.ts), taken for the very inputs they are of. */
  readonly early?: EarlyParses;
}

// The probes read in pieces and of each part: from the catalog on first use (parts.ts).
export { partProbes, piecedProbes };
// One run's parse, its summary and failure (parse-run.ts), for the callers that import them from here.
export { failureReason, ParseCache, parseRunCached, summarize };

/**
 * The IPv4 routes (`ip-route`) with the IPv6 ones (`ip6-route`: `ip route` lists one family)
 * appended; the IPv4 part's probe and error stand for both. A bundle without the IPv6 probe
 * (captured before it existed) keeps its IPv4 routes alone.
 */
function withV6Routes(v4: Parsed<Route[]> | null, v6: Parsed<Route[]> | null): Parsed<Route[]> | null {
  if (!v6?.value?.length) return v4;
  if (!v4) return v6;
  return { ...v4, value: [...(v4.value ?? []), ...v6.value], diagnostics: [...v4.diagnostics, ...v6.diagnostics] };
}

/** Parses a probe that prints one integer (e.g. nf_conntrack_max); null when absent or not a number. */
export function parseIntegerRun(run: ProbeRun | undefined): number | null {
  if (!run || run.status !== 'ok') return null;
  const n = Number.parseInt(run.result.stdout.trim(), 10);
  return Number.isFinite(n) ? n : null;
}

/** The first line of a version probe's output, e.g. `iptables v1.8.9 (nf_tables)`. */
export function versionLine(run: ProbeRun | undefined): string | null {
  if (!run || run.status !== 'ok') return null;
  return run.result.stdout.split('\n')[0]?.trim() || null;
}

/**
 * The node's name: the API Node owning one of the node's own addresses (a netns or
 * SSH host rarely knows its Kubernetes name), else the name a capture recorded
 * (`recorded`, a replay's manifest.json `node`: the node that was opened, which the API
 * objects may not list), else the API Node named like the host (`uname -n`), else the
 * host name itself.
 */
export function resolveNodeName(hostName: string | undefined, addresses: readonly string[], api: ApiObjects | null, recorded?: string): string | undefined {
  const nodes = api?.nodes ?? [];
  const own = new Set(addresses);
  const byAddress = nodes.find((n) => n.addresses.some((a) => (a.type === 'InternalIP' || a.type === 'ExternalIP') && own.has(a.address)));
  if (byAddress || recorded) return byAddress?.meta.name ?? recorded;
  return nodes.find((n) => n.meta.name === hostName)?.meta.name ?? hostName;
}

/** The fields of a snapshot that a staged load fills after the first frame. */
export type PartFields = Pick<NodeSnapshot, 'iptables' | 'ip6tables' | 'iptablesLegacy' | 'nft' | 'conntrack' | 'ipvs' | 'ipvsList' | 'ipset' | 'xtRecent' | 'ciliumConntrack' | 'lb' | 'lbMapsRead' | 'ciliumStatus'>;

/** The fields of the first snapshot of a staged load. */
type FirstFields = Omit<NodeSnapshot, keyof PartFields | 'pending'>;

/** The runs by probe id, and the cache, as every part parser reads them. */
interface PartContext {
  readonly byId: ReadonlyMap<string, ProbeRun>;
  readonly cache: ParseCache | undefined;
  readonly reuse: SnapshotInput['reuse'];
  /** The conntrack table's parse on a worker thread, when one was started (src/collect/worker-parse.ts). */
  readonly job?: ConntrackJob;
  /** {@link SnapshotInput.lazyRules}. */
  readonly lazyRules?: boolean;
  /** {@link SnapshotInput.lazyLb}. */
  readonly lazyLb?: boolean;
  readonly early?: EarlyParses;
}

/**
 * Assembles a snapshot from its first-stage fields and whichever parts are parsed; a
 * part not given is null (`lbMapsRead` empty). Keys keep one order (JSON output).
 */
function assemble(first: FirstFields, parts: Partial<PartFields>, pending: readonly SnapshotPart[]): NodeSnapshot {
  return {
    meta: first.meta,
    probes: first.probes,
    addrs: first.addrs,
    routes: first.routes,
    iptables: parts.iptables ?? null,
    ip6tables: parts.ip6tables ?? null,
    iptablesLegacy: parts.iptablesLegacy ?? null,
    nft: parts.nft ?? null,
    conntrack: parts.conntrack ?? null,
    conntrackMax: first.conntrackMax,
    conntrackCount: first.conntrackCount,
    ipvs: parts.ipvs ?? null,
    ...(parts.ipvsList?.value ? { ipvsList: parts.ipvsList } : {}),
    ipset: parts.ipset ?? null,
    xtRecent: parts.xtRecent ?? null,
    api: first.api,
    ciliumConntrack: parts.ciliumConntrack ?? null,
    lb: parts.lb ?? null,
    lbMapsRead: parts.lbMapsRead ?? [],
    ciliumStatus: parts.ciliumStatus ?? null,
    ...(pending.length ? { pending } : {}),
    ...(first.skipped?.length ? { skipped: first.skipped } : {}),
    ...(first.nftTableNames ? { nftTableNames: first.nftTableNames } : {}),
  };
}

/**
 * The first snapshot of a staged load: node identity (uname, addresses, API Node),
 * routes, conntrack count/max and the API objects (the Services pane's data); every
 * {@link SnapshotPart} is null and listed in `pending`. Cheap next to the full build
 * (no ruleset, no conntrack table is parsed). Never throws on bad probe output.
 */
export function buildFirstSnapshot(input: SnapshotInput): NodeSnapshot {
  const cache = input.cache;
  const byId = new Map(input.runs.map((r) => [r.id, r]));
  const uname = versionLine(byId.get('uname'))?.split(/\s+/) ?? [];
  const toolVersions: Record<string, string> = {};
  for (const [tool, id] of [['iptables', 'iptables-version'], ['nft', 'nft-version'], ['conntrack', 'conntrack-version']] as const) {
    const v = versionLine(byId.get(id));
    if (v) toolVersions[tool] = v;
  }
  if (uname[1]) toolVersions.kernel = uname[1];
  let api: Parsed<ApiObjects> | null = null;
  if (input.reuse?.parts.has('api')) api = input.reuse.snapshot.api;
  else if (input.apiText !== undefined || input.apiTextLater) {
    const text = input.apiText ?? input.apiTextLater!();
    const origin = input.apiOrigin ?? 'api.json';
    const r = earlyApiOf(input.early, text, origin) ?? (cache ? cache.parse(`api:${origin}`, text, () => parseK8sObjects(text, origin)) : parseK8sObjects(text, origin));
    api = { value: input.apiNamespace !== undefined ? apiInNamespace(r.value, input.apiNamespace) : r.value, diagnostics: r.diagnostics, probe: null, error: null };
  }
  const addrs = parseRunCached(byId.get('ip-addr'), parseIpAddrJson, cache);
  const nftTables = nftTableNames(byId.get('nft-tables'));
  const ownAddresses = addrs?.value ? localAddresses(addrs.value).map((a) => a.address) : [];
  const base = {
    meta: {
      node: input.node ?? resolveNodeName(uname[0], ownAddresses, api?.value ?? null, input.recordedNode) ?? input.source.label,
      kernel: uname[1] ?? null,
      source: input.source,
      capturedAt: input.capturedAt,
      toolVersions,
      ...(input.note ? { note: input.note } : {}),
    },
    probes: input.runs.map(summarize),
    addrs,
    routes: withV6Routes(parseRunCached(byId.get('ip-route'), parseIpRouteJson, cache), parseRunCached(byId.get('ip6-route'), parseIpRouteJson, cache)),
    conntrackMax: parseIntegerRun(byId.get('conntrack-max')),
    conntrackCount: parseIntegerRun(byId.get('conntrack-count')),
    api,
    ...(input.skipped?.length ? { skipped: input.skipped } : {}),
    ...(nftTables ? { nftTableNames: nftTables } : {}),
  };
  return assemble(base, {}, SNAPSHOT_PARTS);
}

/** Parses one part synchronously, given the parts parsed before it (the CT join needs `lb`). */
function parsePart(part: SnapshotPart, ctx: PartContext, done: Partial<PartFields>): Partial<PartFields> {
  const { byId, cache, reuse } = ctx;
  if (reuse?.parts.has(part)) return reusedPart(part, reuse.snapshot);
  if (part === 'lb') return lbPart(byId, cache, ctx.early, ctx.lazyLb);
  let chosen: Parsed<unknown> | null = null;
  for (const id of partProbes()[part]) {
    // An on-demand probe of a part (conntrack -E) adds to it; it never stands in for the part's own probe.
    if (onDemandProbe(id)) continue;
    const run = byId.get(id);
    // The entry is looked up only when the run is parsed (a probe the node did not answer needs no parser code).
    const parsed = hasParser(id) ? parseRunCached(run, (text, origin) => ((ctx.lazyRules ? parserOf(id)!.lazy : undefined) ?? parserOf(id)!.parse)(text, origin), cache) : null;
    if (parsed) chosen = parsed;
    if (parsed?.value && !parsed.error) break;
  }
  if (part === 'ciliumConntrack') return { ciliumConntrack: ciliumCtPart(chosen as Parsed<CiliumCtTable> | null, done) };
  if (part === 'ipvs') return ipvsPart(chosen as Parsed<IpvsListing> | null, byId, cache);
  if (part === 'conntrack') return { conntrack: withConntrackEvents(chosen as Parsed<ConntrackTable> | null, byId.get('conntrack-events'), cache) };
  if (part === 'nft') return { nft: withKubeProxy6(chosen as Parsed<NftRuleset> | null, byId, cache) };
  return { [part]: chosen } as Partial<PartFields>;
}

/**
 * kube-proxy's IPv6 table added to its IPv4 one: nft lists one table per command, so the
 * nftables mode's two tables come from two probes (`nft-json-kube-proxy`, `…6`) and make
 * one ruleset. `chosen` as it is when it is not the IPv4 table's parse.
 */
function withKubeProxy6(chosen: Parsed<NftRuleset> | null, byId: ReadonlyMap<string, ProbeRun>, cache: ParseCache | undefined): Parsed<NftRuleset> | null {
  const six = byId.get('nft-json-kube-proxy6');
  if (chosen?.probe?.id !== 'nft-json-kube-proxy' || !chosen.value || !six || six.status !== 'ok') return chosen;
  const entry = parserOf('nft-json-kube-proxy6');
  if (!entry) return chosen;
  const parsed = parseRunCached(six, entry.parse, cache) as Parsed<NftRuleset> | null;
  if (!parsed?.value) return chosen;
  return { ...chosen, value: { tables: [...chosen.value.tables, ...parsed.value.tables] }, diagnostics: [...chosen.diagnostics, ...parsed.diagnostics] };
}

// The counters listing (-Ln --stats) is the part; the plain -Ln one adds schedulers and weights when both were read.
function ipvsPart(ipvs: Parsed<IpvsListing> | null, byId: ReadonlyMap<string, ProbeRun>, cache: SnapshotInput['cache']): Partial<PartFields> {
  const ipvsList = ipvs?.probe?.id === 'ipvsadm-stats' && ipvs.value ? (parseRunCached(byId.get('ipvsadm'), parseWith('ipvsadm'), cache) as Parsed<IpvsListing> | null) : null;
  return { ipvs, ...(ipvsList?.value ? { ipvsList } : {}) };
}

/**
 * The IPVS listing to parse: the stats probe when it answered, else the plain `ipvsadm -Ln`
 * (a failed stats probe must not read as "no virtual servers"), else whichever ran.
 */
export function ipvsRun(stats: ProbeRun | undefined, plain: ProbeRun | undefined): ProbeRun | undefined {
  if (stats?.status === 'ok') return stats;
  if (plain?.status === 'ok') return plain;
  return stats ?? plain;
}

const onDemandProbe = (id: string): boolean => catalog().probes.find((p) => p.id === id)?.onDemand === true;

function reusedPart(part: SnapshotPart, from: NodeSnapshot): Partial<PartFields> {
  if (part === 'lb') return { lb: from.lb, lbMapsRead: from.lbMapsRead };
  if (part === 'ipvs') return { ipvs: from.ipvs, ...(from.ipvsList ? { ipvsList: from.ipvsList } : {}) };
  return { [part]: from[part] ?? null };
}

// The backend join depends on the LB table too, so it is not part of the cached parse.
function ciliumCtPart(ciliumCt: Parsed<CiliumCtTable> | null, done: Partial<PartFields>): Parsed<ConntrackTable> | null {
  return ciliumCt?.value ? { ...ciliumCt, value: joinCiliumBackends(ciliumCt.value, done.lb?.value ?? null) } : ciliumCt;
}

/** Builds the whole snapshot at once (`show`, `capture`). Never throws on bad probe output: that becomes diagnostics. Its runs' parsers must be loaded (load-snapshot.ts `buildSnapshotLoading`). */
export function buildSnapshot(input: SnapshotInput): NodeSnapshot {
  // With `apiTextLater` the parts (pure, never reading the API objects) go first: the text is asked for when needed.
  const first = input.apiText === undefined && input.apiTextLater ? undefined : buildFirstSnapshot(input);
  const ctx: PartContext = { byId: new Map(input.runs.map((r) => [r.id, r])), cache: input.cache, reuse: input.reuse, lazyRules: input.lazyRules === true, lazyLb: input.lazyLb === true, early: input.early };
  let done: Partial<PartFields> = {};
  for (const part of SNAPSHOT_PARTS) done = { ...done, ...parsePart(part, ctx, done) };
  return assemble(first ?? buildFirstSnapshot(input), done, []);
}

/**
 * The groups of a staged load, each followed by a new snapshot: what the Rules pane and
 * the mode need, then the LB maps and the small listings, then the conntrack tables
 * (seconds at 1M entries, parsed in chunks).
 */
const STAGES: readonly (readonly SnapshotPart[])[] = [['iptables', 'ip6tables', 'iptablesLegacy', 'nft'], ['lb', 'ciliumStatus', 'ipvs', 'ipset', 'xtRecent'], ['conntrack'], ['ciliumConntrack']];

/** Options of {@link completeSnapshot}. */
export interface CompleteOptions {
  /** Called with each intermediate snapshot (fewer `pending` parts each time), not with the last. */
  readonly onProgress?: (snapshot: NodeSnapshot) => void;
  /** Characters of conntrack text parsed between two turns of the event loop (default 512 KiB, ~10 ms). */
  readonly chunkChars?: number;
  /** Called after each part parsed (not reused) with its wall time in ms, turns of the event loop included. */
  readonly onPartParsed?: (part: SnapshotPart, ms: number) => void;
  /**
   * Reads probes not in `input.runs`, asked for stage by stage just before their parts are
   * parsed (so only one stage's texts are in memory at a time); the session runs them.
   * Each text is let go once its part is parsed.
   */
  readonly fetchRuns?: (ids: readonly string[]) => Promise<readonly ProbeRun[]>;
  /**
   * Parse a big conntrack table read from a file (a replay) on a worker thread, started
   * before the first stage so it runs beside the rules' parse (src/collect/worker-parse.ts).
   * Default: `{}` without `input.cache` (as `startsBesideRules` says), else none.
   */
  readonly workers?: WorkerOptions;
  /**
   * Called just before this thread parses a part whose probes printed at least
   * `bigPartBytes` (the conntrack run a worker parses not counted): the session's full GC,
   * so the garbage of the parts before is freed before a big parse allocates, and not before
   * a frame that has no big parse after it (a huge nftables replay's loaded frame waited for a
   * full mark after the rules' stage that lowered no peak: the worker had parsed the flows).
   */
  readonly beforeBigPart?: (part: SnapshotPart) => void;
  /** Bytes of probe output from which a part is big for {@link beforeBigPart}: default {@link BIG_PART_BYTES}. */
  readonly bigPartBytes?: number;
}

/** Bytes of probe output from which {@link CompleteOptions.beforeBigPart} is called: 16 MiB. */
export const BIG_PART_BYTES = 16 * 1024 * 1024;

/** Bytes a run printed: its stdout file's size (a replay; 0 when it cannot be read), else its text's length. */
function printedBytes(run: ProbeRun): number {
  const file = run.result.stdoutPath;
  if (file === undefined) return run.result.stdout.length;
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

/** Bytes the probes of `part` printed that this thread parses (the worker job's run excluded). */
function bytesParsedHere(part: SnapshotPart, ctx: PartContext): number {
  let bytes = 0;
  for (const id of partProbes()[part]) {
    const run = ctx.byId.get(id);
    if (run && run !== ctx.job?.run) bytes += printedBytes(run);
  }
  return bytes;
}

/**
 * Parses the parts a {@link buildFirstSnapshot} left pending, off the render path: the
 * event loop turns (setImmediate) between parts and between chunks of the conntrack
 * text, so keys and frames are handled meanwhile. Resolves to the complete snapshot,
 * equal to {@link buildSnapshot} of the same input (plus the fetched runs). Rejects only
 * when `fetchRuns` does (a transport failure); never on bad probe output.
 */
export async function completeSnapshot(input: SnapshotInput, first: NodeSnapshot, options: CompleteOptions = {}): Promise<NodeSnapshot> {
  const byId = new Map(input.runs.map((r) => [r.id, r]));
  const summaries = new Map(input.runs.map((r) => [r.id, summarize(r)]));
  let ctx: PartContext = { byId, cache: input.cache, reuse: input.reuse, lazyLb: input.lazyLb === true, early: input.early };
  // The first stage may have been built from fewer runs (the session reads the parts' probes after it).
  const withProbes = () => ({ ...first, probes: inCatalogOrder([...summaries.values()]) });
  let done: Partial<PartFields> = {};
  let pending = [...(first.pending ?? SNAPSHOT_PARTS)];
  // Without a parse cache (a replay: live texts are fingerprinted whole); started before the first stage, beside the rules' parse, or not at all (startsBesideRules).
  const workers = options.workers ?? (input.cache ? undefined : {});
  for (const [i, stage] of STAGES.entries()) {
    const todo = stage.filter((part) => pending.includes(part) && !ctx.reuse?.parts.has(part));
    const missing = todo.flatMap((part) => partProbes()[part]).filter((id) => !byId.has(id));
    if (options.fetchRuns && missing.length > 0) {
      await turn();
      for (const r of await options.fetchRuns(missing)) {
        byId.set(r.id, r);
        summaries.set(r.id, summarize(r));
      }
    }
    if (workers && i === 0 && pending.includes('conntrack') && !ctx.reuse?.parts.has('conntrack') && startsBesideRules(workers, byId.get('nft-json'))) {
      if (options.fetchRuns && !byId.has('conntrack')) for (const r of await options.fetchRuns(['conntrack'])) (byId.set(r.id, r), summaries.set(r.id, summarize(r)));
      const job = startConntrackJob(byId.get('conntrack'), first, workers);
      if (job) ctx = { ...ctx, job };
    }
    for (const part of stage) {
      if (!pending.includes(part)) continue;
      const reused = ctx.reuse?.parts.has(part) ?? false;
      if (!reused) await turn();
      if (!reused) await loadParsers(partProbes()[part].filter((id) => byId.has(id)));
      if (!reused && options.beforeBigPart && bytesParsedHere(part, ctx) >= (options.bigPartBytes ?? BIG_PART_BYTES)) options.beforeBigPart(part);
      const started = performance.now();
      const fields = (reused ? null : await chunkedPart(part, ctx, options.chunkChars ?? 512 * 1024)) ?? parsePart(part, ctx, done);
      if (!reused) options.onPartParsed?.(part, performance.now() - started);
      done = { ...done, ...fields };
      pending = pending.filter((p) => p !== part);
    }
    // The texts of this stage are parsed: keep no reference to them here.
    if (options.fetchRuns) for (const part of stage) for (const id of partProbes()[part]) byId.delete(id);
    if (i < STAGES.length - 1 && pending.length > 0) options.onProgress?.(assemble(withProbes(), done, pending));
  }
  return assemble(withProbes(), done, []);
}

/** Probe summaries in the catalog's order (the order a one-shot run lists them). */
function inCatalogOrder(probes: ProbeSummary[]): ProbeSummary[] {
  const order = new Map(catalog().probes.map((p, i) => [p.id, i]));
  return probes.sort((a, b) => (order.get(a.id) ?? 0) - (order.get(b.id) ?? 0));
}

/**
 * The conntrack part with the events of the `conntrack-events` probe (`conntrack -E`) added
 * to its `events`: that probe's every line is an event, so a table line in it is reported (a
 * `not-an-event` warning) and not added to the table. The probe ends by its timeout (the
 * events stream does not end by itself): that timeout is not an error. Without a table probe
 * the part's `entries` are empty and its `error` says the table was not read.
 */
function withConntrackEvents(table: Parsed<ConntrackTable> | null, run: ProbeRun | undefined, cache?: ParseCache): Parsed<ConntrackTable> | null {
  if (!run) return table;
  const parsed = parseRunCached(run, parseConntrack, cache);
  const got = parsed?.value;
  if (!got) return table;
  const stray = got.entries.map((e) => diagnostic('warning', run.id, e.line, e.raw, 'not-an-event', 'a conntrack table line in the events probe\'s output (no [NEW]/[UPDATE]/[DESTROY] tag): not added to the table'));
  const events = [...(table?.value?.events ?? []), ...(got.events ?? [])];
  const value: ConntrackTable = {
    entries: table?.value?.entries ?? [],
    ...(events.length > 0 ? { events } : {}),
    trailers: [...(table?.value?.trailers ?? []), ...got.trailers],
    reportedCount: table?.value?.reportedCount,
    ...(got.reportedEvents !== undefined ? { reportedEvents: got.reportedEvents } : table?.value?.reportedEvents !== undefined ? { reportedEvents: table.value.reportedEvents } : {}),
  };
  const runError = run.status === 'ok' || run.status === 'timeout' ? null : parsed.error;
  const error = table ? table.error : 'conntrack table not read (only the conntrack-events probe ran)';
  return {
    value,
    diagnostics: [...(table?.diagnostics ?? []), ...parsed.diagnostics, ...stray],
    probe: table?.probe ?? parsed.probe,
    error: [error, runError ? `conntrack-events: ${runError}` : null].filter((x) => x !== null).join('; ') || null,
  };
}

/**
 * A run parsed by `parse` (which may take turns of the event loop), as parseRunCached
 * does it: a failed run with output is still parsed, an unchanged text is not parsed again.
 */
async function parseRunAsync<T>(run: ProbeRun | undefined, cache: ParseCache | undefined, parse: (text: string, origin: string) => Promise<ParseResult<T>>): Promise<Parsed<T> | null> {
  if (!run) return null;
  const probe = summarize(run);
  const error = run.status === 'ok' ? null : failureReason(run);
  const text = run.result.stdout;
  if (run.status !== 'ok' && text.trim() === '') return { value: null, diagnostics: [], probe, error };
  const result = cache?.lookup<T>(run.id, text) ?? (await parse(text, run.id));
  cache?.store(run.id, text, result);
  return { value: result.value, diagnostics: result.diagnostics, probe, error };
}

/** {@link parseRunAsync} for a run whose stdout comes in pieces (an `ok` run; no cache: it needs the text). */
async function parsePieces<T>(run: ProbeRun, parse: (origin: string) => Promise<ParseResult<T>>): Promise<Parsed<T>> {
  return parsedOf(await parse(run.id), summarize(run), null);
}

/**
 * The parts with big texts (rules, flows), parsed in pieces of about `chunkChars`
 * characters with a turn of the event loop between (same results as the one-shot
 * parsers: the `chunked` and `pieces` readers of src/collect/parts.ts); null for the parts
 * whose parsers have neither. As {@link parsePart}: the first probe that parsed cleanly,
 * else the last that gave a result.
 */
async function chunkedPart(part: SnapshotPart, ctx: PartContext, chunkChars: number): Promise<Partial<PartFields> | null> {
  const ids = part === 'lb' || part === 'ciliumConntrack' ? [] : partProbes()[part];
  if (!ids.some(parsesInChunks)) return null;
  let chosen: Parsed<unknown> | null = null;
  for (const id of ids) {
    if (onDemandProbe(id)) continue;
    const run = ctx.byId.get(id);
    const entry = run ? parserOf(id) : undefined;
    if (!run || !entry) continue;
    chosen = ctx.job?.run === run ? await jobPart(ctx.job, entry, chunkChars) : await parseRunChunked(run, entry, ctx.cache, chunkChars);
    if (chosen.value && !chosen.error) break;
  }
  if (part === 'ipvs') return ipvsPart(chosen as Parsed<IpvsListing> | null, ctx.byId, ctx.cache);
  if (part === 'conntrack') return { conntrack: withConntrackEvents(chosen as Parsed<ConntrackTable> | null, ctx.byId.get('conntrack-events'), ctx.cache) };
  if (part === 'nft') return { nft: withKubeProxy6(chosen as Parsed<NftRuleset> | null, ctx.byId, ctx.cache) };
  return { [part]: chosen } as Partial<PartFields>;
}

/** The worker's parse of the job's run, or the main thread's when the worker failed (with a warning). */
async function jobPart(job: ConntrackJob, entry: ParserEntry, chunkChars: number): Promise<Parsed<unknown>> {
  const result = await conntrackJobResult(job, async () => {
    const own = await parseRunChunked(job.run, entry, undefined, chunkChars);
    return { value: own.value as ConntrackTable, diagnostics: own.diagnostics };
  });
  return { value: result.value, diagnostics: result.diagnostics, probe: summarize(job.run), error: null };
}

/** One run by its parser entry: from its file's bytes or its pieces when both can (a replay: never whole), else chunked, else whole (pieces joined). */
async function parseRunChunked(run: ProbeRun, entry: ParserEntry, cache: ParseCache | undefined, chunkChars: number): Promise<Parsed<unknown>> {
  const { stdoutPieces: pieces, stdoutPath: file } = run.result;
  const { pieces: fromPieces, chunked, file: fromFile } = entry;
  if (pieces && fromFile && file) return parsePieces(run, (origin) => fromFile(file, origin, turn));
  if (pieces && fromPieces) return parsePieces(run, (origin) => fromPieces(pieces, origin, chunkChars, turn, (p) => chunksOfPieces(p, chunkChars)));
  if (chunked) return (await parseRunAsync(run, cache, (text, origin) => chunked(text, origin, chunkChars, turn, (t) => chunksOf(t, chunkChars))))!;
  return parseRunCached(wholeRun(run), entry.parse, cache)!;
}

/** `run` with its stdout whole: joined when it came in pieces (the nft text, read only when nft -j failed). */
function wholeRun(run: ProbeRun | undefined): ProbeRun | undefined {
  const pieces = run?.result.stdoutPieces;
  if (!run || !pieces) return run;
  let stdout = '';
  for (const piece of pieces()) stdout += piece;
  return { ...run, result: { ...run.result, stdout } };
}

/**
 * Cilium's LB table: the raw BPF maps decoded when any of them was read (this works while
 * cilium-agent is down), else the agent's listings — `cilium-dbg bpf lb list` joined with
 * `cilium-dbg service list` for backend states ({@link mergeCiliumListings}); either listing
 * alone when only one answered. When both the maps and a listing are there, they are compared
 * and any difference is a warning and an `LbDisagreement` naming both.
 */
function lbPart(byId: ReadonlyMap<string, ProbeRun>, cache?: ParseCache, early?: EarlyParses, lazy = false): { lb: Parsed<LbTable> | null; lbMapsRead: string[] } {
  const mapProbes = partProbes().lb.filter((id) => catalog().probes.find((p) => p.id === id)?.parser === LB_MAPS_PARSER);
  const lbListRun = parseRunCached(byId.get('cilium-bpf-lb-list'), parseWith('cilium-bpf-lb-list'), cache) as Parsed<LbTable> | null;
  const serviceListRun = parseRunCached(byId.get('cilium-service-list'), parseWith('cilium-service-list'), cache) as Parsed<LbTable> | null;
  const listings = mergeCiliumListings(lbListRun?.value ?? null, serviceListRun?.value ?? null, { lbList: 'cilium-bpf-lb-list', serviceList: 'cilium-service-list' });
  const read = mapProbes.map((id) => byId.get(id)).filter((r): r is ProbeRun => r !== undefined && r.status === 'ok');
  if (read.length > 0) {
    // A replay's map dumps come in pieces (src/collect/parts.ts piecedProbes): decoded as read, never held whole.
    const lbMapsRead = read.map((r) => lbMapDumpOf(r).name.split('/').pop()!);
    const services = read.find((r) => r.id.endsWith('-services')) ?? read[0]!;
    const tallies = lazy && !listings.table ? early?.lbTallies : undefined;
    const counted = tallies ? tallyLbPart(read, (r) => (tallies.get(r) === undefined ? tallyLbMapRun(r) : tallies.get(r)!), summarize(services)) : null;
    if (counted) return { lb: counted, lbMapsRead };
    const results = read.map((r) => early?.lbMaps?.get(r) ?? decodeLbMapRun(r));
    if (lazy && !listings.table) return { lb: lazyLbPart(results, summarize(services)), lbMapsRead };
    const decoded = joinDecodedLbMaps(results);
    let table = decoded.value.table;
    const diagnostics = [...decoded.diagnostics];
    if (listings.table) {
      const cmp = compareMapsWithListings(table, listings.table, 'the pinned maps (bpftool)', 'cilium-agent listings');
      if (cmp.disagreements.length) table = { ...table, disagreements: cmp.disagreements };
      diagnostics.push(...cmp.diagnostics);
    }
    return { lb: { value: table, diagnostics, probe: summarize(services), error: null }, lbMapsRead };
  }
  const main = lbListRun?.value ? lbListRun : serviceListRun?.value ? serviceListRun : (lbListRun ?? serviceListRun);
  if (!main) return { lb: null, lbMapsRead: [] };
  const diagnostics = [...(lbListRun?.diagnostics ?? []), ...(serviceListRun?.diagnostics ?? []), ...listings.diagnostics];
  return { lb: { value: listings.table, diagnostics, probe: main.probe, error: listings.table ? null : main.error }, lbMapsRead: [] };
}

/** All diagnostics of a snapshot, for the diagnostics view and `show --diagnostics`. */
export function allDiagnostics(snapshot: NodeSnapshot): Diagnostic[] {
  const parts = [snapshot.addrs, snapshot.routes, snapshot.nft, snapshot.lb, snapshot.ciliumStatus, snapshot.iptables, snapshot.ip6tables, snapshot.iptablesLegacy, snapshot.conntrack, snapshot.ciliumConntrack, snapshot.ipvs, snapshot.ipset, snapshot.xtRecent ?? null, snapshot.api];
  const out: Diagnostic[] = [];
  for (const p of parts) if (p) out.push(...p.diagnostics);
  // An optional probe that fails (ipvsadm on a kernel without IPVS) is a fact, not an error.
  for (const p of parts) if (p?.error && p.probe) out.push(diagnostic(p.probe.optional ? 'info' : 'error', p.probe.id, 0, '', 'probe-failed', p.error));
  return out;
}
