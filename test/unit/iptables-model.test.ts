/**
 * Model helpers (findChain, statisticProbability, dnatDestination, chain vocabulary)
 * and the rule tokenizer's quoting rules.
 */
import { describe, expect, it } from 'vitest';
import {
  allRules,
  chainHook,
  dnatDestination,
  findChain,
  findMatchOption,
  isBuiltinChainName,
  statisticProbability,
} from '../../src/model/iptables.js';
import { ruleSemanticKey } from '../../src/model/iptables-semantic.js';
import { tokenizeLine, TokenBuffer } from '../../src/parsers/iptables-rule.js';
import { parseIptablesSave } from '../../src/parsers/iptables-save.js';
import { kubeNatTable, makeChain, makeRule, makeRuleset, makeService, makeTable, match, notOpt, opt, target } from './builders/iptables.js';

const dnat = (to: string) => makeRule({ target: target('DNAT', [opt('to-destination', to)]) });
const stat = (...options: ReturnType<typeof opt>[]) => makeRule({ matches: [match('statistic', ...options)], target: target('KUBE-SEP-A') });

describe('findChain', () => {
  const svc = makeService({ endpoints: [{ ip: '10.180.0.1', port: 80 }, { ip: '10.180.0.2', port: 80 }] });
  const rs = makeRuleset([makeTable('filter', [makeChain('INPUT')]), kubeNatTable([svc])]);

  it('finds chains by table and name, and nothing across tables', () => {
    expect(findChain(rs, 'nat', 'KUBE-SERVICES')!.rules).toHaveLength(1);
    expect(findChain(rs, 'filter', 'INPUT')!.builtin).toBe(true);
    expect(findChain(rs, 'filter', 'KUBE-SERVICES')).toBeUndefined();
    expect(findChain(rs, 'raw', 'PREROUTING')).toBeUndefined();
    expect(findChain(rs, 'nat', 'NOPE')).toBeUndefined();
  });

  it('walks all rules with their table and chain', () => {
    const seen = [...allRules(rs)].map((x) => `${x.table.name}/${x.chain.name}#${x.rule.index}`);
    expect(seen).toContain('nat/KUBE-POSTROUTING#3');
    expect(seen).toHaveLength(rs.tables.flatMap((t) => t.chains.flatMap((c) => c.rules)).length);
  });
});

describe('statisticProbability', () => {
  it.each([
    ['0.33332999982', 0.33332999982],
    ['0.50000000000', 0.5],
    ['0.5000000000', 0.5],
    ['1', 1],
  ])('reads --probability %s as a float', (text, want) => {
    expect(statisticProbability(stat(opt('mode', 'random'), opt('probability', text)))).toBe(want);
  });

  it('gives 1 − P for ! --probability P', () => {
    expect(statisticProbability(stat(opt('mode', 'random'), notOpt('probability', '0.25')))).toBe(0.75);
  });

  it('is null without a random statistic match or with a bad number', () => {
    expect(statisticProbability(makeRule())).toBeNull();
    expect(statisticProbability(stat(opt('mode', 'nth'), opt('every', '2'), opt('packet', '0')))).toBeNull();
    expect(statisticProbability(stat(opt('mode', 'random'), opt('probability', 'half')))).toBeNull();
    expect(statisticProbability(stat(opt('mode', 'random'), opt('probability', '1.5')))).toBeNull();
  });
});

describe('dnatDestination', () => {
  it.each([
    ['10.244.1.5:8080', { address: '10.244.1.5', addressMax: null, port: 8080, portMax: null }],
    ['10.244.1.5', { address: '10.244.1.5', addressMax: null, port: null, portMax: null }],
    ['10.0.0.1-10.0.0.9:80-90', { address: '10.0.0.1', addressMax: '10.0.0.9', port: 80, portMax: 90 }],
    ['[fd00::5]:8080', { address: 'fd00::5', addressMax: null, port: 8080, portMax: null }],
    ['fd00::5', { address: 'fd00::5', addressMax: null, port: null, portMax: null }],
    [':53', { address: null, addressMax: null, port: 53, portMax: null }],
  ])('parses --to-destination %s', (text, want) => {
    expect(dnatDestination(dnat(text))).toEqual({ ...want, text });
  });

  it('is null for other targets and for unparsable ports', () => {
    expect(dnatDestination(makeRule({ target: target('SNAT', [opt('to-source', '1.2.3.4')]) }))).toBeNull();
    expect(dnatDestination(makeRule({ target: target('DNAT') }))).toBeNull();
    expect(dnatDestination(dnat('10.0.0.1:http'))).toBeNull();
    expect(dnatDestination(dnat('10.0.0.1:70000'))).toBeNull();
    expect(dnatDestination(dnat('[fd00::5'))).toBeNull();
  });

  it('reads the endpoints of real kube-proxy rules', () => {
    const svc = makeService({ endpoints: [{ ip: '10.180.0.7', port: 8443 }] });
    const sep = kubeNatTable([svc]).chains.find((c) => c.name.startsWith('KUBE-SEP-'))!;
    expect(dnatDestination(sep.rules[1]!)).toMatchObject({ address: '10.180.0.7', port: 8443 });
    expect(dnatDestination(sep.rules[0]!)).toBeNull();
  });
});

describe('chain vocabulary', () => {
  it('maps built-in chains to hooks and knows which table has which', () => {
    expect(['PREROUTING', 'INPUT', 'FORWARD', 'OUTPUT', 'POSTROUTING', 'KUBE-SERVICES'].map(chainHook)).toEqual([
      'prerouting',
      'input',
      'forward',
      'output',
      'postrouting',
      null,
    ]);
    expect(isBuiltinChainName('nat', 'FORWARD')).toBe(false);
    expect(isBuiltinChainName('raw', 'PREROUTING')).toBe(true);
    expect(isBuiltinChainName('unknown', 'FORWARD')).toBe(true);
    expect(chainHook('toString')).toBeNull();
  });
});

describe('tokenizer (iptables add_param_to_argv rules)', () => {
  const words = (line: string) => {
    const buf = new TokenBuffer();
    const n = tokenizeLine(line, buf);
    return { words: buf.words.slice(0, n), quoted: buf.quoted.slice(0, n), open: buf.unterminatedQuote };
  };

  it.each([
    ['-A X  -j\tACCEPT ', ['-A', 'X', '-j', 'ACCEPT']],
    ['--comment "a \\"q\\" b"', ['--comment', 'a "q" b']],
    ["--comment \"x\\'y\"", ['--comment', "x'y"]],
    ['--comment "back\\\\slash"', ['--comment', 'back\\slash']],
    ['--comment "" -j X', ['--comment', '', '-j', 'X']],
    ["--comment 'two words'", ['--comment', "'two", "words'"]],
    ['a\\b', ['a\\b']],
    ['pre"mid dle"post', ['premid dle', 'post']],
  ])('splits %j', (line, want) => {
    expect(words(line).words).toEqual(want);
  });

  it('marks quoted words, so a quoted "!" or "--x" is a value', () => {
    const r = parseIptablesSave('-A X -m comment --comment "!" -m comment --comment "--not-an-option" -j ACCEPT\n', 'q');
    expect(r.diagnostics.map((d) => d.code)).toEqual(['chain-inferred']);
    expect(r.value.tables[0]!.chains[0]!.rules[0]!.comment).toBe('! | --not-an-option');
    expect(words('"!" !').quoted).toEqual([true, false]);
  });

  it('reports an unterminated quote and keeps the rule', () => {
    expect(words('--comment "open').open).toBe(true);
    const r = parseIptablesSave('-A X -m comment --comment "open -j ACCEPT\n', 'q');
    expect(r.diagnostics.map((d) => d.code)).toEqual(['unterminated-quote', 'chain-inferred']);
    expect(r.value.tables[0]!.chains[0]!.rules[0]!).toMatchObject({ comment: 'open -j ACCEPT', target: null });
  });
});

describe('rule body', () => {
  const parseOne = (line: string) => parseIptablesSave(`${line}\n`, 'r');

  it('attributes options after -p without -m to the protocol match, as iptables-save prints them', () => {
    const implicit = parseOne('-A X -p tcp --dport 80 -j ACCEPT').value.tables[0]!.chains[0]!.rules[0]!;
    const explicit = parseOne('-A X -p tcp -m tcp --dport 80 -j ACCEPT').value.tables[0]!.chains[0]!.rules[0]!;
    expect(implicit.matches).toEqual([{ module: 'tcp', options: [{ name: 'dport', negated: false, values: ['80'] }] }]);
    expect(ruleSemanticKey(implicit)).toBe(ruleSemanticKey(explicit));
  });

  it('accepts long generic options and matches after the target', () => {
    const r = parseOne('-A X --source 1.2.3.4 --protocol udp --jump DNAT --to-destination 10.0.0.1:53 -m comment --comment late');
    const rule = r.value.tables[0]!.chains[0]!.rules[0]!;
    expect(rule).toMatchObject({ source: { value: '1.2.3.4', negated: false }, protocol: { value: 'udp', negated: false }, comment: 'late' });
    expect(dnatDestination(rule)).toMatchObject({ address: '10.0.0.1', port: 53 });
  });

  it.each([
    ['-A X --dport 80 -j ACCEPT', 'option-without-module'],
    ['-A X -s 1.1.1.1 -s 2.2.2.2', 'duplicate-option'],
    ['-A X -Q foo -j ACCEPT', 'unknown-option'],
    ['-A X stray -j ACCEPT', 'unexpected-word'],
    ['-A X -j ACCEPT !', 'dangling-negation'],
    ['-A X ! ! -s 1.1.1.1', 'double-negation'],
    ['-A X ! -m tcp', 'bad-negation'],
    ['-A X -m', 'missing-value'],
    ['-A X -4 -j ACCEPT', 'ignored-option'],
  ])('keeps "%s" and reports %s', (line, code) => {
    const r = parseOne(line);
    expect(r.diagnostics.map((d) => d.code)).toEqual([code, 'chain-inferred']);
    expect(r.diagnostics[0]!).toMatchObject({ severity: 'warning', line: 1, text: line });
    expect(r.value.tables[0]!.chains[0]!.rules).toHaveLength(1);
  });

  it('shares repeated parts between rules without mixing goto and jump', () => {
    const lines = ['-A X -p tcp -m tcp --dport 80 -j Y', '-A X -p tcp -m tcp --dport 80 -g Y', '-A X -p tcp -m tcp --dport 81 -j Y'];
    const r = parseIptablesSave([...lines, '-A X -p udp -m udp -j Y', '-A X -p udp -m udp -j Y', '-A Y -j ACCEPT'].join('\n'), 'share');
    const [a, b, c, d, e] = findChain(r.value, 'unknown', 'X')!.rules;
    expect(a!.matches[0]!.options[0]).toBe(b!.matches[0]!.options[0]);
    expect(a!.matches[0]!.options[0]).not.toBe(c!.matches[0]!.options[0]);
    expect(c!.matches[0]!.options[0]!.values).toEqual(['81']);
    expect(d!.matches[0]).toBe(e!.matches[0]);
    expect(a!.protocol).toBe(c!.protocol);
    expect([a!.target!.kind, b!.target!.kind, c!.target!.kind]).toEqual(['jump', 'goto', 'jump']);
    expect(a!.target).toBe(c!.target);
  });

  it('keeps module options, target options and negation structured', () => {
    const rule = parseOne(
      '-A X -m conntrack ! --ctstate RELATED,ESTABLISHED -m set --match-set KUBE-LOOP-BACK dst,dst,src -j REJECT --reject-with icmp-port-unreachable',
    ).value.tables[0]!.chains[0]!.rules[0]!;
    expect(findMatchOption(rule, 'conntrack', 'ctstate')).toEqual({ name: 'ctstate', negated: true, values: ['RELATED,ESTABLISHED'] });
    expect(rule.target).toEqual({ name: 'REJECT', kind: 'extension', options: [opt('reject-with', 'icmp-port-unreachable')] });
  });
});
