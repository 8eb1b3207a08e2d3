import { describe, expect, it } from 'vitest';
import { parseCiliumStateDbTables } from '../../src/parsers/cilium-statedb.js';
import { parseCiliumMapsDump } from '../../src/parsers/cilium-maps-dump.js';
import { parseCiliumRevNatList } from '../../src/parsers/cilium-revnat-list.js';
import { CILIUM_TABWRITER, tabwrite } from '../../src/parsers/cilium-tabwriter.js';

/** A StateDB table as `db/show` aligns it (tab-separated cells through a tabwriter). */
const table = (rows: string[][]) => tabwrite(rows.map((r) => `${r.join('\t')}\n`).join(''), { minwidth: 0, padding: 3 });

describe('StateDB tables', () => {
  it('backends with several instances, terminating marker and NodeName', () => {
    const text = table([
      ['Address', 'Instances', 'NodeName'],
      ['10.244.1.15:8080/TCP', 'default/web (http) [terminating], default/web-np (http)', 'lab-node'],
      ['10.244.0.23:8080/TCP', 'default/web', ''],
    ]);
    const r = parseCiliumStateDbTables(text, 't');
    expect(r.diagnostics).toEqual([]);
    expect(r.value.backends.map((b) => [b.address.ip, b.instances, b.nodeName])).toEqual([
      [
        '10.244.1.15',
        [
          { service: 'default/web', portName: 'http', terminating: true },
          { service: 'default/web-np', portName: 'http', terminating: false },
        ],
        'lab-node',
      ],
      ['10.244.0.23', [{ service: 'default/web', portName: null, terminating: false }], null],
    ]);
  });

  it('frontends with RedirectTo/Error columns, and bad rows reported by line', () => {
    const text = table([
      ['Address', 'Type', 'ServiceName', 'PortName', 'Backends', 'RedirectTo', 'Status', 'Since', 'Error'],
      ['10.96.12.34:80/TCP', 'ClusterIP', 'default/web', 'http', '10.244.0.23:8080/TCP, 10.244.0.31:8080/TCP', '', 'Done', '2m', ''],
      ['nonsense', 'ClusterIP', 'default/x', '', '', '', 'Error', '1s', 'map full'],
    ]);
    const r = parseCiliumStateDbTables(text, 't');
    expect(r.value.frontends).toHaveLength(1);
    expect(r.value.frontends[0]?.backends.map((b) => b.ip)).toEqual(['10.244.0.23', '10.244.0.31']);
    expect(r.diagnostics.map((d) => [d.code, d.line])).toEqual([['bad-row', 3]]);
  });

  it('a row before any header is reported', () => {
    expect(parseCiliumStateDbTables('10.0.0.1:80/TCP   ClusterIP\n', 't').diagnostics[0]?.code).toBe('no-header');
  });
});

describe('lb/maps-dump lines', () => {
  it('reports unknown fields and placeholder addresses, keeps the rest', () => {
    const text = ['BE: ID=1 ADDR=10.1.0.1:80/TCP STATE=active ZONE=a', 'REV: ID=1 ADDR=<auto>', 'SVC: ID=1 ADDR=10.96.0.1:80/TCP SLOT=0 LBALG=random AFFTimeout=0 COUNT=1 QCOUNT=0 FLAGS=ClusterIP+Local+InternalLocal+non-routable', 'SVC: ID=1 ADDR=10.96.0.1:80/TCP SLOT=1 BEID=1 COUNT=0 QCOUNT=0 FLAGS=ClusterIP+Local+InternalLocal+non-routable', 'what'].join('\n');
    const r = parseCiliumMapsDump(text, 't');
    expect(r.value.services[0]).toMatchObject({ algorithm: 'random', count: 1, type: 'ClusterIP', slots: [{ slot: 1, backendId: 1, backend: { ip: '10.1.0.1' } }] });
    expect(r.diagnostics.map((d) => [d.code, d.line])).toEqual([
      ['unknown-field', 1],
      ['bad-line', 2],
      ['unknown-line', 5],
    ]);
  });
});

describe('reverse-NAT listings', () => {
  it('bpf lb list --revnat', () => {
    const text = tabwrite('ID\tBACKEND ADDRESS (REVNAT_ID) (SLOT)\n5\t10.96.0.10:53\t\n12\t[fd00:10:96::b050]:80\t\n', CILIUM_TABWRITER);
    const r = parseCiliumRevNatList(text, 't');
    expect(r.diagnostics).toEqual([]);
    expect(r.value).toEqual([
      { id: 5, ip: '10.96.0.10', port: 53 },
      { id: 12, ip: 'fd00:10:96::b050', port: 80 },
    ]);
  });

  it('map get rows not in sync are kept and flagged', () => {
    const r = parseCiliumRevNatList('Key   Value             State   Error\n3     10.96.0.1:443     error   entry too big\n', 't');
    expect(r.value).toEqual([{ id: 3, ip: '10.96.0.1', port: 443 }]);
    expect(r.diagnostics[0]).toMatchObject({ code: 'not-synced', line: 2 });
  });
});
