/**
 * Cilium's LB map dumps in bpftool's usual compact shape read in place (issue 23: the
 * Cilium lab's `show rules`, mode frame and huge replay): src/parsers/bpftool-compact-scan.ts
 * gives the bytes, indexes and lines the whole-text parser gives, so `parseCiliumLbMapDump`
 * and its piece form equal `parseCiliumLbMapDumpWhole` (the old path, the reference) on the
 * lab captures, the maps fixture, the generated captures (the large bench capture was compared
 * by hand: bench/RESULTS.md, session 12 cilive), and every edited or odd text (which the scan
 * leaves to the whole-text parser).
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateWorld, modeOutputs } from '../../bench/gen/capture.js';
import { scanCompactDump } from '../../src/parsers/bpftool-compact-scan.js';
import { decodeCiliumLbMaps, parseCiliumLbMapDump, parseCiliumLbMapDumpPieces, parseCiliumLbMapDumpWhole } from '../../src/parsers/bpftool-lb-decode.js';
import { fixtureDir } from '../helpers/fixtures.js';

/** `text` cut every `size` characters (anywhere: inside strings, between `]` and `}`). */
function cut(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

interface Dump {
  readonly label: string;
  readonly name: string;
  readonly text: string;
}

/** The lab captures' map dumps and the maps fixture's, with the map name bpftool was given. */
function recordedDumps(): Dump[] {
  const out: Dump[] = [];
  for (const lab of ['lab-cilium', 'lab-iptables', 'lab-nftables']) {
    const manifest = JSON.parse(readFileSync(path.join(fixtureDir(lab), 'manifest.json'), 'utf8')) as { probes: { id: string; executedArgv: string[]; stdoutFile: string; status: string }[] };
    for (const p of manifest.probes.filter((x) => x.id.startsWith('bpf-lb') && x.status === 'ok')) {
      out.push({ label: `${lab}/${p.id}`, name: p.executedArgv[p.executedArgv.length - 1]!, text: readFileSync(path.join(fixtureDir(lab), p.stdoutFile), 'utf8') });
    }
  }
  const maps = fixtureDir('cilium-maps');
  for (const f of readdirSync(maps).filter((x) => x.endsWith('.json'))) out.push({ label: `cilium-maps/${f}`, name: f.replace(/\.json$/, ''), text: readFileSync(path.join(maps, f), 'utf8') });
  return out;
}

/** The pinned names of the generated dumps' maps (the catalog's probes: current layouts). */
const GEN_NAMES: Readonly<Record<string, string>> = { 'bpf-lb4-services': 'cilium_lb4_services_v2', 'bpf-lb4-backends': 'cilium_lb4_backends_v3', 'bpf-lb4-reverse-nat': 'cilium_lb4_reverse_nat', 'bpf-lb6-services': 'cilium_lb6_services_v2', 'bpf-lb6-backends': 'cilium_lb6_backends_v3', 'bpf-lb6-reverse-nat': 'cilium_lb6_reverse_nat' };

function generatedDumps(): Dump[] {
  const world = generateWorld({ services: 120, endpoints: 3, seed: 'lb-compact', modes: ['cilium'], conntrack: 10 });
  return [...modeOutputs(world, 'cilium')].filter(([id]) => id.startsWith('bpf-lb')).map(([id, text]) => ({ label: `generated/${id}`, name: GEN_NAMES[id] ?? id, text }));
}

/** The shared bench capture's (large, 10,000 Services) dumps, when this machine has it. */

const ENTRY = '{"key":["0x0a","0x60","0x00","0x01","0x01","0xbb","0x00","0x00","0x06","0x00","0x00","0x00"],"value":["0x00","0x00","0x00","0x00","0x01","0x00","0x00","0x01","0x00","0x00","0x00","0x00"]}';
const SLOT = '{"key":["0x0a","0x60","0x00","0x01","0x01","0xbb","0x01","0x00","0x06","0x00","0x00","0x00"],"value":["0x07","0x00","0x00","0x00","0x00","0x00","0x00","0x01","0x00","0x00","0x00","0x00"]}';
/** An entry of sizes no services layout has (undecoded, with its line). */
const ODD = '{"key":["0x0a","0x60"],"value":["0x01"]}';
const hexes = (n: number, f: (i: number) => number) => Array.from({ length: n }, (_, i) => `"0x${f(i).toString(16)}"`).join(',');
/** A Maglev inner table of 700 backend ids (2,800 value bytes: the scan's buffers grow). */
const MAGLEV = `[{"key":["0x00","0x00","0x00","0x00"],"value":[${hexes(2800, (i) => (i * 7) & 0xff)}]},{"key":["0x01","0x00","0x00","0x00"],"value":[${hexes(8, (i) => i)}]}]`;

/** Texts of the usual shape (the scan reads them) and of other shapes (it leaves them): [label, text, map, usual]. */
const SHAPES: [string, string, string, boolean][] = [
  ['an empty map', '[]\n', 'cilium_lb4_services_v2', true],
  ['no newline at the end', `[${ENTRY},${SLOT}]`, 'cilium_lb4_services_v2', true],
  ['blank lines before and after', `\n\n \t[${ENTRY},${ODD},${SLOT}]\r\n\n`, 'cilium_lb4_services_v2', true],
  ['upper-case and one-digit bytes', `[${ENTRY.replace('"0xbb"', '"0xBB"').replace('"0x0a"', '"0xa"')}]\n`, 'cilium_lb4_services_v2', true],
  ['empty key and value arrays', '[{"key":[],"value":[]}]', 'cilium_lb4_services_v2', true],
  ['values of two sizes, one long', MAGLEV, 'cilium_maglev_inner', true],
  ['a map name nodescope does not decode', `[${ENTRY}]`, 'cilium_lb4_affinity_nope', true],
  ['empty output', '', 'cilium_lb4_services_v2', false],
  ['blanks only', ' \n\t', 'cilium_lb4_services_v2', false],
  ['bpftool error object', '{"error":"can\'t open pinned map"}\n', 'cilium_lb4_services_v2', false],
  ['cut inside an entry', `[${ENTRY},${SLOT.slice(0, 60)}`, 'cilium_lb4_services_v2', false],
  ['cut between entries', `[${ENTRY},`, 'cilium_lb4_services_v2', false],
  ['cut before the closing ]', `[${ENTRY}`, 'cilium_lb4_services_v2', false],
  ['text after the array', `[${ENTRY}]\nWarning: something\n`, 'cilium_lb4_services_v2', false],
  ['a no-break space before the array', `\u00a0[${ENTRY}]`, 'cilium_lb4_services_v2', false],
  ['a byte-order mark', `\ufeff[${ENTRY}]`, 'cilium_lb4_services_v2', false],
  ['a } closing the array', `[${ENTRY}}`, 'cilium_lb4_services_v2', false],
  ['a trailing comma', `[${ENTRY},]`, 'cilium_lb4_services_v2', false],
  ['a leading comma', `[,${ENTRY}]`, 'cilium_lb4_services_v2', false],
  ['two commas', `[${ENTRY},,${SLOT}]`, 'cilium_lb4_services_v2', false],
  ['a blank after a comma', `[${ENTRY}, ${SLOT}]`, 'cilium_lb4_services_v2', false],
  ['a newline between entries', `[${ENTRY},\n${ODD}]`, 'cilium_lb4_services_v2', false],
  ['pretty-printed (-p)', `${JSON.stringify([JSON.parse(ENTRY), JSON.parse(ODD)], null, 2)}\n`, 'cilium_lb4_services_v2', false],
  ['BTF formatted members', `[{"key":["0x01","0x00","0x00","0x00"],"value":["0x02","0x00","0x00","0x00"],"formatted":{"key":1,"value":{"a":[2]}}}]`, 'cilium_lb4_reverse_nat', false],
  ['an inner map id', `[{"key":["0x00","0x05"],"value":["0x4d","0x00","0x00","0x00"],"inner_map_id":77}]`, 'cilium_lb4_maglev', false],
  ['per-CPU values', `[{"key":["0x01","0x00","0x00","0x00"],"values":[{"cpu":0,"value":["0x01"]}]}]`, 'cilium_lb4_services_v2', false],
  ['members in another order', `[{"value":["0x01"],"key":["0x0a"]}]`, 'cilium_lb4_services_v2', false],
  ['a byte of three digits', `[{"key":["0x0a1"],"value":["0x01"]}]`, 'cilium_lb4_services_v2', false],
  ['a byte that is not hex', `[{"key":["0x0g"],"value":["0x01"]}]`, 'cilium_lb4_services_v2', false],
  ['a number for a byte', `[{"key":[10],"value":["0x01"]}]`, 'cilium_lb4_services_v2', false],
  ['an entry that is not an object', `[${ENTRY},[1,2]]`, 'cilium_lb4_services_v2', false],
  ['an escape in a byte', `[{"key":["0x\\u0030a"],"value":["0x01"]}]`, 'cilium_lb4_services_v2', false],
];

describe('LB map dumps read in place (the compact scan)', () => {
  const dumps = [...recordedDumps(), ...generatedDumps()];

  it('covers lab and generated dumps with entries', () => {
    expect(dumps.filter((d) => d.label.startsWith('lab-')).length).toBeGreaterThanOrEqual(6);
    expect(dumps.filter((d) => d.label.startsWith('generated/')).length).toBeGreaterThanOrEqual(3);
    expect(parseCiliumLbMapDumpWhole(dumps.find((d) => d.label === 'generated/bpf-lb4-services')!.text, 'x', 'cilium_lb4_services_v2').value.entries.length).toBeGreaterThan(120);
    expect(dumps.filter((d) => d.label.startsWith('generated/')).every((d) => parseCiliumLbMapDumpWhole(d.text, 'x', d.name).value.undecoded.length === 0)).toBe(true);
  });

  it('every recorded and generated dump is of the usual shape and decodes as the whole-text parser', () => {
    for (const d of dumps) {
      expect(scanCompactDump([d.text], () => {}), d.label).not.toBeNull();
      expect(parseCiliumLbMapDump(d.text, d.label, d.name), d.label).toEqual(parseCiliumLbMapDumpWhole(d.text, d.label, d.name));
    }
  });

  it.each([1, 2, 7, 333, 1 << 20])('every dump cut every %i characters: read once, in place, as the whole text', (size) => {
    for (const d of dumps) {
      let reads = 0;
      const pieced = parseCiliumLbMapDumpPieces(() => (reads++, cut(d.text, size)), d.label, d.name);
      expect(pieced, d.label).toEqual(parseCiliumLbMapDumpWhole(d.text, d.label, d.name));
      expect(reads, d.label).toBe(1);
    }
  });

  it('the table of the lab-cilium maps is the whole-text one', () => {
    const lab = recordedDumps().filter((d) => d.label.startsWith('lab-cilium/'));
    const fast = decodeCiliumLbMaps(lab.map((d) => ({ name: d.name, text: d.text, origin: d.label })));
    const maps = lab.map((d) => parseCiliumLbMapDumpWhole(d.text, d.label, d.name));
    expect(fast.value.maps).toEqual(maps.map((m) => m.value));
    expect(fast.value.table.services.length).toBeGreaterThan(0);
  });

  it.each(SHAPES)('%s: the whole-text result (usual shape: %s)', (label, text, map, usual) => {
    expect(scanCompactDump(cut(text, 3), () => {}) !== null, label).toBe(usual);
    expect(scanCompactDump([text], () => {}) !== null, label).toBe(usual);
    const whole = parseCiliumLbMapDumpWhole(text, 'f', map);
    expect(parseCiliumLbMapDump(text, 'f', map)).toEqual(whole);
    for (const size of [1, 2, 5, 1000]) expect(parseCiliumLbMapDumpPieces(() => cut(text, size), 'f', map), `pieces of ${size}`).toEqual(whole);
  });

  it('hands over each entry\'s bytes, index and line as the whole-text parser reads them', () => {
    const got: [number[], number[], number, number][] = [];
    const n = scanCompactDump(cut(`\n\n[${ENTRY},${ODD}]\n`, 4), (k, v, i, line) => got.push([[...k], [...v], i, line]));
    expect(n).toEqual({ entries: 2 });
    expect(got[1]).toEqual([[0x0a, 0x60], [1], 1, 3]);
    expect(got[0]![0]).toEqual([0x0a, 0x60, 0x00, 0x01, 0x01, 0xbb, 0, 0, 6, 0, 0, 0]);
    // The undecoded entry is reported on the dump's third line, as the whole-text parser says.
    const r = parseCiliumLbMapDump(`\n\n[${ENTRY},${ODD}]\n`, 'f', 'cilium_lb4_services_v2');
    expect(r.diagnostics.map((d) => [d.code, d.line])).toEqual([['undecoded', 3]]);
    expect(r.value.entries).toHaveLength(1);
  });

  it('gives up on an entry carried past its longest length (a text with no entry end)', () => {
    const text = `[{"key":[${'"0x01",'.repeat(800_000)}`;
    expect(scanCompactDump(cut(text, 1 << 16), () => {})).toBeNull();
  });

});
