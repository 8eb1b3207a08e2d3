/**
 * A Service row's kube-proxy Service ports read straight from the row
 * (src/analysis/row-service-ports.ts `rowServicePorts`, what `show services` expects through)
 * equal what the generators' way gives (`scenarioService` then `serviceToPorts`, kept as
 * `serviceRowExpecterViaScenario`): the whole expectation of every row, and each Service port
 * field by field, on the lab captures, generated captures of three modes, the diagnosis
 * scenarios, and made-up Services of every shape — the ones it does not read fall back.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeGeneratedBundles } from '../../bench/gen/capture.js';
import { expectRowWork, nodeZone, serviceRowExpecter, serviceRowExpecterViaScenario } from '../../src/analysis/node-expectation.js';
import { scenarioService } from '../../src/analysis/compare-modes-input.js';
import { serviceToPorts } from '../../src/analysis/kubeproxy-serviceports.js';
import { rowServicePorts } from '../../src/analysis/row-service-ports.js';
import { buildServiceView } from '../../src/analysis/service-view.js';
import type { ApiObjects } from '../../src/model/k8s.js';
import { loadSnapshot } from '../../src/collect/session.js';
import { ReplayTransport } from '../../src/sources/replay.js';
import { generatedNode, RICH_SCENARIO, withService } from '../helpers/diagnose-scenario.js';
import { fixtureDir, snapshotOf } from '../helpers/fixtures.js';
import { listJson, makeEndpointSlice, makeNode, makeService, objectsOf } from './builders/k8s.js';
import { parseK8sObjects } from '../../src/parsers/k8s-objects.js';

const tmp: string[] = [];
afterAll(() => {
  for (const d of tmp) rmSync(d, { recursive: true, force: true });
});

/**
 * Every row of `objects` on `nodeName`: the expectation read straight = the generators' way,
 * and each straight Service port = `serviceToPorts`' of the row's scenario in both families,
 * key by key (its `service` too). Returns how many rows were read straight and the other way.
 */
function expectSame(objects: ApiObjects, nodeName: string, zone?: string): { straight: number; scenario: number } {
  const node = zone === undefined ? { name: nodeName } : { name: nodeName, zone };
  const straight = serviceRowExpecter(objects, node);
  const reference = serviceRowExpecterViaScenario(objects, node);
  const rows = buildServiceView(objects, { nodeName }).rows;
  const counts = { straight: 0, scenario: 0 };
  for (const row of rows) {
    const before = { ...expectRowWork };
    const fast = straight(row);
    if (expectRowWork.straight > before.straight) counts.straight++;
    else counts.scenario++;
    expect(fast, `${row.namespace}/${row.name}`).toStrictEqual(reference(row));
    const ports = rowServicePorts(row, nodeName, nodeZone(objects, node));
    if (ports === null) continue;
    const old = (['IPv4', 'IPv6'] as const).flatMap((family) => {
      const s = scenarioService(row, [], family);
      return s === null ? [] : serviceToPorts({ nodeName, nodeZone: nodeZone(objects, node), family, nodeIPs: [], services: [s] });
    });
    expect(ports.length, `${row.name} ports`).toBe(old.length);
    ports.forEach((p, i) => {
      const o = old[i]!;
      for (const key of Object.keys(o) as (keyof typeof o)[]) expect(p[key], `${row.name} ${key}`).toStrictEqual(o[key]);
      // Nothing but the generators' fields is visible on it.
      expect(Object.keys(p).filter((k) => !(k in o)), row.name).toEqual([]);
    });
  }
  return counts;
}

/** A capture as `show services` reads it (no ruleset). */
async function servicesObjects(dir: string): Promise<{ objects: ApiObjects; node: string }> {
  const transport = new ReplayTransport(dir);
  const apiText = transport.apiText();
  const { snapshot } = await loadSnapshot({ transport, live: false, parts: [], ...(apiText !== undefined ? { apiText } : {}) });
  return { objects: snapshot.api!.value!, node: snapshot.meta.node };
}

describe('rowServicePorts: the expectation read straight from the row = the generators\' way', () => {
  it.each(['lab-iptables', 'lab-nftables', 'lab-cilium'])('%s', async (name) => {
    const snapshot = await snapshotOf(name);
    const counts = expectSame(snapshot.api!.value!, snapshot.meta.node);
    expect(counts.straight, name).toBeGreaterThan(0);
    // Another node's view (no endpoint local) and a zone given.
    expectSame(snapshot.api!.value!, 'another-node', 'zone-x');
  });

  it('generated captures of every mode', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'nodescope-row-ports-'));
    tmp.push(dir);
    writeGeneratedBundles(dir, { services: 120, endpoints: 6, seed: 'row-ports', modes: ['iptables', 'nftables', 'cilium'], conntrack: 5 });
    for (const mode of ['iptables', 'nftables', 'cilium']) {
      const { objects, node } = await servicesObjects(path.join(dir, mode));
      const counts = expectSame(objects, node);
      expect(counts.straight, mode).toBeGreaterThanOrEqual(100);
    }
  }, 120_000);

  it('the diagnosis scenarios (eTP=Local, affinity, externalIPs, LB ingress, no or terminating endpoints)', async () => {
    const base = await snapshotOf('lab-iptables');
    const noEndpoints = withService(RICH_SCENARIO, 'web', (s) => ({ ...s, endpoints: [] }));
    const terminating = withService(RICH_SCENARIO, 'web', (s) => ({ ...s, endpoints: s.endpoints.map((e) => ({ ...e, ready: false, serving: true, terminating: true })) }));
    let fellBack = 0;
    for (const api of [RICH_SCENARIO, noEndpoints, terminating]) {
      const node = generatedNode(base, { mode: 'iptables', api });
      const counts = expectSame(node.api!.value!, node.meta.node);
      expect(counts.straight).toBeGreaterThan(0);
      fellBack += counts.scenario;
    }
    // `ext` has externalIPs and an LB IP: never read straight.
    expect(fellBack).toBeGreaterThanOrEqual(3);
  });

  it('made-up Services of every shape: each equal, the unknown ones fall back', () => {
    const many = Array.from({ length: 12 }, (_, i) => ({ address: `10.244.${i % 3}.${10 - (i % 5)}`, nodeName: i % 2 ? 'node-a' : 'node-b' }));
    const straight: [string, object, object[] | null][] = [
      ['plain', {}, [{}]],
      ['nodeport', { type: 'NodePort', ports: [{ name: 'http', port: 80, targetPort: 8080, nodePort: 30080 }] }, [{ nodeName: 'node-a' }, { address: '10.244.1.6', nodeName: 'node-b' }]],
      ['etp-local', { type: 'NodePort', externalTrafficPolicy: 'Local', ports: [{ name: 'http', port: 80, targetPort: 8080, nodePort: 30081 }] }, [{ nodeName: 'node-b' }, { address: '10.244.1.7', nodeName: 'node-a', ready: false, serving: true, terminating: true }]],
      ['lb-no-ingress', { type: 'LoadBalancer', externalTrafficPolicy: 'Local', healthCheckNodePort: 30500, ports: [{ name: 'http', port: 80, targetPort: 8080, nodePort: 30082 }] }, [{ nodeName: 'node-a' }]],
      ['etp-local-clusterip', { externalTrafficPolicy: 'Local' }, [{ nodeName: 'node-b' }]],
      ['itp-local', { internalTrafficPolicy: 'Local' }, [{ nodeName: 'node-b' }, { address: '10.244.1.8', nodeName: 'node-a', ready: false }]],
      ['itp-local-here', { internalTrafficPolicy: 'Local' }, [{ nodeName: 'node-a', ready: false, serving: true, terminating: true }, { address: '10.244.1.9', nodeName: 'node-b' }]],
      ['affinity', { sessionAffinity: 'ClientIP', timeoutSeconds: 600 }, [{}]],
      ['affinity-default', { sessionAffinity: 'ClientIP' }, [{}]],
      ['not-ready', {}, [{ ready: false, serving: false }, { address: '10.244.2.1', ready: null, serving: null, terminating: null }]],
      ['terminating-only', {}, [{ ready: false, serving: true, terminating: true }, { address: '10.244.2.2', ready: false, serving: false, terminating: true }]],
      ['no-endpoints', {}, null],
      ['empty-node-name', {}, [{ nodeName: '' }, { address: '10.244.2.3', nodeName: 'node-a' }]],
      ['duplicates', {}, [{ address: '10.244.3.1' }, { address: '10.244.3.1', nodeName: 'node-a' }, { address: '10.244.3.0' }]],
      ['many-with-duplicates', {}, many],
      ['not-an-ip-in-ipv4-slice', {}, [{ address: '10.244.300.1' }, { address: '010.244.0.1' }, { address: '10.244.3.2' }]],
      ['multi-port', { ports: [{ name: 'http', port: 80, targetPort: 8080 }, { name: 'metrics', port: 9090, targetPort: 'metrics' }, { name: 'dns', port: 53, protocol: 'UDP', targetPort: 53 }] }, [{}]],
      ['unnamed-port', { ports: [{ port: 80, targetPort: 8080 }] }, [{}]],
      ['no-ports', { ports: [] }, [{}]],
      ['port-strings-sort', {}, [{ address: '10.244.0.10' }, { address: '10.244.0.1' }, { address: '10.244.0.9' }, { address: '9.0.0.1' }]],
    ];
    const fallBack: [string, object, object[] | null][] = [
      ['zone-hints', { trafficDistribution: 'PreferSameZone' }, [{ zone: 'zone-a', forZones: ['zone-a'] }, { address: '10.244.4.1', zone: 'zone-b', forZones: ['zone-b'] }]],
      ['node-hints', {}, [{ nodeName: 'node-a', forNodes: ['node-a'] }]],
      ['external-ips', { externalIPs: ['192.0.2.10', 'fd00::10'] }, [{}]],
      ['lb-ingress', { type: 'LoadBalancer', ports: [{ name: 'http', port: 80, targetPort: 8080, nodePort: 30090 }], lbIngress: [{ ip: '198.51.100.1' }, { ip: '198.51.100.2', ipMode: 'Proxy' }] }, [{}]],
      ['source-ranges', { type: 'LoadBalancer', loadBalancerSourceRanges: [' 10.0.0.0/8 '], ports: [{ name: 'http', port: 80, targetPort: 8080, nodePort: 30091 }] }, [{}]],
      ['dual-stack', { clusterIPs: ['10.96.5.5', 'fd00::5'], ipFamilies: ['IPv4', 'IPv6'], ipFamilyPolicy: 'RequireDualStack' }, [{}]],
      ['ipv6-only', { clusterIP: 'fd00::6', clusterIPs: ['fd00::6'], ipFamilies: ['IPv6'] }, [{}]],
      ['leading-zero-cluster-ip', { clusterIP: '10.96.05.1', clusterIPs: ['10.96.05.1'] }, [{}]],
      ['headless', { clusterIP: 'None' }, [{}]],
      ['external-name', { type: 'ExternalName', externalName: 'db.example.com', clusterIP: null }, null],
      ['other-proxy', { labels: { 'service.kubernetes.io/service-proxy-name': 'my-proxy' } }, [{}]],
    ];
    const items = [makeNode({ name: 'node-a', zone: 'zone-a' }), makeNode({ name: 'node-b', zone: 'zone-b' })];
    let ip = 10;
    for (const [name, opts, endpoints] of [...straight, ...fallBack]) {
      const clusterIP = `10.96.7.${ip++}`;
      items.push(makeService({ name, clusterIP, ...opts }));
      if (endpoints !== null) items.push(makeEndpointSlice({ service: name, endpoints, ports: [{ name: 'http', port: 8080 }, { name: 'metrics', port: 9100 }, { name: 'dns', port: 53, protocol: 'UDP' }] }));
    }
    // An IPv6 slice beside an IPv4 one, and an endpoint in both.
    items.push(makeEndpointSlice({ service: 'plain', name: 'plain-v6', addressType: 'IPv6', endpoints: [{ address: 'fd00:244::1' }] }));
    // Parsed as any API list (the parser leaves out what is not an address of the slice's type, with a warning).
    const objects = parseK8sObjects(listJson(items), 'made-up').value;
    for (const [node, zone] of [['node-a', undefined], ['node-b', undefined], ['node-c', ''], ['node-a', 'zone-b']] as const) {
      const counts = expectSame(objects, node, zone);
      expect(counts, `${node} ${zone}`).toEqual({ straight: straight.length, scenario: fallBack.length });
    }
  });

  it('fails when a field is read another way (the comparison is not vacuous)', () => {
    const objects = objectsOf(makeService({ name: 'web', clusterIP: '10.96.0.10' }), makeEndpointSlice({ service: 'web', endpoints: [{ nodeName: 'node-a' }] }));
    const row = buildServiceView(objects, { nodeName: 'node-a' }).rows[0]!;
    const ports = rowServicePorts(row, 'node-a', '')!;
    const scenario = scenarioService(row, [])!;
    const old = serviceToPorts({ nodeName: 'node-a', nodeZone: '', nodeIPs: [], services: [scenario] });
    expect(ports[0]!.service).toStrictEqual(scenario);
    expect(ports[0]!.endpoints).toStrictEqual(old[0]!.endpoints);
    // Another node sees the endpoint as remote: the straight reading follows the node it is given.
    expect(rowServicePorts(row, 'node-b', '')![0]!.endpoints[0]!.isLocal).toBe(false);
    expect(ports[0]!.endpoints[0]!.isLocal).toBe(true);
  });
});
