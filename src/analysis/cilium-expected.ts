/**
 * What Cilium's agent (kube-proxy replacement, the StateDB load-balancer of 1.17+) would write
 * into its LB maps on *this* node for the generators' input (one IP family: `lb4` or `lb6`),
 * with why each frontend holds the backends it holds, and what nodescope cannot decide.
 *
 * Facts, from cilium/cilium (no code carried over):
 * - frontends (pkg/loadbalancer/reflectors/conversions.go `convertService`): every ClusterIP of
 *   the family, external scope; NodePort (types NodePort and LoadBalancer, nodePort ≠ 0) on the
 *   wildcard surrogate `0.0.0.0`/`::` and on each node address (bpf_reconciler.go expands the
 *   wildcard); each LB ingress IP whose `ipMode` is unset or `VIP` (KEP-1860: `Proxy` is
 *   skipped); each externalIP. NodePort and LB frontends get a second, internal-scope entry
 *   (`/i`) when exactly one of the two traffic policies is Local ("two scopes").
 * - backends per frontend (pkg/loadbalancer/writer/writer.go `DefaultSelectBackends`,
 *   `shouldUseLocalBackends`): the external scope of a ClusterIP follows iTP, of the other
 *   types eTP; the internal scope follows iTP. Local means `nodeName` empty or this node (an
 *   endpoint without nodeName counts as local, unlike kube-proxy). With
 *   `--enable-service-topology`: PreferSameNode keeps the backends on this node when there is
 *   one; PreferClose/PreferSameZone keep those hinted for this node's zone when every
 *   candidate has zone hints and one is for this zone.
 * - backend states (conversions.go `convertEndpoints`): ready → active; serving and
 *   terminating → terminating; not serving and terminating → kept for existing connections
 *   only; otherwise maintenance (no slot). Slots: active first, then the rest (`qcount`).
 *   When no backend is active, the agent counts the terminating ones as active (KEP-1669,
 *   bpf_reconciler.go `updateFrontend`); agents before that kept them in `qcount`.
 * - flags (pkg/loadbalancer/loadbalancer.go `NewSvcFlag`): type bit; `Local` when eTP=Local
 *   and `InternalLocal` when iTP=Local (on every frontend of the Service, ClusterIP too);
 *   `two-scopes` when they differ (not on ClusterIP); `sessionAffinity`; `routable` except
 *   for ClusterIP and the wildcard surrogate; `check source-range` when the Service has
 *   loadBalancerSourceRanges — on LoadBalancer frontends always, on ExternalIPs ones in newer
 *   agents, on every type with `--bpf-lb-source-range-all-types` (`GetSourceRangesEnabled`).
 *
 * What nodescope cannot read from the node (the agent's options, its release) makes the
 * affected frontend carry `undecided` entries: each names what is missing and, when the
 * answer changes the backends, the LB entry the other answer gives. Pure.
 */
import type { LbBackend, LbBackendState, LbProtocol, LbRevNat, LbService, LbServiceType, LbTable } from '../model/cilium.js';
import { serviceTypeBit, SVC_FLAG } from '../model/cilium.js';
import { formatServiceRef } from '../model/service-ref.js';
import { isProxied } from './kubeproxy-serviceports.js';
import type { KubeProxyInput, ScenarioEndpoint, ScenarioService, ScenarioServicePort } from './lab-scenario-types.js';

/**
 * Agent options nodescope does not read; `undefined` = not known (the expectation then says
 * what depends on it). `serviceTopology`: `--enable-service-topology` (default off);
 * `sourceRangeAllTypes`: `--bpf-lb-source-range-all-types` (default off).
 */
export interface CiliumAgentOptions {
  readonly serviceTopology?: boolean;
  readonly sourceRangeAllTypes?: boolean;
}

/** Why a frontend holds no backend for new connections: none usable, or a Local policy without one on this node. */
export type CiliumEmptyReason = 'endpoints' | 'no-endpoints' | 'no-local-external' | 'no-local-internal';

/** What nodescope could not read that a Cilium expectation depends on: `--bpf-lb-source-range-all-types` (on externalIPs, or on every type), `--enable-service-topology`, the agent's release (KEP-1669 terminating fallback). */
export type CiliumUndecidedKind = 'source-range-external' | 'source-range-all' | 'topology' | 'release';

/** Something the expectation of one frontend depends on that nodescope could not read. */
export interface CiliumUndecided {
  /** The English sentence naming what is missing. */
  readonly what: string;
  /** Which unread option or release it is (the i18n key of the sentence; `topology` carries the rule the option would apply). */
  readonly kind: CiliumUndecidedKind;
  /** With `kind: 'topology'`: the rule the option would apply, in English (`hinted for zone-a`). */
  readonly topology?: string;
  /** With `kind: 'topology'`: that rule as data, for the i18n tables. */
  readonly rule?: TopologyRule;
  /** The LB entry the other answer gives, when it changes the backends; null when only flags change. */
  readonly alternative: LbService | null;
  /** Flag bits whose value depends on it (0 when none). */
  readonly flagMask: number;
}

/** One expected LB entry (frontend with its slots), why it is what it is, and what is undecided. */
export interface CiliumExpectedService {
  readonly service: LbService;
  readonly reason: CiliumEmptyReason;
  /** The Service's endpoints (`ip:port`) this frontend leaves out, with why. */
  readonly excluded: ReadonlyMap<string, string>;
  readonly undecided: readonly CiliumUndecided[];
  /** CIDRs of the family the source-range map (`cilium_lb{4,6}_source_range`) should hold for this frontend when its flag is set. */
  readonly sourceRanges: readonly string[];
}

/** The whole expected table and its per-frontend explanations (same order as `table.services`). */
export interface CiliumExpectation {
  readonly table: LbTable;
  readonly services: readonly CiliumExpectedService[];
}

/** One frontend the agent creates for a Service port. */
interface Frontend {
  readonly ip: string;
  readonly port: number;
  readonly type: LbServiceType;
  readonly scope: 'external' | 'internal';
  readonly surrogate: boolean;
}

const isLocalPolicy = (p: string | undefined): boolean => p === 'Local';

/** Frontends of one Service port (see the module comment), in the order the agent lists them per type. */
function frontendsOf(svc: ScenarioService, port: ScenarioServicePort, input: KubeProxyInput): Frontend[] {
  const v6 = (input.family ?? 'IPv4') === 'IPv6';
  const ofFamily = (ip: string): boolean => ip.includes(':') === v6;
  const twoScopes = isLocalPolicy(svc.externalTrafficPolicy) !== isLocalPolicy(svc.internalTrafficPolicy);
  const scopes: ('external' | 'internal')[] = twoScopes ? ['external', 'internal'] : ['external'];
  const out: Frontend[] = [{ ip: svc.clusterIP, port: port.port, type: 'ClusterIP', scope: 'external', surrogate: false }];
  if ((svc.type === 'NodePort' || svc.type === 'LoadBalancer') && port.nodePort) {
    for (const scope of scopes) {
      out.push({ ip: v6 ? '::' : '0.0.0.0', port: port.nodePort, type: 'NodePort', scope, surrogate: true });
      for (const ip of input.nodeIPs.filter(ofFamily)) out.push({ ip, port: port.nodePort, type: 'NodePort', scope, surrogate: false });
    }
  }
  for (const ip of svc.externalIPs ?? []) if (ofFamily(ip)) out.push({ ip, port: port.port, type: 'ExternalIPs', scope: 'external', surrogate: false });
  const proxy = new Set(svc.ipModeProxyIPs ?? []);
  if (svc.type === 'LoadBalancer') {
    for (const ip of svc.loadBalancerIPs ?? []) {
      if (!ofFamily(ip) || proxy.has(ip)) continue;
      for (const scope of scopes) out.push({ ip, port: port.port, type: 'LoadBalancer', scope, surrogate: false });
    }
  }
  return out;
}

/** Whether this frontend keeps only node-local backends (`shouldUseLocalBackends`). */
function onlyLocal(svc: ScenarioService, fe: Frontend): boolean {
  if (fe.scope === 'internal' || fe.type === 'ClusterIP') return isLocalPolicy(svc.internalTrafficPolicy);
  return isLocalPolicy(svc.externalTrafficPolicy);
}

/** An endpoint's Cilium state, or null for one that gets no slot (maintenance: not ready, not terminating). */
function stateOf(e: ScenarioEndpoint): { state: LbBackendState; live: 'active' | 'fallback' | 'never' } | null {
  if (e.ready) return { state: 'active', live: 'active' };
  if (e.terminating) return { state: 'terminating', live: e.serving ? 'fallback' : 'never' };
  return null;
}

/**
 * The topology rule that narrowed a frontend's backends (Cilium `DefaultSelectBackends`):
 * trafficDistribution PreferSameNode kept those on `node`, or PreferClose/PreferSameZone kept
 * those hinted for `zone`.
 */
export type TopologyRule = { readonly kind: 'hinted'; readonly zone: string } | { readonly kind: 'same-node'; readonly node: string };

/** A topology rule in English: `hinted for zone-a`, `PreferSameNode: on node-1`. */
export function topologyText(r: TopologyRule): string {
  return r.kind === 'hinted' ? `hinted for ${r.zone}` : `PreferSameNode: on ${r.node}`;
}

interface Selection {
  readonly chosen: readonly ScenarioEndpoint[];
  readonly excluded: Map<string, string>;
  /** The topology rule that narrowed the set, or null. */
  readonly topology: TopologyRule | null;
}

function hostPort(ip: string, port: number): string {
  return ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`;
}

/** `DefaultSelectBackends` for one frontend; `topology`: whether the agent runs with service topology. */
function selectBackends(svc: ScenarioService, fe: Frontend, port: ScenarioServicePort, input: KubeProxyInput, topology: boolean): Selection {
  const excluded = new Map<string, string>();
  const key = (e: ScenarioEndpoint) => hostPort(e.ip, port.targetPort);
  const local = onlyLocal(svc, fe);
  const isHere = (e: ScenarioEndpoint) => e.nodeName === undefined || e.nodeName === '' || e.nodeName === input.nodeName;
  let pool = svc.endpoints.filter((e) => {
    if (local && !isHere(e)) {
      excluded.set(key(e), `on ${e.nodeName}, not this node (${fe.scope === 'internal' || fe.type === 'ClusterIP' ? 'iTP' : 'eTP'}=Local)`);
      return false;
    }
    return true;
  });
  let rule: TopologyRule | null = null;
  const distribution = svc.trafficDistribution;
  if (topology && distribution === 'PreferSameNode') {
    const here = svc.endpoints.filter((e) => e.nodeName === input.nodeName);
    if (here.length > 0) {
      for (const e of pool) if (e.nodeName !== input.nodeName) excluded.set(key(e), `PreferSameNode: on ${e.nodeName ?? 'no node'}`);
      pool = here;
      rule = { kind: 'same-node', node: input.nodeName };
    }
  } else if (topology && input.nodeZone && (distribution === 'PreferClose' || distribution === 'PreferSameZone') && !isLocalPolicy(svc.internalTrafficPolicy)) {
    const zone = input.nodeZone;
    const hinted = pool.every((e) => e.zone !== undefined && (e.zoneHints?.length ?? 0) > 0);
    if (hinted && pool.some((e) => e.zoneHints!.includes(zone))) {
      for (const e of pool) if (!e.zoneHints!.includes(zone)) excluded.set(key(e), `not hinted for ${zone}`);
      pool = pool.filter((e) => e.zoneHints!.includes(zone));
      rule = { kind: 'hinted', zone };
    }
  }
  const chosen = pool.filter((e) => {
    if (stateOf(e) !== null) return true;
    excluded.set(key(e), 'not ready and not terminating (maintenance: no slot)');
    return false;
  });
  return { chosen, excluded, topology: rule };
}

/** Slots in order (active, then the rest) and the master's count/qcount; `fallbackCounts`: the terminating fallback counts terminating ones as active. */
function slotsOf(chosen: readonly ScenarioEndpoint[], fallbackCounts: boolean): { ordered: ScenarioEndpoint[]; count: number; qcount: number } {
  const live = chosen.map((e) => stateOf(e)!.live);
  const ordered = [...chosen.filter((_, i) => live[i] === 'active'), ...chosen.filter((_, i) => live[i] === 'fallback'), ...chosen.filter((_, i) => live[i] === 'never')];
  const active = live.filter((l) => l === 'active').length;
  const fallback = live.filter((l) => l === 'fallback').length;
  const count = active > 0 ? active : fallbackCounts ? fallback : 0;
  return { ordered, count, qcount: ordered.length - count };
}

interface Builder {
  readonly backends: Map<string, LbBackend>;
  readonly revNats: LbRevNat[];
}

function lbEntry(b: Builder, svc: ScenarioService, fe: Frontend, port: ScenarioServicePort, flags: number, ordered: readonly ScenarioEndpoint[], count: number, qcount: number, id: number): LbService {
  const protocol: LbProtocol = port.protocol;
  const affinity = svc.sessionAffinity?.timeoutSeconds ?? 0;
  return {
    frontend: { ip: fe.ip, port: fe.port, protocol, scope: fe.scope },
    id,
    type: fe.type,
    flags,
    count,
    qcount,
    algorithm: 'undef',
    affinityTimeout: affinity,
    l7ProxyPort: null,
    name: formatServiceRef(svc),
    slots: ordered.map((e, i) => {
      const key = `${hostPort(e.ip, port.targetPort)}/${protocol}`;
      let be = b.backends.get(key);
      if (!be) {
        be = { id: b.backends.size + 1, ip: e.ip, port: port.targetPort, protocol, state: stateOf(e)!.state, weight: null, clusterId: 0, zone: 0, nodeName: null };
        b.backends.set(key, be);
      }
      return { slot: i + 1, backendId: be.id, backend: be, flags: flags & ~SVC_FLAG.sourceRange };
    }),
    raw: '',
  };
}

/** The flag bits of a frontend and the bits that depend on an option or release nodescope cannot read. */
function flagsOf(svc: ScenarioService, fe: Frontend, options: CiliumAgentOptions): { flags: number; undecided: CiliumUndecided[] } {
  const ext = isLocalPolicy(svc.externalTrafficPolicy);
  const int = isLocalPolicy(svc.internalTrafficPolicy);
  let flags = serviceTypeBit(fe.type);
  if (ext) flags |= SVC_FLAG.extLocalScope;
  if (int) flags |= SVC_FLAG.intLocalScope;
  if (ext !== int && fe.type !== 'ClusterIP') flags |= SVC_FLAG.twoScopes;
  if (svc.sessionAffinity) flags |= SVC_FLAG.sessionAffinity;
  if (fe.type !== 'ClusterIP' && !fe.surrogate) flags |= SVC_FLAG.routable;
  const undecided: CiliumUndecided[] = [];
  const ranges = (svc.loadBalancerSourceRanges ?? []).filter((r) => r.trim() !== '');
  if (ranges.length > 0) {
    if (fe.type === 'LoadBalancer' || options.sourceRangeAllTypes === true) flags |= SVC_FLAG.sourceRange;
    else if (options.sourceRangeAllTypes === undefined) {
      const why = fe.type === 'ExternalIPs'
        ? 'whether the agent checks loadBalancerSourceRanges on externalIPs (newer agents do; --bpf-lb-source-range-all-types) was not read'
        : 'whether the agent runs with --bpf-lb-source-range-all-types was not read';
      undecided.push({ what: why, kind: fe.type === 'ExternalIPs' ? 'source-range-external' : 'source-range-all', alternative: null, flagMask: SVC_FLAG.sourceRange });
    }
  }
  return { flags, undecided };
}

/**
 * The LB entries Cilium would write for `input` (one family, `input.family`), each with why
 * (see the module comment). Headless Services and Services of another proxy get none.
 * Frontend IDs (rev-NAT indexes) are numbered from 1 in order; the real agent's IDs differ.
 */
export function expectCiliumTable(input: KubeProxyInput, options: CiliumAgentOptions = {}): CiliumExpectation {
  const b: Builder = { backends: new Map(), revNats: [] };
  const out: CiliumExpectedService[] = [];
  for (const svc of input.services.filter(isProxied)) {
    for (const port of svc.ports) {
      for (const fe of frontendsOf(svc, port, input)) out.push(expectFrontend(b, svc, port, fe, input, options));
    }
  }
  return { table: { source: 'bpf-maps', services: out.map((s) => s.service), backends: [...b.backends.values()], revNats: b.revNats }, services: out };
}

/** A copy of the builder's backends for an alternative entry: its backends must not enter the expected table. */
function scratch(b: Builder): Builder {
  return { backends: new Map(b.backends), revNats: [] };
}

function expectFrontend(b: Builder, svc: ScenarioService, port: ScenarioServicePort, fe: Frontend, input: KubeProxyInput, options: CiliumAgentOptions): CiliumExpectedService {
  const id = b.revNats.length + 1;
  b.revNats.push({ id, ip: fe.ip, port: fe.port });
  const { flags, undecided } = flagsOf(svc, fe, options);
  const topology = options.serviceTopology ?? false;
  const sel = selectBackends(svc, fe, port, input, topology);
  const { ordered, count, qcount } = slotsOf(sel.chosen, true);
  const service = lbEntry(b, svc, fe, port, flags, ordered, count, qcount, id);
  if (options.serviceTopology === undefined && svc.trafficDistribution !== undefined) {
    const other = selectBackends(svc, fe, port, input, true);
    if (other.topology !== null && other.chosen.length !== sel.chosen.length) {
      const o = slotsOf(other.chosen, true);
      const text = topologyText(other.topology);
      undecided.push({ what: `whether the agent runs with --enable-service-topology was not read (with it: ${text})`, kind: 'topology', topology: text, rule: other.topology, alternative: lbEntry(scratch(b), svc, fe, port, flags, o.ordered, o.count, o.qcount, id), flagMask: 0 });
    }
  }
  if (count > 0 && !ordered.some((e) => e.ready)) {
    const old = slotsOf(sel.chosen, false);
    undecided.push({ what: "the agent's release was not read: agents before KEP-1669 support keep terminating backends out of the count (no new connection is served)", kind: 'release', alternative: lbEntry(scratch(b), svc, fe, port, flags, old.ordered, old.count, old.qcount, id), flagMask: 0 });
  }
  const anyUsable = svc.endpoints.some((e) => e.ready || (e.serving && e.terminating));
  const reason: CiliumEmptyReason = count > 0 ? 'endpoints' : !anyUsable ? 'no-endpoints' : onlyLocal(svc, fe) ? (fe.scope === 'internal' || fe.type === 'ClusterIP' ? 'no-local-internal' : 'no-local-external') : 'no-endpoints';
  const v6 = fe.ip.includes(':');
  const sourceRanges = (flags & SVC_FLAG.sourceRange) !== 0 ? (svc.loadBalancerSourceRanges ?? []).map((r) => r.trim()).filter((r) => r !== '' && r.includes(':') === v6) : [];
  return { service, reason, excluded: sel.excluded, undecided, sourceRanges };
}
