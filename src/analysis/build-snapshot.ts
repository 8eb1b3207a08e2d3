/**
 * Builds a {@link NodeSnapshot} from probe runs and API objects text: runs each
 * probe's parser (named in `commands/probes.yaml`) and keeps diagnostics and
 * failures beside the values. Pure apart from the parsers it calls.
 */
import { tail } from '../errors.js';
import { diagnostic, type Diagnostic, type ParseResult } from '../model/diagnostics.js';
import type { NodeSnapshot, Parsed, ProbeSummary, SnapshotSource } from '../model/snapshot.js';
import { localAddresses } from '../model/iproute.js';
import type { ApiObjects } from '../model/k8s.js';
import type { NftRuleset } from '../model/nftables.js';
import type { LbTable } from '../model/cilium.js';
import { decodeCiliumLbMaps } from '../parsers/bpftool-lb-decode.js';
import { parseCiliumBpfLbList } from '../parsers/cilium-bpf-lb-list.js';
import { parseCiliumStatus } from '../parsers/cilium-status.js';
import { parseConntrack } from '../parsers/conntrack.js';
import { joinCiliumBackends, parseCiliumCt } from '../parsers/cilium-ct.js';
import { parseIpAddrJson, parseIpRouteJson } from '../parsers/ip-json.js';
import { parseIptablesSave } from '../parsers/iptables-save.js';
import { parseNftJson } from '../parsers/nft-json.js';
import { parseNftText } from '../parsers/nft-text.js';
import { parseIpsetList } from '../parsers/ipset.js';
import { parseIpvsadm } from '../parsers/ipvsadm.js';
import { parseK8sObjects } from '../parsers/k8s-objects.js';
import { catalog } from '../sources/catalog.js';
import type { ProbeRun } from '../sources/probe-runner.js';

/** What {@link buildSnapshot} needs besides the runs. `capturedAt`: ISO-8601 UTC. */
export interface SnapshotInput {
  readonly runs: readonly ProbeRun[];
  readonly apiText?: string;
  readonly apiOrigin?: string;
  readonly source: SnapshotSource;
  readonly capturedAt: string;
  /** Node name when known from elsewhere (API, manifest); else from `uname -n`. */
  readonly node?: string;
  /** Parses of earlier snapshots, reused when a probe printed the same text again (live refresh). */
  readonly cache?: ParseCache;
}

/**
 * Remembers, per probe id, the last text parsed and its result, so a refresh that
 * re-reads an unchanged ruleset does not parse it again. One per session.
 */
export class ParseCache {
  private readonly entries = new Map<string, { readonly text: string; readonly result: ParseResult<unknown> }>();

  /** The parse of `text` for probe `id`: the cached one when the text is unchanged. */
  parse<T>(id: string, text: string, parse: () => ParseResult<T>): ParseResult<T> {
    const hit = this.entries.get(id);
    if (hit && hit.text === text) return hit.result as ParseResult<T>;
    const result = parse();
    this.entries.set(id, { text, result });
    return result;
  }
}


/** Summarises a probe run for the snapshot (stderr cut to its last 2,000 characters). */
export function summarize(run: ProbeRun): ProbeSummary {
  return {
    id: run.id,
    argv: run.argv,
    status: run.status,
    exitCode: run.result.exitCode,
    startedAt: run.result.startedAt,
    durationMs: run.result.durationMs,
    stderrTail: tail(run.result.stderr),
    optional: catalog().probes.find((p) => p.id === run.id)?.optional ?? false,
  };
}

/** Why a probe produced nothing to parse, in words for a pane. */
export function failureReason(run: ProbeRun): string {
  switch (run.status) {
    case 'missing':
      return `${run.argv[0]} is not installed on the node`;
    case 'timeout':
      return `timed out after ${run.result.durationMs} ms`;
    case 'failed': {
      const last = run.result.stderr.trim().split('\n').pop() ?? '';
      return `exit code ${run.result.exitCode}${last ? `: ${last}` : ''}`;
    }
    default:
      return '';
  }
}

/**
 * Parses one run with `parse`. A probe that failed but printed something is still
 * parsed (partial output is data), with the failure kept in `error`.
 */
export function parseRunCached<T>(run: ProbeRun | undefined, parse: (text: string, origin: string) => ParseResult<T>, cache?: ParseCache): Parsed<T> | null {
  if (!run) return null;
  const probe = summarize(run);
  const error = run.status === 'ok' ? null : failureReason(run);
  if (run.status !== 'ok' && run.result.stdout.trim() === '') return { value: null, diagnostics: [], probe, error };
  const result = cache ? cache.parse(run.id, run.result.stdout, () => parse(run.result.stdout, run.id)) : parse(run.result.stdout, run.id);
  return { value: result.value, diagnostics: result.diagnostics, probe, error };
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
 * SSH host rarely knows its Kubernetes name), else the API Node named like the host
 * (`uname -n`), else the host name itself.
 */
export function resolveNodeName(hostName: string | undefined, addresses: readonly string[], api: ApiObjects | null): string | undefined {
  const nodes = api?.nodes ?? [];
  const own = new Set(addresses);
  const byAddress = nodes.find((n) => n.addresses.some((a) => (a.type === 'InternalIP' || a.type === 'ExternalIP') && own.has(a.address)));
  if (byAddress) return byAddress.meta.name;
  return nodes.find((n) => n.meta.name === hostName)?.meta.name ?? hostName;
}

/** Builds the snapshot. Never throws on bad probe output: that becomes diagnostics. */
export function buildSnapshot(input: SnapshotInput): NodeSnapshot {
  const cache = input.cache;
  const parseRun = <T>(run: ProbeRun | undefined, parse: (text: string, origin: string) => ParseResult<T>) => parseRunCached(run, parse, cache);
  const byId = new Map(input.runs.map((r) => [r.id, r]));
  const uname = versionLine(byId.get('uname'))?.split(/\s+/) ?? [];
  const toolVersions: Record<string, string> = {};
  for (const [tool, id] of [['iptables', 'iptables-version'], ['nft', 'nft-version'], ['conntrack', 'conntrack-version']] as const) {
    const v = versionLine(byId.get(id));
    if (v) toolVersions[tool] = v;
  }
  if (uname[1]) toolVersions.kernel = uname[1];
  let api: Parsed<ReturnType<typeof parseK8sObjects>['value']> | null = null;
  if (input.apiText !== undefined) {
    const r = parseK8sObjects(input.apiText, input.apiOrigin ?? 'api.json');
    api = { value: r.value, diagnostics: r.diagnostics, probe: null, error: null };
  }
  const addrs = parseRun(byId.get('ip-addr'), parseIpAddrJson);
  const ownAddresses = addrs?.value ? localAddresses(addrs.value).map((a) => a.address) : [];
  const lb = lbPart(byId, cache);
  const ciliumCt = parseRun(byId.get('cilium-ct-list'), parseCiliumCt);
  // The backend join depends on the LB table too, so it is not part of the cached parse.
  const ciliumConntrack = ciliumCt?.value ? { ...ciliumCt, value: joinCiliumBackends(ciliumCt.value, lb.lb?.value ?? null) } : ciliumCt;
  return {
    meta: {
      node: input.node ?? resolveNodeName(uname[0], ownAddresses, api?.value ?? null) ?? input.source.label,
      kernel: uname[1] ?? null,
      source: input.source,
      capturedAt: input.capturedAt,
      toolVersions,
    },
    probes: input.runs.map(summarize),
    addrs,
    routes: parseRun(byId.get('ip-route'), parseIpRouteJson),
    iptables: parseRun(byId.get('iptables-save'), (t, o) => parseIptablesSave(t, o, { family: 'ipv4' })),
    ip6tables: parseRun(byId.get('ip6tables-save'), (t, o) => parseIptablesSave(t, o, { family: 'ipv6' })),
    iptablesLegacy: parseRun(byId.get('iptables-legacy-save'), (t, o) => parseIptablesSave(t, o, { family: 'ipv4' })),
    nft: nftPart(byId.get('nft-json'), byId.get('nft-text'), cache),
    conntrack: parseRun(byId.get('conntrack'), parseConntrack),
    conntrackMax: parseIntegerRun(byId.get('conntrack-max')),
    conntrackCount: parseIntegerRun(byId.get('conntrack-count')),
    ipvs: parseRun(byId.get('ipvsadm-stats') ?? byId.get('ipvsadm'), parseIpvsadm),
    ipset: parseRun(byId.get('ipset'), parseIpsetList),
    api,
    ciliumConntrack,
    ...lb,
    ciliumStatus: parseRun(byId.get('cilium-status'), parseCiliumStatus),
  };
}

/** The BPF map probes, each with the map whose pin path its argv names. */
const LB_MAP_PROBES = ['bpf-lb4-services', 'bpf-lb4-backends', 'bpf-lb4-reverse-nat', 'bpf-lb6-services', 'bpf-lb6-backends', 'bpf-lb6-reverse-nat'];

/**
 * Cilium's LB table: the raw BPF maps decoded when any of them was read (this
 * works while cilium-agent is down), else `cilium-dbg bpf lb list`.
 */
function lbPart(byId: ReadonlyMap<string, ProbeRun>, cache?: ParseCache): { lb: Parsed<LbTable> | null; lbMapsRead: string[] } {
  const read = LB_MAP_PROBES.map((id) => byId.get(id)).filter((r): r is ProbeRun => r !== undefined && r.status === 'ok');
  if (read.length > 0) {
    const dumps = read.map((r) => ({ name: r.argv[r.argv.length - 1]!, text: r.result.stdout, origin: r.id }));
    const decoded = decodeCiliumLbMaps(dumps);
    const services = read.find((r) => r.id.endsWith('-services')) ?? read[0]!;
    return {
      lb: { value: decoded.value.table, diagnostics: decoded.diagnostics, probe: summarize(services), error: null },
      lbMapsRead: dumps.map((d) => d.name.split('/').pop()!),
    };
  }
  return { lb: parseRunCached(byId.get('cilium-bpf-lb-list'), parseCiliumBpfLbList, cache), lbMapsRead: [] };
}

/**
 * The nftables part: the JSON is the primary source; the text is parsed only when
 * the JSON is missing or failed (old nft without -j, a pasted capture).
 */
function nftPart(json: ProbeRun | undefined, text: ProbeRun | undefined, cache?: ParseCache): Parsed<NftRuleset> | null {
  const fromJson = parseRunCached(json, parseNftJson, cache);
  if (fromJson?.value && !fromJson.error) return fromJson;
  return parseRunCached(text, parseNftText, cache) ?? fromJson;
}

/** All diagnostics of a snapshot, for the diagnostics view and `show --diagnostics`. */
export function allDiagnostics(snapshot: NodeSnapshot): Diagnostic[] {
  const parts = [snapshot.addrs, snapshot.routes, snapshot.nft, snapshot.lb, snapshot.ciliumStatus, snapshot.iptables, snapshot.ip6tables, snapshot.iptablesLegacy, snapshot.conntrack, snapshot.ciliumConntrack, snapshot.ipvs, snapshot.ipset, snapshot.api];
  const out: Diagnostic[] = [];
  for (const p of parts) if (p) out.push(...p.diagnostics);
  // An optional probe that fails (ipvsadm on a kernel without IPVS) is a fact, not an error.
  for (const p of parts) if (p?.error && p.probe) out.push(diagnostic(p.probe.optional ? 'info' : 'error', p.probe.id, 0, '', 'probe-failed', p.error));
  return out;
}
