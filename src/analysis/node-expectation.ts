/**
 * What kube-proxy on one node should do with each Service, and why: the entry point that
 * compares the API with a node (issue 21; used by the diagnosis, the Services pane and
 * `show services`).
 *
 * {@link expectNodeServices} takes the API objects (Services, EndpointSlices, Nodes) and the
 * node's identity (name, zone) and returns, per Service, either why kube-proxy skips it, or
 * per IP family and Service port: the endpoints this node uses for cluster (ClusterIP)
 * traffic and for external traffic (NodePort, externalIPs, LB IPs), each endpoint with its
 * reason ("hinted for zone-a", "local only: eTP=Local", "terminating fallback"), the
 * endpoints left out with theirs, what an empty set does (REJECT / DROP), and which LB IPs
 * are not programmed (`ipMode: Proxy`).
 *
 * It runs the same code the rule generators run (src/analysis/kubeproxy-serviceports.ts:
 * kube-proxy's `CategorizeEndpoints` with topology, release-1.35), fed by the same reading
 * of the API objects (src/analysis/compare-modes-input.ts `scenarioService`), so what it
 * says and the rules nodescope generates cannot disagree. Every reason carries a `code`
 * and `params` for translation and the English `text`. Pure.
 */
import type { ApiObjects, IpFamily, IpFamilyPolicy, Service } from '../model/k8s.js';
import { formatServiceRef } from '../model/service-ref.js';
import { scenarioService } from './compare-modes-input.js';
import {
  categorizeEndpoints,
  serviceToPorts,
  type CategorizedEndpoints,
  type ProxyEndpoint,
  type ProxyServicePort,
  type TopologyFallback,
  type TopologyMode,
} from './kubeproxy-serviceports.js';
import type { KubeProxyInput, ProxyFamily, ScenarioService } from './lab-scenario-types.js';
import { buildServiceView } from './service-view.js';
import { rowServicePorts } from './row-service-ports.js';
import type { ServiceRow } from './service-types.js';

/**
 * The node kube-proxy runs on. `zone`: its `topology.kubernetes.io/zone` label; when
 * undefined it is read from the Node object named `name` (absent there too: no zone, and
 * zone hints are ignored, as kube-proxy does).
 */
export interface NodeIdentity {
  readonly name: string;
  readonly zone?: string;
}

/** Why: a stable code, its values, and the English sentence. */
export interface Reason {
  readonly code: ReasonCode;
  readonly params: Readonly<Record<string, string>>;
  readonly text: string;
}

/**
 * Every reason code.
 * - Service skipped: `service-proxy-name`, `headless`, `external-name`, `no-cluster-ip`.
 * - endpoint used: `ready`, `hinted-zone`, `hinted-node`, `terminating-fallback`, `local-itp`, `local-etp`.
 * - endpoint left out: `not-ready`, `terminating-unused`, `not-hinted-zone`, `not-hinted-node`, `not-local`.
 * - traffic: `no-endpoints` (REJECT), `no-local-endpoints` (DROP), `short-circuit` (eTP=Local
 *   traffic from pods and the node itself still goes to cluster endpoints).
 * - topology: `hints-ignored` (param `why`: a {@link TopologyFallback}).
 * - LB IP: `ipmode-proxy` (not programmed).
 */
export type ReasonCode =
  | 'service-proxy-name' | 'headless' | 'external-name' | 'no-cluster-ip'
  | 'ready' | 'hinted-zone' | 'hinted-node' | 'terminating-fallback' | 'local-itp' | 'local-etp'
  | 'not-ready' | 'terminating-unused' | 'not-hinted-zone' | 'not-hinted-node' | 'not-local'
  | 'no-endpoints' | 'no-local-endpoints' | 'short-circuit' | 'hints-ignored' | 'ipmode-proxy';

/** One endpoint as this node sees it: `ip:port`, whether it runs here, and why it is (or is not) used. */
export interface EndpointUse {
  readonly ip: string;
  readonly port: number;
  /** `ip:port` (IPv6 bracketed), the DNAT target. */
  readonly hostPort: string;
  readonly nodeName: string | undefined;
  readonly zone: string | undefined;
  readonly isLocal: boolean;
  readonly reasons: readonly Reason[];
}

/**
 * One kind of traffic to a Service port (`cluster`: to the ClusterIP; `external`: to a
 * NodePort, externalIP or LB IP). `verdict`: `endpoints` (DNAT to one of `endpoints`),
 * `reject` (no usable endpoint anywhere: REJECT), `drop` (Local policy and none on this node).
 */
export interface TrafficExpectation {
  readonly policy: 'Cluster' | 'Local';
  readonly verdict: 'endpoints' | 'reject' | 'drop';
  readonly endpoints: readonly EndpointUse[];
  /** Endpoints of the port this traffic does not use, with why. */
  readonly excluded: readonly EndpointUse[];
  /** Traffic-level reasons (`no-endpoints`, `no-local-endpoints`, `short-circuit`, `hints-ignored`). */
  readonly reasons: readonly Reason[];
}

/** An LB ingress IP of the port's family: `programmed` false for `ipMode: Proxy`. */
export interface LoadBalancerIpUse {
  readonly ip: string;
  readonly ipMode: 'VIP' | 'Proxy';
  readonly programmed: boolean;
  readonly reason: Reason | undefined;
}

/** What kube-proxy's `family` proxier programs for one Service port on this node. */
export interface PortExpectation {
  readonly family: ProxyFamily;
  /** `ns/name:port` (kube-proxy's ServicePortName). */
  readonly svcPortName: string;
  readonly portName: string;
  readonly protocol: 'TCP' | 'UDP' | 'SCTP';
  readonly port: number;
  readonly targetPort: number;
  readonly clusterIP: string;
  /** 0 when none. */
  readonly nodePort: number;
  /** 0 unless LoadBalancer + eTP=Local (kube-proxy answers health checks on it). */
  readonly healthCheckNodePort: number;
  readonly externalIPs: readonly string[];
  readonly loadBalancerIPs: readonly LoadBalancerIpUse[];
  /** Trimmed source ranges of the family (KUBE-FW-* / `firewall-…` chains when there are LB VIPs). */
  readonly loadBalancerSourceRanges: readonly string[];
  /** ClientIP affinity timeout in seconds, 0 for none. */
  readonly affinitySeconds: number;
  readonly topologyMode: TopologyMode;
  readonly cluster: TrafficExpectation;
  /** `null` when the port accepts no external traffic (no NodePort, externalIP or LB VIP). */
  readonly external: TrafficExpectation | null;
}

/**
 * One Service: its policies as the API states them, and either `skipped` (kube-proxy
 * programs nothing) or `ports` (per family, per Service port, IPv4 first).
 * `distribution` is `spec.trafficDistribution` verbatim (`PreferClose` is the deprecated
 * alias of `PreferSameZone`); kube-proxy follows the hints the EndpointSlice controller
 * derives from it, which is what `ports[].topologyMode` reports.
 */
export interface ServiceExpectation {
  readonly namespace: string;
  readonly name: string;
  readonly type: Service['type'];
  readonly distribution: string | undefined;
  readonly internalTrafficPolicy: 'Cluster' | 'Local';
  readonly externalTrafficPolicy: 'Cluster' | 'Local';
  readonly sessionAffinity: 'None' | 'ClientIP';
  readonly ipFamilies: readonly IpFamily[];
  readonly ipFamilyPolicy: IpFamilyPolicy | undefined;
  readonly skipped: Reason | undefined;
  readonly ports: readonly PortExpectation[];
}

/** The whole expectation for one node. `zone` is the zone used (`''` when the node has none). */
export interface NodeExpectation {
  readonly nodeName: string;
  readonly zone: string;
  readonly services: readonly ServiceExpectation[];
}

const FAMILIES: readonly ProxyFamily[] = ['IPv4', 'IPv6'];

function reason(code: ReasonCode, params: Record<string, string>, text: string): Reason {
  return { code, params, text };
}

/**
 * The reasons without parameters, made once and shared (frozen): one object per endpoint per
 * traffic per port was most of what a node with thousands of Services allocated here.
 */
const FIXED = {
  ready: fixed('ready', 'ready'),
  readyHere: fixed('ready', 'ready (on this node)'),
  localItp: fixed('local-itp', 'local only: iTP=Local'),
  localEtp: fixed('local-etp', 'local only: eTP=Local'),
  localFallback: fixed('terminating-fallback', 'terminating fallback: no local endpoint is ready'),
  clusterFallback: fixed('terminating-fallback', 'terminating fallback: no endpoint is ready'),
  notReadyNotServing: fixed('not-ready', 'not ready and not serving'),
  notReady: fixed('not-ready', 'not ready'),
  terminatingUnused: fixed('terminating-unused', 'terminating: ready endpoints exist'),
  noEndpoints: fixed('no-endpoints', 'no endpoints'),
  shortCircuit: fixed('short-circuit', 'traffic from pods and from this node goes to cluster endpoints'),
} as const;

function fixed(code: ReasonCode, text: string): Reason {
  return Object.freeze({ code, params: Object.freeze({}), text });
}

const FALLBACK_TEXT: Readonly<Record<TopologyFallback, string>> = {
  'node-hint-missing': 'node hints ignored: a ready endpoint has no node hint',
  'no-hint-for-node': 'node hints ignored: none is for this node',
  'zone-hint-missing': 'zone hints ignored: a ready endpoint has no zone hint',
  'no-hint-for-zone': 'zone hints ignored: none is for this zone',
  'node-zone-unset': 'zone hints ignored: the node has no topology.kubernetes.io/zone label',
};

/**
 * The expectation for every Service of `objects` on `node`, in the Services view's order.
 * Never throws; Services kube-proxy skips are listed with `skipped` set.
 */
export function expectNodeServices(objects: ApiObjects, node: NodeIdentity): NodeExpectation {
  const zone = nodeZone(objects, node);
  const view = buildServiceView(objects, { nodeName: node.name });
  return { nodeName: node.name, zone, services: view.rows.map((row) => expectRow(row, node.name, zone)) };
}

/** The zone kube-proxy on `node` matches zone hints against: given, else its Node's label, else `''`. */
export function nodeZone(objects: ApiObjects, node: NodeIdentity): string {
  return node.zone ?? objects.nodes.find((n) => n.meta.name === node.name)?.zone ?? '';
}

/**
 * The expectation of one Service row (src/analysis/service-view.ts) on `node`, for a caller
 * that holds the row already (the Services pane: only the selected Service is computed).
 */
export function expectServiceRow(objects: ApiObjects, node: NodeIdentity, row: ServiceRow): ServiceExpectation {
  return expectRow(row, node.name, nodeZone(objects, node));
}

/**
 * {@link expectServiceRow} for many rows of the same `objects` and `node` (`show services` on a
 * node with thousands of Services): the node's zone is looked up once, not once per row.
 */
export function serviceRowExpecter(objects: ApiObjects, node: NodeIdentity): (row: ServiceRow) => ServiceExpectation {
  const zone = nodeZone(objects, node);
  return (row) => expectRow(row, node.name, zone, true);
}

/**
 * {@link serviceRowExpecter} that always takes the generators' way (`scenarioService` then
 * `serviceToPorts`): the reference the tests hold the straight reading of the row equal to.
 */
export function serviceRowExpecterViaScenario(objects: ApiObjects, node: NodeIdentity): (row: ServiceRow) => ServiceExpectation {
  const zone = nodeZone(objects, node);
  return (row) => expectRow(row, node.name, zone, false);
}

/** How many rows {@link serviceRowExpecter} read straight (`straight`) and the generators' way (`scenario`): the tests' count. */
export const expectRowWork = { straight: 0, scenario: 0 };

/**
 * The ports' expectations of a row kube-proxy programs: read straight from the row
 * (src/analysis/row-service-ports.ts) when `straight` and the row is of its shape, else per
 * family through the generators' input.
 */
function rowPorts(row: ServiceRow, nodeName: string, zone: string, straight: boolean): PortExpectation[] {
  const fast = straight ? rowServicePorts(row, nodeName, zone) : null;
  if (fast !== null) {
    expectRowWork.straight++;
    return fast.map((svc) => portExpectation(svc, categorizeEndpoints(svc)));
  }
  expectRowWork.scenario++;
  return FAMILIES.flatMap((family) => {
    const scenario = scenarioService(row, [], family);
    return scenario === null ? [] : expectPorts(scenario, { nodeName, nodeZone: zone, family, nodeIPs: [], services: [] });
  });
}

function expectRow(row: ServiceRow, nodeName: string, zone: string, straight = false): ServiceExpectation {
  const svc = row.service;
  const common = {
    namespace: row.namespace, name: row.name, type: row.type, distribution: row.trafficDistribution,
    internalTrafficPolicy: row.internalTrafficPolicy ?? 'Cluster', externalTrafficPolicy: row.externalTrafficPolicy ?? 'Cluster',
    sessionAffinity: row.sessionAffinity, ipFamilies: svc.ipFamilies, ipFamilyPolicy: svc.ipFamilyPolicy,
  } as const;
  const skipped = skipReason(svc);
  if (skipped) return { ...common, skipped, ports: [] };
  const ports = rowPorts(row, nodeName, zone, straight);
  if (ports.length === 0) return { ...common, skipped: reason('no-cluster-ip', {}, 'no ClusterIP: nothing programmed'), ports };
  return { ...common, skipped: undefined, ports };
}

/** How one endpoint address is used by each port's cluster and external traffic: `used` false with the reason it is left out. */
export interface AddressUse {
  readonly svcPortName: string;
  readonly traffic: 'cluster' | 'external';
  readonly used: boolean;
  readonly reasons: readonly Reason[];
}

/** Every use of endpoint `address` in `exp` (ports in order, cluster before external); `[]` when it is in none. */
export function addressUses(exp: ServiceExpectation, address: string): AddressUse[] {
  const out: AddressUse[] = [];
  for (const p of exp.ports) {
    const traffics: ['cluster' | 'external', TrafficExpectation | null][] = [['cluster', p.cluster], ['external', p.external]];
    for (const [traffic, t] of traffics) {
      if (t === null) continue;
      const used = t.endpoints.find((e) => e.ip === address);
      const left = used ? undefined : t.excluded.find((e) => e.ip === address);
      if (used) out.push({ svcPortName: p.svcPortName, traffic, used: true, reasons: used.reasons });
      else if (left) out.push({ svcPortName: p.svcPortName, traffic, used: false, reasons: left.reasons });
    }
  }
  return out;
}

function skipReason(svc: Service): Reason | undefined {
  if (svc.type === 'ExternalName') return reason('external-name', {}, 'ExternalName: DNS only, nothing programmed');
  if (svc.serviceProxyName !== undefined) {
    return reason('service-proxy-name', { name: svc.serviceProxyName }, `skipped: service-proxy-name=${svc.serviceProxyName}`);
  }
  if (svc.headless) return reason('headless', {}, 'headless: nothing programmed');
  return undefined;
}

/**
 * The expectation of each port of one Service as the `input.family` proxier on
 * `input.nodeName` sees it (`input.services` is ignored). Exposed for tests and for
 * callers holding a {@link ScenarioService} already.
 */
export function expectPorts(service: ScenarioService, input: KubeProxyInput): PortExpectation[] {
  return serviceToPorts({ ...input, services: [service] }).map((svc) => portExpectation(svc, categorizeEndpoints(svc)));
}

function portExpectation(svc: ProxyServicePort, cat: CategorizedEndpoints): PortExpectation {
  const cluster = traffic(svc, cat, 'internal');
  const external = svc.externallyAccessible ? traffic(svc, cat, 'external') : null;
  const proxyIPs: LoadBalancerIpUse[] = svc.loadBalancerProxyIPs.map((ip) => ({
    ip, ipMode: 'Proxy', programmed: false, reason: reason('ipmode-proxy', { ip }, 'ipMode Proxy: LB IP not programmed'),
  }));
  return {
    family: svc.family, svcPortName: svc.svcPortName, portName: svc.port.name, protocol: svc.port.protocol,
    port: svc.port.port, targetPort: svc.port.targetPort, clusterIP: svc.clusterIP, nodePort: svc.nodePort,
    healthCheckNodePort: svc.healthCheckNodePort, externalIPs: svc.externalIPs,
    loadBalancerIPs: [...svc.loadBalancerVIPs.map((ip): LoadBalancerIpUse => ({ ip, ipMode: 'VIP', programmed: true, reason: undefined })), ...proxyIPs],
    loadBalancerSourceRanges: svc.loadBalancerSourceRanges, affinitySeconds: svc.stickyMaxAgeSeconds,
    topologyMode: cat.topologyMode, cluster, external,
  };
}

/** The expectation of internal (ClusterIP) or external traffic, following kube-proxy's choice of chain. */
function traffic(svc: ProxyServicePort, cat: CategorizedEndpoints, kind: 'internal' | 'external'): TrafficExpectation {
  const local = kind === 'internal' ? svc.internalPolicyLocal : svc.externalPolicyLocal;
  const used = local ? cat.localEndpoints : cat.clusterEndpoints;
  const reasons: Reason[] = [];
  if (!local) for (const why of cat.topologyFallbacks) reasons.push(reason('hints-ignored', { why }, FALLBACK_TEXT[why]));
  let verdict: TrafficExpectation['verdict'] = 'endpoints';
  if (!cat.hasAnyEndpoints) {
    verdict = 'reject';
    reasons.push(FIXED.noEndpoints);
  } else if (used.length === 0) {
    verdict = 'drop';
    const policy = kind === 'internal' ? 'iTP' : 'eTP';
    reasons.push(reason('no-local-endpoints', { policy }, `no local endpoints: DROP (${policy}=Local)`));
  }
  if (local && kind === 'external' && cat.hasAnyEndpoints) {
    reasons.push(FIXED.shortCircuit);
  }
  return {
    policy: local ? 'Local' : 'Cluster',
    verdict,
    endpoints: used.map((ep) => endpointUse(ep, usedReasons(svc, cat, ep, local, kind))),
    excluded: excludedUses(svc, cat, local, used),
    reasons,
  };
}

/** The port's endpoints `used` leaves out, each with why. */
function excludedUses(svc: ProxyServicePort, cat: CategorizedEndpoints, local: boolean, used: readonly ProxyEndpoint[]): EndpointUse[] {
  // `used` is a filter of the port's endpoints (categorizeEndpoints): as long as them, it is all of them.
  if (used.length === svc.endpoints.length) return [];
  const usedKeys = new Set(used.map((ep) => ep.hostPort));
  return svc.endpoints.filter((ep) => !usedKeys.has(ep.hostPort)).map((ep) => endpointUse(ep, [excludedReason(svc, cat, ep, local, used)]));
}

function endpointUse(ep: ProxyEndpoint, reasons: readonly Reason[]): EndpointUse {
  return { ip: ep.ip, port: ep.port, hostPort: ep.hostPort, nodeName: ep.nodeName, zone: ep.zone, isLocal: ep.isLocal, reasons };
}

/**
 * The lists of parameterless reasons a used endpoint can have, made once and shared (frozen),
 * as {@link FIXED}: a list per endpoint per traffic per port was the rest of what it allocated.
 */
const USED = {
  localItp: Object.freeze([FIXED.localItp]),
  localItpFallback: Object.freeze([FIXED.localItp, FIXED.localFallback]),
  localEtp: Object.freeze([FIXED.localEtp]),
  localEtpFallback: Object.freeze([FIXED.localEtp, FIXED.localFallback]),
  clusterFallback: Object.freeze([FIXED.clusterFallback]),
  ready: Object.freeze([FIXED.ready]),
  readyHere: Object.freeze([FIXED.readyHere]),
} as const;

function usedReasons(svc: ProxyServicePort, cat: CategorizedEndpoints, ep: ProxyEndpoint, local: boolean, kind: 'internal' | 'external'): readonly Reason[] {
  if (local) {
    if (kind === 'internal') return cat.localTerminatingFallback ? USED.localItpFallback : USED.localItp;
    return cat.localTerminatingFallback ? USED.localEtpFallback : USED.localEtp;
  }
  if (cat.clusterTerminatingFallback) return USED.clusterFallback;
  if (cat.topologyMode === 'PreferSameNode') return [reason('hinted-node', { node: svc.nodeName }, `hinted for ${svc.nodeName}`)];
  if (cat.topologyMode === 'PreferSameZone') return [reason('hinted-zone', { zone: svc.nodeZone }, `hinted for ${svc.nodeZone}`)];
  return ep.isLocal ? USED.readyHere : USED.ready;
}

function excludedReason(svc: ProxyServicePort, cat: CategorizedEndpoints, ep: ProxyEndpoint, local: boolean, used: readonly ProxyEndpoint[]): Reason {
  if (!ep.ready && !(ep.serving && ep.terminating)) return FIXED.notReadyNotServing;
  if (local && !ep.isLocal) {
    const where = ep.nodeName ?? '';
    return reason('not-local', { node: where }, where === '' ? 'not on this node (no nodeName)' : `on ${where}, not this node`);
  }
  if (!ep.ready && used.some((u) => u.ready)) return FIXED.terminatingUnused;
  if (!local && cat.topologyMode === 'PreferSameNode') return reason('not-hinted-node', { node: svc.nodeName }, `not hinted for ${svc.nodeName}`);
  if (!local && cat.topologyMode === 'PreferSameZone') return reason('not-hinted-zone', { zone: svc.nodeZone }, `not hinted for ${svc.nodeZone}`);
  return FIXED.notReady;
}

/** `ns/name` of an expectation, as the rest of nodescope spells a Service. */
export function expectationRef(e: Pick<ServiceExpectation, 'namespace' | 'name'>): string {
  return formatServiceRef(e);
}
