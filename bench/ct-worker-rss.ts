/**
 * The conntrack parse worker's own memory (issue 23 item 4): starts the real worker
 * (src/collect/parse-worker.ts, tsc's dist/src/collect/parse-worker.js) on one conntrack
 * capture file, with no Services to classify against, in an otherwise idle process, and
 * samples the process RSS every 20 ms until the worker's answer: the peak, when it came,
 * and the RSS once the worker is ended. `--limits default` runs it without `resourceLimits`;
 * the default is the app's `WORKER_LIMITS` (src/collect/worker-parse.ts).
 *
 * Usage: `node dist/bench/ct-worker-rss.js FILE [--limits default|app]` (FILE: a capture's
 * probes/conntrack.stdout, e.g. a huge bench bundle's). Prints one JSON line: wall and
 * process CPU ms (all threads), peak RSS MB and its time ms, RSS MB after the worker ended.
 */
import { Worker } from 'node:worker_threads';
import { parseWorkerUrl, WORKER_LIMITS } from '../src/collect/worker-parse.js';
import type { ConntrackJobInput } from '../src/collect/worker-protocol.js';

const MB = 1024 * 1024;

async function main(): Promise<void> {
  const [file, flag, value] = process.argv.slice(2);
  const script = parseWorkerUrl();
  if (!file || !script || (flag !== undefined && (flag !== '--limits' || !['default', 'app'].includes(value ?? '')))) {
    process.stderr.write('usage: node dist/bench/ct-worker-rss.js FILE [--limits default|app] (build first: the worker runs from dist/)\n');
    process.exitCode = 1;
    return;
  }
  const limits = value === 'default' ? undefined : WORKER_LIMITS;
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  let peak = 0;
  let peakAt = 0;
  const timer = setInterval(() => {
    const rss = process.memoryUsage().rss;
    if (rss > peak) [peak, peakAt] = [rss, performance.now() - t0];
  }, 20);
  const input: ConntrackJobInput = { file, origin: 'conntrack' };
  const worker = new Worker(script, { workerData: input, ...(limits ? { resourceLimits: limits } : {}) });
  const ok = await new Promise<boolean>((resolve) => {
    worker.once('message', (reply: { ok: boolean }) => resolve(reply.ok));
    worker.once('error', () => resolve(false));
  });
  const wall = performance.now() - t0;
  await worker.terminate();
  clearInterval(timer);
  const cpu = process.cpuUsage(c0);
  const round = (x: number) => Math.round(x);
  const out = {
    limits: limits ?? 'default',
    ok,
    wallMs: round(wall),
    cpuMs: round((cpu.user + cpu.system) / 1000),
    peakRssMb: round(Math.max(peak, process.resourceUsage().maxRSS * 1024) / MB),
    peakAtMs: round(peakAt),
    afterEndRssMb: round(process.memoryUsage().rss / MB),
  };
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

void main();
