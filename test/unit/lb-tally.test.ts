/**
 * `show rules` counts the LB maps straight from the dumps' scan (issue 23, live Cilium):
 * whenever `tallyLbMapDump` + `countLbTallies` (src/parsers/bpftool-lb-tally.ts) answer, the
 * counts equal `countLbServices` of the decodes (the reference, itself proven equal to the
 * joined table: lb-count.test.ts) and the decodes and the count give no diagnostic; they
 * answer on the usual maps (lab captures, the maps fixture, generated captures, seeded made
 * maps without warnings) and refuse every shape or table that warns. The part counted from
 * the tallies (src/collect/lb-lazy.ts `tallyLbPart`) equals the lazily joined part.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateWorld, modeOutputs } from '../../bench/gen/capture.js';
import { lazyLbJoins, lazyLbPart, tallyLbPart } from '../../src/collect/lb-lazy.js';
import { countLbServices, lbCountOf } from '../../src/parsers/bpftool-lb-count.js';
import { joinDecodedLbMaps, parseCiliumLbMapDump, parseCiliumLbMapDumpPieces, type LbMapDumpText } from '../../src/parsers/bpftool-lb-decode.js';
import { countLbTallies, tallyLbMapDump } from '../../src/parsers/bpftool-lb-tally.js';
import type { ProbeRun } from '../../src/sources/probe-runner.js';
import { fixtureDir } from '../helpers/fixtures.js';
import { seededRandom } from '../helpers/seeded.js';

const GEN_NAMES: Readonly<Record<string, string>> = { 'bpf-lb4-services': 'cilium_lb4_services_v2', 'bpf-lb4-backends': 'cilium_lb4_backends_v3', 'bpf-lb4-reverse-nat': 'cilium_lb4_reverse_nat', 'bpf-lb6-services': 'cilium_lb6_services_v2', 'bpf-lb6-backends': 'cilium_lb6_backends_v3', 'bpf-lb6-reverse-nat': 'cilium_lb6_reverse_nat' };

type Dump = { name: string; text: string };

/** What the fast path says of `dumps`: the counts, or null (decode and count instead). */
function fast(dumps: readonly Dump[]) {
  const tallies = dumps.map((d) => tallyLbMapDump({ name: d.name, text: d.text, origin: d.name }));
  return tallies.every((t) => t !== null) ? countLbTallies(tallies) : null;
}

/** The reference: each dump decoded as the LB part decodes it, then counted; the decodes' diagnostics, then the count's (the lazy part's). */
function reference(dumps: readonly Dump[]) {
  const decodes = dumps.map((d) => parseCiliumLbMapDump(d.text, d.name, d.name));
  const counted = countLbServices(decodes.map((r) => r.value));
  return { count: counted.value, diagnostics: [...decodes.flatMap((r) => r.diagnostics), ...counted.diagnostics], decodesWarned: decodes.some((r) => r.diagnostics.length > 0) };
}

/** Whenever the fast path answers, its counts and diagnostics equal the reference's (and the decodes warned of nothing); returns whether it answered. */
function expectEqualWhenAnswered(dumps: readonly Dump[], label: string): boolean {
  const got = fast(dumps);
  const ref = reference(dumps);
  if (got === null) return false;
  expect(got.value, label).toEqual(ref.count);
  expect(got.diagnostics, label).toEqual(ref.diagnostics);
  expect(JSON.stringify(got), label).toBe(JSON.stringify({ value: ref.count, diagnostics: ref.diagnostics }));
  expect(ref.decodesWarned, label).toBe(false);
  return true;
}

function labDumps(lab: string): Dump[] {
  const manifest = JSON.parse(readFileSync(path.join(fixtureDir(lab), 'manifest.json'), 'utf8')) as { probes: { id: string; executedArgv: string[]; stdoutFile: string; status: string }[] };
  return manifest.probes.filter((p) => p.id.startsWith('bpf-lb') && p.status === 'ok').map((p) => ({ name: p.executedArgv[p.executedArgv.length - 1]!, text: readFileSync(path.join(fixtureDir(lab), p.stdoutFile), 'utf8') }));
}

function generatedDumps(services: number, seed: string): Dump[] {
  const world = generateWorld({ services, endpoints: 4, seed, modes: ['cilium'], conntrack: 10 });
  return [...modeOutputs(world, 'cilium')].filter(([id]) => id.startsWith('bpf-lb')).map(([id, text]) => ({ name: GEN_NAMES[id] ?? id, text }));
}

/** bpftool's compact `-j` text of entries given as byte arrays. */
const hexes = (b: readonly number[]) => b.map((x) => `"0x${x.toString(16).padStart(2, '0')}"`).join(',');
const dumpText = (entries: readonly { key: number[]; value: number[] }[]) => `[${entries.map((e) => `{"key":[${hexes(e.key)}],"value":[${hexes(e.value)}]}`).join(',')}]\n`;

const le16 = (n: number) => [n & 255, (n >> 8) & 255];
const le32 = (n: number) => [n & 255, (n >>> 8) & 255, (n >>> 16) & 255, (n >>> 24) & 255];
const be16 = (n: number) => [(n >> 8) & 255, n & 255];

/**
 * Seeded maps of both families and every era the tally reads: frontends from a few addresses,
 * ports, protocols and scopes (so groups collide and split), slots 0–3, backend IDs some of which
 * are missing; `clean` keeps only what warns of nothing (known protocols, scope ≤ 1, slot 0 in
 * every frontend, every slot's backend present).
 */
type Defect = 'no-slot0' | 'missing-backend' | 'proto' | 'scope' | 'backend-proto';
function madeDumps(seed: number, clean: boolean, era: 'current' | 'packed' | 'v1' | 'v2', defect?: Defect): Dump[] {
  const r = seededRandom(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const protos = clean ? [6, 17, 132] : [6, 17, 132, 250, 0];
  const scopes = clean ? [0, 1] : [0, 1, 2];
  const ids = [1, 2, 3, 7, 300, 70000, 4_000_000_000].filter((id) => (era === 'v1' || era === 'packed' ? id < 65536 : true));
  const present = clean ? ids : ids.filter(() => r() < 0.8);
  const dumps: Dump[] = [];
  for (const family of [4, 6] as const) {
    const a = family === 4 ? 4 : 16;
    const addrs = [0, 1, 2].map((i) => (family === 4 ? [10, 96, 0, 10 + i] : [0xfd, 0, ...Array(13).fill(0), 10 + i]));
    const entries: { key: number[]; value: number[] }[] = [];
    const frontends = new Set<string>();
    for (let i = 0; i < 40; i++) {
      const addr = pick(addrs);
      const port = pick([53, 80, 443]);
      const proto = pick(protos);
      const scope = era === 'packed' ? 0 : pick(scopes);
      const id = `${addr.join('.')}/${port}/${proto}/${scope}`;
      // Clean maps give each frontend its slot 0 first.
      const slot = clean && !frontends.has(id) ? 0 : Math.floor(r() * 4);
      frontends.add(id);
      const union = slot === 0 ? Math.floor(r() * 1000) : pick(clean ? present : ids);
      const key = era === 'packed' ? [...addr, ...be16(port), ...le16(slot), proto, 0] : [...addr, ...be16(port), ...le16(slot), proto, scope, 0, 0];
      const value = era === 'packed' ? [...le16(2), ...le16(union & 0xffff), ...be16(9), 0, 0] : [...le32(union), ...le16(2), ...be16(9), 0, 0, 0, 0];
      entries.push({ key, value });
    }
    // One frontend more (10.96.1.x) with exactly one thing the table warns of.
    const svc = (last: number, slot: number, union: number, proto = 6, scope = 0) => ({ key: [...(family === 4 ? [10, 96, 1, last] : [0xfd, 1, ...Array(13).fill(0), last]), ...be16(80), ...le16(slot), proto, ...(era === 'packed' ? [0] : [scope, 0, 0]) ], value: era === 'packed' ? [...le16(2), ...le16(union), ...be16(9), 0, 0] : [...le32(union), ...le16(2), ...be16(9), 0, 0, 0, 0] });
    if (family === 4 && defect === 'no-slot0') entries.push(svc(1, 1, present[0]!));
    if (family === 4 && defect === 'missing-backend') entries.push(svc(2, 0, 0), svc(2, 1, 4242));
    if (family === 4 && defect === 'proto') entries.push(svc(3, 0, 0, 250));
    if (family === 4 && defect === 'scope') entries.push(svc(4, 0, 0, 6, 2));
    dumps.push({ name: `/sys/fs/bpf/tc/globals/cilium_lb${family}_services_v2`, text: dumpText(entries) });
    const suffix = era === 'v1' ? '' : era === 'v2' || era === 'packed' ? '_v2' : '_v3';
    const backends = present.map((id) => {
      const key = era === 'v1' ? le16(id) : le32(id);
      const value = [...(family === 4 ? [10, 0, 0, 1] : Array(16).fill(1)), ...be16(8080), clean ? 6 : pick([6, 17, 99]), 0, ...(suffix === '_v3' ? [0, 0, 0, 0] : [])];
      return { key, value };
    });
    if (family === 4 && defect === 'backend-proto') backends.push({ key: era === 'v1' ? le16(4343) : le32(4343), value: [10, 0, 0, 1, ...be16(8080), 99, 0, ...(suffix === '_v3' ? [0, 0, 0, 0] : [])] });
    dumps.push({ name: `/sys/fs/bpf/tc/globals/cilium_lb${family}_backends${suffix}`, text: dumpText(backends) });
    dumps.push({ name: `/sys/fs/bpf/tc/globals/cilium_lb${family}_reverse_nat`, text: dumpText([{ key: be16(9), value: [...Array(a).fill(1), ...be16(80)] }]) });
  }
  return dumps;
}

describe('the LB count from the dumps’ scan equals the decodes’ count', () => {
  it('answers, and equals, on the lab captures, the maps fixture and generated captures', () => {
    for (const lab of ['lab-cilium', 'lab-iptables', 'lab-nftables']) expect(expectEqualWhenAnswered(labDumps(lab), lab), lab).toBe(true);
    expect(fast(labDumps('lab-cilium'))!.value.frontends).toBeGreaterThan(0);
    const dir = fixtureDir('cilium-maps');
    const maps = readdirSync(dir)
      .filter((f) => f.endsWith('.json'))
      .map((f) => ({ name: f.replace(/\.json$/, ''), text: readFileSync(path.join(dir, f), 'utf8') }));
    // The fixture is pretty-printed (`-p`): not the compact shape, so the decode counts it.
    expectEqualWhenAnswered(maps, 'cilium-maps');
    for (const [n, seed] of [[5, 'a'], [150, 'b'], [800, 'c']] as const) {
      const dumps = generatedDumps(n, `lb-tally-${seed}`);
      expect(expectEqualWhenAnswered(dumps, `generated ${n}`), `generated ${n}`).toBe(true);
      expect(fast(dumps)!.value.frontends).toBeGreaterThan(n);
      expect(fast(dumps)!.diagnostics).toEqual([]);
    }
  });

  it('on seeded made maps of every era: answers, with the count’s warnings in its order', () => {
    let warned = 0;
    for (const era of ['current', 'packed', 'v1', 'v2'] as const) {
      for (let seed = 1; seed <= 40; seed++) {
        const clean = madeDumps(seed, true, era);
        expect(expectEqualWhenAnswered(clean, `${era} clean ${seed}`), `${era} clean ${seed}`).toBe(true);
        expect(fast(clean)!.diagnostics, `${era} clean ${seed}`).toEqual([]);
        const any = madeDumps(seed, false, era);
        expect(expectEqualWhenAnswered(any, `${era} ${seed}`), `${era} ${seed}`).toBe(true);
        if (fast(any)!.diagnostics.length > 0) warned++;
        // Reordered maps: the same counts, the warnings in the new read order.
        expect(expectEqualWhenAnswered([...any].reverse(), `${era} reversed ${seed}`)).toBe(true);
      }
    }
    expect(warned).toBeGreaterThan(100);
  });

  it('gives each warning alone, of each kind, in every era, as the count does', () => {
    const code: Record<string, string> = { 'no-slot0': 'missing-frontend-slot', 'missing-backend': 'missing-backend', proto: 'unknown-protocol', scope: 'unknown-scope', 'backend-proto': 'unknown-protocol' };
    for (const era of ['current', 'packed', 'v1', 'v2'] as const) {
      for (const defect of ['no-slot0', 'missing-backend', 'proto', 'scope', 'backend-proto'] as const) {
        if (era === 'packed' && defect === 'scope') continue;
        for (let seed = 1; seed <= 5; seed++) {
          const dumps = madeDumps(seed, true, era, defect);
          expect(expectEqualWhenAnswered(dumps, `${era} ${defect} ${seed}`)).toBe(true);
          expect(fast(dumps)!.diagnostics.map((d) => d.code), `${era} ${defect} ${seed}`).toEqual([code[defect]]);
        }
      }
    }
  });

  it('refuses the shapes it does not read (the decode then counts them)', () => {
    const base = generatedDumps(5, 'lb-tally-odd');
    const services = base.find((d) => d.name === 'cilium_lb4_services_v2')!;
    const pretty = JSON.stringify(JSON.parse(services.text), null, 2);
    const odd: [string, Dump][] = [
      ['pretty', { ...services, text: pretty }],
      ['cut', { ...services, text: services.text.slice(0, services.text.length / 2) }],
      ['unknown map with entries', { name: 'cilium_lb4_other', text: services.text }],
      ['another size mid-dump', { ...services, text: services.text.replace(/\]\s*$/, ',{"key":["0x01"],"value":["0x02"]}]') }],
      ['a maglev map with entries', { name: 'cilium_lb4_maglev', text: dumpText([{ key: [0, 9], value: [1, 0, 0, 0] }]) }],
      ['sizes of no layout', { ...services, text: dumpText([{ key: [1, 2, 3], value: [4] }]) }],
      ['an error object', { ...services, text: '{"error":"can\'t get next key"}' }],
    ];
    for (const [label, dump] of odd) {
      expect(tallyLbMapDump({ ...dump, origin: 'o' }), label).toBeNull();
      const dumps = base.map((d) => (d === services ? dump : d));
      expect(fast(dumps), label).toBeNull();
    }
    // Empty dumps of any map, known or not, add nothing and answer.
    expect(tallyLbMapDump({ name: 'cilium_lb4_maglev', text: '[]\n', origin: 'o' })).not.toBeNull();
    expect(expectEqualWhenAnswered([{ name: 'nothing_known', text: '[]' }], 'empty unknown')).toBe(true);
    expect(fast([])).toEqual({ value: { frontends: 0, backendSlots: 0, ipv4: false, ipv6: false }, diagnostics: [] });
  });

  it('reads a dump given in pieces as the whole text', () => {
    for (const d of generatedDumps(150, 'lb-tally-pieces')) {
      const pieces = () => Array.from({ length: Math.ceil(d.text.length / 777) }, (_, i) => d.text.slice(i * 777, (i + 1) * 777));
      const whole = tallyLbMapDump({ ...d, origin: 'o' });
      const dump: LbMapDumpText = { name: d.name, text: '', origin: 'o', pieces };
      expect(tallyLbMapDump(dump), d.name).toEqual(whole);
      expect(parseCiliumLbMapDumpPieces(pieces, 'o', d.name).diagnostics).toEqual([]);
    }
  });
});

describe('the LB part counted from the tallies', () => {
  const runOf = (d: Dump, i: number): ProbeRun => ({ id: `bpf-lb-${i}`, argv: ['bpftool', '-j', 'map', 'dump', 'pinned', d.name], status: 'ok', result: { stdout: d.text } }) as unknown as ProbeRun;
  it('equals the lazily joined part: no diagnostics, the same counts, the joined table on first read only', () => {
    for (const dumps of [generatedDumps(60, 'lb-tally-part'), labDumps('lab-cilium'), madeDumps(3, true, 'current'), madeDumps(3, false, 'current'), madeDumps(4, true, 'v1', 'missing-backend')]) {
      const runs = dumps.map(runOf);
      const decodes = dumps.map((d) => parseCiliumLbMapDump(d.text, d.name, d.name));
      const lazy = lazyLbPart(decodes, null as never);
      const before = lazyLbJoins.count;
      const part = tallyLbPart(runs, (r) => tallyLbMapDump({ name: r.argv[r.argv.length - 1]!, text: r.result.stdout, origin: r.id }), null as never)!;
      expect(part).not.toBeNull();
      expect(part.diagnostics).toEqual(lazy.diagnostics);
      expect(JSON.stringify(part.diagnostics)).toBe(JSON.stringify(lazy.diagnostics));
      expect(lbCountOf(part)).toEqual(lbCountOf(lazy));
      expect(lazyLbJoins.count).toBe(before);
      expect(part.value).toEqual(joinDecodedLbMaps(decodes).value.table);
      expect(part.value).toBe(part.value);
      expect(lazyLbJoins.count).toBe(before + 1);
    }
  });
  it('is null when a tally is', () => {
    const dumps = madeDumps(1, true, 'current');
    expect(tallyLbPart(dumps.map(runOf), (r) => (r.id === 'bpf-lb-1' ? null : tallyLbMapDump({ name: r.argv[5]!, text: r.result.stdout, origin: r.id })), null as never)).toBeNull();
  });
});
