/**
 * The cheap mode evidence's iptables-save scan (src/parsers/chain-summary.ts
 * `summarizeIptablesSave`) on a worker thread (src/collect/summary-worker.ts), so that a
 * replayed `show services` scans its 20 MB dump on the second core while the main thread
 * parses the API objects. The texts are those the main thread read (copied to the worker);
 * the summaries come back by structured clone (plain objects, strings and numbers: the same
 * values). Whatever goes wrong with the worker (no script, it does not start, it fails, it
 * exits or answers something else) the scan is made on the main thread, as it always was:
 * the same answer, later. Small texts are scanned in-thread (a worker's start costs more).
 */
import { existsSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import type { ChainSummary } from '../model/chain-summary.js';
import { summarizeIptablesSave } from '../parsers/chain-summary.js';

/** Characters of iptables-save text (all texts together) from which a worker scans them: 1 MiB. */
export const SUMMARY_WORKER_MIN_CHARS = 1024 * 1024;

/** What the worker is given as `workerData`: the iptables-save texts to summarise. */
export interface SummaryJob {
  readonly texts: readonly string[];
}

/** Whether the evidence scan may use a worker: yes unless the environment says `NODESCOPE_EVIDENCE_WORKER=0`. */
export function summaryWorkerWanted(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.NODESCOPE_EVIDENCE_WORKER !== '0';
}

/**
 * Where the worker's script is: beside this module (tsc's dist/src/collect/), one level up
 * from the bundle's chunks (dist/bin/summary-worker.js), or tsc's output when this module
 * runs from its TypeScript source (tests). Undefined when none exists.
 */
export function summaryWorkerUrl(): URL | undefined {
  const candidates = ['./summary-worker.js', '../summary-worker.js', '../../dist/src/collect/summary-worker.js'].map((p) => new URL(p, import.meta.url));
  return candidates.find((u) => existsSync(u));
}

/**
 * Options of {@link summarizeOffThread}: `worker` false: in-thread only (the reference);
 * `minChars` (default {@link SUMMARY_WORKER_MIN_CHARS}); `script`: another worker script (tests).
 */
export interface SummaryOffThreadOptions {
  readonly worker?: boolean;
  readonly minChars?: number;
  readonly script?: URL;
}

/** The summaries, and who made them (`worker`, or `thread` when the main thread did). */
export interface SummaryAnswer {
  readonly summaries: readonly ChainSummary[];
  readonly how: 'worker' | 'thread';
}

/**
 * Starts summarising `texts` (iptables-save text each) and returns a function that gives
 * their summaries (`summarizeIptablesSave(text).value`, in order): from the worker when one
 * started and answered, else made then in-thread. The worker runs while the caller does
 * other synchronous work; call the function when the summaries are needed. Never rejects.
 */
export function summarizeOffThread(texts: readonly string[], options: SummaryOffThreadOptions = {}): () => Promise<SummaryAnswer> {
  const inThread = (): SummaryAnswer => ({ summaries: texts.map((t) => summarizeIptablesSave(t).value), how: 'thread' });
  const chars = texts.reduce((n, t) => n + t.length, 0);
  const script = (options.worker ?? summaryWorkerWanted()) && texts.length > 0 && chars >= (options.minChars ?? SUMMARY_WORKER_MIN_CHARS) ? (options.script ?? summaryWorkerUrl()) : undefined;
  const answer = script ? startWorker(texts, script) : undefined;
  return async () => {
    const summaries = answer ? await answer : undefined;
    return summaries && summaries.length === texts.length ? { summaries, how: 'worker' } : inThread();
  };
}

/** A cloned {@link ChainSummary}'s shape (what the worker's answer must hold to be used). */
function isSummary(v: unknown): boolean {
  const s = v as Partial<ChainSummary> | null;
  return typeof s === 'object' && s !== null && Array.isArray(s.chains) && Array.isArray(s.ipsetSets);
}

/** The worker's summaries, or undefined when it could not start, failed, exited or answered anything else. */
function startWorker(texts: readonly string[], script: URL): Promise<ChainSummary[] | undefined> | undefined {
  if (!existsSync(script) && script.protocol === 'file:') return undefined;
  let worker: Worker;
  try {
    worker = new Worker(script, { workerData: { texts } satisfies SummaryJob });
  } catch {
    return undefined;
  }
  return new Promise<ChainSummary[] | undefined>((resolve) => {
    worker.once('message', (m: unknown) => {
      const summaries = (m as { summaries?: unknown } | null)?.summaries;
      resolve(Array.isArray(summaries) && summaries.every(isSummary) ? (summaries as ChainSummary[]) : undefined);
      void worker.terminate();
    });
    worker.once('error', () => resolve(undefined));
    worker.once('exit', () => resolve(undefined));
  });
}
