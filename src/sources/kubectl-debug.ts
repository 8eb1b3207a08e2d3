/**
 * The kubectl-debug source (`--node NAME`): creates the node-debug pod
 * (k8s-debug-pod.ts), waits until it runs, runs each catalog probe in it through the
 * exec API with the catalog's `host-root` wrapper (`chroot /host`, the node's own root
 * and binaries), and deletes the pod on every exit path: `close()`, `q`, Ctrl-C, SIGINT,
 * SIGTERM, SIGHUP and an uncaught error (through `onCleanup`, src/cleanup.ts, within its
 * bound). A delete that fails or gets no answer in time (API unreachable) leaves the pod
 * named on stderr; the leftover sweep of the next start on this machine removes it (see
 * `leftoverAction`), and its `activeDeadlineSeconds` ends it anyway. Needs no kubectl binary.
 */
import { onCleanup } from '../cleanup.js';
import { said, TransportError, UserError } from '../errors.js';
import {
  DEBUG_CONTAINER, DEBUG_POD_DEADLINE_S, DEFAULT_DEBUG_IMAGE, MANAGED_BY_LABEL, MANAGED_BY_VALUE, OWNER_ANNOTATION, RUN_ANNOTATION, debugPodManifest, debugPodName, leftoverAction, localOwner,
} from './k8s-debug-pod.js';
import { currentRun, runState, runsDir } from '../run-record.js';
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
  /** The pod's `activeDeadlineSeconds` (default {@link DEBUG_POD_DEADLINE_S}, `--pod-deadline`). */
  readonly deadlineSeconds?: number;
  /** Progress lines ("creating…", "Pending: ContainerCreating"), for stderr or a status bar. */
  readonly onProgress?: (message: string) => void;
  /** How long to wait for the pod to run (default 120,000 ms). */
  readonly startTimeoutMs?: number;
  /** Poll period while waiting (default 500 ms). */
  readonly pollMs?: number;
  readonly now?: () => number;
  /** False: skip the leftover sweep (a fleet sweeps once for all its nodes). Default true. */
  readonly sweep?: boolean;
  /** Labels added to the pod besides nodescope's own (a fleet's run label). */
  readonly labels?: Readonly<Record<string, string>>;
}

interface PodJson {
  metadata: { name: string; namespace: string; uid?: string; annotations?: Record<string, string> };
  status?: { phase?: string; reason?: string; message?: string; startTime?: string; containerStatuses?: { state?: { waiting?: { reason?: string; message?: string }; terminated?: { reason?: string } } }[] };
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
 * whose {@link leftoverAction} is `delete` (ended, or made by a run this machine records
 * as gone: `runs`, default {@link runsDir}); returns one line per leftover (deleted or
 * kept, and why; a list that failed for another reason than RBAC is one line too). A forbidden
 * list is not an error here (the create will explain RBAC).
 */
export async function sweepLeftovers(kube: KubeContext, runs: string = runsDir()): Promise<string[]> {
  let text: string;
  try {
    text = await k8sRequest(kube, 'GET', podPath(kube.namespace), { query: { labelSelector: `${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE}` } });
  } catch (e) {
    // Forbidden is said by the create that follows (with the RBAC it needs); anything else is named here.
    if (e instanceof K8sStatusError && e.code === 403) return [];
    return [`could not look for leftover debug pods in ${kube.namespace}: ${(e as Error).message}`];
  }
  const mine = (await currentRun(runs)).id;
  const lines: string[] = [];
  for (const pod of (JSON.parse(text) as { items: PodJson[] }).items) {
    const a = pod.metadata.annotations ?? {};
    const run = a[RUN_ANNOTATION];
    if (run === mine) continue; // this run's own pod (created concurrently)
    const decision = leftoverAction({ name: pod.metadata.name, phase: pod.status?.phase, owner: a[OWNER_ANNOTATION], run }, run === undefined ? 'unknown' : await runState(run, runs));
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
    /** The pod's `activeDeadlineSeconds`, to explain a pod that ended by it. */
    readonly deadlineSeconds: number = DEBUG_POD_DEADLINE_S,
  ) {
    this.label = `node/${node}`;
  }

  /** Ties the pod's deletion to nodescope's exit paths (src/cleanup.ts), after `created` settles. */
  armCleanup(created: Promise<void> = Promise.resolve()): void {
    const { namespace, name } = this.pod;
    this.unregister = onCleanup(`delete debug pod ${namespace}/${name}`, () => created.then(() => this.deletePod()), {
      leftBehind: `debug pod ${namespace}/${name} (privileged, on node ${this.node}): the next nodescope --node run on this machine deletes it, or: kubectl delete pod -n ${namespace} ${name}`,
    });
  }

  /**
   * Runs one catalog probe as `chroot /host env LC_ALL=C argv…` in the pod. Throws
   * `BugError` for an argv outside the catalog, `UserError` when RBAC forbids pods/exec,
   * and `TransportError` when the API connection fails (the session keeps its last data).
   */
  async exec(argv: readonly string[], options: ExecOptions): Promise<ExecResult> {
    const full = remoteArgv(argv, { sudo: false, outer: 'host-root' });
    try {
      return await execInPod(this.kube.kc, { namespace: this.pod.namespace, pod: this.pod.name, container: DEBUG_CONTAINER }, full, options.timeoutMs, this.now, options.signal);
    } catch (e) {
      if (e instanceof K8sStatusError && e.code === 403) throw explainK8sError(e, { verb: 'create', resource: 'pods/exec', namespace: this.pod.namespace }, this.kube.server);
      const why = e instanceof K8sStatusError ? `${e.code} ${e.message}` : (e as Error).message;
      const lost = await this.lostReason();
      throw new TransportError(lost ?? `exec in debug pod ${this.pod.namespace}/${this.pod.name} failed: ${why}`, this.label, full, null, '');
    }
  }

  /**
   * Why the node is lost for good when the pod ended or is gone (its deadline passed,
   * someone deleted it), in words for the header; null when the pod still runs or the API
   * does not say (then the exec failure is a passing one).
   */
  private async lostReason(): Promise<string | null> {
    const ref = `debug pod ${this.pod.namespace}/${this.pod.name}`;
    const restart = 'restart nodescope to read the node again';
    let pod: PodJson;
    try {
      pod = JSON.parse(await k8sRequest(this.kube, 'GET', podPath(this.pod.namespace, this.pod.name), { timeoutMs: 5_000 })) as PodJson;
    } catch (e) {
      if (e instanceof K8sStatusError && e.code === 404) return `node lost: the ${ref} is gone (deleted outside nodescope); ${restart}`;
      return null;
    }
    const phase = pod.status?.phase;
    if (phase !== 'Failed' && phase !== 'Succeeded') return null;
    if (pod.status?.reason === 'DeadlineExceeded') {
      return `node lost: the ${ref} reached its deadline (activeDeadlineSeconds ${this.deadlineSeconds}, --pod-deadline) and was ended by the kubelet; ${restart}`;
    }
    return `node lost: the ${ref} ended (${podProgress(pod)}${pod.status?.message ? `: ${pod.status.message}` : ''}); ${restart}`;
  }

  /**
   * Deletes the pod (one delete in flight at a time), retrying while the API refuses or
   * fails, for at most ~8 s (each request at most 5 s). Rejects when it could not (then a
   * later call tries again); a 404 is success (already gone).
   */
  deletePod(): Promise<void> {
    this.deleted ??= (async () => {
      let last: unknown;
      for (const wait of [0, 500, 1500]) {
        await sleep(wait);
        try {
          await k8sRequest(this.kube, 'DELETE', podPath(this.pod.namespace, this.pod.name), {
            body: { gracePeriodSeconds: 0 },
            timeoutMs: 5_000,
          });
          return;
        } catch (e) {
          if (e instanceof K8sStatusError && e.code === 404) return; // already gone
          last = e;
        }
      }
      throw new Error(`could not delete debug pod ${this.pod.namespace}/${this.pod.name}: ${(last as Error).message}`);
    })();
    const attempt = this.deleted;
    attempt.catch(() => {
      if (this.deleted === attempt) this.deleted = undefined;
    });
    return attempt;
  }

  /** Drops the undo without deleting (the create was refused, so there is no pod). */
  forget(): void {
    this.unregister();
  }

  /**
   * Deletes the pod; on failure its undo stays registered, so the exit (src/cleanup.ts)
   * tries once more and then names the pod on stderr. Never throws.
   */
  async close(): Promise<void> {
    try {
      await this.deletePod();
      this.unregister();
    } catch {
      // left to the exit's cleanup, which reports it
    }
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
  if (options.sweep !== false) for (const line of await sweepLeftovers(kube)) progress(line);
  try {
    await k8sRequest(kube, 'GET', `/api/v1/nodes/${encodeURIComponent(node)}`);
  } catch (e) {
    if (e instanceof K8sStatusError && e.code === 404) throw new UserError(said('err.noSuchNode', { node }), said('err.noSuchNode.hint'));
    throw explainK8sError(e, { verb: 'get', resource: 'nodes' }, kube.server);
  }
  const name = debugPodName(node);
  const run = await currentRun();
  if (!run.recorded) progress(`this run (${run.id}) is not recorded on this machine (${run.problem ?? '?'}): if it is killed, its pod ends by its deadline only`);
  const deadlineSeconds = options.deadlineSeconds ?? DEBUG_POD_DEADLINE_S;
  const manifest = debugPodManifest({ name, node, namespace: ns, image: options.image ?? DEFAULT_DEBUG_IMAGE, owner: localOwner(), run: run.id, deadlineSeconds, ...(options.labels ? { labels: options.labels } : {}) });
  progress(`creating debug pod ${ns}/${name} on node ${node} (ends by itself after ${formatDuration(deadlineSeconds)})`);
  // The undo exists before the request: Ctrl-C while the create is in flight waits for
  // it to settle, then deletes whatever it made.
  const t = new KubectlDebugTransport(kube, node, { namespace: ns, name }, now, deadlineSeconds);
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

/** `4 h`, `90 min`, `45 s`: a deadline in words. */
function formatDuration(seconds: number): string {
  if (seconds % 3600 === 0) return `${seconds / 3600} h`;
  if (seconds % 60 === 0) return `${seconds / 60} min`;
  return `${seconds} s`;
}

async function waitRunning(t: KubectlDebugTransport, kube: KubeContext, options: KubectlDebugOptions, progress: (m: string) => void): Promise<void> {
  const deadline = Date.now() + (options.startTimeoutMs ?? 120_000);
  let shown = '';
  for (;;) {
    let pod: PodJson;
    try {
      pod = JSON.parse(await k8sRequest(kube, 'GET', podPath(t.pod.namespace, t.pod.name))) as PodJson;
    } catch (e) {
      throw explainK8sError(e, { verb: 'get', resource: 'pods', namespace: t.pod.namespace }, kube.server);
    }
    const state = podProgress(pod);
    if (state !== shown) progress(`debug pod ${t.pod.namespace}/${t.pod.name}: ${(shown = state)}`);
    if (pod.status?.phase === 'Running') return;
    if (pod.status?.phase === 'Failed' || pod.status?.phase === 'Succeeded' || STUCK.test(state)) {
      throw new UserError(said('ue.debug.cannotRun', { pod: `${t.pod.namespace}/${t.pod.name}`, node: t.node, state, message: pod.status?.message ? ` (${pod.status.message})` : '' }), said('ue.debug.image'));
    }
    if (Date.now() > deadline) throw new UserError(said('ue.debug.notStarted', { pod: `${t.pod.namespace}/${t.pod.name}`, seconds: Math.round((options.startTimeoutMs ?? 120_000) / 1000), state }), said('ue.debug.describe'));
    await sleep(options.pollMs ?? 500);
  }
}
