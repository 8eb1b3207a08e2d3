/**
 * nft formatter: parse(format(x)) equals x for generated rulesets (seeded, every statement
 * kind the model knows, handles on and off), the layout nft itself uses (indentation, blank
 * lines, element wrapping, flags line), times, and the priority names of nft(8).
 */
import { describe, expect, it } from 'vitest';
import type { NftFamily, NftHook, NftSet } from '../../src/model/nftables.js';
import { formatChain, formatNftText, formatSet } from '../../src/parsers/nft-format.js';
import { formatDuration } from '../../src/parsers/nft-format-expr.js';
import { priorityText, resolvePriority } from '../../src/parsers/nft-priority.js';
import { parseDuration } from '../../src/parsers/nft-text-expr.js';
import { parseNftText } from '../../src/parsers/nft-text.js';
import { makeRule, randomRuleset, withoutHandles } from './nft-builders.js';

describe('parse(format(x)) equals x', () => {
  it.each(Array.from({ length: 40 }, (_, i) => i + 1))('generated ruleset, seed %i', (seed) => {
    const x = randomRuleset(seed);
    const text = formatNftText(x);
    const back = parseNftText(text, `seed-${seed}`);
    expect(back.diagnostics).toEqual([]);
    expect(back.value).toEqual(x);
  });

  it('the generated rulesets really vary (the round trip is not of one shape)', () => {
    const kinds = new Set<string>();
    for (let seed = 1; seed <= 40; seed++) {
      for (const t of randomRuleset(seed).tables) for (const c of t.chains) for (const r of c.rules) for (const s of r.statements) kinds.add(s.kind);
    }
    expect([...kinds].sort()).toEqual(['counter', 'limit', 'log', 'mangle', 'match', 'nat', 'notrack', 'reject', 'set-update', 'verdict', 'vmap', 'xt']);
  });

  it('handles are printed as `nft -a` does and read back; without them the text has none', () => {
    const x = randomRuleset(2);
    expect(formatNftText(x)).toContain('# handle');
    const bare = withoutHandles(x);
    expect(formatNftText(bare)).not.toContain('# handle');
    expect(parseNftText(formatNftText(bare), 'bare').value).toEqual(bare);
  });
});

describe('layout as nft prints it', () => {
  it('prints a table as nft 1.0.6 does: comment, counters, sets, chains, a blank line between objects', () => {
    const text = formatNftText({
      tables: [
        {
          family: 'ip',
          name: 'kube-proxy',
          comment: 'rules for kube-proxy',
          counters: [{ name: 'c1', packets: 5n, bytes: 100n }],
          sets: [{ kind: 'set', name: 'cluster-ips', type: 'ipv4_addr', keyTypes: ['ipv4_addr'], flags: [], elements: [] }],
          chains: [
            {
              name: 'nat-prerouting',
              base: { type: 'nat', hook: 'prerouting', priority: -100, priorityText: 'dstnat', policy: 'accept' },
              rules: [makeRule([{ kind: 'verdict', verdict: 'jump', target: 'services' }])],
            },
          ],
          objects: [],
        },
      ],
    });
    expect(text).toBe(
      [
        'table ip kube-proxy {',
        '\tcomment "rules for kube-proxy"',
        '\tcounter c1 {',
        '\t\tpackets 5 bytes 100',
        '\t}',
        '',
        '\tset cluster-ips {',
        '\t\ttype ipv4_addr',
        '\t}',
        '',
        '\tchain nat-prerouting {',
        '\t\ttype nat hook prerouting priority dstnat; policy accept;',
        '\t\tjump services',
        '\t}',
        '}',
        '',
      ].join('\n'),
    );
  });

  const set = (keyTypes: string[], keys: (string | number)[], extra: Partial<NftSet> = {}): NftSet => ({
    kind: 'set',
    name: 's',
    type: keyTypes.join(' . '),
    keyTypes,
    flags: [],
    elements: keys.map((k) => ({ key: { kind: 'value', value: k } })),
    ...extra,
  });

  it('wraps elements as nft does: 2 addresses, 5 ports, 1 concatenation per line', () => {
    expect(formatSet(set(['ipv4_addr'], ['10.0.0.1', '10.0.0.2', '10.0.0.3']))).toContain('elements = { 10.0.0.1, 10.0.0.2,\n\t\t\t     10.0.0.3 }');
    expect(formatSet(set(['inet_service'], [1, 2, 3, 4, 5, 6]))).toContain('elements = { 1, 2, 3, 4, 5,\n\t\t\t     6 }');
    expect(formatSet(set(['ifname'], ['lo', 'eth0']))).toContain('elements = { "lo",\n\t\t\t     "eth0" }');
  });

  it('prints `flags timeout` only where nft does (not when a default timeout implies it)', () => {
    expect(formatSet(set(['ipv4_addr'], [], { flags: ['timeout'], timeout: 60 }))).not.toContain('flags');
    expect(formatSet(set(['ipv4_addr'], [], { flags: ['timeout'] }))).toContain('\t\tflags timeout\n');
    expect(formatSet(set(['ipv4_addr'], [], { flags: ['timeout', 'dynamic'], timeout: 10800 }))).toContain('\t\tflags dynamic,timeout\n\t\ttimeout 3h\n');
  });

  it('prints a netdev chain with its device, a fragment chain at top level', () => {
    const ingress = formatChain({ name: 'ing', base: { type: 'filter', hook: 'ingress', priority: 0, priorityText: 'filter', policy: 'accept', devices: ['lo'] }, rules: [] });
    expect(ingress).toContain('type filter hook ingress device "lo" priority filter; policy accept;');
    const fragment = formatNftText({ tables: [{ family: 'ip', name: '', chains: [{ name: 'KUBE-SERVICES', rules: [] }], sets: [], counters: [], objects: [] }] });
    expect(fragment).toBe('chain KUBE-SERVICES {\n}\n');
  });

  it('quotes strings that would otherwise read back as something else', () => {
    const rule = makeRule([
      { kind: 'match', left: { kind: 'meta', key: 'iifname' }, op: '==', right: { kind: 'value', value: '123' } },
      { kind: 'log', prefix: 'a "quoted" word' },
    ]);
    expect(rule.raw).toBe('iifname "123" log prefix "a \\"quoted\\" word"');
    const back = parseNftText(formatChain({ name: 'c', rules: [rule] }), 'q');
    expect(back.value.tables[0]!.chains[0]!.rules[0]!.statements).toEqual(rule.statements);
  });
});

describe('times', () => {
  it.each([
    [10800, '3h'],
    [93600, '1d2h'],
    [90, '1m30s'],
    [3599.936, '59m59s936ms'],
    [0, '0s'],
    [Number.POSITIVE_INFINITY, 'never'],
  ])('%s s ↔ %s', (seconds, text) => {
    expect(formatDuration(seconds)).toBe(text);
    expect(parseDuration(text)).toBeCloseTo(seconds, 6);
  });

  it('reads plain seconds and refuses words that are no time', () => {
    expect(parseDuration('10800')).toBe(10800);
    expect(parseDuration('10800s')).toBe(10800);
    expect(parseDuration('3x')).toBeUndefined();
    expect(parseDuration('')).toBeUndefined();
  });
});

describe('priorities (nft(8) STANDARD PRIORITY NAMES)', () => {
  it.each([
    ['ip', 'raw', -300],
    ['ip', 'mangle', -150],
    ['ip', 'dstnat', -100],
    ['ip', 'filter', 0],
    ['ip', 'security', 50],
    ['ip', 'srcnat', 100],
    ['ip', 'dstnat - 10', -110],
    ['inet', 'mangle + 5', -145],
    ['ip', '-110', -110],
    ['bridge', 'dstnat', -300],
    ['bridge', 'filter', -200],
    ['bridge', 'out', 100],
    ['bridge', 'srcnat', 300],
  ] as const)('%s %s = %i', (family, text, value) => {
    expect(resolvePriority(text, family)).toBe(value);
  });

  it('refuses names that are no priority', () => {
    expect(resolvePriority('bogus', 'ip')).toBeUndefined();
    expect(resolvePriority('out', 'ip')).toBeUndefined();
    expect(resolvePriority('dstnat -', 'ip')).toBeUndefined();
  });

  it.each([
    ['ip', 'prerouting', -100, undefined, 'dstnat'],
    ['ip', 'prerouting', -110, undefined, 'dstnat - 10'],
    ['ip', 'input', -110, undefined, '-110'],
    ['ip', 'output', -100, '1.0.6', '-100'],
    ['ip', 'output', -100, '1.0.9', 'dstnat'],
    ['ip', 'output', -90, '1.0.6', '-90'],
    ['ip', 'postrouting', 100, undefined, 'srcnat'],
    ['ip', 'input', 100, '1.0.6', '100'],
    ['ip', 'prerouting', -295, undefined, 'raw + 5'],
    ['ip', 'output', 0, undefined, 'filter'],
    ['ip', 'output', -200, undefined, '-200'],
    ['arp', 'input', 0, undefined, 'filter'],
    ['netdev', 'ingress', -150, undefined, '-150'],
    ['bridge', 'forward', -199, undefined, 'filter + 1'],
    ['bridge', 'prerouting', -300, undefined, 'dstnat'],
    ['bridge', 'output', 100, undefined, 'out'],
    ['bridge', 'postrouting', 300, undefined, 'srcnat'],
  ] as [NftFamily, NftHook, number, string | undefined, string][])('%s %s %i (nft %s) prints %s', (family, hook, value, version, text) => {
    expect(priorityText(value, family, hook, version)).toBe(text);
  });
});
