/**
 * Cilium's raw LB maps read in pieces (issue 23 item 4: a 25,000-Service node's services
 * map is 61 MB of one-line bpftool JSON): each entry is decoded as it is read, and the
 * result — decoded maps, table, diagnostics with their lines — is the whole-text parse's,
 * on the lab captures, the generated captures and every odd shape (which the piece path
 * hands to the whole-text parser).
 */
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateWorld, modeOutputs } from '../../bench/gen/capture.js';
import { buildFirstSnapshot, buildSnapshot, completeSnapshot, piecedProbes } from '../../src/collect/build-snapshot.js';
import { decodeCiliumLbMaps, parseCiliumLbMapDumpWhole as parseCiliumLbMapDump, parseCiliumLbMapDumpPieces } from '../../src/parsers/bpftool-lb-decode.js';
import { scanBpftoolMapDumpPieces } from '../../src/parsers/bpftool-map-dump.js';
import { readBundleFilePieces, type Bundle } from '../../src/sources/bundle.js';
import { runProbes } from '../../src/sources/probe-runner.js';
import { ReplayTransport } from '../../src/sources/replay.js';
import { fixtureDir } from '../helpers/fixtures.js';

/** `text` cut every `size` characters (anywhere: inside strings, escapes, entries). */
function cut(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

/** Every recorded map dump: the lab captures' and the maps fixture's, with the map name bpftool was given. */
function recordedDumps(): { label: string; name: string; text: string }[] {
  const out: { label: string; name: string; text: string }[] = [];
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

/** The generated cilium capture's map dumps (what bench/gen writes for the huge bundle, smaller). */
function generatedDumps(): { label: string; name: string; text: string }[] {
  const world = generateWorld({ services: 150, endpoints: 4, seed: 'lb-pieces', modes: ['cilium'], conntrack: 10 });
  return [...modeOutputs(world, 'cilium')].filter(([id]) => id.startsWith('bpf-lb')).map(([id, text]) => ({ label: `generated/${id}`, name: `cilium_${id.replace('bpf-', '').replaceAll('-', '_')}`, text }));
}

describe('LB map dumps in pieces', () => {
  const dumps = [...recordedDumps(), ...generatedDumps()];

  it('covers lab and generated dumps with entries', () => {
    expect(dumps.filter((d) => d.label.startsWith('lab-')).length).toBeGreaterThanOrEqual(6);
    expect(dumps.filter((d) => d.label.startsWith('generated/')).length).toBeGreaterThanOrEqual(3);
    expect(parseCiliumLbMapDump(dumps.find((d) => d.label.startsWith('generated/bpf-lb4-services'))!.text, 'x', 'cilium_lb4_services_v2').value.entries.length).toBeGreaterThan(150);
  });

  it.each([1, 7, 333, 1 << 20])('every dump cut every %i characters decodes as the whole text', (size) => {
    for (const d of dumps) {
      const whole = parseCiliumLbMapDump(d.text, d.label, d.name);
      let reads = 0;
      const pieced = parseCiliumLbMapDumpPieces(() => (reads++, cut(d.text, size)), d.label, d.name);
      expect(pieced, d.label).toEqual(whole);
      // Read once: the usual shape never falls back to the whole text.
      expect(reads, d.label).toBe(1);
    }
  });

  it('the whole table from pieces is the whole-text one (lab-cilium)', () => {
    const lab = recordedDumps().filter((d) => d.label.startsWith('lab-cilium/'));
    const whole = decodeCiliumLbMaps(lab.map((d) => ({ name: d.name, text: d.text, origin: d.label })));
    const pieced = decodeCiliumLbMaps(lab.map((d) => ({ name: d.name, text: '', origin: d.label, pieces: () => cut(d.text, 50) })));
    expect(pieced).toEqual(whole);
    expect(whole.value.table.services.length).toBeGreaterThan(0);
  });

  it('read from a bundle file in small reads (pretty-printed, multi-byte text in a BTF string)', () => {
    const entry = (i: number) => ({ key: ['0x0a', '0x60', '0x00', `0x${i.toString(16)}`, '0x00', '0x35', '0x00', '0x00', '0x06', '0x00', '0x00', '0x00'], value: ['0x00', '0x00', '0x00', '0x00', '0x02', '0x00', '0x00', '0x06', '0x00', '0x00', '0x00', '0x00'], formatted: { note: `ノ😀 "]}[{ \\ ${i}` } });
    const text = JSON.stringify([entry(1), entry(2), entry(3)], null, 2) + '\n';
    const dir = mkdtempSync(path.join(tmpdir(), 'ns-lb-pieces-'));
    writeFileSync(path.join(dir, 'f'), text);
    const whole = parseCiliumLbMapDump(text, 'f', 'cilium_lb4_services_v2');
    expect(whole.value.entries.length).toBe(3);
    for (const size of [5, 64, 4096]) {
      expect(parseCiliumLbMapDumpPieces(() => readBundleFilePieces({ dir } as Bundle, 'f', size, size * 2), 'f', 'cilium_lb4_services_v2'), `reads of ${size} bytes`).toEqual(whole);
    }
  });

  const ENTRY = '{"key":["0x0a","0x60","0x00","0x01","0x01","0xbb","0x00","0x00","0x06","0x00","0x00","0x00"],"value":["0x00","0x00","0x00","0x00","0x01","0x00","0x00","0x01","0x00","0x00","0x00","0x00"]}';
  const shapes: [string, string, boolean][] = [
    ['empty output', '', false],
    ['blanks only', ' \n\t', false],
    ['bpftool error object', '{"error":"can\'t open pinned map"}\n', false],
    ['cut before the closing ]', `[${ENTRY},${ENTRY.slice(0, 40)}`, false],
    ['text after the array', `[${ENTRY}]\nWarning: something\n`, false],
    ['a no-break space before the array', `\u00a0[${ENTRY}]`, false],
    ['a } closing the array', `[${ENTRY}}`, false],
    ['an entry that is not an object, a bad key, a bad value', `[${ENTRY},[1,2],{"key":"x","value":[]},{"key":["0x01"],"value":"gone"},${ENTRY}]\n`, true],
    ['per-CPU values and an inner map id', `[{"key":["0x01","0x00","0x00","0x00"],"values":[{"cpu":0,"value":["0x01"]}]},{"key":["0x01","0x00","0x00","0x00"],"value":["0x02","0x00","0x00","0x00"],"inner_map_id":7}]`, true],
    ['a string with escapes and brackets', `[{"key":["0x0a","0x60","0x00","0x01","0x01","0xbb","0x00","0x00","0x06","0x00","0x00","0x00"],"value":["0x00","0x00","0x00","0x00","0x01","0x00","0x00","0x01","0x00","0x00","0x00","0x00"],"formatted":{"s":"a\\\\\\"]}["}}]`, true],
  ];

  it.each(shapes)('%s: the whole-text parse (piece path: %s)', (_label, text, piecePath) => {
    expect(scanBpftoolMapDumpPieces(cut(text, 3), 'f', () => {}) !== null).toBe(piecePath);
    const whole = parseCiliumLbMapDump(text, 'f', 'cilium_lb4_services_v2');
    for (const size of [1, 2, 5, 1000]) expect(parseCiliumLbMapDumpPieces(() => cut(text, size), 'f', 'cilium_lb4_services_v2'), `pieces of ${size}`).toEqual(whole);
  });
});

describe('a replay reads the LB maps in pieces', () => {
  it('the LB map probes are read in pieces, and lab-cilium\'s staged load equals its one-shot snapshot', async () => {
    expect(piecedProbes()).toEqual(expect.arrayContaining(['bpf-lb4-services', 'bpf-lb4-backends', 'bpf-lb4-reverse-nat', 'bpf-lb6-services']));
    const transport = new ReplayTransport(fixtureDir('lab-cilium'));
    const runs = await runProbes(transport, { stdoutAsPieces: piecedProbes() });
    const services = runs.find((r) => r.id === 'bpf-lb4-services')!;
    expect(services.result.stdout).toBe('');
    expect(services.result.stdoutPieces).toBeDefined();
    const base = { apiText: transport.apiText()!, source: { kind: 'replay' as const, label: 'lab-cilium', live: false }, capturedAt: runs[0]!.result.startedAt };
    const pieced = { ...base, runs };
    const done = await completeSnapshot(pieced, buildFirstSnapshot(pieced), { chunkChars: 300 });
    const once = buildSnapshot({ ...base, runs: await runProbes(transport, {}) });
    expect(done.lb).toEqual(once.lb);
    expect(done.lbMapsRead).toEqual(once.lbMapsRead);
    expect(done.lb?.value?.services.length).toBeGreaterThan(0);
  });
});
