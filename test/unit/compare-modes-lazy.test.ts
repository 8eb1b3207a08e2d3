/**
 * The per-Service comparer (src/analysis/compare-modes-lazy.ts) against `compareModes`,
 * the all-at-once comparison it replaces in the TUI: same Services, same cost per Service,
 * same base and totals, on generated captures of every mode and on a lab capture whose
 * Services share an external IP and endpoints (the keys that do not add up).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { GEN_MODES, writeGeneratedBundles } from '../../bench/gen/capture.js';
import { compareModes, type ModeComparison } from '../../src/analysis/compare-modes.js';
import { createModeComparer, type ModeComparer } from '../../src/analysis/compare-modes-lazy.js';
import type { NodeSnapshot } from '../../src/model/snapshot.js';
import { parseK8sObjects } from '../../src/parsers/k8s-objects.js';
import { loadSnapshot } from '../../src/collect/session.js';
import { ReplayTransport } from '../../src/sources/replay.js';
import { snapshotOf } from '../helpers/fixtures.js';
import { apiObjectsText } from '../lab/api-objects.js';

const tmp: string[] = [];
afterAll(() => {
  for (const d of tmp) rmSync(d, { recursive: true, force: true });
});

/** Snapshots of a small generated capture, one per mode. */
async function generated(): Promise<NodeSnapshot[]> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'nodescope-modes-'));
  tmp.push(dir);
  const out: NodeSnapshot[] = [];
  for (const bundle of writeGeneratedBundles(dir, { services: 24, endpoints: 3, seed: 'modes', modes: GEN_MODES, conntrack: 50 })) {
    const transport = new ReplayTransport(bundle);
    out.push((await loadSnapshot({ transport, live: false, apiText: transport.apiText()!, apiOrigin: 'api.json' })).snapshot);
  }
  return out;
}

/** Expects the comparer to say what `compareModes` says, Service by Service and in total. */
function expectSame(cmp: ModeComparer, old: ModeComparison): void {
  expect(cmp.services).toEqual(old.perService.map((p) => p.service));
  expect(cmp.base).toEqual(old.base);
  // Asked one by one, before the totals pass: the cost of one Service alone.
  for (const p of old.perService) expect(cmp.costOf(p.service)).toEqual(p);
  const totals = cmp.runToEnd();
  expect(totals).toEqual({ services: old.services, servicePorts: old.servicePorts, endpoints: old.endpoints, predicted: old.predicted, actual: old.actual, notes: old.notes });
  for (const p of old.perService) expect(cmp.countOf(p.service)).toEqual({ service: p.service, ports: p.ports, endpoints: p.endpoints, cost: p.cost });
}

describe('ModeComparer', () => {
  it('gives every Service of a generated capture the cost compareModes gives it, and the same totals', async () => {
    const snapshots = await generated();
    expect(snapshots).toHaveLength(3);
    for (const s of snapshots) {
      const old = compareModes(s)!;
      expect(old.perService.length).toBeGreaterThan(10);
      expectSame(createModeComparer(s)!, old);
      // Warmed up step by step (context, then one mode a step), the base is the same.
      const warmed = createModeComparer(s)!;
      let steps = 1;
      expect(warmed.ready).toBe(false);
      while (!warmed.warmUp()) steps++;
      expect(steps).toBe(4);
      expect(warmed.ready).toBe(true);
      expectSame(warmed, old);
    }
  });

  it('counts an external IP and endpoints two Services share once, as the all-Services tables do', async () => {
    // default/web twice (a second name and ClusterIP, the same endpoints), both with one external IP.
    type Item = { kind: string; metadata: { name: string; labels?: Record<string, string> }; spec?: Record<string, unknown> };
    const doc = JSON.parse(apiObjectsText()) as { items: Item[] };
    const web = doc.items.filter((i) => (i.kind === 'Service' && i.metadata.name === 'web') || (i.kind === 'EndpointSlice' && i.metadata.labels?.['kubernetes.io/service-name'] === 'web'));
    expect(web.length).toBeGreaterThanOrEqual(2);
    for (const item of web) {
      const twin = structuredClone(item);
      twin.metadata.name = `${item.metadata.name}-twin`;
      if (twin.metadata.labels?.['kubernetes.io/service-name']) twin.metadata.labels['kubernetes.io/service-name'] = 'web-twin';
      if (twin.kind === 'Service') Object.assign(twin.spec!, { clusterIP: '10.96.99.99', clusterIPs: ['10.96.99.99'] });
      for (const svc of [item, twin]) if (svc.kind === 'Service') svc.spec!['externalIPs'] = ['192.0.2.10'];
      doc.items.push(twin);
    }
    const base = await snapshotOf('lab-nftables');
    const s: NodeSnapshot = { ...base, api: { value: parseK8sObjects(JSON.stringify(doc), 'test').value, diagnostics: [], probe: null, error: null } };
    const old = compareModes(s)!;
    expect(old.perService.map((p) => p.service)).toContain('default/web-twin');
    // Some keys are shared (the external IP and port, the backends), so plain sums would be wrong.
    const sum = (f: (c: ModeComparison['base']) => number) => old.perService.reduce((n, p) => n + f(p.cost), f(old.base));
    expect(sum((c) => c.nftables.elements)).toBeGreaterThan(old.predicted.nftables.elements);
    expect(sum((c) => c.cilium.elements)).toBeGreaterThan(old.predicted.cilium.elements);
    expectSame(createModeComparer(s)!, old);
  });

  it('says why a Service is not compared, and runs the totals pass in slices', async () => {
    const cmp = createModeComparer(await snapshotOf('lab-iptables'))!;
    expect(cmp.standingOf('default/web-headless')).toBe('headless');
    expect(cmp.standingOf('default/web')).toBe('programmed');
    expect(cmp.standingOf('default/nowhere')).toBeUndefined();
    expect(cmp.indexOf('default/web-headless')).toBe(-1);
    expect(cmp.costOf('default/web-headless')).toBeNull();
    expect(cmp.totals()).toBeNull();
    // A zero budget still moves: the node's own counts first, then a few rows a slice.
    let slices = 0;
    while (!cmp.advance(0)) slices++;
    expect(slices).toBeGreaterThan(0);
    expect(cmp.progress()).toEqual({ done: 4, total: 4 });
    expect(cmp.totals()!.services).toBe(cmp.services.length);
  });

  it('is null without API objects', async () => {
    expect(createModeComparer({ ...(await snapshotOf('lab-iptables')), api: null })).toBeNull();
  });
});
