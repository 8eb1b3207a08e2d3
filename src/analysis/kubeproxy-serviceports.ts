/**
 * kube-proxy's view of Services, shared by both rule generators: one entry per Service
 * port ("ServicePort"), its endpoints sorted as kube-proxy sorts them, and the endpoint
 * categorisation by traffic policy.
 *
 * Sources: k8s.io/kubernetes pkg/proxy/serviceport.go (`ExternallyAccessible`,
 * `UsesClusterEndpoints`, `UsesLocalEndpoints`), pkg/proxy/topology.go
 * (`CategorizeEndpoints`, without topology hints), pkg/proxy/endpointslicecache.go
 * (endpoints sorted by `ip:port` string), pkg/api/service/util.go (`NeedsHealthCheck`).
 */
import type { KubeProxyInput, ScenarioEndpoint, ScenarioService, ScenarioServicePort } from './lab-scenario-types.js';
import { protoLower, servicePortName } from './kubeproxy-names.js';
import { cidrContains, joinHostPort, parseAddress } from '../net/address.js';

/** One endpoint of one Service port: its address, DNAT target `ip:port` and conditions. */
export interface ProxyEndpoint {
  readonly ip: string;
  readonly port: number;
  /** `ip:port` as kube-proxy's `Endpoint.String()`. */
  readonly hostPort: string;
  readonly isLocal: boolean;
  readonly ready: boolean;
  readonly serving: boolean;
  readonly terminating: boolean;
}

/** One Service port as kube-proxy's proxiers iterate it, with derived policy facts. */
export interface ProxyServicePort {
  readonly service: ScenarioService;
  readonly port: ScenarioServicePort;
  /** `ns/name:port` (kube-proxy's `svcPortNameString`). */
  readonly svcPortName: string;
  /** Lower-case protocol (`tcp`). */
  readonly protocol: string;
  readonly clusterIP: string;
  readonly nodePort: number;
  readonly externalIPs: readonly string[];
  readonly loadBalancerVIPs: readonly string[];
  /** Trimmed source-range CIDRs. */
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
  /** All endpoints of the port, sorted by `ip:port` string. */
  readonly endpoints: readonly ProxyEndpoint[];
}

/** The result of kube-proxy's `CategorizeEndpoints`. */
export interface CategorizedEndpoints {
  readonly clusterEndpoints: readonly ProxyEndpoint[];
  readonly localEndpoints: readonly ProxyEndpoint[];
  readonly allLocallyReachableEndpoints: readonly ProxyEndpoint[];
  readonly hasAnyEndpoints: boolean;
}

/** True when kube-proxy would program the Service at all (has a ClusterIP). */
export function isProxied(service: ScenarioService): boolean {
  return service.clusterIP !== '' && service.clusterIP.toLowerCase() !== 'none';
}

/**
 * Expands the input into Service ports in a stable order: by `ns/name`, then by the
 * order of `spec.ports` (the order kube-proxy's own test sorting produces). Headless
 * Services are skipped.
 */
export function serviceToPorts(input: KubeProxyInput): ProxyServicePort[] {
  const services = input.services.filter(isProxied);
  const byName = [...services].sort((a, b) => cmp(`${a.namespace}/${a.name}`, `${b.namespace}/${b.name}`));
  const out: ProxyServicePort[] = [];
  for (const service of byName) {
    for (const port of service.ports) out.push(makeServicePort(service, port, input.nodeName));
  }
  return out;
}

function makeServicePort(service: ScenarioService, port: ScenarioServicePort, nodeName: string): ProxyServicePort {
  const nodePort = port.nodePort ?? 0;
  const externalIPs = service.externalIPs ?? [];
  const loadBalancerVIPs = service.loadBalancerIPs ?? [];
  const externallyAccessible = nodePort !== 0 || loadBalancerVIPs.length > 0 || externalIPs.length > 0;
  const externalPolicyLocal = externallyAccessible && service.externalTrafficPolicy === 'Local';
  const internalPolicyLocal = service.internalTrafficPolicy === 'Local';
  const needsHealthCheck = service.type === 'LoadBalancer' && service.externalTrafficPolicy === 'Local';
  const endpoints = service.endpoints
    .map((ep) => toProxyEndpoint(ep, port.targetPort, nodeName))
    .sort((a, b) => cmp(a.hostPort, b.hostPort));
  return {
    service,
    port,
    svcPortName: servicePortName(service.namespace, service.name, port.name),
    protocol: protoLower(port.protocol),
    clusterIP: service.clusterIP,
    nodePort,
    externalIPs,
    loadBalancerVIPs,
    loadBalancerSourceRanges: (service.loadBalancerSourceRanges ?? []).map((r) => r.trim()).filter((r) => r !== ''),
    healthCheckNodePort: needsHealthCheck ? (service.healthCheckNodePort ?? 0) : 0,
    stickyMaxAgeSeconds: service.sessionAffinity?.timeoutSeconds ?? 0,
    externallyAccessible,
    externalPolicyLocal,
    internalPolicyLocal,
    usesClusterEndpoints: !internalPolicyLocal || (externallyAccessible && !externalPolicyLocal),
    usesLocalEndpoints: internalPolicyLocal || (externallyAccessible && externalPolicyLocal),
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
  };
}

/**
 * kube-proxy's `CategorizeEndpoints` (without topology hints): Cluster-policy endpoints
 * (ready ones, else serving+terminating ones), Local-policy endpoints (local ready ones,
 * else local serving+terminating ones), their union, and whether any usable endpoint
 * exists anywhere.
 */
export function categorizeEndpoints(svc: ProxyServicePort): CategorizedEndpoints {
  let clusterEndpoints: ProxyEndpoint[] = [];
  let localEndpoints: ProxyEndpoint[] = [];
  let hasAnyEndpoints = false;
  const eps = svc.endpoints;

  if (svc.usesClusterEndpoints) {
    clusterEndpoints = eps.filter((ep) => ep.ready);
    if (clusterEndpoints.length === 0) clusterEndpoints = eps.filter((ep) => ep.serving && ep.terminating);
    if (clusterEndpoints.length > 0) hasAnyEndpoints = true;
  }
  if (!svc.usesLocalEndpoints) {
    return { clusterEndpoints, localEndpoints, allLocallyReachableEndpoints: clusterEndpoints, hasAnyEndpoints };
  }

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
  if (hasLocalReady) localEndpoints = eps.filter((ep) => ep.isLocal && ep.ready);
  else if (hasLocalServingTerminating) localEndpoints = eps.filter((ep) => ep.isLocal && ep.serving && ep.terminating);

  if (!svc.usesClusterEndpoints) {
    return { clusterEndpoints, localEndpoints, allLocallyReachableEndpoints: localEndpoints, hasAnyEndpoints };
  }
  const seen = new Set(clusterEndpoints.map((ep) => ep.hostPort));
  const union = [...clusterEndpoints, ...localEndpoints.filter((ep) => !seen.has(ep.hostPort))];
  return { clusterEndpoints, localEndpoints, allLocallyReachableEndpoints: union, hasAnyEndpoints };
}

/** True when `ip` (dotted quad) lies in `cidr` (`a.b.c.d/n`); false for malformed input and for IPv6. */
export function ipv4InCidr(ip: string, cidr: string): boolean {
  return parseAddress(ip)?.family === 'ipv4' && cidrContains(cidr, ip);
}

/** Plain code-unit string comparison, as Go's `<` on strings. */
export function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
