/**
 * `nodescope trace` over the lab capture bundles (replayed through the real pipeline):
 * text output one line per step, stable JSON (parsed back: shapes, exact counters as
 * strings), the iptables-nft tables evaluated once with nft handles, and UserError for
 * every argument to fix.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { UserError } from '../../src/errors.js';
import { parseNftJson } from '../../src/parsers/nft-json.js';
import { runTraceCommand } from '../../src/report/trace.js';
import { branchChoice, type TraceCommandArgs } from '../../src/trace/choose-engine.js';
import { fixtureDir, snapshotOf } from '../helpers/fixtures.js';
import { LAB_SCENARIO } from '../lab/scenario.js';
import { labPod } from './trace-builders.js';

const web = LAB_SCENARIO.services.find((s) => s.name === 'web')!;
const webPort = web.ports[0]!;
const nodeIP = LAB_SCENARIO.nodeIPs[0]!;
const nftOf = (bundle: string) => parseNftJson(readFileSync(path.join(fixtureDir(bundle), 'probes', 'nft-json.stdout'), 'utf8'), 'nft-json').value;

interface StepJson {
  index: number;
  kind: string;
  backend: string;
  table: string | null;
  chain: string | null;
  handle: number | null;
  matched: boolean | null;
  verdict: string | null;
  counters: { packets: string; bytes: string } | null;
  branches: { probability: number; endpoint: string | null; chosen: boolean }[] | null;
}

describe('runTraceCommand on the iptables lab capture', async () => {
  const snapshot = await snapshotOf('lab-iptables');
  const nft = nftOf('lab-iptables');
  const args: TraceCommandArgs = { from: labPod('client').ip, to: `${web.clusterIP}:${webPort.port}/tcp`, endpoint: `${labPod('web-2').ip}:${webPort.targetPort}`, nft };

  it('prints one line per step with hook, table/chain, rule number, ✓/✗ and reason, then the verdict', () => {
    const text = runTraceCommand(snapshot, args);
    expect(text).toMatch(/^node lab-node/);
    expect(text).toMatch(/\n\s+\d+ prerouting nat\/KUBE-SERVICES #1 ✓ jump KUBE-SVC-[A-Z2-7]{16}: daddr 10\.96\.12\.34 is in 10\.96\.12\.34\/32/);
    expect(text).toMatch(/\n\s+\d+ prerouting nat\/KUBE-SVC-[A-Z2-7]{16} #2 ✗: random/);
    expect(text).toContain(`verdict: forwarded: forwarded out`);
    expect(text).toMatch(/conntrack: tcp {6}6 120 SYN_SENT src=10\.244\.0\.9 dst=10\.96\.12\.34/);
    expect(text).toContain('note: nft table ip nat is managed by iptables-nft');
  });

  it('writes stable JSON: iptables-nft rules once, with their nft handles and exact counters', () => {
    const doc = JSON.parse(runTraceCommand(snapshot, { ...args, output: 'json' })) as Record<string, unknown>;
    expect(Object.keys(doc)).toEqual(['apiVersion', 'kind', 'node', 'kernel', 'source', 'live', 'capturedAt', 'mode', 'unconfirmed', 'evidence', 'facts', 'captureNote', 'request', 'steps', 'verdict', 'final', 'conntrack', 'reply', 'notes']);
    const steps = doc.steps as StepJson[];
    expect(steps.every((s) => s.backend !== 'nft')).toBe(true);
    const rules = steps.filter((s) => s.kind === 'rule');
    expect(rules.length).toBeGreaterThan(10);
    expect(rules.every((s) => typeof s.handle === 'number')).toBe(true);
    const counted = rules.filter((s) => s.counters !== null);
    expect(counted.length).toBe(rules.length);
    for (const s of counted) expect(s.counters!.packets).toMatch(/^\d+$/);
    const branches = steps.find((s) => s.branches)!.branches!;
    expect(branches.reduce((a, b) => a + b.probability, 0)).toBeCloseTo(1, 9);
    expect(branches.filter((b) => b.chosen).map((b) => b.endpoint)).toEqual([args.endpoint]);
    expect((doc.verdict as { endpoint: string }).endpoint).toBe(args.endpoint);
  });

  it('takes the nft ruleset from the snapshot; without any it evaluates the same rules, without handles', () => {
    const own = JSON.parse(runTraceCommand(snapshot, { ...args, nft: undefined, output: 'json' })) as { steps: StepJson[]; verdict: { endpoint: string } };
    expect(own.steps.filter((s) => s.kind === 'rule').every((s) => typeof s.handle === 'number')).toBe(true);
    const bare = JSON.parse(runTraceCommand({ ...snapshot, nft: null }, { ...args, nft: undefined, output: 'json' })) as { steps: StepJson[]; verdict: { endpoint: string } };
    expect(bare.steps.filter((s) => s.kind === 'rule').every((s) => s.handle === null)).toBe(true);
    expect(bare.verdict.endpoint).toBe(args.endpoint);
    expect(own.steps.map((s) => [s.chain, s.matched])).toEqual(bare.steps.map((s) => [s.chain, s.matched]));
  });
});

describe('runTraceCommand on the nftables lab capture', async () => {
  const snapshot = await snapshotOf('lab-nftables');
  it('walks the kube-proxy table', () => {
    const text = runTraceCommand(snapshot, { from: `${LAB_SCENARIO.outsideIP}:40000`, to: `${nodeIP}:${webPort.nodePort}/tcp`, nft: nftOf('lab-nftables'), branch: '1' });
    expect(text).toMatch(/prerouting ip kube-proxy\/services #2 ✓ goto external-/);
    expect(text).toMatch(/→ 2 {2}33\.3%/);
    expect(text).toContain('verdict: forwarded');
  });
  it('without any nft ruleset the packet is only routed (nothing to evaluate)', () => {
    const text = runTraceCommand({ ...snapshot, nft: null }, { from: labPod('client').ip, to: `${web.clusterIP}:${webPort.port}/tcp` });
    expect(text).not.toMatch(/kube-proxy\//);
    expect(text).toContain(`verdict: forwarded: forwarded out eth0 to ${web.clusterIP}:${webPort.port} via ${LAB_SCENARIO.outsideIP}`);
  });
});

describe('argument errors', async () => {
  const snapshot = await snapshotOf('lab-iptables');
  const bad: readonly [string, TraceCommandArgs][] = [
    ['a bad address', { from: '10.244.0.999', to: '10.96.12.34:80/tcp' }],
    ['both --endpoint and --branch', { from: '10.244.0.9', to: '10.96.12.34:80/tcp', endpoint: '10.244.0.23:8080', branch: '1' }],
    ['a branch that is not a number', { from: '10.244.0.9', to: '10.96.12.34:80/tcp', branch: 'first' }],
    ['an endpoint no branch leads to', { from: '10.244.0.9', to: '10.96.12.34:80/tcp', endpoint: '10.1.1.1:80' }],
  ];
  it.each(bad)('%s is a UserError', (_what, args) => {
    expect(() => runTraceCommand(snapshot, args)).toThrow(UserError);
  });
  it('branchChoice reads the options', () => {
    expect(branchChoice({})).toEqual({ kind: 'first' });
    expect(branchChoice({ branch: '2' })).toEqual({ kind: 'index', index: 2 });
    expect(branchChoice({ endpoint: ' 10.0.0.1:80 ' })).toEqual({ kind: 'endpoint', endpoint: '10.0.0.1:80' });
  });
});
