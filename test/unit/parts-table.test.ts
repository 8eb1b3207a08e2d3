/** The probe → parser → part table: the catalog's `parser:` and `part:` fields drive it, both ways. */
import { describe, expect, it, vi } from 'vitest';
import { LB_MAPS_PARSER, PARSERS, partProbes, piecedProbes } from '../../src/collect/parts.js';
import { SNAPSHOT_PARTS } from '../../src/model/snapshot.js';
import { catalog } from '../../src/sources/catalog.js';

describe('parts table', () => {
  it('names a known parser for every probe that fills a part, and uses every parser it knows', () => {
    const withPart = catalog().probes.filter((p) => p.part);
    for (const p of withPart) expect(p.parser === LB_MAPS_PARSER || p.parser in PARSERS, `${p.id}: parser ${p.parser}`).toBe(true);
    const used = new Set(withPart.map((p) => p.parser));
    for (const name of Object.keys(PARSERS)) expect(used.has(name), `parser ${name} unused`).toBe(true);
  });

  it('gives every snapshot part its probes, preferred first', () => {
    const parts = partProbes();
    for (const part of SNAPSHOT_PARTS) expect(parts[part]?.length, part).toBeGreaterThan(0);
    expect(parts.ipvs).toEqual(['ipvsadm-stats', 'ipvsadm']);
    expect(parts.nft).toEqual(['nft-json-kube-proxy', 'nft-json-kube-proxy6', 'nft-json', 'nft-text']);
    expect(parts.lb.at(-1)).toBe('cilium-bpf-lb-list');
  });

  it('reads in pieces the probes whose parsers can, and Cilium\'s LB map dumps', () => {
    expect([...piecedProbes()].sort()).toEqual([
      ...['bpf-lb4-backends', 'bpf-lb4-reverse-nat', 'bpf-lb4-services', 'bpf-lb6-backends', 'bpf-lb6-reverse-nat', 'bpf-lb6-services'],
      ...['conntrack', 'ip6tables-save', 'iptables-legacy-save', 'iptables-save', 'nft-json', 'nft-json-kube-proxy', 'nft-json-kube-proxy6', 'nft-text'],
    ]);
  });

  it('knows what each parser reads before its code loads: the flags equal the loaded entry', async () => {
    for (const [name, lazy] of Object.entries(PARSERS)) {
      const entry = await lazy.load();
      expect(typeof entry.parse, name).toBe('function');
      expect(lazy.pieced, `${name} pieced`).toBe(entry.pieces !== undefined || entry.joinedPieces === true);
      expect(lazy.chunks, `${name} chunks`).toBe(entry.chunked !== undefined || entry.pieces !== undefined);
    }
  });

  it('loads a parser when asked for its probes, and refuses one not loaded (never an empty part)', async () => {
    // A fresh copy of the module (the test set-up loaded every parser into the shared one).
    vi.resetModules();
    const fresh = await import('../../src/collect/parts.js');
    // A BugError (of the fresh module graph's errors.ts, hence matched by its words).
    expect(() => fresh.parserOf('nft-json')).toThrow(/used before it was loaded/);
    expect(() => fresh.parserOf('iptables-save')).toThrow(/used before it was loaded/);
    expect(fresh.parserOf('uname')).toBeUndefined();
    await fresh.loadParsers(['iptables-save', 'uname']);
    expect(fresh.parserOf('iptables-save')?.lazy).toBeTypeOf('function');
    expect(() => fresh.parserOf('nft-json')).toThrow(/parser nft-json \(probe nft-json\) used before it was loaded/);
    // ip6tables-save shares the module, not the entry: loaded on its own ask.
    expect(() => fresh.parserOf('ip6tables-save')).toThrow(/used before it was loaded/);
    await fresh.loadParsers(['nft-json-kube-proxy']);
    expect(fresh.parserOf('nft-json')?.pieces).toBeTypeOf('function');
  });
});
