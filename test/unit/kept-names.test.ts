/**
 * The kept chains' name index of the nft -j lazy pass (src/parsers/kept-names.ts): the sorted
 * hashes answer as the reference (a Map per table) — whether a name is kept twice in a table,
 * and which index a (table, name) is — with the real hash, with hashes that collide (every
 * name one hash; the hash its length), with names in two tables, non-ASCII names and names
 * that are prefixes of each other.
 */
import { describe, expect, it } from 'vitest';
import { KeptNames, KeptNamesViaMap, nameHash, type KeptNameIndex } from '../../src/parsers/kept-names.js';
import { shuffled } from '../helpers/shuffle.js';

/** Adds `entries` to `index`; what it answers: twice, and the index of every name asked in every table. */
function answers(index: KeptNameIndex, entries: readonly (readonly [number, string])[], asked: readonly string[], tables: number): { twice: boolean; found: number[] } {
  for (const [table, name] of entries) index.add(table, name);
  const twice = index.seal();
  const found: number[] = [];
  for (let table = 0; table < tables; table++) for (const name of asked) found.push(index.find(table, name));
  return { twice, found };
}

const HASHES: readonly (readonly [string, (name: string) => number])[] = [
  ['FNV-1a', nameHash],
  ['one hash for every name', () => 7],
  ['the length', (name) => name.length],
];

/** kube-proxy-like chain names, and odd ones. */
function names(n: number, seed: number): string[] {
  const base = Array.from({ length: n }, (_, i) => `service-${(i * 2654435761 + seed) % 99991}-ns${i % 7}/svc${i}/tcp/p${80 + (i % 3)}`);
  return [...base, 'svc', 'svc-a', 'svc-ab', 'é-chain', 'ü\u00ff', '\u0101x', 'x\u2028', ''];
}

describe('kept chain names: sorted hashes answer as a Map per table', () => {
  it.each(HASHES)('%s: no name twice, names in two tables, every name found, unknown names not', (_label, hash) => {
    const all = names(400, 1);
    const entries = shuffled(
      all.flatMap((name, i) => (i % 3 === 0 ? [[0, name] as const, [1, name] as const] : [[i % 2, name] as const])),
      5,
    );
    const asked = [...all, 'service-1', 'svc-abc', 'nope', 'SVC'];
    const fast = answers(new KeptNames(hash), entries, asked, 3);
    const reference = answers(new KeptNamesViaMap(), entries, asked, 3);
    expect(fast).toEqual(reference);
    expect(fast.twice).toBe(false);
    expect(fast.found.filter((k) => k >= 0).length).toBe(entries.length);
  });

  it.each(HASHES)('%s: a name kept twice in one table is found, at any distance', (_label, hash) => {
    const all = names(300, 2);
    for (const [first, second] of [
      [0, 1],
      [5, 250],
      [299, 3],
      [all.length - 1, 0],
    ] as const) {
      const entries: (readonly [number, string])[] = all.map((name) => [0, name] as const);
      entries.splice(second, 0, [0, all[first]!]);
      const asked = [all[first]!, all[second]!];
      const fast = answers(new KeptNames(hash), entries, asked, 1);
      expect(fast).toEqual(answers(new KeptNamesViaMap(), entries, asked, 1));
      expect(fast.twice).toBe(true);
    }
  });

  it('one name in two tables is not kept twice; in one table twice it is', () => {
    for (const hash of [nameHash, () => 1]) {
      const a = new KeptNames(hash);
      a.add(0, 'svc');
      a.add(1, 'svc');
      expect(a.seal()).toBe(false);
      expect([a.find(0, 'svc'), a.find(1, 'svc'), a.find(2, 'svc')]).toEqual([0, 1, -1]);
      const b = new KeptNames(hash);
      b.add(1, 'svc');
      b.add(0, 'other');
      b.add(1, 'svc');
      expect(b.seal()).toBe(true);
    }
  });

  it('past its sorted limit the index answers by the Map, the same', () => {
    const all = names(50, 3);
    const entries = all.map((name, i) => [i % 2, name] as const);
    const asked = [...all, 'nope'];
    const small = answers(new KeptNames(nameHash, 10), entries, asked, 2);
    expect(small).toEqual(answers(new KeptNamesViaMap(), entries, asked, 2));
    const twice = [...entries, [0, all[0]!] as const];
    expect(answers(new KeptNames(nameHash, 10), twice, asked, 2)).toEqual(answers(new KeptNamesViaMap(), twice, asked, 2));
  });

  it('an empty index finds nothing and keeps nothing twice', () => {
    const index = new KeptNames();
    expect(index.seal()).toBe(false);
    expect(index.find(0, 'svc')).toBe(-1);
  });
});
