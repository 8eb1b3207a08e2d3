/**
 * The cluster DNS pods a port-forward can reach: the endpoints of the kube-dns Service
 * (`kube-system/kube-dns`, as kubeadm, kops and most distributions name CoreDNS's
 * Service) from its EndpointSlices (label `kubernetes.io/service-name=kube-dns`,
 * discovery.k8s.io/v1), Ready endpoints first; without slices (or when listing them is
 * forbidden), the Running pods labelled `k8s-app=kube-dns`, Ready ones first. Each
 * candidate carries the pod's TCP DNS port: the slice's TCP port (the Service's
 * `dns-tcp` targetPort), else the container port named `dns-tcp`, else 53.
 */
import { said, UserError } from '../errors.js';
import { K8sStatusError, collectionPath, explainK8sError, k8sRequest, type KubeContext } from './k8s-client.js';

/** The namespace, Service name and pod label of the cluster DNS (CoreDNS keeps kube-dns's names). */
export const CLUSTER_DNS = { namespace: 'kube-system', service: 'kube-dns', podLabel: 'k8s-app=kube-dns' } as const;

/** One CoreDNS pod to forward to; `port` is its TCP DNS port. */
export interface DnsPodCandidate {
  readonly namespace: string;
  readonly name: string;
  /** The pod's address (endpoint or `status.podIP`), null when unknown. */
  readonly ip: string | null;
  readonly port: number;
  readonly ready: boolean;
  /** Where it was found. */
  readonly from: 'endpointslice' | 'pod-label';
}

/** What the API says about the cluster DNS: the Service's addresses and ports, and the pods in order of preference. */
export interface ClusterDnsTargets {
  /** The kube-dns Service's ClusterIPs (empty when there is no Service or it is headless). */
  readonly clusterIPs: readonly string[];
  /** The Service's ports (`port` → the pods' `targetPort` when numeric). */
  readonly servicePorts: readonly { readonly name: string; readonly protocol: string; readonly port: number }[];
  readonly pods: readonly DnsPodCandidate[];
  /** Why the Service's ClusterIPs are unknown (`get services` forbidden, no such Service); absent when they were read. */
  readonly serviceProblem?: string;
}

interface SliceJson {
  ports?: { name?: string; protocol?: string; port?: number }[];
  endpoints?: { addresses?: string[]; conditions?: { ready?: boolean; serving?: boolean; terminating?: boolean }; targetRef?: { kind?: string; name?: string; namespace?: string } }[];
}
interface PodJson {
  metadata?: { name?: string; namespace?: string; deletionTimestamp?: string };
  spec?: { containers?: { ports?: { name?: string; containerPort?: number; protocol?: string }[] }[] };
  status?: { phase?: string; podIP?: string; conditions?: { type?: string; status?: string }[] };
}
interface ServiceJson {
  spec?: { clusterIP?: string; clusterIPs?: string[]; ports?: { name?: string; protocol?: string; port?: number }[] };
}

const DNS_PORT = 53;

/** The TCP DNS port of a slice: the TCP port named `dns-tcp`, else any TCP port, else 53. */
function slicePort(slice: SliceJson): number {
  const tcp = (slice.ports ?? []).filter((p) => (p.protocol ?? 'TCP') === 'TCP' && typeof p.port === 'number');
  return (tcp.find((p) => p.name === 'dns-tcp') ?? tcp[0])?.port ?? DNS_PORT;
}

/**
 * Pods behind the kube-dns EndpointSlices (`items` of a list), one per pod: Ready
 * endpoints first (a missing `ready` counts as ready, as the API says), then serving,
 * then the rest; terminating endpoints are dropped. Endpoints without a Pod targetRef
 * (a manually managed slice) are skipped: a port-forward needs a pod. Pure.
 */
export function podsFromSlices(slices: readonly SliceJson[]): DnsPodCandidate[] {
  const seen = new Set<string>();
  const rank = (c: { ready?: boolean; serving?: boolean }) => (c.ready !== false ? 0 : c.serving === true ? 1 : 2);
  const found: { c: DnsPodCandidate; rank: number }[] = [];
  for (const slice of slices) {
    const port = slicePort(slice);
    for (const ep of slice.endpoints ?? []) {
      const ref = ep.targetRef;
      if (ref?.kind !== 'Pod' || !ref.name) continue;
      const cond = ep.conditions ?? {};
      if (cond.terminating === true) continue;
      const namespace = ref.namespace ?? CLUSTER_DNS.namespace;
      const key = `${namespace}/${ref.name}`;
      if (seen.has(key)) continue;
      seen.add(key);
      found.push({ c: { namespace, name: ref.name, ip: ep.addresses?.[0] ?? null, port, ready: cond.ready !== false, from: 'endpointslice' }, rank: rank(cond) });
    }
  }
  // Array.prototype.sort is stable: the API's order stays within a rank.
  return found.sort((a, b) => a.rank - b.rank).map((f) => f.c);
}

/** Running, not deleted pods (`items` of a `k8s-app=kube-dns` list), Ready ones first. Pure. */
export function podsFromList(pods: readonly PodJson[]): DnsPodCandidate[] {
  const out: DnsPodCandidate[] = [];
  for (const p of pods) {
    if (!p.metadata?.name || p.metadata.deletionTimestamp || p.status?.phase !== 'Running') continue;
    const ports = (p.spec?.containers ?? []).flatMap((c) => c.ports ?? []).filter((x) => (x.protocol ?? 'TCP') === 'TCP');
    const port = (ports.find((x) => x.name === 'dns-tcp') ?? ports[0])?.containerPort ?? DNS_PORT;
    const ready = (p.status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
    out.push({ namespace: p.metadata.namespace ?? CLUSTER_DNS.namespace, name: p.metadata.name, ip: p.status.podIP ?? null, port, ready, from: 'pod-label' });
  }
  return out.sort((a, b) => Number(b.ready) - Number(a.ready));
}

/** The Service's ClusterIPs and ports (`spec`), empty for a missing or headless Service. Pure. */
export function serviceAddresses(svc: ServiceJson | null): Pick<ClusterDnsTargets, 'clusterIPs' | 'servicePorts'> {
  const spec = svc?.spec ?? {};
  const ips = (spec.clusterIPs ?? (spec.clusterIP ? [spec.clusterIP] : [])).filter((ip) => ip !== 'None' && ip !== '');
  const servicePorts = (spec.ports ?? []).filter((p) => typeof p.port === 'number').map((p) => ({ name: p.name ?? '', protocol: p.protocol ?? 'TCP', port: p.port! }));
  return { clusterIPs: ips, servicePorts };
}

async function getJson<T>(kube: KubeContext, path: string, query: Record<string, string> | undefined, action: { verb: string; resource: string }): Promise<T | null> {
  try {
    return JSON.parse(await k8sRequest(kube, 'GET', path, query ? { query } : {})) as T;
  } catch (e) {
    if (e instanceof K8sStatusError && e.code === 404) return null;
    throw explainK8sError(e, { ...action, namespace: CLUSTER_DNS.namespace }, kube.server);
  }
}

/**
 * Reads the kube-dns Service, its EndpointSlices and (when the slices name no pod) the
 * `k8s-app=kube-dns` pods. Throws `UserError` when RBAC forbids what is needed (naming
 * verb and resource) or no CoreDNS pod is found, `TransportError` when the API server
 * cannot be reached.
 */
export async function findClusterDnsPods(kube: KubeContext): Promise<ClusterDnsTargets> {
  const ns = CLUSTER_DNS.namespace;
  let svc: ServiceJson | null = null;
  let serviceProblem: string | undefined;
  try {
    svc = await getJson<ServiceJson>(kube, `${collectionPath('services', ns)}/${CLUSTER_DNS.service}`, undefined, { verb: 'get', resource: 'services' });
    if (!svc) serviceProblem = `there is no Service ${ns}/${CLUSTER_DNS.service}`;
  } catch (e) {
    // Without the Service the pods are still found by label; only the ClusterIP mapping is lost.
    if (!(e instanceof UserError)) throw e;
    serviceProblem = e.message;
  }
  let pods: DnsPodCandidate[] = [];
  let sliceError: Error | null = null;
  try {
    const slices = await getJson<{ items?: SliceJson[] }>(kube, collectionPath('endpointslices', ns), { labelSelector: `kubernetes.io/service-name=${CLUSTER_DNS.service}` }, { verb: 'list', resource: 'endpointslices' });
    pods = podsFromSlices(slices?.items ?? []);
  } catch (e) {
    if (!(e instanceof UserError)) throw e;
    sliceError = e;
  }
  if (pods.length === 0) {
    try {
      const list = await getJson<{ items?: PodJson[] }>(kube, collectionPath('pods', ns), { labelSelector: CLUSTER_DNS.podLabel }, { verb: 'list', resource: 'pods' });
      pods = podsFromList(list?.items ?? []);
    } catch (e) {
      throw sliceError ?? e;
    }
  }
  if (pods.length === 0) {
    throw new UserError(said('ue.coredns.none', { ns, service: CLUSTER_DNS.service, label: CLUSTER_DNS.podLabel }), said('ue.coredns.check', { ns, label: CLUSTER_DNS.podLabel }));
  }
  return { ...serviceAddresses(svc), pods, ...(serviceProblem ? { serviceProblem } : {}) };
}
