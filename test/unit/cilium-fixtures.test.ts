/**
 * fixtures/cilium-maps holds real `bpftool -j map dump` output of the lab's maps (see its
 * README). Decoding it must give back the workshop scenario, and formatting the decoded
 * table must give the listing texts stored beside it, byte for byte.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { decodeCiliumLbMaps } from '../../src/parsers/bpftool-lb-decode.js';
import { formatCiliumBpfLbList, parseCiliumBpfLbList, bpfLbListView } from '../../src/parsers/cilium-bpf-lb-list.js';
import { formatCiliumServiceList } from '../../src/parsers/cilium-service-list.js';
import { CILIUM_LB_MAPS } from '../../src/model/cilium.js';
import type { LbTable } from '../../src/model/cilium.js';
import { labCiliumTable } from '../lab/cilium-scenario.js';

const dir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../fixtures/cilium-maps');
const read = (f: string) => readFileSync(path.join(dir, f), 'utf8');
const names = [CILIUM_LB_MAPS.services4, CILIUM_LB_MAPS.backends4, CILIUM_LB_MAPS.revNat4, CILIUM_LB_MAPS.services6, CILIUM_LB_MAPS.backends6, CILIUM_LB_MAPS.revNat6];

describe('fixtures/cilium-maps', () => {
  const r = decodeCiliumLbMaps(names.map((n) => ({ name: n, text: read(`${n}.json`), origin: `fixtures/cilium-maps/${n}.json` })));

  it('decodes every entry of the real dumps', () => {
    expect(r.diagnostics).toEqual([]);
    expect(r.value.maps.map((m) => [m.map, m.entries.length, m.undecoded.length])).toEqual([
      ['cilium_lb4_services_v2', 21, 0],
      ['cilium_lb4_backends_v3', 8, 0],
      ['cilium_lb4_reverse_nat', 7, 0],
      ['cilium_lb6_services_v2', 0, 0],
      ['cilium_lb6_backends_v3', 0, 0],
      ['cilium_lb6_reverse_nat', 0, 0],
    ]);
  });

  it('gives back the workshop scenario (names aside: the maps do not hold them)', () => {
    const byId = (t: LbTable) => t.services.map((s) => ({ ...s, name: null, raw: '' })).sort((a, b) => (a.id ?? 0) - (b.id ?? 0));
    const scenario = labCiliumTable();
    expect(byId(r.value.table)).toEqual(byId(scenario));
    expect(r.value.table.backends).toEqual(scenario.backends);
    expect(r.value.table.revNats).toEqual(scenario.revNats);
  });

  it('formats to the stored bpf lb list and service list texts', () => {
    expect(formatCiliumBpfLbList(r.value.table)).toBe(read('bpf-lb-list.txt'));
    expect(formatCiliumServiceList(r.value.table)).toBe(read('service-list.txt'));
  });

  it('the stored bpf lb list parses to the decoded model', () => {
    expect(bpfLbListView(parseCiliumBpfLbList(read('bpf-lb-list.txt'), 'fixture').value)).toEqual(bpfLbListView(r.value.table));
  });
});
