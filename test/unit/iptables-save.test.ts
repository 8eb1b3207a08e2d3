/**
 * iptables-save parser: the corpus sweep (every file of shared/corpus/iptables/ with
 * the diagnostics it is expected to give, and why), parse → format → parse round trips,
 * and the parser's behaviour on structure, counters, garbage and truncation.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { findChain, type IptablesRuleset } from '../../src/model/iptables.js';
import { formatIptablesSave } from '../../src/parsers/iptables-format.js';
import { MAX_DIAGNOSTICS, parseIptablesSave } from '../../src/parsers/iptables-save.js';
import { comparable, saveBlock } from './builders/iptables.js';

const repoRoot = path.resolve(import.meta.dirname, '../..');
const corpus = path.resolve(repoRoot, '../shared/corpus/iptables');
const haveCorpus = existsSync(corpus);
if (!haveCorpus) console.warn(`skipping iptables corpus tests: ${corpus} is absent`);
const readCorpus = (name: string): string => readFileSync(path.join(corpus, name), 'utf8');

/** `code@line` of each diagnostic, in order. */
const codes = (r: { diagnostics: readonly { code: string; line: number }[] }) => r.diagnostics.map((d) => `${d.code}@${d.line}`);

/**
 * What each corpus file must give. Every diagnostic is listed; anything else fails.
 * `rules`: total rules per table, a check that nothing was dropped.
 */
const EXPECTED: Record<string, { dialect: string; diagnostics: string[]; why: string; rules: Record<string, number> }> = {
  'aks-iptables-save-grep-kube-dns.txt': {
    dialect: 'fragment',
    diagnostics: ['chain-inferred@1'],
    why: 'a grep fragment: no chain declarations, so its 7 chains are inferred (one info for the table)',
    rules: { unknown: 16 },
  },
  'calico-iptables-S-filter-cali.txt': {
    dialect: 'list-rules',
    diagnostics: ['shell-prompt@1', 'chain-inferred@13'],
    why: 'line 1 is the pasted prompt; grep dropped the -P lines, so INPUT/FORWARD/OUTPUT are inferred',
    rules: { unknown: 28 },
  },
  'ip6tables-save-nf_tables-kube-truncated.txt': {
    dialect: 'save',
    diagnostics: ['shell-prompt@1', 'truncated@32'],
    why: 'line 1 is the pasted prompt (info); the excerpt ends inside *filter without COMMIT: the one warning is truncated',
    rules: { mangle: 0, filter: 6 },
  },
  'k3s-iptables-save-c-counters.txt': {
    dialect: 'save',
    diagnostics: [],
    why: 'a complete real iptables-save -c dump',
    rules: { raw: 0, mangle: 0, nat: 18, filter: 28 },
  },
  'k8s-iptables-proxier-test-overall.txt': {
    dialect: 'save',
    diagnostics: [],
    why: "kube-proxy's own restore input: every jump target is declared",
    rules: { filter: 10, nat: 55 },
  },
  'k8s-iptables-sorttest-etp-local-svl-fw.txt': {
    dialect: 'save',
    diagnostics: ['unknown-target@76'],
    why: 'hand-built test data: KUBE-SVL-… jumps to KUBE-MARK-DROP, which its nat table never declares',
    rules: { filter: 9, nat: 42 },
  },
  'real-sessionaffinity-recent-old-format.txt': {
    dialect: 'fragment',
    diagnostics: ['chain-inferred@6', 'duplicate-chain@23', 'duplicate-chain@24', 'duplicate-chain@25', 'duplicate-chain@26'],
    why: 'two grep fragments of one service pasted together: the second re-declares its 4 chains; KUBE-NODEPORTS/KUBE-SERVICES are inferred',
    rules: { unknown: 29 },
  },
};

const rulesPerTable = (rs: IptablesRuleset) =>
  Object.fromEntries(rs.tables.map((t) => [t.name, t.chains.reduce((n, c) => n + c.rules.length, 0)]));

describe.skipIf(!haveCorpus)('corpus sweep: shared/corpus/iptables', () => {
  const files = haveCorpus ? readdirSync(corpus).sort() : [];

  it('has an expectation for every file, and every expectation has its file', () => {
    expect(files).toEqual(Object.keys(EXPECTED).sort());
  });

  it.each(files)('%s gives exactly its expected diagnostics and keeps every rule', (file) => {
    const text = readCorpus(file);
    const r = parseIptablesSave(text, file);
    const want = EXPECTED[file]!;
    expect(codes(r), want.why).toEqual(want.diagnostics);
    expect(r.value.dialect).toBe(want.dialect);
    expect(rulesPerTable(r.value)).toEqual(want.rules);
    // Every `-A` line of the file became a rule (lines are 1-based and unique).
    const ruleLines = text.split('\n').flatMap((l, i) => (/^(\[\d+:\d+\] )?-A /.test(l) ? [i + 1] : []));
    const parsedLines = r.value.tables.flatMap((t) => t.chains.flatMap((c) => c.rules.map((x) => x.line)));
    expect(parsedLines.sort((a, b) => a - b)).toEqual(ruleLines);
  });

  it.each(files)('%s: parse → format → parse gives an equal model (counters on and off)', (file) => {
    const first = parseIptablesSave(readCorpus(file), file).value;
    for (const withCounters of [true, false]) {
      const again = parseIptablesSave(formatIptablesSave(first, { counters: withCounters }), file).value;
      expect(comparable(again, { counters: withCounters })).toEqual(comparable(first, { counters: withCounters }));
    }
  });

  it.each(['k3s-iptables-save-c-counters.txt', 'aks-iptables-save-grep-kube-dns.txt'])(
    '%s (real iptables-save output) formats back byte for byte',
    (file) => {
      const text = readCorpus(file);
      expect(formatIptablesSave(parseIptablesSave(text, file).value, { counters: true })).toBe(text);
    },
  );

  it('records tool, version and backend of the headers', () => {
    const ip6 = parseIptablesSave(readCorpus('ip6tables-save-nf_tables-kube-truncated.txt'), 'ip6').value;
    expect(ip6.generator).toEqual({ tool: 'ip6tables-save', version: '1.8.9', backend: 'nf_tables', date: 'Sat Mar  9 17:33:03 2024' });
    expect(ip6.family).toBe('ipv6');
    const k3s = parseIptablesSave(readCorpus('k3s-iptables-save-c-counters.txt'), 'k3s').value;
    expect(k3s.generator).toMatchObject({ tool: 'iptables-save', version: '1.8.4', backend: 'legacy' });
    expect(k3s.family).toBe('ipv4');
  });
});

describe('parser structure', () => {
  it('puts chains and rules in their tables with 1-based indexes, line numbers and raw text', () => {
    const text =
      saveBlock('filter', [':INPUT ACCEPT [0:0]', ':KUBE-FW - [0:0]', '-A INPUT -j KUBE-FW', '-A KUBE-FW -j DROP', '-A INPUT -j ACCEPT']) +
      saveBlock('nat', [':OUTPUT ACCEPT [0:0]', '-A OUTPUT -j RETURN']);
    const r = parseIptablesSave(text, 't');
    expect(r.diagnostics).toEqual([]);
    const input = findChain(r.value, 'filter', 'INPUT')!;
    expect(input.rules.map((x) => [x.index, x.line, x.raw])).toEqual([
      [1, 4, '-A INPUT -j KUBE-FW'],
      [2, 6, '-A INPUT -j ACCEPT'],
    ]);
    expect(input.rules[0]!.target).toEqual({ name: 'KUBE-FW', kind: 'jump', options: [] });
    expect(input.rules[1]!.target!.kind).toBe('builtin');
    expect(findChain(r.value, 'filter', 'KUBE-FW')).toMatchObject({ builtin: false, policy: null, line: 3 });
    expect(findChain(r.value, 'nat', 'OUTPUT')!.rules[0]!.chain).toBe('OUTPUT');
    expect(findChain(r.value, 'nat', 'INPUT')).toBeUndefined();
    expect(r.value.tables.map((t) => [t.name, t.line, t.committed])).toEqual([
      ['filter', 1, true],
      ['nat', 8, true],
    ]);
  });

  it('keeps a rule for an undeclared chain in save format, creating the chain, with a warning', () => {
    const r = parseIptablesSave(saveBlock('nat', [':OUTPUT ACCEPT [0:0]', '-A KUBE-X -j RETURN', '-A PREROUTING -j KUBE-X']), 't');
    // PREROUTING is built into nat: restore input may use it undeclared.
    expect(codes(r)).toEqual(['undeclared-chain@3']);
    expect(findChain(r.value, 'nat', 'PREROUTING')).toMatchObject({ inferred: true, builtin: true, policy: null });
    expect(r.diagnostics[0]!.severity).toBe('warning');
    expect(findChain(r.value, 'nat', 'KUBE-X')).toMatchObject({ inferred: true, line: 0, policy: null, counters: null });
    expect(findChain(r.value, 'nat', 'KUBE-X')!.rules).toHaveLength(1);
  });

  it('warns about data before any *table in save format and keeps it in table "unknown"', () => {
    const text = ':KUBE-A - [0:0]\n-A KUBE-A -j ACCEPT\n' + saveBlock('filter', [':INPUT ACCEPT [0:0]']);
    const r = parseIptablesSave(text, 't');
    expect(codes(r)).toEqual(['outside-table@1', 'outside-table@2']);
    expect(findChain(r.value, 'unknown', 'KUBE-A')!.rules[0]!.target!.kind).toBe('builtin');
    expect(r.value.dialect).toBe('save');
  });

  it('reports a missing COMMIT between tables and truncation at the end, keeping all rules', () => {
    const text = saveBlock('filter', [':INPUT ACCEPT [0:0]', '-A INPUT -j ACCEPT'], { commit: false }) + saveBlock('nat', [':OUTPUT ACCEPT [0:0]', '-A OUTPUT -j RETURN'], { commit: false });
    const r = parseIptablesSave(text, 't');
    expect(codes(r)).toEqual(['missing-commit@4', 'truncated@6']);
    expect(r.diagnostics[1]!.text).toBe('-A OUTPUT -j RETURN');
    expect(r.value.tables.map((t) => [t.name, t.committed, t.chains[0]!.rules.length])).toEqual([
      ['filter', false, 1],
      ['nat', false, 1],
    ]);
  });

  it('keeps 64-bit counters exactly, beyond 2^53', () => {
    const max = 18446744073709551615n;
    const text = saveBlock('filter', [
      `:INPUT ACCEPT [${max}:${max - 1n}]`,
      `[${max}:9007199254740993] -A INPUT -j ACCEPT`,
      '[999999999999999:1000000000000000] -A INPUT -j DROP',
    ]);
    const r = parseIptablesSave(text, 't');
    expect(r.diagnostics).toEqual([]);
    const input = findChain(r.value, 'filter', 'INPUT')!;
    expect(input.counters).toEqual({ packets: max, bytes: max - 1n });
    expect(input.rules[0]!.counters).toEqual({ packets: max, bytes: 9007199254740993n });
    // 15 and 16 digits: either side of the parser's fast path.
    expect(input.rules[1]!.counters).toEqual({ packets: 999999999999999n, bytes: 1000000000000000n });
    expect(typeof input.rules[0]!.counters!.packets).toBe('bigint');
    expect(formatIptablesSave(r.value, { counters: true })).toContain(`[${max}:9007199254740993] -A INPUT`);
  });

  it('flags malformed counters without losing the chain', () => {
    const r = parseIptablesSave(saveBlock('filter', [':INPUT ACCEPT [12:x]', '[1:2:3] -A INPUT -j ACCEPT']), 't');
    expect(codes(r)).toEqual(['bad-counters@2', 'unknown-line@3']);
    expect(findChain(r.value, 'filter', 'INPUT')).toMatchObject({ policy: 'ACCEPT', counters: null });
  });

  it('reads both legacy-tables warnings (iptables-nft-save and iptables -S forms, stdout or merged stderr)', () => {
    const save = '# Warning: iptables-legacy tables present, use iptables-legacy-save to see them\n' + saveBlock('filter', [':INPUT ACCEPT [0:0]']);
    const listRules = '# Warning: ip6tables-legacy tables present, use ip6tables-legacy to see them\n-P INPUT ACCEPT\n';
    const noHash = saveBlock('nat', [':OUTPUT ACCEPT [0:0]']) + 'Warning: iptables-legacy tables present, use iptables-legacy-save to see them\n';
    for (const text of [save, listRules, noHash]) {
      const r = parseIptablesSave(text, 't');
      expect(r.diagnostics).toEqual([]);
      expect(r.value.legacyTablesPresent).toBe(true);
    }
    expect(parseIptablesSave(saveBlock('filter', [':INPUT ACCEPT [0:0]']), 't').value.legacyTablesPresent).toBe(false);
    const formatted = formatIptablesSave(parseIptablesSave(save, 't').value, { counters: false });
    expect(formatted.split('\n')[0]).toBe('# Warning: iptables-legacy tables present, use iptables-legacy-save to see them');
  });

  it.each([
    ['v1.8.9 (nf_tables)', { version: '1.8.9', backend: 'nf_tables' }],
    ['v1.8.7 (legacy)', { version: '1.8.7', backend: 'legacy' }],
    ['v1.4.21', { version: '1.4.21', backend: 'legacy' }],
  ])('reads the header "%s"', (header, want) => {
    const r = parseIptablesSave(saveBlock('filter', [':INPUT ACCEPT [0:0]'], { header }), 't');
    expect(r.value.generator).toMatchObject({ tool: 'iptables-save', ...want });
  });

  it('takes family and table of header-less text from the options', () => {
    const r = parseIptablesSave('-P INPUT DROP\n-A INPUT -j ACCEPT\n', 't', { table: 'filter', family: 'ipv6' });
    expect(r.value.family).toBe('ipv6');
    expect(r.value.tables.map((t) => t.name)).toEqual(['filter']);
    expect(findChain(r.value, 'filter', 'INPUT')).toMatchObject({ builtin: true, policy: 'DROP', inferred: false });
  });

  it('handles CRLF line ends, a BOM, blank lines and comments', () => {
    const text = '\uFEFF# a note\r\n*filter\r\n\r\n:INPUT DROP [1:2]\r\n-A INPUT -m comment --comment "x y" -j ACCEPT\r\nCOMMIT\r\n';
    const r = parseIptablesSave(text, 't');
    expect(r.diagnostics).toEqual([]);
    const input = findChain(r.value, 'filter', 'INPUT')!;
    expect(input.policy).toBe('DROP');
    expect(input.rules[0]!).toMatchObject({ comment: 'x y', raw: '-A INPUT -m comment --comment "x y" -j ACCEPT', line: 5 });
  });

  it('never reads words left over from an earlier, longer line', () => {
    const r = parseIptablesSave('-A KUBE-A -m comment --comment x -j ACCEPT\n-A\n-P INPUT\n-N\n', 't');
    expect(codes(r)).toEqual(['chain-inferred@1', 'unknown-line@2', 'unknown-line@3', 'unknown-line@4']);
    expect(r.value.tables[0]!.chains.map((c) => [c.name, c.rules.length])).toEqual([['KUBE-A', 1]]);
  });

  it('models -N, -P with -c, -I and -X, and reports commands it does not model', () => {
    const text = [
      '-P INPUT ACCEPT -c 5 300',
      '-N KUBE-A',
      '-N KUBE-OLD',
      '-A INPUT -j KUBE-A -c 2 100',
      '-I INPUT -j DROP',
      '-I INPUT 2 -j RETURN',
      '-X KUBE-OLD',
      '-D INPUT -j DROP',
    ].join('\n');
    const r = parseIptablesSave(text, 't');
    expect(codes(r)).toEqual(['unsupported-command@8']);
    expect(r.value.dialect).toBe('list-rules');
    const input = findChain(r.value, 'unknown', 'INPUT')!;
    expect(input.counters).toEqual({ packets: 5n, bytes: 300n });
    expect(input.rules.map((x) => [x.index, x.target!.name])).toEqual([
      [1, 'DROP'],
      [2, 'RETURN'],
      [3, 'KUBE-A'],
    ]);
    expect(input.rules[2]!.counters).toEqual({ packets: 2n, bytes: 100n });
    expect(findChain(r.value, 'unknown', 'KUBE-OLD')).toBeUndefined();
  });
});

describe('garbage and binary input', () => {
  it('returns a model and one diagnostic per line for text that is not iptables', () => {
    const r = parseIptablesSave('hello world\n{"json": true}\nChain INPUT (policy ACCEPT)\n', 'garbage');
    expect(codes(r)).toEqual(['unknown-line@1', 'unknown-line@2', 'unknown-line@3']);
    expect(r.diagnostics.every((d) => d.severity === 'error' && d.origin === 'garbage')).toBe(true);
    expect(r.value.tables).toEqual([]);
  });

  it('survives binary bytes, keeping the good lines around them', () => {
    const bytes = Buffer.from([0x00, 0xff, 0x2a, 0x0a, 0x2d, 0x41, 0x00, 0x22, 0x0a, 0x3a, 0x5b, 0x0a, 0x80, 0x81]);
    const text = saveBlock('filter', [':INPUT ACCEPT [0:0]', '-A INPUT -j ACCEPT']) + bytes.toString('latin1') + '\n-A INPUT -j DROP\n';
    const r = parseIptablesSave(text, 'bin');
    expect(r.value.tables.length).toBeGreaterThan(0);
    expect(findChain(r.value, 'filter', 'INPUT')!.rules).toHaveLength(1);
    expect(r.diagnostics.length).toBeGreaterThan(0);
    expect(r.diagnostics.every((d) => d.line > 0 && d.text.length <= 201)).toBe(true);
  });

  it('does not crash on any single line made of rule syntax fragments', () => {
    const pieces = ['-A', 'X', '!', '-m', '--x', '"', '\\', '-j', '[1:2]', '-p', 'tcp', '--dport', '-c', '-s', '""', '-g'];
    let seed = 7;
    for (let k = 0; k < 2000; k++) {
      const words: string[] = [];
      for (let w = 0; w < 8; w++) {
        seed = (seed * 1103515245 + 12345) % 2147483648;
        words.push(pieces[seed % pieces.length]!);
      }
      const r = parseIptablesSave(`${words.join(' ')}\n`, 'fuzz');
      expect(r.value).toBeDefined();
    }
  });

  it(`caps diagnostics at ${MAX_DIAGNOSTICS} and counts the rest`, () => {
    const r = parseIptablesSave('junk\n'.repeat(MAX_DIAGNOSTICS + 25), 'junk');
    expect(r.diagnostics).toHaveLength(MAX_DIAGNOSTICS + 1);
    expect(r.diagnostics[0]).toMatchObject({ code: 'diagnostics-suppressed', line: 0 });
    expect(r.diagnostics[0]!.message).toContain('25 more');
  });
});
