/**
 * Formatter: builder-made rulesets survive format → parse unchanged (compared with
 * `comparable`: everything but line numbers and raw text, and counters when they are
 * not written), in all three dialects; the text has iptables-save's layout and quoting.
 */
import { describe, expect, it } from 'vitest';
import type { IptablesRuleset } from '../../src/model/iptables.js';
import { formatIptablesSave, formatRule } from '../../src/parsers/iptables-format.js';
import { parseIptablesSave } from '../../src/parsers/iptables-save.js';
import {
  commentMatch,
  comparable,
  counters,
  kubeNatTable,
  makeChain,
  makeRule,
  makeRuleset,
  makeService,
  makeTable,
  match,
  notOpt,
  opt,
  target,
} from './builders/iptables.js';

const services = [
  makeService(),
  makeService({ namespace: 'kube-system', name: 'kube-dns', portName: 'dns', protocol: 'udp', clusterIP: '10.96.0.10', port: 53 }),
  makeService({ name: 'web', clusterIP: '172.30.0.50', endpoints: [1, 2, 3, 4].map((i) => ({ ip: `10.244.${i}.9`, port: 8080 })) }),
];

/** Every table, headers, a legacy warning, exact big counters, an inferred chain, odd values. */
function richRuleset(): IptablesRuleset {
  const big = counters(18446744073709551615n, 9007199254740993n);
  return makeRuleset(
    [
      makeTable('raw', [makeChain('PREROUTING', [], { table: 'raw', counters: big }), makeChain('OUTPUT', [], { table: 'raw' })]),
      makeTable('mangle', [makeChain('PREROUTING', [{ matches: [match('mark', opt('mark', '0x1'))], target: target('RETURN') }], { table: 'mangle' })]),
      kubeNatTable(services),
      makeTable('filter', [
        makeChain('INPUT', [{ counters: big, target: target('KUBE-FIREWALL', [], 'jump') }], { policy: 'DROP', counters: counters(3, 180) }),
        makeChain('KUBE-FIREWALL', [
          {
            source: { value: '127.0.0.0/8', negated: true },
            destination: { value: '127.0.0.0/8', negated: false },
            inInterface: { value: 'lo', negated: true },
            fragment: { negated: false },
            matches: [
              commentMatch('block incoming "localnet" \\ connections'),
              commentMatch(''),
              commentMatch('-starts-with-dash'),
              match('conntrack', notOpt('ctstate', 'RELATED,ESTABLISHED,DNAT')),
            ],
            target: target('DROP'),
          },
          { matches: [commentMatch('no target here')] },
          { matches: [match('comment', opt('comment', "it's"))], target: target('LOG', [opt('log-prefix', 'fw: '), opt('log-level', '4')]) },
          { outInterface: { value: 'cali+', negated: false }, target: target('KUBE-FORWARD', [], 'goto') },
        ]),
        makeChain('KUBE-FORWARD', [{ target: target('ACCEPT') }]),
        makeChain('KUBE-LATE', [{ target: target('RETURN') }], { inferred: true, counters: null }),
      ]),
      makeTable('security', [makeChain('INPUT', [], { table: 'security' })], { committed: false }),
    ],
    {
      generator: { tool: 'iptables-save', version: '1.8.9', backend: 'nf_tables', date: 'Sat Mar  9 17:33:03 2024' },
      legacyTablesPresent: true,
    },
  );
}

function roundTrip(rs: IptablesRuleset, withCounters: boolean, options: { table?: 'filter' } = {}) {
  const text = formatIptablesSave(rs, { counters: withCounters });
  const back = parseIptablesSave(text, 'formatted', { ...options, family: 'ipv4' });
  return { text, back };
}

describe('builder rulesets survive format → parse', () => {
  it.each([true, false])('save dialect, counters %s', (withCounters) => {
    const rs = richRuleset();
    const { back } = roundTrip(rs, withCounters);
    expect(comparable(back.value, { counters: withCounters })).toEqual(comparable(rs, { counters: withCounters }));
    // The security table is truncated on purpose; KUBE-LATE is used but never declared.
    expect(back.diagnostics.map((d) => d.code).sort()).toEqual(['truncated', 'undeclared-chain']);
  });

  it('list-rules dialect (iptables -S -v)', () => {
    const rs = makeRuleset(
      [
        makeTable('filter', [
          makeChain('INPUT', [{ counters: counters(2, 100), matches: [commentMatch('x y')], target: target('cali-INPUT', [], 'goto') }], {
            counters: counters(5, 300),
          }),
          // `-N` lines carry no counters, and -S output has no COMMIT.
          makeChain('cali-INPUT', [{ target: target('ACCEPT'), protocol: { value: 'ipencap', negated: false } }], { counters: null }),
          makeChain('OUTPUT', [{ target: target('ACCEPT') }], { inferred: true, counters: null, policy: null }),
        ], { committed: false }),
      ],
      { dialect: 'list-rules', family: 'ipv4' },
    );
    const { text, back } = roundTrip(rs, true, { table: 'filter' });
    expect(text).toBe(
      [
        '-P INPUT ACCEPT -c 5 300',
        '-N cali-INPUT',
        '-A INPUT -m comment --comment "x y" -c 2 100 -g cali-INPUT',
        '-A cali-INPUT -p ipencap -j ACCEPT',
        '-A OUTPUT -j ACCEPT',
        '',
      ].join('\n'),
    );
    expect(comparable(back.value)).toEqual(comparable(rs));
    expect(back.diagnostics.map((d) => d.code)).toEqual(['chain-inferred']);
  });

  it('fragment dialect keeps declared and inferred chains apart', () => {
    const rs = makeRuleset(
      [
        makeTable('unknown', [
          makeChain('KUBE-SVC-A', [{ matches: [commentMatch('ns/a')], target: target('KUBE-SEP-A', [], 'jump') }], { table: 'unknown' }),
          makeChain('KUBE-SERVICES', [{ target: target('KUBE-SVC-A', [], 'jump') }], { table: 'unknown', inferred: true, counters: null }),
        ]),
      ],
      { dialect: 'fragment', family: 'ipv4' },
    );
    const { text, back } = roundTrip(rs, true);
    expect(text).toBe(':KUBE-SVC-A - [0:0]\n-A KUBE-SVC-A -m comment --comment "ns/a" -j KUBE-SEP-A\n-A KUBE-SERVICES -j KUBE-SVC-A\n');
    expect(comparable(back.value)).toEqual(comparable(rs));
  });
});

describe('text layout', () => {
  it('writes headers, tables, counters and footers like iptables-save -c', () => {
    const text = formatIptablesSave(richRuleset(), { counters: true });
    const lines = text.split('\n');
    expect(lines.slice(0, 6)).toEqual([
      '# Warning: iptables-legacy tables present, use iptables-legacy-save to see them',
      '# Generated by iptables-save v1.8.9 (nf_tables) on Sat Mar  9 17:33:03 2024',
      '*raw',
      ':PREROUTING ACCEPT [18446744073709551615:9007199254740993]',
      ':OUTPUT ACCEPT [0:0]',
      'COMMIT',
    ]);
    expect(lines).toContain('[18446744073709551615:9007199254740993] -A INPUT -j KUBE-FIREWALL');
    expect(lines).not.toContain(':KUBE-LATE - [0:0]');
    expect(text.endsWith('*security\n:INPUT ACCEPT [0:0]\n')).toBe(true);
  });

  it('without counters writes no rule prefixes and [0:0] chain counters', () => {
    const text = formatIptablesSave(richRuleset(), { counters: false });
    expect(text).not.toMatch(/^\[/m);
    expect(text).toContain(':PREROUTING ACCEPT [0:0]');
    expect(text).not.toContain('18446744073709551615');
  });

  it('orders a rule the way iptables-save does and quotes like xtables_save_string', () => {
    const rule = parseIptablesSave(
      '-A KUBE-SVC-X -m comment --comment "ns1/svc1:p80 cluster IP" -m tcp -p tcp -d 172.30.0.41 --dport 80 ! -s 10.0.0.0/8 -j KUBE-MARK-MASQ\n',
      'kube-proxy',
    ).value.tables[0]!.chains[0]!.rules[0]!;
    expect(formatRule(rule)).toBe(
      '-A KUBE-SVC-X ! -s 10.0.0.0/8 -d 172.30.0.41 -p tcp -m comment --comment "ns1/svc1:p80 cluster IP" -m tcp --dport 80 -j KUBE-MARK-MASQ',
    );
    const odd = makeRule({
      chain: 'X',
      matches: [commentMatch('plain_word-1'), commentMatch('a/b'), commentMatch("q\"b\\s'"), commentMatch(''), commentMatch('--x')],
      target: target('LOG', [opt('log-prefix', 'p ')]),
    });
    expect(formatRule(odd)).toBe(
      '-A X -m comment --comment plain_word-1 -m comment --comment "a/b" -m comment --comment "q\\"b\\\\s\\\'" -m comment --comment "" -m comment --comment "--x" -j LOG --log-prefix "p "',
    );
  });
});
