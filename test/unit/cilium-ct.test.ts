/**
 * `cilium-dbg bpf ct list global` parser. Lines are built in the forms of cilium/cilium
 * `pkg/maps/ctmap/types.go` (`CtKey4Global.Dump`, `CtEntry.StringWithTimeDiff`, commit
 * d93bee9327c29ab265825e989f90212cf7b6b451) and of the outputs pasted in cilium/cilium#4384
 * (≤ 1.1), #28913 (1.14 `service` vs 1.15 `SVC`), #32563 (`BackendID=`) and #40820
 * (`Packets=`/`Bytes=`, IPv6 without brackets).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { allDiagnostics, buildSnapshot } from '../../src/collect/build-snapshot.js';
import { DEFAULT_CONNTRACK_SORT, conntrackRow, conntrackView } from '../../src/analysis/conntrack-view.js';
import { joinCiliumBackends, parseCiliumCt } from '../../src/parsers/cilium-ct.js';
import type { LbTable } from '../../src/model/cilium.js';
import type { ProbeRun } from '../../src/sources/probe-runner.js';
import { fixtureDir } from '../helpers/fixtures.js';

interface LineOpts {
  proto?: string;
  dir?: 'IN' | 'OUT' | 'SVC';
  src?: string;
  dst?: string;
  words?: string;
  remaining?: number;
  rx?: [number, number];
  tx?: [number, number];
  flags?: string;
  revNat?: number;
  backendId?: number;
}

/** A ≥ 1.15 line (`StringWithTimeDiff`), `BackendID=` appended when given (≥ 1.16). */
function ctLine(o: LineOpts = {}): string {
  const [rxp, rxb] = o.rx ?? [3, 180];
  const [txp, txb] = o.tx ?? [4, 260];
  const rem = o.remaining === undefined ? '' : ` (remaining: ${o.remaining} sec(s))`;
  const words = o.words ? `${o.words} ` : '';
  return `${o.proto ?? 'TCP'} ${o.dir ?? 'OUT'} ${o.src ?? '10.244.0.9:41234'} -> ${o.dst ?? '10.244.1.5:8080'} ${words}expires=16453${rem} RxPackets=${rxp} RxBytes=${rxb} RxFlagsSeen=0x1b LastRxReport=16443 TxPackets=${txp} TxBytes=${txb} TxFlagsSeen=0x1b LastTxReport=16443 ${o.flags ?? 'Flags=0x0013 [ RxClosing TxClosing SeenNonSyn ]'} RevNAT=${o.revNat ?? 0} SourceSecurityID=2 IfIndex=0 ${o.backendId === undefined ? '' : `BackendID=${o.backendId}`}`;
}

const parse = (text: string) => parseCiliumCt(text, 'cilium-ct-list');

describe('parseCiliumCt', () => {
  it('reads a pod-side OUT entry with counters per direction and no NAT', () => {
    const { value, diagnostics } = parse(ctLine({ rx: [7, 700], tx: [9, 900], remaining: 42 }));
    expect(diagnostics).toEqual([]);
    const e = value.entries[0]!;
    expect(e).toMatchObject({ line: 1, family: 'ipv4', proto: 'tcp', protoNum: 6, timeout: 42, flags: [] });
    expect(e.orig).toEqual({ src: '10.244.0.9', dst: '10.244.1.5', sport: 41234, dport: 8080, packets: 9n, bytes: 900n });
    expect(e.reply).toEqual({ src: '10.244.1.5', dst: '10.244.0.9', sport: 8080, dport: 41234, packets: 7n, bytes: 700n });
    expect(e.cilium).toMatchObject({ direction: 'OUT', service: false, flags: 0x13, flagNames: ['RxClosing', 'TxClosing', 'SeenNonSyn'], sourceSecurityId: 2, ifIndex: 0 });
  });

  it('reads an SVC entry (≥ 1.16) as client → VIP with its backend and rev-NAT ids, no counters', () => {
    const e = parse(ctLine({ dir: 'SVC', dst: '10.96.12.34:80', revNat: 5, backendId: 17, rx: [0, 17] })).value.entries[0]!;
    expect(e.orig).toEqual({ src: '10.244.0.9', dst: '10.96.12.34', sport: 41234, dport: 80 });
    expect(e.cilium).toMatchObject({ direction: 'SVC', service: true, revNat: 5, backendId: 17 });
    expect(e.timeout).toBeUndefined();
  });

  it('takes the backend id from the RxBytes union slot before BackendID= existed (1.15)', () => {
    expect(parse(ctLine({ dir: 'SVC', dst: '10.96.0.1:443', rx: [0, 3] })).value.entries[0]!.cilium.backendId).toBe(3);
  });

  it('turns a ≤ 1.14 `service` entry (printed VIP first) around', () => {
    const e = parse(ctLine({ src: '10.96.0.1:443', dst: '10.244.0.113:46298', words: 'service', rx: [0, 1], revNat: 1 })).value.entries[0]!;
    expect(e.orig).toMatchObject({ src: '10.244.0.113', sport: 46298, dst: '10.96.0.1', dport: 443 });
    expect(e.cilium).toMatchObject({ direction: 'OUT', service: true, backendId: 1, revNat: 1 });
  });

  it('reads the ≤ 1.1 lowercase form and the newest Packets=/Bytes= form with bare IPv6', () => {
    const old = 'TCP IN 10.10.1.111:10054 -> 10.10.1.1:35330  expires=44067 rx_packets=6 rx_bytes=540 tx_packets=4 tx_bytes=450 flags=10 revnat=0 src_sec_id=1';
    const v6 = 'TCP SVC 2603:8080:c0f0::304f:44564 -> 2a03:3f40:88:1::24:80 expires=26806933 Packets=0 Bytes=0 RxFlagsSeen=0x00 LastRxReport=0 TxFlagsSeen=0x1b LastTxReport=26806929 Flags=0x0013 [ RxClosing TxClosing SeenNonSyn ] RevNAT=218 SourceSecurityID=0 BackendID=98';
    const { value, diagnostics } = parse(`${old}\n${v6}\n`);
    expect(diagnostics).toEqual([]);
    expect(value.entries[0]!.cilium).toMatchObject({ direction: 'IN', flags: 0x10, revNat: 0, sourceSecurityId: 1, rxPackets: 6n, txBytes: 450n });
    expect(value.entries[1]).toMatchObject({ family: 'ipv6', orig: { src: '2603:8080:c0f0::304f', sport: 44564, dst: '2a03:3f40:88:1::24', dport: 80 } });
    expect(value.entries[1]!.cilium).toMatchObject({ backendId: 98, revNat: 218 });
  });

  it('keeps the ICMP id and the related word; UDP from the ANY map', () => {
    const { value } = parse([ctLine({ proto: 'ICMP', src: '10.0.0.1:7', dst: '10.0.0.2:0', words: 'related' }), ctLine({ proto: 'UDP', dst: '10.244.0.2:53' })].join('\n'));
    expect(value.entries[0]).toMatchObject({ proto: 'icmp', orig: { icmpId: 7 }, cilium: { related: true } });
    expect(value.entries[0]!.orig.sport).toBeUndefined();
    expect(value.entries[1]).toMatchObject({ proto: 'udp', protoNum: 17, orig: { dport: 53 } });
  });

  it('keeps an unknown field with an info diagnostic', () => {
    const { value, diagnostics } = parse(`${ctLine()} NewThing=0x7`);
    expect(value.entries[0]!.extra).toEqual([{ key: 'NewThing', value: '0x7' }]);
    expect(diagnostics).toMatchObject([{ severity: 'info', line: 1, code: 'unknown-field' }]);
  });

  it('never throws on garbage, binary or truncated input, and keeps the good lines', () => {
    const good = ctLine();
    const text = ['Unable to open map', good, 'TCP OUT 10.0.0.1:1 -> ', 'TCP OUT 10.0.0.1:1 -> 10.0.0.2:80 expires=1 RxPackets=', '\u0000\u0001\u00ff binary', 'TCP SIDEWAYS 1.2.3.4:1 -> 1.2.3.5:2', 'TCP OUT 300.1.1.1:1 -> 1.1.1.1:2', good].join('\n');
    const { value, diagnostics } = parse(text);
    expect(value.entries.map((e) => e.line)).toEqual([2, 8]);
    expect(diagnostics.filter((d) => d.code === 'not-a-ct-entry').map((d) => d.line)).toEqual([1, 3, 4, 5, 6, 7]);
    for (let cut = 0; cut < good.length; cut += 7) expect(() => parse(good.slice(0, cut))).not.toThrow();
  });
});

function lbWith(backends: { id: number; ip: string; port: number }[]): LbTable {
  return {
    source: 'bpf-maps',
    services: [],
    revNats: [],
    backends: backends.map((b) => ({ ...b, protocol: 'TCP', state: 'active', weight: null, clusterId: null, zone: null, nodeName: null })),
  };
}

describe('joinCiliumBackends', () => {
  it('sets the reply source of a service entry to its backend; others unchanged', () => {
    const table = parse([ctLine({ dir: 'SVC', dst: '10.96.12.34:80', backendId: 4 }), ctLine({ dir: 'SVC', dst: '10.96.12.34:80', backendId: 99 }), ctLine()].join('\n')).value;
    const joined = joinCiliumBackends(table, lbWith([{ id: 4, ip: '10.244.1.5', port: 8080 }]));
    expect(joined.entries[0]!.reply).toEqual({ src: '10.244.1.5', sport: 8080, dst: '10.244.0.9', dport: 41234 });
    expect(joined.entries[1]).toBe(table.entries[1]);
    expect(joined.entries[2]).toBe(table.entries[2]);
  });
});

function run(id: string, argv: readonly string[], stdout: string): ProbeRun {
  return { id, argv: [...argv], status: 'ok', result: { argv: [...argv], stdout, stderr: '', exitCode: 0, startedAt: '2026-01-01T00:00:00.000Z', durationMs: 1 } };
}

describe('Cilium CT in the conntrack view', () => {
  it('shows a cilium-ct-list run with the lab-cilium LB maps, backend address joined', () => {
    const dir = fixtureDir('lab-cilium');
    const manifest = JSON.parse(readFileSync(path.join(dir, 'manifest.json'), 'utf8')) as { probes: { id: string; argv: string[]; stdoutFile: string }[] };
    const lbRuns = manifest.probes.filter((p) => p.id.startsWith('bpf-lb')).map((p) => run(p.id, p.argv, readFileSync(path.join(dir, p.stdoutFile), 'utf8')));
    const base = buildSnapshot({ runs: lbRuns, source: { kind: 'replay', label: 't', live: false }, capturedAt: 'x' });
    // A service and one of its backends from the fixture's own LB table.
    const svc = base.lb!.value!.services.find((s) => s.frontend.protocol === 'TCP' && s.frontend.scope === 'external' && s.slots.some((x) => x.backend))!;
    const slot = svc.slots.find((x) => x.backend)!;
    const vip = `${svc.frontend.ip}:${svc.frontend.port}`;
    const text = [ctLine({ dir: 'SVC', dst: vip, backendId: slot.backendId!, revNat: svc.id ?? 0 }), ctLine({ dst: `${slot.backend!.ip}:${slot.backend!.port}` })].join('\n');
    const snap = buildSnapshot({
      runs: [...lbRuns, run('cilium-ct-list', ['cilium-dbg', 'bpf', 'ct', 'list', 'global'], text)],
      apiText: readFileSync(path.join(dir, 'api.json'), 'utf8'),
      source: { kind: 'replay', label: 't', live: false },
      capturedAt: 'x',
    });
    const view = conntrackView(snap, { sort: DEFAULT_CONNTRACK_SORT, filter: '', service: null });
    expect(view.source).toBe('cilium');
    expect(view.availability.kind).toBe('table');
    expect(view.summary.total).toBe(2);
    const row = conntrackRow(view.index, 0);
    expect(row.nat.destination).toEqual({ ip: svc.frontend.ip, port: svc.frontend.port });
    expect(row.nat.answeredBy).toEqual({ ip: slot.backend!.ip, port: slot.backend!.port });
    expect(row.nat.dnat).toBe(true);
    expect(allDiagnostics(snap).filter((d) => d.origin === 'cilium-ct-list')).toEqual([]);
  });

  it('prefers netfilter conntrack when it has entries', async () => {
    const nf = 'ipv4     2 tcp      6 114 TIME_WAIT src=10.244.0.9 dst=10.244.0.23 sport=35888 dport=8080 src=10.244.0.23 dst=10.244.0.9 sport=8080 dport=35888 [ASSURED] mark=0 use=1';
    const snap = buildSnapshot({ runs: [run('conntrack', ['conntrack', '-L'], nf), run('cilium-ct-list', ['cilium-dbg'], ctLine())], source: { kind: 'replay', label: 't', live: false }, capturedAt: 'x' });
    const view = conntrackView(snap, { sort: DEFAULT_CONNTRACK_SORT, filter: '', service: null });
    expect(view.source).toBe('netfilter');
    expect(conntrackRow(view.index, 0).entry.orig.dport).toBe(8080);
    expect(snap.ciliumConntrack?.value?.entries).toHaveLength(1);
  });
});
