/**
 * The lazy pass' syntax scan (src/parsers/nft-json-scan.ts): the printed-spacing scan gives
 * the reference scan's answer (`jsonEnd`) wherever it gives one, and `jsonValueEnd` always
 * does — on every rule's `expr` of the lab captures, the corpus and a generated capture, and
 * on seeded random JSON values printed in nft's spacing and in others, then cut and edited.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateWorld, modeOutputs } from '../../bench/gen/capture.js';
import { jsonEnd, jsonEndPrinted, jsonValueEnd, jsonValueEndCounts } from '../../src/parsers/nft-json-scan.js';
import { fixtureDir } from '../helpers/fixtures.js';

const repoRoot = path.resolve(import.meta.dirname, '../..');
const corpusFile = path.resolve(repoRoot, '../shared/corpus/nft/knftables-nft-json-list-outputs.txt');
const haveCorpus = existsSync(corpusFile);
if (!haveCorpus) console.log(`nft-json-scan: corpus sweep skipped: ${corpusFile} is absent (../shared not present)`);

/** A seeded generator of numbers in [0, 1) (a linear congruential generator). */
function seeded(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return s / 2147483648;
  };
}

const STRINGS = ['', 'ip', 'daddr', 'kube-proxy', 'service-ABC/ns/svc:p80', '10.96.0.1', 'a"b', 'a\\b', 'tab\there', 'nl\nx', 'é', 'ü\u00ff', '\u0101x', '\u2028', '{"x": [1, 2]}', '}, {"rule": '];
const NUMBERS = ['0', '-0', '1', '-17', '12345678901234567890', '1.5', '-0.25e+3', '2E7', '1e-2'];

/** A random JSON value (as data), at most `depth` deep. */
function value(rand: () => number, depth: number): unknown {
  const r = rand();
  if (depth <= 0 || r < 0.35) {
    const k = Math.floor(rand() * 6);
    if (k === 0) return STRINGS[Math.floor(rand() * STRINGS.length)];
    if (k === 1) return Number(NUMBERS[Math.floor(rand() * NUMBERS.length)]);
    if (k === 2) return rand() < 0.5;
    if (k === 3) return null;
    return STRINGS[Math.floor(rand() * 6)];
  }
  const n = Math.floor(rand() * 4);
  if (r < 0.65) return Array.from({ length: n }, () => value(rand, depth - 1));
  return Object.fromEntries(Array.from({ length: n }, (_, i) => [rand() < 0.2 ? STRINGS[Math.floor(rand() * STRINGS.length)]! : `k${i}`, value(rand, depth - 1)]));
}

/** `v` printed with `comma` between values and `colon` after keys (nft: `", "` and `": "`). */
function printed(v: unknown, comma: string, colon: string): string {
  if (Array.isArray(v)) return `[${v.map((x) => printed(x, comma, colon)).join(comma)}]`;
  if (v !== null && typeof v === 'object') return `{${Object.entries(v).map(([k, x]) => `${JSON.stringify(k)}${colon}${printed(x, comma, colon)}`).join(comma)}}`;
  return JSON.stringify(v);
}

/** Every place `"expr": [` starts a rule's statements in `text`. */
function exprStarts(text: string): number[] {
  const out: number[] = [];
  for (let i = text.indexOf('"expr": ['); i >= 0; i = text.indexOf('"expr": [', i + 1)) out.push(i + 8);
  return out;
}

/** Checks the three scans agree at every place of `places` in `text`; how many the printed scan answered. */
function expectSameEnds(text: string, places: readonly number[]): number {
  let printedHits = 0;
  for (const p of places) {
    const reference = jsonEnd(text, p);
    const fast = jsonEndPrinted(text, p);
    if (fast >= 0) {
      printedHits++;
      if (fast !== reference) expect({ p, fast, reference, text: text.slice(p, p + 200) }).toBeUndefined();
    }
    const combined = jsonValueEnd(text, p);
    if (combined !== reference) expect({ p, combined, reference, text: text.slice(p, p + 200) }).toBeUndefined();
    // The reference is JSON's syntax: what it accepts, JSON.parse accepts.
    if (reference >= 0) expect(() => JSON.parse(text.slice(p, reference))).not.toThrow();
  }
  return printedHits;
}

describe('nft -j syntax scan: the printed-spacing scan gives the reference scan\'s answer', () => {
  it.each(['lab-nftables', 'lab-iptables', 'lab-cilium'])('%s capture: every rule\'s expr, by the printed scan', (name) => {
    const text = readFileSync(path.join(fixtureDir(name), 'probes', 'nft-json.stdout'), 'utf8');
    const places = exprStarts(text);
    expect(places.length).toBeGreaterThan(0);
    expect(expectSameEnds(text, places)).toBe(places.length);
  });

  it.skipIf(!haveCorpus)('every knftables JSON document of the corpus: each rule\'s expr and each whole document', () => {
    const docs = readFileSync(corpusFile, 'utf8').split('\n').filter((l) => l.trim() && !l.startsWith('#'));
    expect(docs.length).toBe(18);
    for (const text of docs) expectSameEnds(text, [0, ...exprStarts(text)]);
  });

  it('a generated kube-proxy capture: every rule\'s expr by the printed scan, and the counts say so', () => {
    const world = generateWorld({ services: 200, endpoints: 3, seed: 'scan', modes: ['nftables'], conntrack: 10 });
    const text = modeOutputs(world, 'nftables').get('nft-json')!;
    const places = exprStarts(text);
    expect(places.length).toBeGreaterThan(1000);
    const before = { ...jsonValueEndCounts };
    expect(expectSameEnds(text, places)).toBe(places.length);
    expect(jsonValueEndCounts.printed - before.printed).toBe(places.length);
    expect(jsonValueEndCounts.fallback - before.fallback).toBe(0);
  });

  it('seeded random values in nft\'s spacing and in others, whole, cut at every place and edited', () => {
    const rand = seeded(23);
    const spacings: readonly (readonly [string, string])[] = [
      [', ', ': '],
      [',', ':'],
      [' , ', ' : '],
      [',\n', ':\t'],
      [',  ', ':  '],
      [', ', ':\r\n '],
    ];
    let printedHits = 0;
    let fallbacks = 0;
    for (let round = 0; round < 400; round++) {
      const v = value(rand, 5);
      const [comma, colon] = spacings[round % spacings.length]!;
      const whole = printed(v, comma, colon);
      // After it: what follows a rule's expr, or nothing, or more text.
      const tails = ['', '}}', ', {"x": 1}', ' ', 'x'];
      for (const tail of tails) {
        const text = `{"expr": ${whole}${tail}`;
        const hits = expectSameEnds(text, [9]);
        printedHits += hits;
        // In nft's spacing the printed scan answers every text the reference accepts.
        if (round % spacings.length === 0) expect(hits).toBe(jsonEnd(text, 9) >= 0 ? 1 : 0);
      }
      // Cut at every place (a piece's end inside a value).
      for (let cut = 0; cut < whole.length; cut++) expectSameEnds(whole.slice(0, cut), [0]);
      // Edited: one character replaced, removed or doubled at a few places.
      for (let e = 0; e < 6; e++) {
        const at = Math.floor(rand() * whole.length);
        const ch = ' ,:[]{}"\\0-1e.tn\t'[Math.floor(rand() * 17)]!;
        for (const edited of [whole.slice(0, at) + ch + whole.slice(at + 1), whole.slice(0, at) + whole.slice(at + 1), whole.slice(0, at) + whole[at] + whole.slice(at)]) {
          const before = jsonValueEndCounts.fallback;
          expectSameEnds(`${edited}]}`, [0]);
          fallbacks += jsonValueEndCounts.fallback - before;
        }
      }
    }
    // Both paths were taken.
    expect(printedHits).toBeGreaterThan(300);
    expect(fallbacks).toBeGreaterThan(300);
  });

  it('nesting at and past the reference\'s depth limit, empty containers innermost', () => {
    for (const depth of [511, 512, 513]) {
      for (const inner of ['[]', '{}', '1', '[1]']) {
        const text = `${'['.repeat(depth)}${inner}${']'.repeat(depth)}`;
        expectSameEnds(text, [0]);
        const objects = `${'{"a": '.repeat(depth)}${inner}${'}'.repeat(depth)}`;
        expectSameEnds(objects, [0]);
      }
    }
    expect(jsonEnd(`${'['.repeat(512)}[]${']'.repeat(512)}`, 0)).toBe(-1);
    expect(jsonEndPrinted(`${'['.repeat(512)}[]${']'.repeat(512)}`, 0)).toBe(-1);
    expect(jsonEndPrinted(`${'['.repeat(511)}[]${']'.repeat(511)}`, 0)).toBe(1024);
  });
});
