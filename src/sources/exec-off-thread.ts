/**
 * Running a child whose stdout is large while the main thread is busy (a parse beside the
 * dumps, src/collect/beside-dumps.ts): a pipe holds 64 KiB, and a child that fills it waits
 * until the reader's event loop turns — so the child is spawned and its pipes drained by a
 * worker thread (exec-worker.ts, one for the process, started on first use, unref'd while
 * idle) with the same {@link runProcessRaw}; its stdout bytes come back transferred and are
 * decoded here as {@link runProcess} decodes them. Nothing is written to disk. When no worker
 * can start (no script beside the build, `Worker` refused) the child runs on this thread as
 * before; a worker that dies before a child was spawned hands its requests back to this thread.
 */
import { existsSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { killGroup, runProcess, type RawExecResult } from './child-process.js';
import { childCpuCountedElsewhere } from './child-cpu.js';
import type { ExecResult } from './transport.js';

/** A message to the exec worker: run an argv (`aborted`: its signal already fired), or abort one running. */
export type ExecRequest = { readonly type: 'run'; readonly id: number; readonly argv: readonly string[]; readonly timeoutMs: number; readonly aborted: boolean } | { readonly type: 'abort'; readonly id: number };

/** A message from the exec worker: a child spawned, a run's result with its stdout bytes (transferred), or a throw. */
export type ExecReply =
  | { readonly type: 'spawned'; readonly id: number }
  | { readonly type: 'done'; readonly id: number; readonly result: Omit<RawExecResult, 'stdoutBytes'>; readonly stdout: ArrayBuffer }
  | { readonly type: 'failed'; readonly id: number; readonly error: string };

interface Pending {
  spawned: boolean;
  readonly reply: (reply: ExecReply) => void;
  /** The worker died: run on this thread if the child was never spawned, else report the failure. */
  readonly lost: (error: string) => void;
}

interface ExecWorker {
  readonly worker: Worker;
  readonly pending: Map<number, Pending>;
  /** Pids of the worker's children while they run (0: a free slot), written by the worker. */
  readonly slots: Int32Array;
}

/** Slots for the worker's children's pids: more than the heavy probes ever in flight (one at a time). */
const SLOTS = 64;
let current: ExecWorker | null | undefined;
let nextId = 0;
/** How many runs went through the worker and how many ran on this thread instead (tests read it). */
export const offThreadCounts = { worker: 0, inThread: 0 };

/** Where the worker's script is (tsc's dist/src/sources/, the bundle's dist/bin/, or tsc's output under tests); undefined when none. */
export function execWorkerUrl(): URL | undefined {
  const candidates = ['./exec-worker.js', '../exec-worker.js', '../../dist/src/sources/exec-worker.js'].map((p) => new URL(p, import.meta.url));
  return candidates.find((u) => existsSync(u));
}

/** The process's exec worker, started on first call; null when it cannot start (then never retried). */
function execWorker(script: URL | undefined = execWorkerUrl()): ExecWorker | null {
  if (current !== undefined) return current;
  if (!script) return (current = null);
  const slots = new Int32Array(new SharedArrayBuffer(SLOTS * 4));
  let worker: Worker;
  try {
    worker = new Worker(script, { workerData: { slots: slots.buffer } });
  } catch {
    return (current = null);
  }
  const state: ExecWorker = { worker, pending: new Map(), slots };
  worker.unref();
  worker.on('message', (reply: ExecReply) => state.pending.get(reply.id)?.reply(reply));
  const die = (why: string) => {
    if (current === state) current = null;
    const lost = [...state.pending.values()];
    state.pending.clear();
    for (const p of lost) p.lost(why);
  };
  worker.on('error', (e) => die(e.message));
  worker.on('exit', (code) => die(`exited with code ${code}`));
  // The worker's children when this process exits (its own exit hook may not run then).
  process.on('exit', () => {
    for (let i = 0; i < slots.length; i++) {
      const pid = Atomics.load(slots, i);
      if (pid !== 0) killGroup(pid, 'SIGKILL');
    }
  });
  return (current = state);
}

/**
 * Starts the exec worker now, unless it was started or cannot start (then the runs go on this
 * thread as {@link runProcessOffThread} says): a live load calls it as its light probes begin, so
 * the worker's start overlaps them instead of delaying the first heavy dump. The idle worker is
 * unref'd: it keeps no process alive. Never throws.
 */
export function startExecWorker(): void {
  execWorker();
}

/** Whether the exec worker was started (and has not died): tests read it. */
export function execWorkerStarted(): boolean {
  return current !== undefined && current !== null;
}

/** How many of the worker's children are running now (0 when there is no worker): read without the event loop. */
export function offThreadChildren(): number {
  if (!current) return 0;
  let n = 0;
  for (let i = 0; i < current.slots.length; i++) if (Atomics.load(current.slots, i) !== 0) n++;
  return n;
}

/**
 * {@link runProcess} with the child spawned and read on the exec worker: the same
 * {@link ExecResult} (stdout, stderr, exit code, `missing`, `timedOut`, `cpuMs` — the child's,
 * measured on the worker), `startedAt` and `durationMs` by `now` on this thread. `signal`
 * aborts as runProcess's does. Never throws. `script`: the worker's script (tests).
 */
export function runProcessOffThread(argv: readonly string[], timeoutMs: number, now: () => number = Date.now, signal?: AbortSignal, script?: URL): Promise<ExecResult> {
  const state = execWorker(script);
  if (!state) {
    offThreadCounts.inThread++;
    return runProcess(argv, timeoutMs, now, signal);
  }
  const started = now();
  const id = ++nextId;
  return new Promise((resolve) => {
    const onAbort = () => state.worker.postMessage({ type: 'abort', id } satisfies ExecRequest);
    const settle = (r: ExecResult | Promise<ExecResult>) => {
      signal?.removeEventListener('abort', onAbort);
      state.pending.delete(id);
      if (state.pending.size === 0) state.worker.unref();
      resolve(r);
    };
    const pending: Pending = {
      spawned: false,
      reply: (reply) => {
        if (reply.type === 'spawned') pending.spawned = true;
        else if (reply.type === 'failed') settle(failed(argv, started, now, reply.error));
        else {
          // The child's CPU time was counted on the worker: not again on this thread's next reap.
          if (reply.result.cpuMs !== undefined) childCpuCountedElsewhere(reply.result.cpuMs);
          offThreadCounts.worker++;
          settle({ ...reply.result, argv: [...argv], stdout: Buffer.from(reply.stdout).toString('utf8'), startedAt: new Date(started).toISOString(), durationMs: now() - started });
        }
      },
      lost: (error) => {
        offThreadCounts.inThread++;
        settle(pending.spawned ? failed(argv, started, now, error) : runProcess(argv, timeoutMs, now, signal));
      },
    };
    state.pending.set(id, pending);
    state.worker.ref();
    signal?.addEventListener('abort', onAbort, { once: true });
    state.worker.postMessage({ type: 'run', id, argv: [...argv], timeoutMs, aborted: signal?.aborted === true } satisfies ExecRequest);
  });
}

/** The result of a run whose worker failed after the child was spawned: no output, the failure in stderr. */
function failed(argv: readonly string[], started: number, now: () => number, error: string): ExecResult {
  return { argv: [...argv], stdout: '', stderr: `the exec worker failed: ${error}\n`, exitCode: null, startedAt: new Date(started).toISOString(), durationMs: now() - started };
}
