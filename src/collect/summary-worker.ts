/**
 * The cheap-evidence worker (a `worker_threads` entry: dist/bin/summary-worker.js in the
 * bundle, dist/src/collect/summary-worker.js from tsc): scans the iptables-save texts given
 * as `workerData.texts` with src/parsers/chain-summary.ts `summarizeIptablesSave`, exactly
 * as the main thread would, and posts back `{ summaries }` (one per text, in order) or
 * `{ error }`. The parser is imported after the thread starts, so a failure to load it is an
 * answer too. Never throws to its parent (src/collect/summary-off-thread.ts).
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { SummaryJob } from './summary-off-thread.js';

const job = workerData as SummaryJob;
try {
  const { summarizeIptablesSave } = await import('../parsers/chain-summary.js');
  parentPort?.postMessage({ summaries: job.texts.map((text) => summarizeIptablesSave(text).value) });
} catch (e) {
  parentPort?.postMessage({ error: e instanceof Error ? e.message : String(e) });
}
