/**
 * DNS for the kubectl-debug source (`--node`): questions go over the Kubernetes API, as
 * `kubectl port-forward` would send them — a port-forward (pods/portforward) to TCP port 53
 * of a CoreDNS pod, with DNS over TCP (RFC 7766 framing) through {@link StreamDnsTransport}.
 * Nothing runs on the node for it.
 *
 * This path skips the node's Service dataplane: the question reaches one CoreDNS pod
 * directly, not through the ClusterIP DNAT (kube-proxy's rules, Cilium's LB map) a pod's
 * query takes — the exchange's `via` names the pod, and {@link PORT_FORWARD_NOTE} says so.
 *
 * Which pod: a question for the kube-dns ClusterIP goes to the first Ready CoreDNS pod
 * (as the ClusterIP would only pick Ready endpoints); a question for a CoreDNS pod's own
 * IP goes to that pod, Ready or not; any other server cannot be reached this way.
 */
import type { Duplex } from 'node:stream';
import { said, UserError } from '../errors.js';
import type { DnsExchange } from '../model/dns.js';
import type { ClusterDnsTargets, DnsPodCandidate } from '../sources/k8s-coredns.js';
import type { KubeContext } from '../sources/k8s-client.js';
import { StreamDnsTransport, type DnsClock } from './direct.js';
import { checkQuery, type DnsQuery, type DnsQueryOptions, type DnsTransport } from './transport.js';
import { PORT_FORWARD_NOTE } from '../analysis/dns-describe.js';

export { PORT_FORWARD_NOTE };

/**
 * What the transport needs from the cluster: the CoreDNS pods (throws `UserError` for
 * RBAC or no pod) and one forwarded TCP connection to a pod's port (rejects with a
 * `UserError` for RBAC/credentials, any other error for a failed forward).
 */
export interface PortForwardDeps {
  readonly findPods: () => Promise<ClusterDnsTargets>;
  readonly open: (pod: DnsPodCandidate) => Promise<Duplex>;
}

/** `port-forward to kube-system/coredns-5d78c9869d-7xgkl:53`. */
export function portForwardVia(pod: Pick<DnsPodCandidate, 'namespace' | 'name' | 'port'>): string {
  return `port-forward to ${pod.namespace}/${pod.name}:${pod.port}`;
}

/**
 * The pod a question for `server:port` goes to. Throws `UserError` when `server` is
 * neither a kube-dns ClusterIP nor a CoreDNS pod's address, or for the ClusterIP when no
 * CoreDNS pod is Ready. Pure.
 */
export function podForServer(targets: ClusterDnsTargets, server: string): DnsPodCandidate {
  const own = targets.pods.find((p) => p.ip === server);
  if (own) return own;
  const known = [...targets.clusterIPs, ...targets.pods.flatMap((p) => (p.ip ? [p.ip] : []))];
  if (!targets.clusterIPs.includes(server)) {
    const unknown = targets.serviceProblem ? said('ue.pf.unknownService', { problem: targets.serviceProblem }) : '';
    throw new UserError(said('ue.pf.cannotAsk', { server, unknown }), said('ue.pf.askKnown', { known: known.join(', ') || said('ue.pf.noneFound') }));
  }
  const ready = targets.pods.find((p) => p.ready);
  if (!ready) {
    const pods = targets.pods.map((p) => `${p.namespace}/${p.name}`).join(', ');
    const ips = targets.pods.flatMap((p) => (p.ip ? [p.ip] : [])).join(', ') || said('ue.pf.noPodIp');
    throw new UserError(said('ue.pf.notReady', { server, pods, verb: said(targets.pods.length === 1 ? 'ue.pf.is' : 'ue.pf.are') }), said('ue.pf.askAnyway', { ips }));
  }
  return ready;
}

/**
 * Asks DNS through port-forwards to CoreDNS pods. `label` is `port-forward to NS/POD:PORT`
 * once a pod is chosen (before: `port-forward to a CoreDNS pod`). `query` throws
 * `UserError` for an invalid question, a server this path cannot reach, RBAC refusals
 * (listing the CoreDNS pods, `create pods/portforward`) and no Ready pod; a forward that
 * fails or closes early is an exchange with outcome `network-error` and the reason.
 */
export class PortForwardDnsTransport implements DnsTransport {
  readonly kind = 'port-forward' as const;
  readonly note = PORT_FORWARD_NOTE;
  private chosen: DnsPodCandidate | null = null;
  private targets: Promise<ClusterDnsTargets> | null = null;

  constructor(private readonly deps: PortForwardDeps, private readonly clocks: DnsClock = {}) {}

  /** For a kubeconfig context: the API lookups and client-node load on first use. */
  static forKube(kube: KubeContext, clocks: DnsClock = {}): PortForwardDnsTransport {
    return new PortForwardDnsTransport({
      findPods: async () => (await import('../sources/k8s-coredns.js')).findClusterDnsPods(kube),
      open: async (pod) => {
        const [{ openPortForward }, { K8sStatusError, explainK8sError }] = await Promise.all([import('../sources/k8s-portforward.js'), import('../sources/k8s-client.js')]);
        try {
          return await openPortForward(kube.kc, { namespace: pod.namespace, pod: pod.name, port: pod.port });
        } catch (e) {
          if (e instanceof K8sStatusError && (e.code === 401 || e.code === 403)) {
            // A WebSocket port-forward is a GET: RBAC checks `get` (newer clusters `create`
            // too); name the verb the API server says it refused.
            const verb = /cannot (\w+) resource "pods\/portforward"/.exec(e.message)?.[1] ?? 'create';
            throw explainK8sError(e, { verb, resource: 'pods/portforward', namespace: pod.namespace }, kube.server);
          }
          const why = e instanceof K8sStatusError ? `refused (${e.code}${e.reason ? ` ${e.reason}` : ''}): ${e.message}` : `failed: ${(e as Error).message}`;
          throw new Error(`${portForwardVia(pod)} ${why}`);
        }
      },
    }, clocks);
  }

  get label(): string {
    return this.chosen ? portForwardVia(this.chosen) : 'port-forward to a CoreDNS pod';
  }

  async query(q: DnsQuery, options: DnsQueryOptions = {}): Promise<DnsExchange> {
    checkQuery(q, options);
    this.targets ??= this.deps.findPods();
    let targets: ClusterDnsTargets;
    try {
      targets = await this.targets;
    } catch (e) {
      this.targets = null; // ask the API again next time (RBAC fixed, pods back)
      throw e;
    }
    const pod = podForServer(targets, q.server);
    this.chosen = pod;
    // An RBAC refusal is the user's to fix, not a DNS outcome: it leaves the wire as a
    // socket error (the engine never throws) and is rethrown here.
    let refused: Error | null = null;
    let failed = false;
    const opener = {
      openTcp: async (): Promise<Duplex> => {
        try {
          return await this.deps.open(pod);
        } catch (e) {
          if (e instanceof UserError) refused = e;
          failed = true;
          throw e;
        }
      },
    };
    const exchange = await new StreamDnsTransport(opener, pod.name, this.clocks, portForwardVia(pod)).query(q, options);
    if (refused) throw refused;
    // The pod may have been replaced or gone: look the pods up again before the next question.
    if (failed || (exchange.rcode === null && exchange.error !== null && exchange.outcome !== 'timeout')) this.targets = null;
    return exchange;
  }

  async close(): Promise<void> {}
}

void (null as unknown as PortForwardDnsTransport satisfies DnsTransport);
