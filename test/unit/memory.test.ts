import { describe, expect, it } from 'vitest';
import { collectGarbage, collectGarbageBetweenParts, collectGarbageIfGrown, HEAP_FLOOR_BYTES, heapHasGrown, MIN_GROWTH_BYTES, PART_HEAP_FLOOR_BYTES } from '../../src/collect/memory.js';

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
    expect(heapHasGrown(700 * MB, 600 * MB)).toBe(false); // +100 < the 128 MiB floor
    expect(heapHasGrown(600 * MB + MIN_GROWTH_BYTES + 1, 600 * MB)).toBe(false); // +128 < 150
    expect(heapHasGrown(500 * MB + MIN_GROWTH_BYTES + 1, 500 * MB)).toBe(true);
  });

  it('never collects while the heap in use is under the 512 MiB floor (the peak comes later)', () => {
    expect(heapHasGrown(HEAP_FLOOR_BYTES, 100 * MB)).toBe(false); // +412 MB, but not over the floor
    expect(heapHasGrown(HEAP_FLOOR_BYTES + 1, 100 * MB)).toBe(true);
    expect(heapHasGrown(400 * MB, 100 * MB, MIN_GROWTH_BYTES, 0)).toBe(true); // no floor: +300 > 128
  });

  it('frees the garbage of a heap grown over the floor, and leaves a smaller heap alone', () => {
    collectGarbage(0);
    const base = process.memoryUsage().heapUsed;
    const floor = base + MIN_GROWTH_BYTES + 128 * MB;
    garbage(MIN_GROWTH_BYTES / MB + 64);
    collectGarbageIfGrown(floor); // grown by more than the least growth, but under the heap floor
    expect(process.memoryUsage().heapUsed - base).toBeGreaterThan(MIN_GROWTH_BYTES);
    // Over the floor even when V8 collected the first garbage by itself meanwhile.
    garbage(MIN_GROWTH_BYTES / MB + 192);
    collectGarbageIfGrown(floor);
    expect(process.memoryUsage().heapUsed - base).toBeLessThan(16 * 1024 * 1024);
  });
});

describe('collectGarbageBetweenParts', () => {
  const MB = 1024 * 1024;
  it('collects a heap over 256 MiB that grew since the last forced GC, and not one that did not', () => {
    expect(PART_HEAP_FLOOR_BYTES).toBe(256 * MB);
    expect(heapHasGrown(336 * MB, 0, MIN_GROWTH_BYTES, PART_HEAP_FLOOR_BYTES)).toBe(true); // first part: nothing forced yet
    expect(heapHasGrown(276 * MB, 264 * MB, MIN_GROWTH_BYTES, PART_HEAP_FLOOR_BYTES)).toBe(false); // +12 MB since the last
    expect(heapHasGrown(250 * MB, 0, MIN_GROWTH_BYTES, PART_HEAP_FLOOR_BYTES)).toBe(false); // under the floor
  });

  it('runs no second full GC when the heap has not grown since the first', () => {
    collectGarbage(0);
    const base = process.memoryUsage().heapUsed;
    const keep: number[][] = [];
    // Kept (not garbage): over the 256 MiB floor only when the test heap is small; then grown.
    for (let i = 0; i < (PART_HEAP_FLOOR_BYTES + 64 * MB - base) / (8 * MB); i++) keep.push(new Array<number>(1_000_000).fill(i + 0.5));
    collectGarbageBetweenParts(); // grown from the last forced GC's live size by more than 128 MiB: collects
    const live = process.memoryUsage().heapUsed;
    garbage(32); // +32 MB of garbage: not worth a full mark of what is kept
    collectGarbageBetweenParts();
    expect(process.memoryUsage().heapUsed - live).toBeGreaterThan(24 * MB);
    expect(keep.length).toBeGreaterThan(0);
  });
});
