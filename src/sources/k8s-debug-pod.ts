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
 * SIGKILL) carry the label `app.kubernetes.io/managed-by=nodescope` and their run's id
 * (`nodescope/run`, src/run-record.ts). The non-interactive rule at start
 * ({@link leftoverAction}): delete a leftover that already ended (phase Succeeded/Failed)
 * or whose run is recorded on this machine as gone; leave any other alone and name it (a
 * live run here, or a run this machine has no record of: a colleague's, or one in another
 * container). A PID is never the identity: it collides across PID namespaces.
 */
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import type { RunState } from '../run-record.js';

/** Label every nodescope pod carries (the recommended `app.kubernetes.io/managed-by` label). */
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
/** Value of {@link MANAGED_BY_LABEL} on nodescope's pods (the leftover sweep's selector). */
export const MANAGED_BY_VALUE = 'nodescope';
/** Annotation naming who made the pod (`user@host`). */
export const OWNER_ANNOTATION = 'nodescope/owner';
/** Annotation holding the run id of the nodescope run that made the pod (src/run-record.ts). */
export const RUN_ANNOTATION = 'nodescope/run';
/** Label carrying the run id on a fleet's pods (`nodescope/run=<id>`): one selector finds every pod of one fleet run. */
export const RUN_LABEL = 'nodescope/run';
/** The container name (as kubectl debug names it). */
export const DEBUG_CONTAINER = 'debugger';

/**
 * The default image: `busybox:1.36.1`. Every probe runs through `chroot /host`, i.e.
 * with the node's own iptables-save/nft/conntrack binaries (the kernel and tools that
 * wrote the rules), so the image needs only `chroot`, `env` and `sleep`; busybox has them
 * in ~4 MB for every architecture, from the registry kubectl debug's docs use.
 */
export const DEFAULT_DEBUG_IMAGE = 'busybox:1.36.1';

/**
 * Default seconds a debug pod may live (4 h, `--pod-deadline`): after that the kubelet
 * ends it (phase Failed, reason DeadlineExceeded) even if nodescope was killed with
 * SIGKILL. Long enough for an incident, short enough that a forgotten privileged pod does
 * not outlive the shift. A TUI still open then shows the node as lost, with that reason.
 */
export const DEBUG_POD_DEADLINE_S = 4 * 3600;

/**
 * `--pod-deadline`: a duration `N`, `Ns`, `Nm` or `Nh` (seconds by default), 1 minute to
 * 24 hours, as seconds. Throws `Error` (the command line turns it into a usage error).
 */
export function parsePodDeadline(text: string): number {
  const m = /^([0-9]{1,6})([smh]?)$/.exec(text.trim());
  const s = m ? Number(m[1]) * (m[2] === 'h' ? 3600 : m[2] === 'm' ? 60 : 1) : NaN;
  if (!(s >= 60 && s <= 86_400)) throw new Error('a duration from 1m to 24h, e.g. 4h, 90m or 3600');
  return s;
}

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
  /** This run's id ({@link RUN_ANNOTATION}). */
  readonly run: string;
  /** `activeDeadlineSeconds` (default {@link DEBUG_POD_DEADLINE_S}). */
  readonly deadlineSeconds?: number;
  /** Labels besides {@link MANAGED_BY_LABEL} (a fleet's {@link RUN_LABEL}). */
  readonly labels?: Readonly<Record<string, string>>;
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
  const deadline = spec.deadlineSeconds ?? DEBUG_POD_DEADLINE_S;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: spec.name,
      namespace: spec.namespace,
      labels: { ...(spec.labels ?? {}), [MANAGED_BY_LABEL]: MANAGED_BY_VALUE },
      annotations: { [OWNER_ANNOTATION]: spec.owner, [RUN_ANNOTATION]: spec.run },
    },
    spec: {
      nodeName: spec.node,
      hostNetwork: true,
      hostPID: true,
      hostIPC: true,
      restartPolicy: 'Never',
      activeDeadlineSeconds: deadline,
      terminationGracePeriodSeconds: 0,
      tolerations: [{ operator: 'Exists' }],
      volumes: [{ name: 'host-root', hostPath: { path: '/' } }],
      containers: [
        {
          name: DEBUG_CONTAINER,
          image: spec.image,
          command: ['sleep', String(deadline)],
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
  /** Its {@link RUN_ANNOTATION}, when it has one. */
  readonly run: string | undefined;
}

/**
 * What to do with a leftover at start: `delete` (with why) or `keep` (with why).
 * `state`: what this machine's run record says of the pod's run (src/run-record.ts).
 */
export function leftoverAction(pod: LeftoverPod, state: RunState): { action: 'delete' | 'keep'; why: string } {
  if (pod.phase === 'Succeeded' || pod.phase === 'Failed') return { action: 'delete', why: `it already ended (${pod.phase})` };
  const whose = pod.owner ? `, made by ${pod.owner}` : '';
  if (pod.run === undefined) return { action: 'keep', why: `it has no nodescope run id${whose} (an older nodescope); it ends by its deadline` };
  if (state === 'gone') return { action: 'delete', why: `its nodescope run ${pod.run} on this machine is gone` };
  if (state === 'alive') return { action: 'keep', why: `its nodescope run ${pod.run} still runs on this machine` };
  return { action: 'keep', why: `its run ${pod.run} is not recorded on this machine${whose}` };
}
