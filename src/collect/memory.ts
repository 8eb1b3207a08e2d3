/**
 * A full garbage collection between the staged load's parts, so one part's parse garbage
 * is gone before the next part allocates, and within a long chunked parse when the heap
 * has grown by a quarter (V8 otherwise lets the heap grow to about twice what is live before a
 * full GC, and RSS follows the heap's high-water mark).
 */
import v8 from 'node:v8';
import vm from 'node:vm';

let gc: (() => void) | null | undefined;
/** Heap in use right after the last full GC run here (bytes); 0 before the first. */
let liveAfterGc = 0;

/**
 * Runs a full GC when the heap holds more than `minHeapBytes` (bytes; default 256 MiB:
 * below that a GC costs more than it saves). No-op where V8 will not expose `gc`. Never throws.
 */
export function collectGarbage(minHeapBytes = 256 * 1024 * 1024): void {
  if (process.memoryUsage().heapUsed < minHeapBytes) return;
  if (gc === undefined) {
    try {
      v8.setFlagsFromString('--expose-gc');
      gc = vm.runInNewContext('gc') as () => void;
    } catch {
      gc = null;
    }
  }
  gc?.();
  if (gc) liveAfterGc = process.memoryUsage().heapUsed;
}

/** The least growth (bytes) that {@link collectGarbageIfGrown} collects for: 128 MiB. */
export const MIN_GROWTH_BYTES = 128 * 1024 * 1024;

/**
 * True when a heap of `usedBytes` has grown past what was live after the last full GC
 * (`liveBytes`) by a quarter of that, and by at least `minGrowthBytes` (V8, left alone,
 * lets the heap reach about twice the live size before it collects). A full GC of a
 * 600 MB heap takes a few hundred ms: a 229 MB nft -j parse runs a handful.
 */
export function heapHasGrown(usedBytes: number, liveBytes: number, minGrowthBytes = MIN_GROWTH_BYTES): boolean {
  return usedBytes - liveBytes > Math.max(minGrowthBytes, liveBytes / 4);
}

/**
 * A full GC when the heap has grown (see {@link heapHasGrown}) since the last one: called
 * between the pieces of a long parse (a 229 MB nft -j output read item by item leaves
 * promoted garbage that V8 would let reach ~2× the live heap, and RSS with it; huge
 * nftables replay peak 1.21 → 1.01 GB). Never throws.
 */
export function collectGarbageIfGrown(): void {
  if (heapHasGrown(v8.getHeapStatistics().used_heap_size, liveAfterGc)) collectGarbage(0);
}
