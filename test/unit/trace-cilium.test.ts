/**
 * Step mode on the Cilium lab capture (fixtures/lab-cilium): each walk's map lookups must
 * show exactly the key/value bytes the capture's bpftool dumps hold. The expected keys are
 * built here from lb.h's struct layouts (address and port in network order, slot u16
 * little-endian, proto, scope, 2 pad bytes); the values are looked up in the raw dumps.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { UserError } from '../../src/errors.js';
import type { CiliumStatus } from '../../src/model/cilium.js';
import type { NodeSnapshot } from '../../src/model/snapshot.js';
import { bytesToHex, parseBpftoolMapDump } from '../../src/parsers/bpftool-map-dump.js';
import { runTraceCommand } from '../../src/report/trace.js';
import { isCiliumKpr, traceFromSnapshot, type TraceCommandArgs } from '../../src/trace/choose-engine.js';
import { DROP_NO_SERVICE, socketLbSetting } from '../../src/trace/cilium.js';
import type { TraceResult, TraceStep } from '../../src/trace/types.js';
import { fixtureDir, snapshotOf } from '../helpers/fixtures.js';

const hex = (bytes: number[]) => bytes.map((b) => b.toString(16).padStart(2, '0')).join(' ');
const ip4 = (ip: string) => ip.split('.').map(Number);
/** `struct lb4_key`: address (be32), dport (be16), backend_slot (u16 host order, little), proto, scope, pad[2]. */
const svcKey = (ip: string, port: number, slot: number, proto = 6, scope = 0) => hex([...ip4(ip), port >> 8, port & 255, slot & 255, slot >> 8, proto, scope, 0, 0]);
/** backends_v3 key: backend id u32 little-endian. */
const beKey = (id: number) => hex([id & 255, (id >> 8) & 255, 0, 0]);
/** reverse_nat key: rev-NAT id u16 in network order. */
const rnKey = (id: number) => hex([id >> 8, id & 255]);

/** The `key … value …` line of the capture's dump of `probe` whose key is `keyHex`, or null. */
function dumpEntry(probe: string, keyHex: string): string | null {
  const text = readFileSync(path.join(fixtureDir('lab-cilium'), 'probes', `${probe}.stdout`), 'utf8');
  const e = parseBpftoolMapDump(text, probe).value.entries.find((x) => bytesToHex(x.key) === keyHex);
  return e ? `key ${bytesToHex(e.key)} value ${bytesToHex(e.value)}` : null;
}

const lookups = (r: TraceResult) => r.steps.filter((s) => s.kind === 'map-lookup');
const onMap = (r: TraceResult, map: string) => lookups(r).filter((s) => s.chain === map);

const hostnsOnly: CiliumStatus = {
  version: '1.16.5', versionDetail: null, agentState: 'Ok',
  kubeProxyReplacement: { mode: 'True', replaces: 'full', devices: [] },
  socketLB: { enabled: true, hostNamespaceOnly: true, tracing: null },
  nodePort: { enabled: true, portMin: 30000, portMax: 32767, mode: 'SNAT', algorithm: 'Random' },
  hostRouting: 'Legacy', routingNetwork: 'Native', tunnelProtocol: null, masquerading: null, fields: [], raw: '',
};
const withStatus = (s: NodeSnapshot, status: CiliumStatus): NodeSnapshot => ({ ...s, ciliumStatus: { value: status, diagnostics: [], probe: null, error: null } });

interface Case {
  readonly name: string;
  readonly args: TraceCommandArgs;
  readonly hostnsOnly?: boolean;
  /** Programs met, in order (bpf-prog steps). */
  readonly progs: readonly string[];
  /** Service map keys looked up, in order, and whether each found an entry. */
  readonly serviceKeys: readonly [string, boolean][];
  readonly backendId: number | null;
  /** The per-packet reverse NAT entry (cilium_lb4_reverse_nat) shown on the reply, by rev_nat_index. */
  readonly revNat: number | null;
  /** Socket LB's reverse translation on the reply: the hook (TCP getpeername, UDP recvmsg) and the frontend it answers. */
  readonly reverseSk?: { readonly hook: string; readonly frontend: string };
  readonly verdict: TraceResult['verdict']['kind'];
  readonly endpoint: string | null;
}

const CASES: readonly Case[] = [
  {
    name: 'ClusterIP from a pod, socket LB (default): connected to the backend at connect()',
    args: { from: '10.244.0.9', to: '10.96.12.34:80/tcp' },
    progs: ['bpf_sock', 'bpf_lxc'],
    serviceKeys: [[svcKey('10.96.12.34', 80, 0), true], [svcKey('10.96.12.34', 80, 1), true], [svcKey('10.244.0.23', 8080, 0), false], [svcKey('10.244.0.23', 8080, 0, 0), false]],
    backendId: 1, revNat: null, reverseSk: { hook: 'getpeername4', frontend: '10.96.12.34:80' }, verdict: 'forwarded', endpoint: '10.244.0.23:8080',
  },
  {
    name: 'UDP ClusterIP from a pod, socket LB: sendmsg4 on the way out, recvmsg4 on the reply',
    args: { from: '10.244.0.9', to: '10.96.0.10:53/udp' },
    progs: ['bpf_sock', 'bpf_lxc'],
    serviceKeys: [[svcKey('10.96.0.10', 53, 0, 17), true], [svcKey('10.96.0.10', 53, 1, 17), true], [svcKey('10.244.0.2', 53, 0, 17), false], [svcKey('10.244.0.2', 53, 0, 0), false]],
    backendId: 5, revNat: null, reverseSk: { hook: 'recvmsg4', frontend: '10.96.0.10:53' }, verdict: 'forwarded', endpoint: '10.244.0.2:53',
  },
  {
    name: 'ClusterIP from a pod, socket LB host-namespace only: bpf_lxc DNATs per packet',
    args: { from: '10.244.0.9', to: '10.96.12.34:80/tcp', endpoint: '10.244.0.31:8080' },
    hostnsOnly: true,
    progs: ['bpf_lxc'],
    serviceKeys: [[svcKey('10.96.12.34', 80, 0), true], [svcKey('10.96.12.34', 80, 2), true]],
    backendId: 2, revNat: 1, verdict: 'forwarded', endpoint: '10.244.0.31:8080',
  },
  {
    name: 'ClusterIP from the host, socket LB',
    args: { to: '10.96.40.7:443/tcp', entry: 'host' },
    progs: ['bpf_sock'],
    serviceKeys: [[svcKey('10.96.40.7', 443, 0), true], [svcKey('10.96.40.7', 443, 1), true]],
    backendId: 4, revNat: null, reverseSk: { hook: 'getpeername4', frontend: '10.96.40.7:443' }, verdict: 'sent', endpoint: '10.244.0.52:8443',
  },
  {
    name: 'NodePort from outside on the node address frontend (bpf_host)',
    args: { from: '203.0.113.7', to: '192.168.49.2:30080/tcp' },
    progs: ['bpf_host'],
    serviceKeys: [[svcKey('192.168.49.2', 30080, 0), true], [svcKey('192.168.49.2', 30080, 1), true]],
    backendId: 1, revNat: 3, verdict: 'forwarded', endpoint: '10.244.0.23:8080',
  },
  {
    name: 'NodePort on a node address without its own frontend: the 0.0.0.0 wildcard (socket LB)',
    args: { from: '10.244.0.1', to: '10.244.0.1:30080/tcp', entry: 'host' },
    progs: ['bpf_sock'],
    serviceKeys: [[svcKey('10.244.0.1', 30080, 0), false], [svcKey('10.244.0.1', 30080, 0, 0), false], [svcKey('0.0.0.0', 30080, 0), true], [svcKey('0.0.0.0', 30080, 1), true]],
    backendId: 1, revNat: null, reverseSk: { hook: 'getpeername4', frontend: '10.244.0.1:30080' }, verdict: 'sent', endpoint: '10.244.0.23:8080',
  },
  {
    name: 'service without backends, per packet: DROP_NO_SERVICE',
    args: { from: '10.244.0.9', to: '10.96.50.5:80/tcp' },
    hostnsOnly: true,
    progs: ['bpf_lxc'],
    serviceKeys: [[svcKey('10.96.50.5', 80, 0), true]],
    backendId: null, revNat: null, verdict: 'dropped', endpoint: null,
  },
  {
    name: 'service without backends, socket LB: connect() fails',
    args: { from: '10.244.0.9', to: '10.96.50.5:80/tcp' },
    progs: ['bpf_sock'],
    serviceKeys: [[svcKey('10.96.50.5', 80, 0), true]],
    backendId: null, revNat: null, verdict: 'rejected', endpoint: null,
  },
  {
    name: 'ICMP echo to a ClusterIP: no LB entry, not translated',
    args: { from: '10.244.0.9', to: '10.96.12.34/icmp' },
    progs: ['bpf_lxc'],
    serviceKeys: [[svcKey('10.96.12.34', 0, 0, 1), false], [svcKey('10.96.12.34', 0, 0, 0), false]],
    backendId: null, revNat: null, verdict: 'forwarded', endpoint: '10.96.12.34',
  },
];

describe('Cilium step mode on the lab capture', async () => {
  const snapshot = await snapshotOf('lab-cilium');

  it('dispatches to the Cilium walk: the capture is a KPR node', () => {
    expect(isCiliumKpr(snapshot)).toBe(true);
    expect(socketLbSetting(snapshot.ciliumStatus?.value ?? null)).toEqual({ enabled: true, hostNamespaceOnly: false, read: false });
  });

  it.each(CASES)('$name', (c) => {
    const r = traceFromSnapshot(c.hostnsOnly ? withStatus(snapshot, hostnsOnly) : snapshot, c.args);
    expect(r.steps.every((s) => s.backend !== 'iptables' && s.backend !== 'nft')).toBe(true);
    expect(r.steps.filter((s) => s.kind === 'bpf-prog').map((s) => s.table)).toEqual(c.progs);
    const svc = onMap(r, 'cilium_lb4_services_v2');
    expect(svc.map((s) => [s.ruleText?.split(' value ')[0]?.replace(/^key /, '').replace(/ \(no entry\)$/, ''), s.matched])).toEqual(c.serviceKeys);
    // Every entry found is shown with the exact bytes of the capture's dump.
    for (const s of svc.filter((x) => x.matched)) expect(s.ruleText).toBe(dumpEntry('bpf-lb4-services', s.ruleText!.split(' value ')[0]!.slice(4)));
    const be = onMap(r, 'cilium_lb4_backends_v3');
    expect(be.map((s) => s.ruleText)).toEqual(c.backendId === null ? [] : [dumpEntry('bpf-lb4-backends', beKey(c.backendId))]);
    const rn = onMap(r, 'cilium_lb4_reverse_nat');
    expect(rn.map((s) => s.ruleText)).toEqual(c.revNat === null ? [] : [dumpEntry('bpf-lb4-reverse-nat', rnKey(c.revNat))]);
    // The reverse translation is reply-side: it comes after the forward walk's final step, which the verdict names.
    const sk = onMap(r, 'cilium_lb4_reverse_sk');
    expect(sk.map((s) => [s.attach, s.verdict])).toEqual(c.reverseSk ? [[c.reverseSk.hook, c.reverseSk.frontend]] : []);
    for (const s of [...rn, ...sk]) {
      expect(s.index).toBeGreaterThan(r.verdict.step);
      expect(s.reason).toMatch(/^on the reply: /);
    }
    if (c.verdict !== 'dropped' && c.verdict !== 'rejected') expect(r.steps[r.verdict.step]!.kind).toBe('final');
    expect(r.verdict.kind).toBe(c.verdict);
    expect(r.verdict.endpoint).toBe(c.endpoint);
  });

  it('the slot choice lists only the active backends, 1/count each; the terminating one is skipped', () => {
    const r = traceFromSnapshot(snapshot, { from: '10.244.0.9', to: '10.96.12.34:80/tcp' });
    const choice = lookups(r).find((s) => s.branches !== null) as TraceStep;
    expect(choice.branches?.map((b) => [b.endpoint, b.probability])).toEqual([['10.244.0.23:8080', 0.5], ['10.244.0.31:8080', 0.5]]);
    expect(choice.reason).toContain('slot 3 → backend 3 10.244.1.15:8080 terminating');
    expect(() => traceFromSnapshot(snapshot, { from: '10.244.0.9', to: '10.96.12.34:80/tcp', endpoint: '10.244.1.15' })).toThrow(UserError);
  });

  it('socket LB: no per-packet DNAT, conntrack holds the backend address from the first packet', () => {
    const r = traceFromSnapshot(snapshot, { from: '10.244.0.9', to: '10.96.12.34:80/tcp' });
    expect(r.conntrack?.original.dst).toBe('10.244.0.23');
    expect(r.conntrack?.dnat).toBe(false);
    expect(r.steps.find((s) => s.kind === 'nat')?.table).toBe('bpf_sock');
    expect(r.notes.some((n) => n.includes('assumed, not read'))).toBe(true);
    expect(r.notes.some((n) => n.includes('no KUBE- chains'))).toBe(true);
  });

  it('per packet: the reply is rewritten back to the VIP by the rev-NAT entry', () => {
    const r = traceFromSnapshot(withStatus(snapshot, hostnsOnly), { from: '10.244.0.9', to: '10.96.12.34:80/tcp' });
    expect(r.reply?.received.src).toBe('10.96.12.34');
    expect(r.reply?.sent.src).toBe('10.244.0.23');
    expect(r.notes.some((n) => n.includes('assumed, not read'))).toBe(false);
  });

  it('a service without backends names DROP_NO_SERVICE', () => {
    const r = traceFromSnapshot(withStatus(snapshot, hostnsOnly), { from: '10.244.0.9', to: '10.96.50.5:80/tcp' });
    expect(r.verdict.reason).toContain(DROP_NO_SERVICE.name);
    expect(r.steps.at(-1)?.verdict).toBe('dropped');
  });

  it('ICMP to a ClusterIP keeps the VIP and says a ClusterIP does not answer ping', () => {
    const r = traceFromSnapshot(snapshot, { from: '10.244.0.9', to: '10.96.12.34/icmp' });
    expect(r.final.dst).toBe('10.96.12.34');
    expect(r.steps.some((s) => s.kind === 'nat')).toBe(false);
    expect(r.verdict.reason).toContain('unanswered');
    expect(r.notes.some((n) => n.includes('does not answer ping'))).toBe(true);
  });

  it('nodescope trace -o text and -o json carry the map bytes', () => {
    const args = { from: '10.244.0.9', to: '10.96.12.34:80/tcp' };
    const text = runTraceCommand(snapshot, args);
    expect(text).toContain(dumpEntry('bpf-lb4-services', svcKey('10.96.12.34', 80, 0))!);
    const doc = JSON.parse(runTraceCommand(snapshot, { ...args, output: 'json' })) as { mode: string; steps: { backend: string; kind: string; chain: string | null; ruleText: string | null }[] };
    expect(doc.mode).toBe('cilium');
    const be = doc.steps.find((s) => s.chain === 'cilium_lb4_backends_v3');
    expect(be?.ruleText).toBe(dumpEntry('bpf-lb4-backends', beKey(1)));
  });
});
