/**
 * `trace`'s lean read of a replay's nat table (src/sources/replay-nat.ts): only the
 * per-Service chains a walk to the destination can reach keep their rules, and a walk that
 * enters a chain cut anyway is seen (src/cli/trace-load.ts `touches`), so the CLI reads the
 * table again whole (issue 23 item 3).
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeGeneratedBundles } from '../../bench/gen/capture.js';
import { touches } from '../../src/cli/trace-load.js';
import { loadSnapshot } from '../../src/collect/session.js';
import { traceFromSnapshot } from '../../src/trace/choose-engine.js';
import { FlowFilteredReplay } from '../../src/sources/replay-flows.js';
import { natForDestination, natForDestinationByLines } from '../../src/sources/replay-nat.js';
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

/** Destinations to cut `text` for: the `-d A/32 … --dport N` of its rules (at most `n`), one without a port, one no rule names. */
function queriesOf(text: string, n = 12): { address: string; port: number | null }[] {
  const found = [...text.matchAll(/-d ([0-9.]+)\/32 .*?--dport ([0-9]+)/g)].map((m) => ({ address: m[1]!, port: Number(m[2]) }));
  const step = Math.max(1, Math.floor(found.length / n));
  const picked = found.filter((_, i) => i % step === 0).slice(0, n);
  return [...picked, ...(picked[0] ? [{ address: picked[0].address, port: null }] : []), { address: '192.0.2.77', port: 30080 }];
}

/** The index reading equals the line reading on `text` for every query of {@link queriesOf}. */
function expectSameCut(text: string): number {
  const queries = queriesOf(text);
  for (const q of queries) {
    const fast = natForDestination(text, q);
    const lines = natForDestinationByLines(text, q);
    expect(fast.text, `${q.address}:${q.port}`).toBe(lines.text);
    expect([...fast.cut]).toEqual([...lines.cut]);
  }
  return queries.length;
}

describe('the nat cut by index equals the cut by lines', () => {
  it('on the sample dump and edited, cut and odd texts', () => {
    const variants = [
      DUMP,
      DUMP.trimEnd(),
      DUMP.replaceAll('\n', '\r\n'),
      DUMP.replace('COMMIT\n*nat', 'COMMIT\n*nat').replace(/COMMIT\n$/, ''),
      `${DUMP}${DUMP}`,
      DUMP.replace('-A KUBE-SVC-AAA -j KUBE-SEP-A1\n', '-A KUBE-SVC-AAA -j KUBE-SEP-A1\n# a comment\n-A KUBE-SVC-AAA -j KUBE-SEP-A1\n'),
      DUMP.replace('-A KUBE-SVC-CCC -j DROP\n', '-A KUBE-SVC-CCC -j DROP\n-A KUBE-SVC-BBB -j ACCEPT\n'),
      DUMP.replace('-A KUBE-SEP-B1 -j KUBE-MARK-MASQ', '[7:420] -A KUBE-SEP-B1 -j KUBE-MARK-MASQ').replace('-A KUBE-SVC-BBB -j KUBE-MARK-MASQ', '[broken -A KUBE-SVC-BBB'),
      DUMP.replace('-A KUBE-SVC-CCC -j DROP', '-A KUBE-SVC-CCC'),
      DUMP.replace('-A KUBE-SVC-BBB -j KUBE-SEP-B1', '-A KUBE-SVC-BBB -m set --match-set KUBE-X dst -j KUBE-SEP-B1'),
      '*nat\n',
      '*nat',
      '*nat\n-A KUBE-SVC-X -j DROP\n-A KUBE-SVC-X -j ACCEPT',
      '*nat\nCOMMIT',
      '*filter\n*nat\n-A KUBE-SVC-X -j DROP\nCOMMITTED\nCOMMIT\n',
      '',
    ];
    let runs = 0;
    for (const text of variants) runs += expectSameCut(text);
    expect(runs).toBeGreaterThan(variants.length);
  });

  it('on the lab captures, generated captures and the corpus', () => {
    const texts: string[] = [];
    for (const name of ['lab-iptables', 'lab-nftables', 'lab-cilium']) {
      const file = path.join(__dirname, '..', '..', 'fixtures', name, 'probes', 'iptables-save.stdout');
      if (existsSync(file)) texts.push(readFileSync(file, 'utf8'));
    }
    const dir = mkdtempSync(path.join(os.tmpdir(), 'nodescope-nat-index-'));
    tmp.push(dir);
    writeGeneratedBundles(dir, { services: 120, endpoints: 4, seed: 'nat-index', modes: ['iptables'], conntrack: 10 });
    const generated = readFileSync(path.join(dir, 'iptables', 'probes', 'iptables-save.stdout'), 'utf8');
    texts.push(generated);
    const corpus = path.join(__dirname, '..', '..', '..', 'shared', 'corpus', 'iptables');
    if (existsSync(corpus)) for (const f of readdirSync(corpus).filter((f) => f.endsWith('.txt'))) texts.push(readFileSync(path.join(corpus, f), 'utf8'));
    else console.log(`corpus absent (${corpus}): only the fixtures and generated captures are compared`);
    expect(texts.length).toBeGreaterThanOrEqual(2);
    let runs = 0;
    for (const text of texts) runs += expectSameCut(text);
    expect(runs).toBeGreaterThan(texts.length * 2);
    // The generated capture is cut by the index reading itself (not handed back whole or by lines).
    expect(natForDestination(generated, queriesOf(generated)[0]!).cut.size).toBeGreaterThan(100);
  });
});
