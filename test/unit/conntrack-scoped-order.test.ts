/**
 * The Conntrack pane scoped to one Service (src/analysis/conntrack-filter.ts `scopedOrder`)
 * gives the order the whole table's order kept to that Service gave (`scopedOrderViaWhole`,
 * the old path): for every Service of the lab captures and of generated captures (every
 * mode), a Service that is not there, every sort column in both directions, on a fresh index
 * (nothing memoised) and on one whose whole order was already made. The default sort (by
 * Service) orders no more than the Service's own entries: the whole table's order is made
 * only when the pane is unscoped.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateWorld, writeModeBundle } from '../../bench/gen/capture.js';
import { conntrackOrder, scopedOrder, scopedOrderViaWhole } from '../../src/analysis/conntrack-filter.js';
import { buildConntrackIndex, conntrackTargets, type ConntrackIndex } from '../../src/analysis/conntrack-index.js';
import { CONNTRACK_SORT_COLUMNS, DEFAULT_CONNTRACK_SORT, sortedOrder } from '../../src/analysis/conntrack-sort.js';
import type { NodeSnapshot } from '../../src/model/snapshot.js';
import { snapshotOf, snapshotOfDir } from '../helpers/fixtures.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** A fresh index of the snapshot's conntrack table (no order or key memoised yet). */
function freshIndex(snapshot: NodeSnapshot): ConntrackIndex {
  const targets = conntrackTargets(snapshot);
  return buildConntrackIndex(snapshot.conntrack?.value?.entries ?? [], targets.services, targets.nodeAddresses);
}

/** Checks every Service (and one absent: -1) × column × direction; returns how many scopes held entries. */
function expectEveryScope(label: string, snapshot: NodeSnapshot): number {
  let nonEmpty = 0;
  const probe = freshIndex(snapshot);
  const services = [-1, ...probe.services.map((_, s) => s)];
  for (const column of CONNTRACK_SORT_COLUMNS) {
    for (const descending of [false, true]) {
      const sort = { column, descending };
      const fast = freshIndex(snapshot);
      const reference = freshIndex(snapshot);
      for (const s of services) {
        const expected = [...scopedOrderViaWhole(reference, s, sort)];
        expect([...scopedOrder(fast, s, sort)], `${label} ${column} ${descending} service ${s}`).toEqual(expected);
        if (expected.length > 0 && column === 'service' && !descending) nonEmpty++;
      }
      // Once the whole order is made (the pane was unscoped), the scope is kept from it: the same again.
      sortedOrder(fast, sort);
      for (const s of services) expect([...scopedOrder(fast, s, sort)], `${label} ${column} ${descending} service ${s} (whole made)`).toEqual([...scopedOrderViaWhole(reference, s, sort)]);
    }
  }
  return nonEmpty;
}

/** The pane's scope through `conntrackOrder` (the memoised scope too) on a fresh index equals the old path's, with filters. */
function expectPaneOrders(label: string, snapshot: NodeSnapshot): void {
  const index = freshIndex(snapshot);
  const reference = freshIndex(snapshot);
  for (const [s, service] of index.services.entries()) {
    for (const filter of ['', 'tcp', '!udp']) {
      const query = { sort: DEFAULT_CONNTRACK_SORT, filter, service: service.label };
      const old = conntrackOrder(reference, { ...query, service: null }).filter((i) => reference.serviceOf[i] === reference.services.findIndex((x) => x.label === service.label));
      expect([...conntrackOrder(index, query)], `${label} ${s} '${filter}'`).toEqual([...old]);
    }
  }
}

describe('conntrack pane scoped to one Service', () => {
  it.each(['lab-iptables', 'lab-nftables', 'lab-cilium'])('%s: every Service, column and direction equals the whole order kept', async (lab) => {
    const snapshot = await snapshotOf(lab);
    expect(snapshot.conntrack?.value?.entries.length ?? 0).toBeGreaterThan(0);
    expect(expectEveryScope(lab, snapshot)).toBeGreaterThan(0);
    expectPaneOrders(lab, snapshot);
  });

  it.each(['iptables', 'nftables', 'cilium'] as const)('a generated %s capture (120 Services × 3, 6,000 flows): every scope equals the whole order kept', { timeout: 120_000 }, async (mode) => {
    const world = generateWorld({ services: 120, endpoints: 3, seed: `scope-${mode}`, modes: [mode], conntrack: 6000 });
    const dir = mkdtempSync(path.join(tmpdir(), 'ct-scope-'));
    dirs.push(dir);
    writeModeBundle(world, mode, dir);
    const snapshot = await snapshotOfDir(dir);
    expect(snapshot.conntrack?.value?.entries.length ?? 0).toBeGreaterThan(1000);
    expect(expectEveryScope(mode, snapshot)).toBeGreaterThan(50);
    expectPaneOrders(mode, snapshot);
  });

  it('the default sort orders only the Service’s own entries: no whole-table order or keys are made', async () => {
    const snapshot = await snapshotOf('lab-iptables');
    const index = freshIndex(snapshot);
    const s = index.services.findIndex((_, k) => index.serviceOf.includes(k));
    expect(s).toBeGreaterThanOrEqual(0);
    const order = conntrackOrder(index, { sort: DEFAULT_CONNTRACK_SORT, filter: '', service: index.services[s]!.label });
    expect(order.length).toBeGreaterThan(0);
    expect(index.sortCache.size).toBe(0);
    expect(index.keyCache.size).toBe(0);
    // Unscoped, the whole order is made then (the deferred work shows up when asked for).
    conntrackOrder(index, { sort: DEFAULT_CONNTRACK_SORT, filter: '', service: null });
    expect(index.sortCache.size).toBe(1);
  });
});
