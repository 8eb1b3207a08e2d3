/**
 * The cheap-evidence worker (a `worker_threads` entry: dist/bin/summary-worker.js in the
 * bundle, dist/src/collect/summary-worker.js from tsc): reads the iptables-save files given
 * as `workerData.files` and the `nft -j` file `workerData.nftJson` (src/sources/read-text.ts
 * `readTextFile`), scans them with src/parsers/chain-summary.ts `summarizeIptablesSave` and
 * `nftJsonTableNames`, exactly as the main thread would, and posts back `{ summaries, tables }`
 * (summaries one per file, in order, packed: src/collect/summary-off-thread.ts `packSummary`;
 * `tables` only when `nftJson` was given) or `{ error }`. The reader and parser are imported
 * after the thread starts, so a failure to load them is an answer too. Never throws to its
 * parent (src/collect/summary-off-thread.ts).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { packSummary, type SummaryJob } from './summary-off-thread.js';

const job = workerData as SummaryJob;
try {
  const [{ nftJsonTableNames, summarizeIptablesSave }, { readTextFile }] = await Promise.all([import('../parsers/chain-summary.js'), import('../sources/read-text.js')]);
  const summaries = job.files.map((file) => packSummary(summarizeIptablesSave(readTextFile(file)).value));
  parentPort?.postMessage({ summaries, ...(job.nftJson !== undefined ? { tables: nftJsonTableNames(readTextFile(job.nftJson)) } : {}) });
} catch (e) {
  parentPort?.postMessage({ error: e instanceof Error ? e.message : String(e) });
}
