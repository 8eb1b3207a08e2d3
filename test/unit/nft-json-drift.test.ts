/**
 * Issue 19 item 10 — nft JSON drift between nft releases (netavark#1303, netavark#1315): what
 * newer nft prints must be read, what nodescope does not model kept and reported, and the
 * output's own version (metainfo) shown. The documents are written here in the shapes
 * libnftables-json(5) allows.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { findChain } from '../../src/model/nftables.js';
import { nftMetainfoOf, parseNftJson } from '../../src/parsers/nft-json.js';
import { formatRule } from '../../src/parsers/nft-format.js';
import { showRules } from '../../src/report/rules.js';
import { copyFixture, snapshotOf, snapshotOfDir } from '../helpers/fixtures.js';

const META = { metainfo: { version: '1.1.4', release_name: 'Commodore Bullmoose #5', json_schema_version: 1 } };
const doc = (items: unknown[]) => JSON.stringify({ nftables: [META, { table: { family: 'inet', name: 'drift', handle: 7 } }, { chain: { family: 'inet', table: 'drift', name: 'in', handle: 1 } }, ...items] });
const rule = (expr: unknown[], handle = 2) => ({ rule: { family: 'inet', table: 'drift', chain: 'in', handle, expr } });

describe('netavark#1315: `|` with more than two operands', () => {
  it('reads {"|": [a, b, c, d]} as the left-to-right chain nft builds, and prints it as nft does', () => {
    const text = doc([
      rule([{ match: { op: '==', left: { '&': [{ payload: { protocol: 'tcp', field: 'flags' } }, { '|': ['fin', 'syn', 'rst', 'ack'] }] }, right: 'syn' } }, { drop: null }]),
    ]);
    const r = parseNftJson(text, 'drift');
    expect(r.diagnostics).toEqual([]);
    const parsed = findChain(r.value.tables[0]!, 'in')!.rules[0]!;
    // nft ≥1.0 prints `flags & mask == value` as `flags value / mask`.
    expect(formatRule(parsed)).toBe('tcp flags syn / fin | syn | rst | ack drop # handle 2');
    const left = (parsed.statements[0] as { left: { right: unknown } }).left.right;
    expect(left).toEqual({
      kind: 'binop', op: '|', right: { kind: 'value', value: 'ack' },
      left: { kind: 'binop', op: '|', right: { kind: 'value', value: 'rst' }, left: { kind: 'binop', op: '|', left: { kind: 'value', value: 'fin' }, right: { kind: 'value', value: 'syn' } } },
    });
  });
});

describe('netavark#1303: fib flags as a string or a list, unknown objects kept, metainfo shown', () => {
  it('fib flags: one flag as a string (nft ≤1.1.3) and as a list (1.1.4) read the same', () => {
    const asString = parseNftJson(doc([rule([{ match: { op: '==', left: { fib: { result: 'type', flags: 'daddr' } }, right: 'local' } }, { accept: null }])]), 's');
    const asList = parseNftJson(doc([rule([{ match: { op: '==', left: { fib: { result: 'type', flags: ['daddr'] } }, right: 'local' } }, { accept: null }])]), 'l');
    const two = parseNftJson(doc([rule([{ match: { op: '==', left: { fib: { result: 'oif', flags: ['saddr', 'iif'] } }, right: false } }, { drop: null }])]), 'two');
    for (const r of [asString, asList, two]) expect(r.diagnostics).toEqual([]);
    const first = (r: typeof asString) => findChain(r.value.tables[0]!, 'in')!.rules[0]!;
    expect(first(asString).statements).toEqual(first(asList).statements);
    expect(formatRule(first(asList))).toBe('fib daddr type local accept # handle 2');
    expect(formatRule(first(two))).toBe('fib saddr . iif oif missing drop # handle 2');
  });

  it('an object kind nodescope does not know is kept on its table and reported, not dropped', () => {
    const r = parseNftJson(doc([{ 'frobnicator': { family: 'inet', table: 'drift', name: 'f1', handle: 9, knob: 3 } }, { 'orphan-kind': { knob: 1 } }]), 'u');
    expect(r.value.tables[0]!.objects).toEqual([{ kind: 'frobnicator', name: 'f1', handle: 9, raw: JSON.stringify({ family: 'inet', table: 'drift', name: 'f1', handle: 9, knob: 3 }) }]);
    expect(r.diagnostics.map((d) => [d.severity, d.code])).toEqual([
      ['warning', 'unknown-object'],
      ['warning', 'unknown-object'],
    ]);
    expect(r.diagnostics[0]!.message).toMatch(/kept as JSON in table inet drift/);
    expect(r.diagnostics[1]!.message).toMatch(/skipped/);
    expect(nftMetainfoOf(r.value)).toEqual({ version: '1.1.4', releaseName: 'Commodore Bullmoose #5', jsonSchemaVersion: 1 });
  });

  it('show rules says which nft wrote the JSON and its schema, and lists the kept objects', async () => {
    const dir = copyFixture('lab-nftables');
    const file = path.join(dir, 'probes', 'nft-json.stdout');
    const json = JSON.parse(readFileSync(file, 'utf8')) as { nftables: Record<string, unknown>[] };
    json.nftables[0] = META;
    const table = json.nftables.find((x) => 'table' in x)!['table'] as { family: string; name: string };
    json.nftables.push({ frobnicator: { family: table.family, table: table.name, name: 'f1', knob: 3 } });
    writeFileSync(file, JSON.stringify(json));
    const snap = await snapshotOfDir(dir);
    const text = showRules(snap, 'text');
    expect(text).toContain('nft -j from nftables v1.1.4 (Commodore Bullmoose #5), JSON schema 1');
    expect(text).toMatch(/frobnicator f1: not modelled, kept as JSON/);
    const doc = JSON.parse(showRules(snap, 'json'));
    expect(doc.nft.metainfo).toEqual({ version: '1.1.4', releaseName: 'Commodore Bullmoose #5', jsonSchemaVersion: 1 });
    // The shipped capture names the nft that wrote it too.
    expect(showRules(await snapshotOf('lab-nftables'), 'text')).toContain('nft -j from nftables v1.0.6 (Lester Gooch #5), JSON schema 1');
  });
});
