/**
 * nft parsers against every file of shared/corpus/nft/: the diagnostics each file is
 * expected to give (and why), the content that must come out, and parse → format → parse
 * round trips. The knftables file holds one JSON document per `# case:` section; its two
 * NEGATIVE cases must give the errors knftables itself would raise.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { chainsByHook, countRules, findChain, findMap, findSet, type NftRuleset } from '../../src/model/nftables.js';
import { formatNftText } from '../../src/parsers/nft-format.js';
import { formatRuleText } from '../../src/parsers/nft-format-expr.js';
import { parseNftJsonDocument } from '../../src/parsers/nft-json.js';
import { parseNftText } from '../../src/parsers/nft-text.js';
import { canonicalRaw } from './nft-builders.js';

const repoRoot = path.resolve(import.meta.dirname, '../..');
const corpus = path.resolve(repoRoot, '../shared/corpus/nft');
const haveCorpus = existsSync(corpus);
if (!haveCorpus) console.warn(`skipping nft corpus tests: ${corpus} is absent`);
const read = (name: string): string => readFileSync(path.join(corpus, name), 'utf8');

/** `severity:code@line` of each diagnostic, in order. */
const codes = (r: { diagnostics: readonly { severity: string; code: string; line: number }[] }) =>
  r.diagnostics.map((d) => `${d.severity}:${d.code}@${d.line}`);

const table0 = (rs: NftRuleset) => rs.tables[0]!;

/** The text files: every diagnostic each must give, and why. Anything else fails. */
const TEXT_FILES: Record<string, { diagnostics: string[]; why: string; rules: number }> = {
  'iptables-nft-kube-services-chain-counters.txt': {
    diagnostics: ['warning:chain-outside-table@3', 'warning:chain-outside-table@13', 'info:redeclared@13'],
    why: 'a fragment of two nodes: two `chain KUBE-SERVICES {` without a table (the second merges into the first, as nft does)',
    rules: 10,
  },
  'k3s-nft-list-table-kube-proxy-real.txt': {
    diagnostics: [],
    why: 'real `nft list table ip kube-proxy`: everything is modelled',
    rules: 77,
  },
  'k8s-nftables-proxier-test-overall.txt': {
    diagnostics: [],
    why: "kube-proxy's `nft -f` transaction: everything is modelled",
    rules: 57,
  },
};

describe.skipIf(!haveCorpus)('nft text corpus', () => {
  it('covers every text file of the corpus (the JSON file is tested below)', () => {
    const files = readdirSync(corpus).filter((f) => f !== 'knftables-nft-json-list-outputs.txt');
    expect(files.sort()).toEqual(Object.keys(TEXT_FILES).sort());
  });

  it.each(Object.entries(TEXT_FILES))('%s gives exactly the expected diagnostics', (file, want) => {
    const r = parseNftText(read(file), file);
    expect(codes(r), want.why).toEqual(want.diagnostics);
    expect(countRules(r.value)).toBe(want.rules);
  });

  it.each(Object.keys(TEXT_FILES))('%s: parse(format(x)) equals x', (file) => {
    const x = canonicalRaw(parseNftText(read(file), file).value);
    const again = parseNftText(formatNftText(x), 'formatted');
    expect(again.value).toEqual(x);
  });

  it("k3s: the formatter prints every rule exactly as nft printed it (with iptables-nft's double spaces collapsed)", () => {
    for (const file of ['k3s-nft-list-table-kube-proxy-real.txt', 'iptables-nft-kube-services-chain-counters.txt']) {
      const rs = parseNftText(read(file), file).value;
      const rules = rs.tables.flatMap((t) => t.chains.flatMap((c) => c.rules));
      expect(rules.length).toBeGreaterThan(5);
      for (const rule of rules) expect(formatRuleText(rule)).toBe(rule.raw);
    }
  });

  it('k3s: kube-proxy structure — vmaps with concatenated keys, numgen, dnat, symbolic priorities', () => {
    const rs = parseNftText(read('k3s-nft-list-table-kube-proxy-real.txt'), 'k3s').value;
    const t = table0(rs);
    expect(t).toMatchObject({ family: 'ip', name: 'kube-proxy', comment: 'rules for kube-proxy' });

    const serviceIps = findMap(t, '@service-ips')!;
    expect(serviceIps).toMatchObject({ keyTypes: ['ipv4_addr', 'inet_proto', 'inet_service'], mapType: 'verdict' });
    expect(serviceIps.elements).toHaveLength(9);
    expect(serviceIps.elements[2]).toEqual({
      key: { kind: 'concat', items: [{ kind: 'value', value: '10.43.195.72' }, { kind: 'value', value: 'tcp' }, { kind: 'value', value: 8000 }] },
      value: { kind: 'verdict', verdict: 'goto', target: 'service-P6J77WGM-riset/hellopod-np-svc/tcp/' },
    });
    // Element comments sit between the key and the `:` (corpus-notes 15).
    expect(findMap(t, 'no-endpoint-services')!.elements[0]).toMatchObject({
      comment: 'riset/otelcol-opentelemetry-collector:otlp',
      value: { kind: 'verdict', verdict: 'goto', target: 'reject-chain' },
    });
    // Wrapped element lists (corpus-notes 13).
    expect(findSet(t, 'cluster-ips')!.elements.map((e) => e.key)).toHaveLength(7);

    const svc = findChain(t, 'service-P6J77WGM-riset/hellopod-np-svc/tcp/')!;
    const numgen = svc.rules[1]!.statements[0]!;
    expect(numgen.kind).toBe('vmap');
    if (numgen.kind !== 'vmap' || numgen.data.kind !== 'set') throw new Error('expected an inline vmap');
    expect(numgen.key).toEqual({ kind: 'numgen', mode: 'random', mod: 9, offset: 0 });
    expect(numgen.data.elements).toHaveLength(9);
    expect(numgen.data.elements[8]!.value).toEqual({
      kind: 'verdict',
      verdict: 'goto',
      target: 'endpoint-ZWSL4UYY-riset/hellopod-np-svc/tcp/__10.42.5.164/8080',
    });

    const ep = findChain(t, 'endpoint-ZWSL4UYY-riset/hellopod-np-svc/tcp/__10.42.5.164/8080')!;
    expect(ep.rules[1]!.statements[1]).toEqual({
      kind: 'nat',
      type: 'dnat',
      flags: [],
      addr: { kind: 'value', value: '10.42.5.164' },
      port: { kind: 'value', value: 8080 },
    });

    // Zero-padded marks read as numbers (corpus-notes 13).
    expect(findChain(t, 'masquerading')!.rules[0]!.statements[0]).toEqual({
      kind: 'match',
      left: { kind: 'binop', op: '&', left: { kind: 'meta', key: 'mark' }, right: { kind: 'value', value: 0x4000 } },
      op: '==',
      right: { kind: 'value', value: 0 },
    });

    expect(findChain(t, 'filter-prerouting')!.base).toEqual({
      type: 'filter',
      hook: 'prerouting',
      priority: -110,
      priorityText: 'dstnat - 10',
      policy: 'accept',
    });
    expect(chainsByHook(rs, { hook: 'output' }).map((c) => `${c.chain.name}@${c.base.priority}`)).toEqual([
      'filter-output@-110',
      'nat-output@-100',
      'filter-output-post-dnat@-90',
    ]);
  });

  it('iptables-nft: counters and double spaces (corpus-notes 17)', () => {
    const rs = parseNftText(read('iptables-nft-kube-services-chain-counters.txt'), 'ipt-nft').value;
    const chain = findChain(table0(rs), 'KUBE-SERVICES')!;
    expect(table0(rs).name).toBe('');
    const last = chain.rules[4]!;
    expect(last.counters).toEqual({ packets: 77n, bytes: 4824n });
    expect(last.raw).toBe('ip daddr 192.168.0.100 counter packets 77 bytes 4824 jump KUBE-NODEPORTS');
    expect(chain.rules[9]!.counters).toEqual({ packets: 7n, bytes: 696n });
    expect(chain.rules[0]!.statements.map((s) => s.kind)).toEqual(['match', 'match', 'match', 'counter', 'verdict']);
  });

  it('kube-proxy transaction: elements added after declaration, affinity set, fib, update statement', () => {
    const rs = parseNftText(read('k8s-nftables-proxier-test-overall.txt'), 'k8s').value;
    const t = table0(rs);
    expect(findMap(t, 'service-ips')!.elements).toHaveLength(9);
    expect(findSet(t, 'cluster-ips')!.elements).toHaveLength(6);
    expect(findSet(t, 'affinity-GTK6MW7G-ns5/svc5/tcp/p80__10.180.0.3/80')).toMatchObject({
      flags: ['timeout', 'dynamic'],
      timeout: 10800,
    });
    expect(findChain(t, 'nat-prerouting')!.base).toMatchObject({ priority: -100, priorityText: '-100' });
    // `mark set mark or 0x4000` is the same model as `meta mark set meta mark | 0x00004000`.
    expect(findChain(t, 'mark-for-masquerade')!.rules[0]!.statements[0]).toEqual({
      kind: 'mangle',
      key: { kind: 'meta', key: 'mark' },
      value: { kind: 'binop', op: '|', left: { kind: 'meta', key: 'mark' }, right: { kind: 'value', value: 0x4000 } },
    });
    const ext = findChain(t, 'external-42NFTM6N-ns2/svc2/tcp/p80')!;
    expect(ext.rules[1]).toMatchObject({ comment: 'masquerade local traffic' });
    expect(ext.rules[1]!.statements[0]).toEqual({
      kind: 'match',
      left: { kind: 'fib', flags: ['saddr'], result: 'type' },
      op: '==',
      right: { kind: 'value', value: 'local' },
    });
    const ep = findChain(t, 'endpoint-GTK6MW7G-ns5/svc5/tcp/p80__10.180.0.3/80')!;
    expect(ep.rules[1]!.statements[0]).toEqual({
      kind: 'set-update',
      op: 'update',
      set: 'affinity-GTK6MW7G-ns5/svc5/tcp/p80__10.180.0.3/80',
      elem: { kind: 'payload', protocol: 'ip', field: 'saddr' },
    });
  });
});

/** Splits the knftables file into its `# case:` sections, each one JSON document. */
function knftablesCases(text: string): { title: string; json: string; line: number }[] {
  const out: { title: string; json: string; line: number }[] = [];
  let title = '';
  text.split('\n').forEach((l, i) => {
    if (l.startsWith('# case:')) title = l.slice('# case:'.length).trim();
    else if (l.trim()) out.push({ title, json: l, line: i + 1 });
  });
  return out;
}

/** Expected diagnostics per knftables case, by title (titles repeat: one entry covers all). */
const JSON_CASES: Record<string, { diagnostics: string[]; why: string }> = {
  'empty list': { diagnostics: [], why: 'metainfo only' },
  'singular objType': {
    diagnostics: ['info:implicit-table@0', 'warning:implicit-chain@0'],
    why: 'a `list chains`-style output (no table object) whose rule names a chain that is not listed',
  },
  'no rules': { diagnostics: ['info:implicit-table@0'], why: '`nft -j list chain`: no table object' },
  'normal output': { diagnostics: ['info:implicit-table@0'], why: '`nft -j list chain`: no table object' },
  'all rules in table': { diagnostics: [], why: '`nft -j list table`' },
  'no elements': { diagnostics: ['info:implicit-table@0'], why: '`nft -j list set`: no table object' },
  'simple type': { diagnostics: ['info:implicit-table@0'], why: '`nft -j list set`' },
  'concatenated type': { diagnostics: ['info:implicit-table@0'], why: '`nft -j list set`' },
  'prefix type': { diagnostics: ['info:implicit-table@0'], why: '`nft -j list set`' },
  'prefix type - bad len value  (NEGATIVE: deliberately malformed element)': {
    diagnostics: ['info:implicit-table@0', 'error:bad-element@0'],
    why: 'NEGATIVE: prefix len is the string "16"; knftables refuses it, the element is skipped',
  },
  'prefix type - missing addr  (NEGATIVE: deliberately malformed element)': {
    diagnostics: ['info:implicit-table@0', 'error:bad-element@0'],
    why: 'NEGATIVE: prefix without addr; knftables refuses it, the element is skipped',
  },
  'simple map': { diagnostics: ['info:implicit-table@0'], why: '`nft -j list map`' },
  'verdict map, concatenated key': { diagnostics: ['info:implicit-table@0'], why: '`nft -j list map`' },
  'concat plus prefix (plus counter)': { diagnostics: ['info:implicit-table@0'], why: '`nft -j list set` of nft 1.1.1' },
  'no counters': { diagnostics: [], why: 'metainfo only' },
  'single counter with comment': { diagnostics: ['info:implicit-table@0'], why: '`nft -j list counters`' },
  'multiple counters without comments': { diagnostics: ['info:implicit-table@0'], why: '`nft -j list counters`' },
};

describe.skipIf(!haveCorpus)('nft JSON corpus (knftables test outputs)', () => {
  const cases = haveCorpus ? knftablesCases(read('knftables-nft-json-list-outputs.txt')) : [];

  it('has the 18 documents of the file, each with an expectation', () => {
    expect(cases).toHaveLength(18);
    for (const c of cases) expect(JSON_CASES[c.title], c.title).toBeDefined();
  });

  it.each(cases.map((c) => [`${c.title} (line ${c.line})`, c] as const))('%s', (_name, c) => {
    const r = parseNftJsonDocument(c.json, `knftables:${c.line}`);
    const want = JSON_CASES[c.title]!;
    expect(codes(r), want.why).toEqual(want.diagnostics);
    expect(r.value.metainfo?.jsonSchemaVersion).toBe(1);
    // Every document is also valid `nft list` text after formatting.
    const again = parseNftText(formatNftText(r.value.ruleset), 'formatted');
    expect(again.diagnostics.filter((d) => d.severity !== 'info')).toEqual([]);
    expect(again.value).toEqual(r.value.ruleset);
  });

  it('the NEGATIVE cases keep the set but not the malformed element', () => {
    const negatives = cases.filter((c) => c.title.includes('NEGATIVE'));
    expect(negatives).toHaveLength(2);
    for (const c of negatives) {
      const r = parseNftJsonDocument(c.json, 'neg');
      const set = findSet(table0(r.value.ruleset), 'test')!;
      expect(set).toMatchObject({ keyTypes: ['ipv4_addr'], flags: ['interval'], elements: [] });
      const err = r.diagnostics.find((d) => d.severity === 'error')!;
      expect(err.message).toMatch(c.title.includes('missing addr') ? /"addr"/ : /"len"/);
    }
  });

  it('reads sets and maps of every element shape', () => {
    const byTitle = (t: string) => parseNftJsonDocument(cases.find((c) => c.title === t)!.json, t).value.ruleset;
    const concat = findSet(table0(byTitle('concatenated type')), 'test')!;
    expect(concat.keyTypes).toEqual(['ipv4_addr', 'inet_proto', 'inet_service']);
    expect(concat.elements[2]).toEqual({
      key: { kind: 'concat', items: [{ kind: 'value', value: '192.168.1.5' }, { kind: 'value', value: 'tcp' }, { kind: 'value', value: 443 }] },
      comment: 'foo',
    });
    const vmap = findMap(table0(byTitle('verdict map, concatenated key')), 'test')!;
    expect(vmap.elements.map((e) => e.value)).toEqual([
      { kind: 'verdict', verdict: 'drop' },
      { kind: 'verdict', verdict: 'return' },
      { kind: 'verdict', verdict: 'goto', target: 'test' },
    ]);
    expect(vmap.elements[1]!.comment).toBe('foo');
    const data = findMap(table0(byTitle('simple map')), 'test')!;
    expect(data).toMatchObject({ mapType: 'inet_service', elements: [{ value: { kind: 'value', value: 80 } }, { comment: 'a comment' }] });
    const counted = findSet(table0(byTitle('concat plus prefix (plus counter)')), 'test')!;
    expect(counted.counter).toBe(true);
    expect(counted.elements[0]).toEqual({
      key: { kind: 'concat', items: [{ kind: 'value', value: '10.0.0.1' }, { kind: 'prefix', addr: '192.168.100.0', len: 24 }] },
      counters: { packets: 0n, bytes: 0n },
    });
    expect(table0(byTitle('single counter with comment')).counters).toEqual([
      { name: 'test-counter', handle: 1, comment: 'test-counter-comment', packets: 100n, bytes: 5000n },
    ]);
  });

  it('reads rules: ct state set, ct status flag test, iifname, comment, handle', () => {
    const r = parseNftJsonDocument(cases.find((c) => c.title === 'normal output')!.json, 'normal');
    const rules = findChain(table0(r.value.ruleset), 'testchain')!.rules;
    expect(rules.map((x) => [x.handle, x.raw])).toEqual([
      [169, 'ct state { established, related } accept'],
      [170, 'ct status dnat accept comment "This rule does something"'],
      [171, 'iifname "lo" accept'],
    ]);
    expect(rules[1]!.comment).toBe('This rule does something');
  });
});
