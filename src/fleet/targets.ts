/**
 * Which nodes a fleet capture reads: through the API, every Node (or those `--nodes`
 * names, or those `--selector` matches); over SSH, the hosts of `--ssh a,b,c` or of
 * `--ssh-file FILE` (one per line, `#` comments). Pure except {@link listClusterNodes}.
 */
import { said, UserError } from '../errors.js';
import type { KubeContext } from '../sources/k8s-client.js';

/** `a,b, c` → `['a','b','c']` (empty items dropped, order kept, duplicates once). */
export function splitList(text: string): string[] {
  return [...new Set(text.split(',').map((s) => s.trim()).filter((s) => s !== ''))];
}

/**
 * The SSH targets of an `--ssh-file`: one `[user@]host[:port]` per line; blank lines and
 * text after `#` are ignored. Throws `UserError` when the file names none.
 */
export function parseSshFile(text: string, origin: string): string[] {
  const hosts = text.split(/\r?\n/).map((l) => l.replace(/#.*$/, '').trim()).filter((l) => l !== '');
  if (hosts.length === 0) throw new UserError(said('ue.fleet.sshFileEmpty', { origin }), said('ue.fleet.sshFileHint'));
  return [...new Set(hosts)];
}

/** A Node as listed: its name and labels. */
export interface ListedNode {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
}

/**
 * The nodes chosen from `listed`: all of them; or exactly `names` (each must exist, else
 * `UserError` naming the missing ones). The selector is applied by the API server
 * (`labelSelector`), so `listed` is already filtered by it. Sorted by name.
 */
export function chooseNodes(listed: readonly ListedNode[], names: readonly string[] | undefined): string[] {
  const all = listed.map((n) => n.name).sort();
  if (names === undefined) return all;
  const have = new Set(all);
  const missing = names.filter((n) => !have.has(n));
  if (missing.length) throw new UserError(said('ue.fleet.noSuchNodes', { list: missing.join(', ') }), said('ue.fleet.nodesAre', { list: `${all.slice(0, 10).join(', ')}${all.length > 10 ? ', …' : ''}` }));
  return [...names].sort();
}

/**
 * Lists the cluster's Nodes (`GET /api/v1/nodes`, with `labelSelector` when given). Throws
 * `UserError` for a 403 (naming `list nodes`) or a bad selector, `TransportError`-like
 * errors from the API connection.
 */
export async function listClusterNodes(kube: KubeContext, selector: string | undefined): Promise<ListedNode[]> {
  // client-node loads only when the API is used (it costs ~400 ms at start).
  const { k8sRequest, explainK8sError } = await import('../sources/k8s-client.js');
  let text: string;
  try {
    text = await k8sRequest(kube, 'GET', '/api/v1/nodes', selector ? { query: { labelSelector: selector } } : {});
  } catch (e) {
    throw explainK8sError(e, { verb: 'list', resource: 'nodes' }, kube.server);
  }
  const items = (JSON.parse(text) as { items?: { metadata?: { name?: string; labels?: Record<string, string> } }[] }).items ?? [];
  return items.filter((i) => typeof i.metadata?.name === 'string').map((i) => ({ name: i.metadata!.name!, labels: i.metadata!.labels ?? {} }));
}
