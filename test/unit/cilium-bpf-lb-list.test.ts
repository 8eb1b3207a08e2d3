import { describe, expect, it } from 'vitest';
import { bpfLbListView, formatCiliumBpfLbList, parseCiliumBpfLbList } from '../../src/parsers/cilium-bpf-lb-list.js';
import { CILIUM_TABWRITER, tabwrite } from '../../src/parsers/cilium-tabwriter.js';
import { SVC_FLAG } from '../../src/model/cilium.js';
import { makeBackend, makeService, makeSlot, makeTable } from './cilium-builders.js';
import { labCiliumTable } from '../lab/cilium-scenario.js';

/** Rows the way TablePrinter writes them: first row `key\tentry\t`, more entries `\tentry\t`. */
const listing = (header: string, groups: [string, string[]][]) =>
  tabwrite(`SERVICE ADDRESS\t${header}\n${groups.flatMap(([k, es]) => es.map((e, i) => `${i === 0 ? k : ''}\t${e}\t\n`)).join('')}`, CILIUM_TABWRITER);

describe('parseCiliumBpfLbList', () => {
  it('1.15+ rows: one row per slot, key with /PROTO and (slot), slots re-sorted', () => {
    const text = listing('BACKEND ADDRESS (REVNAT_ID) (SLOT)', [
      ['10.96.0.10:53/UDP (2)', ['10.244.0.3:53/UDP (5) (2)']],
      ['10.96.0.10:53/UDP (0)', ['0.0.0.0:0 (5) (0) [ClusterIP, non-routable] ']],
      ['10.96.0.10:53/UDP (1)', ['10.244.0.2:53/UDP (5) (1)']],
    ]);
    const r = parseCiliumBpfLbList(text, 't');
    expect(r.diagnostics).toEqual([]);
    expect(r.value.services).toHaveLength(1);
    expect(r.value.services[0]).toMatchObject({ id: 5, type: 'ClusterIP', flags: 0, frontend: { ip: '10.96.0.10', port: 53, protocol: 'UDP' } });
    expect(r.value.services[0]?.slots.map((s) => [s.slot, s.backend?.ip, s.backend?.protocol])).toEqual([
      [1, '10.244.0.2', 'UDP'],
      [2, '10.244.0.3', 'UDP'],
    ]);
  });

  it('≤1.11 rows without slot numbers keep listing order and read the flags', () => {
    const text = listing('BACKEND ADDRESS', [['10.96.0.1:443', ['0.0.0.0:0 (1) [ClusterIP]', '192.168.49.2:8443 (1)']]]);
    const r = parseCiliumBpfLbList(text, 't');
    expect(r.diagnostics).toEqual([]);
    expect(r.value.services[0]).toMatchObject({ id: 1, type: 'ClusterIP', flags: SVC_FLAG.routable, slots: [{ slot: null, backend: { ip: '192.168.49.2', port: 8443, protocol: null } }] });
  });

  it('internal scope, cluster ids, L7 proxy port and missing backends', () => {
    const text = listing('BACKEND ADDRESS (REVNAT_ID) (SLOT)', [
      ['10.96.0.20:80/TCP/i (0)', ['0.0.0.0:0 (9) (0) [ClusterIP, InternalLocal, non-routable, l7-load-balancer] (L7LB Proxy Port: 15001)']],
      ['10.96.0.20:80/TCP/i (1)', ['10.244.3.4@2:8080/TCP (9) (1)']],
      ['10.96.0.20:80/TCP/i (2)', ['backend 77 not found']],
    ]);
    const svc = parseCiliumBpfLbList(text, 't').value.services[0];
    expect(svc).toMatchObject({ frontend: { scope: 'internal' }, l7ProxyPort: 15001, flags: SVC_FLAG.intLocalScope | SVC_FLAG.l7LoadBalancer });
    expect(svc?.slots).toEqual([makeSlot(1, null, { backendId: null, flags: null, backend: expect.objectContaining({ ip: '10.244.3.4', clusterId: 2 }) }), makeSlot(2, null, { backendId: 77, flags: null })]);
  });

  it('-o json: {"key (slot)": ["entry"]}', () => {
    const json = JSON.stringify({ '10.96.40.7:443/TCP (0)': ['0.0.0.0:0 (4) (0) [ClusterIP, non-routable] '], '10.96.40.7:443/TCP (1)': ['10.244.0.52:8443/TCP (4) (1)'] });
    const r = parseCiliumBpfLbList(json, 't');
    expect(r.diagnostics).toEqual([]);
    expect(r.value.source).toBe('bpf-lb-list-json');
    expect(r.value.services[0]?.slots[0]?.backend).toMatchObject({ ip: '10.244.0.52', port: 8443 });
  });

  it('reports what it cannot read, keeps the rest, and skips the kubectl notice', () => {
    const good = listing('BACKEND ADDRESS (REVNAT_ID) (SLOT)', [['10.96.40.7:443/TCP (0)', ['0.0.0.0:0 (4) (0) [ClusterIP, non-routable] ']]]);
    const text = `Defaulted container "cilium-agent" out of: cilium-agent, config (init)\n${good}garbage line here\n10.96.40.7:443/TCP (1)   10.244.0.52:8443/TCP (5) (2)\n   orphan?\n10.96.9.9:80/TCP (1)   10.244.0.9:80/TCP (6) (1)\n`;
    const r = parseCiliumBpfLbList(text, 't');
    expect(r.value.services.map((s) => s.id)).toEqual([4, 6]);
    expect(r.diagnostics.map((d) => [d.code, d.line])).toEqual([
      ['unknown-line', 4],
      ['unknown-entry', 6],
      ['slot-mismatch', 5],
      ['revnat-mismatch', 5],
      ['missing-frontend-slot', 7],
    ]);
  });

  it('a continuation row before any key is an error', () => {
    expect(parseCiliumBpfLbList('        10.0.0.1:80 (1) (1)\n', 't').diagnostics[0]?.code).toBe('orphan-row');
  });
});

describe('formatCiliumBpfLbList', () => {
  it('prints the 1.15+ layout: header, sorted rows, slot-0 trailing space, tabwriter padding', () => {
    const be = makeBackend({ id: 3, ip: '10.244.0.2', port: 53, protocol: 'UDP' });
    const text = formatCiliumBpfLbList(makeTable([makeService({ id: 5, frontend: { ip: '10.96.0.10', port: 53, protocol: 'UDP', scope: 'external' } }, [be])]));
    const lines = text.split('\n');
    expect(lines[0]).toBe('SERVICE ADDRESS         BACKEND ADDRESS (REVNAT_ID) (SLOT)');
    expect(lines[1]).toBe(`10.96.0.10:53/UDP (0)   ${'0.0.0.0:0 (5) (0) [ClusterIP, non-routable] '.padEnd(47)}`);
    expect(lines[2]).toBe(`10.96.0.10:53/UDP (1)   ${'10.244.0.2:53/UDP (5) (1)'.padEnd(47)}`);
    expect(lines[3]).toBe('');
  });

  it('brackets IPv6 backends of IPv6 services and keeps @cluster', () => {
    const be = makeBackend({ id: 1, ip: 'fd00:10:244:1::247e', port: 80, clusterId: 3 });
    const text = formatCiliumBpfLbList(makeTable([makeService({ frontend: { ip: 'fd00:10:96::b050', port: 80, protocol: 'TCP', scope: 'external' } }, [be])]));
    expect(text).toContain('[fd00:10:96::b050]:80/TCP (1)   [fd00:10:244:1::247e@3]:80/TCP (1) (1)');
    expect(text).toContain('[::]:0 (1) (0) [ClusterIP, non-routable]');
  });

  it('parse(format(x)) equals the listing view of x', () => {
    const tables = [
      labCiliumTable(),
      makeTable([
        makeService({ id: 2, flags: SVC_FLAG.nodePort | SVC_FLAG.routable | SVC_FLAG.extLocalScope, type: 'NodePort', frontend: { ip: '192.168.49.2', port: 30080, protocol: 'TCP', scope: 'internal' } }, [makeBackend({ id: 9, clusterId: 4 })]),
        makeService({ id: 3, l7ProxyPort: 15001, flags: SVC_FLAG.l7LoadBalancer | SVC_FLAG.routable, frontend: { ip: 'fd00::1', port: 443, protocol: 'TCP', scope: 'external' } }, [makeBackend({ id: 10, ip: 'fd00::10', port: 8443 })]),
      ]),
    ];
    for (const t of tables) {
      const r = parseCiliumBpfLbList(formatCiliumBpfLbList(t), 'formatted');
      expect(r.diagnostics).toEqual([]);
      expect(r.value.services).toEqual(bpfLbListView(t).services.map((s) => ({ ...s, raw: expect.any(String) })));
    }
  });
});
