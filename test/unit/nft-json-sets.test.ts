/**
 * The direct nft -j reader's own read of set and map elements (issue 23, session 17:
 * src/parsers/nft-json-direct.ts `setItem`): a set or map item whose `elem` list comes last
 * and holds values or `[KEY, VALUE]` pairs is walked without its elements, which are read
 * as the sharer's pairs. Compared with the reference (`parseNftJsonViaTree`, one
 * `JSON.parse` tree) on the lab captures and a generated kube-proxy capture (where the path
 * must be taken: counted), and on sets and maps of every other shape, where it must hand the
 * item (or the text) on and give the same model, JSON and diagnostics.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateWorld, modeOutputs } from '../../bench/gen/capture.js';
import type { ParseResult } from '../../src/model/diagnostics.js';
import type { NftRuleset } from '../../src/model/nftables.js';
import { nftMetainfoOf, parseNftJson, parseNftJsonLazyPieces, parseNftJsonPieces, parseNftJsonViaTree } from '../../src/parsers/nft-json.js';
import { setItemsRead } from '../../src/parsers/nft-json-direct.js';
import { fixtureDir } from '../helpers/fixtures.js';
import { CHAIN, doc, JUMP, META, RULE, SADDR, TABLE } from '../helpers/nft-json-edits.js';

/** The model, metainfo and diagnostics as JSON text (bigints as text): key order counts. */
function jsonOf(r: ParseResult<NftRuleset>): string {
  return JSON.stringify({ ruleset: r.value, metainfo: nftMetainfoOf(r.value), diagnostics: r.diagnostics }, (_k, v: unknown) =>
    typeof v === 'bigint' ? `${v}n` : v,
  );
}

/** Asserts every direct read of `text` (whole, in pieces, lazy with every chain built) gives the tree reader's answer; the set items it read itself. */
async function expectSameAsTree(text: string, name: string): Promise<number> {
  const tree = parseNftJsonViaTree(text, name);
  const before = setItemsRead();
  const whole = parseNftJson(text, name);
  const read = setItemsRead() - before;
  expect(whole, name).toEqual(tree);
  expect(jsonOf(whole), name).toBe(jsonOf(tree));
  for (const size of [5, 4096]) {
    const pieces = () => Array.from({ length: Math.ceil(text.length / size) }, (_, i) => text.slice(i * size, (i + 1) * size));
    expect(jsonOf(await parseNftJsonPieces(pieces, name, 1000, async () => {})), `${name} in pieces of ${size}`).toBe(jsonOf(tree));
    const lazy = await parseNftJsonLazyPieces(pieces, name, 1000, async () => {});
    expect(jsonOf(lazy), `${name} lazy in pieces of ${size}`).toBe(jsonOf(tree));
  }
  return read;
}

const base = [META, TABLE, CHAIN('c'), CHAIN('d')];
const SET = (extra: string, elem: string) => `{"set": {"family": "ip", "name": "s", "table": "t", "type": "ipv4_addr", "handle": 4${extra}, "elem": [${elem}]}}`;
const MAP = (extra: string, elem: string) =>
  `{"map": {"family": "ip", "name": "m", "table": "t", "type": ["ipv4_addr", "inet_proto", "inet_service"], "handle": 5${extra}, "map": "verdict", "elem": [${elem}]}}`;
const PAIR = (ip: string, port: number, to = 'c') => `[{"concat": ["${ip}", "tcp", ${port}]}, {"goto": {"target": "${to}"}}]`;

/** Documents whose set and map items this reader reads itself (how many: the value). */
const READ_HERE: Readonly<Record<string, [string, number]>> = {
  "kube-proxy's set and verdict map": [doc(...base, SET('', '"10.0.0.1", "10.0.0.2"'), MAP('', `${PAIR('10.0.0.1', 80)}, ${PAIR('10.0.0.2', 443, 'd')}`), RULE('c', `${SADDR}, ${JUMP}`)), 2],
  'a map of exactly two elements and one of one': [doc(...base, MAP('', `${PAIR('10.0.0.1', 80)}, ${PAIR('10.0.0.1', 80)}`), MAP('', PAIR('10.0.0.3', 53)).replace('"m"', '"m1"')), 2],
  'empty lists': [doc(...base, SET('', ''), MAP('', '')), 2],
  'prefixes, numbers, verdicts and set references as keys': [
    doc(...base, SET(', "flags": ["interval"]', '{"prefix": {"addr": "10.0.0.0", "len": 8}}, 7, {"accept": null}, "@other"')),
    1,
  ],
  'a data map and a map to a concatenation': [
    doc(...base, '{"map": {"family": "ip", "name": "d", "table": "t", "type": "ipv4_addr", "handle": 6, "map": "ipv4_addr . inet_service", "elem": [["10.0.0.1", {"concat": ["10.1.0.1", 80]}], ["10.0.0.2", "10.1.0.2"]]}}'),
    1,
  ],
  'a set listed twice, elements added by an element item between': [
    doc(...base, SET('', '"10.0.0.1"'), '{"element": {"family": "ip", "table": "t", "name": "s", "elem": ["10.2.0.1"]}}', SET('', '"10.0.0.2", "10.0.0.1"')),
    2,
  ],
  'a comment that spells the elem key, counters and timeouts in the head': [
    doc(...base, SET(', "comment": "x, \\"elem\\": [", "timeout": 30, "gc-interval": 10, "size": 65535, "policy": "memory", "stmt": [{"counter": null}]', '"10.0.0.1"')),
    1,
  ],
};

/** Documents whose set and map items go to the tree walk (or the text to the one-shot parse). */
const HANDED_ON: Readonly<Record<string, string>> = {
  'elem wrappers with a comment, timeout and counter': doc(...base, SET('', '{"elem": {"val": "10.0.0.1", "comment": "x", "timeout": 5, "counter": {"packets": 1, "bytes": 2}}}')),
  'a string with escapes': doc(...base, SET('', '"10.0.0.1", "a\\"b\\u00e9"')),
  'ranges': doc(...base, SET(', "flags": ["interval"]', '{"range": ["10.1.0.1", "10.1.0.9"]}')),
  'elem not the last key': doc(...base, SET('', '"10.0.0.1"').replace(', "elem": ["10.0.0.1"]}}', ', "elem": ["10.0.0.1"], "x-new": 1}}')),
  'elem twice': doc(...base, SET('', '"10.0.0.1"').replace('"handle": 4', '"handle": 4, "elem": ["10.9.9.9"]')),
  'a map element that is not a pair': doc(...base, MAP('', '"10.0.0.1"'), MAP('', '[{"concat": ["10.0.0.1", "tcp", 80]}]').replace('"m"', '"m2"')),
  'a set element that is a list': doc(...base, SET('', '["10.0.0.1", "10.0.0.2"]')),
  'a map whose elem is one bare pair': doc(...base, MAP('', '').replace('"elem": []', `"elem": ${PAIR('10.0.0.1', 80)}`)),
  'unknown set flags (the walk says so)': doc(...base, SET(', "flags": ["constant", "x-new"]', '"10.0.0.1"')),
  'a set of an unlisted table and of no family': doc(META, TABLE, SET('', '"10.0.0.1"').replace('"table": "t"', '"table": "u"'), SET('', '"10.0.0.2"').replace('"family": "ip"', '"family": "ipx"')),
  'a malformed head (type a number)': doc(...base, SET('', '"10.0.0.1"').replace('"type": "ipv4_addr"', '"type": 5')),
  'a map with a malformed map type': doc(...base, MAP('', PAIR('10.0.0.1', 80)).replace('"map": "verdict"', '"map": 7')),
  'a bad value among good ones': doc(...base, SET('', '"10.0.0.1", {"x-new": 1}, "10.0.0.2"')),
  'no space after separators': JSON.stringify(JSON.parse(doc(...base, SET('', '"10.0.0.1"'), MAP('', PAIR('10.0.0.1', 80))))),
  'pretty-printed': JSON.stringify(JSON.parse(doc(...base, SET('', '"10.0.0.1"'))), null, 2),
};

describe('set and map elements read by the direct nft -j reader equal the tree walk', () => {
  for (const [name, [text, count]] of Object.entries(READ_HERE)) {
    it(`${name}: read here`, async () => {
      expect(await expectSameAsTree(text, name)).toBe(count);
    });
  }

  for (const [name, text] of Object.entries(HANDED_ON)) {
    it(`${name}: handed on, same answer`, async () => {
      expect(await expectSameAsTree(text, name)).toBe(0);
    });
  }

  it('the lab captures (their sets and maps, read here where they are of the shape)', async () => {
    let read = 0;
    for (const lab of ['lab-nftables', 'lab-iptables', 'lab-cilium']) {
      read += await expectSameAsTree(readFileSync(path.join(fixtureDir(lab), 'probes', 'nft-json.stdout'), 'utf8'), lab);
    }
    // lab-nftables is kube-proxy's nftables mode: its sets and maps are of the shape.
    expect(read).toBeGreaterThan(0);
  });

  it('a generated kube-proxy capture: every set and map of unwrapped elements read here', async () => {
    const text = modeOutputs(generateWorld({ services: 60, endpoints: 3, seed: 'sets', modes: ['nftables'], conntrack: 10 }), 'nftables').get('nft-json')!;
    // Items with elements, none in an `{"elem": …}` wrapper (a Service without endpoints has a commented one).
    const items = (JSON.parse(text) as { nftables: Record<string, Record<string, unknown>>[] }).nftables
      .map((x) => x['set'] ?? x['map'])
      .filter((s) => s !== undefined && Array.isArray(s['elem']) && !JSON.stringify(s['elem']).includes('{"elem":')).length;
    expect(items).toBeGreaterThan(0);
    expect(await expectSameAsTree(text, 'generated')).toBe(items);
  });

  it('a set and a map cut at every place, and with one character changed at every place', async () => {
    const text = doc(META, TABLE, SET('', '"10.0.0.1", "10.0.0.2"'), MAP('', `${PAIR('10.0.0.1', 80)}, ${PAIR('10.0.0.2', 443, 'd')}`));
    const from = text.indexOf('{"set"');
    for (let at = from; at < text.length; at += 3) {
      const cut = text.slice(0, at);
      expect(jsonOf(parseNftJson(cut, 'cut')), `cut at ${at}`).toBe(jsonOf(parseNftJsonViaTree(cut, 'cut')));
      for (const c of ['"', ']', '[', ',', 'x', '}']) {
        const edited = text.slice(0, at) + c + text.slice(at + 1);
        expect(jsonOf(parseNftJson(edited, 'edit')), `${c} at ${at}`).toBe(jsonOf(parseNftJsonViaTree(edited, 'edit')));
      }
    }
  });
});
