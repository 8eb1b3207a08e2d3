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

const META = '{"metainfo": {"version": "1.0.6", "release_name": "Lester Gooch #5", "json_schema_version": 1}}';
const TABLE = '{"table": {"family": "ip", "name": "t", "handle": 1}}';
const CHAIN = (name: string, extra = '') => `{"chain": {"family": "ip", "table": "t", "name": ${JSON.stringify(name)}, "handle": 2${extra}}}`;
const RULE = (chain: string, expr: string, extra = '') => `{"rule": {"family": "ip", "table": "t", "chain": ${JSON.stringify(chain)}, "handle": 3${extra}, "expr": [${expr}]}}`;
const doc = (...items: string[]) => `{"nftables": [${items.join(', ')}]}\n`;

const SADDR = '{"match": {"op": "==", "left": {"payload": {"protocol": "ip", "field": "saddr"}}, "right": "10.0.0.1"}}';
const JUMP = '{"jump": {"target": "c"}}';

/** Rule bodies (statement lists) of every shape the reader reads itself or hands on. */
const STATEMENTS: Readonly<Record<string, string>> = {
  'kube-proxy endpoint rules': `${SADDR}, ${JUMP}`,
  'dnat to address and port': '{"match": {"op": "==", "left": {"meta": {"key": "l4proto"}}, "right": "tcp"}}, {"dnat": {"addr": "10.0.0.1", "port": 8080}}',
  'a numgen verdict map': '{"vmap": {"key": {"numgen": {"mode": "random", "mod": 2, "offset": 0}}, "data": {"set": [[0, {"goto": {"target": "c"}}], [1, {"goto": {"target": "d"}}]]}}}',
  'a concat verdict map on a named map': '{"vmap": {"key": {"concat": [{"payload": {"protocol": "ip", "field": "daddr"}}, {"meta": {"key": "l4proto"}}, {"payload": {"protocol": "th", "field": "dport"}}]}, "data": "@service-ips"}}',
  'set and prefix matches': '{"match": {"op": "==", "left": {"payload": {"protocol": "ip", "field": "daddr"}}, "right": "@cluster-ips"}}, {"match": {"op": "!=", "left": {"payload": {"protocol": "ip", "field": "saddr"}}, "right": {"prefix": {"addr": "10.128.0.0", "len": 9}}}}',
  'an anonymous set of concatenations and ranges': '{"match": {"op": "==", "left": {"concat": [{"meta": {"key": "l4proto"}}, {"payload": {"protocol": "th", "field": "dport"}}]}, "right": {"set": [{"concat": ["tcp", 80]}, {"concat": ["udp", {"range": [1000, 2000]}]}]}}}',
  'elem wrappers with timeouts and comments': '{"match": {"op": "==", "left": {"payload": {"protocol": "ip", "field": "saddr"}}, "right": {"set": [{"elem": {"val": "10.0.0.9", "timeout": 30, "comment": "x"}}, "10.0.0.8"]}}}',
  'a data map': '{"dnat": {"addr": {"map": {"key": {"numgen": {"mode": "inc", "mod": 2, "offset": 0}}, "data": {"set": [[0, "10.0.0.1"], [1, "10.0.0.2"]]}}}}}',
  'binop, ct, counters, masquerade, reject, log': '{"match": {"op": "==", "left": {"&": [{"meta": {"key": "mark"}}, 16384]}, "right": 0}}, {"match": {"op": "in", "left": {"ct": {"key": "state"}}, "right": ["established", "related"]}}, {"counter": {"packets": 12, "bytes": 3456}}, {"masquerade": {"flags": "fully-random"}}, {"reject": {"type": "icmp", "expr": "port-unreachable"}}, {"log": {"prefix": "p "}}',
  'verdicts': '{"accept": null}, {"drop": null}, {"return": null}, {"continue": null}, {"goto": {"target": "d"}}',
  'an empty statement list': '',
  'counters above 2^53 and above 2^64': '{"counter": {"packets": 9007199254740993, "bytes": 123456789012345678901234}}',
  'statements not modelled (raw payload, xt, named limit)': '{"match": {"op": "==", "left": {"payload": {"base": "ll", "offset": 0, "len": 8}}, "right": 1}}, {"xt": {"type": "match", "name": "comment"}}, {"limit": "lim1"}',
  'a match with an unknown operator': '{"match": {"op": "~", "left": {"meta": {"key": "mark"}}, "right": 1}}',
  'malformed statements': '{"match": {"op": "==", "left": {"meta": {"key": 5}}, "right": 1}}, {"dnat": {"addr": "1.2.3.4", "port": "x", "family": "ip9"}}, 5, {"a": 1, "b": 2}',
  'numbers of every form': '{"match": {"op": "==", "left": {"meta": {"key": "mark"}}, "right": 1e3}}, {"match": {"op": "==", "left": {"meta": {"key": "mark"}}, "right": -0}}, {"match": {"op": "==", "left": {"meta": {"key": "mark"}}, "right": 1.5}}, {"match": {"op": "==", "left": {"meta": {"key": "mark"}}, "right": 1234567890123456}}, {"match": {"op": "<", "left": {"meta": {"key": "mark"}}, "right": -17}}, {"match": {"op": "==", "left": {"meta": {"key": "mark"}}, "right": true}}',
  'escapes and unicode in values': '{"match": {"op": "==", "left": {"meta": {"key": "iifname"}}, "right": "eth\\"0\\\\ \\u00e9 ノ 😀"}}, {"jump": {"target": "c\\u0041"}}',
};

/** Whole items around those rule bodies, and items of other shapes. */
function editedDocuments(): Record<string, string> {
  const out: Record<string, string> = {};
  const chains = [CHAIN('c'), CHAIN('d'), CHAIN('cA')];
  for (const [name, expr] of Object.entries(STATEMENTS)) out[name] = doc(META, TABLE, ...chains, RULE('c', expr), RULE('d', expr));
  const base = [META, TABLE, ...chains];
  Object.assign(out, {
    'an unknown key in a rule': doc(...base, RULE('c', SADDR, ', "x-new": {"a": [1, 2]}')),
    'keys reordered in a rule': doc(...base, `{"rule": {"table": "t", "family": "ip", "handle": 3, "chain": "c", "expr": [${SADDR}]}}`),
    'keys reordered in a statement': doc(...base, RULE('c', '{"match": {"left": {"meta": {"key": "l4proto"}}, "op": "==", "right": "tcp"}}')),
    'a duplicate key in a rule (the last one wins)': doc(...base, RULE('c', SADDR).replace('"handle": 3', '"handle": 3, "handle": 4')),
    'a duplicate key in a statement': doc(...base, RULE('c', '{"jump": {"target": "c", "target": "d"}}')),
    'a rule comment with quotes, backslashes and unicode': doc(...base, RULE('c', SADDR, ', "comment": "a \\"q\\" \\\\ \\u00e9 ノ 😀 \\n"'), RULE('c', JUMP, ', "comment": "plain é"')),
    'a rule of a chain not listed': doc(...base, RULE('nowhere', SADDR)),
    'a rule of a table not listed': doc(META, TABLE, ...chains, RULE('c', SADDR).replace('"table": "t"', '"table": "u"')),
    'a rule of another family': doc(...base, RULE('c', SADDR).replace('"family": "ip"', '"family": "ip6"'), RULE('c', SADDR).replace('"family": "ip"', '"family": "ipx"')),
    'a chain with comment, a base chain, a chain of an unlisted table': doc(META, TABLE, CHAIN('c', ', "comment": "x"'), CHAIN('b', ', "type": "nat", "hook": "prerouting", "prio": -100, "policy": "accept"'), CHAIN('d').replace('"table": "t"', '"table": "u"')),
    'a chain listed twice': doc(...base, CHAIN('c').replace('"handle": 2', '"handle": 9')),
    'handles of every form': doc(...base, RULE('c', JUMP).replace('"handle": 3', '"handle": 1e2'), RULE('c', JUMP).replace('"handle": 3', '"handle": -5'), RULE('c', JUMP).replace('"handle": 3', '"handle": 12345678901234567')),
    'pretty-printed': JSON.stringify(JSON.parse(doc(...base, RULE('c', STATEMENTS['a numgen verdict map']!))), null, 2),
    'no space after separators': JSON.stringify(JSON.parse(doc(...base, RULE('c', `${SADDR}, ${JUMP}`)))),
    'sets and maps with elements, elements added later': doc(
      ...base,
      '{"set": {"family": "ip", "name": "s", "table": "t", "type": "ipv4_addr", "handle": 4, "flags": ["interval"], "elem": [{"prefix": {"addr": "10.0.0.0", "len": 8}}, {"range": ["10.1.0.1", "10.1.0.9"]}]}}',
      '{"map": {"family": "ip", "name": "m", "table": "t", "type": ["ipv4_addr", "inet_service"], "handle": 5, "map": "verdict", "elem": [[{"elem": {"val": {"concat": ["10.0.0.1", 80]}, "comment": "x"}}, {"goto": {"target": "c"}}]]}}',
      '{"element": {"family": "ip", "table": "t", "name": "s", "elem": ["10.2.0.1"]}}',
    ),
    'items of other kinds and shapes': doc(...base, '{"counter": {"family": "ip", "table": "t", "name": "k", "handle": 6, "packets": 1, "bytes": 2}}', '{"flowtable": {"family": "ip", "table": "t", "name": "f", "handle": 7}}', '{"chain": 5}', '"a string item"', '{"add": {"rule": {"family": "ip", "table": "t", "chain": "c", "expr": []}}}'),
    'schema version 2': doc(META.replace('"json_schema_version": 1', '"json_schema_version": 2'), TABLE, CHAIN('c'), RULE('c', SADDR)),
  });
  return out;
}

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
