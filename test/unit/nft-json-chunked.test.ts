/**
 * The nft -j parse in pieces (issue 10: the 229 MB output of a 25,000-Service node must
 * not become one JSON tree, nor block the event loop for seconds) gives exactly the
 * one-shot parse's ruleset and diagnostics: on the lab captures, every knftables JSON
 * document of the corpus, a generated ruleset, and inputs of every odd shape.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateWorld, modeOutputs } from '../../bench/gen/capture.js';
import { parseNftJson, parseNftJsonChunked } from '../../src/parsers/nft-json.js';
import { fixtureDir } from '../helpers/fixtures.js';

const repoRoot = path.resolve(import.meta.dirname, '../..');
const corpusFile = path.resolve(repoRoot, '../shared/corpus/nft/knftables-nft-json-list-outputs.txt');
const haveCorpus = existsSync(corpusFile);
if (!haveCorpus) console.warn(`skipping the nft JSON corpus sweep: ${corpusFile} is absent`);

/** Asserts the chunked parse (at several piece sizes) equals the one-shot parse; returns the turns taken at size 1. */
async function expectSameAsOneShot(text: string, name: string): Promise<number> {
  const once = parseNftJson(text, name);
  let turnsAtOne = 0;
  for (const chunk of [1, 64, 1 << 20]) {
    let turns = 0;
    const pieces = await parseNftJsonChunked(text, name, chunk, async () => {
      turns++;
    });
    expect(pieces, `${name} at ${chunk} characters`).toEqual(once);
    if (chunk === 1) turnsAtOne = turns;
  }
  return turnsAtOne;
}

const META = '{"metainfo": {"version": "1.0.6", "release_name": "Lester Gooch #5", "json_schema_version": 1}}';
const TABLE = '{"table": {"family": "ip", "name": "t", "handle": 1}}';
const CHAIN = '{"chain": {"family": "ip", "table": "t", "name": "c", "handle": 2}}';
const RULE = (comment: string, packets = '5') =>
  `{"rule": {"family": "ip", "table": "t", "chain": "c", "handle": 3, "comment": ${JSON.stringify(comment)}, "expr": [{"counter": {"packets": ${packets}, "bytes": 300}}, {"accept": null}]}}`;
const doc = (...items: string[]) => `{"nftables": [${items.join(', ')}]}`;

/** Odd inputs, and whether they are read item by item to the end (true) or (also) handed to the one-shot parse. */
const ODD: Readonly<Record<string, readonly [string, boolean]>> = {
  'brackets, braces, commas and escaped quotes in strings': [doc(META, TABLE, CHAIN, RULE('a ] } , [ { \\" \\\\ end')), true],
  'a counter above 2^53': [doc(META, TABLE, CHAIN, RULE('big', '123456789012345678901')), true],
  'pretty-printed with newlines': [doc(META, TABLE, CHAIN, RULE('x')).replace(/, /g, ',\n    ').replace('[', '[\n    '), true],
  'a bad object kept beside good ones': [doc(META, TABLE, '{"chain": 5}', CHAIN), true],
  'empty array': ['{"nftables": []}', false],
  'metainfo only': [doc(META), true],
  'no metainfo': [doc(TABLE, CHAIN, RULE('x')), false],
  'metainfo not first': [doc(TABLE, META, CHAIN), false],
  truncated: [doc(META, TABLE, CHAIN, RULE('x')).slice(0, -30), false],
  'bad JSON inside an item': [doc(META, TABLE, '{"chain": {"family": ip}}'), false],
  'trailing data': [`${doc(META, TABLE)} extra`, false],
  'another top-level key': ['{"other": [1, 2]}', false],
  'not JSON (nft text)': ['table ip t {\n\tchain c {\n\t}\n}\n', false],
  empty: ['', false],
};

describe('parseNftJsonChunked equals parseNftJson', () => {
  for (const [name, [text, itemByItem]] of Object.entries(ODD)) {
    it(`${name}${itemByItem ? '' : ' (the one-shot parse decides)'}`, async () => {
      const turns = await expectSameAsOneShot(text, name);
      // At one character a turn the loop turns after every item (nft-json-direct.ts).
      if (itemByItem) expect(turns).toBe((JSON.parse(text) as { nftables: unknown[] }).nftables.length);
    });
  }

  it.each(['lab-iptables', 'lab-nftables', 'lab-cilium'])('%s capture, turning the event loop between items', async (name) => {
    const text = readFileSync(path.join(fixtureDir(name), 'probes', 'nft-json.stdout'), 'utf8');
    const turns = await expectSameAsOneShot(text, name);
    expect(turns).toBeGreaterThan(10);
  });

  it('a generated kube-proxy nftables ruleset of 300 Services', async () => {
    const world = generateWorld({ services: 300, endpoints: 3, seed: 'chunked', modes: ['nftables'], conntrack: 10 });
    const text = modeOutputs(world, 'nftables').get('nft-json')!;
    expect(text.length).toBeGreaterThan(100_000);
    await expectSameAsOneShot(text, 'generated');
  });

  it.skipIf(!haveCorpus)('every knftables JSON document of the corpus', async () => {
    const docs = readFileSync(corpusFile, 'utf8').split('\n').filter((l) => l.trim() && !l.startsWith('#'));
    expect(docs.length).toBe(18);
    for (const [i, d] of docs.entries()) await expectSameAsOneShot(d, `knftables ${i}`);
  });
});
