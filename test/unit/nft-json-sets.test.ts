/**
 * Set and map items read by the direct and lazy nft -j readers (src/parsers/nft-json-direct.ts)
 * against the reference (`parseNftJsonViaTree`, one `JSON.parse` tree): the same model, JSON
 * text and diagnostics for kube-proxy's shapes (values, `[KEY, VALUE]` pairs of concatenations
 * and verdicts), every other element shape (wrappers, ranges, escapes, bare pairs, lists), odd
 * heads (unknown flags, malformed types, unlisted tables), sets listed twice with element items
 * between, and texts cut or edited at every place. (Session 17 tried reading these elements
 * without the tree: equal, but no cheaper; NOTES.md, nftpass4.)
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateWorld, modeOutputs } from '../../bench/gen/capture.js';
import type { ParseResult } from '../../src/model/diagnostics.js';
import type { NftRuleset } from '../../src/model/nftables.js';
import { nftMetainfoOf, parseNftJson, parseNftJsonLazyPieces, parseNftJsonPieces, parseNftJsonViaTree } from '../../src/parsers/nft-json.js';
import { fixtureDir } from '../helpers/fixtures.js';
import { CHAIN, doc, JUMP, META, RULE, SADDR, TABLE } from '../helpers/nft-json-edits.js';

/** The model, metainfo and diagnostics as JSON text (bigints as text): key order counts. */
function jsonOf(r: ParseResult<NftRuleset>): string {
  return JSON.stringify({ ruleset: r.value, metainfo: nftMetainfoOf(r.value), diagnostics: r.diagnostics }, (_k, v: unknown) =>
    typeof v === 'bigint' ? `${v}n` : v,
  );
}

/** Asserts every direct read of `text` (whole, in pieces, lazy with every chain built) gives the tree reader's answer. */
async function expectSameAsTree(text: string, name: string): Promise<void> {
  const tree = parseNftJsonViaTree(text, name);
  const whole = parseNftJson(text, name);
  expect(whole, name).toEqual(tree);
  expect(jsonOf(whole), name).toBe(jsonOf(tree));
  for (const size of [5, 4096]) {
    const pieces = () => Array.from({ length: Math.ceil(text.length / size) }, (_, i) => text.slice(i * size, (i + 1) * size));
    expect(jsonOf(await parseNftJsonPieces(pieces, name, 1000, async () => {})), `${name} in pieces of ${size}`).toBe(jsonOf(tree));
    const lazy = await parseNftJsonLazyPieces(pieces, name, 1000, async () => {});
    expect(jsonOf(lazy), `${name} lazy in pieces of ${size}`).toBe(jsonOf(tree));
  }
}

const base = [META, TABLE, CHAIN('c'), CHAIN('d')];
const SET = (extra: string, elem: string) => `{"set": {"family": "ip", "name": "s", "table": "t", "type": "ipv4_addr", "handle": 4${extra}, "elem": [${elem}]}}`;
const MAP = (extra: string, elem: string) =>
  `{"map": {"family": "ip", "name": "m", "table": "t", "type": ["ipv4_addr", "inet_proto", "inet_service"], "handle": 5${extra}, "map": "verdict", "elem": [${elem}]}}`;
const PAIR = (ip: string, port: number, to = 'c') => `[{"concat": ["${ip}", "tcp", ${port}]}, {"goto": {"target": "${to}"}}]`;

/** Documents of kube-proxy's set and map shapes (and near them). */
const KUBE_PROXY_SHAPES: Readonly<Record<string, string>> = {
  "kube-proxy's set and verdict map": doc(...base, SET('', '"10.0.0.1", "10.0.0.2"'), MAP('', `${PAIR('10.0.0.1', 80)}, ${PAIR('10.0.0.2', 443, 'd')}`), RULE('c', `${SADDR}, ${JUMP}`)),
  'a map of exactly two elements and one of one': doc(...base, MAP('', `${PAIR('10.0.0.1', 80)}, ${PAIR('10.0.0.1', 80)}`), MAP('', PAIR('10.0.0.3', 53)).replace('"m"', '"m1"')),
  'empty lists': doc(...base, SET('', ''), MAP('', '')),
  'prefixes, numbers, verdicts and set references as keys': doc(...base, SET(', "flags": ["interval"]', '{"prefix": {"addr": "10.0.0.0", "len": 8}}, 7, {"accept": null}, "@other"')),
  'a data map and a map to a concatenation': doc(...base, '{"map": {"family": "ip", "name": "d", "table": "t", "type": "ipv4_addr", "handle": 6, "map": "ipv4_addr . inet_service", "elem": [["10.0.0.1", {"concat": ["10.1.0.1", 80]}], ["10.0.0.2", "10.1.0.2"]]}}'),
  'a set listed twice, elements added by an element item between': doc(...base, SET('', '"10.0.0.1"'), '{"element": {"family": "ip", "table": "t", "name": "s", "elem": ["10.2.0.1"]}}', SET('', '"10.0.0.2", "10.0.0.1"')),
  'a comment that spells the elem key, counters and timeouts in the head': doc(...base, SET(', "comment": "x, \\"elem\\": [", "timeout": 30, "gc-interval": 10, "size": 65535, "policy": "memory", "stmt": [{"counter": null}]', '"10.0.0.1"')),
};

/** Documents of every other set and map shape: elements, heads and printing nft's printer does not give kube-proxy. */
const OTHER_SHAPES: Readonly<Record<string, string>> = {
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

describe('set and map items: the direct and lazy nft -j readers equal the tree walk', () => {
  for (const [name, text] of Object.entries({ ...KUBE_PROXY_SHAPES, ...OTHER_SHAPES })) {
    it(name, async () => {
      await expectSameAsTree(text, name);
    });
  }

  it('the lab captures', async () => {
    for (const lab of ['lab-nftables', 'lab-iptables', 'lab-cilium']) {
      await expectSameAsTree(readFileSync(path.join(fixtureDir(lab), 'probes', 'nft-json.stdout'), 'utf8'), lab);
    }
  });

  it("a generated kube-proxy capture (its sets and maps: ClusterIPs, Services' verdict maps, commented no-endpoint elements)", async () => {
    const text = modeOutputs(generateWorld({ services: 60, endpoints: 3, seed: 'sets', modes: ['nftables'], conntrack: 10 }), 'nftables').get('nft-json')!;
    const withElements = (JSON.parse(text) as { nftables: Record<string, Record<string, unknown>>[] }).nftables
      .map((x) => x['set'] ?? x['map'])
      .filter((s) => s !== undefined && Array.isArray(s['elem'])).length;
    expect(withElements).toBeGreaterThan(1);
    await expectSameAsTree(text, 'generated');
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
