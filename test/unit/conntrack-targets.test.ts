/**
 * The conntrack pane's Services read straight from the API objects (`conntrackTargets` →
 * `classificationTargets`, src/analysis/conntrack-targets.ts) against the Services view's
 * (`conntrackTargetsViaView`: `dataplaneTargets(buildServiceView(…))`, the old path kept as the
 * reference): the same Services in the same order with the same VIPs, NodePorts and endpoints
 * as sets, and the same pane index — every entry's Service and status, every sort column in
 * both directions, the filters and the Service scope — on the lab captures, generated captures
 * of the three modes, and a lab capture edited with IPv6, duplicates and odd API shapes.
 * Addresses the view's keys would merge (leading-zero IPv4, IPv6 not in canonical form) make
 * the straight read give up, and the view's targets are used as they are.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateWorld, writeModeBundle, type GenMode } from '../../bench/gen/capture.js';
import { buildConntrackTableIndex, conntrackIndex, conntrackSource, conntrackTargetColumns, conntrackTargets, conntrackTargetsViaView, type ConntrackIndex, type ConntrackTargets } from '../../src/analysis/conntrack-index.js';
import { classificationTargets, isPlainAddress } from '../../src/analysis/conntrack-targets.js';
import { decodeConntrackTargets, encodeConntrackTargets, type EncodedConntrackTargets } from '../../src/analysis/conntrack-targets-codec.js';
import { classifyConntrackRows } from '../../src/analysis/conntrack-classify.js';
import { conntrackRows } from '../../src/model/conntrack-ids.js';
import { CONNTRACK_SORT_COLUMNS, DEFAULT_CONNTRACK_SORT, sortedOrder } from '../../src/analysis/conntrack-sort.js';
import { conntrackOrder } from '../../src/analysis/conntrack-filter.js';
import type { ServiceFrontends } from '../../src/analysis/conntrack-nat.js';
import type { NodeSnapshot } from '../../src/model/snapshot.js';
import { snapshotWithMovedDnsEndpoint } from '../helpers/conntrack-fixtures.js';
import { copyFixture, snapshotOf, snapshotOfDir } from '../helpers/fixtures.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Each Service's lists as sorted, de-duplicated text (readiness left out: the classifier does not read it). */
function asSets(services: readonly ServiceFrontends[]) {
  const set = (items: readonly { readonly ip?: string; readonly port: number; readonly protocol: string }[]) =>
    [...new Set(items.map((x) => `${x.ip ?? ''} ${x.port} ${x.protocol}`))].sort();
  return services.map((s) => ({ namespace: s.namespace, name: s.name, vips: set(s.vips), nodePorts: set(s.nodePorts), endpoints: set(s.endpoints) }));
}

const FILTERS = ['', 'tcp', 'udp', 'ok', 'stale', 'no-service', 'kube-dns', 'default/web', '10.96', ':80', 'fd00', 'established', 'tcp ok'];

/** The index the pane builds (now) and one built from the view's targets (before): every row, sort and filter equal. */
function expectSameIndex(snapshot: NodeSnapshot): ConntrackIndex {
  const table = conntrackSource(snapshot).part?.value;
  expect(table).toBeTruthy();
  const before = conntrackTargetsViaView(snapshot);
  const now = conntrackTargets(snapshot);
  expect(now.nodeAddresses).toEqual(before.nodeAddresses);
  expect(asSets(now.services)).toEqual(asSets(before.services));
  const index = conntrackIndex(snapshot);
  const reference = buildConntrackTableIndex(table!, before.services, before.nodeAddresses, snapshot.api?.value != null);
  expectSameColumns(snapshot, now, reference);
  expect(index.rows.length).toBeGreaterThan(0);
  expect(index.services).toEqual(reference.services);
  expect(index.servicesKnown).toBe(reference.servicesKnown);
  expect(index.staleCount).toBe(reference.staleCount);
  expect([...index.serviceOf]).toEqual([...reference.serviceOf]);
  expect([...index.codeOf]).toEqual([...reference.codeOf]);
  for (const column of CONNTRACK_SORT_COLUMNS) {
    for (const descending of [false, true]) {
      expect([column, descending, [...sortedOrder(index, { column, descending })]]).toEqual([column, descending, [...sortedOrder(reference, { column, descending })]]);
    }
  }
  const scopes = [null, ...reference.services.slice(0, 3).map((s) => s.label), 'no/such-service'];
  for (const filter of FILTERS) {
    for (const service of scopes) {
      const q = { sort: DEFAULT_CONNTRACK_SORT, filter, service };
      expect([filter, service, [...conntrackOrder(index, q)]]).toEqual([filter, service, [...conntrackOrder(reference, q)]]);
    }
  }
  return index;
}

/** What the classifier reads of targets: each Service's items as `{ ip, port, protocol }` / `{ port, protocol }` (a view endpoint's `ready` left out). */
function items(targets: Pick<ConntrackTargets, 'services'>) {
  const item = ({ ip, port, protocol }: { readonly ip?: string; readonly port: number; readonly protocol: string }) => (ip === undefined ? { port, protocol } : { ip, port, protocol });
  return targets.services.map((s) => ({ vips: s.vips.map(item), nodePorts: s.nodePorts.map(item), endpoints: s.endpoints.map(item) }));
}

/** A clone of `encoded` as a message to a worker makes it (its buffers transferred). */
function sent(message: { readonly encoded: EncodedConntrackTargets; readonly transfer: ArrayBuffer[] }): EncodedConntrackTargets {
  return structuredClone(message.encoded, { transfer: message.transfer });
}

/**
 * The targets as columns for the parse worker (`conntrackTargetColumns`), sent and decoded: the
 * same items in the same order as {@link conntrackTargets}' objects, the same node addresses,
 * the Services' names in order; classified, the same columns as the pane's reference index.
 */
function expectSameColumns(snapshot: NodeSnapshot, objects: ConntrackTargets, reference: ConntrackIndex): void {
  const columns = conntrackTargetColumns(snapshot);
  expect(columns).toBeDefined();
  expect(columns!.services.map((s) => `${s.namespace}/${s.name}`)).toEqual(objects.services.map((s) => `${s.namespace}/${s.name}`));
  const decoded = decodeConntrackTargets(sent(columns!.message));
  expect(decoded).toBeDefined();
  expect(decoded!.services).toEqual(items(objects));
  expect(decoded!.nodeAddresses).toEqual(objects.nodeAddresses);
  const classified = classifyConntrackRows(conntrackRows(conntrackSource(snapshot).part!.value!), decoded!.services, decoded!.nodeAddresses);
  expect([...classified.serviceOf]).toEqual([...reference.serviceOf]);
  expect([...classified.codeOf]).toEqual([...reference.codeOf]);
  expect(classified.staleCount).toBe(reference.staleCount);
}

describe('conntrack targets as columns for the parse worker', () => {
  const svc = (name: string, vips: ServiceFrontends['vips'], nodePorts: ServiceFrontends['nodePorts'], endpoints: ServiceFrontends['endpoints']): ServiceFrontends => ({ namespace: 'ns', name, vips, nodePorts, endpoints });
  const odd: ConntrackTargets = {
    services: [
      svc('empty', [], [], []),
      svc('a', [{ ip: '10.96.0.1', port: 80, protocol: 'TCP' }, { ip: '10.96.0.1', port: 443, protocol: 'TCP' }, { ip: 'fd00::1', port: 53, protocol: 'UDP' }], [{ port: 30080, protocol: 'TCP' }], [{ ip: '10.244.0.5', port: 8080, protocol: 'TCP' }]),
      svc('odd', [{ ip: 'é\ud800x', port: 0, protocol: 'SCTP' }, { ip: '', port: -0, protocol: 'ICMP' as never }], [{ port: 1e10, protocol: 'UDP' }, { port: Number.NaN, protocol: 'TCP' }], [{ ip: 'x'.repeat(10_000), port: 65535, protocol: 'TCP' }, { ip: '10.244.0.5', port: 8080, protocol: 'TCP' }, { ip: '10.244.0.6', port: 8080, protocol: 'TCP' }, { ip: '10.244.0.5', port: 8080, protocol: 'TCP' }]),
      svc('b', [{ ip: '10.96.0.1', port: 80, protocol: 'TCP' }], [], []),
    ],
    nodeAddresses: ['192.168.0.10', 'fd00::10', '\udc00'],
  };

  it('encode then decode gives every item back exactly: names left out, any text (non-ASCII, a lone surrogate, 10,000 characters, empty), any number, any protocol', () => {
    const message = encodeConntrackTargets(odd)!;
    expect(message).toBeDefined();
    const back = decodeConntrackTargets(sent(message))!;
    expect(back.services).toEqual(items(odd));
    expect(Object.is(back.services[2]!.vips[1]!.port, -0)).toBe(true);
    expect(back.nodeAddresses).toEqual(odd.nodeAddresses);
    expect(decodeConntrackTargets(encodeConntrackTargets({ services: [], nodeAddresses: [] })!.encoded)).toEqual({ services: [], nodeAddresses: [] });
  });

  it('encode refuses what the columns do not hold (the sender then sends the objects): a port not a number, an address not a string, a 256th protocol', () => {
    const bad = (s: ServiceFrontends): ConntrackTargets => ({ services: [odd.services[1]!, s], nodeAddresses: [] });
    expect(encodeConntrackTargets(bad(svc('p', [{ ip: '10.0.0.1', port: '80' as never, protocol: 'TCP' }], [], [])))).toBeUndefined();
    expect(encodeConntrackTargets(bad(svc('n', [], [{ port: undefined as never, protocol: 'TCP' }], [])))).toBeUndefined();
    expect(encodeConntrackTargets(bad(svc('i', [], [], [{ ip: 167772161 as never, port: 80, protocol: 'TCP' }])))).toBeUndefined();
    expect(encodeConntrackTargets(bad(svc('q', [], [], [{ ip: '10.0.0.1', port: 80, protocol: null as never }])))).toBeUndefined();
    expect(encodeConntrackTargets({ services: [], nodeAddresses: [7 as never] })).toBeUndefined();
    const protocols = (n: number) => svc('many', [], Array.from({ length: n }, (_, i) => ({ port: i, protocol: `P${i}` as never })), []);
    expect(decodeConntrackTargets(encodeConntrackTargets({ services: [protocols(255)], nodeAddresses: [] })!.encoded)!.services).toEqual(items({ services: [protocols(255)] }));
    expect(encodeConntrackTargets({ services: [protocols(256)], nodeAddresses: [] })).toBeUndefined();
  });

  it('decode refuses an encoding that does not add up', () => {
    const good = encodeConntrackTargets(odd)!.encoded;
    const edit = (change: Partial<EncodedConntrackTargets>) => decodeConntrackTargets({ ...good, ...change });
    expect(edit({})).toBeDefined();
    const counts = good.counts.slice();
    counts[3 * 3 + 2] = 5;
    expect(edit({ counts })).toBeUndefined();
    expect(edit({ counts: good.counts.slice(0, 4) })).toBeUndefined();
    expect(edit({ counts: good.counts.slice(0, 9) })).toBeUndefined();
    const ipOf = good.ipOf.slice();
    ipOf[0] = good.textEnds.length;
    expect(edit({ ipOf })).toBeUndefined();
    const protocols = good.protocols.slice();
    protocols[0] = good.protocolNames.length;
    expect(edit({ protocols })).toBeUndefined();
    expect(edit({ chars: good.chars.slice(0, 5) })).toBeUndefined();
    expect(edit({ nodeAddressCount: good.textEnds.length + 1 })).toBeUndefined();
    expect(edit({ ports: good.ports.slice(1) })).toBeUndefined();
  });

  it('conntrackTargetColumns is undefined for API objects whose ports the columns do not hold (the worker then gets the objects)', async () => {
    const snapshot = await snapshotOf('lab-nftables');
    const api = snapshot.api!.value!;
    const services = api.services.map((s, i) => (i === 0 ? { ...s, ports: s.ports.map((p) => ({ ...p, port: String(p.port) as never })) } : s));
    const edited = { ...snapshot, api: { ...snapshot.api!, value: { ...api, services } } };
    expect(conntrackTargetColumns(edited)).toBeUndefined();
    expect(conntrackTargetColumns(snapshot)).toBeDefined();
    expect(conntrackTargetColumns({ ...snapshot, api: null })!.services).toEqual([]);
  });
});

describe('conntrack targets read straight from the API objects', () => {
  it.each(['lab-iptables', 'lab-nftables', 'lab-cilium'])('give the index of the Services view on the lab capture %s', async (name) => {
    const snapshot = await snapshotOf(name);
    expect(classificationTargets(snapshot.api!.value!)).toBeDefined();
    const index = expectSameIndex(snapshot);
    expect([...index.serviceOf].some((s) => s >= 0)).toBe(true);
  });

  it.each(['lab-iptables', 'lab-nftables'])('give it on %s with a kube-dns endpoint moved (stale entries)', async (name) => {
    const index = expectSameIndex(await snapshotWithMovedDnsEndpoint(name));
    expect(index.staleCount).toBeGreaterThan(0);
  });

  it.each(['iptables', 'nftables', 'cilium'] as const)('give it on a generated %s capture (400 Services × 3, 8,000 flows)', { timeout: 120_000 }, async (mode: GenMode) => {
    const world = generateWorld({ services: 400, endpoints: 3, seed: `targets-${mode}`, modes: [mode], conntrack: 8000 });
    const dir = mkdtempSync(path.join(tmpdir(), 'ct-targets-'));
    dirs.push(dir);
    writeModeBundle(world, mode, dir);
    const snapshot = await snapshotOfDir(dir);
    expect(classificationTargets(snapshot.api!.value!)).toBeDefined();
    const index = expectSameIndex(snapshot);
    expect(index.services.length).toBeGreaterThanOrEqual(400);
    expect([...index.codeOf].some((c) => c !== 0)).toBe(true);
  });

  it('give it on a lab capture with IPv6, two Services on one VIP, ExternalName, FQDN, unnumbered and unmatched ports', async () => {
    const snapshot = await editedLab(false);
    expect(classificationTargets(snapshot.api!.value!)).toBeDefined();
    const index = expectSameIndex(snapshot);
    const labels = index.services.map((s) => s.label);
    // web-shadow holds web's VIP and port: web comes first and wins every entry; the IPv6 entries reach v6web.
    const shadow = labels.indexOf('default/web-shadow');
    expect(shadow).toBeGreaterThan(labels.indexOf('default/web'));
    expect([...index.serviceOf]).not.toContain(shadow);
    expect([...index.serviceOf]).toContain(labels.indexOf('default/web'));
    const v6 = labels.indexOf('default/v6web');
    expect(v6).toBeGreaterThanOrEqual(0);
    expect([...index.serviceOf].filter((s) => s === v6).length).toBeGreaterThanOrEqual(3);
  });

  it('use the Services view when an address is spelled in a way its keys merge (leading zeros, IPv6 not canonical)', async () => {
    const snapshot = await editedLab(true);
    expect(classificationTargets(snapshot.api!.value!)).toBeUndefined();
    expect(conntrackTargets(snapshot)).toStrictEqual(conntrackTargetsViaView(snapshot));
    expectSameIndex(snapshot);
  });

  it('take as plain only the one spelling of an address', () => {
    for (const a of ['10.96.0.1', '0.0.0.0', '255.255.255.255', 'fd00::a', '::1', '2001:db8::1']) expect([a, isPlainAddress(a)]).toEqual([a, true]);
    for (const a of ['010.96.0.1', '10.96.0.01', '256.1.1.1', '10.96.0', '10.96.0.1.', '1.2.3.4 ', 'fd00:0::a', 'FD00::A', 'fd00:0000::a', 'not-an-ip', '', '1.2.3.x'])
      expect([a, isPlainAddress(a)]).toEqual([a, false]);
  });
});

interface Item {
  kind: string;
  metadata: { name: string; namespace: string; uid?: string; labels?: Record<string, string> };
  [key: string]: unknown;
}

/**
 * lab-iptables with Services and slices added (an IPv6 NodePort Service with its address in two
 * slices, `default/web-shadow` on web's VIP, an ExternalName and a LoadBalancer Service with
 * slices, an FQDN slice, slice ports unnumbered or named for no Service port) and IPv6 conntrack
 * entries for it (compressed and /proc spellings, a stale one). With `oddSpelling`, one endpoint
 * address has a leading zero and the IPv6 VIP is written long.
 */
async function editedLab(oddSpelling: boolean): Promise<NodeSnapshot> {
  const dir = copyFixture('lab-iptables');
  dirs.push(dir);
  const file = path.join(dir, 'api.json');
  const list = JSON.parse(readFileSync(file, 'utf8')) as { items: Item[] };
  const web = list.items.find((i) => i.kind === 'Service' && i.metadata.name === 'web')!;
  const svc = (name: string, spec: Record<string, unknown>, status: Record<string, unknown> = { loadBalancer: {} }): Item => ({
    apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: 'default', uid: `uid-${name}` }, spec: { sessionAffinity: 'None', ...spec }, status,
  });
  const slice = (name: string, service: string, addressType: string, ports: unknown[], addresses: string[][], ready = true): Item => ({
    apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', addressType, ports,
    metadata: { name, namespace: 'default', labels: { 'kubernetes.io/service-name': service } },
    endpoints: addresses.map((a) => ({ addresses: a, conditions: { ready, serving: ready, terminating: false } })),
  });
  const http = (port: number) => ({ name: 'http', port, protocol: 'TCP' });
  const v6vip = oddSpelling ? 'fd00:0096:0000:0000:0000:0000:0000:000a' : 'fd00:96::a';
  list.items.push(
    svc('v6web', { type: 'NodePort', clusterIP: v6vip, clusterIPs: [v6vip], ipFamilies: ['IPv6'], ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8080, nodePort: 30081 }] }),
    slice('v6web-a', 'v6web', 'IPv6', [http(8080), { name: 'metrics', port: 9090, protocol: 'TCP' }, { name: 'http', port: null, protocol: 'TCP' }], [['fd00:244::5'], ['fd00:244::6']]),
    slice('v6web-b', 'v6web', 'IPv6', [http(8080)], [['fd00:244::5']], false),
    { ...web, metadata: { ...web.metadata, name: 'web-shadow', uid: 'uid-web-shadow' } },
    svc('ext', { type: 'ExternalName', externalName: 'example.com', ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 80 }] }),
    slice('ext-a', 'ext', 'IPv4', [http(80)], [[oddSpelling ? '010.244.0.40' : '10.244.0.40']]),
    slice('ext-fqdn', 'ext', 'FQDN', [http(80)], [['example.com']]),
    svc('lb', { type: 'LoadBalancer', clusterIP: '10.96.50.1', clusterIPs: ['10.96.50.1'], externalIPs: ['192.0.2.7'], ports: [{ name: '', port: 443, protocol: 'TCP', targetPort: 8443, nodePort: 31443 }, { name: 'dns', port: 53, protocol: 'UDP', targetPort: 53 }] },
      { loadBalancer: { ingress: [{ ip: '198.51.100.9' }, { hostname: 'lb.example.com' }] } }),
    slice('lb-a', 'lb', 'IPv4', [{ port: 8443, protocol: 'TCP' }, { name: 'dns', port: 5353, protocol: 'UDP' }], [['10.244.0.50', '10.244.0.51']]),
  );
  writeFileSync(file, JSON.stringify(list));
  const ct = path.join(dir, 'probes', 'conntrack.stdout');
  const v6 = (orig: string, reply: string) => `ipv6     10 tcp      6 118 TIME_WAIT ${orig} packets=5 bytes=369 ${reply} packets=5 bytes=477 [ASSURED] mark=0 use=1`;
  const extra = [
    v6('src=fd00:244::9 dst=fd00:96::a sport=40000 dport=80', 'src=fd00:244::5 dst=fd00:244::9 sport=8080 dport=40000'),
    v6('src=fd00:0244:0000:0000:0000:0000:0000:0009 dst=fd00:0096:0000:0000:0000:0000:0000:000a sport=40001 dport=80', 'src=fd00:0244:0000:0000:0000:0000:0000:0006 dst=fd00:0244:0000:0000:0000:0000:0000:0009 sport=8080 dport=40001'),
    v6('src=fd00:244::9 dst=fd00:96::a sport=40002 dport=80', 'src=fd00:244::77 dst=fd00:244::9 sport=8080 dport=40002'),
    'ipv4     2 tcp      6 118 TIME_WAIT src=10.244.0.9 dst=192.0.2.7 sport=40003 dport=443 src=10.244.0.51 dst=10.244.0.9 sport=8443 dport=40003 [ASSURED] mark=0 use=1',
    'ipv4     2 tcp      6 118 TIME_WAIT src=10.244.0.9 dst=198.51.100.9 sport=40004 dport=443 src=10.244.0.99 dst=10.244.0.9 sport=8443 dport=40004 [ASSURED] mark=0 use=1',
    'ipv4     2 udp      17 20 src=10.244.0.9 dst=10.96.50.1 sport=40005 dport=53 src=10.244.0.50 dst=10.244.0.9 sport=5353 dport=40005 mark=0 use=1',
    'ipv4     2 tcp      6 118 TIME_WAIT src=10.244.0.9 dst=10.244.0.40 sport=40006 dport=80 src=10.244.0.40 dst=10.244.0.9 sport=80 dport=40006 [ASSURED] mark=0 use=1',
  ];
  writeFileSync(ct, `${readFileSync(ct, 'utf8').trimEnd()}\n${extra.join('\n')}\n`);
  return snapshotOfDir(dir);
}
