/**
 * `endpointOrder` (dotted quads ordered by their numbers) gives exactly the order of
 * `endpointOrderByKeys` (every address's `addressSortKey` text, the way before): on the
 * endpoints of the lab captures and of generated captures of every mode, and on made-up lists
 * of odd dotted quads (leading zeros, parts past 255, four digits, three parts), IPv6, FQDNs,
 * duplicates and mixes of them, and a list past 65,535 addresses (the order as numbers).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeGeneratedBundles } from '../../bench/gen/capture.js';
import { loadSnapshot } from '../../src/collect/session.js';
import { endpointOrder, endpointOrderByKeys, naturalAddresses, slicesByService } from '../../src/analysis/service-row.js';
import type { EndpointSlice } from '../../src/model/k8s.js';
import { ReplayTransport } from '../../src/sources/replay.js';
import { fixtureDir } from '../helpers/fixtures.js';

const tmp: string[] = [];
afterAll(() => {
  for (const d of tmp) rmSync(d, { recursive: true, force: true });
});

async function slicesOf(dir: string): Promise<readonly EndpointSlice[]> {
  const transport = new ReplayTransport(dir);
  const apiText = transport.apiText();
  const { snapshot } = await loadSnapshot({ transport, live: false, parts: [], ...(apiText !== undefined ? { apiText } : {}) });
  return snapshot.api?.value?.endpointSlices ?? [];
}

/** Every Service's natural address list (slices by name) orders alike both ways; returns how many lists were not sorted already. */
function expectSameOrders(slices: readonly EndpointSlice[]): number {
  let reordered = 0;
  for (const [key, list] of slicesByService(slices)) {
    const natural = naturalAddresses([...list].sort((a, b) => (a.meta.name < b.meta.name ? -1 : a.meta.name > b.meta.name ? 1 : 0)));
    const order = endpointOrder(natural);
    expect(order, key).toEqual(endpointOrderByKeys(natural));
    if (order !== undefined) reordered++;
  }
  return reordered;
}

/** A small deterministic generator (the lists must be the same on every run). */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 0x100000000;
  };
}

describe('endpointOrder = endpointOrderByKeys', () => {
  it.each(['lab-iptables', 'lab-nftables', 'lab-cilium'])('the endpoints of %s', async (name) => {
    expectSameOrders(await slicesOf(fixtureDir(name)));
  });

  it('generated captures of every mode (most lists out of order)', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'nodescope-endpoint-order-'));
    tmp.push(dir);
    writeGeneratedBundles(dir, { services: 80, endpoints: 6, seed: 'endpoint-order', modes: ['iptables', 'nftables', 'cilium'], conntrack: 5 });
    for (const mode of ['iptables', 'nftables', 'cilium']) {
      const reordered = expectSameOrders(await slicesOf(path.join(dir, mode)));
      expect(reordered, mode).toBeGreaterThan(20);
    }
  }, 120_000);

  it('made-up lists: odd dotted quads, IPv6, FQDNs, duplicates and mixes', () => {
    const random = rng(23);
    const part = () => {
      const r = random();
      // Mostly 0–255; some past 255, some with a leading zero, a few of four digits.
      if (r < 0.7) return String(Math.floor(random() * 256));
      if (r < 0.8) return String(256 + Math.floor(random() * 744));
      if (r < 0.9) return `0${Math.floor(random() * 100)}`;
      if (r < 0.95) return String(1000 + Math.floor(random() * 9000));
      return '';
    };
    const quad = () => `${part()}.${part()}.${part()}.${part()}`;
    const other = () => ['fd00::1', 'fd00::a', '2001:db8::1', '::ffff:10.0.0.1', 'web-0.example', '10.0.0', '10.0.0.1.2', '', '1.2.3.4 ', ' 1.2.3.4', 'a.b.c.d'][Math.floor(random() * 11)]!;
    let numeric = 0;
    for (let n = 0; n < 3000; n++) {
      const size = 2 + Math.floor(random() * 12);
      const mixed = n % 3 === 0;
      const list: string[] = [];
      for (let i = 0; i < size; i++) list.push(mixed && random() < 0.3 ? other() : quad());
      // Some duplicates: equal keys keep their natural order.
      if (size > 3 && random() < 0.3) list[size - 1] = list[0]!;
      expect(endpointOrder(list), list.join(' ')).toEqual(endpointOrderByKeys(list));
      if (!mixed) numeric++;
    }
    expect(numeric).toBeGreaterThan(1000);
    // Orders that differ by the base of the numbers (a part of 999 beside the next part's 1).
    for (const list of [['1.2.3.999', '1.2.4.0'], ['1.2.4.0', '1.2.3.999'], ['1.999.0.0', '2.0.0.0', '1.1000.0.0'], ['010.0.0.1', '10.0.0.1', '9.0.0.1'], ['255.255.255.255', '0.0.0.0', '0.0.0.0']]) {
      expect(endpointOrder(list), list.join(' ')).toEqual(endpointOrderByKeys(list));
    }
    expect(endpointOrder(['10.0.0.2', '10.0.0.1'])).toBe('\u0001\u0000');
    expect(endpointOrder(['10.0.0.1', '10.0.0.2'])).toBeUndefined();
  });

  it('a list past 65,535 addresses (the order as numbers)', () => {
    const list = Array.from({ length: 70_000 }, (_, i) => `10.${(69_999 - i) >> 16}.${((69_999 - i) >> 8) & 255}.${(69_999 - i) & 255}`);
    const order = endpointOrder(list);
    expect(Array.isArray(order)).toBe(true);
    expect(order).toEqual(endpointOrderByKeys(list));
  });
});
