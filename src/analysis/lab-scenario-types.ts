/**
 * Input types for the kube-proxy rule generators (`kubeproxy-iptables.ts`,
 * `kubeproxy-nftables.ts`) and for the node lab scenario (`test/lab/scenario.ts`).
 *
 * They model what kube-proxy itself reads from the API server, reduced to the fields
 * its proxiers use (k8s.io/kubernetes pkg/proxy/serviceport.go, endpoint.go,
 * endpointslicecache.go): one Service with its ports, plus the endpoints of its
 * EndpointSlices with their conditions, node name, zone and topology hints. One input is
 * one IP family (kube-proxy runs one proxier per family): addresses are IPv4 dotted quads,
 * or IPv6 when `family` is `IPv6`; ports are TCP/UDP/SCTP port numbers (1–65535).
 */

/** A Service port's L4 protocol, spelled as the Kubernetes API spells it. */
export type L4Protocol = 'TCP' | 'UDP' | 'SCTP';

/** `spec.type` of a Service that kube-proxy programs (ExternalName is never proxied). */
export type ServiceType = 'ClusterIP' | 'NodePort' | 'LoadBalancer';

/** `spec.externalTrafficPolicy` / `spec.internalTrafficPolicy`. */
export type TrafficPolicy = 'Cluster' | 'Local';

/** core/v1 `IPFamily`: which of kube-proxy's two proxiers (iptables/ip6tables, `ip`/`ip6 kube-proxy`) an input is for. */
export type ProxyFamily = 'IPv4' | 'IPv6';

/** One entry of `spec.ports`. `targetPort` is numeric here (the resolved container port). */
export interface ScenarioServicePort {
  /** Port name; `''` for an unnamed single port (kube-proxy then writes `ns/name` without `:port`). */
  readonly name: string;
  readonly protocol: L4Protocol;
  /** The Service port (ClusterIP side). */
  readonly port: number;
  /** The endpoint (container) port traffic is DNATed to. */
  readonly targetPort: number;
  /** `spec.ports[].nodePort`; absent or 0 when the Service has none. */
  readonly nodePort?: number;
}

/**
 * One endpoint of the Service's EndpointSlices (discovery.k8s.io/v1 `endpoints[]`), one
 * address. Conditions follow the API's meaning: `ready` (may receive new traffic),
 * `serving` (ready regardless of termination), `terminating`.
 */
export interface ScenarioEndpoint {
  readonly ip: string;
  /** `nodeName`; absent means kube-proxy treats it as not local to any node. */
  readonly nodeName?: string;
  readonly ready: boolean;
  readonly serving: boolean;
  readonly terminating: boolean;
  /** Name of the backing Pod (for `targetRef` and the lab's servers); absent for manual endpoints. */
  readonly podName?: string;
  /** `zone` of the endpoint (shown only: kube-proxy decides by hints, not by this). */
  readonly zone?: string;
  /** `hints.forZones[].name` (set by the EndpointSlice controller for PreferSameZone / PreferClose). */
  readonly zoneHints?: readonly string[];
  /** `hints.forNodes[].name` (set for PreferSameNode, KEP-3015). */
  readonly nodeHints?: readonly string[];
}

/** Session affinity `ClientIP` with its timeout in seconds (API default 10800). */
export interface ScenarioSessionAffinity {
  readonly timeoutSeconds: number;
}

/**
 * A Service as kube-proxy sees it, together with its endpoints.
 *
 * `clusterIP: 'None'` is a headless Service: kube-proxy writes no rules for it.
 */
export interface ScenarioService {
  readonly namespace: string;
  readonly name: string;
  readonly type: ServiceType;
  /** `spec.clusterIP`; `'None'` for headless. */
  readonly clusterIP: string;
  readonly ports: readonly ScenarioServicePort[];
  /** `spec.selector`; used only to write the API objects. */
  readonly selector?: Readonly<Record<string, string>>;
  readonly externalIPs?: readonly string[];
  /** `status.loadBalancer.ingress[].ip`. */
  readonly loadBalancerIPs?: readonly string[];
  /**
   * The entries of `loadBalancerIPs` whose `ipMode` is `Proxy` (KEP-1860): the load balancer
   * proxies to the node, so kube-proxy programs no rule for them (pkg/proxy/serviceport.go).
   */
  readonly ipModeProxyIPs?: readonly string[];
  /**
   * The `service.kubernetes.io/service-proxy-name` label (KEP-2447): another proxy owns the
   * Service; kube-proxy never lists it, so the generators write nothing for it.
   */
  readonly serviceProxyName?: string;
  /** `spec.trafficDistribution`, for explanations only: kube-proxy follows the endpoints' hints. */
  readonly trafficDistribution?: string;
  /** `spec.loadBalancerSourceRanges` (CIDRs; surrounding blanks tolerated as kube-proxy does). */
  readonly loadBalancerSourceRanges?: readonly string[];
  /** Default `Cluster`. Only meaningful when the Service is externally accessible. */
  readonly externalTrafficPolicy?: TrafficPolicy;
  /** Default `Cluster`. */
  readonly internalTrafficPolicy?: TrafficPolicy;
  readonly sessionAffinity?: ScenarioSessionAffinity;
  /** `spec.healthCheckNodePort`; kube-proxy uses it only for LoadBalancer + externalTrafficPolicy Local. */
  readonly healthCheckNodePort?: number;
  /** The endpoints of all the Service's EndpointSlices; every port maps to `targetPort` on each. */
  readonly endpoints: readonly ScenarioEndpoint[];
}

/**
 * What one kube-proxy instance needs to compute its rules: its node and every Service.
 *
 * - `nodeName`: the node kube-proxy runs on (endpoints with this `nodeName` are local; `hints.forNodes` are matched against it).
 * - `nodeIPs`: the node's primary addresses (used for NodePort addresses in nftables mode
 *   and the LoadBalancerSourceRanges "allow from node" case).
 * - `clusterCIDR`: the pod CIDR of the cluster, kube-proxy's `--cluster-cidr` local-traffic
 *   detector; absent means "detect-local not implemented" (no `! -s CIDR` masquerade rule).
 * - `serviceCIDRs`: the Service ClusterIP ranges (nftables `cluster-ips-check` drops
 *   traffic to unallocated ClusterIPs in them).
 */
export interface KubeProxyInput {
  readonly nodeName: string;
  /** The node's `topology.kubernetes.io/zone` label; absent or `''` when the Node has none (zone hints are then ignored). */
  readonly nodeZone?: string;
  /** The proxier's IP family; default `IPv4`. Addresses of the other family in the input are ignored, as kube-proxy does. */
  readonly family?: ProxyFamily;
  readonly nodeIPs: readonly string[];
  readonly clusterCIDR?: string;
  readonly serviceCIDRs?: readonly string[];
  readonly services: readonly ScenarioService[];
}

/** A Kubernetes Node of the lab: name, InternalIP, `spec.podCIDR`. */
export interface ScenarioNode {
  readonly name: string;
  readonly internalIP: string;
  readonly podCIDR: string;
  /** Its `topology.kubernetes.io/zone` label, when it has one. */
  readonly zone?: string;
}

/**
 * A Pod of the lab: identity, where it runs, and what it runs.
 *
 * - `key`: short stable id used for network namespace and file names (`web-1`).
 * - `role`: `web` pods run an HTTP server on `httpPort`; `dns` pods run a DNS server
 *   (port 53, UDP and TCP); `client` pods run nothing.
 */
export interface ScenarioPod {
  readonly key: string;
  readonly namespace: string;
  readonly name: string;
  readonly ip: string;
  readonly nodeName: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly role: 'client' | 'web' | 'dns';
  readonly image: string;
  /** Container port the pod serves on (web: HTTP; dns: 53). */
  readonly httpPort?: number;
  /** Owner ReplicaSet name, when the pod belongs to a Deployment. */
  readonly replicaSet?: string;
}

/**
 * A whole lab scenario: kube-proxy's input plus the nodes, pods and network addresses
 * around it. `clusterDomain` is the DNS suffix (`cluster.local`); `createdAt` is the
 * fixed ISO-8601 creation time of every API object (keeps captures deterministic).
 */
export interface LabScenario extends KubeProxyInput {
  readonly nodes: readonly ScenarioNode[];
  readonly pods: readonly ScenarioPod[];
  readonly clusterDomain: string;
  /** The host outside the cluster, on the node network (sends NodePort traffic). */
  readonly outsideIP: string;
  /** Prefix length of the node network (`192.168.49.0/24` → 24). */
  readonly nodeNetworkPrefix: number;
  readonly createdAt: string;
}
