import { describe, expect, it } from 'vitest';
import { collectGarbage, collectGarbageIfGrown, heapHasGrown, MIN_GROWTH_BYTES } from '../../src/collect/memory.js';

/** Unreachable arrays in V8's large-object space: only a full GC frees them. */
function garbage(mb: number): void {
  const keep: number[][] = [];
  for (let i = 0; i < mb / 8; i++) keep.push(new Array<number>(1_000_000).fill(i + 0.5));
  expect(keep).toHaveLength(mb / 8);
}

describe('collectGarbage', () => {
  it('frees unreachable memory when the heap is over the threshold', () => {
    collectGarbage(0);
    const base = process.memoryUsage().heapUsed;
    garbage(64);
    expect(process.memoryUsage().heapUsed - base).toBeGreaterThan(48 * 1024 * 1024);
    collectGarbage(0);
    expect(process.memoryUsage().heapUsed - base).toBeLessThan(16 * 1024 * 1024);
  });

  it('leaves a heap under the threshold alone', () => {
    collectGarbage(0);
    const base = process.memoryUsage().heapUsed;
    garbage(64);
    collectGarbage(Number.MAX_SAFE_INTEGER);
    expect(process.memoryUsage().heapUsed - base).toBeGreaterThan(48 * 1024 * 1024);
  });
});

describe('collectGarbageIfGrown', () => {
  const MB = 1024 * 1024;
  it('collects once the heap grew by a quarter of the live size, and by at least the floor', () => {
    expect(heapHasGrown(1000 * MB, 600 * MB)).toBe(true); // +400 > max(128, 150)
    expect(heapHasGrown(740 * MB, 600 * MB)).toBe(false); // +140 < 150
    expect(heapHasGrown(200 * MB, 100 * MB)).toBe(false); // +100 < the 128 MiB floor
    expect(heapHasGrown(100 * MB + MIN_GROWTH_BYTES + 1, 100 * MB)).toBe(true);
  });

  it('frees the garbage of a grown heap, and leaves a heap that has not grown alone', () => {
    collectGarbage(0);
    const base = process.memoryUsage().heapUsed;
    garbage(64);
    collectGarbageIfGrown(); // +64 MB: under the floor
    expect(process.memoryUsage().heapUsed - base).toBeGreaterThan(48 * 1024 * 1024);
    garbage(MIN_GROWTH_BYTES / MB + 64);
    collectGarbageIfGrown();
    expect(process.memoryUsage().heapUsed - base).toBeLessThan(16 * 1024 * 1024);
  });
});
