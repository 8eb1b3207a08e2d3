/**
 * What the main thread and the `--api-file` check's worker (src/sources/api-check-worker.ts)
 * share: the job given as `workerData`, and the values of the shared state word.
 */

/** The shared state word's values (an `Int32Array` of one element over `ApiCheckJob.state`). */
export const CHECK_STATE = { pending: 0, started: 1, accepted: 2, refusedOrFailed: 3 } as const;

/**
 * One check: `bytes` the file's bytes (transferred), `file` its name as the user gave it (the
 * error names it), `state` a SharedArrayBuffer of 4 bytes the worker writes its verdict to.
 */
export interface ApiCheckJob {
  readonly bytes: ArrayBuffer;
  readonly file: string;
  readonly state: SharedArrayBuffer;
}
