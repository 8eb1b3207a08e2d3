/**
 * The workshop scenario of the node lab in Cilium mode, twice: as a {@link LabScenario}
 * ({@link LAB_CILIUM_SCENARIO}: pods, Services, EndpointSlice conditions, for the lab's
 * namespaces, servers and API objects) and as Cilium's LB maps hold it
 * ({@link labCiliumTable}, kube-proxy replacement, Cilium 1.16+ layouts). The second is
 * derived from the first ({@link ciliumServicesOf}), so the maps and the API objects agree.
 *
 * The Cilium scenario is the kube-proxy lab's scenario plus what issue 4's workshop adds:
 * - `default/api` ClusterIP 10.96.40.7:443/TCP (`https`) → 10.244.0.52:8443 (pod on lab-node);
 * - web's third endpoint 10.244.1.15 (lab-node2) is terminating: `ready=false, serving=true,
 *   terminating=true`, its pod carries a deletionTimestamp.
 *
 * How the agent lays the table out (what {@link labCiliumTable} reproduces):
 *
 * - one frontend per (address, port, protocol): ClusterIP entries are `ClusterIP, non-routable`;
 *   a NodePort gets the wildcard `0.0.0.0:<nodePort>` (`NodePort, non-routable`) and one
 *   routable entry per node address (`192.168.49.2:<nodePort>`, `NodePort`) — as in
 *   cilium/cilium `pkg/loadbalancer/tests/testdata/dualstack.txtar`;
 * - each frontend has its own rev-NAT id (1, 2, …), reverse-NAT entry `id → frontend`;
 * - one backend ID per distinct `ip:port/PROTO`, shared by every frontend that uses it;
 * - active backends take slots 1..count, terminating ones follow and are counted in
 *   `qcount` (graceful-termination.txtar: `COUNT=1 QCOUNT=1`, the terminating one in slot 2);
 * - slot entries repeat the frontend's flags with count 0, qcount 0.
 */
import type { LbBackend, LbBackendState, LbProtocol, LbRevNat, LbService, LbServiceType, LbTable } from '../../src/model/cilium.js';
import { SVC_FLAG, serviceTypeBit } from '../../src/model/cilium.js';
import type { LabScenario, ScenarioPod, ScenarioService } from '../../src/analysis/lab-scenario-types.js';
import { endpointsFor, LAB_PODS, LAB_SCENARIO } from './scenario.js';

/** The lab node's address (minikube's default node IP). */
export const LAB_NODE_IP = '192.168.49.2';

/** A Service port as the scenario states it. */
export interface LabCiliumService {
  readonly name: string;
  readonly type: 'ClusterIP' | 'NodePort';
  readonly clusterIP: string;
  readonly port: number;
  readonly protocol: LbProtocol;
  readonly nodePort?: number;
  readonly backends: readonly { readonly ip: string; readonly port: number; readonly state: LbBackendState }[];
}

const API_RS = 'api-6f8b9d7c5';
const API_LABELS = { app: 'api' } as const;
const TERMINATING_POD = 'web-3';

/** The `default/api` pod: an HTTP server on 8443 on lab-node (the lab runs it like a web pod). */
const API_POD: ScenarioPod = {
  key: 'api-1',
  namespace: 'default',
  name: `${API_RS}-m9x4k`,
  ip: '10.244.0.52',
  nodeName: LAB_SCENARIO.nodeName,
  role: 'web',
  image: 'registry.k8s.io/e2e-test-images/agnhost:2.47',
  labels: { ...API_LABELS, 'pod-template-hash': API_RS.slice(API_RS.lastIndexOf('-') + 1) },
  httpPort: 8443,
  replicaSet: API_RS,
};

const CILIUM_PODS: readonly ScenarioPod[] = [...LAB_PODS, API_POD];
const terminatingIp = LAB_PODS.find((p) => p.key === TERMINATING_POD)?.ip;

/** The scenario's Services with web's third endpoint terminating and `default/api` added after web. */
function ciliumLabServices(): ScenarioService[] {
  const api: ScenarioService = {
    namespace: 'default', name: 'api', type: 'ClusterIP', clusterIP: '10.96.40.7', selector: API_LABELS,
    ports: [{ name: 'https', protocol: 'TCP', port: 443, targetPort: 8443 }],
    endpoints: endpointsFor(API_LABELS, CILIUM_PODS),
  };
  return LAB_SCENARIO.services.flatMap((s) => {
    const endpoints = s.endpoints.map((e) => (e.ip === terminatingIp ? { ...e, ready: false, serving: true, terminating: true } : e));
    const svc = { ...s, endpoints };
    return s.namespace === 'default' && s.name === 'web' ? [svc, api] : [svc];
  });
}

/**
 * The lab scenario in Cilium mode: {@link LAB_SCENARIO} plus `default/api` and its pod, with
 * web's endpoint on lab-node2 terminating. `npm run lab -- up cilium` builds it.
 */
export const LAB_CILIUM_SCENARIO: LabScenario = { ...LAB_SCENARIO, services: ciliumLabServices(), pods: CILIUM_PODS };

/**
 * The Service ports Cilium load-balances, from a scenario: every port of every Service with a
 * ClusterIP (headless ones get no frontend), in scenario order; backends are the serving
 * endpoints, `active` when ready and `terminating` when terminating (Cilium keeps a
 * terminating-but-serving backend for existing connections; `BE_STATE_TERMINATING`), each on
 * the port's targetPort.
 */
export function ciliumServicesOf(scenario: LabScenario): LabCiliumService[] {
  return scenario.services
    .filter((s) => s.clusterIP !== 'None')
    .flatMap((s) =>
      s.ports.map((p) => ({
        name: `${s.namespace}/${s.name}`,
        type: s.type === 'NodePort' ? ('NodePort' as const) : ('ClusterIP' as const),
        clusterIP: s.clusterIP,
        port: p.port,
        protocol: p.protocol,
        ...(s.type === 'NodePort' && p.nodePort ? { nodePort: p.nodePort } : {}),
        backends: s.endpoints
          .filter((e) => e.ready || (e.serving && e.terminating))
          .map((e) => ({ ip: e.ip, port: p.targetPort, state: e.ready ? ('active' as const) : ('terminating' as const) })),
      })),
    );
}

/** The workshop Services as Cilium sees them: web (terminating third endpoint), api, kube-dns UDP+TCP, one without endpoints. */
export const LAB_CILIUM_SERVICES: readonly LabCiliumService[] = ciliumServicesOf(LAB_CILIUM_SCENARIO);

/** Frontends Cilium creates for one Service port: address, port, type and routability. */
function frontendsOf(svc: LabCiliumService, nodeIps: readonly string[]): { ip: string; port: number; type: LbServiceType; routable: boolean }[] {
  const out = [{ ip: svc.clusterIP, port: svc.port, type: 'ClusterIP' as LbServiceType, routable: false }];
  if (svc.type === 'NodePort' && svc.nodePort) {
    out.push({ ip: '0.0.0.0', port: svc.nodePort, type: 'NodePort', routable: false });
    for (const ip of nodeIps) out.push({ ip, port: svc.nodePort, type: 'NodePort', routable: true });
  }
  return out;
}

/**
 * The scenario as the complete LB table (ids, counts, flags, backend ids) that
 * `createLabCiliumMaps` writes. Every service carries its `namespace/name` here; the maps
 * do not record names, so a table decoded from them has `name: null`.
 */
export function labCiliumTable(services: readonly LabCiliumService[] = LAB_CILIUM_SERVICES, nodeIps: readonly string[] = [LAB_NODE_IP]): LbTable {
  const backends = new Map<string, LbBackend>();
  const backendOf = (ip: string, port: number, protocol: LbProtocol, state: LbBackendState): LbBackend => {
    const key = `${ip}:${port}/${protocol}`;
    const found = backends.get(key);
    if (found) return found;
    const be: LbBackend = { id: backends.size + 1, ip, port, protocol, state, weight: null, clusterId: 0, zone: 0, nodeName: null };
    backends.set(key, be);
    return be;
  };
  const out: LbService[] = [];
  const revNats: LbRevNat[] = [];
  for (const svc of services) {
    const ordered = [...svc.backends.filter((b) => b.state === 'active'), ...svc.backends.filter((b) => b.state !== 'active')];
    for (const fe of frontendsOf(svc, nodeIps)) {
      const id = revNats.length + 1;
      const flags = serviceTypeBit(fe.type) | (fe.routable ? SVC_FLAG.routable : 0);
      revNats.push({ id, ip: fe.ip, port: fe.port });
      out.push({
        frontend: { ip: fe.ip, port: fe.port, protocol: svc.protocol, scope: 'external' },
        id,
        type: fe.type,
        flags,
        count: svc.backends.filter((b) => b.state === 'active').length,
        qcount: svc.backends.filter((b) => b.state !== 'active').length,
        algorithm: 'undef',
        affinityTimeout: 0,
        l7ProxyPort: null,
        name: svc.name,
        slots: ordered.map((b, i) => {
          const backend = backendOf(b.ip, b.port, svc.protocol, b.state);
          return { slot: i + 1, backendId: backend.id, backend, flags };
        }),
        raw: '',
      });
    }
  }
  return { source: 'bpf-maps', services: out, backends: [...backends.values()], revNats };
}
