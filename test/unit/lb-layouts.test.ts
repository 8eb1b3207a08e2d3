/**
 * The LB map layouts' decoders read their fields in place (issue 23: no DataView per entry)
 * and return exactly what the DataView decoders of before session 12 return
 * (test/helpers/lb-layouts-reference.ts): every layout, both host byte orders, on random
 * bytes of the layout's sizes, on all-zero and all-0xff bytes, and on the lab-cilium dumps.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseBpftoolMapDump } from '../../src/parsers/bpftool-map-dump.js';
import { identifyLbMap } from '../../src/parsers/bpftool-lb-decode.js';
import { LB_MAP_LAYOUTS, type HostByteOrder } from '../../src/parsers/bpftool-lb-layouts.js';
import { fixtureDir } from '../helpers/fixtures.js';
import { LB_MAP_LAYOUTS_REFERENCE } from '../helpers/lb-layouts-reference.js';

/** A seeded byte source (the same bytes on every run). */
function bytes(seed: number): (n: number) => Uint8Array {
  let s = seed;
  return (n) => {
    const out = new Uint8Array(n);
    for (let i = 0; i < n; i++) {
      s = (s * 1103515245 + 12345) % 2147483648;
      out[i] = s >>> 16;
    }
    return out;
  };
}

describe('LB layouts decode as the DataView reference', () => {
  it('has the same layouts, in the same order', () => {
    expect(LB_MAP_LAYOUTS.map((l) => [l.kind, l.family, l.maps, l.keySize, l.valueSize, l.structs, l.era])).toEqual(LB_MAP_LAYOUTS_REFERENCE.map((l) => [l.kind, l.family, l.maps, l.keySize, l.valueSize, l.structs, l.era]));
  });

  it.each(['little', 'big'] as HostByteOrder[])('every layout, random, zero and 0xff bytes (%s-endian host)', (order) => {
    const next = bytes(order === 'little' ? 7 : 11);
    LB_MAP_LAYOUTS.forEach((layout, i) => {
      const ref = LB_MAP_LAYOUTS_REFERENCE[i]!;
      const valueSize = layout.valueSize === 'multiple-of-4' ? 16 : layout.valueSize;
      const cases: [Uint8Array, Uint8Array][] = [
        [new Uint8Array(layout.keySize), new Uint8Array(valueSize)],
        [new Uint8Array(layout.keySize).fill(0xff), new Uint8Array(valueSize).fill(0xff)],
      ];
      for (let k = 0; k < 500; k++) cases.push([next(layout.keySize), next(valueSize)]);
      for (const [key, value] of cases) expect(layout.decode(key, value, order), `${layout.structs} ${layout.era}`).toEqual(ref.decode(key, value, order));
    });
  });

  it('on the lab-cilium dumps', () => {
    const dir = fixtureDir('lab-cilium');
    const manifest = JSON.parse(readFileSync(path.join(dir, 'manifest.json'), 'utf8')) as { probes: { id: string; executedArgv: string[]; stdoutFile: string; status: string }[] };
    let n = 0;
    for (const p of manifest.probes.filter((x) => x.id.startsWith('bpf-lb') && x.status === 'ok')) {
      const name = p.executedArgv[p.executedArgv.length - 1]!;
      for (const e of parseBpftoolMapDump(readFileSync(path.join(dir, p.stdoutFile), 'utf8'), p.id).value.entries) {
        const layout = identifyLbMap(name, e.key!.length, e.value!.length);
        if (typeof layout === 'string') continue;
        const ref = LB_MAP_LAYOUTS_REFERENCE[LB_MAP_LAYOUTS.indexOf(layout)]!;
        expect(layout.decode(e.key!, e.value!, 'little')).toEqual(ref.decode(e.key!, e.value!, 'little'));
        n++;
      }
    }
    expect(n).toBeGreaterThan(20);
  });
});
