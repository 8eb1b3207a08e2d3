/**
 * The input of kube-proxy's own "overall rules" tests, rebuilt with our scenario types:
 * `TestOverallIPTablesRules` (pkg/proxy/iptables/proxier_test.go) and
 * `TestOverallNFTablesRules` (pkg/proxy/nftables/proxier_test.go) create the same six
 * Services svc1…svc6 in namespaces ns1…ns6. Their expected outputs are in
 * shared/corpus/iptables/k8s-iptables-proxier-test-overall.txt and
 * shared/corpus/nft/k8s-nftables-proxier-test-overall.txt.
 *
 * The fake proxiers run on node `test-node` with IP 192.168.0.2, cluster CIDR
 * 10.0.0.0/8 (local-traffic detector) and service CIDR 172.30.0.0/16.
 */
import type { KubeProxyInput, ScenarioEndpoint, ScenarioService } from '../../src/analysis/lab-scenario-types.js';

/** kube-proxy test's `testNodeName`. */
export const UPSTREAM_NODE_NAME = 'test-node';

/** An endpoint builder: ready, serving, not terminating, on no node unless given. */
export function makeEndpoint(ip: string, overrides: Partial<ScenarioEndpoint> = {}): ScenarioEndpoint {
  return { ip, ready: true, serving: true, terminating: false, ...overrides };
}

/** A Service builder in the spirit of the upstream `makeTestService`: one TCP port `p80` 80→80. */
export function makeService(namespace: string, name: string, overrides: Partial<ScenarioService> = {}): ScenarioService {
  return {
    namespace,
    name,
    type: 'ClusterIP',
    clusterIP: '',
    ports: [{ name: 'p80', protocol: 'TCP', port: 80, targetPort: 80 }],
    endpoints: [],
    ...overrides,
  };
}

/** The six Services of `TestOverall{IPTables,NFTables}Rules` with their EndpointSlices. */
export function upstreamOverallInput(): KubeProxyInput {
  const p80 = (nodePort?: number) => [{ name: 'p80', protocol: 'TCP' as const, port: 80, targetPort: 80, ...(nodePort ? { nodePort } : {}) }];
  return {
    nodeName: UPSTREAM_NODE_NAME,
    nodeIPs: ['192.168.0.2'],
    clusterCIDR: '10.0.0.0/8',
    serviceCIDRs: ['172.30.0.0/16'],
    services: [
      // ClusterIP service
      makeService('ns1', 'svc1', { clusterIP: '172.30.0.41', endpoints: [makeEndpoint('10.180.0.1')] }),
      // LoadBalancer with Local traffic policy; its endpoint has no nodeName, so it is not local.
      makeService('ns2', 'svc2', {
        type: 'LoadBalancer',
        externalTrafficPolicy: 'Local',
        clusterIP: '172.30.0.42',
        ports: p80(3001),
        loadBalancerIPs: ['1.2.3.4'],
        externalIPs: ['192.168.99.22'],
        healthCheckNodePort: 30000,
        endpoints: [makeEndpoint('10.180.0.2')],
      }),
      // NodePort service
      makeService('ns3', 'svc3', {
        type: 'NodePort',
        clusterIP: '172.30.0.43',
        ports: p80(3003),
        endpoints: [makeEndpoint('10.180.0.3')],
      }),
      // ExternalIP service (type NodePort without a node port, as in the upstream test)
      makeService('ns4', 'svc4', {
        type: 'NodePort',
        clusterIP: '172.30.0.44',
        externalIPs: ['192.168.99.33'],
        endpoints: [makeEndpoint('10.180.0.4'), makeEndpoint('10.180.0.5', { nodeName: UPSTREAM_NODE_NAME })],
      }),
      // LoadBalancer with Cluster policy, source ranges (with stray blank) and affinity
      makeService('ns5', 'svc5', {
        type: 'LoadBalancer',
        externalTrafficPolicy: 'Cluster',
        clusterIP: '172.30.0.45',
        ports: p80(3002),
        loadBalancerIPs: ['5.6.7.8'],
        healthCheckNodePort: 30000,
        loadBalancerSourceRanges: [' 203.0.113.0/25'],
        sessionAffinity: { timeoutSeconds: 10800 },
        endpoints: [makeEndpoint('10.180.0.3')],
      }),
      // ClusterIP service with no endpoints
      makeService('ns6', 'svc6', { clusterIP: '172.30.0.46' }),
    ],
  };
}
