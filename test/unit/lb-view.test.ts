/**
 * The LB pane's rows (`buildLbView`) and `show lb`, on the Cilium lab capture
 * (fixtures/lab-cilium, made with `--bpf-root` and replayed without it), on a copy whose
 * backend map dump has an unknown value size, and on small snapshots built here.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildLbView, foldMapNames, lbConditionsText, lbFrontendIndexForService, type LbView } from '../../src/analysis/lb-view.js';
import type { LbService, LbTable } from '../../src/model/cilium.js';
import { formatFrontend, SVC_FLAG } from '../../src/model/cilium.js';
import type { CiliumStatus } from '../../src/model/cilium.js';
import type { NodeSnapshot, Parsed, ProbeSummary } from '../../src/model/snapshot.js';
import { parseK8sObjects } from '../../src/parsers/k8s-objects.js';
import { showLb } from '../../src/report/lb.js';
import { apiObjectsText } from '../lab/api-objects.js';
import { LAB_CILIUM_SCENARIO, LAB_CILIUM_SERVICES, labCiliumTable } from '../lab/cilium-scenario.js';
import { copyFixture, snapshotOf, snapshotOfDir } from '../helpers/fixtures.js';

const parsed = <T>(value: T | null, overrides: Partial<Parsed<T>> = {}): Parsed<T> => ({ value, diagnostics: [], probe: null, error: null, ...overrides });

/** A snapshot with only what the LB view reads: the LB table, API objects, probes, cilium-dbg status. */
function makeSnapshot(overrides: Partial<NodeSnapshot> = {}): NodeSnapshot {
  return {
    meta: { node: 'lab-node', kernel: null, source: { kind: 'replay', label: 'test', live: false }, capturedAt: '2026-01-12T09:00:00Z', toolVersions: {} },
    probes: [],
    addrs: null,
    routes: null,
    iptables: null,
    ip6tables: null,
    iptablesLegacy: null,
    nft: null,
    conntrack: null,
    conntrackMax: null,
    conntrackCount: null,
    ipvs: null,
    ipset: null,
    api: parsed(parseK8sObjects(apiObjectsText(LAB_CILIUM_SCENARIO), 'api.json').value),
    lb: parsed<LbTable>({ ...labCiliumTable(), services: labCiliumTable().services.map((s) => ({ ...s, name: null })) }),
    lbMapsRead: ['cilium_lb4_services_v2', 'cilium_lb4_backends_v3'],
    ciliumStatus: null,
    ...overrides,
  };
}

function makeProbe(overrides: Partial<ProbeSummary> = {}): ProbeSummary {
  return { id: 'bpf-lb4-services', argv: ['bpftool', '-j', 'map', 'dump', 'pinned', '/sys/fs/bpf/tc/globals/cilium_lb4_services_v2'], status: 'ok', exitCode: 0, startedAt: '2026-01-12T09:00:00Z', durationMs: 5, stderrTail: '', optional: true, ...overrides };
}

/** `frontend → service → slot:address(state)` lines of a view, or of the scenario's table. */
const pairs = (view: LbView) => view.frontends.map((f) => `${f.address} ${f.service ? `${f.service.namespace}/${f.service.name}` : '-'} #${f.revNatId} → ${f.backends.map((b) => `${b.slot}:${b.address}(${b.state})`).join(' ')}`);
const scenarioPairs = (table: LbTable) =>
  table.services.map((s) => `${formatFrontend(s.frontend)} ${s.name} #${s.id} → ${s.slots.map((sl) => `${sl.slot}:${sl.backend?.ip}:${sl.backend?.port}(${sl.backend?.state})`).join(' ')}`);

const find = (view: LbView, address: string) => view.frontends.find((f) => f.address === address);

describe('buildLbView on the Cilium lab capture', async () => {
  const view = buildLbView(await snapshotOf('lab-cilium'));

  it('replays the maps captured under the lab bpffs without --bpf-root, from the maps, with cilium-agent not reached', () => {
    expect(view.status).toBe('ready');
    expect(view.source).toEqual({
      kind: 'bpf-maps',
      maps: ['cilium_lb4_services_v2', 'cilium_lb4_backends_v3', 'cilium_lb4_reverse_nat', 'cilium_lb6_services_v2', 'cilium_lb6_backends_v3', 'cilium_lb6_reverse_nat'],
      probe: 'bpf-lb4-services',
      agent: 'not-asked',
      agentDetail: null,
    });
    expect(view.undecoded).toEqual([]);
    expect(view.diagnostics).toEqual([]);
  });

  it('shows every frontend → backend pair the lab wrote, with the Service the API objects name', () => {
    expect([...pairs(view)].sort()).toEqual(scenarioPairs(labCiliumTable()).sort());
    expect(view.total).toBe(LAB_CILIUM_SERVICES.length + 2); // web's NodePort adds 0.0.0.0 and the node IP
  });

  it('marks the terminating backend as held for existing connections, on lab-node2, with its EndpointSlice conditions', () => {
    const web = find(view, '10.96.12.34:80/TCP');
    expect(web).toMatchObject({ type: 'ClusterIP', flags: 'ClusterIP, non-routable', count: 2, qcount: 1, service: { namespace: 'default', name: 'web', portName: 'http' } });
    expect(web?.backends.map((b) => [b.address, b.state, b.newConnections, b.nodeName, b.onNode, lbConditionsText(b)])).toEqual([
      ['10.244.0.23:8080', 'active', true, 'lab-node', true, 'ready serving'],
      ['10.244.0.31:8080', 'active', true, 'lab-node', true, 'ready serving'],
      ['10.244.1.15:8080', 'terminating', false, 'lab-node2', false, '!ready serving terminating'],
    ]);
  });

  it('joins NodePort frontends (wildcard and node address) to their Service by nodePort', () => {
    expect(find(view, '0.0.0.0:30080/TCP')).toMatchObject({ flags: 'NodePort, non-routable', service: { name: 'web' } });
    expect(find(view, '192.168.49.2:30080/TCP')).toMatchObject({ flags: 'NodePort', service: { name: 'web' } });
    expect(find(view, '10.96.50.5:80/TCP')).toMatchObject({ service: { name: 'empty' }, count: 0, backends: [] });
  });

  it('finds the frontend to open for a Service: its ClusterIP one', () => {
    const at = (ns: string, name: string) => view.frontends[lbFrontendIndexForService(view, ns, name)]?.address;
    expect(at('default', 'web')).toBe('10.96.12.34:80/TCP');
    expect(at('default', 'api')).toBe('10.96.40.7:443/TCP');
    expect(at('kube-system', 'kube-dns')).toBe('10.96.0.10:53/TCP');
    expect(lbFrontendIndexForService(view, 'default', 'web-headless')).toBe(-1);
  });

  it('filters frontends by address, flags, Service or backend address', async () => {
    const snap = await snapshotOf('lab-cilium');
    expect(buildLbView(snap, 'kube-dns').frontends.map((f) => f.address)).toEqual(['10.96.0.10:53/TCP', '10.96.0.10:53/UDP']);
    expect(buildLbView(snap, '10.244.1.15').frontends).toHaveLength(3);
    expect(buildLbView(snap, 'NODEPORT').frontends.map((f) => f.address)).toEqual(['0.0.0.0:30080/TCP', '192.168.49.2:30080/TCP']);
    expect(buildLbView(snap, 'nothing-like-this')).toMatchObject({ total: 7, frontends: [] });
  });
});

describe('buildLbView on damaged and partial input', () => {
  it('keeps a backend map with an unknown value size undecoded with the reason, and its slots as missing backends', async () => {
    const dir = copyFixture('lab-cilium');
    const file = path.join(dir, 'probes', 'bpf-lb4-backends.stdout');
    const entries = JSON.parse(readFileSync(file, 'utf8')) as { key: string[]; value: string[] }[];
    writeFileSync(file, JSON.stringify(entries.map((e) => ({ ...e, value: [...e.value, '0x00', '0x00', '0x00', '0x00'] }))));
    const view = buildLbView(await snapshotOfDir(dir));
    expect(view.undecoded).toHaveLength(1);
    expect(view.undecoded[0]).toMatchObject({ origin: 'bpf-lb4-backends', map: 'cilium_lb4_backends_v3', lines: expect.any(Array) });
    expect(view.undecoded[0]?.lines).toHaveLength(entries.length);
    expect(view.undecoded[0]?.reason).toMatch(/key\/value size 4\/16 bytes matches no known layout of cilium_lb4_backends_v3/);
    const web = find(view, '10.96.12.34:80/TCP');
    expect(web?.backends.map((b) => [b.slot, b.backendId, b.address, b.state])).toEqual([
      [1, 1, null, 'missing'],
      [2, 2, null, 'missing'],
      [3, 3, null, 'missing'],
    ]);
    expect(view.diagnostics.some((d) => d.code === 'missing-backend')).toBe(true);
  });

  it('says what was tried when a node has no Cilium maps', async () => {
    const view = buildLbView(await snapshotOf('lab-iptables'));
    expect(view.status).toBe('absent');
    expect(view.absentReason).toBe('bpftool -j map dump pinned /sys/fs/bpf/tc/globals/cilium_lb4_services_v2: exit code 255');
  });

  it('is loading without a snapshot, absent without any LB probe', () => {
    expect(buildLbView(null).status).toBe('loading');
    expect(buildLbView(makeSnapshot({ lb: null }))).toMatchObject({ status: 'absent', absentReason: 'no Cilium LB probe ran on this source' });
    const failed = makeSnapshot({ lb: null, probes: [makeProbe({ status: 'missing', exitCode: null, argv: ['bpftool', '-j', 'map', 'dump', 'pinned', '/x/cilium_lb4_services_v2'] })] });
    expect(buildLbView(failed).absentReason).toBe('bpftool -j map dump pinned /x/cilium_lb4_services_v2: bpftool not found');
  });

  it('reports cilium-agent as answered or unreachable from the cilium-dbg status part', () => {
    const status = { version: '1.16.3' } as CiliumStatus;
    expect(buildLbView(makeSnapshot({ ciliumStatus: parsed(status) })).source).toMatchObject({ agent: 'answered', agentDetail: '1.16.3' });
    expect(buildLbView(makeSnapshot({ ciliumStatus: parsed<CiliumStatus>(null, { error: 'exit code 1: connection refused' }) })).source).toMatchObject({ agent: 'unreachable', agentDetail: 'exit code 1: connection refused' });
  });

  it('uses the name a listing carries, marks a quarantined slot, and leaves a frontend no Service has unnamed', () => {
    const base = labCiliumTable().services.find((s) => s.frontend.ip === '10.96.12.34')!;
    const listed: LbService = { ...base, name: 'other/named', slots: base.slots.map((s, i) => (i === 1 ? { ...s, flags: (s.flags ?? 0) | SVC_FLAG.quarantined } : s)) };
    const stray: LbService = { ...base, frontend: { ...base.frontend, ip: '10.96.99.99' }, name: null, slots: [] };
    const view = buildLbView(makeSnapshot({ lb: parsed<LbTable>({ ...labCiliumTable(), services: [listed, stray] }) }));
    expect(view.frontends[0]?.service).toEqual({ namespace: 'other', name: 'named', portName: '' });
    expect(view.frontends[0]?.backends.map((b) => b.state)).toEqual(['active', 'quarantined', 'terminating']);
    expect(view.frontends[1]?.service).toBeNull();
  });

  it('folds lb4/lb6 twins of map names', () => {
    expect(foldMapNames(['cilium_lb4_services_v2', 'cilium_lb4_backends_v3', 'cilium_lb6_services_v2'])).toEqual(['cilium_lb{4,6}_services_v2', 'cilium_lb4_backends_v3']);
  });
});

describe('show lb', async () => {
  const snapshot = await snapshotOf('lab-cilium');

  it('prints stable JSON: head, source, frontends with Service and backends', () => {
    const doc = JSON.parse(showLb(snapshot, 'json')) as { mode: string; lb: { status: string; source: { kind: string }; frontends: { address: string; id: number; service: unknown; backends: { address: string; state: string; newConnections: boolean; conditions: unknown }[] }[] } };
    expect(doc.mode).toBe('cilium');
    expect(doc.lb.status).toBe('ready');
    expect(doc.lb.source.kind).toBe('bpf-maps');
    const web = doc.lb.frontends.find((f) => f.address === '10.96.12.34:80/TCP');
    expect(web).toMatchObject({ id: 1, service: { namespace: 'default', name: 'web', portName: 'http' } });
    expect(web?.backends[2]).toEqual({ slot: 3, backendId: 3, address: '10.244.1.15:8080', protocol: 'TCP', state: 'terminating', newConnections: false, nodeName: 'lab-node2', onNode: false, conditions: { ready: false, serving: true, terminating: true } });
    expect(Object.keys(doc.lb)).toEqual(['status', 'absentReason', 'source', 'frontends', 'undecoded', 'diagnostics']);
  });

  it('prints text with one block per frontend', () => {
    const text = showLb(snapshot, 'text');
    expect(text).toContain('mode cilium: Cilium KPR: 0 KUBE- chains');
    expect(text).toContain('source: pinned BPF maps (bpftool): cilium_lb{4,6}_services_v2, cilium_lb{4,6}_backends_v3, cilium_lb{4,6}_reverse_nat; cilium-agent not reached');
    expect(text).toContain('10.96.12.34:80/TCP  [ClusterIP, non-routable]  id 1  count 2 qcount 1  default/web (http)');
    expect(text).toMatch(/\n {3}3 {2}10\.244\.1\.15:8080 +terminating {2}held {2}lab-node2 +!ready serving terminating\n/);
    expect(text).toContain('10.96.50.5:80/TCP  [ClusterIP, non-routable]  id 7  count 0 qcount 0  default/empty\n    (no backends)');
  });

  it('says why there is no table instead of failing', async () => {
    const iptables = await snapshotOf('lab-iptables');
    expect(showLb(iptables, 'text')).toMatch(/no Cilium LB maps on this node \(its Service dataplane is iptables\): bpftool -j map dump pinned \/sys\/fs\/bpf\/tc\/globals\/cilium_lb4_services_v2: exit code 255\n$/);
    expect(JSON.parse(showLb(iptables, 'json'))).toMatchObject({ lb: { status: 'absent', frontends: [] } });
  });
});
