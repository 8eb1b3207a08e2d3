/**
 * The Conntrack pane's sort orders placed by counting (src/analysis/conntrack-sort.ts
 * `orderByCounting`) equal the reference, the native sort of `key × n + index`
 * (`orderBySort`): on made-up keys (ties, one value, none, both directions), and on every
 * column of the lab captures' and a generated capture's indexes, through `sortedOrder`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateWorld, writeModeBundle } from '../../bench/gen/capture.js';
import { conntrackView } from '../../src/analysis/conntrack-view.js';
import { CONNTRACK_SORT_COLUMNS, conntrackSortKeys, DEFAULT_CONNTRACK_SORT, orderByCounting, orderBySort, sortedOrder } from '../../src/analysis/conntrack-sort.js';
import type { NodeSnapshot } from '../../src/model/snapshot.js';
import { snapshotOf, snapshotOfDir } from '../helpers/fixtures.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** Pseudo-random whole numbers 0…max (a fixed sequence: the test sees the same keys each run). */
function keysOf(n: number, max: number, seed: number): Float64Array {
  const keys = new Float64Array(n);
  let x = seed;
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    keys[i] = x % (max + 1);
  }
  return keys;
}

describe('conntrack sort orders by counting', () => {
  it('equal the native sort of key × n + index on made-up keys, both directions', () => {
    const cases: [number, number][] = [[0, 0], [1, 0], [1, 5], [7, 0], [1000, 3], [1000, 999], [5000, 20_000], [20_000, 60]];
    for (const [n, max] of cases) {
      const keys = keysOf(n, max, n + max);
      const top = keys.reduce((a, b) => Math.max(a, b), 0);
      for (const descending of [false, true]) {
        const counted = orderByCounting(keys, top, descending);
        expect(counted, `${n} ${max} ${descending}`).toBeDefined();
        expect([...counted!], `${n} ${max} ${descending}`).toEqual([...orderBySort(keys, top, descending)]);
      }
    }
  });

  it('leaves keys it cannot count to the sort: fractions, negatives, past max, too many values', () => {
    expect(orderByCounting(Float64Array.of(1, 0.5, 2), 2, false)).toBeUndefined();
    expect(orderByCounting(Float64Array.of(1, -1, 2), 2, false)).toBeUndefined();
    expect(orderByCounting(Float64Array.of(1, 3, 2), 2, false)).toBeUndefined();
    expect(orderByCounting(Float64Array.of(1, 2 ** 40), 2 ** 40, false)).toBeUndefined();
    // The index's sort still gives them an order (the caller falls back).
    expect([...orderBySort(Float64Array.of(3, 2 ** 40, 3, 0), 2 ** 40, false)]).toEqual([3, 0, 2, 1]);
  });

  const expectEveryColumn = (label: string, snapshot: NodeSnapshot): number => {
    const view = conntrackView(snapshot, { sort: DEFAULT_CONNTRACK_SORT, filter: '', service: null });
    let counted = 0;
    for (const column of CONNTRACK_SORT_COLUMNS) {
      for (const descending of [false, true]) {
        const order = sortedOrder(view.index, { column, descending });
        const { keys, max } = conntrackSortKeys(view.index, column);
        expect(keys.length, label).toBe(view.index.rows.length);
        expect([...order], `${label} ${column} ${descending}`).toEqual([...orderBySort(keys, max, descending)]);
        if (orderByCounting(keys, max, descending) !== undefined) counted++;
      }
    }
    return counted;
  };

  it.each(['lab-iptables', 'lab-nftables', 'lab-cilium'])('%s: every column in both directions equals the sort', async (lab) => {
    const snapshot = await snapshotOf(lab);
    expect(snapshot.conntrack?.value?.entries.length ?? 0).toBeGreaterThan(0);
    expect(expectEveryColumn(lab, snapshot)).toBeGreaterThan(0);
  });

  it('a generated capture (300 Services × 3, 8,000 flows): every column, Services and states counted', { timeout: 120_000 }, async () => {
    const world = generateWorld({ services: 300, endpoints: 3, seed: 'sort-1', modes: ['iptables'], conntrack: 8000 });
    const dir = mkdtempSync(path.join(tmpdir(), 'ct-sort-'));
    dirs.push(dir);
    writeModeBundle(world, 'iptables', dir);
    const snapshot = await snapshotOfDir(dir);
    expect(expectEveryColumn('generated', snapshot)).toBeGreaterThanOrEqual(4);
    const view = conntrackView(snapshot, { sort: DEFAULT_CONNTRACK_SORT, filter: '', service: null });
    for (const column of ['service', 'state'] as const) {
      const { keys, max } = conntrackSortKeys(view.index, column);
      expect(orderByCounting(keys, max, false), column).toBeDefined();
    }
  });
});
