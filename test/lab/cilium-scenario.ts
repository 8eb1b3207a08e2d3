/**
 * The workshop scenario as Cilium's LB maps hold it (kube-proxy replacement, Cilium 1.16+
 * layouts), built the way the agent lays it out:
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

const active = (ip: string, port: number) => ({ ip, port, state: 'active' as const });

/** The workshop Services: web (with a terminating third endpoint), api, kube-dns UDP+TCP, one without endpoints. */
export const LAB_CILIUM_SERVICES: readonly LabCiliumService[] = [
  {
    name: 'default/web',
    type: 'NodePort',
    clusterIP: '10.96.12.34',
    port: 80,
    protocol: 'TCP',
    nodePort: 30080,
    backends: [active('10.244.0.23', 8080), active('10.244.0.31', 8080), { ip: '10.244.1.15', port: 8080, state: 'terminating' }],
  },
  { name: 'default/api', type: 'ClusterIP', clusterIP: '10.96.40.7', port: 443, protocol: 'TCP', backends: [active('10.244.0.52', 8443)] },
  { name: 'kube-system/kube-dns', type: 'ClusterIP', clusterIP: '10.96.0.10', port: 53, protocol: 'UDP', backends: [active('10.244.0.2', 53), active('10.244.0.3', 53)] },
  { name: 'kube-system/kube-dns', type: 'ClusterIP', clusterIP: '10.96.0.10', port: 53, protocol: 'TCP', backends: [active('10.244.0.2', 53), active('10.244.0.3', 53)] },
  { name: 'default/empty', type: 'ClusterIP', clusterIP: '10.96.50.5', port: 80, protocol: 'TCP', backends: [] },
];

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
