/**
 * The `trace` API worker (a `worker_threads` entry: dist/bin/trace-api-worker.js in the
 * bundle, dist/src/cli/trace-api-worker.js from tsc): reads a replay's api.json and narrows
 * it to what a walk to one destination reads, exactly as the main thread would
 * (src/sources/read-text.ts `readTextFile`, src/sources/api-select.ts `apiTextFor`), and
 * posts back only the narrowed List's text (a few kilobytes) on the port it was given.
 * The shared state word says how far it got, so that the main thread can wait for it
 * without its event loop (src/cli/trace-api.ts): 1 started, 2 answered `{ text }`,
 * 3 failed (`{ error }` posted, or the thread is exiting without an answer). The readers are
 * imported after the start is signalled, so that a failure to load them is an answer too.
 * Never throws to its parent.
 */
import { workerData, type MessagePort } from 'node:worker_threads';
import { STATE, type TraceApiJob } from './trace-api-protocol.js';

const job = workerData as TraceApiJob;
const state = new Int32Array(job.state);
const reply: MessagePort = job.reply;

function settle(value: number): void {
  Atomics.compareExchange(state, 0, STATE.started, value);
  Atomics.notify(state, 0);
}

// An uncaught error or a termination ends the thread without an answer: the main thread must not wait on.
process.on('exit', () => settle(STATE.failed));
Atomics.store(state, 0, STATE.started);
Atomics.notify(state, 0);
try {
  const [{ apiTextFor }, { readTextFile }] = await Promise.all([import('../sources/api-select.js'), import('../sources/read-text.js')]);
  reply.postMessage({ text: apiTextFor(readTextFile(job.file), { address: job.address, port: job.port }) });
  settle(STATE.answered);
} catch (e) {
  reply.postMessage({ error: e instanceof Error ? e.message : String(e) });
  settle(STATE.failed);
}
reply.close();
