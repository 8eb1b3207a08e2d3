/**
 * `show rules` counts the LB maps without joining the table (issue 23, live Cilium):
 * `countLbServices` (src/parsers/bpftool-lb-count.ts) gives the counts the joined table gives
 * (`ciliumServicesCount` of `assembleLbTable`'s table, the reference) and exactly the join's
 * diagnostics in order, on the lab captures, the maps fixture, generated maps (bench/gen) and
 * entries made to hit every branch, in shuffled orders; the lazily joined part
 * (src/collect/lb-lazy.ts) equals the joined one, joins on first read of `value` only, and a
 * one-shot `show rules` load never joins and prints what the joined build prints.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateWorld, modeOutputs, writeModeBundle } from '../../bench/gen/capture.js';
import { ciliumServicesCount, detectProxyMode, servicesCountOf } from '../../src/analysis/proxy-mode.js';
import { buildSnapshot } from '../../src/collect/build-snapshot.js';
import { lazyLbJoins, lazyLbPart } from '../../src/collect/lb-lazy.js';
import { loadSnapshot } from '../../src/collect/session.js';
import type { ParseResult } from '../../src/model/diagnostics.js';
import { countLbServices, lbCountOf } from '../../src/parsers/bpftool-lb-count.js';
import { assembleLbTable, joinDecodedLbMaps, parseCiliumLbMapDumpWhole, type DecodedLbMap, type HexEntry } from '../../src/parsers/bpftool-lb-decode.js';
import { showRules } from '../../src/report/rules.js';
import { ReplayTransport } from '../../src/sources/replay.js';
import { fixtureDir } from '../helpers/fixtures.js';
import { shuffled } from '../helpers/shuffle.js';

const temp = mkdtempSync(path.join(tmpdir(), 'nodescope-lb-count-'));
afterAll(() => rmSync(temp, { recursive: true, force: true }));

const GEN_NAMES: Readonly<Record<string, string>> = { 'bpf-lb4-services': 'cilium_lb4_services_v2', 'bpf-lb4-backends': 'cilium_lb4_backends_v3', 'bpf-lb4-reverse-nat': 'cilium_lb4_reverse_nat', 'bpf-lb6-services': 'cilium_lb6_services_v2', 'bpf-lb6-backends': 'cilium_lb6_backends_v3', 'bpf-lb6-reverse-nat': 'cilium_lb6_reverse_nat' };

function resultsOf(dumps: readonly { name: string; text: string }[]): ParseResult<DecodedLbMap>[] {
  return dumps.map((d) => parseCiliumLbMapDumpWhole(d.text, d.name, d.name));
}

function labDumps(lab: string): { name: string; text: string }[] {
  const manifest = JSON.parse(readFileSync(path.join(fixtureDir(lab), 'manifest.json'), 'utf8')) as { probes: { id: string; executedArgv: string[]; stdoutFile: string; status: string }[] };
  return manifest.probes.filter((p) => p.id.startsWith('bpf-lb') && p.status === 'ok').map((p) => ({ name: p.executedArgv[p.executedArgv.length - 1]!, text: readFileSync(path.join(fixtureDir(lab), p.stdoutFile), 'utf8') }));
}

/** The count equals the joined table's, and the diagnostics the join's (the reference: the table path). */
function expectEqualToJoin(maps: readonly DecodedLbMap[], label: string): void {
  const table = assembleLbTable(maps, 'o');
  const counted = countLbServices(maps, 'o');
  expect(servicesCountOf(counted.value), label).toEqual(ciliumServicesCount(table.value));
  expect(counted.diagnostics, label).toEqual(table.diagnostics);
  expect(JSON.stringify(counted.diagnostics), label).toBe(JSON.stringify(table.diagnostics));
}

const svc = (ip: string, port: number, proto: number, scope: number, slot: number, union: number, extra: Partial<HexEntry> = {}): HexEntry =>
  ({ kind: 'services', family: ip.includes(':') ? 6 : 4, ip, port, proto, scope, slot, union, l7ProxyPort: 0, count: 2, qcount: 0, revNatId: 9, flags: 0, hex: `key ${ip} ${port} ${slot} ${union}`, ...extra }) as HexEntry;
const backend = (id: number, ip: string, proto = 6): HexEntry => ({ kind: 'backends', family: ip.includes(':') ? 6 : 4, id, ip, port: 8080, proto, stateFlags: 0, clusterId: 0, zone: 0, hex: `be ${id}` }) as HexEntry;
const map = (entries: HexEntry[]): DecodedLbMap => ({ map: 'm', kind: 'services', layout: null, entries, undecoded: [] });

/** Entries meant to reach every branch: no slot 0, missing backends (several in one frontend, out of slot order), unknown protocols and scope, slots twice, both families, large IDs. */
const MADE: HexEntry[] = [
  svc('10.96.0.10', 53, 17, 0, 0, 0),
  svc('10.96.0.10', 53, 17, 0, 2, 2),
  svc('10.96.0.10', 53, 17, 0, 1, 1),
  svc('10.96.0.10', 53, 6, 0, 0, 0),
  svc('10.96.0.10', 53, 6, 0, 3, 78),
  svc('10.96.0.10', 53, 6, 0, 1, 77),
  svc('10.96.0.10', 53, 6, 0, 3, 79),
  svc('10.96.0.10', 53, 6, 1, 0, 0),
  svc('10.96.0.10', 53, 6, 1, 1, 1),
  svc('10.96.0.9', 443, 6, 0, 1, 3),
  svc('10.96.0.9', 443, 6, 0, 1, 2),
  svc('10.96.0.8', 80, 250, 0, 0, 0),
  svc('10.96.0.8', 80, 6, 7, 0, 0),
  svc('10.96.0.8', 80, 251, 9, 1, 66),
  svc('fd00::10', 53, 17, 0, 0, 0),
  svc('fd00::10', 53, 17, 0, 1, 4),
  svc('::ffff:10.96.0.10', 53, 17, 0, 0, 0),
  backend(1, '10.0.0.1'),
  backend(2, '10.0.0.2', 99),
  backend(3, '10.0.0.3'),
  backend(1, '10.0.0.11', 98),
  backend(4, 'fd00::4'),
  backend(0, '10.0.0.100'),
  backend(4_000_000_000, '10.0.0.200'),
  backend(2_097_152, '10.0.0.201'),
  svc('10.96.0.6', 80, 6, 0, 0, 0),
  svc('10.96.0.6', 80, 6, 0, 1, 4_000_000_000),
  svc('10.96.0.6', 80, 6, 0, 2, 0),
  svc('10.96.0.6', 80, 6, 0, 3, 2_097_152),
  svc('10.96.0.6', 80, 6, 0, 4, 2_097_153),
];

describe('countLbServices equals the joined table’s counts and diagnostics', () => {
  it('on made entries in 30 shuffled orders, split over maps', () => {
    for (let seed = 1; seed <= 30; seed++) {
      const order = shuffled(MADE, seed);
      expectEqualToJoin([map(order.slice(0, 9)), map(order.slice(9, 20)), map(order.slice(20))], `seed ${seed}`);
    }
    const counted = countLbServices([map(MADE)]);
    // Each branch was reached: both kinds of unknown protocol, the scope, no slot 0, missing backends.
    expect(new Set(counted.diagnostics.map((d) => d.code))).toEqual(new Set(['missing-backend', 'missing-frontend-slot', 'unknown-protocol', 'unknown-scope']));
    expect(counted.diagnostics.filter((d) => d.code === 'missing-backend').length).toBe(5);
    expect(counted.value).toEqual({ frontends: 10, backendSlots: 14, ipv4: true, ipv6: true });
  });

  it('on one family only, no maps and empty maps', () => {
    expectEqualToJoin([map(MADE.filter((e) => !('ip' in e && e.ip.includes(':'))))], 'v4');
    expectEqualToJoin([map(MADE.filter((e) => 'ip' in e && e.ip.includes(':')))], 'v6');
    expectEqualToJoin([], 'none');
    expectEqualToJoin([map([]), map([])], 'empty');
    expect(countLbServices([]).value).toEqual({ frontends: 0, backendSlots: 0, ipv4: false, ipv6: false });
  });

  it('on the lab captures and the maps fixture', () => {
    for (const lab of ['lab-cilium', 'lab-iptables', 'lab-nftables']) expectEqualToJoin(resultsOf(labDumps(lab)).map((r) => r.value), lab);
    expect(countLbServices(resultsOf(labDumps('lab-cilium')).map((r) => r.value)).value.frontends).toBeGreaterThan(0);
    const dir = fixtureDir('cilium-maps');
    const maps = resultsOf(readdirSync(dir).filter((f) => f.endsWith('.json')).map((f) => ({ name: f.replace(/\.json$/, ''), text: readFileSync(path.join(dir, f), 'utf8') }))).map((r) => r.value);
    expectEqualToJoin(maps, 'cilium-maps');
  });

  it('on generated maps, reordered, and without their backends', () => {
    const world = generateWorld({ services: 150, endpoints: 4, seed: 'lb-count', modes: ['cilium'], conntrack: 10 });
    const maps = resultsOf([...modeOutputs(world, 'cilium')].filter(([id]) => id.startsWith('bpf-lb')).map(([id, text]) => ({ name: GEN_NAMES[id] ?? id, text }))).map((r) => r.value);
    expect(countLbServices(maps).value.frontends).toBeGreaterThan(150);
    expectEqualToJoin(maps, 'generated');
    expectEqualToJoin(maps.map((m, i) => ({ ...m, entries: shuffled(m.entries, i + 7) })), 'reordered');
    const noBackends = maps.map((m) => ({ ...m, entries: m.entries.filter((e) => e.kind !== 'backends') }));
    expect(countLbServices(noBackends).diagnostics.length).toBeGreaterThan(100);
    expectEqualToJoin(noBackends, 'no backends');
  });
});

describe('the lazily joined LB part', () => {
  it('has the joined part’s diagnostics and counts, joins only when its value is read, then equals the join', () => {
    const world = generateWorld({ services: 40, endpoints: 3, seed: 'lb-lazy', modes: ['cilium'], conntrack: 10 });
    const results = resultsOf([...modeOutputs(world, 'cilium')].filter(([id]) => id.startsWith('bpf-lb')).map(([id, text]) => ({ name: GEN_NAMES[id] ?? id, text })));
    // An undecoded entry: its warning comes with the decode's diagnostics, and `unreadable` on the table.
    const edited = [...results, parseCiliumLbMapDumpWhole('[{"key":["0x01"],"value":["0x02"]}]', 'odd', 'cilium_lb4_services_v2')];
    for (const rs of [results, edited]) {
      const joined = joinDecodedLbMaps(rs);
      const before = lazyLbJoins.count;
      const part = lazyLbPart(rs, null as never);
      expect(part.diagnostics).toEqual(joined.diagnostics);
      expect(lbCountOf(part)).toBeDefined();
      expect(servicesCountOf(lbCountOf(part)!)).toEqual(ciliumServicesCount(joined.value.table));
      expect(lazyLbJoins.count).toBe(before);
      expect(part.value).toEqual(joined.value.table);
      expect(part.value).toBe(part.value);
      expect(lazyLbJoins.count).toBe(before + 1);
      expect(lbCountOf({ ...part })).toBeUndefined();
    }
    expect(joinDecodedLbMaps(edited).value.table.unreadable?.length).toBe(1);
  });

  const captures = (): { label: string; dir: string }[] => {
    const gen = path.join(temp, 'gen-cilium');
    writeModeBundle(generateWorld({ services: 120, endpoints: 3, seed: 'lb-count-load', modes: ['cilium'], conntrack: 10 }), 'cilium', gen);
    return [...['lab-cilium', 'lab-iptables'].map((name) => ({ label: name, dir: fixtureDir(name) })), { label: 'generated cilium', dir: gen }];
  };
  for (const { label, dir } of captures()) {
    it(`a one-shot show rules load never joins, and prints what the joined build prints: ${label}`, async () => {
      const transport = new ReplayTransport(dir);
      const apiText = readFileSync(path.join(dir, 'api.json'), 'utf8');
      const before = lazyLbJoins.count;
      const { snapshot, runs, plan } = await loadSnapshot({ transport, live: false, apiText, apiOrigin: 'api.json', parts: ['iptables', 'ip6tables', 'iptablesLegacy', 'nft', 'ipset', 'xtRecent', 'lb', 'ipvs'] });
      const outputs = ['json', 'text', 'yaml'].map((f) => showRules(snapshot, f as 'json'));
      const mode = detectProxyMode(snapshot);
      expect(lazyLbJoins.count).toBe(before);
      // The reference: the same runs built with the table joined in the build.
      const note = snapshot.meta.note ? { note: snapshot.meta.note } : {};
      const reference = { ...buildSnapshot({ runs, apiText, apiOrigin: 'api.json', source: snapshot.meta.source, capturedAt: snapshot.meta.capturedAt, skipped: plan.skipped, ...note }), chainSummaries: snapshot.chainSummaries };
      expect(reference.lb ? lbCountOf(reference.lb) : undefined).toBeUndefined();
      expect(['json', 'text', 'yaml'].map((f) => showRules(reference, f as 'json'))).toEqual(outputs);
      expect(mode).toEqual(detectProxyMode(reference));
      if (label.includes('cilium')) expect(mode.facts.some((f) => f.kind === 'ciliumServices')).toBe(true);
      // Read, the lazy table is the joined one.
      expect(snapshot.lb?.value ?? null).toEqual(reference.lb?.value ?? null);
    });
  }
});
