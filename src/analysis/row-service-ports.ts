/**
 * A Service row's kube-proxy Service ports read straight from the row, for the commonest
 * shape only: what `scenarioService` (src/analysis/compare-modes-input.ts) then
 * `serviceToPorts` (src/analysis/kubeproxy-serviceports.ts) give for the row's IPv4 and IPv6
 * families, without the generators' input between them (a ScenarioService and a
 * ScenarioEndpoint per endpoint, the family filters and the one-Service sort). `show services`
 * asks this for every Service of a node with thousands; the rules themselves (kube-proxy's
 * pkg/proxy/serviceport.go, endpointslicecache.go, release-1.35) are the two functions' —
 * this reads the same row fields with the same defaults, and the tests hold it equal to them.
 *
 * Shape read (anything else gives null: the caller takes the generators' way):
 * ClusterIPs all IPv4 dotted quads (so no IPv6 part), no externalIPs, no LB ingress, no
 * source ranges, no topology hint on any endpoint. Not ExternalName, headless or another
 * proxy's (the caller has skipped those before). Pure.
 */
import { familyOf, cmp, type ProxyEndpoint, type ProxyServicePort } from './kubeproxy-serviceports.js';
import { isV4ClusterIP, scenarioService } from './compare-modes-input.js';
import type { ScenarioService, ScenarioServicePort } from './lab-scenario-types.js';
import { protoLower, servicePortName } from './kubeproxy-names.js';
import type { EndpointRow, ServiceRow } from './service-types.js';

/** The hints of an endpoint without any: shared, never written (the expectation only reads their length). */
const NO_HINTS: readonly string[] = Object.freeze([]);

/**
 * A Service port read from its row: the fields `makeServicePort` sets, `service` made on first
 * read (the expectation never reads it; a caller that does gets the generators' own value).
 */
class RowServicePort implements ProxyServicePort {
  readonly family = 'IPv4' as const;
  readonly externalIPs: readonly string[] = [];
  readonly loadBalancerVIPs: readonly string[] = [];
  readonly loadBalancerProxyIPs: readonly string[] = [];
  readonly loadBalancerSourceRanges: readonly string[] = [];
  readonly usesClusterEndpoints: boolean;
  readonly usesLocalEndpoints: boolean;
  readonly externallyAccessible: boolean;
  readonly externalPolicyLocal: boolean;
  /** Private (not a field a spread or `Object.keys` sees): the row `service` is read from. */
  readonly #row: ServiceRow;

  constructor(
    row: ServiceRow,
    readonly port: ScenarioServicePort,
    readonly svcPortName: string,
    readonly protocol: string,
    readonly clusterIP: string,
    readonly nodePort: number,
    readonly healthCheckNodePort: number,
    readonly stickyMaxAgeSeconds: number,
    readonly internalPolicyLocal: boolean,
    externalLocal: boolean,
    readonly nodeName: string,
    readonly nodeZone: string,
    readonly endpoints: readonly ProxyEndpoint[],
  ) {
    this.#row = row;
    // No externalIPs or LB VIPs in this shape: only a NodePort takes external traffic.
    this.externallyAccessible = nodePort !== 0;
    this.externalPolicyLocal = this.externallyAccessible && externalLocal;
    this.usesClusterEndpoints = !internalPolicyLocal || this.externallyAccessible;
    this.usesLocalEndpoints = internalPolicyLocal || this.externalPolicyLocal;
  }

  get service(): ScenarioService {
    return scenarioService(this.#row, [])!;
  }
}

/**
 * The row's IPv4 endpoints once per address (the first wins, as `scenarioEndpoints` keys them)
 * that are IPv4 addresses (`serviceToPorts`' family filter), or null when one carries a hint.
 */
function rowEndpoints(row: ServiceRow): EndpointRow[] | null {
  const out: EndpointRow[] = [];
  let seen: Set<string> | undefined;
  for (const e of row.endpoints) {
    if (e.hintsForZones.length > 0 || e.hintsForNodes.length > 0) return null;
    if (e.addressType !== 'IPv4') continue;
    // A Set only past a few endpoints: most Services have a handful.
    if (seen === undefined) {
      if (out.length >= 8) seen = new Set(out.map((o) => o.address));
      else if (out.some((o) => o.address === e.address)) continue;
    }
    if (seen !== undefined) {
      if (seen.has(e.address)) continue;
      seen.add(e.address);
    }
    out.push(e);
  }
  return out.filter((e) => familyOf(e.address) === 'IPv4');
}

/** `toProxyEndpoint` of the ScenarioEndpoint `scenarioEndpoints` makes of `e`. */
function proxyEndpoint(e: EndpointRow, port: number, nodeName: string): ProxyEndpoint {
  const ready = e.ready !== false;
  // scenarioEndpoints keeps a nodeName only when it is not empty.
  const epNode = e.nodeName ? e.nodeName : undefined;
  return {
    ip: e.address,
    port,
    hostPort: `${e.address}:${port}`,
    isLocal: epNode !== undefined && epNode === nodeName,
    ready,
    serving: e.serving ?? ready,
    terminating: e.terminating ?? false,
    zoneHints: NO_HINTS,
    nodeHints: NO_HINTS,
    zone: e.zone,
    nodeName: epNode,
  };
}

/**
 * The Service ports `serviceToPorts` gives for `row` in its IPv4 then IPv6 family (as
 * `expectRow` asks for them) on node `nodeName` in zone `nodeZone` (`''`: none), or null when
 * the row is not of the shape this reads (module comment): the caller then goes the
 * generators' way. `[]` for a row without ports.
 */
export function rowServicePorts(row: ServiceRow, nodeName: string, nodeZone: string): ProxyServicePort[] | null {
  const svc = row.service;
  if (row.type === 'ExternalName' || row.headless || svc.serviceProxyName !== undefined) return null;
  const ips = row.clusterIPs;
  if (ips.length === 0) return null;
  for (const ip of ips) if (ip.includes(':')) return null;
  const clusterIP = ips[0]!;
  if (!isV4ClusterIP(clusterIP) || familyOf(clusterIP) !== 'IPv4') return null;
  if (row.externalIPs.length > 0 || row.loadBalancerIPs.length > 0 || svc.loadBalancerIngress.length > 0 || svc.loadBalancerSourceRanges.length > 0) return null;
  const endpoints = rowEndpoints(row);
  if (endpoints === null) return null;
  const type = row.type === 'NodePort' || row.type === 'LoadBalancer' ? row.type : 'ClusterIP';
  const externalLocal = row.externalTrafficPolicy === 'Local';
  const healthCheckNodePort = type === 'LoadBalancer' && externalLocal ? (svc.healthCheckNodePort ?? 0) : 0;
  const sticky = row.sessionAffinity === 'ClientIP' ? (row.sessionAffinityTimeoutSeconds ?? 10800) : 0;
  const internalLocal = row.internalTrafficPolicy === 'Local';
  const out: ProxyServicePort[] = [];
  for (const p of row.ports) {
    const targetPort = p.endpointPorts[0] ?? (typeof p.targetPort === 'number' ? p.targetPort : p.port);
    const port: { -readonly [K in keyof ScenarioServicePort]: ScenarioServicePort[K] } = { name: p.name, protocol: p.protocol, port: p.port, targetPort };
    if (p.nodePort) port.nodePort = p.nodePort;
    const proxied = endpoints.map((e) => proxyEndpoint(e, targetPort, nodeName)).sort((a, b) => cmp(a.hostPort, b.hostPort));
    out.push(new RowServicePort(row, port, servicePortName(row.namespace, row.name, p.name), protoLower(p.protocol), clusterIP, port.nodePort ?? 0, healthCheckNodePort, sticky, internalLocal, externalLocal, nodeName, nodeZone, proxied));
  }
  return out;
}
