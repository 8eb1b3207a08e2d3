import { describe, expect, it } from 'vitest';
import { formatCiliumServiceList, parseCiliumServiceList } from '../../src/parsers/cilium-service-list.js';
import { CILIUM_TABWRITER, tabwrite } from '../../src/parsers/cilium-tabwriter.js';
import type { LbTable } from '../../src/model/cilium.js';
import { makeBackend, makeService, makeTable } from './cilium-builders.js';
import { labCiliumTable } from '../lab/cilium-scenario.js';

/** What the service list shows of a table: id, frontend, type, backends in order with state. */
const view = (t: LbTable) =>
  t.services.map((s) => ({
    id: s.id,
    frontend: s.frontend,
    type: s.type,
    backends: s.slots.map((sl) => sl.backend && { ip: sl.backend.ip, port: sl.backend.port, protocol: sl.backend.protocol, state: sl.backend.state, clusterId: sl.backend.clusterId }),
  }));

const sortById = <T extends { id: number | null }>(xs: T[]) => [...xs].sort((a, b) => (a.id ?? 0) - (b.id ?? 0));

/** A `-o json` document as the agent's API models serialize it. */
function serviceJson(o: { id: number; ip: string; port: number; protocol?: string; type?: string; backends?: object[]; realized?: boolean }) {
  const spec = { id: o.id, 'frontend-address': { ip: o.ip, port: o.port, ...(o.protocol ? { protocol: o.protocol } : {}), scope: 'external' }, 'backend-addresses': o.backends ?? [], flags: { type: o.type ?? 'ClusterIP', name: 'web', namespace: 'default' } };
  return o.realized === false ? { spec } : { spec: { ...spec, id: 0 }, status: { realized: spec } };
}

describe('cilium-dbg service list text', () => {
  it('parse(format(x)) keeps ids, frontends, types and backends with states (workshop scenario)', () => {
    const table = labCiliumTable();
    const r = parseCiliumServiceList(formatCiliumServiceList(table), 'formatted');
    expect(r.diagnostics).toEqual([]);
    expect(view(r.value)).toEqual(sortById(view(table)));
  });

  it('prints the terminating backend and an empty Backend cell', () => {
    const text = formatCiliumServiceList(labCiliumTable());
    expect(text.split('\n')[0]).toBe('ID   Frontend                 Service Type   Backend                                   ');
    expect(text).toContain('3 => 10.244.1.15:8080/TCP (terminating)');
    expect(text).toMatch(/^7 {4}10\.96\.50\.5:80\/TCP {8}ClusterIP {6} {42}$/m);
  });

  it('reads the ≤1.6 columns (no type, backends without state)', () => {
    const text = tabwrite('ID\tFrontend\tBackend\t\n1\t10.96.0.1:443\t1 => 192.168.49.2:8443\t\n\t\t2 => 192.168.49.3:8443\t\n', CILIUM_TABWRITER);
    const r = parseCiliumServiceList(text, 't');
    expect(r.diagnostics).toEqual([]);
    expect(view(r.value)).toEqual([
      {
        id: 1,
        frontend: { ip: '10.96.0.1', port: 443, protocol: null, scope: 'external' },
        type: null,
        backends: [
          { ip: '192.168.49.2', port: 8443, protocol: null, state: null, clusterId: 0 },
          { ip: '192.168.49.3', port: 8443, protocol: null, state: null, clusterId: 0 },
        ],
      },
    ]);
  });

  it('reads remote (ClusterMesh) services, preferred backends and internal scope', () => {
    const text = tabwrite('ID\tFrontend\tService Type\tBackend\t\n3\t10.96.0.7:80/TCP/i\tClusterIP (Remote)\t1 => 10.245.0.9@2:80/TCP (active) (preferred)\t\n', CILIUM_TABWRITER);
    const r = parseCiliumServiceList(text, 't');
    expect(r.diagnostics).toEqual([]);
    expect(view(r.value)[0]).toMatchObject({ type: 'ClusterIP', frontend: { scope: 'internal' }, backends: [{ ip: '10.245.0.9', clusterId: 2, state: 'active' }] });
  });

  it('diagnoses rows it cannot read and keeps the others', () => {
    const good = formatCiliumServiceList(makeTable([makeService({ id: 1 }, [makeBackend()])]));
    const backendCol = ' '.repeat(good.indexOf('Backend'));
    const text = `10.0.0.1 before header\n${good}${backendCol}2 => nonsense (active)\nx    not-an-address    ClusterIP\n${backendCol}2 => 10.0.0.1:80/TCP (active)\n`;
    const r = parseCiliumServiceList(text, 't');
    expect(r.value.services).toHaveLength(1);
    expect(r.value.services[0]?.slots).toHaveLength(1);
    expect(r.diagnostics.map((d) => [d.code, d.line])).toEqual([
      ['no-header', 1],
      ['bad-backend', 4],
      ['bad-row', 5],
      ['orphan-row', 6],
    ]);
  });
});

describe('cilium-dbg service list -o json', () => {
  it('prefers status.realized, reads backend state/weight/zone/nodeName and the k8s name', () => {
    const doc = [
      serviceJson({
        id: 10,
        ip: '10.96.12.34',
        port: 80,
        protocol: 'TCP',
        backends: [{ ip: '10.244.1.15', port: 8080, protocol: 'TCP', state: 'terminating', weight: 100, zone: 'zone-a', nodeName: 'lab-node' }],
      }),
    ];
    const r = parseCiliumServiceList(JSON.stringify(doc, null, 2), 't');
    expect(r.diagnostics).toEqual([]);
    expect(r.value.services[0]).toMatchObject({ id: 10, name: 'default/web', type: 'ClusterIP', frontend: { protocol: 'TCP' } });
    expect(r.value.services[0]?.slots[0]?.backend).toEqual(makeBackend({ id: null, ip: '10.244.1.15', state: 'terminating', weight: 100, zone: 'zone-a', nodeName: 'lab-node' }));
  });

  it('older agents: spec only, no frontend protocol, lower-case protocol names', () => {
    const doc = [serviceJson({ id: 4, ip: '10.96.0.10', port: 53, realized: false, backends: [{ ip: '10.244.0.2', port: 53 }] }), serviceJson({ id: 5, ip: '10.96.0.10', port: 53, protocol: 'udp' })];
    const r = parseCiliumServiceList(JSON.stringify(doc), 't');
    expect(r.value.services.map((s) => [s.id, s.frontend.protocol, s.slots[0]?.backend?.state ?? null])).toEqual([
      [4, null, null],
      [5, 'UDP', null],
    ]);
  });

  it('reports a service without a usable frontend and non-array documents', () => {
    expect(parseCiliumServiceList('[{"spec":{"frontend-address":{"ip":""}}}]', 't').diagnostics[0]?.code).toBe('bad-service');
    expect(parseCiliumServiceList('[{', 't').diagnostics[0]?.code).toBe('invalid-json');
  });
});
