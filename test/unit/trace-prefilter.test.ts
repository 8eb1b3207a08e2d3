/**
 * The step engine's shortcuts against the evaluation they stand for: an iptables rule
 * prefilter that says "no match" gives exactly the words of a full evaluation (and rules
 * of other shapes get no prefilter); the conntrack index finds the same flow as a scan
 * (duplicates, both directions, ICMP, IPv6 spellings); the loop guard counts chain
 * entries, so a jump loop still ends `unsupported` while a chain of 25,000 rules does not.
 */
import { describe, expect, it } from 'vitest';
import type { ConntrackEntry } from '../../src/model/conntrack.js';
import { parseIp } from '../../src/model/iproute.js';
import { parseIptablesSave } from '../../src/parsers/iptables-save.js';
import { parseNftText } from '../../src/parsers/nft-text.js';
import { findFlow, findFlowLinear, INDEX_AFTER_LOOKUPS } from '../../src/trace/conntrack.js';
import { MAX_CHAIN_ENTRIES, WalkContext, WalkPacket } from '../../src/trace/context.js';
import { walkPacket } from '../../src/trace/engine.js';
import type { TraceInput } from '../../src/trace/input.js';
import { evalIptablesMatches } from '../../src/trace/iptables-match.js';
import { chainPrefilters, prefilterReject } from '../../src/trace/iptables-prefilter.js';
import { ipv4Number } from '../../src/net/address.js';
import type { PacketSpec } from '../../src/trace/packet.js';
import type { PacketHeader } from '../../src/trace/types.js';
import { makeEntry, makeTuple } from './conntrack-builders.js';
import { labInput, labPod, packet } from './trace-builders.js';

const net = (() => {
  const { addrs, routes } = labInput('iptables');
  return { addrs, routes };
})();
const client = labPod('client');

/** The rules of one user chain X-T of the nat table, parsed (no diagnostics allowed). */
function chainOf(rules: readonly string[]) {
  const text = `*nat\n:X-T - [0:0]\n${rules.map((r) => `-A X-T ${r}`).join('\n')}\nCOMMIT\n`;
  const parsed = parseIptablesSave(text, 'test', { family: 'ipv4' });
  expect(parsed.diagnostics.filter((d) => d.severity !== 'info')).toEqual([]);
  return parsed.value.tables[0]!.chains[0]!;
}

function headerOf(spec: PacketSpec): PacketHeader {
  return { ...spec, src: spec.src ?? client.ip, iif: 'eth0', oif: null, ct: 'new', randomSport: false };
}

function ctxFor(spec: PacketSpec): WalkContext {
  return new WalkContext({ ...net }, { interfaces: net.addrs, routes: net.routes }, new WalkPacket(headerOf(spec)), { kind: 'first' });
}

describe('iptables rule prefilters', () => {
  // kube-proxy's shapes, and near misses that must be evaluated in full.
  const rules = [
    '-d 10.96.0.10/32 -p udp -m comment --comment "kube-system/kube-dns:dns cluster IP" -m udp --dport 53 -j ACCEPT',
    '-d 10.96.0.10/32 -p tcp -m tcp --dport 53 -j ACCEPT',
    '-d 10.96.0.0/12 -j RETURN',
    '-d 10.96.0.0/255.240.0.0 -j RETURN',
    '-d 0.0.0.0/0 -j RETURN',
    '-d fd00::1/128 -j RETURN',
    '-p tcp -m comment --comment "default/web:http" -m tcp --dport 30080 -j ACCEPT',
    '-p udp -m udp --dport 30000:30100 -j ACCEPT',
    '-p 6 -m tcp --dport 80 -j ACCEPT',
    '-p sctp -m sctp --dport 9000 -j ACCEPT',
  ];
  const noPrefilter = [
    '! -d 10.96.0.10/32 -j RETURN',
    '-s 10.244.0.0/16 -d 10.96.0.10/32 -j RETURN',
    '-p tcp -m tcp --dport 80 --syn -j ACCEPT',
    '-p tcp -m tcp ! --dport 80 -j ACCEPT',
    '-i eth0 -p tcp -m tcp --dport 80 -j ACCEPT',
    '-p tcp -m mark --mark 0x1 -m tcp --dport 80 -j ACCEPT',
    '-p tcp -m multiport --dports 80,443 -j ACCEPT',
    '-p icmp -j ACCEPT',
  ];
  const packets = [
    packet({ from: `${client.ip}:40000`, to: '10.96.0.10:53/udp' }),
    packet({ from: `${client.ip}:40000`, to: '10.96.0.10:53/tcp' }),
    packet({ from: `${client.ip}:40000`, to: '10.96.0.11:80/tcp' }),
    packet({ from: `${client.ip}:40000`, to: '10.112.0.1:30080/tcp' }),
    packet({ from: `${client.ip}:40000`, to: '10.112.0.1:30050/udp' }),
    packet({ from: `${client.ip}:40000`, to: '10.112.0.1:9000/sctp' }),
    packet({ from: client.ip, to: '10.96.0.10/icmp' }),
    packet({ from: '[fd00::2]:40000', to: '[fd00::1]:80/tcp' }),
  ];

  it('say "no match" with the words of a full evaluation, and nothing when the rule may match', () => {
    const chain = chainOf(rules);
    const filters = chainPrefilters(chain);
    expect(filters.every((f) => f !== null)).toBe(true);
    let rejected = 0;
    let passed = 0;
    for (const spec of packets) {
      const ctx = ctxFor(spec);
      chain.rules.forEach((rule, i) => {
        const quick = prefilterReject(filters[i]!, ctx.pkt);
        const full = evalIptablesMatches(ctx, rule);
        const what = `${rule.raw} for ${spec.dst}:${spec.dport}/${spec.proto}`;
        if (quick !== null) {
          rejected++;
          expect(full, what).toEqual({ kind: 'nomatch', reason: quick });
        } else {
          passed++;
          // The prefilter let it through: the full evaluation decides, and does not fail on what the prefilter checked.
          const checked = filters[i]!.kind === 'dport' ? /^(protocol|dport) / : /^daddr /;
          expect(full.kind === 'nomatch' ? full.reason : '', what).not.toMatch(checked);
        }
      });
    }
    expect(rejected).toBeGreaterThan(30);
    expect(passed).toBeGreaterThan(5);
  });

  it('are absent for negations, a source, interfaces, other modules first and extra options', () => {
    expect(chainPrefilters(chainOf(noPrefilter))).toEqual(noPrefilter.map(() => null));
  });

  it('are built once per chain object', () => {
    const chain = chainOf(rules.slice(0, 2));
    expect(chainPrefilters(chain)).toBe(chainPrefilters(chain));
  });

  it('read dotted quads exactly as parseIp does', () => {
    for (const text of ['10.96.0.10', '0.0.0.0', '255.255.255.255', '01.2.3.4', '256.1.1.1', '1.2.3', '1.2.3.4.5', '1..2.3', '1.2.3.4 ', 'fd00::1', '', '1234.1.1.1', '::ffff:1.2.3.4']) {
      const p = parseIp(text);
      expect(ipv4Number(text), text).toBe(p?.family === 'inet' ? Number(p.value) : null);
    }
  });
});

describe('conntrack index', () => {
  const icmp = (id: number, line: number): ConntrackEntry => ({
    ...makeEntry({ line }),
    proto: 'icmp',
    protoNum: 1,
    orig: makeTuple({ src: '10.244.0.9', dst: '10.96.0.10', icmpType: 8, icmpCode: 0, icmpId: id }),
    reply: makeTuple({ src: '10.244.0.31', dst: '10.244.0.9', icmpType: 0, icmpCode: 0, icmpId: id }),
  });
  const table: ConntrackEntry[] = [
    makeEntry({ line: 1 }),
    // The same original tuple again (a later duplicate): the first one wins.
    makeEntry({ line: 2, endpoint: ['10.244.0.32', 8080] }),
    // An entry whose reply tuple is another's original tuple.
    makeEntry({ line: 3, client: ['10.244.0.31', 8080], vip: ['10.244.0.9', 51286], endpoint: ['10.244.0.50', 9] }),
    makeEntry({ line: 4, client: ['fd00::9', 40000], vip: ['fd00:0::10', 80], endpoint: ['fd00::31', 8080] }),
    { ...makeEntry({ line: 5, client: ['10.244.0.9', 53000], vip: ['10.96.0.10', 53] }), proto: 'udp', protoNum: 17 },
    icmp(7, 6),
    icmp(8, 7),
  ];
  const header = (src: string, dst: string, sport: number | null, dport: number | null, proto: PacketHeader['proto'] = 'tcp', icmpId: number | null = null, icmpType = 8): PacketHeader => ({
    family: src.includes(':') ? 'ipv6' : 'ipv4',
    proto,
    src,
    dst,
    sport,
    dport,
    icmpType: icmpId === null ? null : icmpType,
    icmpCode: icmpId === null ? null : 0,
    icmpId,
    tcpFlags: [],
    mark: 0,
    iif: null,
    oif: null,
    ct: 'invalid',
    randomSport: false,
  });
  const probes: PacketHeader[] = [
    header('10.244.0.9', '10.96.12.34', 51286, 80),
    header('10.244.0.31', '10.244.0.9', 8080, 51286),
    header('10.244.0.32', '10.244.0.9', 8080, 51286),
    header('fd00::9', 'fd00::10', 40000, 80),
    header('fd00:0:0::31', 'fd00::9', 8080, 40000),
    header('10.244.0.9', '10.96.0.10', 53000, 53, 'udp'),
    header('10.244.0.9', '10.96.0.10', 53000, 53, 'tcp'),
    header('10.244.0.9', '10.96.0.10', null, null, 'icmp', 8),
    header('10.244.0.31', '10.244.0.9', null, null, 'icmp', 7, 0),
    header('10.244.0.31', '10.244.0.9', null, null, 'icmp', 7, 8),
    header('10.244.0.9', '10.96.0.10', null, null, 'icmp', 9),
    header('10.244.0.9', '10.96.12.35', 51286, 80),
  ];

  it('finds what a scan finds, before and after the index is built', () => {
    const expected = probes.map((h) => findFlowLinear(table, h));
    expect(expected.filter((m) => m !== null).length).toBe(8);
    expect(expected[1]).toEqual({ entry: table[0], direction: 'reply' });
    for (let round = 0; round < INDEX_AFTER_LOOKUPS + 2; round++) {
      probes.forEach((h, i) => expect(findFlow(table, h), `round ${round}, probe ${i}`).toEqual(expected[i]));
    }
  });
});

describe('conntrack index on a table of thousands of flows', () => {
  // Few distinct ports and addresses: many tuples share a key, many entries repeat a tuple.
  const table: ConntrackEntry[] = [];
  for (let i = 0; i < 3000; i++) {
    const client: [string, number] = [`10.244.${i % 7}.${i % 11}`, 40000 + (i % 13)];
    table.push(makeEntry({ line: i + 1, client, vip: [`10.96.0.${i % 5}`, 80 + (i % 3)], endpoint: [`10.244.9.${i % 17}`, 8080], ...(i % 4 === 0 ? { seenAs: ['10.0.0.1', 2000 + (i % 9)] } : {}) }));
  }
  const header = (t: ConntrackEntry['orig'], dst?: string): PacketHeader => ({
    family: 'ipv4',
    proto: 'tcp',
    src: t.src,
    dst: dst ?? t.dst,
    sport: t.sport ?? null,
    dport: t.dport ?? null,
    icmpType: null,
    icmpCode: null,
    icmpId: null,
    tcpFlags: [],
    mark: 0,
    iif: null,
    oif: null,
    ct: 'invalid',
    randomSport: false,
  });

  it('agrees with the scan for every original and reply tuple, and for misses', () => {
    const probes = table.slice(0, 400).flatMap((e) => [header(e.orig), header(e.reply), header(e.orig, '10.96.1.1')]);
    for (let i = 0; i < INDEX_AFTER_LOOKUPS; i++) findFlow(table, probes[0]!);
    let found = 0;
    for (const h of probes) {
      const want = findFlowLinear(table, h);
      if (want) found++;
      expect(findFlow(table, h)).toEqual(want);
    }
    expect(found).toBe(800);
  });
});

describe('loop guard', () => {
  const toVip = packet({ from: `${client.ip}:40000`, to: '10.96.0.99:80/tcp' });
  const iptablesInput = (text: string): TraceInput => {
    const parsed = parseIptablesSave(text, 'test', { family: 'ipv4' });
    expect(parsed.diagnostics.filter((d) => d.severity !== 'info')).toEqual([]);
    return { ...net, iptables: [parsed.value] };
  };

  it('ends an iptables jump loop as unsupported, saying so', () => {
    const input = iptablesInput('*nat\n:PREROUTING ACCEPT [0:0]\n:X-A - [0:0]\n:X-B - [0:0]\n-A PREROUTING -j X-A\n-A X-A -j X-B\n-A X-B -j X-A\nCOMMIT\n');
    const r = walkPacket(input, toVip);
    expect(r.verdict.kind).toBe('unsupported');
    expect(r.verdict.reason).toMatch(new RegExp(`more than ${MAX_CHAIN_ENTRIES} times .*a jump loop`));
    expect(r.steps.at(-1)!.kind).toBe('unsupported');
  });

  it('ends an iptables goto loop (no stack growth) too', () => {
    const input = iptablesInput('*filter\n:FORWARD ACCEPT [0:0]\n:X-A - [0:0]\n:X-B - [0:0]\n-A FORWARD -j X-A\n-A X-A -g X-B\n-A X-B -g X-A\nCOMMIT\n');
    const r = walkPacket(input, toVip);
    expect(r.verdict.kind).toBe('unsupported');
    expect(r.verdict.reason).toContain('jump loop');
  });

  it('ends an nft jump loop as unsupported', () => {
    const parsed = parseNftText('table ip t {\n\tchain pre {\n\t\ttype filter hook prerouting priority 0; policy accept;\n\t\tjump a\n\t}\n\tchain a {\n\t\tjump b\n\t}\n\tchain b {\n\t\tjump a\n\t}\n}\n', 'test');
    expect(parsed.diagnostics.filter((d) => d.severity !== 'info')).toEqual([]);
    const r = walkPacket({ ...net, nft: parsed.value }, toVip);
    expect(r.verdict.kind).toBe('unsupported');
    expect(r.verdict.reason).toContain('jump loop');
  });

  it('lets a chain of 25,000 rules run to its end (rules are not chain entries)', () => {
    const rules: string[] = [];
    for (let i = 0; i < 25_000; i++) rules.push(`-A X-SVC -d 10.${100 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}/32 -p tcp -m tcp --dport 80 -j ACCEPT`);
    const input = iptablesInput(`*nat\n:PREROUTING ACCEPT [0:0]\n:X-SVC - [0:0]\n-A PREROUTING -j X-SVC\n${rules.join('\n')}\nCOMMIT\n`);
    for (const indexed of [true, false]) {
      const r = walkPacket(input, toVip, { indexed });
      expect(r.verdict.kind).not.toBe('unsupported');
      expect(r.steps.filter((s) => s.chain === 'X-SVC' && s.kind === 'rule')).toHaveLength(25_000);
    }
  });
});
