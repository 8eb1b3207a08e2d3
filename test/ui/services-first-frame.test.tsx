/**
 * The Services view with each row's parts made on first read (src/analysis/service-view.ts
 * `buildServiceView`, issue 23 item 4: the App's first data frame of a huge replay): every
 * row, the orphan slices, sorting, the filter and the pane's frames equal the view built whole
 * (`computeServiceViewWhole`, the old path) on the lab fixtures, a generated capture
 * (bench/gen) and hand-made objects with Pods, selectors, and orphans; and the
 * App's first frame of a big generated capture makes the parts of the rows it draws only.
 * Work is counted (`naturalAddresses`: one call per row's parts), never timed.
 */
import React from 'react';
import { describe, expect, it, vi } from 'vitest';
import { generateWorld, modeOutputs } from '../../bench/gen/capture.js';
import { buildServiceView, computeServiceViewWhole, endpointAddresses, type ServiceRow, type ServiceView } from '../../src/analysis/service-view.js';
import { buildSnapshot } from '../../src/collect/build-snapshot.js';
import { staticSession } from '../../src/collect/session.js';
import type { ApiObjects } from '../../src/model/k8s.js';
import type { NodeSnapshot } from '../../src/model/snapshot.js';
import { catalog, fillArgv, probe } from '../../src/sources/catalog.js';
import type { ProbeRun } from '../../src/sources/probe-runner.js';
import type { Lang } from '../../src/text/i18n.js';
import { App } from '../../src/ui/App.js';
import { ServicesPane } from '../../src/ui/panes/ServicesPane.js';
import { serviceSortColumns } from '../../src/ui/sort-columns.js';
import { sortRows } from '../../src/ui/table-sort.js';
import { servicesView } from '../../src/ui/views.js';
import { snapshotOf } from '../helpers/fixtures.js';
import { FRAME_WIDTHS, renderApp, renderAt } from '../helpers/render.js';
import { makeEndpointSlice, makeNode, makePod, makeService, objectsOf } from '../unit/builders/k8s.js';

const counted = vi.hoisted(() => ({ parts: 0 }));

vi.mock('../../src/analysis/service-row.js', async (importOriginal) => {
  const m = await importOriginal<typeof import('../../src/analysis/service-row.js')>();
  return { ...m, naturalAddresses: (...args: Parameters<typeof m.naturalAddresses>) => (counted.parts++, m.naturalAddresses(...args)) };
});

const ROW_KEYS = ['namespace', 'name', 'type', 'headless', 'clusterIPs', 'externalName', 'externalIPs', 'loadBalancerIPs', 'sessionAffinity',
  'sessionAffinityTimeoutSeconds', 'externalTrafficPolicy', 'internalTrafficPolicy', 'trafficDistribution', 'selector', 'ports', 'slices',
  'endpoints', 'selectedPods'] as const satisfies readonly (keyof ServiceRow)[];

/** Every field of every row as plain data (and the filter's addresses), rows read in `order`. */
function plain(view: ServiceView, order: 'forward' | 'reverse'): unknown[] {
  const idx = view.rows.map((_, i) => i);
  if (order === 'reverse') idx.reverse();
  const out: unknown[] = [];
  for (const i of idx) {
    const r = view.rows[i]!;
    out[i] = structuredClone({ ...Object.fromEntries(ROW_KEYS.map((k) => [k, r[k]])), addresses: endpointAddresses(r), service: r.service });
  }
  return out;
}

/** A generated capture (bench/gen) of `services` Services, iptables mode, as a replay builds it. */
function generatedSnapshot(services: number, endpoints: number): NodeSnapshot {
  const world = generateWorld({ services, endpoints, seed: 'services-first-frame', modes: ['iptables'], conntrack: 10 });
  const runs: ProbeRun[] = [...modeOutputs(world, 'iptables')].map(([id, stdout]) => {
    const argv = fillArgv(probe(id).argv, catalog().params, {});
    return { id, argv, status: 'ok', result: { argv, stdout, stderr: '', exitCode: 0, startedAt: '2026-02-02T11:00:00.000Z', durationMs: 1 } };
  });
  return buildSnapshot({ runs, apiText: world.apiText, source: { kind: 'replay', label: 'gen', live: false }, capturedAt: '2026-02-02T11:00:00.000Z' });
}

/** Pods with labels a selector matches, an orphan slice, a slice without its label. */
function handMade(): ApiObjects {
  return objectsOf(
    makeService({ name: 'web' }),
    makeEndpointSlice({ name: 'web-b', service: 'web', endpoints: [{ address: '10.0.0.9', pod: 'web-b', nodeName: 'node-a' }, { address: '10.0.0.10', pod: 'web-a', nodeName: 'node-b' }] }),
    makeEndpointSlice({ name: 'web-a', service: 'web', endpoints: [{ address: '10.0.0.2', pod: 'web-a', nodeName: 'node-b', ready: false }] }),
    makePod({ name: 'web-b', nodeName: 'node-a', containerPorts: [{ name: 'http', containerPort: 8080 }] }),
    makePod({ name: 'web-a', nodeName: 'node-b' }),
    makeService({ name: 'api', namespace: 'prod' }),
    makeEndpointSlice({ name: 'gone-1', service: 'gone', endpoints: [{ address: '10.9.0.1' }] }),
    makeEndpointSlice({ name: 'nolabel', service: null, endpoints: [{ address: '10.9.0.2' }] }),
    makeNode({ name: 'node-a', internalIP: '192.168.0.11' }),
  );
}

describe('the Services view made on first read equals the view built whole', () => {
  const cases: [string, () => Promise<{ objects: ApiObjects; node: string | undefined }>][] = [
    ...(['lab-iptables', 'lab-nftables', 'lab-cilium'] as const).map((f): [string, () => Promise<{ objects: ApiObjects; node: string | undefined }>] => [f, async () => {
      const s = await snapshotOf(f);
      return { objects: s.api!.value!, node: s.meta.node };
    }]),
    ['generated 300 Services', async () => {
      const s = generatedSnapshot(300, 4);
      return { objects: s.api!.value!, node: s.meta.node };
    }],
    ['hand-made: Pods, selectors, orphans', async () => ({ objects: handMade(), node: 'node-a' })],
  ];
  for (const [name, load] of cases) {
    it(`${name}: rows (read in either order), orphan slices, sorts`, async () => {
      const { objects, node } = await load();
      const whole = computeServiceViewWhole(objects, { nodeName: node });
      expect(whole.rows.length).toBeGreaterThan(0);
      const want = plain(whole, 'forward');
      // Two fresh lazy views (a copy of the objects: the view is cached per object set).
      expect(plain(buildServiceView({ ...objects }, { nodeName: node }), 'reverse')).toEqual(want);
      const lazy = buildServiceView({ ...objects }, { nodeName: node });
      expect(lazy.orphanSlices).toEqual(whole.orphanSlices);
      expect([lazy.podsKnown, lazy.nodeName]).toEqual([whole.podsKnown, whole.nodeName]);
      for (const col of serviceSortColumns('en')) {
        for (const descending of [false, true]) {
          const key = (rows: readonly ServiceRow[]) => sortRows(rows, serviceSortColumns('en'), { column: col.key, descending }).map((r) => `${r.namespace}/${r.name}`);
          expect(key(lazy.rows), `${col.key} ${descending}`).toEqual(key(whole.rows));
        }
      }
      expect(plain(lazy, 'forward')).toEqual(want);
    });
  }

  it('the hand-made objects exercise Pods, selected Pods and orphans', () => {
    const whole = computeServiceViewWhole(handMade(), { nodeName: 'node-a' });
    expect(whole.orphanSlices.map((s) => s.name)).toEqual(['gone-1', 'nolabel']);
    expect(whole.rows.map((r) => r.name)).toEqual(['web', 'api']);
    expect(whole.rows[0]!.selectedPods?.map((p) => p.name)).toEqual(['web-a', 'web-b']);
    expect(whole.rows[0]!.endpoints.map((e) => `${e.address} ${e.pod?.name} ${e.onNode}`)).toEqual(['10.0.0.2 web-a false', '10.0.0.9 web-b true', '10.0.0.10 web-a false']);
  });
});

describe('the first frame of a big generated capture', () => {
  const snapshot = generatedSnapshot(2000, 3);

  it('makes the parts of the rows it draws only, and draws what the whole view draws', async () => {
    expect(snapshot.api?.value?.services.length).toBeGreaterThanOrEqual(2000);
    counted.parts = 0;
    const r = await renderApp(<App session={staticSession(snapshot)} lang="en" now={() => 0} width={120} height={30} />, 120, 30);
    const frame = r.frame();
    const made = counted.parts;
    r.unmount();
    expect(frame).toContain('default');
    // 30 lines: fewer than 30 Service rows are drawn, each made once (the cursor row is one of them).
    expect(made).toBeGreaterThan(0);
    expect(made).toBeLessThan(30);
  });

  it('pane frames (80/120 columns, en/ja, cursor moved), filter results and row counts equal the whole view\'s', () => {
    const whole = computeServiceViewWhole(snapshot.api!.value!, { nodeName: snapshot.meta.node }).rows;
    const lazy = servicesView(snapshot, '').rows!;
    expect(lazy.length).toBe(whole.length);
    const frame = (rows: readonly ServiceRow[], width: number, lang: Lang, cursor: number) =>
      renderAt(<ServicesPane rows={rows} diagnostics={[]} cursor={cursor} width={width} height={28} focused lang={lang} />, width).frame();
    for (const width of FRAME_WIDTHS) {
      for (const lang of ['en', 'ja'] as const) {
        for (const cursor of [0, 57, whole.length - 1]) expect(frame(lazy, width, lang, cursor), `${width} ${lang} ${cursor}`).toBe(frame(whole, width, lang, cursor));
      }
    }
    for (const q of ['svc-1', 'svc-19', '10.', 'clusterip', '!svc-1', 'nothing-matches']) {
      const want = whole.filter((r) => {
        const text = `${r.namespace}/${r.name} ${r.type} ${r.clusterIPs.join(' ')} ${r.endpoints.map((e) => e.address).join(' ')}`.toLowerCase();
        return q.startsWith('!') ? !text.includes(q.slice(1)) : text.includes(q);
      }).map((r) => `${r.namespace}/${r.name}`);
      expect(servicesView(snapshot, q).rows!.map((r) => `${r.namespace}/${r.name}`), q).toEqual(want);
    }
  });
});
