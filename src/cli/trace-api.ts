/**
 * `trace`'s API part beside the rules: a replay's api.json read and narrowed to what a walk
 * to the destination reads (src/sources/api-select.ts) on a worker thread
 * (src/cli/trace-api-worker.ts), while the main thread reads and parses the dumps. The
 * result is an {@link ApiFeed} whose `text()` is the narrowed List's text: it waits for the
 * worker without the event loop (`Atomics.wait` on a shared word, the message taken by
 * `receiveMessageOnPort`), because `loadSnapshot` reads it synchronously just before it
 * builds the snapshot. Whatever goes wrong with the worker (no script, it does not start,
 * it fails, it answers something else) the same text is made on the main thread, as the
 * in-thread path always made it (`readTextFile` then `apiTextFor`): the same answer, later.
 */
import { existsSync } from 'node:fs';
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';
import type { ApiFeed } from '../sources/cluster-api.js';
import { apiTextFor, type FrontendQuery } from '../sources/api-select.js';
import { readTextFile } from '../sources/read-text.js';
import { STATE, type TraceApiJob } from './trace-api-protocol.js';

/** How long `text()` waits for the worker to start before it does the work itself (ms). */
const START_WAIT_MS = 10_000;
/** How long `text()` waits for a started worker's answer before it does the work itself (ms). */
const ANSWER_WAIT_MS = 120_000;

/** Whether `trace` narrows the API objects on a worker: yes unless the environment says `NODESCOPE_TRACE_API_WORKER=0`. */
export function traceApiWorkerWanted(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.NODESCOPE_TRACE_API_WORKER !== '0';
}

/**
 * Where the worker's script is: beside this module (tsc's dist/src/cli/), one level up from
 * the bundle's chunks (dist/bin/trace-api-worker.js), or tsc's output when this module runs
 * from its TypeScript source (tests). Undefined when none exists.
 */
export function traceApiWorkerUrl(): URL | undefined {
  const candidates = ['./trace-api-worker.js', '../trace-api-worker.js', '../../dist/src/cli/trace-api-worker.js'].map((p) => new URL(p, import.meta.url));
  return candidates.find((u) => existsSync(u));
}

/**
 * Options of {@link startTraceApi}: `worker` false: in-thread only (the reference);
 * `script`: another worker script, `startWaitMs`: another start wait (tests).
 */
export interface TraceApiOptions {
  readonly worker?: boolean;
  readonly script?: URL;
  readonly startWaitMs?: number;
}

/**
 * An {@link ApiFeed} of one narrowed text; `how()` says who made it (`pending` before `text()`);
 * `early`: the worker is the one {@link startTraceApiEarly} started.
 */
export interface TraceApiFeed extends ApiFeed {
  how(): 'pending' | 'worker' | 'thread';
  readonly early: boolean;
}

/**
 * Starts narrowing the api.json at `file` (absolute; `origin` names it in diagnostics) for a
 * walk to `q`, on a worker when one starts (see the module comment). `text()` returns the
 * narrowed text and throws what `readTextFile` throws for an unreadable file.
 */
export function startTraceApi(file: string, origin: string, q: FrontendQuery, options: TraceApiOptions = {}): TraceApiFeed {
  const wanted = options.worker ?? traceApiWorkerWanted();
  const adopted = takeEarly(wanted && options.script === undefined && options.startWaitMs === undefined ? { file, q } : undefined);
  const job = wanted ? (adopted ?? startWorker(file, q, options.script ?? traceApiWorkerUrl(), options.startWaitMs ?? START_WAIT_MS)) : undefined;
  let text: string | undefined;
  let how: 'pending' | 'worker' | 'thread' = 'pending';
  return {
    origin,
    textWaits: true,
    text() {
      if (text === undefined) {
        const answered = job ? answerOf(job) : undefined;
        how = answered === undefined ? 'thread' : 'worker';
        text = answered ?? apiTextFor(readTextFile(file), q);
      }
      return text;
    },
    how: () => how,
    early: adopted !== undefined,
    subscribe: () => () => {},
    close: async () => {
      if (job) await job.worker.terminate();
    },
  };
}

/**
 * A worker started by {@link startTraceApiEarly} before the command's modules loaded, for
 * `file` and `q`: {@link startTraceApi} adopts it when asked for the same file and destination
 * (the same job, so the same answer) and ends it otherwise.
 */
let early: { readonly file: string; readonly q: FrontendQuery; readonly job: Job } | undefined;

/**
 * Starts the narrowing of `file` (absolute, as src/sources/bundle.ts `bundleFilePath` gives it)
 * for a walk to `q` on a worker now, for a later {@link startTraceApi} of the same file and
 * destination to adopt (the worker's read then overlaps the loading of the command's modules).
 * Does nothing when the environment does not want the worker; a worker nobody adopts never keeps
 * the process alive. Returns whether a worker started.
 */
export function startTraceApiEarly(file: string, q: FrontendQuery): boolean {
  takeEarly(undefined);
  if (!traceApiWorkerWanted()) return false;
  const job = startWorker(file, q, traceApiWorkerUrl(), START_WAIT_MS);
  if (job) early = { file, q, job };
  return job !== undefined;
}

/** The early job when it was started for `wanted`'s file and destination; any other early job is ended. */
function takeEarly(wanted: { readonly file: string; readonly q: FrontendQuery } | undefined): Job | undefined {
  const e = early;
  early = undefined;
  if (!e) return undefined;
  if (wanted && e.file === wanted.file && e.q.address === wanted.q.address && e.q.port === wanted.q.port) return e.job;
  e.job.port.close();
  void e.job.worker.terminate();
  return undefined;
}

interface Job {
  readonly startWaitMs: number;
  readonly worker: Worker;
  readonly state: Int32Array;
  readonly port: MessagePort;
}

function startWorker(file: string, q: FrontendQuery, script: URL | undefined, startWaitMs: number): Job | undefined {
  if (!script || !existsSync(script)) return undefined;
  const shared = new SharedArrayBuffer(4);
  const { port1, port2 } = new MessageChannel();
  const data: TraceApiJob = { file, address: q.address, port: q.port, state: shared, reply: port2 };
  try {
    const worker = new Worker(script, { workerData: data, transferList: [port2] });
    // Never keeps the process alive, and an error is read from the state word, not thrown.
    worker.unref();
    worker.on('error', () => {});
    return { startWaitMs, worker, state: new Int32Array(shared), port: port1 };
  } catch {
    port1.close();
    return undefined;
  }
}

/** The worker's narrowed text, waited for; undefined when it did not start, failed, or answered anything else. */
function answerOf(job: Job): string | undefined {
  const { state, port, worker } = job;
  try {
    Atomics.wait(state, 0, STATE.pending, job.startWaitMs);
    if (Atomics.load(state, 0) === STATE.started) Atomics.wait(state, 0, STATE.started, ANSWER_WAIT_MS);
    const message = Atomics.load(state, 0) === STATE.answered ? (receiveMessageOnPort(port)?.message as { text?: unknown } | undefined) : undefined;
    return typeof message?.text === 'string' ? message.text : undefined;
  } finally {
    port.close();
    void worker.terminate();
  }
}
