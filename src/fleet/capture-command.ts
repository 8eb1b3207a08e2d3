/**
 * `nodescope fleet capture` as the command line runs it: chooses the nodes and how each is
 * opened, then {@link captureFleet}.
 *
 * Through the API (default): the API objects are read once (list, without nodescope's own
 * pods), leftovers of earlier runs are swept once, and each node is read through one
 * short-lived node-debug pod — the pod `--node` creates (src/sources/kubectl-debug.ts:
 * hostNetwork, hostPID, privileged, the node's root at /host, tolerating every taint,
 * `activeDeadlineSeconds`) plus the label `nodescope/run=<run id>` — created when the
 * node's turn comes and deleted when its capture ends, so at most `--parallel` privileged
 * pods exist at once. Not a DaemonSet: the apiserver refuses `activeDeadlineSeconds` in a
 * DaemonSet's pod template (apps validation: "activeDeadlineSeconds in DaemonSet is not
 * Supported") and DaemonSets have no TTL, so a DaemonSet would outlive a killed client;
 * its pods also run on every chosen node at once, whatever the parallelism.
 *
 * Over SSH (`--ssh a,b` / `--ssh-file FILE`): one SSH connection per host (the `--ssh`
 * source), API objects from `--api-file` or, when a kubeconfig exists, the cluster.
 */
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { withoutNodescopePods } from '../collect/capture.js';
import { said, UserError } from '../errors.js';
import { currentRun } from '../run-record.js';
import type { KubeContext } from '../sources/k8s-client.js';
import { RUN_LABEL } from '../sources/k8s-debug-pod.js';
import type { OpenedSource } from '../sources/open.js';
import type { FleetManifest } from './bundle.js';
import { captureFleet } from './capture.js';
import { chooseNodes, listClusterNodes, parseSshFile, splitList } from './targets.js';

/** The command line's options of `fleet capture`. Times in seconds. */
export interface FleetCaptureArgs {
  readonly output: string;
  readonly force?: boolean;
  readonly nodes?: string;
  readonly selector?: string;
  readonly parallel: number;
  readonly nodeTimeout: number;
  readonly ssh?: string;
  readonly sshFile?: string;
  readonly acceptNewHostKey?: boolean;
  readonly apiFile?: string;
  readonly context?: string;
  readonly kubeconfig?: string;
  readonly namespace?: string;
  readonly image?: string;
  readonly podDeadline?: number;
  readonly bpfRoot?: string;
}

/** The entries a fleet bundle writes in its directory. */
const FLEET_ENTRIES = ['fleet.json', 'api.json', 'nodes'] as const;

/**
 * Makes `dir` ready for a fleet bundle: missing or empty is fine; otherwise `UserError`
 * unless `force`, which removes the fleet's own entries (fleet.json, api.json, nodes/).
 */
export function prepareFleetDir(dir: string, force: boolean): void {
  if (!existsSync(dir)) return;
  if (!statSync(dir).isDirectory()) throw new UserError(said('ue.dir.notDir', { dir }), said('ue.dir.nameEmpty'));
  const entries = readdirSync(dir);
  if (entries.length === 0) return;
  if (!force) throw new UserError(said('ue.dir.holds', { dir, what: said(entries.includes('fleet.json') ? 'ue.dir.holdsFleet' : 'ue.dir.notEmptyPlain') }), said('ue.dir.forceFleet'));
  for (const name of FLEET_ENTRIES) rmSync(path.join(dir, name), { recursive: true, force: true });
}

/** Opens one node through a node-debug pod (the `--node` source), with the fleet's run label and no per-node sweep. */
function debugPodOpener(kube: KubeContext, args: FleetCaptureArgs, runId: string): (name: string) => Promise<OpenedSource> {
  return async (name) => {
    const [{ openKubectlDebug }, { findCiliumAgent }] = await Promise.all([import('../sources/kubectl-debug.js'), import('../sources/cilium-agent.js')]);
    const transport = await openKubectlDebug({
      kube, node: name, sweep: false, labels: { [RUN_LABEL]: runId },
      ...(args.image ? { image: args.image } : {}),
      ...(args.podDeadline ? { deadlineSeconds: args.podDeadline } : {}),
    });
    const ciliumAgent = await findCiliumAgent(kube, name).catch(() => undefined);
    return { transport, live: true, apiText: undefined, apiOrigin: undefined, ...(ciliumAgent ? { ciliumAgent } : {}) };
  };
}

/** The API objects once, without nodescope's own pods, and the kube context. */
async function readApi(kube: KubeContext): Promise<string> {
  const { ClusterApi } = await import('../sources/cluster-api.js');
  const api = await ClusterApi.open(kube);
  try {
    return withoutNodescopePods(api.text());
  } finally {
    await api.close();
  }
}

async function loadKubeFor(args: FleetCaptureArgs): Promise<KubeContext> {
  const { loadKube } = await import('../sources/k8s-client.js');
  return loadKube({ ...(args.context ? { context: args.context } : {}), ...(args.namespace ? { namespace: args.namespace } : {}), ...(args.kubeconfig ? { kubeconfig: args.kubeconfig } : {}) });
}

/** Through the API: node list, API objects, one sweep, then the capture. */
async function captureThroughApi(args: FleetCaptureArgs, say: (m: string) => void): Promise<FleetManifest> {
  const kube = await loadKubeFor(args);
  const listed = await listClusterNodes(kube, args.selector);
  const nodes = chooseNodes(listed, args.nodes !== undefined ? splitList(args.nodes) : undefined);
  if (nodes.length === 0) throw new UserError(said('ue.fleet.noNode', { selector: args.selector ? said('ue.fleet.selector', { selector: args.selector }) : '' }), said('ue.fleet.listNodes'));
  const apiText = args.apiFile ? readFileSync(args.apiFile, 'utf8') : await readApi(kube);
  const { sweepLeftovers } = await import('../sources/kubectl-debug.js');
  for (const line of await sweepLeftovers(kube)) say(line);
  const run = await currentRun();
  if (!run.recorded) say(`this run (${run.id}) is not recorded on this machine (${run.problem ?? '?'}): if it is killed, its pods end by their deadline only`);
  say(`capturing ${nodes.length} node${nodes.length === 1 ? '' : 's'} through one debug pod each in ${kube.namespace} (label ${RUN_LABEL}=${run.id}), ${Math.min(args.parallel, nodes.length)} at a time`);
  return captureFleet({
    dir: args.output, nodes, parallel: args.parallel, nodeTimeoutMs: args.nodeTimeout * 1000,
    openNode: debugPodOpener(kube, args, run.id), apiText, cluster: kube.server, via: 'node-debug-pod',
    ...(args.bpfRoot ? { params: { bpfRoot: args.bpfRoot } } : {}), progress: say,
  });
}

/** Over SSH: the hosts, API objects from --api-file or an optional kubeconfig. */
async function captureOverSsh(args: FleetCaptureArgs, say: (m: string) => void): Promise<FleetManifest> {
  const hosts = args.sshFile ? parseSshFile(readFileSync(args.sshFile, 'utf8'), args.sshFile) : splitList(args.ssh ?? '');
  if (hosts.length === 0) throw new UserError(said('ue.fleet.sshNoHost'), said('ue.fleet.sshEg'));
  let apiText = args.apiFile ? readFileSync(args.apiFile, 'utf8') : undefined;
  let cluster: string | undefined;
  if (apiText === undefined && (args.context || args.kubeconfig || process.env['KUBECONFIG'])) {
    const kube = await loadKubeFor(args);
    apiText = await readApi(kube);
    cluster = kube.server;
  }
  if (apiText === undefined) say('no API objects (no --api-file, no kubeconfig): the nodes are captured without them');
  const { openSsh } = await import('../sources/ssh.js');
  return captureFleet({
    dir: args.output, nodes: hosts, parallel: args.parallel, nodeTimeoutMs: args.nodeTimeout * 1000,
    openNode: async (host) => ({ transport: await openSsh({ target: host, ...(args.acceptNewHostKey ? { acceptNewHostKey: true } : {}) }), live: true, apiText: undefined, apiOrigin: undefined }),
    ...(apiText !== undefined ? { apiText } : {}), ...(cluster ? { cluster } : {}), via: 'ssh',
    ...(args.bpfRoot ? { params: { bpfRoot: args.bpfRoot } } : {}), progress: say,
  });
}

/**
 * Runs `fleet capture`; returns the manifest. Throws `UserError` for contradictory
 * options, an unusable directory, no matching node, RBAC denials.
 */
export async function runFleetCapture(args: FleetCaptureArgs, say: (m: string) => void): Promise<FleetManifest> {
  if ((args.ssh || args.sshFile) && (args.nodes || args.selector)) throw new UserError(said('ue.fleet.sshAndNodes'), said('ue.fleet.useOne'));
  if (args.ssh && args.sshFile) throw new UserError(said('ue.fleet.sshOrFile'));
  if (args.nodes && args.selector) throw new UserError(said('ue.fleet.nodesOrSelector'));
  prepareFleetDir(args.output, args.force === true);
  return args.ssh || args.sshFile ? captureOverSsh(args, say) : captureThroughApi(args, say);
}
