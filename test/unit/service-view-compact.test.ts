/**
 * Compact Services rows (src/analysis/service-row.ts): what a row derives when read is what
 * the materialised rows held, however often and in whatever order rows are read; and the
 * Services filter (src/ui/views.ts `servicesView`) refines while typing to exactly what a
 * fresh scan finds.
 */
import { describe, it, expect } from 'vitest';
import { buildServiceView, dataplaneTargets, diagnoseService, endpointAddresses, type ServiceRow, type ServiceView } from '../../src/analysis/service-view.js';
import type { JsonObject } from '../../src/model/k8s.js';
import type { NodeSnapshot } from '../../src/model/snapshot.js';
import { servicesView } from '../../src/ui/views.js';
import { snapshotOf } from '../helpers/fixtures.js';
import { makeEndpointSlice, makeNode, makePod, makeService, objectsOf } from './builders/k8s.js';

/** A slice whose first endpoint carries `extra` addresses too (the API allows several). */
function withExtraAddresses(slice: JsonObject, extra: string[]): JsonObject {
  const [first, ...rest] = slice['endpoints'] as JsonObject[];
  return { ...slice, endpoints: [{ ...first!, addresses: [...(first!['addresses'] as string[]), ...extra] }, ...rest] };
}

/** Service `ns/svc-i` with one slice of `n` endpoints, addresses deliberately out of order. */
function serviceWithEndpoints(i: number, n: number, ns = 'default'): JsonObject[] {
  const endpoints = Array.from({ length: n }, (_, k) => ({ address: `10.${i % 250}.${(k * 7) % n}.${n - k}`, nodeName: `node-${k % 3}`, ready: k % 4 !== 1 }));
  return [makeService({ name: `svc-${i}`, namespace: ns, clusterIP: `10.96.${i >> 8}.${i & 255}` }), makeEndpointSlice({ name: `svc-${i}-x`, service: `svc-${i}`, namespace: ns, endpoints })];
}

/** The filter text the pane matched before rows were compact: read through `endpoints`. */
function referenceText(r: ServiceRow): string {
  return `${r.namespace}/${r.name} ${r.type} ${r.clusterIPs.join(' ')} ${r.endpoints.map((e) => e.address).join(' ')}`.toLowerCase();
}

describe('compact Service rows', () => {
  it('give endpoint addresses in endpoint order across slices and multi-address endpoints', () => {
    const view = buildServiceView(objectsOf(
      makeService({ name: 'a' }),
      withExtraAddresses(makeEndpointSlice({ service: 'a', name: 'a-1', endpoints: [{ address: '10.0.0.10' }, { address: '10.0.0.2' }] }), ['9.0.0.1']),
      makeEndpointSlice({ service: 'a', name: 'a-0', endpoints: [{ address: '10.0.0.10' }, { address: '10.0.0.3' }] }),
    ));
    const row = view.rows[0]!;
    expect(row.endpoints.map((e) => `${e.address}@${e.sliceName}`)).toEqual(['9.0.0.1@a-1', '10.0.0.2@a-1', '10.0.0.3@a-0', '10.0.0.10@a-0', '10.0.0.10@a-1']);
    expect(endpointAddresses(row)).toEqual(row.endpoints.map((e) => e.address));
    // The two addresses of one endpoint share its conditions and ports.
    const [nine, , , , ten] = row.endpoints;
    expect(nine!.ports).toBe(ten!.ports);
  });

  it('derive the same rows when read again after many other rows were read', () => {
    const items = Array.from({ length: 150 }, (_, i) => serviceWithEndpoints(i, 6)).flat();
    const objects = objectsOf(...items, makeNode({ name: 'node-1', internalIP: '192.168.0.11' }), makePod({ name: 'unrelated' }));
    const view = buildServiceView(objects, { nodeName: 'node-1' });
    const first = view.rows.map((r) => structuredClone({ endpoints: r.endpoints, ports: r.ports, slices: r.slices, selectedPods: r.selectedPods }));
    expect(first.every((r) => r.endpoints.length === 6)).toBe(true);
    expect(first[0]!.endpoints.filter((e) => e.onNode).map((e) => e.node?.internalIPs)).toEqual([['192.168.0.11'], ['192.168.0.11']]);
    // Read in reverse: every row's derived lists were dropped and are derived again.
    const again = [...view.rows].reverse().map((r) => structuredClone({ endpoints: r.endpoints, ports: r.ports, slices: r.slices, selectedPods: r.selectedPods })).reverse();
    expect(again).toEqual(first);
    for (const r of view.rows) {
      const keys = r.endpoints.map((e) => e.address);
      expect(endpointAddresses(r)).toEqual(keys);
    }
  });

  it('match selected Pods by name, and share nothing between views of different nodes', () => {
    const objects = objectsOf(
      makeService({ name: 'web' }),
      makeEndpointSlice({ endpoints: [{ address: '10.0.0.1', pod: 'web-b', nodeName: 'node-a' }] }),
      makePod({ name: 'web-b', nodeName: 'node-a', containerPorts: [{ name: 'http', containerPort: 8080 }] }),
      makePod({ name: 'web-a', nodeName: 'node-b' }),
    );
    const onA = buildServiceView(objects, { nodeName: 'node-a' }).rows[0]!;
    const onB = buildServiceView(objects, { nodeName: 'node-b' }).rows[0]!;
    expect(onA.selectedPods?.map((p) => [p.name, p.containerPortNames])).toEqual([['web-a', []], ['web-b', ['http']]]);
    expect([onA.endpoints[0]?.onNode, onB.endpoints[0]?.onNode]).toEqual([true, false]);
    expect(onA.endpoints[0]?.pod?.name).toBe('web-b');
  });
});

/** `view` with every row copied into a plain object: the sweeps take their generic path. */
function materialised(view: ServiceView): ServiceView {
  const keys = ['namespace', 'name', 'type', 'headless', 'clusterIPs', 'externalName', 'externalIPs', 'loadBalancerIPs', 'sessionAffinity',
    'sessionAffinityTimeoutSeconds', 'externalTrafficPolicy', 'internalTrafficPolicy', 'trafficDistribution', 'selector', 'ports', 'slices',
    'endpoints', 'selectedPods', 'service'] as const satisfies readonly (keyof ServiceRow)[];
  return { ...view, rows: view.rows.map((r) => Object.fromEntries(keys.map((k) => [k, r[k]])) as unknown as ServiceRow) };
}

describe('sweeps over compact rows', () => {
  it('dataplaneTargets and diagnoseService say what they say over materialised rows', () => {
    const view = buildServiceView(objectsOf(
      makeService({ name: 'lb', type: 'LoadBalancer', clusterIPs: ['10.96.0.10', 'fd00::10'], externalIPs: ['198.51.100.5'], lbIngress: [{ ip: '203.0.113.7' }],
        ports: [{ name: 'http', port: 80, targetPort: 8080, nodePort: 30080 }, { name: 'dns', protocol: 'UDP', port: 53, targetPort: 53, nodePort: 30053 }] }),
      makeEndpointSlice({ service: 'lb', name: 'lb-b', ports: [{ name: 'http', port: 8080 }, { name: 'dns', protocol: 'UDP', port: 53 }, { name: 'stray', port: 1 }, { name: 'http', port: null }],
        endpoints: [{ address: '10.0.0.9', ready: false }, { address: '10.0.0.1', ready: null }, { address: '10.0.0.10' }] }),
      withExtraAddresses(makeEndpointSlice({ service: 'lb', name: 'lb-a', endpoints: [{ address: '10.0.0.10', ready: false }, { address: '10.0.0.3' }] }), ['10.0.0.2']),
      makeEndpointSlice({ service: 'lb', name: 'lb-v6', addressType: 'IPv6', endpoints: [{ address: 'fd00::b' }, { address: 'fd00::a', terminating: true, ready: false }] }),
      makeEndpointSlice({ service: 'lb', name: 'lb-fqdn', addressType: 'FQDN', endpoints: [{ address: 'db.example.com' }] }),
      makeService({ name: 'down' }),
      makeEndpointSlice({ service: 'down', name: 'down-1', ports: [{ name: 'other', port: 9 }], endpoints: [{ address: '10.1.0.2', ready: false, serving: true }, { address: '10.1.0.1', ready: false, terminating: true }] }),
      makeService({ name: 'headless', clusterIP: 'None', clusterIPs: ['None'] }),
      makeEndpointSlice({ service: 'headless', name: 'headless-1', endpoints: [{ address: '10.2.0.1' }] }),
      makeService({ name: 'ext', type: 'ExternalName', clusterIP: null, externalName: 'db.example.com' }),
      makeService({ name: 'none', selector: null }),
    ));
    const plain = materialised(view);
    const targets = dataplaneTargets(view);
    expect(targets).toEqual(dataplaneTargets(plain));
    // 3 addresses × 2 served ports in lb-b, 2 more IPv4 and 2 IPv6 at 8080; 10.0.0.10:8080 is in two slices, ready in one.
    const lb = targets.find((t) => t.name === 'lb')!;
    expect(lb.endpoints.length).toBe(10);
    expect(lb.endpoints.filter((e) => e.ip === '10.0.0.10' && e.port === 8080)).toEqual([{ ip: '10.0.0.10', port: 8080, protocol: 'TCP', ready: true }]);
    const facts = diagnoseService(view);
    expect(facts).toEqual(diagnoseService(plain));
    expect(facts.map((f) => `${f.name} ${f.code}`)).toEqual(expect.arrayContaining(['down no-ready-endpoints', 'none no-endpointslice']));
  });
});

describe('servicesView filter', () => {
  async function snapshotWith(items: JsonObject[]): Promise<NodeSnapshot> {
    const s = await snapshotOf('lab-iptables');
    return { ...s, api: { ...s.api!, value: objectsOf(...items) } };
  }

  it('refines while typing, and widens on backspace, to what a fresh scan finds', async () => {
    const items = Array.from({ length: 60 }, (_, i) => serviceWithEndpoints(i, 4, i % 2 ? 'prod' : 'dev')).flat();
    const snapshot = await snapshotWith(items);
    const all = servicesView(snapshot, '').rows!;
    expect(all.length).toBe(60);
    const typed = ['1', '10', '10.', '10.1', '10.1.', 'P', 'pr', 'prod/svc-1', 'prod/svc-1 ', 'prod/svc-1', 'prod', 'rod', 'CLUSTERIP', 'clusterip 10.96.0.1', '10.3.0.4 10.3.1.1'];
    for (const q of typed) {
      const want = all.filter((r) => referenceText(r).includes(q.toLowerCase()));
      expect(servicesView(snapshot, q).rows, q).toEqual(want);
    }
    // The typed sequence exercised refinement, a wider filter and spans across two addresses.
    expect(servicesView(snapshot, '10.3.0.4 10.3.1.1').rows?.map((r) => r.name)).toEqual(['svc-3']);
    expect(servicesView(snapshot, '10.3.1.1 10.3.0.4').rows).toEqual([]);
  });
});
