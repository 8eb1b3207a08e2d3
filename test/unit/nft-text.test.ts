/**
 * nft text parser: the quirks of corpus-notes items 12–17 one by one, the `nft -f`
 * transaction commands (add/insert/replace/flush/delete), `nft -a` handles, statements the
 * model does not know (kept as `unknown` with a warning, rule kept), and inputs that must
 * never make it throw (garbage, binary, truncated).
 */
import { describe, expect, it } from 'vitest';
import { findChain, findSet, type NftRule, type NftRuleset, type NftStatement } from '../../src/model/nftables.js';
import { parseNftText } from '../../src/parsers/nft-text.js';

/** A block-form table around `body` lines (as `nft list ruleset` prints). */
const table = (body: string[], head = 'table ip kube-proxy') => `${head} {\n${body.map((l) => `\t${l}`).join('\n')}\n}\n`;
/** A block-form chain with `rules`. */
const chain = (name: string, rules: string[], decl?: string) => [`chain ${name} {`, ...(decl ? [`\t${decl}`] : []), ...rules.map((r) => `\t${r}`), '}'];

const rulesOf = (rs: NftRuleset, name: string): readonly NftRule[] => findChain(rs.tables[0]!, name)!.rules;
/** Statements of the single rule `text` in an ip (or `family`) table. */
function statements(text: string, family = 'ip'): readonly NftStatement[] {
  const r = parseNftText(table(chain('c', [text]), `table ${family} t`), 'test');
  expect(r.diagnostics).toEqual([]);
  return rulesOf(r.value, 'c')[0]!.statements;
}
const val = (value: string | number) => ({ kind: 'value', value });

describe('nft list block form', () => {
  it('reads symbolic priorities, with offsets, per family (bridge differs)', () => {
    const text = [
      table([...chain('a', [], 'type nat hook prerouting priority dstnat; policy accept;'), ...chain('b', [], 'type filter hook prerouting priority dstnat - 10; policy drop;'), ...chain('c', [], 'type filter hook output priority raw + 5;'), ...chain('d', [], 'type nat hook postrouting priority srcnat;'), ...chain('e', [], 'type filter hook input priority -110; policy accept;')]),
      table(chain('f', [], 'type filter hook forward priority filter + 1; policy accept;'), 'table bridge br'),
      table(chain('g', [], 'type filter hook ingress device "eth0" priority filter; policy accept;'), 'table netdev nd'),
    ].join('');
    const r = parseNftText(text, 'prio');
    expect(r.diagnostics).toEqual([]);
    const bases = r.value.tables.flatMap((t) => t.chains.map((c) => [c.name, c.base?.priority, c.base?.priorityText, c.base?.policy]));
    expect(bases).toEqual([
      ['a', -100, 'dstnat', 'accept'],
      ['b', -110, 'dstnat - 10', 'drop'],
      ['c', -295, 'raw + 5', 'accept'],
      ['d', 100, 'srcnat', 'accept'],
      ['e', -110, '-110', 'accept'],
      ['f', -199, 'filter + 1', 'accept'],
      ['g', 0, 'filter', 'accept'],
    ]);
    expect(r.value.tables[2]!.chains[0]!.base).toMatchObject({ type: 'filter', hook: 'ingress', devices: ['eth0'] });
  });

  it('reads zero-padded marks and the bitwise forms of both syntaxes as one model', () => {
    const listed = statements('meta mark & 0x00004000 == 0x00000000 return');
    const written = statements('mark and 0x4000 == 0 return');
    expect(written).toEqual(listed);
    expect(statements('meta mark set meta mark ^ 0x00004000')).toEqual(statements('mark set mark xor 0x4000'));
    expect(statements('ct mark set 0x00000020')).toEqual([{ kind: 'mangle', key: { kind: 'ct', key: 'mark' }, value: val(0x20) }]);
  });

  it('reads flag tests: bare value and comma list are `in`, `==` stays `==`, `v / mask` is a masked compare', () => {
    expect(statements('ct state established,related accept')[0]).toEqual({
      kind: 'match',
      left: { kind: 'ct', key: 'state' },
      op: 'in',
      right: { kind: 'list', items: [val('established'), val('related')] },
    });
    expect(statements('ct state new')[0]).toMatchObject({ op: 'in', right: val('new') });
    expect(statements('ct state == established')[0]).toMatchObject({ op: '==' });
    expect(statements('ct state { established, related }')[0]).toMatchObject({ op: '==', right: { kind: 'set' } });
    expect(statements('tcp flags syn / syn,ack')[0]).toEqual({
      kind: 'match',
      left: { kind: 'binop', op: '&', left: { kind: 'payload', protocol: 'tcp', field: 'flags' }, right: { kind: 'list', items: [val('syn'), val('ack')] } },
      op: '==',
      right: val('syn'),
    });
  });

  it('reads values: prefixes, ranges, set literals, named sets, quoted interface names, comparisons', () => {
    expect(statements('ip saddr != 10.0.0.0/8 tcp dport { 80, 443 } iifname "eth0" ip daddr @cluster-ips accept')).toEqual([
      { kind: 'match', left: { kind: 'payload', protocol: 'ip', field: 'saddr' }, op: '!=', right: { kind: 'prefix', addr: '10.0.0.0', len: 8 } },
      { kind: 'match', left: { kind: 'payload', protocol: 'tcp', field: 'dport' }, op: '==', right: { kind: 'set', elements: [{ key: val(80) }, { key: val(443) }] } },
      { kind: 'match', left: { kind: 'meta', key: 'iifname' }, op: '==', right: val('eth0') },
      { kind: 'match', left: { kind: 'payload', protocol: 'ip', field: 'daddr' }, op: '==', right: { kind: 'setref', name: 'cluster-ips' } },
      { kind: 'verdict', verdict: 'accept' },
    ]);
    expect(statements('udp dport 1000-2000 ip saddr >= 10.0.0.5 drop').slice(0, 2)).toEqual([
      { kind: 'match', left: { kind: 'payload', protocol: 'udp', field: 'dport' }, op: '==', right: { kind: 'range', from: val(1000), to: val(2000) } },
      { kind: 'match', left: { kind: 'payload', protocol: 'ip', field: 'saddr' }, op: '>=', right: val('10.0.0.5') },
    ]);
    expect(statements('meta l4proto ipv6-icmp accept', 'inet')[0]).toMatchObject({ right: val('ipv6-icmp') });
  });

  it('reads NAT forms: IPv4 and bracketed IPv6 with port, inet family, port-only, numgen map, flags', () => {
    const nat = (text: string, family = 'ip') => statements(text, family).find((s) => s.kind === 'nat');
    expect(nat('meta l4proto tcp dnat to 10.42.4.201:8080')).toEqual({ kind: 'nat', type: 'dnat', flags: [], addr: val('10.42.4.201'), port: val(8080) });
    expect(nat('meta l4proto tcp dnat to [fd00:10:180::1]:80', 'ip6')).toEqual({ kind: 'nat', type: 'dnat', flags: [], addr: val('fd00:10:180::1'), port: val(80) });
    expect(nat('dnat to fd00::1', 'ip6')).toEqual({ kind: 'nat', type: 'dnat', flags: [], addr: val('fd00::1') });
    expect(nat('meta l4proto tcp dnat ip to 10.0.0.1:80', 'inet')).toMatchObject({ family: 'ip' });
    expect(nat('meta l4proto tcp redirect to :80')).toEqual({ kind: 'nat', type: 'redirect', flags: [], port: val(80) });
    expect(nat('masquerade fully-random')).toEqual({ kind: 'nat', type: 'masquerade', flags: ['fully-random'] });
    expect(nat('meta l4proto tcp masquerade to :1024-65535 random,persistent')).toEqual({
      kind: 'nat',
      type: 'masquerade',
      flags: ['random', 'persistent'],
      port: { kind: 'range', from: val(1024), to: val(65535) },
    });
    expect(nat('dnat to numgen random mod 2 map { 0 : 10.0.0.1, 1 : 10.0.0.2 }')!).toMatchObject({
      addr: {
        kind: 'map',
        key: { kind: 'numgen', mode: 'random', mod: 2, offset: 0 },
        data: { kind: 'set', elements: [{ key: val(0), value: val('10.0.0.1') }, { key: val(1), value: val('10.0.0.2') }] },
      },
    });
  });

  it('reads numgen with offset, reject variants (family defaults become a bare reject), log, limit, notrack', () => {
    expect(statements('numgen inc mod 3 offset 1 vmap { 1 : goto a, 2 : goto b, 3 : drop }')[0]).toMatchObject({
      kind: 'vmap',
      key: { kind: 'numgen', mode: 'inc', mod: 3, offset: 1 },
    });
    expect(statements('reject with icmp type port-unreachable')).toEqual([{ kind: 'reject' }]);
    expect(statements('reject with icmp host-unreachable')).toEqual([{ kind: 'reject', type: 'icmp', code: 'host-unreachable' }]);
    expect(statements('reject with icmpx admin-prohibited', 'inet')).toEqual([{ kind: 'reject', type: 'icmpx', code: 'admin-prohibited' }]);
    expect(statements('tcp dport 80 reject with tcp reset')[1]).toEqual({ kind: 'reject', type: 'tcp reset' });
    expect(statements('log prefix "hello " level info notrack')).toEqual([{ kind: 'log', prefix: 'hello ', level: 'info' }, { kind: 'notrack' }]);
    expect(statements('limit rate over 1 mbytes/second burst 2 mbytes accept')[0]).toEqual({
      kind: 'limit',
      rate: 1,
      unit: 'mbytes',
      per: 'second',
      over: true,
      burst: 2,
      burstUnit: 'mbytes',
    });
    // `burst 5 packets` is nft's default and not printed by it: the model leaves it out too.
    expect(statements('limit rate 10/second burst 5 packets')[0]).toEqual({ kind: 'limit', rate: 10, unit: 'packets', per: 'second', over: false });
  });

  it('reads unusual chain names as jump/goto targets and chain names (corpus-notes 14)', () => {
    const names = [
      'service-P6J77WGM-riset/hellopod-np-svc/tcp/',
      'endpoint-Q3ECPPUF-ns1/svc1/tcp/p80__fd00.10.180..2.1/80',
      'KUBE-SVC-NPX46M4PTMTKRN6Y',
    ];
    const r = parseNftText(table(names.flatMap((n, i) => chain(n, [`goto ${names[(i + 1) % names.length]}`]))), 'names');
    expect(r.diagnostics).toEqual([]);
    names.forEach((n, i) => expect(rulesOf(r.value, n)[0]!.statements).toEqual([{ kind: 'verdict', verdict: 'goto', target: names[(i + 1) % names.length] }]));
  });

  it('reads sets: typeof (key types derived), flags, timeouts, sizes, element timeout/expires/comment/counter', () => {
    const text = table([
      'set aff {',
      '\ttypeof ip saddr . tcp dport',
      '\tsize 65535',
      '\tflags dynamic,timeout',
      '\ttimeout 3h',
      '\telements = { 1.2.3.4 . 80 timeout 1h expires 59m59s936ms comment "x", 5.6.7.8 . 443 counter packets 3 bytes 180 }',
      '}',
      'map marks {',
      '\ttype ipv4_addr : mark',
      '\telements = { 10.0.0.1 : 0x00000010 }',
      '}',
      'set st {',
      '\ttype ipv4_addr',
      '\tpolicy memory',
      '\tcounter',
      '\ttimeout 1d2h',
      '\tgc-interval 1m',
      '}',
    ]);
    const r = parseNftText(text, 'sets');
    expect(r.diagnostics).toEqual([]);
    const t = r.value.tables[0]!;
    expect(findSet(t, 'aff')).toEqual({
      kind: 'set',
      name: 'aff',
      typeof: 'ip saddr . tcp dport',
      type: 'ipv4_addr . inet_service',
      keyTypes: ['ipv4_addr', 'inet_service'],
      size: 65535,
      flags: ['timeout', 'dynamic'],
      timeout: 10800,
      elements: [
        {
          key: { kind: 'concat', items: [val('1.2.3.4'), val(80)] },
          timeout: 3600,
          expires: 3599.936,
          comment: 'x',
        },
        { key: { kind: 'concat', items: [val('5.6.7.8'), val(443)] }, counters: { packets: 3n, bytes: 180n } },
      ],
    });
    expect(findSet(t, 'marks')).toMatchObject({ kind: 'map', mapType: 'mark', elements: [{ key: val('10.0.0.1'), value: val(16) }] });
    // A default timeout implies the timeout flag nft does not print.
    expect(findSet(t, 'st')).toMatchObject({ policy: 'memory', counter: true, timeout: 93600, gcInterval: 60, flags: ['timeout'] });
  });

  it('reads named counters, table flags and comments, chain comments, and keeps flowtables and quotas as text', () => {
    const text = table(
      [
        'flags dormant',
        'comment "c"',
        'counter cnt1 {',
        '\tcomment "named"',
        '\tpackets 5 bytes 100',
        '}',
        'quota q1 {',
        '\tover 100 mbytes',
        '}',
        'flowtable ft {',
        '\thook ingress priority filter',
        '\tdevices = { lo }',
        '}',
        ...chain('c1', ['counter name cnt1'], 'comment "hello"'),
      ],
      'table ip t2',
    );
    const r = parseNftText(text, 'objects');
    expect(r.diagnostics.map((d) => `${d.severity}:${d.code}@${d.line}`)).toEqual(['info:not-modelled@8']);
    const t = r.value.tables[0]!;
    expect(t).toMatchObject({ flags: ['dormant'], comment: 'c', counters: [{ name: 'cnt1', comment: 'named', packets: 5n, bytes: 100n }] });
    expect(t.objects).toEqual([
      { kind: 'quota', name: 'q1', raw: 'quota q1 { over 100 mbytes }' },
      { kind: 'flowtable', name: 'ft', raw: 'flowtable ft { hook ingress priority filter devices = { lo } }' },
    ]);
    expect(findChain(t, 'c1')).toMatchObject({ comment: 'hello', rules: [{ statements: [{ kind: 'counter', name: 'cnt1' }] }] });
    // A named-counter reference is not the rule's own counter.
    expect(findChain(t, 'c1')!.rules[0]!.counters).toBeUndefined();
  });

  it('reads `nft -a` handles on tables, chains, sets and rules', () => {
    const text = 'table ip t { # handle 7\n\tset s { # handle 3\n\t\ttype ipv4_addr\n\t}\n\n\tchain c { # handle 1\n\t\tjump d # handle 5\n\t\taccept comment "x" # handle 6\n\t}\n}\n';
    const r = parseNftText(text, 'handles');
    expect(r.diagnostics).toEqual([]);
    const t = r.value.tables[0]!;
    expect([t.handle, t.sets[0]!.handle, t.chains[0]!.handle]).toEqual([7, 3, 1]);
    expect(t.chains[0]!.rules.map((x) => [x.handle, x.raw, x.comment])).toEqual([
      [5, 'jump d', undefined],
      [6, 'accept comment "x"', 'x'],
    ]);
  });

  it('reads iptables-nft renderings: xt statements in both spellings, translated matches, counters', () => {
    const r = parseNftText(
      table(chain('KUBE-SEP-A', ['meta l4proto tcp  counter packets 2 bytes 120 dnat to 10.0.0.1:6443', 'xt match recent counter packets 0 bytes 0', '# xt_statistic counter packets 1 bytes 60 jump KUBE-SEP-B', 'meta random & 2147483647 < 1073741824 counter packets 0 bytes 0 jump X']), 'table ip nat'),
      'ipt-nft',
    );
    expect(r.diagnostics).toEqual([]);
    const rules = rulesOf(r.value, 'KUBE-SEP-A');
    expect(rules[0]).toMatchObject({ raw: 'meta l4proto tcp counter packets 2 bytes 120 dnat to 10.0.0.1:6443', counters: { packets: 2n, bytes: 120n } });
    expect(rules[1]!.statements[0]).toEqual({ kind: 'xt', xtType: 'match', name: 'recent', raw: 'xt match recent' });
    expect(rules[2]!.statements.map((s) => s.kind)).toEqual(['xt', 'counter', 'verdict']);
    expect(rules[2]!.statements[0]).toEqual({ kind: 'xt', name: 'statistic', raw: '# xt_statistic' });
    expect(rules[3]!.statements[0]).toMatchObject({ kind: 'match', op: '<', left: { kind: 'binop', left: { kind: 'meta', key: 'random' } } });
  });
});

describe('statements the model does not know', () => {
  it('become `unknown` with a warning; the rule, its counter and its verdict are kept', () => {
    const r = parseNftText(table(chain('c', ['ip saddr 1.2.3.4 meter m { ip saddr limit rate 10/second } counter packets 1 bytes 2 drop', 'queue num 1', 'ip dscp cs1 accept'])), 'unknown');
    expect(r.diagnostics.map((d) => `${d.severity}:${d.code}@${d.line}`)).toEqual(['warning:unknown-statement@3', 'warning:unknown-statement@4']);
    const rules = rulesOf(r.value, 'c');
    expect(rules).toHaveLength(3);
    expect(rules[0]!.statements).toEqual([
      { kind: 'match', left: { kind: 'payload', protocol: 'ip', field: 'saddr' }, op: '==', right: val('1.2.3.4') },
      { kind: 'unknown', raw: 'meter m { ip saddr limit rate 10/second }' },
      { kind: 'counter', packets: 1n, bytes: 2n },
      { kind: 'verdict', verdict: 'drop' },
    ]);
    expect(rules[0]!.counters).toEqual({ packets: 1n, bytes: 2n });
    expect(rules[1]!.statements).toEqual([{ kind: 'unknown', raw: 'queue num 1' }]);
    // `ip dscp cs1` is a payload match the model reads (field and value kept as text).
    expect(rules[2]!.statements[0]).toMatchObject({ kind: 'match', left: { protocol: 'ip', field: 'dscp' }, right: val('cs1') });
  });
});

describe('nft -f transaction form', () => {
  const tx = (...lines: string[]) => `${lines.join('\n')}\n`;

  it('adds tables, chains, sets, maps, rules and elements; elements may come in pieces', () => {
    const r = parseNftText(
      tx(
        'add table ip kube-proxy { comment "rules for kube-proxy" ; }',
        'add map ip kube-proxy service-ips { type ipv4_addr . inet_proto . inet_service : verdict ; comment "ClusterIP" ; }',
        'add chain ip kube-proxy nat-prerouting { type nat hook prerouting priority -100 ; }',
        'add chain ip kube-proxy services',
        'add chain ip kube-proxy service-X',
        'add rule ip kube-proxy nat-prerouting jump services',
        'add rule ip kube-proxy services ip daddr . meta l4proto . th dport vmap @service-ips',
        'add element ip kube-proxy service-ips { 172.30.0.41 . tcp . 80 : goto service-X }',
        'add element ip kube-proxy service-ips { 1.2.3.4 . tcp . 80 comment "ns2/svc2:p80" : drop }',
      ),
      'tx',
    );
    expect(r.diagnostics).toEqual([]);
    const t = r.value.tables[0]!;
    expect(t.comment).toBe('rules for kube-proxy');
    expect(findChain(t, 'nat-prerouting')!.base).toEqual({ type: 'nat', hook: 'prerouting', priority: -100, priorityText: '-100', policy: 'accept' });
    expect(findSet(t, 'service-ips')!.elements.map((e) => [e.value, e.comment])).toEqual([
      [{ kind: 'verdict', verdict: 'goto', target: 'service-X' }, undefined],
      [{ kind: 'verdict', verdict: 'drop' }, 'ns2/svc2:p80'],
    ]);
  });

  it('applies insert, positioned add, replace, flush and delete, noting each as info', () => {
    const r = parseNftText(
      tx(
        'add table ip t',
        'add chain ip t c',
        'add rule ip t c accept # handle 10',
        'add rule ip t c handle 99 accept',
        'add rule ip t c drop',
        'insert rule ip t c return',
        'add rule ip t c index 0 continue',
        'replace rule ip t c handle 10 jump d',
        'add set ip t s { type ipv4_addr ; }',
        'add element ip t s { 1.1.1.1, 2.2.2.2 }',
        'delete element ip t s { 1.1.1.1 }',
        'add chain ip t gone',
        'delete chain ip t gone',
        'flush chain ip t c',
        'add rule ip t c accept',
      ),
      'edits',
    );
    expect(r.diagnostics.map((d) => `${d.severity}:${d.code}@${d.line}`)).toEqual([
      'warning:no-such-rule@4',
      'info:command-applied@8',
      'info:command-applied@11',
      'info:command-applied@13',
      'info:command-applied@14',
    ]);
    const t = r.value.tables[0]!;
    expect(findSet(t, 's')!.elements).toEqual([{ key: val('2.2.2.2') }]);
    expect(findChain(t, 'gone')).toBeUndefined();
    expect(findChain(t, 'c')!.rules.map((x) => x.raw)).toEqual(['accept']);
  });

  it('puts rules where insert, add index N and replace handle N say', () => {
    const r = parseNftText(
      tx(
        'add table ip t',
        'add chain ip t c',
        'add rule ip t c drop',
        'insert rule ip t c return',
        'add rule ip t c index 0 continue',
        'add rule ip t c accept # handle 10',
        'replace rule ip t c handle 10 jump d',
      ),
      'order',
    );
    expect(r.diagnostics.map((d) => `${d.code}@${d.line}`)).toEqual(['command-applied@7']);
    expect(rulesOf(r.value, 'c').map((x) => [x.raw, x.handle])).toEqual([
      ['return', undefined],
      ['continue', undefined],
      ['drop', undefined],
      ['jump d', 10],
    ]);
  });

  it('warns about objects used before they were added, and keeps them', () => {
    const r = parseNftText(tx('add rule ip t c accept', 'add element ip t s { 1.1.1.1 }'), 'implicit');
    expect(r.diagnostics.map((d) => `${d.severity}:${d.code}@${d.line}`)).toEqual([
      'warning:implicit-table@1',
      'warning:implicit-chain@1',
      'warning:implicit-set@2',
    ]);
    expect(rulesOf(r.value, 'c')).toHaveLength(1);
    expect(findSet(r.value.tables[0]!, 's')!.elements).toHaveLength(1);
  });

  it('flush ruleset clears what came before; define and list are noted, not evaluated', () => {
    const r = parseNftText(tx('add table ip old', 'flush ruleset', 'define X = 1', 'list ruleset', 'add table inet new'), 'flush');
    expect(r.value.tables.map((t) => `${t.family} ${t.name}`)).toEqual(['inet new']);
    expect(r.diagnostics.map((d) => d.code)).toEqual(['command-applied', 'not-modelled', 'not-modelled']);
  });
});

describe('bad input never throws', () => {
  const inputs: [string, string][] = [
    ['empty', ''],
    ['garbage words', 'hello world\nthis is not nft\n'],
    ['binary', String.fromCharCode(...Array.from({ length: 2000 }, (_, i) => (i * 7919) % 256))],
    ['truncated in a chain', 'table ip t {\n\tchain c {\n\t\tip daddr 10.0.0.1 acc'],
    ['truncated in elements', 'table ip t {\n\tset s {\n\t\ttype ipv4_addr\n\t\telements = { 1.1.1.1,\n'],
    ['unterminated string', 'table ip t {\n\tcomment "abc\n}\n'],
    ['stray braces', '}}}\n{{{\n;;;'],
    ['JSON given to the text parser', '{"nftables": [{"metainfo": {"json_schema_version": 1}}]}'],
    ['deep braces', `${'{'.repeat(5000)}${'}'.repeat(5000)}`],
  ];

  it.each(inputs)('%s', (_name, text) => {
    const r = parseNftText(text, 'bad');
    expect(Array.isArray(r.value.tables)).toBe(true);
    for (const d of r.diagnostics) {
      expect(d.line).toBeGreaterThanOrEqual(0);
      expect(d.text.length).toBeLessThanOrEqual(201);
    }
  });

  it('reports the line of what it could not read and keeps everything before and after', () => {
    const r = parseNftText(table([...chain('a', ['accept']), 'bogus item here', ...chain('b', ['drop'])]), 'mixed');
    expect(r.diagnostics.map((d) => `${d.severity}:${d.code}@${d.line}`)).toEqual(['error:syntax@5']);
    expect(r.diagnostics[0]!.text).toBe('\tbogus item here');
    expect(r.value.tables[0]!.chains.map((c) => [c.name, c.rules.length])).toEqual([
      ['a', 1],
      ['b', 1],
    ]);
  });

  it('reports a truncated document as unterminated and keeps the rules read', () => {
    const r = parseNftText('table ip t {\n\tchain c {\n\t\taccept\n\t\tip daddr 10.0.0.1 drop', 'cut');
    expect(r.diagnostics.map((d) => `${d.severity}:${d.code}@${d.line}`)).toEqual(['error:unterminated@2', 'error:unterminated@1']);
    expect(rulesOf(r.value, 'c').map((x) => x.raw)).toEqual(['accept', 'ip daddr 10.0.0.1 drop']);
  });

  it('caps the number of diagnostics on a flood of garbage', () => {
    const r = parseNftText('nonsense line\n'.repeat(5000), 'flood');
    expect(r.diagnostics).toHaveLength(1001);
    expect(r.diagnostics[1000]!.code).toBe('too-many-diagnostics');
  });
});
