/**
 * iptables-save read in pieces (issue 23 item 4: a replay of a 25,000-Service node need not
 * hold its 89 MB dump as one string while the rules are built): the model and diagnostics
 * are the whole-text parse's, on the lab captures, the shared corpus, the generated capture
 * and every shape the piece path hands to the whole-text parser (cut lines, stderr's
 * legacy-tables warning merged into the dump).
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateWorld, modeOutputs } from '../../bench/gen/capture.js';
import { buildFirstSnapshot, buildSnapshot, completeSnapshot, piecedProbes } from '../../src/collect/build-snapshot.js';
import { parseIptablesSave, parseIptablesSavePieces, type IptablesParseOptions } from '../../src/parsers/iptables-save.js';
import { readBundleFilePieces, type Bundle } from '../../src/sources/bundle.js';
import { runProbes } from '../../src/sources/probe-runner.js';
import { ReplayTransport } from '../../src/sources/replay.js';
import { fixtureDir } from '../helpers/fixtures.js';

const corpusDir = path.resolve(import.meta.dirname, '../../../shared/corpus/iptables');
const haveCorpus = existsSync(corpusDir);
if (!haveCorpus) console.warn(`skipping the iptables corpus in pieces: ${corpusDir} is absent`);

/** `text` cut every `size` characters (anywhere: mid-line, between \r and \n). */
function cut(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

/** `text` in pieces of about `size` characters, each ending a line (as the bundle reader cuts). */
function lineCut(text: string, size: number): string[] {
  const out: string[] = [];
  let from = 0;
  while (from < text.length) {
    const nl = text.indexOf('\n', from + size);
    const to = nl < 0 ? text.length : nl + 1;
    out.push(text.slice(from, to));
    from = to;
  }
  return out;
}

/** The pieces parse, with how many times it read the pieces (1: never joined; the first read may stop early). */
async function piecesParse(pieces: () => string[], options: IptablesParseOptions = { family: 'ipv4' }) {
  let reads = 0;
  let turns = 0;
  const result = await parseIptablesSavePieces(
    () => (reads++, pieces()),
    'iptables-save',
    options,
    200,
    async () => void turns++,
  );
  return { result, reads, turns };
}

/** Every iptables dump of the lab captures, the corpus (when present) and the generated capture. */
function dumps(): { label: string; text: string }[] {
  const out: { label: string; text: string }[] = [];
  for (const lab of ['lab-iptables', 'lab-nftables', 'lab-cilium']) {
    for (const f of readdirSync(path.join(fixtureDir(lab), 'probes')).filter((x) => /tables.*save.*\.stdout$/.test(x))) {
      const text = readFileSync(path.join(fixtureDir(lab), 'probes', f), 'utf8');
      if (text.length > 0) out.push({ label: `${lab}/${f}`, text });
    }
  }
  if (haveCorpus) for (const f of readdirSync(corpusDir)) out.push({ label: `corpus/${f}`, text: readFileSync(path.join(corpusDir, f), 'utf8') });
  const world = generateWorld({ services: 80, endpoints: 3, seed: 'ipt-pieces', modes: ['iptables'], conntrack: 10 });
  out.push({ label: 'generated', text: modeOutputs(world, 'iptables').get('iptables-save')! });
  return out;
}

describe('iptables-save in pieces', () => {
  const all = dumps();

  it('covers the labs and the generated capture', () => {
    expect(all.filter((d) => d.label.startsWith('lab-')).length).toBeGreaterThanOrEqual(2);
    expect(parseIptablesSave(all.find((d) => d.label === 'generated')!.text, 'x').value.tables.flatMap((t) => t.chains).length).toBeGreaterThan(200);
  });

  it.each([1, 300, 1 << 20])('line-aligned pieces of about %i characters: the whole-text parse, the pieces read once', async (size) => {
    for (const d of all) {
      const whole = parseIptablesSave(d.text, 'iptables-save', { family: 'ipv4' });
      const { result, reads } = await piecesParse(() => lineCut(d.text, size));
      expect(result, d.label).toEqual(whole);
      // Read twice only to find a `*table` line beyond the first piece, or when a piece holds the legacy warning.
      if (!d.text.includes('tables-legacy tables present') && /^\*/m.test(lineCut(d.text, size)[0] ?? '')) expect(reads, d.label).toBe(1);
    }
  });

  it('pieces cut anywhere (mid-line, inside \\r\\n): joined and parsed whole, same result', async () => {
    for (const d of all) {
      const whole = parseIptablesSave(d.text, 'iptables-save', { family: 'ipv4' });
      for (const size of [7, 1000]) expect((await piecesParse(() => cut(d.text, size))).result, `${d.label} every ${size}`).toEqual(whole);
    }
  });

  it('read from a bundle file in small reads (CRLF, a BOM, multi-byte comments)', async () => {
    const generated = all.find((d) => d.label === 'generated')!.text.replaceAll('--comment "', '--comment "ノ😀é ');
    const text = '\ufeff' + generated.replaceAll('\n', '\r\n');
    const dir = mkdtempSync(path.join(tmpdir(), 'ns-ipt-pieces-'));
    writeFileSync(path.join(dir, 'f'), text);
    const whole = parseIptablesSave(text, 'iptables-save', { family: 'ipv4' });
    expect(whole.value.tables.length).toBeGreaterThan(0);
    for (const size of [64, 4096]) {
      const { result } = await piecesParse(() => [...readBundleFilePieces({ dir } as Bundle, 'f', size, size * 4)]);
      expect(result, `reads of ${size} bytes`).toEqual(whole);
    }
  });

  const block = '*nat\n:PREROUTING ACCEPT [0:0]\n:KUBE-SERVICES - [0:0]\n-A PREROUTING -j KUBE-SERVICES\n-A KUBE-SERVICES -d 10.96.0.1/32 -p tcp --dport 443 -j ACCEPT\nCOMMIT\n';
  const shapes: [string, string, IptablesParseOptions][] = [
    ['empty', '', {}],
    ['stderr\'s warning cutting a rule line', block.replace('-A KUBE-SERVICES -d 10.96', '-A KUBE-SERVICES -d 10.# Warning: iptables-legacy tables present, use iptables-legacy-save to see them\n96'), {}],
    ['stderr\'s warning at the end', block + 'Warning: iptables-legacy tables present, use iptables-legacy-save to see them\n', {}],
    ['a *table line only in a later piece', '-A KUBE-SERVICES -j ACCEPT\n'.repeat(40) + block, { table: 'nat' }],
    ['list-rules (-S) with no *table at all', '-P INPUT ACCEPT\n-N KUBE-X\n-A KUBE-X -j DROP\n'.repeat(20), { table: 'filter' }],
    ['no COMMIT, a garbage line', block.replace('COMMIT\n', 'garbage here\n'), {}],
  ];

  it.each(shapes)('%s: the whole-text parse', async (_label, text, options) => {
    const whole = parseIptablesSave(text, 'iptables-save', options);
    for (const size of [1, 20, 100]) {
      expect((await piecesParse(() => lineCut(text, size), options)).result, `lines of ${size}`).toEqual(whole);
      expect((await piecesParse(() => cut(text, size), options)).result, `every ${size}`).toEqual(whole);
    }
  });
});

describe('a replay reads iptables-save in pieces', () => {
  it.each(['lab-iptables', 'lab-cilium'])('%s: the staged load over pieces equals the one-shot snapshot', async (lab) => {
    expect(piecedProbes()).toEqual(expect.arrayContaining(['iptables-save', 'ip6tables-save']));
    const transport = new ReplayTransport(fixtureDir(lab));
    const runs = await runProbes(transport, { stdoutAsPieces: piecedProbes() });
    expect(runs.find((r) => r.id === 'iptables-save')?.result.stdoutPieces).toBeDefined();
    const base = { apiText: transport.apiText()!, source: { kind: 'replay' as const, label: lab, live: false }, capturedAt: runs[0]!.result.startedAt };
    const pieced = { ...base, runs };
    const done = await completeSnapshot(pieced, buildFirstSnapshot(pieced), { chunkChars: 300 });
    const once = buildSnapshot({ ...base, runs: await runProbes(transport, {}) });
    expect(done).toEqual(once);
    expect(done.iptables?.value?.tables.length).toBeGreaterThan(0);
  });
});
