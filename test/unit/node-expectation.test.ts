/**
 * The node's expectation from API objects (src/analysis/node-expectation.ts): which
 * endpoints this node should use for cluster and external traffic, and why.
 */
import { describe, expect, it } from 'vitest';
import { expectNodeServices, type ServiceExpectation, type TrafficExpectation } from '../../src/analysis/node-expectation.js';
import { makeEndpointSlice, makeNode, makeService, objectsOf } from './builders/k8s.js';

const eps = (t: TrafficExpectation | null) => (t?.endpoints ?? []).map((e) => `${e.hostPort} ${e.reasons.map((r) => r.text).join('; ')}`);
const out = (t: TrafficExpectation | null) => (t?.excluded ?? []).map((e) => `${e.hostPort} ${e.reasons.map((r) => r.text).join('; ')}`);
const find = (all: readonly ServiceExpectation[], name: string) => all.find((s) => s.name === name)!;

describe('expectNodeServices', () => {
  const objects = objectsOf(
    makeNode({ name: 'node-a', zone: 'zone-a' }),
    makeNode({ name: 'node-b', zone: 'zone-b' }),
    makeService({ name: 'zonal', trafficDistribution: 'PreferSameZone' }),
    makeEndpointSlice({ service: 'zonal', endpoints: [
      { address: '10.244.1.5', nodeName: 'node-a', zone: 'zone-a', forZones: ['zone-a'] },
      { address: '10.244.2.5', nodeName: 'node-b', zone: 'zone-b', forZones: ['zone-b'] },
    ] }),
    makeService({ name: 'same-node', trafficDistribution: 'PreferSameNode', clusterIP: '10.96.0.11' }),
    makeEndpointSlice({ service: 'same-node', endpoints: [
      { address: '10.244.1.6', nodeName: 'node-a', forNodes: ['node-a'], forZones: ['zone-a'] },
      { address: '10.244.2.6', nodeName: 'node-b', forNodes: ['node-b'], forZones: ['zone-b'] },
    ] }),
    makeService({ name: 'itp', internalTrafficPolicy: 'Local', clusterIP: '10.96.0.12' }),
    makeEndpointSlice({ service: 'itp', endpoints: [{ address: '10.244.2.7', nodeName: 'node-b' }] }),
    makeService({
      name: 'lb', type: 'LoadBalancer', externalTrafficPolicy: 'Local', healthCheckNodePort: 30500, clusterIP: '10.96.0.13',
      ports: [{ name: 'http', port: 80, targetPort: 8080, nodePort: 30080 }],
      lbIngress: [{ ip: '198.51.100.1' }, { ip: '198.51.100.2', ipMode: 'Proxy' }],
    }),
    makeEndpointSlice({ service: 'lb', endpoints: [
      { address: '10.244.1.8', nodeName: 'node-a', ready: false, serving: true, terminating: true },
      { address: '10.244.2.8', nodeName: 'node-b' },
    ] }),
    makeService({ name: 'other', clusterIP: '10.96.0.14', labels: { 'service.kubernetes.io/service-proxy-name': 'my-proxy' } }),
    makeService({ name: 'dual', clusterIP: '10.96.0.15', clusterIPs: ['10.96.0.15', 'fd00::15'], ipFamilies: ['IPv4', 'IPv6'], ipFamilyPolicy: 'RequireDualStack' }),
    makeEndpointSlice({ service: 'dual', name: 'dual-v4', endpoints: [{ address: '10.244.1.9', nodeName: 'node-a' }] }),
    makeEndpointSlice({ service: 'dual', name: 'dual-v6', addressType: 'IPv6', endpoints: [{ address: 'fd00:244::9', nodeName: 'node-a' }] }),
  );
  const exp = expectNodeServices(objects, { name: 'node-a' });

  it('reads the node zone from its Node object', () => {
    expect([exp.nodeName, exp.zone]).toEqual(['node-a', 'zone-a']);
  });

  it('PreferSameZone: the endpoints hinted for this zone, the others left out by hint', () => {
    const p = find(exp.services, 'zonal').ports[0]!;
    expect([p.topologyMode, p.cluster.policy, p.cluster.verdict]).toEqual(['PreferSameZone', 'Cluster', 'endpoints']);
    expect(eps(p.cluster)).toEqual(['10.244.1.5:8080 hinted for zone-a']);
    expect(out(p.cluster)).toEqual(['10.244.2.5:8080 not hinted for zone-a']);
    expect(p.external).toBeNull();
  });

  it('PreferSameNode: this node\'s endpoint; from node-b\'s side its own', () => {
    expect(eps(find(exp.services, 'same-node').ports[0]!.cluster)).toEqual(['10.244.1.6:8080 hinted for node-a']);
    const b = expectNodeServices(objects, { name: 'node-b' });
    expect(eps(find(b.services, 'same-node').ports[0]!.cluster)).toEqual(['10.244.2.6:8080 hinted for node-b']);
    expect(b.zone).toBe('zone-b');
  });

  it('iTP=Local without a local endpoint: DROP, and why the remote one is not used', () => {
    const c = find(exp.services, 'itp').ports[0]!.cluster;
    expect([c.policy, c.verdict, c.reasons.map((r) => r.text)]).toEqual(['Local', 'drop', ['no local endpoints: DROP (iTP=Local)']]);
    expect(out(c)).toEqual(['10.244.2.7:8080 on node-b, not this node']);
  });

  it('eTP=Local: the local serving-terminating endpoint (KEP-1669) for external traffic, the ready remote one for cluster traffic; the ipMode Proxy LB IP is not programmed', () => {
    const p = find(exp.services, 'lb').ports[0]!;
    expect(eps(p.cluster)).toEqual(['10.244.2.8:8080 ready']);
    expect(eps(p.external)).toEqual(['10.244.1.8:8080 local only: eTP=Local; terminating fallback: no local endpoint is ready']);
    expect(p.external!.reasons.map((r) => r.code)).toEqual(['short-circuit']);
    expect([p.nodePort, p.healthCheckNodePort]).toEqual([30080, 30500]);
    expect(p.loadBalancerIPs.map((l) => [l.ip, l.ipMode, l.programmed, l.reason?.text])).toEqual([
      ['198.51.100.1', 'VIP', true, undefined],
      ['198.51.100.2', 'Proxy', false, 'ipMode Proxy: LB IP not programmed'],
    ]);
  });

  it('a Service of another proxy is skipped and says so', () => {
    const s = find(exp.services, 'other');
    expect([s.skipped?.text, s.ports]).toEqual(['skipped: service-proxy-name=my-proxy', []]);
  });

  it('dual-stack: one expectation per family, each with its own endpoints', () => {
    const s = find(exp.services, 'dual');
    expect(s.ports.map((p) => [p.family, p.clusterIP, p.cluster.endpoints.map((e) => e.hostPort)])).toEqual([
      ['IPv4', '10.96.0.15', ['10.244.1.9:8080']],
      ['IPv6', 'fd00::15', ['[fd00:244::9]:8080']],
    ]);
    expect([s.ipFamilies, s.ipFamilyPolicy]).toEqual([['IPv4', 'IPv6'], 'RequireDualStack']);
  });

  it('no endpoints anywhere: REJECT', () => {
    const e = expectNodeServices(objectsOf(makeService({ name: 'empty' })), { name: 'node-a' });
    const c = e.services[0]!.ports[0]!.cluster;
    expect([c.verdict, c.reasons.map((r) => r.text)]).toEqual(['reject', ['no endpoints']]);
    expect(e.zone).toBe('');
  });
});
