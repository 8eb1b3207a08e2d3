/**
 * nft -j read in byte pieces (issue 10: a replay of a 25,000-Service node must not hold
 * the 229 MB one-line `nft -j list ruleset` whole): the bundle reader cuts a too-long line
 * between characters, the item scan follows strings, escapes and numbers across every
 * cut, and the result is the one-shot parse's, diagnostics and positions included.
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateWorld, modeOutputs } from '../../bench/gen/capture.js';
import { buildSnapshot, completeSnapshot, buildFirstSnapshot, piecedProbes, type SnapshotInput } from '../../src/collect/build-snapshot.js';
import { parseNftJson, parseNftJsonPieces } from '../../src/parsers/nft-json.js';
import { readBundleFile, readBundleFilePieces, type Bundle } from '../../src/sources/bundle.js';
import { runProbes, type ProbeRun } from '../../src/sources/probe-runner.js';
import { ReplayTransport } from '../../src/sources/replay.js';
import { fixtureDir } from '../helpers/fixtures.js';

const repoRoot = path.resolve(import.meta.dirname, '../..');
const corpusFile = path.resolve(repoRoot, '../shared/corpus/nft/knftables-nft-json-list-outputs.txt');
const haveCorpus = existsSync(corpusFile);
if (!haveCorpus) console.warn(`skipping the nft JSON corpus sweep in pieces: ${corpusFile} is absent`);

/** A bundle directory holding one file `f` with `bytes` (only `dir` of the bundle is read). */
function bundleWith(bytes: string | Buffer): Bundle {
  const dir = mkdtempSync(path.join(tmpdir(), 'ns-nft-pieces-'));
  writeFileSync(path.join(dir, 'f'), bytes);
  return { dir } as Bundle;
}

/** `text` cut every `size` characters (anywhere: inside strings, escapes, numbers). */
function cut(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

/** The pieces parse of `pieces` and how many times it read them (2: handed to the one-shot parse). */
async function piecesParse(pieces: () => Iterable<string>, origin: string, chunkChars = 64) {
  let reads = 0;
  let turns = 0;
  const result = await parseNftJsonPieces(
    () => {
      reads++;
      return pieces();
    },
    origin,
    chunkChars,
    async () => {
      turns++;
    },
  );
  return { result, reads, turns };
}

const META = '{"metainfo": {"version": "1.0.6", "release_name": "Lester Gooch #5", "json_schema_version": 1}}';
const TABLE = '{"table": {"family": "ip", "name": "t", "handle": 1}}';
const CHAIN = (name: string) => `{"chain": {"family": "ip", "table": "t", "name": ${JSON.stringify(name)}, "handle": 2}}`;
const RULE = (comment: string, packets = '5') =>
  `{"rule": {"family": "ip", "table": "t", "chain": "c", "handle": 3, "comment": ${JSON.stringify(comment)}, "expr": [{"counter": {"packets": ${packets}, "bytes": 300}}, {"accept": null}]}}`;
const doc = (...items: string[]) => `{"nftables": [${items.join(', ')}]}\n`;

/** Documents read item by item to the end: a cut falls inside every kind of token somewhere. */
const GOOD: Readonly<Record<string, string>> = {
  'escaped quotes, backslashes and brackets in strings': doc(META, TABLE, CHAIN('c'), RULE('a ] } , [ { \\" \\\\ end'), RULE('\\\\'), RULE('x\\"')),
  'multi-byte characters (2, 3 and 4 bytes) in names and comments': doc(META, TABLE, CHAIN('c'), CHAIN('ké→'), RULE('ノード 😀 €'), RULE('😀😀')),
  'counters above 2^53 (quoted before JSON.parse) and pretty-printing': doc(META, TABLE, CHAIN('c'), RULE('big', '123456789012345678901'), RULE('n', '9007199254740993'))
    .replace(/, \{/g, ',\n  {'),
  'a bad object kept beside good ones': doc(META, TABLE, '{"chain": 5}', CHAIN('c'), '"a string item"', RULE('after')),
};

/** Documents of another shape: handed whole to the one-shot parse, whose diagnostics (line, column) they get. */
const ODD: Readonly<Record<string, string>> = {
  truncated: doc(META, TABLE, CHAIN('c'), RULE('x')).slice(0, -31),
  'bad JSON inside an item, on line 3': doc(META, TABLE, '{"chain": {"family": ip}}').replace(/, \{/g, ',\n{'),
  'trailing data': `${doc(META, TABLE)} extra`,
  'a trailing comma': doc(META, TABLE, '').replace(', ]', ',]'),
  'the array closed by }': doc(META, TABLE).replace(']}', '}}'),
  'empty array': '{"nftables": []}',
  'no metainfo first': doc(TABLE, META),
  'not JSON (nft text)': 'table ip t {\n\tchain c {\n\t}\n}\n',
  'a space inside the opening key': '{"nft ables": []}',
  empty: '',
};

describe('readBundleFilePieces with a line longer than maxLineChars', () => {
  const text = `short\n${doc(META, TABLE, CHAIN('ké→'), RULE('ノード 😀 € \\" x'), RULE('y'))}tail`;
  it('pieces of every small byte size join to the file text; a line is cut only past maxLineChars, never inside a character', () => {
    const bundle = bundleWith(text);
    for (let size = 1; size <= 9; size++) {
      for (const maxLine of [1, 5, 40]) {
        const pieces = [...readBundleFilePieces(bundle, 'f', size, maxLine)];
        expect(pieces.join(''), `size ${size} max ${maxLine}`).toBe(text);
        for (const p of pieces.slice(0, -1)) {
          expect(p.endsWith('\n') || p.length >= maxLine, `size ${size} max ${maxLine}: ${JSON.stringify(p)}`).toBe(true);
          // A surrogate pair is never split: no piece ends with a high surrogate.
          const last = p.charCodeAt(p.length - 1);
          expect(last >= 0xd800 && last <= 0xdbff).toBe(false);
        }
        expect(pieces.some((p) => p.includes('\uFFFD'))).toBe(false);
        if (maxLine === 1) expect(pieces.length).toBeGreaterThan(text.length / Math.max(size, 4) / 2);
      }
    }
  });

  it('invalid UTF-8 decodes as a whole-file read decodes it', () => {
    const bytes = Buffer.concat([Buffer.from('{"a": "'), Buffer.from([0xff, 0xe2, 0x82, 0x41, 0xf0, 0x9f]), Buffer.from('"}'), Buffer.from([0xe2, 0x82])]);
    const bundle = bundleWith(bytes);
    for (let size = 1; size <= 9; size++) expect([...readBundleFilePieces(bundle, 'f', size, 2)].join(''), `size ${size}`).toBe(readBundleFile(bundle, 'f'));
  });
});

describe('parseNftJsonPieces equals parseNftJson', () => {
  for (const [name, text] of Object.entries(GOOD)) {
    it(`${name}: cut anywhere, read item by item, once`, async () => {
      const once = parseNftJson(text, name);
      for (const size of [1, 2, 3, 5, 7, 13, 64, text.length]) {
        const { result, reads, turns } = await piecesParse(() => cut(text, size), name);
        expect(result, `size ${size}`).toEqual(once);
        expect(reads, `size ${size}`).toBe(1);
        expect(turns).toBeGreaterThan(0);
      }
    });
  }

  for (const [name, text] of Object.entries(ODD)) {
    it(`${name}: the one-shot parse decides`, async () => {
      const once = parseNftJson(text, name);
      for (const size of [1, 4, 9, text.length || 1]) {
        const { result, reads } = await piecesParse(() => cut(text, size), name);
        expect(result, `size ${size}`).toEqual(once);
        // The direct reader's, then the one-shot parse's of the joined pieces.
        expect(reads, `size ${size}`).toBe(2);
      }
    });
  }

  it('nft\'s item start appearing nested (not nft output, valid JSON): read item by item, same result', async () => {
    const nested = `{"rule": {"family": "ip", "table": "t", "chain": "c", "handle": 4, "expr": [{"accept": null}, {"rule": {"family": "ip", "x": 1}}]}}`;
    const text = doc(META, TABLE, CHAIN('c'), RULE('a'), nested, RULE('b'));
    const once = parseNftJson(text, 'nested');
    expect(once.diagnostics.some((d) => d.code === 'bad-object' || d.code === 'unknown-statement')).toBe(true);
    for (const size of [1, 5, text.length]) {
      const { result, reads } = await piecesParse(() => cut(text, size), 'nested', 1);
      expect(result, `size ${size}`).toEqual(once);
      // The direct reader reads the nested rule through JSON.parse, to the end, in one read.
      expect(reads, `size ${size}`).toBe(1);
    }
  });

  it('nft -j output of the generated huge-scale kind: every batch cut lands between items (one read)', async () => {
    const world = generateWorld({ services: 60, endpoints: 2, seed: 'batches', modes: ['nftables'], conntrack: 10 });
    const text = modeOutputs(world, 'nftables').get('nft-json')!;
    const once = parseNftJson(text, 'nft-json');
    for (const chunkChars of [1, 100, 10_000]) {
      const { result, reads, turns } = await piecesParse(() => cut(text, 4096), 'nft-json', chunkChars);
      expect(result, `batches of ${chunkChars}`).toEqual(once);
      expect(reads).toBe(1);
      if (chunkChars === 1) expect(turns).toBeGreaterThan(100);
    }
  });

  it.skipIf(!haveCorpus)('every knftables JSON document of the corpus and the lab captures, cut every 1 to 9 characters', async () => {
    const docs = readFileSync(corpusFile, 'utf8').split('\n').filter((l) => l.trim() && !l.startsWith('#'));
    expect(docs.length).toBe(18);
    const labs = ['lab-iptables', 'lab-nftables', 'lab-cilium'].map((name) => readFileSync(path.join(fixtureDir(name), 'probes', 'nft-json.stdout'), 'utf8'));
    for (const [i, text] of [...docs, ...labs].entries()) {
      const once = parseNftJson(text, `doc ${i}`);
      for (let size = 1; size <= 9; size++) expect((await piecesParse(() => cut(text, size), `doc ${i}`)).result, `doc ${i} size ${size}`).toEqual(once);
    }
  });

  it('a generated kube-proxy ruleset read from a bundle file in byte pieces (multi-byte comments, cuts inside characters)', async () => {
    const world = generateWorld({ services: 120, endpoints: 3, seed: 'pieces', modes: ['nftables'], conntrack: 10 });
    // Multi-byte characters where nft prints comments, so that many reads end inside one.
    const text = modeOutputs(world, 'nftables').get('nft-json')!.replaceAll('"comment": "', '"comment": "ノ😀é ');
    expect(text.split('\n').length).toBeLessThanOrEqual(2);
    const bundle = bundleWith(text);
    const once = parseNftJson(text, 'nft-json');
    expect(once.value.tables.length).toBeGreaterThan(0);
    for (const size of [7, 1000, 65_536]) {
      const { result, reads } = await piecesParse(() => readBundleFilePieces(bundle, 'f', size, size * 3), 'nft-json', 4096);
      expect(result, `size ${size}`).toEqual(once);
      expect(reads).toBe(1);
    }
  });
});

/** A fixture's runs as a replay session reads them (pieced probes in pieces), each re-cut every `size` characters. */
async function piecedInput(name: string, size: number, keep: (run: ProbeRun) => boolean = () => true): Promise<{ pieced: SnapshotInput; whole: SnapshotInput }> {
  const transport = new ReplayTransport(fixtureDir(name));
  const runs = (await runProbes(transport, { stdoutAsPieces: piecedProbes() })).filter(keep);
  const wholeRuns = (await runProbes(transport, {})).filter(keep);
  const recut = runs.map((r) => {
    const pieces = r.result.stdoutPieces;
    return pieces ? { ...r, result: { ...r.result, stdoutPieces: () => cut([...pieces()].join(''), size) } } : r;
  });
  const base = { apiText: transport.apiText()!, source: { kind: 'replay' as const, label: name, live: false }, capturedAt: runs[0]!.result.startedAt };
  return { pieced: { ...base, runs: recut }, whole: { ...base, runs: wholeRuns } };
}

describe('staged load over pieces', () => {
  it.each([97, 1000])('lab-nftables, pieces of %i characters (lines cut too): the one-shot snapshot', async (size) => {
    const { pieced, whole } = await piecedInput('lab-nftables', size);
    expect(pieced.runs.filter((r) => r.result.stdoutPieces).map((r) => r.id).sort()).toEqual([...piecedProbes()].filter((id) => pieced.runs.find((r) => r.id === id)?.status === 'ok').sort());
    const done = await completeSnapshot(pieced, buildFirstSnapshot(pieced), { chunkChars: 300 });
    const once = buildSnapshot(whole);
    expect(done).toEqual(once);
    expect(done.nft?.value?.tables.length).toBeGreaterThan(0);
    expect(done.conntrack?.value?.entries.length).toBeGreaterThan(0);
  });

  it('without nft -j, the nft text is joined from its pieces and parsed', async () => {
    const { pieced, whole } = await piecedInput('lab-nftables', 500, (r) => r.id !== 'nft-json');
    expect(pieced.runs.find((r) => r.id === 'nft-text')?.result.stdoutPieces).toBeDefined();
    const done = await completeSnapshot(pieced, buildFirstSnapshot(pieced), { chunkChars: 300 });
    expect(done.nft).toEqual(buildSnapshot(whole).nft);
    expect(done.nft?.probe?.id).toBe('nft-text');
    expect(done.nft?.value?.tables.length).toBeGreaterThan(0);
  });
});
