/**
 * What the node should program for each Service, from the API objects and the node's identity:
 * kube-proxy's view (src/analysis/kubeproxy-serviceports.ts: the Service ports and
 * `CategorizeEndpoints`, the logic both rule generators write from) for the iptables and nftables
 * modes, and the LB table Cilium's agent would write (`ciliumTableOf`, the encoder's input) for
 * Cilium. Each frontend says what an ordinary client's new connection should meet: which
 * endpoints, or kube-proxy's REJECT (no endpoints) / DROP (Local policy, no local endpoint).
 *
 * "Which endpoints should this node use, and why" is issue 21's entry point
 * (src/analysis/node-expectation.ts), topology included. IPv4 only (the readers read the IPv4
 * tables). Pure.
 */
import type { LbService, LbTable } from '../../model/cilium.js';
import type { ApiObjects } from '../../model/k8s.js';
import type { NodeSnapshot } from '../../model/snapshot.js';
import { formatServiceRef } from '../../model/service-ref.js';
import { ciliumTableOf, compareContextOf, scenarioService, type CompareNote } from '../compare-modes-input.js';
import { isProxied } from '../kubeproxy-serviceports.js';
import { expectPorts, type PortExpectation, type TrafficExpectation } from '../node-expectation.js';
import type { KubeProxyInput, ScenarioService } from '../lab-scenario-types.js';
import { buildServiceView } from '../service-view.js';
import type { EndpointRow, ServiceRow } from '../service-types.js';
import type { FrontendKind, FrontendOutcome, ProgrammedFrontend } from './frontends.js';

/** Why a frontend should not rewrite: none (`endpoints`), no usable endpoint anywhere, or a Local policy without a local endpoint. */
export type ExpectedReason = 'endpoints' | 'no-endpoints' | 'no-local-external' | 'no-local-internal';

/**
 * A frontend as it should be, and why. `excluded`: the Service's endpoints this frontend
 * should not use (`ip:port` → why: not ready, on another node for a Local policy, not hinted
 * for this zone), to explain an endpoint the node sends to anyway.
 */
export interface ExpectedFrontend extends ProgrammedFrontend {
  readonly reason: ExpectedReason;
  readonly excluded?: ReadonlyMap<string, string>;
}

/** What the API says about one address of a Service: its conditions in the EndpointSlices. */
export interface ApiEndpointFacts {
  readonly ready: boolean;
  readonly serving: boolean;
  readonly terminating: boolean;
}

/**
 * One Service's expectation; `frontends` is empty for what no proxy programs (headless,
 * ExternalName). `endpoints`: the row's endpoint rows, derived once for every layer;
 * `apiEndpoints`: their conditions by address (a ready entry wins over a not-ready one).
 */
export interface ExpectedService {
  readonly namespace: string;
  readonly name: string;
  readonly row: ServiceRow;
  readonly endpoints: readonly EndpointRow[];
  readonly apiEndpoints: ReadonlyMap<string, ApiEndpointFacts>;
  /** Why the Service's frontends cannot be predicted (IPv6 only), else null. */
  readonly unsupported: string | null;
  readonly frontends: readonly ExpectedFrontend[];
}

/** The expectation of every Service, the generators' input it came from and what had to be inferred. */
export interface Expectation {
  readonly services: readonly ExpectedService[];
  readonly input: KubeProxyInput;
  readonly notes: readonly CompareNote[];
  readonly rows: readonly ServiceRow[];
}

function outcomeOf(t: TrafficExpectation, internal: boolean): { outcome: FrontendOutcome; reason: ExpectedReason } {
  if (t.verdict === 'endpoints') return { outcome: 'endpoints', reason: 'endpoints' };
  if (t.verdict === 'reject') return { outcome: 'reject', reason: 'no-endpoints' };
  return { outcome: 'drop', reason: internal ? 'no-local-internal' : 'no-local-external' };
}

/**
 * The frontends of one Service port as kube-proxy on this node programs them, from issue 21's
 * entry point (src/analysis/node-expectation.ts `expectPorts`: `CategorizeEndpoints` with
 * topology, traffic policies, the terminating fallback): the ClusterIP with the cluster
 * traffic's endpoints; externalIPs, programmed LB IPs and the NodePort with the external ones.
 */
function kubeProxyFrontends(service: ScenarioService, p: PortExpectation): ExpectedFrontend[] {
  const svc = `${service.namespace}/${service.name}`;
  const protocol = p.protocol;
  const make = (kind: FrontendKind, ip: string, port: number, t: TrafficExpectation): ExpectedFrontend => {
    const internal = kind === 'clusterIP';
    const { outcome, reason } = outcomeOf(t, internal);
    return {
      kind,
      ip,
      port,
      protocol,
      service: svc,
      portName: p.portName,
      outcome,
      reason,
      endpoints: t.endpoints.map((e) => ({ ip: e.ip, port: e.port, protocol, weight: 1 / t.endpoints.length, evidence: [] })),
      excluded: new Map(t.excluded.map((e) => [e.hostPort, e.reasons.map((r) => r.text).join('; ')])),
      affinitySeconds: p.affinitySeconds > 0 && outcome === 'endpoints' ? p.affinitySeconds : null,
      evidence: [],
      problems: [],
    };
  };
  const out = [make('clusterIP', p.clusterIP, p.port, p.cluster)];
  if (p.external) {
    for (const ip of p.externalIPs) out.push(make('externalIP', ip, p.port, p.external));
    for (const lb of p.loadBalancerIPs) if (lb.programmed) out.push(make('loadBalancer', lb.ip, p.port, p.external));
    if (p.nodePort !== 0) out.push(make('nodePort', '*', p.nodePort, p.external));
  }
  return out;
}

const CILIUM_KIND: Readonly<Record<string, FrontendKind>> = { ClusterIP: 'clusterIP', NodePort: 'nodePort', ExternalIPs: 'externalIP', LoadBalancer: 'loadBalancer', HostPort: 'nodePort' };

/**
 * An LB table's frontend in the common shape: its slots in order as endpoints, the first
 * `count` sharing new connections equally, the rest (terminating, quarantined: `qcount`) weight 0.
 */
export function lbServiceFrontend(s: LbService): ProgrammedFrontend {
  const count = s.count ?? s.slots.length;
  return {
    kind: CILIUM_KIND[s.type ?? ''] ?? 'clusterIP',
    ip: s.frontend.ip,
    port: s.frontend.port,
    protocol: s.frontend.protocol ?? 'ANY',
    service: s.name,
    portName: null,
    outcome: count > 0 ? 'endpoints' : 'drop',
    endpoints: s.slots.map((slot, i) => ({
      ip: slot.backend?.ip ?? '?',
      port: slot.backend?.port ?? 0,
      protocol: slot.backend?.protocol ?? null,
      weight: i < count && count > 0 ? 1 / count : 0,
      state: slot.backend?.state ?? null,
      evidence: [],
    })),
    affinitySeconds: s.affinityTimeout ? s.affinityTimeout : null,
    evidence: [{ pane: 'lb', ref: `${s.frontend.ip}:${s.frontend.port}/${s.frontend.protocol ?? 'ANY'}`, text: s.raw }],
    problems: s.slots.some((slot) => slot.backend === null) ? [`a slot names backend ${s.slots.find((x) => x.backend === null)?.backendId ?? '?'} that the backend map lacks`] : [],
  };
}

function ciliumFrontends(table: LbTable): Map<string, ExpectedFrontend[]> {
  const out = new Map<string, ExpectedFrontend[]>();
  for (const s of table.services) {
    const f = lbServiceFrontend(s);
    const reason: ExpectedReason = f.outcome === 'endpoints' ? 'endpoints' : 'no-endpoints';
    const list = out.get(s.name ?? '') ?? [];
    list.push({ ...f, reason, evidence: [] });
    out.set(s.name ?? '', list);
  }
  return out;
}

function apiEndpointsOf(endpoints: readonly EndpointRow[]): Map<string, ApiEndpointFacts> {
  const out = new Map<string, ApiEndpointFacts>();
  for (const e of endpoints) {
    const ready = e.ready !== false;
    if (!out.has(e.address) || ready) out.set(e.address, { ready, serving: e.serving ?? ready, terminating: e.terminating ?? false });
  }
  return out;
}

/**
 * The expectation for every Service of `objects` on the snapshot's node, for `dataplane`.
 * Services are in the Services pane's order (namespace, name).
 */
export function buildExpectation(snapshot: NodeSnapshot, objects: ApiObjects, dataplane: 'kube-proxy' | 'cilium'): Expectation {
  const notes: CompareNote[] = [];
  const view = buildServiceView(objects, { nodeName: snapshot.meta.node });
  const scenario = new Map<ServiceRow, ScenarioService | null>();
  const endpointRows = new Map<ServiceRow, readonly EndpointRow[]>();
  for (const row of view.rows) {
    // Derived once here (a compact row derives its endpoint rows on each read); scenarioService's read is then a cache hit.
    endpointRows.set(row, row.endpoints);
    scenario.set(row, scenarioService(row, notes));
  }
  const programmed = [...scenario.values()].filter((s): s is ScenarioService => s !== null);
  const { context, notes: more } = compareContextOf(snapshot, objects, programmed.filter(isProxied).map((s) => s.clusterIP));
  const input: KubeProxyInput = { ...context, services: programmed };
  const byService = new Map<string, ExpectedFrontend[]>();
  if (dataplane === 'cilium') {
    for (const [k, v] of ciliumFrontends(ciliumTableOf(input))) byService.set(k, v);
  } else {
    for (const service of programmed) {
      if (!isProxied(service)) continue;
      byService.set(`${service.namespace}/${service.name}`, expectPorts(service, input).flatMap((p) => kubeProxyFrontends(service, p)));
    }
  }
  const services = view.rows.map((row): ExpectedService => {
    const ref = formatServiceRef(row);
    const s = scenario.get(row);
    const ipv6Only = s === null && row.type !== 'ExternalName' && !row.headless && row.clusterIPs.length > 0;
    const endpoints = endpointRows.get(row) ?? [];
    return {
      namespace: row.namespace,
      name: row.name,
      row,
      endpoints,
      apiEndpoints: apiEndpointsOf(endpoints),
      unsupported: ipv6Only ? 'its ClusterIPs are IPv6 only and the expectation is computed for IPv4' : null,
      frontends: byService.get(ref) ?? [],
    };
  });
  return { services, input, notes: [...notes, ...more], rows: view.rows };
}
