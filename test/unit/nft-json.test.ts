/**
 * nft JSON parser: the schema-version check knftables makes, the errors for text given where
 * JSON was expected and for truncated JSON (line and column, complete objects kept), full
 * 64-bit counters, statements and objects the model does not know, and hostile inputs.
 */
import { describe, expect, it } from 'vitest';
import { findChain, findSet, type NftRuleset } from '../../src/model/nftables.js';
import { parseNftJson, parseNftJsonDocument } from '../../src/parsers/nft-json.js';

const META = { metainfo: { version: '1.0.6', release_name: 'Lester Gooch #5', json_schema_version: 1 } };
/** `{"nftables": [metainfo, ...items]}` as text; `meta: null` leaves metainfo out. */
const doc = (items: unknown[], meta: unknown = META) => JSON.stringify({ nftables: meta === null ? items : [meta, ...items] });
const tableObj = (name = 't', family = 'ip') => ({ table: { family, name, handle: 1 } });
const chainObj = (name: string, extra: Record<string, unknown> = {}) => ({ chain: { family: 'ip', table: 't', name, handle: 2, ...extra } });
const ruleObj = (chain: string, expr: unknown[], extra: Record<string, unknown> = {}) => ({
  rule: { family: 'ip', table: 't', chain, handle: 3, expr, ...extra },
});
const codes = (r: { diagnostics: readonly { severity: string; code: string; line: number }[] }) =>
  r.diagnostics.map((d) => `${d.severity}:${d.code}@${d.line}`);
const rules = (rs: NftRuleset, chain: string) => findChain(rs.tables[0]!, chain)!.rules;

describe('json_schema_version', () => {
  it('is an error when metainfo is missing, yet the objects are read', () => {
    const r = parseNftJsonDocument(doc([tableObj(), chainObj('c')], null), 'nometa');
    expect(codes(r)).toEqual(['error:schema-version@0']);
    expect(r.value.metainfo).toBeUndefined();
    expect(r.value.ruleset.tables[0]!.chains.map((c) => c.name)).toEqual(['c']);
  });

  it('is an error when it is not 1', () => {
    const r = parseNftJsonDocument(doc([tableObj()], { metainfo: { version: '9.9', json_schema_version: 2 } }), 'v2');
    expect(codes(r)).toEqual(['error:schema-version@0']);
    expect(r.diagnostics[0]!.message).toContain('json_schema_version 2');
    expect(r.value.metainfo).toEqual({ version: '9.9', jsonSchemaVersion: 2 });
    expect(r.value.ruleset.tables).toHaveLength(1);
  });
});

describe('text that is not (complete) JSON', () => {
  it('nft list text given by mistake: an error at line 1 column 1 with a hint, no throw', () => {
    const r = parseNftJson('table ip kube-proxy {\n\tchain services {\n\t}\n}\n', 'text');
    expect(codes(r)).toEqual(['error:json-syntax@1']);
    expect(r.diagnostics[0]!.message).toMatch(/line 1 column 1.*nft text/);
    expect(r.diagnostics[0]!.text).toBe('table ip kube-proxy {');
    expect(r.value.tables).toEqual([]);
  });

  it('truncated output: the position of the cut, and the complete objects before it are kept', () => {
    const full = doc([tableObj(), chainObj('a'), chainObj('b'), ruleObj('a', [{ accept: null }])]);
    const cut = full.slice(0, full.indexOf('"rule"') + 20);
    const r = parseNftJson(cut, 'cut');
    expect(codes(r)).toEqual(['error:json-syntax@1', 'warning:json-syntax@1']);
    expect(r.diagnostics[0]!.message).toMatch(new RegExp(`truncated.*column ${cut.length + 1}`));
    expect(r.diagnostics[1]!.message).toContain('kept the 4 complete objects');
    expect(r.value.tables[0]!.chains.map((c) => c.name)).toEqual(['a', 'b']);
  });

  it('a syntax error in pretty-printed JSON is reported on its own line', () => {
    const pretty = JSON.stringify(JSON.parse(doc([tableObj()])), null, 2).replace('"name": "t"', '"name": t');
    const r = parseNftJson(pretty, 'pretty');
    const line = pretty.split('\n').findIndex((l) => l.includes('"name": t')) + 1;
    expect(codes(r)[0]).toBe(`error:json-syntax@${line}`);
    expect(r.diagnostics[0]!.text.trim()).toBe('"name": t,');
  });

  it.each([
    ['empty', ''],
    ['not an nftables document', '{"foo": 1}'],
    ['an array', '[1, 2, 3]'],
    ['binary', String.fromCharCode(...Array.from({ length: 500 }, (_, i) => (i * 131) % 256))],
    ['deep nesting', '['.repeat(100_000)],
    ['nftables is not an array', '{"nftables": {"table": {}}}'],
  ])('%s: one error, an empty ruleset, no throw', (_name, text) => {
    const r = parseNftJson(text, 'bad');
    expect(r.value.tables).toEqual([]);
    expect(r.diagnostics.filter((d) => d.severity === 'error')).toHaveLength(1);
  });
});

describe('objects and statements', () => {
  it('keeps 64-bit counters exactly (beyond 2^53) on rules, named counters and set elements', () => {
    const max = '18446744073709551615';
    const text = doc([
      tableObj(),
      { counter: { family: 'ip', table: 't', name: 'n', packets: 111111, bytes: 111111 } },
      { set: { family: 'ip', table: 't', name: 's', type: 'ipv4_addr', elem: [{ elem: { val: '10.0.0.1', counter: { packets: 111111, bytes: 1 } } }] } },
      chainObj('c'),
      ruleObj('c', [{ counter: { packets: 111111, bytes: 111111 } }, { accept: null }]),
    ]).replaceAll('111111', max);
    const r = parseNftJson(text, 'big');
    expect(r.diagnostics).toEqual([]);
    const big = 18446744073709551615n;
    expect(rules(r.value, 'c')[0]!.counters).toEqual({ packets: big, bytes: big });
    expect(rules(r.value, 'c')[0]!.raw).toBe(`counter packets ${max} bytes ${max} accept`);
    expect(r.value.tables[0]!.counters[0]).toMatchObject({ packets: big, bytes: big });
    expect(findSet(r.value.tables[0]!, 's')!.elements[0]!.counters).toEqual({ packets: big, bytes: 1n });
  });

  it('derives the priority text nft would print, by family, hook and nft version', () => {
    const base = (name: string, hook: string, prio: number) => chainObj(name, { type: 'nat', hook, prio, policy: 'accept' });
    const items = [tableObj(), base('pre', 'prerouting', -100), base('out', 'output', -100), base('pre10', 'prerouting', -110), base('post', 'postrouting', 100)];
    const text = (version: string) => doc(items, { metainfo: { version, json_schema_version: 1 } });
    const prio = (version: string) => parseNftJson(text(version), version).value.tables[0]!.chains.map((c) => c.base!.priorityText);
    expect(prio('1.0.6')).toEqual(['dstnat', '-100', 'dstnat - 10', 'srcnat']);
    // nft 1.0.9 also names dstnat in output.
    expect(prio('1.1.1')).toEqual(['dstnat', 'dstnat', 'dstnat - 10', 'srcnat']);
    const bridge = doc([tableObj('b', 'bridge'), { chain: { family: 'bridge', table: 'b', name: 'c', type: 'filter', hook: 'forward', prio: -200, policy: 'drop' } }]);
    expect(parseNftJson(bridge, 'br').value.tables[0]!.chains[0]!.base).toEqual({
      type: 'filter',
      hook: 'forward',
      priority: -200,
      priorityText: 'filter',
      policy: 'drop',
    });
  });

  it('keeps a rule with a statement it does not know as `unknown`, with a warning', () => {
    const r = parseNftJson(
      doc([tableObj(), chainObj('c'), ruleObj('c', [{ match: { op: '==', left: { jhash: { mod: 2, expr: 'x' } }, right: 1 } }, { queue: { num: 1 } }, { accept: null }])]),
      'unknown',
    );
    expect(codes(r)).toEqual(['warning:unknown-statement@0', 'warning:unknown-statement@0']);
    expect(rules(r.value, 'c')[0]!.statements).toEqual([
      { kind: 'match', left: { kind: 'unknown', raw: '{"jhash":{"mod":2,"expr":"x"}}' }, op: '==', right: { kind: 'value', value: 1 } },
      { kind: 'unknown', raw: '{"queue":{"num":1}}' },
      { kind: 'verdict', verdict: 'accept' },
    ]);
  });

  it('reports a malformed statement as an error and keeps the rule', () => {
    const r = parseNftJson(doc([tableObj(), chainObj('c'), ruleObj('c', [{ match: { op: '==', left: { meta: { key: 'mark' } } } }, { drop: null }])]), 'malformed');
    expect(codes(r)).toEqual(['error:bad-object@0']);
    expect(rules(r.value, 'c')[0]!.statements.map((s) => s.kind)).toEqual(['unknown', 'verdict']);
  });

  it('reports an expression nested deeper than the stack as an error, no throw', () => {
    const n = 100_000;
    const deep = `${'{"concat":['.repeat(n)}"x"${']}'.repeat(n)}`;
    const text = doc([tableObj(), chainObj('c'), ruleObj('c', [{ match: { op: '==', left: 'DEEP', right: 1 } }]), chainObj('after')]).replace('"DEEP"', deep);
    const r = parseNftJson(text, 'deep');
    expect(codes(r)).toEqual(['error:bad-object@0']);
    expect(r.value.tables[0]!.chains.map((c) => c.name)).toEqual(['c', 'after']);
  });

  it('reports a malformed object as an error and reads the rest', () => {
    const r = parseNftJson(doc([tableObj(), { chain: { family: 'ip', table: 't', name: 42 } }, chainObj('ok'), { chain: { family: 'ipx', table: 't', name: 'z' } }]), 'objs');
    expect(codes(r)).toEqual(['error:bad-object@0', 'error:bad-object@0']);
    expect(r.value.tables[0]!.chains.map((c) => c.name)).toEqual(['ok']);
  });

  it('reads iptables-nft xt statements, element objects, flowtables (as JSON) and input-style command wrappers', () => {
    const r = parseNftJson(
      doc([
        { add: tableObj() },
        { add: { set: { family: 'ip', table: 't', name: 's', type: 'ipv4_addr' } } },
        { element: { family: 'ip', table: 't', name: 's', elem: ['10.0.0.1', { elem: { val: '10.0.0.2', timeout: 30, expires: 12, comment: 'c' } }] } },
        { flowtable: { family: 'ip', table: 't', name: 'ft', handle: 9, hook: 'ingress', prio: 0, dev: ['lo'] } },
        chainObj('KUBE-SEP-A'),
        ruleObj('KUBE-SEP-A', [{ xt: { type: 'match', name: 'recent' } }, { counter: { packets: 1, bytes: 60 } }, { xt: { type: 'target', name: 'DNAT' } }]),
        { flush: { ruleset: null } },
      ]),
      'misc',
    );
    expect(codes(r)).toEqual(['info:not-modelled@0']);
    const t = r.value.tables[0]!;
    expect(findSet(t, 's')!.elements).toEqual([
      { key: { kind: 'value', value: '10.0.0.1' } },
      { key: { kind: 'value', value: '10.0.0.2' }, timeout: 30, expires: 12, comment: 'c' },
    ]);
    expect(t.objects).toEqual([{ kind: 'flowtable', name: 'ft', handle: 9, raw: '{"family":"ip","table":"t","name":"ft","handle":9,"hook":"ingress","prio":0,"dev":["lo"]}' }]);
    expect(rules(r.value, 'KUBE-SEP-A')[0]).toMatchObject({
      raw: 'xt match recent counter packets 1 bytes 60 xt target DNAT',
      counters: { packets: 1n, bytes: 60n },
      statements: [{ kind: 'xt', xtType: 'match', name: 'recent' }, { kind: 'counter' }, { kind: 'xt', xtType: 'target', name: 'DNAT' }],
    });
  });

  it('ignores the nonsense table flags nft 1.0.6 prints, with an info', () => {
    const r = parseNftJson(doc([{ table: { family: 'ip', name: 't2', handle: 31, flags: 'q1' } }]), 'flags');
    expect(codes(r)).toEqual(['info:not-modelled@0']);
    expect(r.value.tables[0]!.flags).toBeUndefined();
    const ok = parseNftJson(doc([{ table: { family: 'ip', name: 't3', flags: ['dormant'] } }]), 'flags');
    expect(ok.value.tables[0]!.flags).toEqual(['dormant']);
  });
});
