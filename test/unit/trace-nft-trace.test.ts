/**
 * `nft monitor trace` parser: lines captured from the lab (nft 1.0.6, kernel 6.18, `-a`
 * and without), the line kinds of nftables src/trace.c, garbage, and splitting into
 * one pass per packet.
 */
import { describe, expect, it } from 'vitest';
import { formatNftTraceEvent, parseNftTrace, splitTracePasses } from '../../src/parsers/nft-trace.js';
import { diffKernelEvents, kernelEventsOfTrace, kernelEventsOfWalk, packetsOfTrace } from '../../src/trace/kernel-trace.js';
import { traceFromSnapshot } from '../../src/trace/choose-engine.js';
import { snapshotOf } from '../helpers/fixtures.js';

/** Lines as the lab's kernel printed them (one packet of `curl` to a ClusterIP, iptables mode, nft -a). */
const LAB_LINES = [
  'trace id 1c8fd9c1 ip nodescope_trace pre packet: iif "calia7a3e029a7b" ether saddr 9a:ed:c6:94:a1:4e ether daddr 62:a2:23:9c:f0:bd ip saddr 10.244.0.9 ip daddr 10.96.12.34 ip dscp cs0 ip ecn not-ect ip ttl 64 ip id 21367 ip length 60 tcp sport 47482 tcp dport 80 tcp flags == syn tcp window 64240 ',
  'trace id 1c8fd9c1 ip nodescope_trace pre rule ip saddr 10.244.0.9 ip daddr 10.96.12.34 tcp dport 80 meta nftrace set 1 # handle 3 (verdict continue)',
  'trace id 1c8fd9c1 ip nodescope_trace pre policy accept ',
  'trace id 1c8fd9c1 ip nat PREROUTING packet: iif "calia7a3e029a7b" ether saddr 9a:ed:c6:94:a1:4e ether daddr 62:a2:23:9c:f0:bd ip saddr 10.244.0.9 ip daddr 10.96.12.34 ip dscp cs0 ip ecn not-ect ip ttl 64 ip id 21367 ip length 60 tcp sport 47482 tcp dport 80 tcp flags == syn tcp window 64240 ',
  'trace id 1c8fd9c1 ip nat PREROUTING rule  counter packets 1 bytes 60 jump KUBE-SERVICES # handle 56 (verdict jump KUBE-SERVICES)',
  'trace id 1c8fd9c1 ip nat KUBE-SVC-CDGGSHYLG3RE2FKL rule  meta random & 2147483647 < 1073741824 counter packets 0 bytes 0 jump KUBE-SEP-QSDSUS5CRVC6GVQH # handle 46 (verdict jump KUBE-SEP-QSDSUS5CRVC6GVQH)',
  'trace id 1c8fd9c1 ip nat KUBE-SEP-QSDSUS5CRVC6GVQH rule meta l4proto tcp   counter packets 0 bytes 0 dnat to 10.244.0.31:8080 # handle 37 (verdict accept)',
  'trace id 1c8fd9c1 ip filter FORWARD packet: iif "calia7a3e029a7b" oif "cali6e6461f848e" ether saddr 9a:ed:c6:94:a1:4e ether daddr 62:a2:23:9c:f0:bd ip saddr 10.244.0.9 ip daddr 10.244.0.31 ip dscp cs0 ip ecn not-ect ip ttl 63 ip id 21367 ip length 60 tcp sport 47482 tcp dport 8080 tcp flags == syn tcp window 64240 ',
  'trace id 1c8fd9c1 ip filter FORWARD rule ct state new  counter packets 1 bytes 60 jump KUBE-PROXY-FIREWALL # handle 15 (verdict jump KUBE-PROXY-FIREWALL)',
  'trace id 1c8fd9c1 ip filter FORWARD policy accept ',
];

describe('parseNftTrace', () => {
  it('reads packet, rule and policy lines with table, chain, handle and verdict', () => {
    const { value, diagnostics } = parseNftTrace(LAB_LINES.join('\n'), 'trace');
    expect(diagnostics).toEqual([]);
    expect(value.map((e) => e.kind)).toEqual(['packet', 'rule', 'policy', 'packet', 'rule', 'rule', 'rule', 'packet', 'rule', 'policy']);
    const dnat = value[6]!;
    expect(dnat).toMatchObject({ id: '1c8fd9c1', family: 'ip', table: 'nat', chain: 'KUBE-SEP-QSDSUS5CRVC6GVQH', handle: 37, verdict: 'accept', line: 7 });
    expect(dnat.ruleText).toBe('meta l4proto tcp   counter packets 0 bytes 0 dnat to 10.244.0.31:8080');
    expect(value[4]!.verdict).toBe('jump KUBE-SERVICES');
    const fwd = value[7]!;
    expect(fwd.fields).toMatchObject({ iif: 'calia7a3e029a7b', oif: 'cali6e6461f848e', 'ip saddr': '10.244.0.9', 'ip daddr': '10.244.0.31', 'tcp dport': '8080', 'tcp flags': 'syn' });
    expect(value[9]).toMatchObject({ kind: 'policy', verdict: 'accept', mark: null });
  });

  it('reads rules without handles (nft without -a), unknown handles, return verdicts with a mark, and conntrack lines', () => {
    const text = [
      'trace id 0000abcd ip kube-proxy services rule ip daddr . meta l4proto . th dport vmap @service-ips (verdict goto service-X)',
      'trace id 0000abcd ip kube-proxy services unknown rule handle 44 (verdict goto service-X)',
      'trace id 0000abcd ip kube-proxy masquerading verdict continue meta mark 0x00004000 ',
      'trace id 0000abcd inet fw input policy drop meta mark 0x00000010 ',
      'trace id 0000abcd ip t c conntrack: ct direction original ct state new ct id 1234 ',
    ].join('\n');
    const { value, diagnostics } = parseNftTrace(text, 'trace');
    expect(diagnostics).toEqual([]);
    expect(value[0]).toMatchObject({ kind: 'rule', handle: null, ruleText: 'ip daddr . meta l4proto . th dport vmap @service-ips', verdict: 'goto service-X' });
    expect(value[1]).toMatchObject({ kind: 'rule', handle: 44, ruleText: null });
    expect(value[2]).toMatchObject({ kind: 'return', verdict: 'continue', mark: 0x4000 });
    expect(value[3]).toMatchObject({ kind: 'policy', family: 'inet', verdict: 'drop', mark: 0x10 });
    expect(value[4]).toMatchObject({ kind: 'conntrack', fields: { 'ct direction': 'original', 'ct state': 'new', 'ct id': '1234' } });
  });

  it('keeps what it understands and reports the rest with line numbers', () => {
    const text = ['garbage \u0000\u0001', LAB_LINES[1], 'trace id 1c8fd9c1 ip nat X rule no verdict here', 'trace id zz ip nat X policy accept', '', LAB_LINES[2]].join('\n');
    const { value, diagnostics } = parseNftTrace(text, 'trace');
    expect(value.map((e) => e.line)).toEqual([2, 6]);
    expect(diagnostics.map((d) => [d.line, d.code])).toEqual([[1, 'not-trace'], [3, 'not-trace'], [4, 'not-trace']]);
  });

  it('formats events back to lines that parse to the same events', () => {
    const { value } = parseNftTrace(LAB_LINES.join('\n'), 'trace');
    const again = parseNftTrace(value.map(formatNftTraceEvent).join('\n'), 'trace').value;
    const strip = (e: (typeof value)[number]) => ({ ...e, raw: '', line: 0 });
    expect(again.map(strip)).toEqual(value.map(strip));
  });
});

describe('splitTracePasses and the kernel view', () => {
  it('starts a new pass when the id changes or a start chain sees a new packet', () => {
    const second = LAB_LINES.map((l) => l.replace('ip id 21367', 'ip id 21368'));
    const other = LAB_LINES.slice(0, 3).map((l) => l.replace('1c8fd9c1', 'fc88da28'));
    const { value } = parseNftTrace([...LAB_LINES, ...second, ...other].join('\n'), 'trace');
    const passes = splitTracePasses(value, ['ip nodescope_trace pre']);
    expect(passes.map((p) => [p.id, p.events.length])).toEqual([['1c8fd9c1', 10], ['1c8fd9c1', 10], ['fc88da28', 3]]);
    // Without start chains, equal ids run together.
    expect(splitTracePasses(value).map((p) => p.events.length)).toEqual([20, 3]);
  });

  it('keeps a packet\'s events together when another packet\'s events interleave', () => {
    const a = LAB_LINES;
    const b = LAB_LINES.map((l) => l.replace('1c8fd9c1', '0badf00d'));
    const mixed = [...a.slice(0, 5), ...b.slice(0, 4), ...a.slice(5), ...b.slice(4)];
    const { value } = parseNftTrace(mixed.join('\n'), 'trace');
    const passes = splitTracePasses(value, ['ip nodescope_trace pre']);
    expect(passes.map((p) => [p.id, p.events.map((e) => e.line)])).toEqual([
      ['1c8fd9c1', [1, 2, 3, 4, 5, 10, 11, 12, 13, 14]],
      ['0badf00d', [6, 7, 8, 9, 15, 16, 17, 18, 19, 20]],
    ]);
  });

  it('keeps rule and policy events, leaves out the trace table, and reads headers of base chain entries', () => {
    const { value } = parseNftTrace(LAB_LINES.join('\n'), 'trace');
    const events = kernelEventsOfTrace(value, ['ip nodescope_trace']);
    expect(events.map((e) => `${e.table} ${e.chain} ${e.kind} ${e.handle ?? ''} ${e.verdict}`)).toEqual([
      'nat PREROUTING rule 56 jump KUBE-SERVICES',
      'nat KUBE-SVC-CDGGSHYLG3RE2FKL rule 46 jump KUBE-SEP-QSDSUS5CRVC6GVQH',
      'nat KUBE-SEP-QSDSUS5CRVC6GVQH rule 37 accept',
      'filter FORWARD rule 15 jump KUBE-PROXY-FIREWALL',
      'filter FORWARD policy  accept',
    ]);
    expect(packetsOfTrace(value, ['ip nodescope_trace']).map((p) => `${p.chain} ${p.dst}:${p.dport}`)).toEqual(['PREROUTING 10.96.12.34:80', 'FORWARD 10.244.0.31:8080']);
    expect(diffKernelEvents(events, events)).toEqual([]);
    expect(diffKernelEvents(events.slice(0, 2), events)).toHaveLength(1);
  });
});

describe('a NAT rule: the step says what it binds, the kernel says accept', () => {
  it.each(['lab-iptables', 'lab-nftables'] as const)('%s: KUBE-SEP DNAT step reads "DNAT 10.244.0.31:8080"; projected onto kernel events it is the lab trace\'s "accept"', async (fixture) => {
    const snapshot = await snapshotOf(fixture);
    const r = traceFromSnapshot(snapshot, { from: '10.244.0.9', to: '10.96.12.34:80/tcp', endpoint: '10.244.0.31:8080' });
    const dnat = r.steps.filter((s) => s.kind === 'rule' && s.matched === true && s.verdict?.startsWith('DNAT'));
    expect(dnat.map((s) => s.verdict)).toEqual(['DNAT 10.244.0.31:8080']);
    expect(r.steps.some((s) => s.kind === 'rule' && s.matched === true && s.verdict === 'accept' && s.table === dnat[0]!.table && s.chain === dnat[0]!.chain)).toBe(false);
    // The kernel's line for that rule (LAB_LINES, captured with nft monitor trace): `dnat to 10.244.0.31:8080 … (verdict accept)`.
    const kernel = kernelEventsOfTrace(parseNftTrace(LAB_LINES.join('\n'), 'trace').value, ['ip nodescope_trace']).find((e) => e.ruleText?.includes('dnat to 10.244.0.31:8080') || e.handle === 37);
    const walked = kernelEventsOfWalk(r).find((e) => e.chain === dnat[0]!.chain && e.kind === 'rule');
    expect(kernel?.verdict).toBe('accept');
    expect(walked?.verdict).toBe(kernel?.verdict);
  });
});
