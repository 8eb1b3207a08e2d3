/**
 * kube-proxy's view of Services, shared by both rule generators: one entry per Service
 * port ("ServicePort") of one IP family, its endpoints sorted as kube-proxy sorts them,
 * and the endpoint categorisation by traffic policy and topology.
 *
 * Sources (kubernetes release-1.35): pkg/proxy/serviceport.go (`newBaseServiceInfo`:
 * externalIPs, source ranges and LB ingress IPs filtered to the proxier's family, ingress
 * with `ipMode: Proxy` dropped; `ExternallyAccessible`, `UsesClusterEndpoints`,
 * `UsesLocalEndpoints`), pkg/proxy/topology.go (`CategorizeEndpoints`,
 * `topologyModeFromHints`, `availableForTopology`), pkg/proxy/endpointslicecache.go
 * (endpoints sorted by `ip:port` string), pkg/api/service/util.go (`NeedsHealthCheck`),
 * cmd/kube-proxy/app/server.go (Services labelled `service.kubernetes.io/service-proxy-name`
 * are never listed).
 */
import type { KubeProxyInput, ProxyFamily, ScenarioEndpoint, ScenarioService, ScenarioServicePort } from './lab-scenario-types.js';
import { protoLower, servicePortName } from './kubeproxy-names.js';
import { addressFamily, cidrContains, joinHostPort, parseAddress } from '../net/address.js';

/** One endpoint of one Service port: its address, DNAT target `ip:port`, conditions and hints. */
export interface ProxyEndpoint {
  readonly ip: string;
  readonly port: number;
  /** `ip:port` as kube-proxy's `Endpoint.String()` (IPv6 bracketed). */
  readonly hostPort: string;
  readonly isLocal: boolean;
  readonly ready: boolean;
  readonly serving: boolean;
  readonly terminating: boolean;
  /** `hints.forZones[].name`; `[]` when the endpoint has none. */
  readonly zoneHints: readonly string[];
  /** `hints.forNodes[].name`; `[]` when the endpoint has none. */
  readonly nodeHints: readonly string[];
  /** The endpoint's `zone` (display only). */
  readonly zone: string | undefined;
  /** The endpoint's `nodeName` (display only; `isLocal` is what kube-proxy uses). */
  readonly nodeName: string | undefined;
}

/** One Service port as kube-proxy's proxiers iterate it, with derived policy facts. */
export interface ProxyServicePort {
  readonly service: ScenarioService;
  readonly port: ScenarioServicePort;
  /** `ns/name:port` (kube-proxy's `svcPortNameString`). */
  readonly svcPortName: string;
  /** Lower-case protocol (`tcp`). */
  readonly protocol: string;
  readonly family: ProxyFamily;
  readonly clusterIP: string;
  readonly nodePort: number;
  /** externalIPs of the proxier's family. */
  readonly externalIPs: readonly string[];
  /** LB ingress IPs of the proxier's family whose ipMode is VIP (or unset). */
  readonly loadBalancerVIPs: readonly string[];
  /** LB ingress IPs of the proxier's family with ipMode Proxy: not programmed. */
  readonly loadBalancerProxyIPs: readonly string[];
  /** Trimmed source-range CIDRs of the proxier's family. */
  readonly loadBalancerSourceRanges: readonly string[];
  /** 0 unless the Service is LoadBalancer with externalTrafficPolicy Local. */
  readonly healthCheckNodePort: number;
  /** ClientIP affinity timeout in seconds, or 0 for no affinity. */
  readonly stickyMaxAgeSeconds: number;
  readonly externallyAccessible: boolean;
  readonly externalPolicyLocal: boolean;
  readonly internalPolicyLocal: boolean;
  readonly usesClusterEndpoints: boolean;
  readonly usesLocalEndpoints: boolean;
  /** The node kube-proxy runs on (node hints are matched against it). */
  readonly nodeName: string;
  /** The node's zone label, `''` when it has none (zone hints are matched against it). */
  readonly nodeZone: string;
  /** All endpoints of the port, sorted by `ip:port` string. */
  readonly endpoints: readonly ProxyEndpoint[];
}

/** Which hints kube-proxy follows for Cluster-policy traffic: none (`''`), the node's zone, or the node itself. */
export type TopologyMode = '' | 'PreferSameZone' | 'PreferSameNode';

/**
 * Why kube-proxy follows no hints although some endpoints carry them (kube-proxy logs these
 * at V(2)/V(7)): `node-hint-missing` (a ready endpoint has no `forNodes` hint),
 * `no-hint-for-node` (every ready endpoint has node hints, none for this node),
 * `zone-hint-missing`, `no-hint-for-zone`, `node-zone-unset` (zone hints exist but the
 * Node has no zone label).
 */
export type TopologyFallback = 'node-hint-missing' | 'no-hint-for-node' | 'zone-hint-missing' | 'no-hint-for-zone' | 'node-zone-unset';

/** The result of kube-proxy's `CategorizeEndpoints`, plus how it decided. */
export interface CategorizedEndpoints {
  readonly clusterEndpoints: readonly ProxyEndpoint[];
  readonly localEndpoints: readonly ProxyEndpoint[];
  readonly allLocallyReachableEndpoints: readonly ProxyEndpoint[];
  readonly hasAnyEndpoints: boolean;
  /** The hints followed for `clusterEndpoints` (`''` for none, always `''` when Cluster policy is unused). */
  readonly topologyMode: TopologyMode;
  /** Why hints were present but not followed, in the order kube-proxy checks them (node first); `[]` otherwise. */
  readonly topologyFallbacks: readonly TopologyFallback[];
  /** `clusterEndpoints` are serving-terminating ones because no endpoint is ready (KEP-1669). */
  readonly clusterTerminatingFallback: boolean;
  /** `localEndpoints` are serving-terminating ones because no local endpoint is ready (KEP-1669). */
  readonly localTerminatingFallback: boolean;
}

/** True when kube-proxy would program the Service at all: it has a ClusterIP and no other proxy owns it. */
export function isProxied(service: ScenarioService): boolean {
  return service.clusterIP !== '' && service.clusterIP.toLowerCase() !== 'none' && service.serviceProxyName === undefined;
}

/**
 * Expands the input into Service ports in a stable order: by `ns/name`, then by the
 * order of `spec.ports` (the order kube-proxy's own test sorting produces). Headless
 * Services, Services of another proxy (`service-proxy-name`) and Services without a
 * ClusterIP of the input's family are skipped.
 */
export function serviceToPorts(input: KubeProxyInput): ProxyServicePort[] {
  const family = input.family ?? 'IPv4';
  const services = input.services.filter((s) => isProxied(s) && familyOf(s.clusterIP) === family);
  const byName = [...services].sort((a, b) => cmp(`${a.namespace}/${a.name}`, `${b.namespace}/${b.name}`));
  const out: ProxyServicePort[] = [];
  for (const service of byName) {
    // The endpoints of the family are the same for every port: read each address's family once.
    const endpoints = service.endpoints.filter((ep) => familyOf(ep.ip) === family);
    for (const port of service.ports) out.push(makeServicePort(service, port, input, endpoints));
  }
  return out;
}

/** `IPv4`/`IPv6` of an address or CIDR, undefined when it is neither. */
export function familyOf(ipOrCidr: string): ProxyFamily | undefined {
  const slash = ipOrCidr.indexOf('/');
  const f = addressFamily(slash < 0 ? ipOrCidr : ipOrCidr.slice(0, slash));
  return f === null ? undefined : f === 'ipv4' ? 'IPv4' : 'IPv6';
}

/** One Service port as kube-proxy's `family` proxier reads it; `familyEndpoints`: `service.endpoints` of that family, in their order. */
function makeServicePort(service: ScenarioService, port: ScenarioServicePort, input: KubeProxyInput, familyEndpoints: readonly ScenarioEndpoint[]): ProxyServicePort {
  const family = input.family ?? 'IPv4';
  const ofFamily = (ip: string): boolean => familyOf(ip) === family;
  const nodePort = port.nodePort ?? 0;
  const externalIPs = (service.externalIPs ?? []).filter(ofFamily);
  const proxyIPs = new Set(service.ipModeProxyIPs ?? []);
  const ingress = (service.loadBalancerIPs ?? []).filter(ofFamily);
  const loadBalancerVIPs = ingress.filter((ip) => !proxyIPs.has(ip));
  const externallyAccessible = nodePort !== 0 || loadBalancerVIPs.length > 0 || externalIPs.length > 0;
  const externalPolicyLocal = externallyAccessible && service.externalTrafficPolicy === 'Local';
  const internalPolicyLocal = service.internalTrafficPolicy === 'Local';
  const needsHealthCheck = service.type === 'LoadBalancer' && service.externalTrafficPolicy === 'Local';
  const endpoints = familyEndpoints
    .map((ep) => toProxyEndpoint(ep, port.targetPort, input.nodeName))
    .sort((a, b) => cmp(a.hostPort, b.hostPort));
  return {
    service,
    port,
    svcPortName: servicePortName(service.namespace, service.name, port.name),
    protocol: protoLower(port.protocol),
    family,
    clusterIP: service.clusterIP,
    nodePort,
    externalIPs,
    loadBalancerVIPs,
    loadBalancerProxyIPs: ingress.filter((ip) => proxyIPs.has(ip)),
    loadBalancerSourceRanges: (service.loadBalancerSourceRanges ?? []).map((r) => r.trim()).filter((r) => r !== '' && ofFamily(r)),
    healthCheckNodePort: needsHealthCheck ? (service.healthCheckNodePort ?? 0) : 0,
    stickyMaxAgeSeconds: service.sessionAffinity?.timeoutSeconds ?? 0,
    externallyAccessible,
    externalPolicyLocal,
    internalPolicyLocal,
    usesClusterEndpoints: !internalPolicyLocal || externallyAccessible,
    usesLocalEndpoints: internalPolicyLocal || externalPolicyLocal,
    nodeName: input.nodeName,
    nodeZone: input.nodeZone ?? '',
    endpoints,
  };
}

function toProxyEndpoint(ep: ScenarioEndpoint, port: number, nodeName: string): ProxyEndpoint {
  return {
    ip: ep.ip,
    port,
    hostPort: joinHostPort(ep.ip, port),
    isLocal: ep.nodeName !== undefined && ep.nodeName === nodeName,
    ready: ep.ready,
    serving: ep.serving,
    terminating: ep.terminating,
    zoneHints: ep.zoneHints ?? [],
    nodeHints: ep.nodeHints ?? [],
    zone: ep.zone,
    nodeName: ep.nodeName,
  };
}

/**
 * kube-proxy's `topologyModeFromHints` (PreferSameTrafficDistribution GA in 1.35): follow
 * node hints when every ready endpoint has one and one names this node; else zone hints
 * when every ready endpoint has one and one names this node's zone; else none. The
 * fallbacks say why hints present were not followed.
 */
export function topologyMode(svc: ProxyServicePort): { mode: TopologyMode; fallbacks: TopologyFallback[] } {
  const ready = svc.endpoints.filter((ep) => ep.ready);
  if (ready.length === 0) return { mode: '', fallbacks: [] };
  const fallbacks: TopologyFallback[] = [];
  const anyNodeHint = ready.some((ep) => ep.nodeHints.length > 0);
  if (ready.every((ep) => ep.nodeHints.length > 0)) {
    if (ready.some((ep) => ep.nodeHints.includes(svc.nodeName))) return { mode: 'PreferSameNode', fallbacks };
    fallbacks.push('no-hint-for-node');
  } else if (anyNodeHint) {
    fallbacks.push('node-hint-missing');
  }
  const anyZoneHint = ready.some((ep) => ep.zoneHints.length > 0);
  if (ready.every((ep) => ep.zoneHints.length > 0)) {
    if (ready.some((ep) => ep.zoneHints.includes(svc.nodeZone))) return { mode: 'PreferSameZone', fallbacks };
    fallbacks.push(svc.nodeZone === '' ? 'node-zone-unset' : 'no-hint-for-zone');
  } else if (anyZoneHint) {
    fallbacks.push('zone-hint-missing');
  }
  return { mode: '', fallbacks };
}

/** `availableForTopology`: whether `ep` may be used under `mode` on this node (no fallback here). */
export function availableForTopology(ep: ProxyEndpoint, mode: TopologyMode, svc: ProxyServicePort): boolean {
  if (mode === 'PreferSameNode') return ep.nodeHints.includes(svc.nodeName);
  if (mode === 'PreferSameZone') return ep.zoneHints.includes(svc.nodeZone);
  return true;
}

/**
 * kube-proxy's `CategorizeEndpoints`: Cluster-policy endpoints (ready ones available for
 * the topology mode, else serving+terminating ones anywhere), Local-policy endpoints (local
 * ready ones, else local serving+terminating ones; no topology), their union, and whether
 * any usable endpoint exists anywhere. Topology applies to Cluster policy only.
 */
export function categorizeEndpoints(svc: ProxyServicePort): CategorizedEndpoints {
  let clusterEndpoints: ProxyEndpoint[] = [];
  let localEndpoints: ProxyEndpoint[] = [];
  let hasAnyEndpoints = false;
  let mode: TopologyMode = '';
  let fallbacks: TopologyFallback[] = [];
  let clusterTerminatingFallback = false;
  let localTerminatingFallback = false;
  const eps = svc.endpoints;
  const result = (all: readonly ProxyEndpoint[]): CategorizedEndpoints => ({
    clusterEndpoints, localEndpoints, allLocallyReachableEndpoints: all, hasAnyEndpoints,
    topologyMode: mode, topologyFallbacks: fallbacks, clusterTerminatingFallback, localTerminatingFallback,
  });

  if (svc.usesClusterEndpoints) {
    ({ mode, fallbacks } = topologyMode(svc));
    clusterEndpoints = eps.filter((ep) => ep.ready && availableForTopology(ep, mode, svc));
    if (clusterEndpoints.length === 0) {
      clusterEndpoints = eps.filter((ep) => ep.serving && ep.terminating);
      clusterTerminatingFallback = clusterEndpoints.length > 0;
    }
    if (clusterEndpoints.length > 0) hasAnyEndpoints = true;
  }
  if (!svc.usesLocalEndpoints) return result(clusterEndpoints);

  let hasLocalReady = false;
  let hasLocalServingTerminating = false;
  for (const ep of eps) {
    if (ep.ready) {
      hasAnyEndpoints = true;
      if (ep.isLocal) hasLocalReady = true;
    } else if (ep.serving && ep.terminating) {
      hasAnyEndpoints = true;
      if (ep.isLocal) hasLocalServingTerminating = true;
    }
  }
  if (hasLocalReady) {
    localEndpoints = eps.filter((ep) => ep.isLocal && ep.ready);
  } else if (hasLocalServingTerminating) {
    localEndpoints = eps.filter((ep) => ep.isLocal && ep.serving && ep.terminating);
    localTerminatingFallback = true;
  }

  if (!svc.usesClusterEndpoints) return result(localEndpoints);
  // The union, in ip:port order (kube-proxy merges through a map; its tests sort).
  const seen = new Set(clusterEndpoints.map((ep) => ep.hostPort));
  const union = [...clusterEndpoints, ...localEndpoints.filter((ep) => !seen.has(ep.hostPort))].sort((a, b) => cmp(a.hostPort, b.hostPort));
  return result(union);
}

/**
 * The choices both proxiers' `syncProxyRules` make for one Service port before writing
 * anything (pkg/proxy/iptables/proxier.go and pkg/proxy/nftables/proxier.go agree on them):
 * whether internal (ClusterIP) and external traffic have endpoints under their policy,
 * which policy chains exist, and what traffic without endpoints gets (`reject` when there
 * is no usable endpoint anywhere, `drop` when the Local policy has none on this node, `''`
 * when it has endpoints).
 */
export interface ServicePortPlan {
  readonly cat: CategorizedEndpoints;
  readonly hasInternalEndpoints: boolean;
  readonly hasExternalEndpoints: boolean;
  readonly usesClusterPolicyChain: boolean;
  readonly usesLocalPolicyChain: boolean;
  readonly usesExternalTrafficChain: boolean;
  readonly internalVerdict: '' | 'reject' | 'drop';
  readonly externalVerdict: '' | 'reject' | 'drop';
}

/** The {@link ServicePortPlan} of one Service port (categorising its endpoints). */
export function planServicePort(svc: ProxyServicePort): ServicePortPlan {
  const cat = categorizeEndpoints(svc);
  const hasInternalEndpoints = cat.hasAnyEndpoints && !(svc.internalPolicyLocal && cat.localEndpoints.length === 0);
  const hasExternalEndpoints = cat.hasAnyEndpoints && !(svc.externalPolicyLocal && cat.localEndpoints.length === 0);
  const verdict = (has: boolean): '' | 'reject' | 'drop' => (!cat.hasAnyEndpoints ? 'reject' : has ? '' : 'drop');
  return {
    cat,
    hasInternalEndpoints,
    hasExternalEndpoints,
    usesClusterPolicyChain: cat.clusterEndpoints.length > 0 && svc.usesClusterEndpoints,
    usesLocalPolicyChain: cat.localEndpoints.length > 0 && svc.usesLocalEndpoints,
    usesExternalTrafficChain: cat.hasAnyEndpoints && svc.externallyAccessible,
    internalVerdict: verdict(hasInternalEndpoints),
    externalVerdict: verdict(hasExternalEndpoints),
  };
}

/** True when `ip` lies in `cidr` and both are of one family; false for malformed input. */
export function ipInCidr(ip: string, cidr: string): boolean {
  return parseAddress(ip) !== null && cidrContains(cidr, ip);
}

/** True when `ip` (dotted quad) lies in `cidr` (`a.b.c.d/n`); false for malformed input and for IPv6. */
export function ipv4InCidr(ip: string, cidr: string): boolean {
  return parseAddress(ip)?.family === 'ipv4' && cidrContains(cidr, ip);
}

/** Plain code-unit string comparison, as Go's `<` on strings. */
export function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
