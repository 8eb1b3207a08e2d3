/**
 * A full garbage collection between the staged load's parts, so one part's parse garbage
 * is gone before the next part allocates (V8 otherwise lets the heap grow to about twice
 * what is live before a full GC, and RSS follows the heap's high-water mark).
 */
import v8 from 'node:v8';
import vm from 'node:vm';

let gc: (() => void) | null | undefined;

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
}
