import { describe, expect, it } from 'vitest';
import { collectGarbage } from '../../src/memory.js';

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
