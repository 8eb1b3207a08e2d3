/**
 * The traffic a generated node has seen, per Service port and endpoint: the one source of
 * the iptables counters and the conntrack flows, so the two tell the same story.
 *
 * Units: connections (the nat table sees the first packet of each connection only, so an
 * iptables nat counter counts connections). `viaNodePort` is the part of a Service port's
 * connections that came in through its NodePort; `fromHost` the part of its ClusterIP
 * connections whose source was outside the pod CIDR (masqueraded).
 */
import { categorizeEndpoints, serviceToPorts, type ProxyEndpoint, type ProxyServicePort } from '../../src/analysis/kubeproxy-serviceports.js';
import type { KubeProxyInput } from '../../src/analysis/lab-scenario-types.js';
import { Rng } from './rng.js';

/** One Service port's traffic. `perEndpoint[i]` belongs to `endpoints[i]` (cluster endpoints, kube-proxy order). */
export interface PortTraffic {
  readonly port: ProxyServicePort;
  readonly endpoints: readonly ProxyEndpoint[];
  readonly perEndpoint: readonly number[];
  readonly total: number;
  readonly viaNodePort: number;
  readonly fromHost: number;
}

/** Traffic of every Service port of `input` (kube-proxy's port order), seeded by `seed`. */
export function generateTraffic(input: KubeProxyInput, seed: string): PortTraffic[] {
  const rng = new Rng(`${seed}/traffic`);
  return serviceToPorts(input).map((port) => {
    const { clusterEndpoints } = categorizeEndpoints(port);
    const perEndpoint = clusterEndpoints.map(() => rng.heavy(40));
    const total = perEndpoint.reduce((a, b) => a + b, 0);
    const viaNodePort = port.nodePort !== 0 ? Math.floor(total * rng.next() * 0.3) : 0;
    const fromHost = Math.floor((total - viaNodePort) * rng.next() * 0.05);
    return { port, endpoints: clusterEndpoints, perEndpoint, total, viaNodePort, fromHost };
  });
}
