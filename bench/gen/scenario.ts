/**
 * A synthetic cluster of any size, from one seed: the {@link LabScenario} every generated
 * capture (iptables, nftables, Cilium maps, conntrack, API objects) is derived from, so
 * they all agree with each other.
 *
 * Shape (what real clusters of this size look like, kept deliberately plain):
 * - nodes `gen-node-0` … (kube-proxy runs on `gen-node-0`), node network 192.168.0.0/16
 *   (node k at 192.168.0.(10+k)), pod CIDR 10.128.0.0/9 with one /12 per node (its bridge
 *   `cni0` holds .1), Service CIDR 10.96.0.0/12;
 * - `default/kubernetes` (443 → the API server on node 0, 6443) and `kube-system/kube-dns`
 *   (53/UDP, 53/TCP, 9153/TCP → two CoreDNS endpoints) as every cluster has, then the
 *   requested Services `ns-XX/<word>-<n>`, one port each: 95 % TCP, 5 % UDP; 10 % NodePort
 *   (while nodePorts 30000–32767 last); 1 % without endpoints;
 * - every Service gets `endpoints` endpoints on random nodes, each address used once; 1 % of
 *   endpoints are terminating (`ready=false, serving=true`), as during a rollout.
 *
 * ClusterIPs are unique: the i-th Service takes 10.97.0.0 + (i·40503 + offset) mod 2^19,
 * an odd stride over a power of two (a bijection), offset from the seed.
 */
import type { LabScenario, ScenarioEndpoint, ScenarioNode, ScenarioService } from '../../src/analysis/lab-scenario-types.js';
import { Rng } from './rng.js';

/** What to generate. `services` ≥ 0, `endpoints` 0–1,000 per Service, `nodes` 1–16 (default 4). */
export interface ScenarioSize {
  readonly services: number;
  readonly endpoints: number;
  readonly seed: string;
  readonly nodes?: number;
}

/** The node kube-proxy (and so the capture) runs on. */
export const GEN_NODE = 'gen-node-0';
/** ISO-8601 time every generated object and capture carries (fixed: captures stay byte-stable). */
export const GEN_CREATED_AT = '2026-02-02T10:00:00Z';

const WORDS = ['api', 'web', 'cart', 'search', 'auth', 'billing', 'orders', 'users', 'media', 'notify', 'ledger', 'quote', 'geo', 'feed', 'report', 'queue'];
const SERVICE_BASE = ipToInt('10.97.0.0');
const SERVICE_SPAN = 1 << 19;
const NODE_PORT_MIN = 30000;
const NODE_PORT_MAX = 32767;

/** Dotted quad → unsigned 32-bit integer (input is trusted: generator-internal). */
export function ipToInt(ip: string): number {
  return ip.split('.').reduce((n, p) => n * 256 + Number(p), 0) >>> 0;
}

/** Unsigned 32-bit integer → dotted quad. */
export function intToIp(n: number): string {
  return `${n >>> 24}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;
}

function nodesOf(count: number): ScenarioNode[] {
  return Array.from({ length: count }, (_, k) => ({
    name: `gen-node-${k}`,
    internalIP: `192.168.0.${10 + k}`,
    podCIDR: `10.${128 + k * 16}.0.0/12`,
  }));
}

/** Hands out pod addresses per node, in order, skipping .0 and .255 of every /24 and the bridge's .1. */
class PodAddresses {
  private readonly next: number[];
  constructor(nodes: readonly ScenarioNode[]) {
    this.next = nodes.map((n) => ipToInt(n.podCIDR.split('/')[0]!) + 2);
  }
  take(node: number): string {
    let n = this.next[node]!;
    if ((n & 255) === 0) n++;
    if ((n & 255) === 255) n += 2;
    this.next[node] = n + 1;
    return intToIp(n);
  }
}

function endpoint(ip: string, nodeName: string, terminating: boolean): ScenarioEndpoint {
  return { ip, nodeName, ready: !terminating, serving: true, terminating };
}

function fixedServices(nodes: readonly ScenarioNode[], addrs: PodAddresses): ScenarioService[] {
  const dns = [addrs.take(0), addrs.take(nodes.length > 1 ? 1 : 0)];
  return [
    {
      namespace: 'default', name: 'kubernetes', type: 'ClusterIP', clusterIP: '10.96.0.1',
      ports: [{ name: 'https', protocol: 'TCP', port: 443, targetPort: 6443 }],
      endpoints: [{ ip: nodes[0]!.internalIP, ready: true, serving: true, terminating: false }],
    },
    {
      namespace: 'kube-system', name: 'kube-dns', type: 'ClusterIP', clusterIP: '10.96.0.10', selector: { 'k8s-app': 'kube-dns' },
      ports: [
        { name: 'dns', protocol: 'UDP', port: 53, targetPort: 53 },
        { name: 'dns-tcp', protocol: 'TCP', port: 53, targetPort: 53 },
        { name: 'metrics', protocol: 'TCP', port: 9153, targetPort: 9153 },
      ],
      endpoints: dns.map((ip, i) => endpoint(ip, nodes[Math.min(i, nodes.length - 1)]!.name, false)),
    },
  ];
}

/**
 * The scenario for `size`. Deterministic: equal sizes and seeds give deep-equal scenarios.
 * Throws `RangeError` for sizes outside the documented bounds.
 */
export function generateScenario(size: ScenarioSize): LabScenario {
  const nodeCount = size.nodes ?? 4;
  if (!Number.isInteger(size.services) || size.services < 0 || size.services > SERVICE_SPAN) throw new RangeError(`services must be 0–${SERVICE_SPAN}`);
  if (!Number.isInteger(size.endpoints) || size.endpoints < 0 || size.endpoints > 1000) throw new RangeError('endpoints must be 0–1000');
  if (!Number.isInteger(nodeCount) || nodeCount < 1 || nodeCount > 8) throw new RangeError('nodes must be 1–8');
  const rng = new Rng(size.seed);
  const nodes = nodesOf(nodeCount);
  const addrs = new PodAddresses(nodes);
  const services = fixedServices(nodes, addrs);
  const namespaces = Math.max(1, Math.ceil(size.services / 250));
  const offset = rng.int(0, SERVICE_SPAN - 1);
  let nodePort = NODE_PORT_MIN;
  for (let i = 0; i < size.services; i++) {
    const word = rng.pick(WORDS);
    const udp = rng.chance(0.05);
    const exposed = !udp && rng.chance(0.1) && nodePort <= NODE_PORT_MAX;
    const empty = rng.chance(0.01);
    const port = udp ? 5353 : rng.pick([80, 80, 80, 443, 8080, 9090]);
    const targetPort = udp ? 5353 : port === 443 ? 8443 : rng.pick([8080, 8080, 3000, 9090]);
    const endpoints: ScenarioEndpoint[] = [];
    for (let j = 0; !empty && j < size.endpoints; j++) {
      const node = rng.int(0, nodeCount - 1);
      endpoints.push(endpoint(addrs.take(node), nodes[node]!.name, rng.chance(0.01)));
    }
    const name = `${word}-${i}`;
    services.push({
      namespace: `ns-${String(i % namespaces).padStart(2, '0')}`,
      name,
      type: exposed ? 'NodePort' : 'ClusterIP',
      clusterIP: intToIp(SERVICE_BASE + ((i * 40503 + offset) % SERVICE_SPAN)),
      selector: { app: name },
      ports: [{ name: udp ? 'dns' : 'http', protocol: udp ? 'UDP' : 'TCP', port, targetPort, ...(exposed ? { nodePort: nodePort++ } : {}) }],
      endpoints,
    });
  }
  return {
    nodeName: GEN_NODE,
    nodeIPs: [nodes[0]!.internalIP],
    clusterCIDR: '10.128.0.0/9',
    serviceCIDRs: ['10.96.0.0/12'],
    services,
    nodes,
    pods: [],
    clusterDomain: 'cluster.local',
    outsideIP: '192.168.0.1',
    nodeNetworkPrefix: 16,
    createdAt: GEN_CREATED_AT,
  };
}
