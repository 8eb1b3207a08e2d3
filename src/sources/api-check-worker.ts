/**
 * The `--api-file` check's worker (a `worker_threads` entry: dist/bin/api-check-worker.js in
 * the bundle, dist/src/sources/api-check-worker.js from tsc): decodes the file's bytes it was
 * handed (transferred, the very bytes the main thread decoded its text from) as
 * src/sources/read-text.ts `textOfBytes` does, and runs `checkApiFileText` on them
 * (src/sources/api-file-check.ts). It answers only through the shared state word
 * (src/sources/api-check.ts `CHECK_STATE`): 1 started, 2 accepted, 3 refused or failed — the
 * main thread then runs the same check itself, which throws the same error (or accepts, when
 * this thread failed for another reason). The readers are imported after the start is
 * signalled, so that a failure to load them is an answer too. Never throws to its parent.
 */
import { workerData } from 'node:worker_threads';
import { CHECK_STATE, type ApiCheckJob } from './api-check-protocol.js';

const job = workerData as ApiCheckJob;
const state = new Int32Array(job.state);

function settle(value: number): void {
  Atomics.compareExchange(state, 0, CHECK_STATE.started, value);
  Atomics.notify(state, 0);
}

// An uncaught error or a termination ends the thread without a verdict: the main thread checks itself.
process.on('exit', () => settle(CHECK_STATE.refusedOrFailed));
Atomics.store(state, 0, CHECK_STATE.started);
Atomics.notify(state, 0);
try {
  const [{ checkApiFileText }, { textOfBytes }] = await Promise.all([import('./api-file-check.js'), import('./read-text.js')]);
  checkApiFileText(textOfBytes(Buffer.from(job.bytes)), job.file);
  settle(CHECK_STATE.accepted);
} catch {
  settle(CHECK_STATE.refusedOrFailed);
}
