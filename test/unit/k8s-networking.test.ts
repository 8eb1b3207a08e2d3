/**
 * Issue 21 item 1 ("Read"): the Service fields that change what a node programs, the
 * ServiceCIDR and IPAddress objects (networking.k8s.io/v1, KEP-1880), and the recorded API
 * server serving them as kube-apiserver 1.33+ does.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatK8sObjects, parseK8sObjects } from '../../src/parsers/k8s-objects.js';
import { makeCapture, makeIPAddress, makeServiceCIDR } from '../api-server/builders.js';
import { startApiServer, type ApiServerHandle } from '../api-server/index.js';
import { api } from '../api-server/test-client.js';
import { listJson, makeEndpointSlice, makeNode, makeService, objectsOf } from './builders/k8s.js';

describe('Service fields kube-proxy reads', () => {
  const objects = objectsOf(
    makeService({
      name: 'lb', type: 'LoadBalancer', externalTrafficPolicy: 'Local', internalTrafficPolicy: 'Local', healthCheckNodePort: 30500,
      loadBalancerSourceRanges: [' 203.0.113.0/24 ', '2001:db8::/32'], externalIPs: ['192.0.2.7'], trafficDistribution: 'PreferSameNode',
      lbIngress: [{ ip: '198.51.100.1', ipMode: 'Proxy' }, { ip: '198.51.100.2' }], sessionAffinity: 'ClientIP', timeoutSeconds: 60,
      clusterIPs: ['10.96.0.10', 'fd00::10'], ipFamilies: ['IPv4', 'IPv6'], ipFamilyPolicy: 'RequireDualStack',
      labels: { 'service.kubernetes.io/service-proxy-name': 'my-proxy' },
    }),
    makeEndpointSlice({ service: 'lb', endpoints: [{ address: '10.244.1.5', nodeName: 'node-a', zone: 'zone-a', forZones: ['zone-a'], forNodes: ['node-a'] }] }),
    makeNode({ name: 'node-a', zone: 'zone-a' }),
  );
  const svc = objects.services[0]!;

  it('reads policies, health-check NodePort, source ranges (as sent), externalIPs, ipMode, affinity, families and the proxy-name label', () => {
    expect(svc).toMatchObject({
      externalTrafficPolicy: 'Local', internalTrafficPolicy: 'Local', healthCheckNodePort: 30500,
      loadBalancerSourceRanges: [' 203.0.113.0/24 ', '2001:db8::/32'], externalIPs: ['192.0.2.7'], trafficDistribution: 'PreferSameNode',
      sessionAffinity: 'ClientIP', sessionAffinityTimeoutSeconds: 60, clusterIPs: ['10.96.0.10', 'fd00::10'],
      ipFamilies: ['IPv4', 'IPv6'], ipFamilyPolicy: 'RequireDualStack', serviceProxyName: 'my-proxy',
    });
    expect(svc.loadBalancerIngress.map((i) => [i.ip, i.ipMode])).toEqual([['198.51.100.1', 'Proxy'], ['198.51.100.2', undefined]]);
  });

  it('reads endpoint zone and hints, and the Node zone label', () => {
    const ep = objects.endpointSlices[0]!.endpoints[0]!;
    expect([ep.zone, ep.hintsForZones, ep.hintsForNodes]).toEqual(['zone-a', ['zone-a'], ['node-a']]);
    expect(objects.nodes[0]!.zone).toBe('zone-a');
  });

  it('leaves what is absent unset, not invented', () => {
    const plain = objectsOf(makeService()).services[0]!;
    expect([plain.healthCheckNodePort, plain.loadBalancerSourceRanges, plain.serviceProxyName]).toEqual([undefined, [], undefined]);
  });
});

describe('ServiceCIDR and IPAddress (networking.k8s.io/v1)', () => {
  const text = listJson([makeServiceCIDR({ cidrs: ['10.96.0.0/16', 'fd00:10:96::/112'] }), makeIPAddress('10.96.12.34', { name: 'web' })] as never);

  it('parses both as typed objects without diagnostics and formats them back', () => {
    const r = parseK8sObjects(text, 't');
    expect(r.diagnostics.filter((d) => d.severity !== 'info')).toEqual([]);
    expect(r.value.serviceCIDRs.map((c) => [c.meta.name, c.cidrs, c.ready])).toEqual([['kubernetes', ['10.96.0.0/16', 'fd00:10:96::/112'], true]]);
    expect(r.value.ipAddresses.map((a) => [a.address, a.parentRef])).toEqual([
      ['10.96.12.34', { group: '', resource: 'services', namespace: 'default', name: 'web' }],
    ]);
    expect(r.value.others).toEqual([]);
    const again = parseK8sObjects(formatK8sObjects(r.value), 't').value;
    expect(again.serviceCIDRs.map((c) => c.raw)).toEqual(r.value.serviceCIDRs.map((c) => c.raw));
    expect(again.ipAddresses.map((c) => c.raw)).toEqual(r.value.ipAddresses.map((c) => c.raw));
  });

  it('reports an IPAddress whose parentRef lacks its resource, with the line', () => {
    const bad = JSON.stringify({ apiVersion: 'networking.k8s.io/v1', kind: 'IPAddress', metadata: { name: '10.96.0.1' }, spec: { parentRef: { name: 'kubernetes' } } });
    const r = parseK8sObjects(bad, 't');
    expect(r.value.ipAddresses[0]!.parentRef).toBeUndefined();
    expect(r.diagnostics.map((d) => [d.code, d.line])).toEqual([['missing-field', 1]]);
  });
});

describe('the recorded API server serves networking.k8s.io/v1', () => {
  let server: ApiServerHandle;
  beforeAll(async () => {
    const capture = makeCapture();
    capture.items.push(makeServiceCIDR(), makeIPAddress('10.96.12.34', { name: 'web' }));
    server = await startApiServer({ objects: capture });
  });
  afterAll(async () => {
    await server.close();
  });

  it('lists ServiceCIDRs and IPAddresses at the cluster scope, and names them in discovery', async () => {
    const cidrs = await api(server, '/apis/networking.k8s.io/v1/servicecidrs');
    expect(cidrs.json).toMatchObject({ kind: 'ServiceCIDRList', apiVersion: 'networking.k8s.io/v1' });
    expect(cidrs.json.items.map((o: { spec: { cidrs: string[] } }) => o.spec.cidrs)).toEqual([['10.96.0.0/16']]);
    const ips = await api(server, '/apis/networking.k8s.io/v1/ipaddresses/10.96.12.34');
    expect(ips.json.spec.parentRef).toEqual({ group: '', resource: 'services', namespace: 'default', name: 'web' });
    const groups = await api(server, '/apis');
    expect(groups.json.groups.map((g: { name: string }) => g.name)).toEqual(['discovery.k8s.io', 'networking.k8s.io']);
    expect((await api(server, '/apis/networking.k8s.io/v1/namespaces/default/servicecidrs')).status).toBe(404);
  });
});
