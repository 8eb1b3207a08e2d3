/**
 * The direct nft -j reader (issue 23, src/parsers/nft-json-direct.ts) against the reader it
 * replaced (one `JSON.parse` tree, `parseNftJsonViaTree`): the same model — deep-equal,
 * and the same JSON text, so key order too — the same diagnostics, and the same `show
 * rules -o json`, on every nft -j text we have: the lab captures, the knftables corpus,
 * generated kube-proxy captures, and edits of them that leave nft's printed shape
 * (unknown and reordered keys, escapes, unicode, numbers of every form, nested sets, maps
 * and concatenations, verdict maps, text cut inside an item).
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateWorld, modeOutputs } from '../../bench/gen/capture.js';
import type { ParseResult } from '../../src/model/diagnostics.js';
import type { NftRuleset } from '../../src/model/nftables.js';
import type { NodeSnapshot } from '../../src/model/snapshot.js';
import { nftMetainfoOf, parseNftJson, parseNftJsonChunked, parseNftJsonPieces, parseNftJsonViaTree } from '../../src/parsers/nft-json.js';
import { showRules } from '../../src/report/rules.js';
import { fixtureDir, snapshotOf } from '../helpers/fixtures.js';
import { rng } from './nft-builders.js';
import { CHAIN, doc, editedDocuments, META, RULE, SADDR, TABLE } from '../helpers/nft-json-edits.js';

const repoRoot = path.resolve(import.meta.dirname, '../..');
const corpusFile = path.resolve(repoRoot, '../shared/corpus/nft/knftables-nft-json-list-outputs.txt');
const haveCorpus = existsSync(corpusFile);
if (!haveCorpus) console.warn(`skipping the knftables corpus in the direct-reader comparison: ${corpusFile} is absent`);

const LABS = ['lab-nftables', 'lab-iptables', 'lab-cilium'] as const;
const labText = (name: string) => readFileSync(path.join(fixtureDir(name), 'probes', 'nft-json.stdout'), 'utf8');

/** The model as JSON text (bigints as text): equal only when keys come in the same order too. */
function jsonOf(r: ParseResult<NftRuleset>): string {
  return JSON.stringify({ ruleset: r.value, metainfo: nftMetainfoOf(r.value), diagnostics: r.diagnostics }, (_k, v: unknown) =>
    typeof v === 'bigint' ? `${v}n` : v,
  );
}

/** Asserts the direct reader (whole, chunked, in pieces) gives the tree reader's result for `text`. */
async function expectSameAsTree(text: string, name: string, pieceSizes: readonly number[] = [7, 4096]): Promise<ParseResult<NftRuleset>> {
  const tree = parseNftJsonViaTree(text, name);
  const direct = parseNftJson(text, name);
  expect(direct, name).toEqual(tree);
  expect(jsonOf(direct), name).toBe(jsonOf(tree));
  expect(nftMetainfoOf(direct.value), name).toEqual(nftMetainfoOf(tree.value));
  const chunked = await parseNftJsonChunked(text, name, 64, async () => {});
  expect(jsonOf(chunked), `${name} chunked`).toBe(jsonOf(tree));
  for (const size of pieceSizes) {
    const pieces = () => Array.from({ length: Math.ceil(text.length / size) }, (_, i) => text.slice(i * size, (i + 1) * size));
    const read = await parseNftJsonPieces(pieces, name, 1000, async () => {});
    expect(jsonOf(read), `${name} in pieces of ${size}`).toBe(jsonOf(tree));
  }
  return tree;
}

/** `show rules -o json` of a lab snapshot whose nft ruleset is `ruleset`. */
function rulesJson(base: NodeSnapshot, r: ParseResult<NftRuleset>): string {
  return showRules({ ...base, nft: { ...base.nft!, value: r.value, diagnostics: r.diagnostics } }, 'json');
}

describe('direct nft -j reader equals the JSON.parse tree reader', () => {
  it.each(LABS)('%s capture: same model, diagnostics and show rules -o json', async (name) => {
    const text = labText(name);
    const tree = await expectSameAsTree(text, name, [1, 3, 7, 64, 4096]);
    const base = await snapshotOf('lab-nftables');
    const direct = parseNftJson(text, name);
    expect(rulesJson(base, direct)).toBe(rulesJson(base, tree));
  });

  it.skipIf(!haveCorpus)('every knftables JSON document of the corpus', async () => {
    const docs = readFileSync(corpusFile, 'utf8').split('\n').filter((l) => l.trim() && !l.startsWith('#'));
    expect(docs.length).toBe(18);
    for (const [i, text] of docs.entries()) await expectSameAsTree(text, `corpus doc ${i}`, [1, 5, 64]);
  });

  it('a generated kube-proxy capture of 1,500 Services × 5 endpoints (the bench generator) and its show rules -o json', async () => {
    const world = generateWorld({ services: 1500, endpoints: 5, seed: 'direct', modes: ['nftables'], conntrack: 10 });
    const text = modeOutputs(world, 'nftables').get('nft-json')!;
    expect(text.length).toBeGreaterThan(5_000_000);
    const tree = await expectSameAsTree(text, 'generated', [4096, 1 << 20]);
    expect(tree.value.tables[0]!.chains.length).toBeGreaterThan(9000);
    const base = await snapshotOf('lab-nftables');
    expect(rulesJson(base, parseNftJson(text, 'generated'))).toBe(rulesJson(base, tree));
    // A 5 MB text read several ways: seconds on an idle machine, more on a loaded CI one.
  }, 120_000);
});

describe('direct nft -j reader on edited documents equals the tree reader', () => {
  for (const [name, text] of Object.entries(editedDocuments())) {
    it(name, async () => {
      JSON.parse(text); // each document is valid JSON: the edits test the reading, not the syntax
      await expectSameAsTree(text, name, [1, 2, 5, 4096]);
    });
  }

  it('the lab capture with every item edited at random (keys added and moved, escapes, unicode, numbers)', async () => {
    const items = (JSON.parse(labText('lab-nftables')) as { nftables: unknown[] }).nftables.map((i) => JSON.stringify(i).replace(/":/g, '": ').replace(/,"/g, ', "'));
    const edits: ((item: string, r: () => number) => string)[] = [
      (s) => s.replace('"handle": ', '"x": null, "handle": '),
      (s) => s.replace(/"chain": ("[^"]*"), "handle": (\d+)/, '"handle": $2, "chain": $1'),
      (s) => s.replace(/"right": "([^"]*)"/, '"right": "$1\\u00e9"'),
      (s) => s.replace(/"right": "([^"]*)"/, '"right": "\\"$1\\\\"'),
      (s) => s.replace(/"port": (\d+)/, '"port": $1.0'),
      (s) => s.replace(/"handle": (\d+)/, '"handle": $1e0'),
      (s) => s.replace(/, "/, ',  "'),
      (s) => s.replace(/"comment": "/, '"comment": "ノ😀 '),
      (s) => s.replace('{"jump": {"target": ', '{"goto": {"target": '),
      (s) => s.replace('"op": "=="', '"op": "!="'),
    ];
    for (let seed = 1; seed <= 12; seed++) {
      const r = rng(seed);
      const edited = items.map((item, i) => (i > 0 && r() < 0.5 ? edits[Math.floor(r() * edits.length)]!(item, r) : item));
      await expectSameAsTree(`{"nftables": [${edited.join(', ')}]}`, `seed ${seed}`, [3, 4096]);
    }
  });

  it('text cut inside an item, at every position of the lab capture\'s last items, and bad JSON inside one', async () => {
    const text = labText('lab-nftables');
    const tail = text.length - 1200;
    for (let at = tail; at < text.length; at += 7) {
      const cut = text.slice(0, at);
      const tree = parseNftJsonViaTree(cut, 'cut');
      expect(tree.diagnostics.some((d) => d.code === 'json-syntax'), `cut at ${at}`).toBe(at < text.trimEnd().length);
      expect(jsonOf(parseNftJson(cut, 'cut')), `cut at ${at}`).toBe(jsonOf(tree));
      const read = await parseNftJsonPieces(() => [cut.slice(0, at >> 1), cut.slice(at >> 1)], 'cut', 500, async () => {});
      expect(jsonOf(read), `cut at ${at} in pieces`).toBe(jsonOf(tree));
    }
    for (const bad of ['"handle": 3,,', '"handle": 03', '"handle": 3.', '"right": "a\tb"', '"right": "\\x"', '"handle": +3']) {
      const broken = doc(META, TABLE, CHAIN('c'), RULE('c', SADDR).replace('"handle": 3', bad.startsWith('"handle"') ? bad : '"handle": 3').replace('"right": "10.0.0.1"', bad.startsWith('"right"') ? bad : '"right": "10.0.0.1"'));
      const tree = await expectSameAsTree(broken, bad, [1, 4096]);
      expect(tree.diagnostics.some((d) => d.code === 'json-syntax'), bad).toBe(true);
    }
  });
});
