/**
 * Real BPF maps in the kernel: the workshop scenario written with bpftool in Cilium's
 * layouts, dumped back with `bpftool -j map dump pinned …`, decoded, and checked against
 * what the lab wrote — and against the `cilium-dbg bpf lb list` text of the same model.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { labAvailable } from '../helpers/lab.js';
import { createLabCiliumMaps, dumpLabCiliumMap, removeLabCiliumMaps } from './cilium-maps.js';
import type { LabCiliumMaps } from './cilium-maps.js';
import { LAB_CILIUM_SERVICES, LAB_NODE_IP } from './cilium-scenario.js';
import { decodeCiliumLbMaps } from '../../src/parsers/bpftool-lb-decode.js';
import { parseBpftoolMapDump } from '../../src/parsers/bpftool-map-dump.js';
import { bpfLbListView, formatCiliumBpfLbList, parseCiliumBpfLbList } from '../../src/parsers/cilium-bpf-lb-list.js';
import { formatCiliumServiceList, parseCiliumServiceList } from '../../src/parsers/cilium-service-list.js';
import { formatFrontend, kernelMapName } from '../../src/model/cilium.js';
import type { LbTable } from '../../src/model/cilium.js';

const ROOT = '/sys/fs/bpf/nodescope-lab-test/tc/globals';
const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../fixtures/cilium-maps');
const available = labAvailable(['bpftool']);

/** Entries of a dump as sorted `key=value` hex strings (hash maps iterate in seed-dependent order). */
const entrySet = (json: string) =>
  parseBpftoolMapDump(json, 'x')
    .value.entries.map((e) => `${[...(e.key ?? [])]}=${[...(e.value ?? [])]}`)
    .sort();

describe.skipIf(!available)('Cilium LB maps in the kernel', () => {
  let lab: LabCiliumMaps;
  let decoded: { table: LbTable; diagnostics: readonly unknown[] };
  let dumps: { name: string; text: string; origin: string }[];

  beforeAll(() => {
    lab = createLabCiliumMaps({ root: ROOT });
    dumps = lab.maps.map((m) => ({ name: m.path, text: dumpLabCiliumMap(m.path), origin: `bpftool -j map dump pinned ${m.path}` }));
    const r = decodeCiliumLbMaps(dumps);
    decoded = { table: r.value.table, diagnostics: r.diagnostics };
    if (process.env.NODESCOPE_UPDATE_FIXTURES === '1') {
      mkdirSync(FIXTURES, { recursive: true });
      for (const [i, d] of dumps.entries()) writeFileSync(path.join(FIXTURES, `${lab.maps[i]?.name}.json`), d.text);
      writeFileSync(path.join(FIXTURES, 'bpf-lb-list.txt'), formatCiliumBpfLbList(r.value.table));
      writeFileSync(path.join(FIXTURES, 'service-list.txt'), formatCiliumServiceList(r.value.table));
    }
  });

  afterAll(() => {
    removeLabCiliumMaps({ root: ROOT });
  });

  it('pins the full names while the kernel keeps 15 bytes of them', () => {
    expect(lab.maps.map((m) => m.path.split('/').pop())).toEqual(['cilium_lb4_services_v2', 'cilium_lb4_backends_v3', 'cilium_lb4_reverse_nat', 'cilium_lb6_services_v2', 'cilium_lb6_backends_v3', 'cilium_lb6_reverse_nat']);
    for (const m of lab.maps) expect(m.kernelName).toBe(kernelMapName(m.name));
    expect(lab.maps[0]?.kernelName).toBe('cilium_lb4_serv');
  });

  it('decodes every entry without a diagnostic', () => {
    expect(decoded.diagnostics).toEqual([]);
    expect(decoded.table.services.length).toBe(lab.table.services.length);
  });

  it('every frontend → backend pair the lab wrote comes back, in slot order, with states', () => {
    const pairs = (t: LbTable) =>
      t.services
        .map((s) => `${formatFrontend(s.frontend)} #${s.id} ${s.type} count=${s.count} qcount=${s.qcount} → ${s.slots.map((sl) => `${sl.slot}:${sl.backend?.ip}:${sl.backend?.port}/${sl.backend?.protocol}(${sl.backend?.state})`).join(' ')}`)
        .sort();
    expect(pairs(decoded.table)).toEqual(pairs(lab.table));
  });

  it('matches the scenario as stated: web NodePort on 0.0.0.0 and the node IP, terminating third backend, empty service', () => {
    const web = LAB_CILIUM_SERVICES.find((s) => s.name === 'default/web');
    const find = (fe: string) => decoded.table.services.find((s) => formatFrontend(s.frontend) === fe);
    for (const fe of ['10.96.12.34:80/TCP', `0.0.0.0:${web?.nodePort}/TCP`, `${LAB_NODE_IP}:${web?.nodePort}/TCP`]) {
      expect(find(fe)?.slots.map((s) => [s.backend?.ip, s.backend?.state])).toEqual([
        ['10.244.0.23', 'active'],
        ['10.244.0.31', 'active'],
        ['10.244.1.15', 'terminating'],
      ]);
      expect(find(fe)).toMatchObject({ count: 2, qcount: 1 });
    }
    expect(find('0.0.0.0:30080/TCP')?.flags).not.toBe(find(`${LAB_NODE_IP}:30080/TCP`)?.flags); // non-routable vs routable
    expect(find('10.96.0.10:53/UDP')?.slots.map((s) => s.backend?.protocol)).toEqual(['UDP', 'UDP']);
    expect(find('10.96.0.10:53/TCP')?.slots.map((s) => s.backend?.protocol)).toEqual(['TCP', 'TCP']);
    expect(find('10.96.50.5:80/TCP')).toMatchObject({ count: 0, slots: [] });
    expect(decoded.table.revNats.map((r) => `${r.id}=${r.ip}:${r.port}`)).toEqual(lab.table.revNats.map((r) => `${r.id}=${r.ip}:${r.port}`));
  });

  it('the decoded model equals the model parsed from its bpf lb list text', () => {
    const listed = parseCiliumBpfLbList(formatCiliumBpfLbList(decoded.table), 'formatted');
    expect(listed.diagnostics).toEqual([]);
    expect(bpfLbListView(listed.value)).toEqual(bpfLbListView(decoded.table));
  });

  it('the service list text of the decoded maps parses back to the same backends and states', () => {
    const listed = parseCiliumServiceList(formatCiliumServiceList(decoded.table), 'formatted');
    expect(listed.diagnostics).toEqual([]);
    const view = (t: LbTable) => t.services.map((s) => `${s.id} ${formatFrontend(s.frontend)} ${s.slots.map((sl) => `${sl.backend?.ip}(${sl.backend?.state})`).join(',')}`).sort();
    expect(view(listed.value)).toEqual(view(decoded.table));
  });

  it('fixtures/cilium-maps holds what the kernel dumps today (NODESCOPE_UPDATE_FIXTURES=1 rewrites it)', () => {
    for (const [i, m] of lab.maps.entries()) {
      const file = path.join(FIXTURES, `${m.name}.json`);
      expect(existsSync(file)).toBe(true);
      expect(entrySet(readFileSync(file, 'utf8'))).toEqual(entrySet(dumps[i]?.text ?? ''));
    }
  });
});
