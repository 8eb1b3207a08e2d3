/**
 * Which Service port a packet's destination is, and what kube-proxy on this node should
 * do with it (src/analysis/node-expectation.ts): for `trace` and the Step pane, which set
 * the walk over the node's real rules beside the API's expectation.
 *
 * A destination matches a port's ClusterIP (cluster traffic), an externalIP or a
 * programmed LB IP at the Service port, or any address at the NodePort (external traffic;
 * the node's own addresses are not checked here). Pure.
 */
import type { ApiObjects } from '../model/k8s.js';
import { expectServiceRow, type NodeIdentity, type PortExpectation, type ServiceExpectation, type TrafficExpectation } from './node-expectation.js';
import { buildServiceView } from './service-view.js';

/** The Service port a destination hits, the traffic kind, and that traffic's expectation. */
export interface DestinationExpectation {
  readonly service: ServiceExpectation;
  readonly port: PortExpectation;
  readonly traffic: 'cluster' | 'external';
  readonly expected: TrafficExpectation;
}

const same = (a: string, b: string): boolean => a.toLowerCase() === b.toLowerCase();

/**
 * The expectation for a packet to `ip`:`port`/`protocol` (protocol as the API spells it,
 * `TCP`), or null when no programmed Service port has that frontend. ClusterIP matches win
 * over NodePort ones.
 */
export function expectationForDestination(objects: ApiObjects, node: NodeIdentity, ip: string, port: number, protocol: string): DestinationExpectation | null {
  const rows = buildServiceView(objects, { nodeName: node.name }).rows;
  let nodePortHit: DestinationExpectation | null = null;
  for (const row of rows) {
    const frontend = row.clusterIPs.some((c) => same(c, ip)) || row.externalIPs.some((c) => same(c, ip)) || row.loadBalancerIPs.some((c) => same(c, ip));
    const onNodePort = row.ports.some((p) => p.nodePort === port && p.protocol === protocol.toUpperCase());
    if (!frontend && !onNodePort) continue;
    const service = expectServiceRow(objects, node, row);
    for (const p of service.ports) {
      if (p.protocol !== protocol.toUpperCase()) continue;
      if (p.port === port && same(p.clusterIP, ip)) return { service, port: p, traffic: 'cluster', expected: p.cluster };
      const external = p.external;
      if (external && p.port === port && (p.externalIPs.some((x) => same(x, ip)) || p.loadBalancerIPs.some((l) => l.programmed && same(l.ip, ip)))) {
        return { service, port: p, traffic: 'external', expected: external };
      }
      if (external && p.nodePort === port && nodePortHit === null) nodePortHit = { service, port: p, traffic: 'external', expected: external };
    }
  }
  return nodePortHit;
}

/**
 * Sentences that set a walk's outcome beside the expectation: what the API expects for this
 * traffic, and whether the endpoint reached (`ip:port`, or null when none was) is one of
 * the expected ones.
 */
export function expectationNotes(d: DestinationExpectation, reached: string | null): string[] {
  const name = `${d.service.namespace}/${d.service.name}`;
  const e = d.expected;
  const list = e.endpoints.map((x) => `${x.hostPort} ${x.reasons.map((r) => r.text).join(', ')}`).join(', ');
  const verdict = e.verdict === 'endpoints' ? `→ ${list}` : e.verdict.toUpperCase();
  const why = e.reasons.length ? ` — ${e.reasons.map((r) => r.text).join('; ')}` : '';
  const notes = [`the API expects ${d.traffic} traffic to ${name} (${d.port.family} ${d.port.port}/${d.port.protocol}, ${e.policy} policy) on this node: ${verdict}${why}`];
  if (reached !== null && e.verdict === 'endpoints' && !e.endpoints.some((x) => same(x.hostPort, reached))) {
    const left = e.excluded.find((x) => same(x.hostPort, reached));
    notes.push(`the walk reached ${reached}, which kube-proxy on this node would not use${left ? `: ${left.reasons.map((r) => r.text).join(', ')}` : ''}`);
  }
  if (reached !== null && e.verdict !== 'endpoints') notes.push(`the walk reached ${reached}, yet the API expects ${e.verdict.toUpperCase()} here`);
  return notes;
}
