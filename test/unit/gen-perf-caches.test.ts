/**
 * The views that are now computed once per model (rules-view's chain list and chain rows,
 * the Services view per node) answer exactly as a fresh computation would, on a generated
 * capture: same rows, a new array each call where callers may sort or filter it, new rows
 * when the rates or the node change.
 */
import { describe, expect, it } from 'vitest';
import { generateWorld, modeOutputs } from '../../bench/gen/capture.js';
import { buildSnapshot } from '../../src/collect/build-snapshot.js';
import { chainList, chainRows, type RuleRates } from '../../src/analysis/rules-view.js';
import { buildServiceView } from '../../src/analysis/service-view.js';
import { catalog, fillArgv, probe } from '../../src/sources/catalog.js';
import type { ProbeRun } from '../../src/sources/probe-runner.js';

function snapshotOf(services: number, seed: string) {
  const world = generateWorld({ services, endpoints: 3, seed, modes: ['iptables'], conntrack: 10 });
  const runs: ProbeRun[] = [...modeOutputs(world, 'iptables')].map(([id, stdout]) => {
    const argv = fillArgv(probe(id).argv, catalog().params, {});
    return { id, argv, status: 'ok', result: { argv, stdout, stderr: '', exitCode: 0, startedAt: '2026-02-02T11:00:00.000Z', durationMs: 1 } };
  });
  return buildSnapshot({ runs, apiText: world.apiText, source: { kind: 'replay', label: 'gen', live: false }, capturedAt: '2026-02-02T11:00:00.000Z' });
}

describe('rules-view caches', () => {
  const snapshot = snapshotOf(40, 'caches');
  const ruleset = snapshot.iptables!.value!;

  it('chainList: equal rows every call, a fresh array each time, per snapshot', () => {
    const a = chainList(snapshot);
    a.reverse();
    const b = chainList(snapshot);
    expect(b).not.toBe(a);
    expect(b).toEqual([...a].reverse());
    expect(b[0]).toMatchObject({ table: 'filter', chain: 'INPUT' });
    const other = snapshotOf(41, 'caches');
    expect(chainList(other).length).toBeGreaterThan(b.length);
  });

  it('chainRows: the same rows for the same chain and rates, recomputed when the rates change', () => {
    const first = chainRows(ruleset, 'nat', 'KUBE-SERVICES')!;
    first.length = 0;
    const again = chainRows(ruleset, 'nat', 'KUBE-SERVICES')!;
    expect(again.length).toBeGreaterThan(40);
    const rates: RuleRates = new Map([[`nat/KUBE-SERVICES#${again[0]!.index}`, 12.5]]);
    const withRates = chainRows(ruleset, 'nat', 'KUBE-SERVICES', rates)!;
    expect(withRates[0]!.rate).toBe(12.5);
    expect(again[0]!.rate).toBeNull();
    expect(chainRows(ruleset, 'nat', 'KUBE-SERVICES', new Map())![0]!.rate).toBeNull();
    expect(chainRows(ruleset, 'nat', 'NO-SUCH-CHAIN')).toBeNull();
  });
});

describe('service view cache', () => {
  it('answers per node: the same view for the same objects and node, another for another node', () => {
    const api = snapshotOf(30, 'services').api!.value!;
    const a = buildServiceView(api, { nodeName: 'gen-node-0' });
    expect(buildServiceView(api, { nodeName: 'gen-node-0' })).toBe(a);
    const b = buildServiceView(api, { nodeName: 'gen-node-1' });
    expect(b).not.toBe(a);
    const onNode = (v: typeof a) => v.rows.flatMap((r) => r.endpoints.map((e) => e.onNode));
    expect(onNode(a)).not.toEqual(onNode(b));
    expect(onNode(buildServiceView(api)).every((x) => x === null)).toBe(true);
    expect(a.rows.map((r) => `${r.namespace}/${r.name}`)).toEqual(b.rows.map((r) => `${r.namespace}/${r.name}`));
  });
});
