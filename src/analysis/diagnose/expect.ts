/**
 * What the node should program for each Service, from the API objects and the node's identity:
 * kube-proxy's view (src/analysis/kubeproxy-serviceports.ts: the Service ports and
 * `CategorizeEndpoints`, the logic both rule generators write from) for the iptables and nftables
 * modes, and the LB table Cilium's agent would write (`ciliumTableOf`, the encoder's input) for
 * Cilium. Each frontend says what an ordinary client's new connection should meet: which
 * endpoints, or kube-proxy's REJECT (no endpoints) / DROP (Local policy, no local endpoint).
 *
 * "Which endpoints should this node use, and why" is issue 21's entry point
 * (src/analysis/node-expectation.ts), topology included. Both IP families. Pure.
 */
import type { LbService } from '../../model/cilium.js';
import { formatFrontend } from '../../model/cilium.js';
import type { ApiObjects } from '../../model/k8s.js';
import type { NodeSnapshot } from '../../model/snapshot.js';
import { formatServiceRef } from '../../model/service-ref.js';
import { expectCiliumTable, type CiliumUndecidedKind, type TopologyRule } from '../cilium-expected.js';
import { compareContextOf, nodeIPsOf, scenarioService, type CompareNote } from '../compare-modes-input.js';
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
  /** Why the Service's frontends cannot be predicted, else null (both families are predicted now). */
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
    if (p.nodePort !== 0) out.push(make('nodePort', p.family === 'IPv6' ? '::' : '*', p.nodePort, p.external));
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
    evidence: [{ pane: 'lb', ref: formatFrontend(s.frontend), text: s.raw }],
    problems: s.slots.some((slot) => slot.backend === null) ? [`a slot names backend ${s.slots.find((x) => x.backend === null)?.backendId ?? '?'} that the backend map lacks`] : [],
    ...(s.frontend.scope === 'internal' ? { scope: 'internal' as const } : {}),
    flags: s.flags,
  };
}

/** What a Cilium frontend's expectation depends on that was not read, and the entry the other answer gives. */
export interface ExpectedAlternative {
  readonly what: string;
  /** Which option or release (src/analysis/cilium-expected.ts); with `topology`, the rule it would apply. */
  readonly kind: CiliumUndecidedKind;
  readonly topology?: string;
  /** With `topology`: the rule as data (src/analysis/cilium-expected.ts), for the i18n tables. */
  readonly rule?: TopologyRule;
  /** The frontend under the other answer; null when only flags change. */
  readonly frontend: ProgrammedFrontend | null;
  readonly flagMask: number;
}

/** Cilium only: the expected frontend with what it depends on (src/analysis/cilium-expected.ts). */
export interface CiliumExpectedFrontend extends ExpectedFrontend {
  readonly alternatives: readonly ExpectedAlternative[];
  /** CIDRs the source-range map should hold for it (its `check source-range` flag set). */
  readonly sourceRanges: readonly string[];
}

/** The Cilium expectation of one family in the common shape, by Service. */
function ciliumFrontends(input: KubeProxyInput, into: Map<string, ExpectedFrontend[]>): void {
  for (const e of expectCiliumTable(input).services) {
    const f = lbServiceFrontend(e.service);
    const frontend: CiliumExpectedFrontend = {
      ...f,
      outcome: e.reason === 'endpoints' ? 'endpoints' : e.reason === 'no-endpoints' ? f.outcome : 'drop',
      reason: e.reason,
      excluded: e.excluded,
      evidence: [],
      alternatives: e.undecided.map((u) => ({ what: u.what, kind: u.kind, ...(u.topology !== undefined ? { topology: u.topology } : {}), ...(u.rule ? { rule: u.rule } : {}), frontend: u.alternative ? { ...lbServiceFrontend(u.alternative), evidence: [] } : null, flagMask: u.flagMask })),
      sourceRanges: e.sourceRanges,
    };
    const list = into.get(e.service.name ?? '') ?? [];
    list.push(frontend);
    into.set(e.service.name ?? '', list);
  }
}

function apiEndpointsOf(endpoints: readonly EndpointRow[]): Map<string, ApiEndpointFacts> {
  const out = new Map<string, ApiEndpointFacts>();
  for (const e of endpoints) {
    const ready = e.ready !== false;
    if (!out.has(e.address) || ready) out.set(e.address, { ready, serving: e.serving ?? ready, terminating: e.terminating ?? false });
  }
  return out;
}

/** The scenario of a row in each family it has (IPv4 first); `null` entries dropped. */
function scenariosOf(row: ServiceRow, notes: CompareNote[]): ScenarioService[] {
  const v4 = scenarioService(row, notes);
  const v6 = scenarioService(row, [], 'IPv6');
  return [v4, v6].filter((s): s is ScenarioService => s !== null);
}

/**
 * The expectation for every Service of `objects` on the snapshot's node, for `dataplane`, in
 * both IP families (kube-proxy's IPv6 proxier writes ip6tables / `ip6 kube-proxy`, with
 * `[::]:port` standing for a NodePort on every IPv6 node address; Cilium writes lb6).
 * Services are in the Services pane's order (namespace, name).
 */
export function buildExpectation(snapshot: NodeSnapshot, objects: ApiObjects, dataplane: 'kube-proxy' | 'cilium'): Expectation {
  const notes: CompareNote[] = [];
  const view = buildServiceView(objects, { nodeName: snapshot.meta.node });
  const scenario = new Map<ServiceRow, ScenarioService[]>();
  const endpointRows = new Map<ServiceRow, readonly EndpointRow[]>();
  for (const row of view.rows) {
    // Derived once here (a compact row derives its endpoint rows on each read); scenarioService's read is then a cache hit.
    endpointRows.set(row, row.endpoints);
    scenario.set(row, scenariosOf(row, notes));
  }
  const all = [...scenario.values()].flat();
  const programmed = all.filter((s) => !s.clusterIP.includes(':'));
  const { context, notes: more } = compareContextOf(snapshot, objects, programmed.filter(isProxied).map((s) => s.clusterIP));
  const input: KubeProxyInput = { ...context, services: programmed };
  const v6Input: KubeProxyInput = { ...context, family: 'IPv6', nodeIPs: nodeIPsOf(snapshot, objects, 'IPv6'), services: all.filter((s) => s.clusterIP.includes(':')) };
  const byService = new Map<string, ExpectedFrontend[]>();
  for (const inp of [input, v6Input]) {
    if (dataplane === 'cilium') ciliumFrontends(inp, byService);
    else kubeProxyExpectation(inp, byService);
  }
  const services = view.rows.map((row): ExpectedService => {
    const endpoints = endpointRows.get(row) ?? [];
    return {
      namespace: row.namespace,
      name: row.name,
      row,
      endpoints,
      apiEndpoints: apiEndpointsOf(endpoints),
      unsupported: null,
      frontends: byService.get(formatServiceRef(row)) ?? [],
    };
  });
  return { services, input, notes: [...notes, ...more], rows: view.rows };
}

/** kube-proxy's frontends of one family, by Service. */
function kubeProxyExpectation(input: KubeProxyInput, into: Map<string, ExpectedFrontend[]>): void {
  for (const service of input.services) {
    if (!isProxied(service)) continue;
    const ref = `${service.namespace}/${service.name}`;
    into.set(ref, [...(into.get(ref) ?? []), ...expectPorts(service, input).flatMap((p) => kubeProxyFrontends(service, p))]);
  }
}
