/**
 * What every command does before it prints: the source opened and read once, `--probe` and
 * `--cluster-domain` checked, and the document written to stdout terminal-safe.
 */
import { said, UserError } from '../errors.js';
import type { SnapshotPart } from '../model/snapshot.js';
import { checkAskedProbes } from '../collect/planned-runs.js';
import { loadSnapshot } from '../collect/load-snapshot.js';
import type { ClusterDomain } from '../dns/cluster-domain.js';
import type { Transport } from '../sources/transport.js';
import { openSource, type OpenedSource, type OpenHooks } from '../sources/open.js';
import { terminalSafe } from '../text/terminal-safe.js';
import { apiNamespace, type GlobalOptions } from './options.js';

/**
 * Writes a `show`/`trace`/`dig` document to stdout: JSON as built (its strings are escaped
 * by toJson), text and YAML made terminal-safe with their own line breaks kept.
 */
export function writeDocument(out: string, format: string | undefined): void {
  process.stdout.write(format === 'json' ? out : terminalSafe(out, 'document'));
}

/**
 * The snapshot parts `show WHAT` reads: `services` none (the API objects and the mode's cheap
 * evidence), `rules` the rulesets (with what their head and notes name: ipsets, `-m recent`, LB
 * maps, IPVS), not the conntrack tables; the others all.
 */
export function partsFor(what: string): readonly SnapshotPart[] | undefined {
  if (what === 'services') return [];
  if (what === 'rules') return ['iptables', 'ip6tables', 'iptablesLegacy', 'nft', 'ipset', 'xtRecent', 'lb', 'ipvs'];
  return undefined;
}

/** `--probe` ids, checked against the catalog (a UserError for an unknown one); empty when none. */
export function askedProbes(opts: GlobalOptions): string[] {
  const ids = [...(opts.probe ?? [])];
  checkAskedProbes(ids);
  return ids;
}

/** The cluster domain for DNS: `--cluster-domain` (a bad one is a UserError), else what the source shows, else the default. */
export async function clusterDomainFor(opts: GlobalOptions, transport: Transport): Promise<ClusterDomain> {
  // The DNS code (resolv.conf, the DNS wire format) loads only for the commands that ask.
  const { readClusterDomain } = await import('../dns/cluster-domain.js');
  try {
    return await readClusterDomain({ ...(opts.clusterDomain !== undefined ? { flag: opts.clusterDomain } : {}), transport });
  } catch (e) {
    throw new UserError(e instanceof UserError ? e.said : said('ue.detail', { detail: (e as Error).message }), said('ue.clusterDomain.hint'));
  }
}

/** Probe parameters from the options (`--bpf-root`). */
export function params(opts: GlobalOptions): Record<string, string | undefined> {
  return { bpfRoot: opts.bpfRoot };
}

/** What Session and loadSnapshot need from an opened source (with `-n`'s namespace unless `-A`). */
export function sessionSource(source: OpenedSource, opts: GlobalOptions) {
  return {
    ...apiNamespace(opts),
    transport: source.transport,
    live: source.live,
    ...(source.apiText !== undefined ? { apiText: source.apiText } : {}),
    ...(source.apiOrigin ? { apiOrigin: source.apiOrigin } : {}),
    ...(source.api ? { api: source.api } : {}),
    ...(source.ciliumAgent ? { ciliumAgent: source.ciliumAgent } : {}),
  };
}

/** What {@link loadOnce} reads and how; every field optional (the whole snapshot of the source as opened). */
export interface LoadOnceOptions {
  /** On-demand probes to run too (`conntrack-events`). */
  readonly onDemand?: readonly string[];
  /** Only these parts' probes are read (`loadSnapshot`'s `parts`). */
  readonly parts?: readonly SnapshotPart[];
  /** Keep every namespace's API objects whatever `-n` says (the caller narrows its output). */
  readonly allApi?: boolean;
  /** The source as read instead of as opened (a replay that reads less, src/cli/trace-load.ts). */
  readonly reader?: (source: OpenedSource) => OpenedSource;
  /** iptables and nft -j chains parsed on first read (a reader of a few chains: src/collect/build-snapshot.ts `lazyRules`). */
  readonly lazyRules?: boolean;
  /** {@link openSource}'s hooks (a replay's api.json handed to `trace`'s worker). */
  readonly hooks?: OpenHooks;
  /** `'rules'`: only what `show rules` reads of the API objects is parsed (src/parsers/k8s-rules-api.ts). */
  readonly apiFor?: 'rules';
}

/** One snapshot of the source, read as `load` says ({@link LoadOnceOptions}). Returns the source opened and the snapshot. */
export async function loadOnce(opts: GlobalOptions, load: LoadOnceOptions = {}) {
  const { onDemand = [], parts, allApi = false, reader, lazyRules = false, hooks, apiFor } = load;
  const probes = askedProbes(opts);
  // allApi: a live cluster lists every namespace too (`-n` then only places a --node pod).
  const source = await openSource(allApi ? { ...opts, apiAllNamespaces: true } : opts, hooks);
  const read = reader ? reader(source) : source;
  const { snapshot } = await loadSnapshot({ ...sessionSource(read, allApi ? { ...opts, allNamespaces: true } : opts), params: params(opts), onDemand, probes, ...(parts ? { parts } : {}), ...(lazyRules ? { lazyRules } : {}), ...(apiFor ? { apiFor } : {}) });
  return { source, snapshot };
}
