/**
 * The compact rule objects of the iptables-save parser (src/parsers/iptables-records.ts):
 * `raw` is still the source line byte for byte (written again or kept), every field reads
 * as before, plain copies carry every field, a lazy `--to-destination` target equals the
 * plain one, and the model keeps no part of the dump's text alive.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { collectGarbage } from '../../src/collect/memory.js';
import { allRules, plainIptablesChain, plainIptablesRule, type IptablesRule } from '../../src/model/iptables.js';
import { parseIptablesSave } from '../../src/parsers/iptables-save.js';
import { copyFixture } from '../helpers/fixtures.js';
import { commentMatch, counters, makeChain, makeRule, match, opt, saveBlock, target } from './builders/iptables.js';

const repoRoot = path.resolve(import.meta.dirname, '../..');
const corpus = path.resolve(repoRoot, '../shared/corpus/iptables');
const haveCorpus = existsSync(corpus);
if (!haveCorpus) console.warn(`skipping the iptables corpus part: ${corpus} is absent`);

const lab = readFileSync(path.join(copyFixture('lab-iptables'), 'probes', 'iptables-save.stdout'), 'utf8');

/** The text's lines as the parser numbers them: without BOM and CR. */
function sourceLines(text: string): string[] {
  return text.replace(/^\ufeff/, '').split('\n').map((l) => l.replace(/\r$/, ''));
}

/** Every rule of a one-table save text, in order. */
function rulesOf(lines: readonly string[]): IptablesRule[] {
  const r = parseIptablesSave(saveBlock('filter', [':X - [0:0]', ...lines]), 't');
  return [...allRules(r.value)].map((x) => x.rule);
}

/** IptablesRule's fields in the interface's order. */
const FIELD_ORDER = ['chain', 'index', 'line', 'raw', 'counters', 'source', 'destination', 'inInterface', 'outInterface', 'protocol', 'fragment', 'matches', 'target', 'comment'];

function expectRawIsSourceLine(text: string, what: string): void {
  const lines = sourceLines(text);
  const rules = [...allRules(parseIptablesSave(text, 't').value)].map((x) => x.rule);
  expect(rules.length, what).toBeGreaterThan(0);
  for (const rule of rules) expect(rule.raw, `${what} line ${rule.line}`).toBe(lines[rule.line - 1]);
}

describe('raw', () => {
  it('is the source line of every rule of the lab capture, damaged or not', () => {
    expectRawIsSourceLine(lab, 'lab');
    const damaged = '\ufeff' + sourceLines(lab).map((l, i) => (i % 7 === 3 && l.startsWith('[') ? `  ${l}  ` : l)).join('\r\n');
    expectRawIsSourceLine(damaged, 'lab with BOM, CRLF and padded lines');
  });

  it.skipIf(!haveCorpus)('is the source line of every rule of every corpus file', () => {
    const files = readdirSync(corpus);
    expect(files.length).toBeGreaterThan(0);
    for (const f of files) expectRawIsSourceLine(readFileSync(path.join(corpus, f), 'utf8'), f);
  });

  it('is written again for canonical lines and kept for the others', () => {
    const canonical = [
      '[5:300] -A X -p tcp -m tcp --dport 80 -j ACCEPT',
      '[0:0] -A X -s 10.0.0.0/8 ! -d 10.1.0.0/16 -m comment --comment "a b" -j DNAT --to-destination 10.0.0.1:80',
      '-A X -m set --match-set s dst,dst -g Y',
    ];
    const kept = [
      '[05:300] -A X -j ACCEPT', // leading zero
      '[5:300]  -A X -j ACCEPT', // two spaces
      '[5:300] --append X -j ACCEPT',
      '-A X -p tcp --dport 80 -j ACCEPT', // no -m tcp
      '-A X -m comment --comment "x" -j ACCEPT', // xtables_save_string writes x bare
      '-I X 1 -j ACCEPT',
      '-A X -j ACCEPT -c 1 2', // counters after the target
      '-A X\t-j ACCEPT', // a tab
      '-A X -j ACCEPT ', // a trailing blank
      ` -A X -j ACCEPT`, // a leading blank
      `-A X -m comment --comment "it's" -j ACCEPT`, // the formatter escapes '
      '-A X -m comment --comment "a b""c d" -j ACCEPT', // two words, no blank between
      '-A X -m comment --comment x"y z" -j ACCEPT', // a word quoted in part
      '-A X -m comment --comment "a\\"b" -j ACCEPT', // an escape
    ];
    const rules = rulesOf([...canonical, ...kept, '-A Y -j ACCEPT']);
    const byLine = new Map(rules.map((r) => [r.raw, r]));
    for (const line of [...canonical, ...kept]) expect(byLine.has(line), line).toBe(true);
    for (const line of canonical) expect(Object.hasOwn(byLine.get(line)!, 'raw'), line).toBe(false);
    for (const line of kept) expect(Object.hasOwn(byLine.get(line)!, 'raw'), line).toBe(true);
  });

  it('can be assigned, as on a plain object', () => {
    const [rule] = rulesOf(['[1:2] -A X -j ACCEPT']) as [IptablesRule];
    (rule as { raw: string }).raw = 'changed';
    expect(rule.raw).toBe('changed');
    expect(Object.keys(rule)).toContain('raw');
  });
});

describe('rule and chain objects', () => {
  it('read every field as the plain model does; plain copies deep-equal built rules', () => {
    const line = '[7:420] -A X -s 10.0.0.0/8 -p tcp -m comment --comment "svc a" -m tcp --dport 80 -j DNAT --to-destination 10.0.0.1:80';
    const [rule] = rulesOf([line]) as [IptablesRule];
    const want = makeRule({
      chain: 'X',
      index: 1,
      line: 3,
      raw: line,
      counters: counters(7, 420),
      source: { value: '10.0.0.0/8', negated: false },
      protocol: { value: 'tcp', negated: false },
      matches: [commentMatch('svc a'), match('tcp', opt('dport', '80'))],
      target: target('DNAT', [opt('to-destination', '10.0.0.1:80')]),
    });
    for (const key of Object.keys(want) as (keyof IptablesRule)[]) expect(rule[key], key).toEqual(want[key]);
    expect(plainIptablesRule(rule)).toStrictEqual(want);
    expect(Object.keys(plainIptablesRule(rule))).toEqual(FIELD_ORDER);
    expect(rule.constructor).toBe(Object);
  });

  it('give chains every field through plainIptablesChain', () => {
    const r = parseIptablesSave(saveBlock('filter', [':INPUT DROP [3:4]', ':X - [0:0]', '-A X -j ACCEPT', '-A Z -j X']), 't');
    const chains = r.value.tables[0]!.chains.map(plainIptablesChain);
    const input = makeChain('INPUT', [], { policy: 'DROP', counters: counters(3, 4), line: 2 });
    expect(chains[0]).toStrictEqual(input);
    expect(chains.map((c) => [c.name, c.builtin, c.policy, c.inferred, c.rules.length])).toEqual([
      ['INPUT', true, 'DROP', false, 0],
      ['X', false, null, false, 1],
      ['Z', false, null, true, 1],
    ]);
  });

  it('keep a lazy --to-destination target equal to the plain one, the same list on every read', () => {
    const [rule] = rulesOf(['-A X -p tcp -m tcp -j DNAT --to-destination 10.0.0.1:8080']) as [IptablesRule];
    const t = rule.target!;
    expect(Object.keys(t)).toEqual(['name', 'kind', 'options']);
    expect(t).toEqual(target('DNAT', [opt('to-destination', '10.0.0.1:8080')]));
    expect(t.options).toBe(t.options);
    expect(JSON.parse(JSON.stringify(t))).toEqual({ name: 'DNAT', kind: 'extension', options: [{ name: 'to-destination', negated: false, values: ['10.0.0.1:8080'] }] });
    expect({ ...t }.options).toBe(t.options);
  });

  it('share equal counters and keep large ones exact', () => {
    const rules = rulesOf(['[7:420] -A X -j ACCEPT', '[7:420] -A X -j DROP', '[18446744073709551615:9007199254740993] -A X']);
    expect(rules[0]!.counters).toBe(rules[1]!.counters);
    expect(rules[2]!.counters).toEqual({ packets: 18446744073709551615n, bytes: 9007199254740993n });
    expect(rules[2]!.raw).toBe('[18446744073709551615:9007199254740993] -A X');
  });
});

/** A nat table of `n` DNAT rules sharing one long comment: about 1,150 characters a line. */
function longLineDump(n: number): string {
  const comment = `"${'kubernetes service portals '.repeat(40).trim()}"`;
  const lines: string[] = [':X - [0:0]'];
  for (let i = 0; i < n; i++) {
    const ip = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
    lines.push(`[${i}:${i * 60}] -A X -d ${ip}/32 -p tcp -m comment --comment ${comment} -m tcp --dport 80 -j DNAT --to-destination ${ip}:8080`);
  }
  return saveBlock('nat', lines);
}

describe('retained memory', () => {
  it('keeps no part of the text alive once the text is dropped', () => {
    let text: string | null = longLineDump(10_000);
    const textBytes = text.length;
    expect(textBytes).toBeGreaterThan(11_000_000);
    collectGarbage(0);
    const withText = process.memoryUsage().heapUsed;
    const model = parseIptablesSave(text, 't');
    text = null;
    collectGarbage(0);
    const kept = process.memoryUsage().heapUsed - (withText - textBytes);
    expect(model.value.tables[0]!.chains[0]!.rules).toHaveLength(10_000);
    // The model is about 250 bytes a rule (2.5 MB); a view into the text would keep all 11 MB.
    expect(kept).toBeLessThan(textBytes / 2);
  });
});
