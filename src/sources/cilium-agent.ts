/**
 * The Cilium agent transport: runs the probes marked `where: cilium-agent`
 * (`cilium-dbg status`, `service list`, `bpf lb list`) in the `cilium-agent` container
 * of the Cilium DaemonSet's pod on the chosen node (label `k8s-app=cilium`, the label
 * Cilium's Helm chart gives the agent pods), through the exec API. No wrapper: the agent
 * container already sees the node's BPF maps and the agent's API socket.
 */
import { BugError, TransportError } from '../errors.js';
import { K8sStatusError, explainK8sError, k8sRequest, type KubeContext } from './k8s-client.js';
import { execInPod } from './k8s-exec.js';
import { probeForArgv, remoteArgv } from './ssh-command.js';
import type { ExecOptions, ExecResult, Transport } from './transport.js';

/** Label selector of Cilium agent pods. */
export const CILIUM_AGENT_SELECTOR = 'k8s-app=cilium';
/** The agent's container in those pods. */
export const CILIUM_AGENT_CONTAINER = 'cilium-agent';

/** Execs catalog `cilium-agent` probes into one agent pod. */
export class CiliumAgentTransport implements Transport {
  readonly kind = 'kubectl-debug' as const;
  readonly label: string;

  constructor(
    private readonly kube: KubeContext,
    readonly pod: { readonly namespace: string; readonly name: string },
    private readonly now: () => number = Date.now,
  ) {
    this.label = `cilium-agent:${pod.namespace}/${pod.name}`;
  }

  /**
   * Runs one `where: cilium-agent` probe. Throws `BugError` for any other argv,
   * `UserError` when RBAC forbids pods/exec there, `TransportError` on a lost connection.
   */
  async exec(argv: readonly string[], options: ExecOptions): Promise<ExecResult> {
    if (probeForArgv(argv)?.where !== 'cilium-agent') throw new BugError(`refusing to run ${JSON.stringify(argv)} in the Cilium agent: not a cilium-agent probe`);
    const full = remoteArgv(argv, { sudo: false });
    try {
      return await execInPod(this.kube.kc, { namespace: this.pod.namespace, pod: this.pod.name, container: CILIUM_AGENT_CONTAINER }, full, options.timeoutMs, this.now);
    } catch (e) {
      if (e instanceof K8sStatusError && e.code === 403) throw explainK8sError(e, { verb: 'create', resource: 'pods/exec', namespace: this.pod.namespace }, this.kube.server);
      throw new TransportError(`exec in ${this.label} failed: ${(e as Error).message}`, this.label, full, null, '');
    }
  }

  async close(): Promise<void> {}
}

/**
 * Finds the Running Cilium agent pod on `node` (any namespace, usually kube-system).
 * Returns undefined when there is none (not a Cilium cluster) or when listing pods is
 * forbidden (the Cilium probes are optional; the rest of nodescope works without them).
 * Throws `TransportError` only when the API server cannot be reached.
 */
export async function findCiliumAgent(kube: KubeContext, node: string): Promise<CiliumAgentTransport | undefined> {
  let text: string;
  try {
    text = await k8sRequest(kube, 'GET', '/api/v1/pods', { query: { labelSelector: CILIUM_AGENT_SELECTOR, fieldSelector: `spec.nodeName=${node}` } });
  } catch (e) {
    if (e instanceof K8sStatusError) return undefined;
    throw explainK8sError(e, { verb: 'list', resource: 'pods' }, kube.server);
  }
  const pods = (JSON.parse(text) as { items: { metadata: { name: string; namespace: string }; status?: { phase?: string }; spec?: { containers?: { name: string }[] } }[] }).items;
  const agent = pods.find((p) => p.status?.phase === 'Running' && (p.spec?.containers ?? []).some((c) => c.name === CILIUM_AGENT_CONTAINER));
  return agent ? new CiliumAgentTransport(kube, { namespace: agent.metadata.namespace, name: agent.metadata.name }) : undefined;
}
