/**
 * The LB table joined from decoded maps (issue 23: the Cilium lab's `show rules`, mode frame
 * and huge replay) equals the reference, `assembleLbTable` as it was before session 12
 * (test/helpers/lb-assemble-reference.ts): services, their order, slots, raw text, backends,
 * rev-NATs and diagnostics, on the lab and generated maps, and entries made to hit every
 * branch (no slot 0, missing backends, unknown protocol and scope, slots twice, both
 * families, the same address on several ports and scopes), in shuffled orders.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateWorld, modeOutputs } from '../../bench/gen/capture.js';
import { assembleLbTable, parseCiliumLbMapDumpWhole, type DecodedLbMap, type HexEntry } from '../../src/parsers/bpftool-lb-decode.js';
import { fixtureDir } from '../helpers/fixtures.js';
import { shuffled } from '../helpers/shuffle.js';
import { assembleLbTableReference } from '../helpers/lb-assemble-reference.js';

function mapsOf(dumps: readonly { name: string; text: string }[]): DecodedLbMap[] {
  return dumps.map((d) => parseCiliumLbMapDumpWhole(d.text, d.name, d.name).value);
}

/** The pinned names of the generated dumps' maps (the catalog's probes: current layouts). */
const GEN_NAMES: Readonly<Record<string, string>> = { 'bpf-lb4-services': 'cilium_lb4_services_v2', 'bpf-lb4-backends': 'cilium_lb4_backends_v3', 'bpf-lb4-reverse-nat': 'cilium_lb4_reverse_nat', 'bpf-lb6-services': 'cilium_lb6_services_v2', 'bpf-lb6-backends': 'cilium_lb6_backends_v3', 'bpf-lb6-reverse-nat': 'cilium_lb6_reverse_nat' };

const svc = (ip: string, port: number, proto: number, scope: number, slot: number, union: number, extra: Partial<HexEntry> = {}): HexEntry =>
  ({ kind: 'services', family: ip.includes(':') ? 6 : 4, ip, port, proto, scope, slot, union, l7ProxyPort: 0, count: 2, qcount: 0, revNatId: 9, flags: 0, hex: `key ${ip} ${port} ${slot} ${union}`, ...extra }) as HexEntry;
const backend = (id: number, ip: string, proto = 6): HexEntry => ({ kind: 'backends', family: ip.includes(':') ? 6 : 4, id, ip, port: 8080, proto, stateFlags: 0, clusterId: 0, zone: 0, hex: `be ${id}` }) as HexEntry;
const revnat = (id: number, ip: string): HexEntry => ({ kind: 'revnat', family: 4, id, ip, port: 80, hex: `rn ${id}` }) as HexEntry;
const map = (entries: HexEntry[]): DecodedLbMap => ({ map: 'm', kind: 'services', layout: null, entries, undecoded: [] });

/** Entries meant to reach every branch of the join. */
const MADE: HexEntry[] = [
  svc('10.96.0.10', 53, 17, 0, 0, 0, { count: 2 }),
  svc('10.96.0.10', 53, 17, 0, 2, 2),
  svc('10.96.0.10', 53, 17, 0, 1, 1),
  svc('10.96.0.10', 53, 6, 0, 0, 0),
  svc('10.96.0.10', 53, 6, 0, 1, 77),
  svc('10.96.0.10', 53, 6, 1, 0, 0),
  svc('10.96.0.10', 53, 6, 1, 1, 1),
  svc('10.96.0.9', 443, 6, 0, 1, 3),
  svc('10.96.0.9', 443, 6, 0, 1, 2, { hex: 'the same slot again (pad bytes differ)' }),
  svc('10.96.0.8', 80, 250, 0, 0, 0),
  svc('10.96.0.8', 80, 6, 7, 0, 0),
  svc('10.96.0.7', 80, 6, 0, 0, 0x01000020, { flags: 0 }),
  svc('10.96.0.7', 81, 6, 0, 0, 0, { flags: 1 << 12, l7ProxyPort: 15001 }),
  svc('10.96.0.7', 82, 6, 0, 0, 0, { flags: null }),
  svc('fd00::10', 53, 17, 0, 0, 0),
  svc('fd00::10', 53, 17, 0, 1, 4),
  svc('::ffff:10.96.0.10', 53, 17, 0, 0, 0),
  svc('2.0.0.1', 53, 17, 0, 0, 0),
  backend(1, '10.0.0.1'),
  backend(2, '10.0.0.2', 99),
  backend(3, '10.0.0.3'),
  backend(1, '10.0.0.11'),
  backend(4, 'fd00::4'),
  backend(0, '10.0.0.100'),
  backend(4_000_000_000, '10.0.0.200'),
  backend(2_097_152, '10.0.0.201'),
  svc('10.96.0.6', 80, 6, 0, 0, 0),
  svc('10.96.0.6', 80, 6, 0, 1, 4_000_000_000),
  svc('10.96.0.6', 80, 6, 0, 2, 0),
  svc('10.96.0.6', 80, 6, 0, 3, 2_097_152),
  revnat(9, '10.96.0.10'),
  revnat(3, '10.96.0.9'),
  revnat(9, '10.96.0.11'),
];

describe('assembleLbTable equals the reference', () => {
  it('on made entries in 30 shuffled orders, split over maps', () => {
    for (let seed = 1; seed <= 30; seed++) {
      const order = shuffled(MADE, seed);
      const maps = [map(order.slice(0, 9)), map(order.slice(9, 20)), map(order.slice(20))];
      const got = assembleLbTable(maps, 'o');
      expect(got, `seed ${seed}`).toEqual(assembleLbTableReference(maps, 'o'));
      expect(JSON.stringify(got), `seed ${seed}`).toBe(JSON.stringify(assembleLbTableReference(maps, 'o')));
    }
    const table = assembleLbTable([map(MADE)]);
    expect(table.diagnostics.map((d) => d.code).sort()).toEqual(['missing-backend', 'missing-frontend-slot', 'unknown-protocol', 'unknown-protocol', 'unknown-scope']);
    expect(table.value.services.length).toBe(13);
    expect(table.value.backends.map((b) => b.id)).toEqual([0, 1, 2, 3, 4, 2_097_152, 4_000_000_000]);
    expect(table.value.services.find((x) => x.frontend.ip === '10.96.0.6')?.slots.map((x) => x.backend?.ip)).toEqual(['10.0.0.200', '10.0.0.100', '10.0.0.201']);
  });

  it('on no maps and empty maps', () => {
    expect(assembleLbTable([])).toEqual(assembleLbTableReference([]));
    expect(assembleLbTable([map([]), map([])])).toEqual(assembleLbTableReference([map([]), map([])]));
  });

  it('on the lab captures and the maps fixture', () => {
    for (const lab of ['lab-cilium', 'lab-iptables', 'lab-nftables']) {
      const manifest = JSON.parse(readFileSync(path.join(fixtureDir(lab), 'manifest.json'), 'utf8')) as { probes: { id: string; executedArgv: string[]; stdoutFile: string; status: string }[] };
      const dumps = manifest.probes.filter((p) => p.id.startsWith('bpf-lb') && p.status === 'ok').map((p) => ({ name: p.executedArgv[p.executedArgv.length - 1]!, text: readFileSync(path.join(fixtureDir(lab), p.stdoutFile), 'utf8') }));
      const maps = mapsOf(dumps);
      expect(assembleLbTable(maps), lab).toEqual(assembleLbTableReference(maps));
    }
    const dir = fixtureDir('cilium-maps');
    const maps = mapsOf(readdirSync(dir).filter((f) => f.endsWith('.json')).map((f) => ({ name: f.replace(/\.json$/, ''), text: readFileSync(path.join(dir, f), 'utf8') })));
    const got = assembleLbTable(maps);
    expect(got.value.services.length).toBeGreaterThan(3);
    expect(got).toEqual(assembleLbTableReference(maps));
  });

  it('on a generated capture', () => {
    const world = generateWorld({ services: 150, endpoints: 4, seed: 'lb-assemble', modes: ['cilium'], conntrack: 10 });
    const dumps = [...modeOutputs(world, 'cilium')].filter(([id]) => id.startsWith('bpf-lb')).map(([id, text]) => ({ name: GEN_NAMES[id] ?? id, text }));
    const maps = mapsOf(dumps);
    expect(assembleLbTable(maps).value.services.length).toBeGreaterThan(150);
    expect(assembleLbTable(maps)).toEqual(assembleLbTableReference(maps));
    const reordered = maps.map((m, i) => ({ ...m, entries: shuffled(m.entries, i + 7) }));
    expect(assembleLbTable(reordered)).toEqual(assembleLbTableReference(reordered));
  });

});
