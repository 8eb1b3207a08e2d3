/**
 * The `--api-file` check (`checkApiFileText`, a scan of the whole text: tenths of a second on
 * a 10,000-Service List) on a worker thread (src/sources/api-check-worker.ts), so a live load
 * starts its probes while it runs (src/sources/open.ts `OpenHooks.apiCheckLater`). The caller
 * takes the verdict with {@link ApiCheck.verdict} before it uses the objects: it waits for the
 * worker without the event loop (`Atomics.wait` on a shared word) and, unless the worker
 * accepted the text, runs the check on this thread — which throws the very `UserError` the
 * check at open threw, or accepts when the worker failed for another reason. Whatever goes
 * wrong with the worker (no script, it does not start, it fails) the verdict is this
 * thread's: the same answer, later.
 */
import { existsSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { checkApiFileText } from './api-file-check.js';
import { CHECK_STATE, type ApiCheckJob } from './api-check-protocol.js';

/** How long {@link ApiCheck.verdict} waits for the worker to start before it checks itself (ms). */
const START_WAIT_MS = 10_000;
/** How long {@link ApiCheck.verdict} waits for a started worker's verdict before it checks itself (ms). */
const ANSWER_WAIT_MS = 120_000;

/** Whether the check runs on a worker: yes unless the environment says `NODESCOPE_API_CHECK_WORKER=0`. */
export function apiCheckWorkerWanted(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.NODESCOPE_API_CHECK_WORKER !== '0';
}

/**
 * Where the worker's script is: beside this module (tsc's dist/src/sources/), one level up
 * from the bundle's chunks (dist/bin/api-check-worker.js), or tsc's output when this module
 * runs from its TypeScript source (tests). Undefined when none exists.
 */
export function apiCheckWorkerUrl(): URL | undefined {
  const candidates = ['./api-check-worker.js', '../api-check-worker.js', '../../dist/src/sources/api-check-worker.js'].map((p) => new URL(p, import.meta.url));
  return candidates.find((u) => existsSync(u));
}

/**
 * Options of {@link startApiCheck}: `worker` false: on this thread only (the reference);
 * `script`: another worker script, `startWaitMs`: another start wait (tests).
 */
export interface ApiCheckOptions {
  readonly worker?: boolean;
  readonly script?: URL;
  readonly startWaitMs?: number;
}

/** A check under way; `how()` says who decided (`pending` before {@link verdict}). */
export interface ApiCheck {
  /** Returns when the text holds API objects; throws what `checkApiFileText(text, file)` throws. Once decided, the same each call. */
  verdict(): void;
  how(): 'pending' | 'worker' | 'thread';
}

/**
 * Starts checking `text`, the decoding of `bytes` (src/sources/read-text.ts `textOfBytes`),
 * from `file`, on a worker when one starts. `bytes` is handed to the worker (its memory
 * transferred when the Buffer owns it whole, else copied): do not use it afterwards.
 */
export function startApiCheck(bytes: Buffer, text: string, file: string, options: ApiCheckOptions = {}): ApiCheck {
  const job = (options.worker ?? apiCheckWorkerWanted()) ? startWorker(bytes, file, options.script ?? apiCheckWorkerUrl(), options.startWaitMs ?? START_WAIT_MS) : undefined;
  let how: 'pending' | 'worker' | 'thread' = 'pending';
  let refused: unknown;
  return {
    verdict() {
      if (how === 'pending') {
        const accepted = job ? acceptedBy(job) : false;
        how = accepted ? 'worker' : 'thread';
        if (!accepted) {
          try {
            checkApiFileText(text, file);
          } catch (e) {
            refused = e;
          }
        }
      }
      if (refused !== undefined) throw refused;
    },
    how: () => how,
  };
}

interface Job {
  readonly startWaitMs: number;
  readonly worker: Worker;
  readonly state: Int32Array;
}

function startWorker(bytes: Buffer, file: string, script: URL | undefined, startWaitMs: number): Job | undefined {
  if (!script || !existsSync(script)) return undefined;
  const shared = new SharedArrayBuffer(4);
  // A Buffer from readFileSync of a large file owns its ArrayBuffer: handed over without a copy.
  const whole = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer;
  const buffer = whole ? (bytes.buffer as ArrayBuffer) : new Uint8Array(bytes).buffer;
  const data: ApiCheckJob = { bytes: buffer, file, state: shared };
  try {
    const worker = new Worker(script, { workerData: data, transferList: [buffer] });
    // Never keeps the process alive, and an error is read from the state word, not thrown.
    worker.unref();
    worker.on('error', () => {});
    return { worker, state: new Int32Array(shared), startWaitMs };
  } catch {
    return undefined;
  }
}

/** True when the worker accepted the text; false when it refused, failed, or did not answer in time. */
function acceptedBy(job: Job): boolean {
  const { state, worker } = job;
  try {
    Atomics.wait(state, 0, CHECK_STATE.pending, job.startWaitMs);
    if (Atomics.load(state, 0) === CHECK_STATE.started) Atomics.wait(state, 0, CHECK_STATE.started, ANSWER_WAIT_MS);
    return Atomics.load(state, 0) === CHECK_STATE.accepted;
  } finally {
    void worker.terminate();
  }
}
