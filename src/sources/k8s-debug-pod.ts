/**
 * The node-debug pod nodescope creates for `--node NAME`: the pod
 * `kubectl debug node/NAME --profile=sysadmin` creates (k8s.io/kubectl/pkg/cmd/debug:
 * `generateNodeDebugPod` + the sysadmin profile) — bound to the node by `nodeName`,
 * hostNetwork/hostPID/hostIPC, a privileged container, the node's `/` mounted at `/host`,
 * tolerating every taint, `restartPolicy: Never` — plus nodescope's label and owner
 * annotations, a command that keeps it alive, and a deadline so a pod whose nodescope
 * was killed with SIGKILL still ends by itself.
 *
 * Leftovers (pods of an earlier run that could not be deleted: lost API connection,
 * SIGKILL) carry the label `app.kubernetes.io/managed-by=nodescope`. The non-interactive
 * rule at start ({@link leftoverAction}): delete a leftover that already ended (phase
 * Succeeded/Failed) or that this user on this machine made from a process that is gone;
 * leave any other alone and name it (it may be a colleague's running session).
 */
import { randomBytes } from 'node:crypto';
import os from 'node:os';

/** Label every nodescope pod carries (the recommended `app.kubernetes.io/managed-by` label). */
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
/** Value of {@link MANAGED_BY_LABEL} on nodescope's pods (the leftover sweep's selector). */
export const MANAGED_BY_VALUE = 'nodescope';
/** Annotation naming who made the pod (`user@host`). */
export const OWNER_ANNOTATION = 'nodescope/owner';
/** Annotation holding the pid of the nodescope process that made the pod. */
export const PID_ANNOTATION = 'nodescope/pid';
/** The container name (as kubectl debug names it). */
export const DEBUG_CONTAINER = 'debugger';

/**
 * The default image: `busybox:1.36.1`. Every probe runs through `chroot /host`, i.e.
 * with the node's own iptables-save/nft/conntrack binaries (the kernel and tools that
 * wrote the rules), so the image needs only `chroot`, `env` and `sleep`; busybox has them
 * in ~4 MB for every architecture, from the registry kubectl debug's docs use.
 */
export const DEFAULT_DEBUG_IMAGE = 'busybox:1.36.1';

/** Seconds a debug pod may live (24 h): after that the kubelet ends it even if nodescope vanished. */
export const DEBUG_POD_DEADLINE_S = 86_400;

/** Who made a pod: `user@host`, as written to {@link OWNER_ANNOTATION}. */
export function localOwner(): string {
  let user = process.env['USER'] ?? '';
  try {
    user = os.userInfo().username;
  } catch {
    // no passwd entry: keep $USER
  }
  return `${user || 'unknown'}@${os.hostname()}`;
}

/** Options of {@link debugPodManifest}. */
export interface DebugPodSpec {
  readonly name: string;
  readonly node: string;
  readonly namespace: string;
  readonly image: string;
  readonly owner: string;
  readonly pid: number;
}

/** Name prefix: `nodescope-<node>-`, cut so the name with its 5-character suffix stays ≤ 63 characters. */
export function debugPodPrefix(node: string): string {
  const safe = node.toLowerCase().replace(/[^a-z0-9-]/g, '-').replace(/^-+|-+$/g, '');
  return `nodescope-${safe.slice(0, 63 - 'nodescope-'.length - 6)}`.replace(/-+$/, '') + '-';
}

/** The apiserver's generateName alphabet (k8s.io/apimachinery/pkg/util/rand: no vowels, no confusable digits). */
const SUFFIX_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/**
 * A pod name for `node`: {@link debugPodPrefix} + 5 random characters, chosen here rather
 * than by `generateName` so the undo can be registered before the pod is even requested
 * (a Ctrl-C while the create is in flight still deletes it).
 */
export function debugPodName(node: string, random: Buffer = randomBytes(5)): string {
  return debugPodPrefix(node) + [...random.subarray(0, 5)].map((b) => SUFFIX_ALPHABET[b % SUFFIX_ALPHABET.length]).join('');
}

/** The pod to POST to `/api/v1/namespaces/NS/pods`. */
export function debugPodManifest(spec: DebugPodSpec): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: spec.name,
      namespace: spec.namespace,
      labels: { [MANAGED_BY_LABEL]: MANAGED_BY_VALUE },
      annotations: { [OWNER_ANNOTATION]: spec.owner, [PID_ANNOTATION]: String(spec.pid) },
    },
    spec: {
      nodeName: spec.node,
      hostNetwork: true,
      hostPID: true,
      hostIPC: true,
      restartPolicy: 'Never',
      activeDeadlineSeconds: DEBUG_POD_DEADLINE_S,
      terminationGracePeriodSeconds: 0,
      tolerations: [{ operator: 'Exists' }],
      volumes: [{ name: 'host-root', hostPath: { path: '/' } }],
      containers: [
        {
          name: DEBUG_CONTAINER,
          image: spec.image,
          command: ['sleep', String(DEBUG_POD_DEADLINE_S)],
          securityContext: { privileged: true },
          volumeMounts: [{ name: 'host-root', mountPath: '/host' }],
          terminationMessagePolicy: 'File',
        },
      ],
    },
  };
}

/** The fields of a listed leftover pod that {@link leftoverAction} reads. */
export interface LeftoverPod {
  readonly name: string;
  readonly phase: string | undefined;
  readonly owner: string | undefined;
  readonly pid: number | undefined;
}

/** Whether a local process with `pid` exists. */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** What to do with a leftover at start: `delete` (with why) or `keep` (with why). */
export function leftoverAction(pod: LeftoverPod, me: string, alive: (pid: number) => boolean = processAlive): { action: 'delete' | 'keep'; why: string } {
  if (pod.phase === 'Succeeded' || pod.phase === 'Failed') return { action: 'delete', why: `it already ended (${pod.phase})` };
  if (pod.owner === me && pod.pid !== undefined && pod.pid !== process.pid && !alive(pod.pid)) {
    return { action: 'delete', why: `its nodescope (pid ${pod.pid} on this machine) is gone` };
  }
  return { action: 'keep', why: pod.owner === me ? `its nodescope (pid ${pod.pid ?? '?'}) still runs` : `it belongs to ${pod.owner ?? 'someone else'}` };
}
