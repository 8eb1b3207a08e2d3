/** `show services` says what kube-proxy on this node should do per Service (issue 21), in JSON and text. */
import { describe, expect, it } from 'vitest';
import { showServices } from '../../src/report/services.js';
import { parseK8sObjects } from '../../src/parsers/k8s-objects.js';
import { snapshotOf } from '../helpers/fixtures.js';
import { listJson, makeEndpointSlice, makeNode, makeService } from './builders/k8s.js';

async function withObjects() {
  const snap = await snapshotOf('lab-iptables');
  const text = listJson([
    makeNode({ name: snap.meta.node, zone: 'zone-a' }),
    makeService({ name: 'zonal', trafficDistribution: 'PreferSameZone' }),
    makeEndpointSlice({ service: 'zonal', endpoints: [
      { address: '10.244.1.5', nodeName: snap.meta.node, forZones: ['zone-a'] },
      { address: '10.244.2.5', nodeName: 'other', forZones: ['zone-b'] },
    ] }),
    makeService({ name: 'mine', clusterIP: '10.96.0.20', labels: { 'service.kubernetes.io/service-proxy-name': 'mesh' } }),
  ]);
  return { ...snap, api: { ...snap.api!, value: parseK8sObjects(text, 't').value, diagnostics: [] } };
}

describe('show services: the expectation', () => {
  it('JSON: per port, the endpoints cluster traffic uses with their reasons, and those left out', async () => {
    const snap = await withObjects();
    const doc = JSON.parse(showServices(snap, 'json')) as { services: { name: string; expectation: { distribution: string; skipped: string | null; ports: { family: string; topologyMode: string; cluster: { verdict: string; endpoints: unknown[]; excluded: unknown[] } }[] } }[] };
    const zonal = doc.services.find((s) => s.name === 'zonal')!.expectation;
    expect(zonal.distribution).toBe('PreferSameZone');
    expect(zonal.ports[0]).toMatchObject({ family: 'IPv4', topologyMode: 'PreferSameZone' });
    expect(zonal.ports[0]!.cluster).toMatchObject({
      verdict: 'endpoints',
      endpoints: [{ endpoint: '10.244.1.5:8080', reasons: ['hinted for zone-a'] }],
      excluded: [{ endpoint: '10.244.2.5:8080', reasons: ['not hinted for zone-a'] }],
    });
    expect(doc.services.find((s) => s.name === 'mine')!.expectation.skipped).toBe('skipped: service-proxy-name=mesh');
  });

  it('text: a block per Service after the table', async () => {
    const text = showServices(await withObjects(), 'text');
    expect(text).toContain('default/zonal: trafficDistribution PreferSameZone · iTP Cluster · eTP Cluster · no affinity');
    expect(text).toContain('  IPv4 80/TCP (follows PreferSameZone hints)');
    expect(text).toContain('      → 10.244.1.5:8080 hinted for zone-a');
    expect(text).toContain('      ✗ 10.244.2.5:8080 not hinted for zone-a');
    expect(text).toContain('  skipped: service-proxy-name=mesh');
  });
});
