/**
 * The kubectl-debug source (`--node NAME`): creates the node-debug pod
 * (k8s-debug-pod.ts), waits until it runs, runs each catalog probe in it through the
 * exec API with the catalog's `host-root` wrapper (`chroot /host`, the node's own root
 * and binaries), and deletes the pod on every exit path: `close()`, Ctrl-C, SIGTERM,
 * SIGHUP and an uncaught error (through `onCleanup`, src/cleanup.ts). A delete that
 * fails (API unreachable) is retried, then the pod is named on stderr and removed by the
 * leftover sweep of the next start (see `leftoverAction`). Needs no kubectl binary.
 */
import { onCleanup } from '../cleanup.js';
import { TransportError, UserError } from '../errors.js';
import {
  DEBUG_CONTAINER, DEFAULT_DEBUG_IMAGE, MANAGED_BY_LABEL, MANAGED_BY_VALUE, OWNER_ANNOTATION, PID_ANNOTATION, debugPodManifest, debugPodName, leftoverAction, localOwner,
} from './k8s-debug-pod.js';
import { K8sStatusError, explainK8sError, k8sRequest, type KubeContext } from './k8s-client.js';
import { execInPod } from './k8s-exec.js';
import { remoteArgv } from './ssh-command.js';
import type { ExecOptions, ExecResult, Transport } from './transport.js';

/** Options of {@link openKubectlDebug}. Times in milliseconds. */
export interface KubectlDebugOptions {
  readonly kube: KubeContext;
  readonly node: string;
  /** Debug pod image (default {@link DEFAULT_DEBUG_IMAGE}). */
  readonly image?: string;
  /** Progress lines ("creating…", "Pending: ContainerCreating"), for stderr or a status bar. */
  readonly onProgress?: (message: string) => void;
  /** How long to wait for the pod to run (default 120,000 ms). */
  readonly startTimeoutMs?: number;
  /** Poll period while waiting (default 500 ms). */
  readonly pollMs?: number;
  readonly now?: () => number;
}

interface PodJson {
  metadata: { name: string; namespace: string; uid?: string; annotations?: Record<string, string> };
  status?: { phase?: string; reason?: string; message?: string; containerStatuses?: { state?: { waiting?: { reason?: string; message?: string }; terminated?: { reason?: string } } }[] };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function podPath(ns: string, name?: string): string {
  return `/api/v1/namespaces/${encodeURIComponent(ns)}/pods${name ? `/${encodeURIComponent(name)}` : ''}`;
}

/** Why a pod is not running yet, in kubectl's words (`Pending: ContainerCreating`). */
export function podProgress(pod: PodJson): string {
  const phase = pod.status?.phase ?? 'Pending';
  const st = pod.status?.containerStatuses?.[0]?.state;
  const why = st?.waiting?.reason ?? st?.terminated?.reason ?? pod.status?.reason;
  return why ? `${phase}: ${why}` : phase;
}

/** Reasons a container will not get past without someone acting. */
const STUCK = /ImagePullBackOff|ErrImagePull|InvalidImageName|CreateContainerConfigError|CreateContainerError|RunContainerError/;

/**
 * Deletes pods labelled `app.kubernetes.io/managed-by=nodescope` in the namespace
 * whose {@link leftoverAction} is `delete`; returns one line per leftover (deleted or
 * kept, and why). A forbidden list is not an error here (the create will explain RBAC).
 */
export async function sweepLeftovers(kube: KubeContext, me: string = localOwner()): Promise<string[]> {
  let text: string;
  try {
    text = await k8sRequest(kube, 'GET', podPath(kube.namespace), { query: { labelSelector: `${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE}` } });
  } catch {
    return [];
  }
  const lines: string[] = [];
  for (const pod of (JSON.parse(text) as { items: PodJson[] }).items) {
    const a = pod.metadata.annotations ?? {};
    const pid = Number(a[PID_ANNOTATION]);
    const decision = leftoverAction({ name: pod.metadata.name, phase: pod.status?.phase, owner: a[OWNER_ANNOTATION], pid: Number.isInteger(pid) ? pid : undefined }, me);
    if (decision.action === 'delete') {
      try {
        await k8sRequest(kube, 'DELETE', podPath(kube.namespace, pod.metadata.name), { body: { gracePeriodSeconds: 0 } });
        lines.push(`deleted leftover debug pod ${kube.namespace}/${pod.metadata.name}: ${decision.why}`);
      } catch (e) {
        lines.push(`could not delete leftover debug pod ${kube.namespace}/${pod.metadata.name}: ${(e as Error).message}`);
      }
    } else lines.push(`left debug pod ${kube.namespace}/${pod.metadata.name} alone: ${decision.why}`);
  }
  return lines;
}

/** A running node-debug pod. Create with {@link openKubectlDebug}; `close()` deletes the pod. */
export class KubectlDebugTransport implements Transport {
  readonly kind = 'kubectl-debug' as const;
  readonly label: string;
  private unregister: () => void = () => undefined;
  private deleted: Promise<void> | undefined;

  constructor(
    /** The API connection (also used by the DNS port-forward, src/dns/portforward.ts). */
    readonly kube: KubeContext,
    readonly node: string,
    readonly pod: { readonly namespace: string; readonly name: string },
    private readonly now: () => number,
  ) {
    this.label = `node/${node}`;
  }

  /** Ties the pod's deletion to nodescope's exit paths (src/cleanup.ts), after `created` settles. */
  armCleanup(created: Promise<void> = Promise.resolve()): void {
    this.unregister = onCleanup(`delete debug pod ${this.pod.namespace}/${this.pod.name}`, () => created.then(() => this.deletePod()));
  }

  /**
   * Runs one catalog probe as `chroot /host env LC_ALL=C argv…` in the pod. Throws
   * `BugError` for an argv outside the catalog, `UserError` when RBAC forbids pods/exec,
   * and `TransportError` when the API connection fails (the session keeps its last data).
   */
  async exec(argv: readonly string[], options: ExecOptions): Promise<ExecResult> {
    const full = remoteArgv(argv, { sudo: false, outer: 'host-root' });
    try {
      return await execInPod(this.kube.kc, { namespace: this.pod.namespace, pod: this.pod.name, container: DEBUG_CONTAINER }, full, options.timeoutMs, this.now);
    } catch (e) {
      if (e instanceof K8sStatusError && e.code === 403) throw explainK8sError(e, { verb: 'create', resource: 'pods/exec', namespace: this.pod.namespace }, this.kube.server);
      const why = e instanceof K8sStatusError ? `${e.code} ${e.message}` : (e as Error).message;
      throw new TransportError(`exec in debug pod ${this.pod.namespace}/${this.pod.name} failed: ${why}`, this.label, full, null, '');
    }
  }

  /** Deletes the pod (at most once), retrying 3 times; on failure names it on stderr for the next start's sweep. */
  deletePod(): Promise<void> {
    this.deleted ??= (async () => {
      let last: unknown;
      for (const wait of [0, 500, 1500, 3000]) {
        await sleep(wait);
        try {
          await k8sRequest(this.kube, 'DELETE', podPath(this.pod.namespace, this.pod.name), {
            body: { gracePeriodSeconds: 0 },
            timeoutMs: 10_000,
          });
          return;
        } catch (e) {
          if (e instanceof K8sStatusError && e.code === 404) return; // already gone
          last = e;
        }
      }
      process.stderr.write(
        `nodescope: could not delete debug pod ${this.pod.namespace}/${this.pod.name} (${(last as Error).message}); ` +
          `the next nodescope --node run deletes it, or: kubectl delete pod -n ${this.pod.namespace} ${this.pod.name}\n`,
      );
    })();
    return this.deleted;
  }

  /** Drops the undo without deleting (the create was refused, so there is no pod). */
  forget(): void {
    this.unregister();
  }

  async close(): Promise<void> {
    await this.deletePod();
    this.unregister();
  }
}

/**
 * Sweeps leftovers, checks the node, creates the debug pod, arms its cleanup, and waits
 * until it runs. Throws `UserError` for RBAC denials (naming verb and resource), an
 * unknown node, or a pod that cannot start (image pull errors; the pod is deleted), and
 * `TransportError` when the API server cannot be reached.
 */
export async function openKubectlDebug(options: KubectlDebugOptions): Promise<KubectlDebugTransport> {
  const { kube, node } = options;
  const now = options.now ?? Date.now;
  const progress = options.onProgress ?? (() => undefined);
  const ns = kube.namespace;
  for (const line of await sweepLeftovers(kube)) progress(line);
  try {
    await k8sRequest(kube, 'GET', `/api/v1/nodes/${encodeURIComponent(node)}`);
  } catch (e) {
    if (e instanceof K8sStatusError && e.code === 404) throw new UserError(`--node ${node}: the cluster has no such node`, 'list them with: kubectl get nodes');
    throw explainK8sError(e, { verb: 'get', resource: 'nodes' }, kube.server);
  }
  const name = debugPodName(node);
  const manifest = debugPodManifest({ name, node, namespace: ns, image: options.image ?? DEFAULT_DEBUG_IMAGE, owner: localOwner(), pid: process.pid });
  progress(`creating debug pod ${ns}/${name} on node ${node}`);
  // The undo exists before the request: Ctrl-C while the create is in flight waits for
  // it to settle, then deletes whatever it made.
  const t = new KubectlDebugTransport(kube, node, { namespace: ns, name }, now);
  const creating = k8sRequest(kube, 'POST', podPath(ns), { body: manifest });
  t.armCleanup(creating.then(() => undefined, () => undefined));
  try {
    await creating;
  } catch (e) {
    // An answered refusal created nothing; after a network failure the pod may exist.
    if (e instanceof K8sStatusError) t.forget();
    else await t.close();
    throw explainK8sError(e, { verb: 'create', resource: 'pods', namespace: ns }, kube.server);
  }
  try {
    await waitRunning(t, kube, options, progress);
  } catch (e) {
    await t.close();
    throw e;
  }
  return t;
}

async function waitRunning(t: KubectlDebugTransport, kube: KubeContext, options: KubectlDebugOptions, progress: (m: string) => void): Promise<void> {
  const deadline = Date.now() + (options.startTimeoutMs ?? 120_000);
  let said = '';
  for (;;) {
    let pod: PodJson;
    try {
      pod = JSON.parse(await k8sRequest(kube, 'GET', podPath(t.pod.namespace, t.pod.name))) as PodJson;
    } catch (e) {
      throw explainK8sError(e, { verb: 'get', resource: 'pods', namespace: t.pod.namespace }, kube.server);
    }
    const state = podProgress(pod);
    if (state !== said) progress(`debug pod ${t.pod.namespace}/${t.pod.name}: ${(said = state)}`);
    if (pod.status?.phase === 'Running') return;
    if (pod.status?.phase === 'Failed' || pod.status?.phase === 'Succeeded' || STUCK.test(state)) {
      throw new UserError(`the debug pod ${t.pod.namespace}/${t.pod.name} cannot run on ${t.node}: ${state}${pod.status?.message ? ` (${pod.status.message})` : ''}`, 'try another image with --image (it needs chroot, env and sleep)');
    }
    if (Date.now() > deadline) throw new UserError(`the debug pod ${t.pod.namespace}/${t.pod.name} did not start within ${Math.round((options.startTimeoutMs ?? 120_000) / 1000)} s (${state})`, 'see: kubectl describe pod');
    await sleep(options.pollMs ?? 500);
  }
}
