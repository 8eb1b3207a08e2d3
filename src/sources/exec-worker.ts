/**
 * The exec worker (a `worker_threads` entry: dist/bin/exec-worker.js in the bundle, tsc's
 * dist/src/sources/exec-worker.js): runs the argvs the main thread sends it with the same
 * {@link runProcessRaw} as the main thread, on this thread's own event loop, so a child's
 * pipes are drained while the main thread is busy parsing. Replies with the result and the
 * stdout bytes' ArrayBuffer, transferred (no copy). Each child's pid is kept in the shared
 * slots while it runs (the main thread kills those groups when it exits). See exec-off-thread.ts.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { runProcessRaw } from './child-process.js';
import type { ExecRequest, ExecReply } from './exec-off-thread.js';

const port = parentPort;
const slots = new Int32Array((workerData as { slots: SharedArrayBuffer }).slots);
const aborts = new Map<number, AbortController>();

/** Puts `pid` in the first free slot (none free: not kept, the worker's own exit hook still kills it). */
function keep(pid: number): void {
  for (let i = 0; i < slots.length; i++) if (Atomics.compareExchange(slots, i, 0, pid) === 0) return;
}

function drop(pid: number): void {
  for (let i = 0; i < slots.length; i++) if (Atomics.compareExchange(slots, i, pid, 0) === pid) return;
}

/** The bytes' own ArrayBuffer when they fill it, else a copy that does (a small Buffer shares Node's pool). */
function ownBuffer(bytes: Buffer): ArrayBuffer {
  if (bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer) return bytes.buffer;
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  return copy.buffer;
}

async function run(request: Extract<ExecRequest, { type: 'run' }>): Promise<void> {
  const controller = new AbortController();
  aborts.set(request.id, controller);
  if (request.aborted) controller.abort();
  try {
    const { stdoutBytes, ...result } = await runProcessRaw(request.argv, request.timeoutMs, Date.now, controller.signal, {
      spawned: (pid) => {
        keep(pid);
        port?.postMessage({ type: 'spawned', id: request.id } satisfies ExecReply);
      },
      gone: drop,
    });
    const stdout = ownBuffer(stdoutBytes);
    port?.postMessage({ type: 'done', id: request.id, result, stdout } satisfies ExecReply, [stdout]);
  } catch (e) {
    port?.postMessage({ type: 'failed', id: request.id, error: (e as Error)?.message ?? String(e) } satisfies ExecReply);
  } finally {
    aborts.delete(request.id);
  }
}

port?.on('message', (request: ExecRequest) => {
  if (request.type === 'abort') aborts.get(request.id)?.abort();
  else void run(request);
});
