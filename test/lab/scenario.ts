/**
 * The node lab scenario: one typed module of data, reused by every proxy mode of the lab
 * (iptables, nftables, later IPVS and Cilium) and by the API objects it writes.
 *
 * Cluster: pod CIDR 10.244.0.0/16 (lab-node 10.244.0.0/24, lab-node2 10.244.1.0/24),
 * Service CIDR 10.96.0.0/12, node network 192.168.49.0/24 (minikube's), the outside host
 * at 192.168.49.1.
 *
 * Services:
 * - default/web: ClusterIP 10.96.12.34, port `http` 80/TCP → 8080, NodePort 30080,
 *   endpoints 10.244.0.23, 10.244.0.31 (lab-node) and 10.244.1.15 (lab-node2);
 * - kube-system/kube-dns: ClusterIP 10.96.0.10, `dns` 53/UDP and `dns-tcp` 53/TCP,
 *   endpoints 10.244.0.2 and 10.244.0.3 (coredns pods on lab-node);
 * - default/empty: ClusterIP 10.96.50.5 port 80, selector matching nothing (no endpoints);
 * - default/web-headless: clusterIP None, same selector as web (no kube-proxy rules).
 */
import type {
  LabScenario,
  ScenarioEndpoint,
  ScenarioPod,
  ScenarioService,
} from '../../src/analysis/lab-scenario-types.js';

const NODE = 'lab-node';
const NODE2 = 'lab-node2';
const WEB_RS = 'web-7c9d8b5f4';
const DNS_RS = 'coredns-5d78c9869d';
const WEB_LABELS = { app: 'web' } as const;
const DNS_LABELS = { 'k8s-app': 'kube-dns' } as const;

function pod(p: Omit<ScenarioPod, 'labels'> & { labels?: Record<string, string> }): ScenarioPod {
  const hash = p.replicaSet?.slice(p.replicaSet.lastIndexOf('-') + 1);
  return { ...p, labels: { ...(p.labels ?? {}), ...(hash ? { 'pod-template-hash': hash } : {}) } };
}

/** Every pod of the lab, in a fixed order (client first). */
export const LAB_PODS: readonly ScenarioPod[] = [
  pod({ key: 'client', namespace: 'default', name: 'client', ip: '10.244.0.9', nodeName: NODE, role: 'client',
    image: 'registry.k8s.io/e2e-test-images/agnhost:2.47', labels: { run: 'client' } }),
  pod({ key: 'web-1', namespace: 'default', name: `${WEB_RS}-2xkqp`, ip: '10.244.0.23', nodeName: NODE, role: 'web',
    image: 'registry.k8s.io/e2e-test-images/agnhost:2.47', labels: { ...WEB_LABELS }, httpPort: 8080, replicaSet: WEB_RS }),
  pod({ key: 'web-2', namespace: 'default', name: `${WEB_RS}-h8r6m`, ip: '10.244.0.31', nodeName: NODE, role: 'web',
    image: 'registry.k8s.io/e2e-test-images/agnhost:2.47', labels: { ...WEB_LABELS }, httpPort: 8080, replicaSet: WEB_RS }),
  pod({ key: 'web-3', namespace: 'default', name: `${WEB_RS}-zt5wn`, ip: '10.244.1.15', nodeName: NODE2, role: 'web',
    image: 'registry.k8s.io/e2e-test-images/agnhost:2.47', labels: { ...WEB_LABELS }, httpPort: 8080, replicaSet: WEB_RS }),
  pod({ key: 'coredns-1', namespace: 'kube-system', name: `${DNS_RS}-7xgkl`, ip: '10.244.0.2', nodeName: NODE, role: 'dns',
    image: 'registry.k8s.io/coredns/coredns:v1.11.1', labels: { ...DNS_LABELS }, httpPort: 53, replicaSet: DNS_RS }),
  pod({ key: 'coredns-2', namespace: 'kube-system', name: `${DNS_RS}-q4m2n`, ip: '10.244.0.3', nodeName: NODE, role: 'dns',
    image: 'registry.k8s.io/coredns/coredns:v1.11.1', labels: { ...DNS_LABELS }, httpPort: 53, replicaSet: DNS_RS }),
];

/** Endpoints of the pods whose labels match `selector` (what the EndpointSlice controller computes). */
export function endpointsFor(selector: Readonly<Record<string, string>>, pods: readonly ScenarioPod[]): ScenarioEndpoint[] {
  return pods
    .filter((p) => Object.entries(selector).every(([k, v]) => p.labels[k] === v))
    .map((p) => ({ ip: p.ip, nodeName: p.nodeName, ready: true, serving: true, terminating: false, podName: p.name }));
}

const SERVICES: readonly ScenarioService[] = [
  {
    namespace: 'default', name: 'web', type: 'NodePort', clusterIP: '10.96.12.34', selector: WEB_LABELS,
    ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: 8080, nodePort: 30080 }],
    endpoints: endpointsFor(WEB_LABELS, LAB_PODS),
  },
  {
    namespace: 'kube-system', name: 'kube-dns', type: 'ClusterIP', clusterIP: '10.96.0.10', selector: DNS_LABELS,
    ports: [
      { name: 'dns', protocol: 'UDP', port: 53, targetPort: 53 },
      { name: 'dns-tcp', protocol: 'TCP', port: 53, targetPort: 53 },
    ],
    endpoints: endpointsFor(DNS_LABELS, LAB_PODS),
  },
  {
    namespace: 'default', name: 'empty', type: 'ClusterIP', clusterIP: '10.96.50.5', selector: { app: 'nothing-matches' },
    ports: [{ name: '', protocol: 'TCP', port: 80, targetPort: 8080 }],
    endpoints: [],
  },
  {
    namespace: 'default', name: 'web-headless', type: 'ClusterIP', clusterIP: 'None', selector: WEB_LABELS,
    ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: 8080 }],
    endpoints: endpointsFor(WEB_LABELS, LAB_PODS),
  },
];

/** The lab scenario (kube-proxy input of lab-node plus nodes, pods and addresses). */
export const LAB_SCENARIO: LabScenario = {
  nodeName: NODE,
  nodeIPs: ['192.168.49.2'],
  clusterCIDR: '10.244.0.0/16',
  serviceCIDRs: ['10.96.0.0/12'],
  services: SERVICES,
  nodes: [
    { name: NODE, internalIP: '192.168.49.2', podCIDR: '10.244.0.0/24' },
    { name: NODE2, internalIP: '192.168.49.3', podCIDR: '10.244.1.0/24' },
  ],
  pods: LAB_PODS,
  clusterDomain: 'cluster.local',
  outsideIP: '192.168.49.1',
  nodeNetworkPrefix: 24,
  createdAt: '2026-01-12T09:00:00Z',
};

/** A DNS name the lab's DNS servers answer, with its A records (data-driven from the Services). */
export interface DnsRecord {
  readonly name: string;
  readonly addresses: readonly string[];
}

/**
 * The A records CoreDNS would serve for the scenario: `<svc>.<ns>.svc.<domain>` → the
 * ClusterIP, or for a headless Service → the ready endpoint IPs.
 */
export function dnsRecords(scenario: LabScenario): DnsRecord[] {
  return scenario.services.map((s) => ({
    name: `${s.name}.${s.namespace}.svc.${scenario.clusterDomain}`,
    addresses: s.clusterIP === 'None' ? s.endpoints.filter((e) => e.ready).map((e) => e.ip) : [s.clusterIP],
  }));
}

/**
 * SRV records of named ports, `_<port>._<proto>.<svc>.<ns>.svc.<domain>`, with CoreDNS's
 * priority 0 and weight ⌊100/n⌋ for n records of the name (kubernetes plugin
 * `backend_lookup.go`; Kubernetes DNS spec §2.4.1):
 * - ClusterIP Service: port on the Service name;
 * - headless Service: one record per ready endpoint, the endpoint's port (targetPort) on
 *   the endpoint's name ({@link dnsEndpointRecords}).
 */
export function dnsSrvRecords(scenario: LabScenario): { name: string; target: string; port: number; priority: number; weight: number }[] {
  return scenario.services.flatMap((s) => {
    const fqdn = `${s.name}.${s.namespace}.svc.${scenario.clusterDomain}`;
    return s.ports
      .filter((p) => p.name !== '')
      .flatMap((p) => {
        const name = `_${p.name}._${p.protocol.toLowerCase()}.${fqdn}`;
        if (s.clusterIP !== 'None') return [{ name, target: fqdn, port: p.port, priority: 0, weight: 100 }];
        const ready = s.endpoints.filter((e) => e.ready);
        return ready.map((e) => ({ name, target: `${endpointLabelOf(e.ip)}.${fqdn}`, port: p.targetPort, priority: 0, weight: Math.floor(100 / ready.length) }));
      });
  });
}

/** CoreDNS's name for an endpoint without hostname: its IPv4 address with dashes (`10-244-0-23`). */
function endpointLabelOf(ip: string): string {
  return ip.replaceAll('.', '-');
}

/**
 * A records of a headless Service's ready endpoints, `<dashed-ip>.<svc>.<ns>.svc.<domain>`
 * (CoreDNS answers them; the lab's endpoints have no `hostname`).
 */
export function dnsEndpointRecords(scenario: LabScenario): DnsRecord[] {
  return scenario.services
    .filter((s) => s.clusterIP === 'None')
    .flatMap((s) =>
      s.endpoints
        .filter((e) => e.ready)
        .map((e) => ({ name: `${endpointLabelOf(e.ip)}.${s.name}.${s.namespace}.svc.${scenario.clusterDomain}`, addresses: [e.ip] })),
    );
}
