/**
 * The JSON and the text of one ruleset give equal models. Each case pairs a rule (or set)
 * as `nft list ruleset` printed it with the `expr` (or set object) `nft -j list ruleset`
 * printed for the same kernel state — both taken from nftables 1.0.6 on a test namespace
 * — and requires the two parsers to agree on every field, `raw` included (the JSON rule's
 * text is printed by the formatter, so this also checks the formatter prints as nft does).
 * The lab test (test/lab/nft-kernel.test.ts) does the same on a whole kube-proxy ruleset.
 */
import { describe, expect, it } from 'vitest';
import type { NftFamily } from '../../src/model/nftables.js';
import { parseNftJson } from '../../src/parsers/nft-json.js';
import { parseNftText } from '../../src/parsers/nft-text.js';

const ip = (field: string) => ({ payload: { protocol: 'ip', field } });
const tcp = (field: string) => ({ payload: { protocol: 'tcp', field } });
const meta = (key: string) => ({ meta: { key } });
const ct = (key: string) => ({ ct: { key } });
const match = (left: unknown, right: unknown, op = '==') => ({ match: { op, left, right } });
const goto = (target: string) => ({ goto: { target } });
const jump = (target: string) => ({ jump: { target } });
const counter = (packets: number, bytes: number) => ({ counter: { packets, bytes } });

/** [family, nft text of the rule, JSON `expr` of the rule, rule comment]. */
const RULES: [NftFamily, string, unknown[], string?][] = [
  ['ip', 'ip daddr . meta l4proto . th dport vmap @service-ips', [{ vmap: { key: { concat: [ip('daddr'), meta('l4proto'), { payload: { protocol: 'th', field: 'dport' } }] }, data: '@service-ips' } }]],
  [
    'ip',
    'ip daddr @cluster-ips meta l4proto . th dport vmap { udp . 53 : drop, tcp . 80 : accept }',
    [match(ip('daddr'), '@cluster-ips'), { vmap: { key: { concat: [meta('l4proto'), { payload: { protocol: 'th', field: 'dport' } }] }, data: { set: [[{ concat: ['udp', 53] }, { drop: null }], [{ concat: ['tcp', 80] }, { accept: null }]] } } }],
  ],
  ['ip', 'numgen random mod 2 vmap { 0 : goto svc-a, 1 : goto svc-b }', [{ vmap: { key: { numgen: { mode: 'random', mod: 2, offset: 0 } }, data: { set: [[0, goto('svc-a')], [1, goto('svc-b')]] } } }]],
  ['ip', 'numgen inc mod 3 offset 1 vmap { 1 : goto helper, 2 : goto helper, 3 : drop }', [{ vmap: { key: { numgen: { mode: 'inc', mod: 3, offset: 1 } }, data: { set: [[1, goto('helper')], [2, goto('helper')], [3, { drop: null }]] } } }]],
  ['ip', 'ip saddr != 10.0.0.0/8 tcp dport { 80, 443 } counter packets 0 bytes 0 jump helper', [match(ip('saddr'), { prefix: { addr: '10.0.0.0', len: 8 } }, '!='), match(tcp('dport'), { set: [80, 443] }), counter(0, 0), jump('helper')]],
  ['ip', 'ip saddr 10.0.0.0/8 tcp dport 1000-2000 accept', [match(ip('saddr'), { prefix: { addr: '10.0.0.0', len: 8 } }), match(tcp('dport'), { range: [1000, 2000] }), { accept: null }]],
  ['ip', 'meta mark & 0x00004000 == 0x00000000 return', [match({ '&': [meta('mark'), 16384] }, 0), { return: null }]],
  ['ip', 'meta mark set meta mark | 0x00004000', [{ mangle: { key: meta('mark'), value: { '|': [meta('mark'), 16384] } } }]],
  ['ip', 'meta mark set meta mark ^ 0x00004000', [{ mangle: { key: meta('mark'), value: { '^': [meta('mark'), 16384] } } }]],
  ['ip', 'meta mark set 0x00000010', [{ mangle: { key: meta('mark'), value: 16 } }]],
  ['ip', 'ct mark set meta mark', [{ mangle: { key: ct('mark'), value: meta('mark') } }]],
  ['ip', 'ct status dnat accept', [match(ct('status'), 'dnat', 'in'), { accept: null }]],
  ['ip', 'ct state != established drop', [match(ct('state'), 'established', '!='), { drop: null }]],
  ['ip', 'ct state established,related accept', [match(ct('state'), ['established', 'related'], 'in'), { accept: null }]],
  ['ip', 'ct state == established', [match(ct('state'), 'established')]],
  ['ip', 'ct state { established, related }', [match(ct('state'), { set: ['established', 'related'] })]],
  ['ip', 'iifname { "eth0", "eth1" } accept', [match(meta('iifname'), { set: ['eth0', 'eth1'] }), { accept: null }]],
  ['ip', 'oifname "eth*" drop', [match(meta('oifname'), 'eth*'), { drop: null }]],
  ['ip', 'fib saddr type local jump helper comment "masq local"', [match({ fib: { result: 'type', flags: ['saddr'] } }, 'local'), jump('helper')], 'masq local'],
  ['ip', 'tcp dport 80 reject with tcp reset', [match(tcp('dport'), 80), { reject: { type: 'tcp reset' } }]],
  ['ip', 'reject', [{ reject: { type: 'icmp', expr: 'port-unreachable' } }]],
  ['ip', 'reject with icmp host-unreachable', [{ reject: { type: 'icmp', expr: 'host-unreachable' } }]],
  ['ip6', 'reject', [{ reject: { type: 'icmpv6', expr: 'port-unreachable' } }]],
  ['inet', 'reject with icmpx admin-prohibited', [{ reject: { type: 'icmpx', expr: 'admin-prohibited' } }]],
  ['ip', 'tcp flags syn limit rate 10/second accept', [match(tcp('flags'), 'syn', 'in'), { limit: { rate: 10, burst: 5, per: 'second' } }, { accept: null }]],
  ['ip', 'limit rate over 1 mbytes/second burst 2 mbytes', [{ limit: { rate: 1, burst: 2, per: 'second', inv: true, rate_unit: 'mbytes', burst_unit: 'mbytes' } }]],
  ['ip', 'tcp flags syn / syn,ack', [match({ '&': [tcp('flags'), ['syn', 'ack']] }, 'syn')]],
  ['ip', 'log prefix "hello " level info', [{ log: { prefix: 'hello ', level: 'info' } }]],
  ['ip', 'log prefix "x" group 2 snaplen 100 queue-threshold 5', [{ log: { prefix: 'x', group: 2, snaplen: 100, 'queue-threshold': 5 } }]],
  ['ip', 'log level debug flags all', [{ log: { level: 'debug', flags: 'all' } }]],
  ['ip', 'notrack', [{ notrack: null }]],
  ['ip', 'ip daddr 10.96.0.10 udp dport 53 counter name "dns-packets"', [match(ip('daddr'), '10.96.0.10'), match({ payload: { protocol: 'udp', field: 'dport' } }, 53), { counter: 'dns-packets' }]],
  ['ip', 'ip daddr 10.96.0.1 tcp dport 443 counter packets 3 bytes 180 jump helper', [match(ip('daddr'), '10.96.0.1'), match(tcp('dport'), 443), counter(3, 180), jump('helper')]],
  ['ip', 'dnat to numgen random mod 2 map { 0 : 10.0.0.1, 1 : 10.0.0.2 }', [{ dnat: { addr: { map: { key: { numgen: { mode: 'random', mod: 2, offset: 0 } }, data: { set: [[0, '10.0.0.1'], [1, '10.0.0.2']] } } } } }]],
  ['ip', 'update @aff { ip saddr }', [{ set: { op: 'update', elem: ip('saddr'), set: '@aff' } }]],
  ['ip', 'add @aff { ip saddr timeout 5s }', [{ set: { op: 'add', elem: { elem: { val: ip('saddr'), timeout: 5 } }, set: '@aff' } }]],
  ['ip', 'ip saddr @aff goto helper', [match(ip('saddr'), '@aff'), goto('helper')]],
  ['ip', 'tcp dport 8080 redirect to :80', [match(tcp('dport'), 8080), { redirect: { port: 80 } }]],
  ['ip', 'continue', [{ continue: null }]],
  ['ip', 'ip daddr 10.0.0.0/8 ip saddr >= 10.0.0.5 ip saddr < 10.0.0.10 accept', [match(ip('daddr'), { prefix: { addr: '10.0.0.0', len: 8 } }), match(ip('saddr'), '10.0.0.5', '>='), match(ip('saddr'), '10.0.0.10', '<'), { accept: null }]],
  ['ip', 'meta l4proto tcp dnat to 10.42.4.201:8080', [match(meta('l4proto'), 'tcp'), { dnat: { addr: '10.42.4.201', port: 8080 } }]],
  ['ip', 'masquerade fully-random', [{ masquerade: { flags: 'fully-random' } }]],
  ['ip', 'meta l4proto tcp masquerade to :1024-65535 random,persistent', [match(meta('l4proto'), 'tcp'), { masquerade: { port: { range: [1024, 65535] }, flags: ['random', 'persistent'] } }]],
  ['ip', 'ip saddr . tcp dport { 1.1.1.1 . 80 }', [match({ concat: [ip('saddr'), tcp('dport')] }, { set: [{ concat: ['1.1.1.1', 80] }] })]],
  ['ip', 'ct original ip saddr 1.2.3.4 ct direction reply', [match({ ct: { key: 'ip saddr', dir: 'original' } }, '1.2.3.4'), match(ct('direction'), 'reply')]],
  ['ip', 'xt match recent counter packets 0 bytes 0', [{ xt: { type: 'match', name: 'recent' } }, counter(0, 0)]],
  ['ip6', 'meta l4proto tcp dnat to [fd00:10:180::1]:80', [match(meta('l4proto'), 'tcp'), { dnat: { addr: 'fd00:10:180::1', port: 80 } }]],
  ['ip6', 'dnat to fd00::1-fd00::5', [{ dnat: { addr: { range: ['fd00::1', 'fd00::5'] } } }]],
  ['inet', 'meta l4proto tcp dnat ip to 10.0.0.1:80', [match(meta('l4proto'), 'tcp'), { dnat: { family: 'ip', addr: '10.0.0.1', port: 80 } }]],
  ['inet', 'meta nfproto ipv4 accept', [match(meta('nfproto'), 'ipv4'), { accept: null }]],
];

/** One rule, both ways: the text as a `nft list` table, the JSON as a `nft -j` document. */
function bothWays(family: NftFamily, text: string, expr: unknown[], comment?: string) {
  const fromText = parseNftText(`table ${family} t {\n\tchain c {\n\t\t${text} # handle 4\n\t}\n}\n`, 'text');
  const rule = { family, table: 't', chain: 'c', handle: 4, ...(comment !== undefined && { comment }), expr };
  const json = JSON.stringify({
    nftables: [{ metainfo: { version: '1.0.6', json_schema_version: 1 } }, { table: { family, name: 't' } }, { chain: { family, table: 't', name: 'c' } }, { rule }],
  });
  return { fromText, fromJson: parseNftJson(json, 'json') };
}

describe('a rule from nft text equals the same rule from nft JSON', () => {
  it.each(RULES)('%s: %s', (family, text, expr, comment) => {
    const { fromText, fromJson } = bothWays(family, text, expr, comment);
    expect(fromText.diagnostics).toEqual([]);
    expect(fromJson.diagnostics).toEqual([]);
    expect(fromJson.value).toEqual(fromText.value);
    expect(fromText.value.tables[0]!.chains[0]!.rules[0]!.raw).toBe(text);
  });

  it('differs where the rules differ (the comparison can fail)', () => {
    const { fromText, fromJson } = bothWays('ip', 'ct state new accept', [match(ct('state'), 'new', '=='), { accept: null }]);
    expect(fromJson.value).not.toEqual(fromText.value);
  });
});

/** [nft text of a set block, JSON set/map object] from the same kernel state. */
const SETS: [string[], Record<string, unknown>][] = [
  [
    ['map service-ips {', 'type ipv4_addr . inet_proto . inet_service : verdict', 'comment "ClusterIP"', 'elements = { 10.0.0.3 . tcp . 1 : drop,', '10.0.0.2 . udp . 53 : jump svc-a,', '10.0.0.1 . tcp . 80 comment "ns/svc:p" : goto svc-a }', '}'],
    {
      map: {
        name: 'service-ips',
        type: ['ipv4_addr', 'inet_proto', 'inet_service'],
        comment: 'ClusterIP',
        map: 'verdict',
        elem: [
          [{ concat: ['10.0.0.3', 'tcp', 1] }, { drop: null }],
          [{ concat: ['10.0.0.2', 'udp', 53] }, jump('svc-a')],
          [{ elem: { val: { concat: ['10.0.0.1', 'tcp', 80] }, comment: 'ns/svc:p' } }, goto('svc-a')],
        ],
      },
    },
  ],
  [
    ['set ranges {', 'type ipv4_addr', 'flags interval', 'elements = { 10.0.0.0/8, 172.16.0.1 comment "one",', '192.168.1.1-192.168.1.9 }', '}'],
    { set: { name: 'ranges', type: 'ipv4_addr', flags: ['interval'], elem: [{ prefix: { addr: '10.0.0.0', len: 8 } }, { elem: { val: '172.16.0.1', comment: 'one' } }, { range: ['192.168.1.1', '192.168.1.9'] }] } },
  ],
  [
    ['set cc {', 'type ipv4_addr . inet_service', 'flags interval', 'counter', 'elements = { 10.0.0.1 . 80 counter packets 0 bytes 0,', '10.1.0.0/16 . 1000-2000 counter packets 0 bytes 0 }', '}'],
    {
      set: {
        name: 'cc',
        type: ['ipv4_addr', 'inet_service'],
        flags: ['interval'],
        elem: [
          { elem: { val: { concat: ['10.0.0.1', 80] }, counter: { packets: 0, bytes: 0 } } },
          { elem: { val: { concat: [{ prefix: { addr: '10.1.0.0', len: 16 } }, { range: [1000, 2000] }] }, counter: { packets: 0, bytes: 0 } } },
        ],
        stmt: [{ counter: null }],
      },
    },
  ],
  [['map markmap {', 'type ipv4_addr : mark', 'elements = { 10.0.0.1 : 0x00000010 }', '}'], { map: { name: 'markmap', type: 'ipv4_addr', map: 'mark', elem: [['10.0.0.1', 16]] } }],
  [['map mm {', 'type ipv4_addr : ipv4_addr . inet_service', 'elements = { 1.1.1.1 : 2.2.2.2 . 80 }', '}'], { map: { name: 'mm', type: 'ipv4_addr', map: 'ipv4_addr . inet_service', elem: [['1.1.1.1', { concat: ['2.2.2.2', 80] }]] } }],
  [['set ifs {', 'type ifname', 'elements = { "lo",', '"eth0" }', '}'], { set: { name: 'ifs', type: 'ifname', elem: ['lo', 'eth0'] } }],
  [['set st {', 'type ipv4_addr', 'policy memory', 'size 1000', 'counter', 'timeout 1d2h', 'gc-interval 1m', '}'], { set: { name: 'st', type: 'ipv4_addr', policy: 'memory', size: 1000, flags: ['timeout'], timeout: 93600, 'gc-interval': 60, stmt: [{ counter: null }] } }],
  [
    ['set s3 {', 'type ipv4_addr', 'flags timeout', 'elements = { 1.1.1.1 timeout 1m30s expires 1m29s comment "c1", 2.2.2.2 timeout 1d expires 23h59m59s }', '}'],
    { set: { name: 's3', type: 'ipv4_addr', flags: ['timeout'], elem: [{ elem: { val: '1.1.1.1', timeout: 90, expires: 89, comment: 'c1' } }, { elem: { val: '2.2.2.2', timeout: 86400, expires: 86399 } }] } },
  ],
];

describe('a set or map from nft text equals the same from nft JSON', () => {
  it.each(SETS.map(([text, json]) => [text[0]!, text, json] as const))('%s', (_name, text, json) => {
    const fromText = parseNftText(`table ip t {\n${text.map((l) => `\t${l}`).join('\n')}\n}\n`, 'text');
    const kind = Object.keys(json)[0]!;
    const obj = { [kind]: { family: 'ip', table: 't', ...(json[kind] as object) } };
    const fromJson = parseNftJson(JSON.stringify({ nftables: [{ metainfo: { json_schema_version: 1 } }, { table: { family: 'ip', name: 't' } }, obj] }), 'json');
    expect(fromText.diagnostics).toEqual([]);
    expect(fromJson.diagnostics).toEqual([]);
    expect(fromJson.value).toEqual(fromText.value);
  });
});
