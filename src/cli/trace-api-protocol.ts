/**
 * What the main thread and the `trace` API worker (src/cli/trace-api-worker.ts) exchange:
 * the job given as `workerData`, and the values of the shared state word.
 */
import type { MessagePort } from 'node:worker_threads';

/** The shared state word's values (an `Int32Array` of one element over `TraceApiJob.state`). */
export const STATE = { pending: 0, started: 1, answered: 2, failed: 3 } as const;

/**
 * One narrowing job: `file` the api.json's absolute path (src/sources/bundle.ts
 * `bundleFilePath`), `address`/`port` the walk's destination (src/sources/api-select.ts
 * `FrontendQuery`), `state` a SharedArrayBuffer of 4 bytes, `reply` the port (transferred)
 * on which the worker posts `{ text: string }` or `{ error: string }`.
 */
export interface TraceApiJob {
  readonly file: string;
  readonly address: string;
  readonly port: number | null;
  readonly state: SharedArrayBuffer;
  readonly reply: MessagePort;
}
