/**
 * Every Cilium/bpftool parser on garbage, binary, and every prefix of a valid input:
 * never a throw, always a result, and damage reported as diagnostics.
 */
import { describe, expect, it } from 'vitest';
import { parseCiliumBpfLbList, formatCiliumBpfLbList } from '../../src/parsers/cilium-bpf-lb-list.js';
import { parseCiliumServiceList, formatCiliumServiceList } from '../../src/parsers/cilium-service-list.js';
import { parseCiliumStatus } from '../../src/parsers/cilium-status.js';
import { parseCiliumStateDbTables } from '../../src/parsers/cilium-statedb.js';
import { parseCiliumMapsDump } from '../../src/parsers/cilium-maps-dump.js';
import { parseCiliumRevNatList } from '../../src/parsers/cilium-revnat-list.js';
import { parseBpftoolMapDump } from '../../src/parsers/bpftool-map-dump.js';
import { parseCiliumLbMapDump } from '../../src/parsers/bpftool-lb-decode.js';
import { encodeLbTable } from '../../src/parsers/bpftool-lb-encode.js';
import { bpftoolJson } from './cilium-builders.js';
import { labCiliumTable } from '../lab/cilium-scenario.js';

const parsers: [string, (text: string, origin: string) => { diagnostics: readonly unknown[] }][] = [
  ['bpf lb list', parseCiliumBpfLbList],
  ['service list', parseCiliumServiceList],
  ['status', parseCiliumStatus],
  ['statedb', parseCiliumStateDbTables],
  ['maps dump', parseCiliumMapsDump],
  ['revnat list', parseCiliumRevNatList],
  ['bpftool dump', parseBpftoolMapDump],
  ['lb map dump', (t, o) => parseCiliumLbMapDump(t, o, 'cilium_lb4_services_v2')],
];

/** Deterministic pseudo-random bytes (xorshift), so failures reproduce. */
function noise(seed: number, length: number): string {
  let x = seed;
  let out = '';
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out += String.fromCharCode((x >>> 0) % 256);
  }
  return out;
}

const inputs = ['', '\n\n', '\0\0\0\x7f\xff', '{', '[', '[{"key":', '{"a":[1,2', noise(1, 400), noise(7, 4000), 'x'.repeat(100_000), '[]'.repeat(1000)];

describe.each(parsers)('%s parser', (_name, parse) => {
  it.each(inputs.map((s, i) => [i, s] as const))('survives garbage input #%i', (_i, text) => {
    const r = parse(text, 'garbage');
    expect(Array.isArray(r.diagnostics)).toBe(true);
  });

  it('reports something on binary noise', () => {
    expect(parse(noise(3, 600), 'noise').diagnostics.length).toBeGreaterThan(0);
  });
});

describe('truncated inputs', () => {
  const table = labCiliumTable();
  const samples: [string, string, (t: string, o: string) => { diagnostics: readonly unknown[] }][] = [
    ['bpf lb list', formatCiliumBpfLbList(table), parseCiliumBpfLbList],
    ['service list', formatCiliumServiceList(table), parseCiliumServiceList],
    ['bpftool dump', bpftoolJson(encodeLbTable(table)[0]?.entries ?? []), parseBpftoolMapDump],
  ];

  it.each(samples)('%s: every prefix parses without throwing', (_name, text, parse) => {
    for (let cut = 0; cut <= text.length; cut += 7) expect(() => parse(text.slice(0, cut), 'cut')).not.toThrow();
  });
});
