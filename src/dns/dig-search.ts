/**
 * `nodescope dig --search NAME` (also `dig +search NAME`, dig(1)'s spelling): any name,
 * expanded with a resolv.conf the way the pod's glibc stub resolver expands it
 * (`dnsSearchPlan`: ndots, the search list in order, a trailing dot making the name
 * absolute — coredns#2289 and #2133 are the cost of that expansion seen from the server),
 * each question sent for real in order through the source's DNS path, each with its answer,
 * and the count of questions.
 *
 * Which resolv.conf: `--resolv-conf FILE` (origin `pod`), else the one the source captured
 * (`resolv-conf` probe, the node's: what a hostNetwork pod with `dnsPolicy: Default` has;
 * origin `node`), else the kubelet's ClusterFirst default for namespace `default` with the
 * kube-dns ClusterIP (origin `kubernetes-default`). The output says which.
 */
import { readFileSync } from 'node:fs';
import { kubernetesDefaultResolvConf } from '../analysis/dns-search.js';
import { parseResolvConf } from '../parsers/resolv-conf.js';
import { said, UsageError, UserError } from '../errors.js';
import type { DnsSearchRun, ResolvOrigin } from '../model/dns.js';
import type { ApiObjects } from '../model/k8s.js';
import type { ResolvConf } from '../model/resolv.js';
import { chooseServer, readNodeResolvConf } from './resolve.js';
import { runSearch } from './search.js';
import type { DnsQueryOptions, DnsTransport } from './transport.js';
import type { Transport } from '../sources/transport.js';

/** dig(1)-style words of the command line: the one name, and whether `+search`/`+nosearch` asked for the search list. */
export function digWords(words: readonly string[]): { name: string; search: boolean | null } {
  let search: boolean | null = null;
  const names: string[] = [];
  for (const w of words) {
    if (w === '+search') search = true;
    else if (w === '+nosearch') search = false;
    else if (w.startsWith('+')) throw new UsageError(said('ue.dig.option', { word: w }), said('ue.dig.optionHint'));
    else names.push(w);
  }
  if (names.length !== 1) throw new UsageError(names.length === 0 ? said('ue.dig.needsName') : said('ue.dig.oneName', { n: names.length, names: names.join(' ') }), said('ue.dig.eg'));
  return { name: names[0]!, search };
}

/**
 * `--resolv-conf FILE` read and parsed (origin `pod`: the resolv.conf a pod would have).
 * Throws `UserError` when the file cannot be read or holds nothing resolv.conf(5) knows.
 */
export function readResolvConfFile(file: string): ResolvChoice {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new UserError(said('ue.dig.resolvRead', { file, detail: (e as Error).message }), said('ue.dig.resolvHint'));
  }
  const parsed = parseResolvConf(text, file);
  const errors = parsed.diagnostics.filter((d) => d.severity === 'error');
  if (errors.length > 0) throw new UserError(said('ue.dig.resolvLine', { file, line: errors[0]!.line, detail: errors[0]!.message }), said('ue.dig.resolvMan'));
  return { conf: parsed.value, origin: 'pod' };
}

/** A resolv.conf with where it came from. */
export interface ResolvChoice {
  readonly conf: ResolvConf;
  readonly origin: ResolvOrigin;
}

/**
 * Options of {@link digSearch}: `resolv` when a file or the capture gave one (null: the
 * Kubernetes default for namespace `default`); `server`/`port` override its name servers
 * (`--server`); `api` names the kube-dns Service for the default.
 */
export interface DigSearchOptions {
  readonly name: string;
  readonly dns: DnsTransport;
  readonly resolv: ResolvChoice | null;
  readonly api?: ApiObjects | null;
  readonly server?: string;
  readonly port?: number;
  readonly query?: DnsQueryOptions;
  /** The cluster domain of the Kubernetes default resolv.conf (`--cluster-domain`, else the detected one); default `cluster.local`. */
  readonly clusterDomain?: string;
}

/**
 * Runs the search expansion of `name` and returns the run. Throws `UserError` for an
 * invalid name, or when no resolv.conf is given and the API names no kube-dns Service.
 */
export async function digSearch(o: DigSearchOptions): Promise<DnsSearchRun> {
  let resolv = o.resolv;
  let server = o.server;
  let port = o.port;
  if (resolv === null) {
    const s = chooseServer(o.api ?? null, o.server, o.port);
    resolv = { conf: kubernetesDefaultResolvConf('default', o.clusterDomain ?? 'cluster.local', s.address), origin: 'kubernetes-default' };
    server = s.address;
    port = s.port;
  }
  return runSearch(o.dns, resolv.conf, o.name, {
    resolvOrigin: resolv.origin,
    ...(server !== undefined ? { server } : {}),
    ...(port !== undefined ? { port } : {}),
    ...(o.query ? { query: o.query } : {}),
  });
}

/**
 * The resolv.conf a search uses when no file is given: the one the source captured or
 * reads (`resolv-conf` probe; origin `node`), else null (then {@link digSearch} takes the
 * Kubernetes default). A failed read is null: the search still runs, and says which
 * resolv.conf it used.
 */
export async function sourceResolvChoice(transport: Transport): Promise<ResolvChoice | null> {
  const read = await readNodeResolvConf(transport).catch(() => null);
  return read ? { conf: read.conf, origin: 'node' } : null;
}
