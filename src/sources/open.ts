/**
 * Chooses the source from the command-line options shared by every command:
 * `--local [--netns NAME]`, `--replay DIR`, `--ssh [user@]host[:port]`, `--node NAME`
 * (kubectl-debug), `--api-file FILE`; none of them → the embedded default capture.
 * Live cluster sources also read the API (`--kubeconfig`, `--context`, `-n/--namespace`,
 * `-A`): `--node`
 * always, `--ssh` when a kubeconfig exists.
 */
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { said, UserError, type Said } from '../errors.js';
import { ApiFileFeed } from './api-file.js';
import { catalog } from './catalog.js';
import { defaultCaptureDir } from '../paths.js';
// The live sources (client-node ~400 ms, ssh2 ~50 ms to import) load only when asked for.
import type { ApiFeed, ClusterApi } from './cluster-api.js';
import type { KubeContext, KubeOptions } from './k8s-client.js';
import { assertNetnsExists, LocalTransport } from './local.js';
import { ReplayTransport } from './replay.js';
import { bundleFilePath } from './bundle.js';
import type { Transport } from './transport.js';
import { DEFAULT_INTERVAL_MS } from './refresh-interval.js';
import { namespaceOf } from './namespace-of.js';

/** Source options as parsed from the command line. */
export interface SourceOptions {
  readonly local?: boolean;
  readonly netns?: string;
  readonly replay?: string;
  readonly apiFile?: string;
  /** `--ssh [user@]host[:port]` (or a Host alias of ~/.ssh/config). */
  readonly ssh?: string;
  /** `--node NAME`: a node-debug pod on that node. */
  readonly node?: string;
  readonly context?: string;
  readonly namespace?: string;
  /** `-A/--all-namespaces`: every namespace, whatever `-n` says (as kubectl). */
  readonly allNamespaces?: boolean;
  /**
   * Read every namespace's API objects from a live cluster even with `-n` (which then only places
   * the `--node` pod): for a command that narrows its own output (`diagnose -n`). Where RBAC
   * forbids a cluster-wide list, that kind is read in `-n`'s namespace and a line says so.
   */
  readonly apiAllNamespaces?: boolean;
  /** `--kubeconfig FILE`: instead of KUBECONFIG, else ~/.kube/config. */
  readonly kubeconfig?: string;
  readonly acceptNewHostKey?: boolean;
  /** Debug pod image for `--node`. */
  readonly image?: string;
  /** `--pod-deadline`: the debug pod's `activeDeadlineSeconds` (seconds). */
  readonly podDeadline?: number;
  /** `--interval` (seconds; default {@link DEFAULT_INTERVAL_MS}): how often a live `--api-file` is checked for changes. */
  readonly interval?: number;
}

/** An opened source: the transport, whether it is live, and the API objects (text, or a live feed). */
export interface OpenedSource {
  readonly transport: Transport;
  readonly live: boolean;
  /** The API objects text when opened (for a live feed: its first list). */
  readonly apiText: string | undefined;
  readonly apiOrigin: string | undefined;
  /**
   * Live API objects: the cluster's (list + watch) for `--node` and `--ssh` with a
   * kubeconfig, or `--api-file`'s, re-read when the file changes.
   */
  readonly api?: ApiFeed;
  /** Runs the `where: cilium-agent` probes, when the node has a Cilium agent pod (or the bundle recorded them). */
  readonly ciliumAgent?: Transport;
}

/** Hooks of {@link openSource}: where progress and warnings go (default: stderr). */
export interface OpenHooks {
  readonly progress?: (message: string) => void;
  /**
   * A replay's api.json (its absolute path, and its origin for diagnostics) handed to this
   * instead of read: the feed it returns is the source's `api` (`trace` narrows the file on
   * a worker: src/cli/trace-api.ts). Not called for `--api-file` or a bundle without one.
   */
  readonly replayApi?: (file: string, origin: string) => ApiFeed;
  /**
   * `--api-file` checked by its whole parse, kept for the first snapshot (`ApiFileFeedOptions.parseAtOpen`):
   * for the TUI, whose first snapshot parses the objects anyway; one-shot commands parse them elsewhere.
   */
  readonly parseApiFileAtOpen?: boolean;
}

export { namespaceOf } from './namespace-of.js';

/** loadKube's options from the command line's `--kubeconfig`, `--context`, `-n`/`-A`. */
function kubeOptions(options: SourceOptions): KubeOptions {
  const namespace = namespaceOf(options);
  return { ...(options.kubeconfig !== undefined ? { kubeconfig: options.kubeconfig } : {}), ...(options.context ? { context: options.context } : {}), ...(namespace !== undefined ? { namespace } : {}) };
}

/** Opens the cluster API reader for the options (every namespace with `apiAllNamespaces`), saying which kinds RBAC narrowed to `-n`. */
async function openClusterApi(kube: KubeContext, options: SourceOptions, progress: (m: string) => void): Promise<ClusterApi> {
  const { ClusterApi } = await import('./cluster-api.js');
  const api = await ClusterApi.open(kube, options.apiAllNamespaces ? { allNamespaces: true } : {});
  const narrowed = api.narrowedKinds();
  if (narrowed.length > 0) progress(`${narrowed.join(', ')}: namespace ${kube.namespace} only — listing every namespace is forbidden by RBAC, so other namespaces' Services are unknown here`);
  return api;
}

function kubeconfigPresent(): boolean {
  const env = process.env['KUBECONFIG'];
  if (env) return env.split(path.delimiter).some((f) => f !== '' && existsSync(f));
  return existsSync(path.join(os.homedir(), '.kube', 'config'));
}

/** The Node of `api` owning one of `names` as an address or name (an SSH host rarely knows its Node name). */
function nodeNameFor(api: ClusterApi, names: readonly string[]): string | undefined {
  const list = JSON.parse(api.text()) as { items: { kind: string; metadata: { name: string } }[] };
  for (const n of list.items.filter((o) => o.kind === 'Node')) {
    const facts = api.node(n.metadata.name);
    if (names.includes(n.metadata.name) || facts?.addresses.some((a) => names.includes(a.address))) return n.metadata.name;
  }
  return undefined;
}

export { checkApiFileText } from './api-file.js';

/** Closes everything a source opened (transport, Cilium agent transport, API watches). */
export async function closeSource(source: OpenedSource): Promise<void> {
  await source.transport.close();
  await source.ciliumAgent?.close();
  await source.api?.close();
}

/**
 * Opens the source the options name. Throws `UserError` for contradictory options, an
 * unreadable `--api-file`, a `--netns` that does not exist, a refused host key, RBAC denials and the like; what
 * {@link ReplayTransport} throws for a bad bundle; `TransportError` when a live
 * source cannot be reached.
 */
export async function openSource(options: SourceOptions, hooks: OpenHooks = {}): Promise<OpenedSource> {
  const progress = hooks.progress ?? ((m: string) => process.stderr.write(`nodescope: ${m}\n`));
  const chosen = [
    options.local || options.netns ? '--local/--netns' : null,
    options.replay ? '--replay' : null,
    options.ssh ? '--ssh' : null,
    options.node ? '--node' : null,
  ].filter((x): x is string => x !== null);
  if (chosen.length > 1) throw new UserError(said('err.oneSource', { sources: chosen.slice(1).reduce<string | Said>((a, b) => said('ue.and', { a, b }), chosen[0]!) }), said('err.oneSource.hint'));
  // --api-file: read now (a bad file is refused before anything opens), followed when it changes.
  const fileFeed = options.apiFile ? ApiFileFeed.open(options.apiFile, { intervalMs: options.interval !== undefined ? options.interval * 1000 : DEFAULT_INTERVAL_MS, ...(hooks.parseApiFileAtOpen ? { parseAtOpen: true } : {}) }) : undefined;
  let apiText = fileFeed?.text();
  let apiOrigin = fileFeed?.origin;
  const withFile = (s: OpenedSource): OpenedSource => (fileFeed && !s.api ? { ...s, api: fileFeed } : s);
  if (options.local || options.netns) {
    // The name is checked against the wrapper's pattern (constructor) before it becomes a path.
    const transport = new LocalTransport({ ...(options.netns ? { netns: options.netns } : {}) });
    if (options.netns) assertNetnsExists(options.netns);
    return withFile({ transport, live: true, apiText, apiOrigin });
  }
  if (options.node) return withFile(await openNode(options, options.node, apiText, apiOrigin, progress));
  if (options.ssh) return withFile(await openSshSource(options, options.ssh, apiText, apiOrigin, progress));
  const replay = new ReplayTransport(options.replay ?? defaultCaptureDir());
  let handed: ApiFeed | undefined;
  if (apiText === undefined) {
    const api = replay.bundle.manifest.api;
    apiOrigin = api ? `${replay.bundle.dir}/${api.file}` : undefined;
    const file = api && hooks.replayApi ? bundleFilePath(replay.bundle.dir, api.file, 'api.file') : undefined;
    if (file !== undefined && apiOrigin !== undefined) handed = hooks.replayApi!(file, apiOrigin);
    else apiText = replay.apiText();
  }
  // A bundle that recorded Cilium agent probes replays them through the same transport.
  const agentProbes = new Set(catalog().probes.filter((p) => p.where === 'cilium-agent').map((p) => p.id));
  const recordedAgent = replay.bundle.manifest.probes.some((p) => agentProbes.has(p.id));
  return withFile({ transport: replay, live: false, apiText, apiOrigin, ...(handed ? { api: handed } : {}), ...(recordedAgent ? { ciliumAgent: replay } : {}) });
}

async function openNode(options: SourceOptions, node: string, apiText: string | undefined, apiOrigin: string | undefined, progress: (m: string) => void): Promise<OpenedSource> {
  const [{ loadKube }, { openKubectlDebug }, { findCiliumAgent }] = await Promise.all([
    import('./k8s-client.js'),
    import('./kubectl-debug.js'),
    import('./cilium-agent.js'),
  ]);
  const kube = loadKube(kubeOptions(options));
  // The API first: an RBAC problem stops before a pod exists.
  const api = apiText === undefined ? await openClusterApi(kube, options, progress) : undefined;
  try {
    const transport = await openKubectlDebug({ kube, node, ...(options.image ? { image: options.image } : {}), ...(options.podDeadline ? { deadlineSeconds: options.podDeadline } : {}), onProgress: progress });
    const ciliumAgent = await findCiliumAgent(kube, node).catch(() => undefined);
    return {
      transport,
      live: true,
      apiText: api ? api.text() : apiText,
      apiOrigin: api ? api.origin : apiOrigin,
      ...(api ? { api } : {}),
      ...(ciliumAgent ? { ciliumAgent } : {}),
    };
  } catch (e) {
    await api?.close();
    throw e;
  }
}

async function openSshSource(options: SourceOptions, target: string, apiText: string | undefined, apiOrigin: string | undefined, progress: (m: string) => void): Promise<OpenedSource> {
  const explicit = options.context !== undefined || options.kubeconfig !== undefined || namespaceOf(options) !== undefined;
  const [{ loadKube }, { openSsh }, { findCiliumAgent }] = await Promise.all([
    import('./k8s-client.js'),
    import('./ssh.js'),
    import('./cilium-agent.js'),
  ]);
  let api: ClusterApi | undefined;
  let kube: KubeContext | undefined;
  if (apiText === undefined && (explicit || kubeconfigPresent())) {
    try {
      kube = loadKube(kubeOptions(options));
      api = await openClusterApi(kube, options, progress);
    } catch (e) {
      if (explicit) throw e;
      progress(`reading the node without API objects: ${(e as Error).message}`);
    }
  }
  try {
    const transport = await openSsh({ target, ...(options.acceptNewHostKey ? { acceptNewHostKey: true } : {}) });
    const nodeName = api && kube ? nodeNameFor(api, [transport.endpoint.hostName, transport.endpoint.alias]) : undefined;
    if (api && kube) {
      // The kubeconfig is not tied to the SSH host: say which cluster the objects come from.
      progress(`API objects from context ${kube.context} (${kube.server})${nodeName ? `, node ${nodeName}` : `; no Node there has the address ${transport.endpoint.hostName} — if it is another cluster, use --context or --api-file`}`);
    }
    const ciliumAgent = nodeName && kube ? await findCiliumAgent(kube, nodeName).catch(() => undefined) : undefined;
    return {
      transport,
      live: true,
      apiText: api ? api.text() : apiText,
      apiOrigin: api ? api.origin : apiOrigin,
      ...(api ? { api } : {}),
      ...(ciliumAgent ? { ciliumAgent } : {}),
    };
  } catch (e) {
    await api?.close();
    throw e;
  }
}
