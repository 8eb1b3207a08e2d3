/**
 * `trace` honours the API's expectation (issue 21): its notes say what kube-proxy on this
 * node should do with the traced Service's traffic, and flag an endpoint reached that this
 * node would not use (the node's rules disagreeing with the API).
 */
import { describe, expect, it } from 'vitest';
import { parseK8sObjects } from '../../src/parsers/k8s-objects.js';
import { runTraceCommand } from '../../src/report/trace.js';
import { snapshotOf } from '../helpers/fixtures.js';
import { LAB_SCENARIO } from '../lab/scenario.js';
import { labPod } from './trace-builders.js';
import { listJson, makeEndpointSlice, makeNode, makeService } from './builders/k8s.js';

const web = LAB_SCENARIO.services.find((s) => s.name === 'web')!;
const port = web.ports[0]!;

describe('trace with the API expectation', () => {
  it('names the endpoints the API expects for the ClusterIP traffic traced', async () => {
    const snapshot = await snapshotOf('lab-iptables');
    const text = runTraceCommand(snapshot, { from: labPod('client').ip, to: `${web.clusterIP}:${port.port}/tcp`, endpoint: `${labPod('web-2').ip}:${port.targetPort}` });
    expect(text).toMatch(/note: the API expects cluster traffic to default\/web \(IPv4 80\/TCP, Cluster policy\) on this node: → 10\.244\.0\.23:8080 ready \(on this node\)/);
    expect(text).not.toContain('would not use');
  });

  it('flags a walk that reaches an endpoint the API says this node should not use (hints for another zone)', async () => {
    const snapshot = await snapshotOf('lab-iptables');
    // The same Service, but its EndpointSlice hints web-2's address for another zone only.
    const objects = parseK8sObjects(listJson([
      makeNode({ name: snapshot.meta.node, zone: 'zone-a' }),
      makeService({ name: 'web', clusterIP: web.clusterIP, ports: [{ name: 'http', port: port.port, targetPort: port.targetPort }] }),
      makeEndpointSlice({ service: 'web', ports: [{ name: 'http', port: port.targetPort }], endpoints: [
        { address: labPod('web-1').ip, nodeName: snapshot.meta.node, forZones: ['zone-a'] },
        { address: labPod('web-2').ip, nodeName: snapshot.meta.node, forZones: ['zone-b'] },
      ] }),
    ]), 't').value;
    const hinted = { ...snapshot, api: { ...snapshot.api!, value: objects, diagnostics: [] } };
    const text = runTraceCommand(hinted, { from: labPod('client').ip, to: `${web.clusterIP}:${port.port}/tcp`, endpoint: `${labPod('web-2').ip}:${port.targetPort}` });
    expect(text).toContain(`→ ${labPod('web-1').ip}:${port.targetPort} hinted for zone-a`);
    expect(text).toContain(`note: the walk reached ${labPod('web-2').ip}:${port.targetPort}, which kube-proxy on this node would not use: not hinted for zone-a`);
  });
});
