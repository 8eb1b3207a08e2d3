/**
 * A full garbage collection between the staged load's parts, so one part's parse garbage
 * is gone before the next part allocates, and within a long chunked parse when the heap
 * has grown by a quarter (V8 otherwise lets the heap grow to about twice what is live before a
 * full GC, and RSS follows the heap's high-water mark).
 */
import { appendFileSync } from 'node:fs';
import v8 from 'node:v8';
import vm from 'node:vm';

let gc: (() => void) | null | undefined;
/** Heap in use right after the last full GC run here (bytes); 0 before the first. */
let liveAfterGc = 0;
/** `NODESCOPE_GC_LOG=FILE`: one line appended per forced full GC (a bench's count of them; `1`: stderr). */
const gcLog = process.env.NODESCOPE_GC_LOG;

function logForcedGc(at: number, beforeBytes: number): void {
  const line = `forced-gc at ${at.toFixed(0)} ms: ${(beforeBytes / 2 ** 20).toFixed(0)} -> ${(liveAfterGc / 2 ** 20).toFixed(0)} MB, ${(performance.now() - at).toFixed(0)} ms\n`;
  try {
    if (gcLog === '1') process.stderr.write(line);
    else if (gcLog) appendFileSync(gcLog, line);
  } catch {
    // A log that cannot be written is no reason to fail the load.
  }
}

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
  const [at, before] = gcLog ? [performance.now(), process.memoryUsage().heapUsed] : [0, 0];
  gc?.();
  if (gc) liveAfterGc = process.memoryUsage().heapUsed;
  if (gcLog && gc) logForcedGc(at, before);
}

/** The least growth (bytes) that {@link collectGarbageIfGrown} collects for: 128 MiB. */
export const MIN_GROWTH_BYTES = 128 * 1024 * 1024;

/**
 * The heap in use (bytes) below which {@link collectGarbageIfGrown} never collects: 512 MiB.
 * A huge replay's model alone is about that at the end of its load, so its peak comes in
 * the last stages; a forced GC while the heap is smaller lowers no peak, and each costs a
 * full mark of everything kept so far (a huge nftables load ran eleven, half of them here).
 */
export const HEAP_FLOOR_BYTES = 512 * 1024 * 1024;

/**
 * True when a heap of `usedBytes` is over `floorBytes` and has grown past what was live
 * after the last full GC (`liveBytes`) by a quarter of that, and by at least
 * `minGrowthBytes` (V8, left alone, lets the heap reach about twice the live size before
 * it collects). A full GC of a 600 MB heap takes a few hundred ms of CPU.
 */
export function heapHasGrown(usedBytes: number, liveBytes: number, minGrowthBytes = MIN_GROWTH_BYTES, floorBytes = HEAP_FLOOR_BYTES): boolean {
  return usedBytes > floorBytes && usedBytes - liveBytes > Math.max(minGrowthBytes, liveBytes / 4);
}

/**
 * A full GC when the heap is big and has grown (see {@link heapHasGrown}) since the last one: called
 * between the pieces of a long parse (a 229 MB nft -j output read item by item leaves
 * promoted garbage that V8 would let reach ~2× the live heap, and RSS with it; huge
 * nftables replay peak 1.21 → 1.01 GB); `floorBytes`: see {@link HEAP_FLOOR_BYTES}. Never throws.
 */
export function collectGarbageIfGrown(floorBytes = HEAP_FLOOR_BYTES): void {
  if (heapHasGrown(v8.getHeapStatistics().used_heap_size, liveAfterGc, MIN_GROWTH_BYTES, floorBytes)) collectGarbage(0);
}

/** The heap in use (bytes) below which {@link collectGarbageBetweenParts} never collects: 256 MiB (below it a full GC costs more than it saves). */
export const PART_HEAP_FLOOR_BYTES = 256 * 1024 * 1024;

/**
 * The full GC between the staged load's parts (src/collect/session.ts: just before a big part is
 * parsed on the main thread, `completeSnapshot`'s `beforeBigPart`): when the heap is over {@link PART_HEAP_FLOOR_BYTES}
 * and has grown since the last forced full GC (see {@link heapHasGrown}). A part that added
 * little (the maps, a small table) leaves nothing worth a full mark of the kept model: a huge
 * nftables load ran two such GCs that freed under 1 MB each. Never throws.
 */
export function collectGarbageBetweenParts(): void {
  collectGarbageIfGrown(PART_HEAP_FLOOR_BYTES);
}
