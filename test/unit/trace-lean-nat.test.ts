/**
 * `trace`'s lean read of a replay's nat table (src/sources/replay-nat.ts): only the
 * per-Service chains a walk to the destination can reach keep their rules, and a walk that
 * enters a chain cut anyway is seen (src/cli/trace-load.ts `touches`), so the CLI reads the
 * table again whole (issue 23 item 3).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeGeneratedBundles } from '../../bench/gen/capture.js';
import { touches } from '../../src/cli/trace-load.js';
import { loadSnapshot } from '../../src/collect/session.js';
import { traceFromSnapshot } from '../../src/trace/choose-engine.js';
import { FlowFilteredReplay } from '../../src/sources/replay-flows.js';
import { natForDestination } from '../../src/sources/replay-nat.js';
import { ReplayTransport } from '../../src/sources/replay.js';

const tmp: string[] = [];
afterAll(() => {
  for (const d of tmp) rmSync(d, { recursive: true, force: true });
});

const DUMP = [
  '*filter',
  ':KUBE-SVC-FILTER - [0:0]',
  '-A KUBE-SVC-FILTER -j ACCEPT',
  '-A KUBE-SVC-FILTER -j DROP',
  'COMMIT',
  '*nat',
  ':KUBE-SERVICES - [0:0]',
  ':KUBE-NODEPORTS - [0:0]',
  ':KUBE-SVC-AAA - [0:0]',
  ':KUBE-SEP-A1 - [0:0]',
  ':KUBE-SVC-BBB - [0:0]',
  ':KUBE-SEP-B1 - [0:0]',
  ':KUBE-EXT-CCC - [0:0]',
  ':KUBE-SVC-CCC - [0:0]',
  ':KUBE-SVC-DDD - [0:0]',
  ':KUBE-SVC-EMPTY - [0:0]',
  '[1:60] -A KUBE-SERVICES -d 10.96.0.1/32 -p tcp -m tcp --dport 443 -j KUBE-SVC-AAA',
  '[1:60] -A KUBE-SERVICES -d 10.96.0.2/32 -p tcp -m tcp --dport 80 -j KUBE-SVC-BBB',
  '-A KUBE-SERVICES -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS',
  '-A KUBE-NODEPORTS -p tcp -m tcp --dport 30080 -j KUBE-EXT-CCC',
  '-A KUBE-SVC-AAA -m comment --comment "ns/a" -j KUBE-MARK-MASQ',
  '-A KUBE-SVC-AAA -j KUBE-SEP-A1',
  '-A KUBE-SEP-A1 -j KUBE-MARK-MASQ',
  '-A KUBE-SEP-A1 -p tcp -j DNAT --to-destination 10.244.0.5:443',
  '-A KUBE-SVC-BBB -j KUBE-MARK-MASQ',
  '-A KUBE-SVC-BBB -j KUBE-SEP-B1',
  '-A KUBE-SEP-B1 -j KUBE-MARK-MASQ',
  '-A KUBE-SEP-B1 -p tcp -j DNAT --to-destination 10.244.0.6:80',
  '-A KUBE-EXT-CCC -j KUBE-MARK-MASQ',
  '-A KUBE-EXT-CCC -j KUBE-SVC-CCC',
  '-A KUBE-SVC-CCC -j KUBE-MARK-MASQ',
  '-A KUBE-SVC-CCC -j DROP',
  '-A KUBE-SVC-DDD -j KUBE-MARK-MASQ',
  '-A KUBE-SVC-DDD -m recent --rcheck --seconds 10800 --name KUBE-SVC-DDD --mask 255.255.255.255 --rsource -j DROP',
  'COMMIT',
  '',
].join('\n');

const rulesOf = (text: string, chain: string) => text.split('\n').filter((l) => l.includes(`-A ${chain} `) || l.endsWith(`-A ${chain}`));

describe('the nat table a walk to one destination reads', () => {
  it('keeps the chains the destination reaches whole, one bare rule of the others, every other table and declaration', () => {
    const { text, cut } = natForDestination(DUMP, { address: '10.96.0.1', port: 443 });
    expect([...cut].sort()).toEqual(['KUBE-EXT-CCC', 'KUBE-SEP-B1', 'KUBE-SVC-BBB', 'KUBE-SVC-CCC']);
    expect(rulesOf(text, 'KUBE-SVC-AAA')).toEqual(rulesOf(DUMP, 'KUBE-SVC-AAA'));
    expect(rulesOf(text, 'KUBE-SEP-A1')).toEqual(rulesOf(DUMP, 'KUBE-SEP-A1'));
    expect(rulesOf(text, 'KUBE-SVC-BBB')).toEqual(['-A KUBE-SVC-BBB']);
    // -m recent: read by the header's affinity note, so whole.
    expect(rulesOf(text, 'KUBE-SVC-DDD')).toEqual(rulesOf(DUMP, 'KUBE-SVC-DDD'));
    expect(rulesOf(text, 'KUBE-SVC-FILTER')).toHaveLength(2);
    expect(text.split('\n').filter((l) => l.startsWith(':'))).toEqual(DUMP.split('\n').filter((l) => l.startsWith(':')));
    expect(rulesOf(text, 'KUBE-SERVICES')).toEqual(rulesOf(DUMP, 'KUBE-SERVICES'));
  });

  it('follows a NodePort to its chains, and keeps everything for ICMP to a ClusterIP only by address', () => {
    const nodePort = natForDestination(DUMP, { address: '192.168.0.10', port: 30080 });
    expect(rulesOf(nodePort.text, 'KUBE-SVC-CCC')).toEqual(rulesOf(DUMP, 'KUBE-SVC-CCC'));
    expect([...nodePort.cut].sort()).toEqual(['KUBE-SEP-A1', 'KUBE-SEP-B1', 'KUBE-SVC-AAA', 'KUBE-SVC-BBB']);
    const icmp = natForDestination(DUMP, { address: '10.96.0.2', port: null });
    expect(icmp.cut.has('KUBE-SVC-BBB')).toBe(false);
    expect(icmp.cut.has('KUBE-SVC-AAA')).toBe(true);
  });

  it('returns a text with nothing to cut as it is', () => {
    const small = '*nat\n:KUBE-SERVICES - [0:0]\n-A KUBE-SERVICES -j RETURN\nCOMMIT\n';
    expect(natForDestination(small, { address: '10.96.0.1', port: 80 })).toEqual({ text: small, cut: new Set() });
    expect(natForDestination('', { address: '10.96.0.1', port: 80 }).text).toBe('');
  });

  it('sees a walk that enters a chain the read cut (then the CLI reads the table whole)', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'nodescope-lean-nat-'));
    tmp.push(dir);
    writeGeneratedBundles(dir, { services: 30, endpoints: 3, seed: 'lean-nat', modes: ['iptables'], conntrack: 100 });
    const bundle = path.join(dir, 'iptables');
    const list = JSON.parse(readFileSync(path.join(bundle, 'api.json'), 'utf8')) as { items: { kind: string; spec?: { clusterIP?: string; ports?: { port: number }[] } }[] };
    const [a, b] = list.items.filter((i) => i.kind === 'Service' && /^\d/.test(i.spec?.clusterIP ?? '') && i.spec?.ports?.length).slice(2, 4);
    const to = `${a!.spec!.clusterIP}:${a!.spec!.ports![0]!.port}/tcp`;
    const args = { from: '10.244.1.7:40000', to };
    const walk = async (q: { address: string; port: number }) => {
      const transport = new FlowFilteredReplay(new ReplayTransport(bundle).bundle, a!.spec!.clusterIP!, q);
      const { snapshot } = await loadSnapshot({ transport, live: false });
      return { cut: transport.natCut, result: traceFromSnapshot(snapshot, args) };
    };
    const right = await walk({ address: a!.spec!.clusterIP!, port: a!.spec!.ports![0]!.port });
    expect(right.cut.size).toBeGreaterThan(0);
    expect(touches(right.result, right.cut)).toBe(false);
    expect(right.result.steps.some((s) => s.chain?.startsWith('KUBE-SVC-'))).toBe(true);
    const wrong = await walk({ address: b!.spec!.clusterIP!, port: b!.spec!.ports![0]!.port });
    expect(touches(wrong.result, wrong.cut)).toBe(true);
  });
});
