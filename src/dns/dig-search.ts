/**
 * `nodescope dig --search NAME` (also `dig +search NAME`, dig(1)'s spelling): any name,
 * expanded with a resolv.conf the way the pod's glibc stub resolver expands it
 * (`dnsSearchPlan`: ndots, the search list in order, a trailing dot making the name
 * absolute — coredns#2289 and #2133 are the cost of that expansion seen from the server),
 * each question sent for real in order through the source's DNS path, each with its answer,
 * and the count of questions.
 *
 * Which resolv.conf: `--resolv-conf FILE` (origin `pod`); else, by default, a Pod's as
 * kubelet writes it for `dnsPolicy: ClusterFirst` (origin `kubernetes-default`, built by
 * {@link podResolvChoice} from what the source shows: the namespace asked for, the cluster
 * domain, the kube-dns ClusterIP, the node's search list — each part the source does not show
 * named in the run's `podView`); or, asked for, the node's own (origin `node`: what a
 * hostNetwork Pod with `dnsPolicy: Default` has). The output says which.
 */
import { readFileSync } from 'node:fs';
import { kubernetesDefaultResolvConf } from '../analysis/dns-search.js';
import { parseResolvConf } from '../parsers/resolv-conf.js';
import { BugError, said, UsageError, UserError } from '../errors.js';
import type { DnsSearchRun, PodResolvView, ResolvOrigin } from '../model/dns.js';
import type { ClusterDomain } from '../analysis/cluster-domain.js';
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
 * What a Pod's resolv.conf is built from (kubelet's ClusterFirst rules): its `namespace`
 * (`namespaceGiven` false when `default` is taken), the `clusterDomain` with its source, and
 * the node's resolv.conf (`nodeResolv`, null when the source could not read it: kubelet
 * appends its search domains, which are then unknown).
 */
export interface PodResolvParts {
  readonly namespace: string;
  readonly namespaceGiven: boolean;
  readonly clusterDomain: ClusterDomain;
  readonly nodeResolv: ResolvConf | null;
}

/**
 * Options of {@link digSearch}: `resolv` a given resolv.conf (a file, or the node's), else
 * `pod` builds a Pod's; `server`/`port` override the name servers (`--server`); `api` names
 * the kube-dns Service, the Pod's name server.
 */
export interface DigSearchOptions {
  readonly name: string;
  readonly dns: DnsTransport;
  readonly resolv: ResolvChoice | null;
  readonly pod?: PodResolvParts;
  readonly api?: ApiObjects | null;
  readonly server?: string;
  readonly port?: number;
  readonly query?: DnsQueryOptions;
}

/**
 * A ClusterFirst Pod's resolv.conf from `parts` (`kubernetesDefaultResolvConf`: search
 * `<ns>.svc.<domain> svc.<domain> <domain>` + the node's search list, ndots:5) with the
 * name server `--server`, else the kube-dns Service's ClusterIP; and what it was built from.
 * Throws `UserError` when neither names a server (the API has no kube-dns Service).
 */
export function podResolvChoice(parts: PodResolvParts, api: ApiObjects | null, server?: string, port?: number): ResolvChoice & { server: { address: string; port: number }; view: PodResolvView } {
  const s = chooseServer(api, server, port);
  const nodeSearch = parts.nodeResolv ? parts.nodeResolv.search : null;
  return {
    conf: kubernetesDefaultResolvConf(parts.namespace, parts.clusterDomain.name, s.address, nodeSearch ?? []),
    origin: 'kubernetes-default',
    server: { address: s.address, port: s.port },
    view: {
      namespace: parts.namespace, namespaceGiven: parts.namespaceGiven, clusterDomain: parts.clusterDomain.name, clusterDomainSource: parts.clusterDomain.source,
      nameserverService: s.service, nodeSearch,
    },
  };
}

/**
 * Runs the search expansion of `name` and returns the run (with `podView` for a Pod's
 * resolv.conf; when neither `--server` nor the API names a Pod's name server, the node's
 * resolv.conf with `podViewMissing`). Throws `UserError` for an invalid name, or when a Pod's
 * server is unknown and the node's resolv.conf was not read, and `BugError` when neither
 * `resolv` nor `pod` is given.
 */
export async function digSearch(o: DigSearchOptions): Promise<DnsSearchRun> {
  const query = o.query ? { query: o.query } : {};
  if (o.resolv !== null) {
    return runSearch(o.dns, o.resolv.conf, o.name, { resolvOrigin: o.resolv.origin, ...(o.server !== undefined ? { server: o.server } : {}), ...(o.port !== undefined ? { port: o.port } : {}), ...query });
  }
  if (!o.pod) throw new BugError('digSearch: neither a resolv.conf nor the parts of a Pod\'s');
  let pod: ReturnType<typeof podResolvChoice>;
  try {
    pod = podResolvChoice(o.pod, o.api ?? null, o.server, o.port);
  } catch (e) {
    // No name server for a Pod (no kube-dns Service): the node's own view, said to be that, rather than nothing.
    if (!(e instanceof UserError) || !o.pod.nodeResolv) throw e;
    const run = await runSearch(o.dns, o.pod.nodeResolv, o.name, { resolvOrigin: 'node', ...query });
    return { ...run, podViewMissing: 'nameserver' };
  }
  const run = await runSearch(o.dns, pod.conf, o.name, { resolvOrigin: pod.origin, server: pod.server.address, port: pod.server.port, ...query });
  return { ...run, podView: pod.view };
}

/**
 * The node's resolv.conf through the source (`resolv-conf` probe), or null when it could not
 * be read (a failed read is not an error here: the search says what it did not know).
 */
export async function nodeResolvConf(transport: Transport): Promise<ResolvConf | null> {
  return (await readNodeResolvConf(transport).catch(() => null))?.conf ?? null;
}
