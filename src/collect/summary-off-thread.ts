/**
 * The cheap mode evidence's iptables-save scan (src/parsers/chain-summary.ts
 * `summarizeIptablesSave`) on a worker thread (src/collect/summary-worker.ts), so that a
 * replayed `show services` scans its 20 MB dump on the second core while the main thread
 * parses the API objects. The worker reads the replay's files itself, as the main thread
 * would (src/sources/read-text.ts `readTextFile`); the summaries come back packed ({@link PackedSummary}: a clone of 60,000 chain objects cost
 * the main thread about what the scan itself did) and are unpacked into the same values.
 * Whatever goes wrong with the worker (no script, it does not start, it fails, it
 * exits or answers something else) the scan is made on the main thread, as it always was:
 * the same answer, later. Small files and texts already read are scanned in-thread (a
 * worker's start costs more).
 */
import { existsSync, statSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import type { ChainSummary } from '../model/chain-summary.js';
import { nftJsonTableNames, summarizeIptablesSave } from '../parsers/chain-summary.js';
import { readTextFile } from '../sources/read-text.js';

/** Bytes of iptables-save files (all together) from which a worker scans them: 1 MiB. */
export const SUMMARY_WORKER_MIN_BYTES = 1024 * 1024;

/** One iptables-save text to summarise: a file (a replay's, absolute path) or a text already read. */
export type SummaryInput = { readonly file: string } | { readonly text: string };

/** What the worker is given as `workerData`: the iptables-save files to summarise, the `nft -j` file whose table names to find. */
export interface SummaryJob {
  readonly files: readonly string[];
  readonly nftJson?: string;
}

/**
 * A {@link ChainSummary} as the worker posts it: the chains' names joined by newlines (a name
 * is read from one line: it holds none), their tables as indexes into `tables`, their rule
 * counts (-1 for null) in typed arrays; the other fields as they are.
 */
export interface PackedSummary {
  readonly backend: ChainSummary['backend'];
  readonly ipsetRules: number | null;
  readonly ipsetSets: readonly string[];
  readonly count: number;
  readonly names: string;
  readonly tables: readonly string[];
  readonly tableOf: Int32Array;
  readonly rules: Float64Array;
}

/** Packs `s` for the way back from the worker (see {@link PackedSummary}). */
export function packSummary(s: ChainSummary): PackedSummary {
  const tables: string[] = [];
  const index = new Map<string, number>();
  const tableOf = new Int32Array(s.chains.length);
  const rules = new Float64Array(s.chains.length);
  s.chains.forEach((c, i) => {
    let t = index.get(c.table);
    if (t === undefined) index.set(c.table, (t = tables.push(c.table) - 1));
    tableOf[i] = t;
    rules[i] = c.rules ?? -1;
  });
  return { backend: s.backend, ipsetRules: s.ipsetRules, ipsetSets: s.ipsetSets, count: s.chains.length, names: s.chains.map((c) => c.name).join('\n'), tables, tableOf, rules };
}

/** The {@link ChainSummary} `p` packs (its fields in the parser's key order); undefined when `p` is not one. */
export function unpackSummary(p: unknown): ChainSummary | undefined {
  const v = p as Partial<PackedSummary> | null;
  if (typeof v !== 'object' || v === null || typeof v.names !== 'string' || typeof v.count !== 'number' || !Array.isArray(v.tables) || !Array.isArray(v.ipsetSets)) return undefined;
  if (!(v.tableOf instanceof Int32Array) || !(v.rules instanceof Float64Array) || v.tableOf.length !== v.count || v.rules.length !== v.count) return undefined;
  const names = v.count === 0 ? [] : v.names.split('\n');
  if (names.length !== v.count) return undefined;
  const tables = v.tables as string[];
  const chains = new Array<{ table: string; name: string; rules: number | null }>(v.count);
  for (let i = 0; i < v.count; i++) {
    const table = tables[v.tableOf[i]!];
    if (table === undefined) return undefined;
    const n = v.rules[i]!;
    chains[i] = { table, name: names[i]!, rules: n < 0 ? null : n };
  }
  return { backend: v.backend ?? null, chains, ipsetRules: v.ipsetRules ?? null, ipsetSets: v.ipsetSets };
}

/**
 * From how many bytes of files the evidence scan uses a worker, by the environment:
 * `NODESCOPE_EVIDENCE_WORKER=0` never (undefined), `=1` whatever their size (0: tests, by
 * hand), else {@link SUMMARY_WORKER_MIN_BYTES}.
 */
export function summaryWorkerMinBytes(env: NodeJS.ProcessEnv = process.env): number | undefined {
  const v = env.NODESCOPE_EVIDENCE_WORKER;
  return v === '0' ? undefined : v === '1' ? 0 : SUMMARY_WORKER_MIN_BYTES;
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
 * Options of {@link summarizeOffThread}: `worker` false: in-thread only (the reference), true:
 * a worker from `minBytes` (default {@link SUMMARY_WORKER_MIN_BYTES}), unset: as the
 * environment says ({@link summaryWorkerMinBytes}); `script`: another worker script (tests).
 */
export interface SummaryOffThreadOptions {
  readonly worker?: boolean;
  readonly minBytes?: number;
  readonly script?: URL;
}

/** The summaries, the `nft -j` table names (null when not asked), and who made them (`worker`, or `thread` when the main thread did). */
export interface SummaryAnswer {
  readonly summaries: readonly ChainSummary[];
  readonly tables: readonly string[] | null;
  readonly how: 'worker' | 'thread';
}

/**
 * Starts summarising `inputs` (iptables-save text each) and finding the table names of
 * `nftJson` (`nft -j` text: src/parsers/chain-summary.ts `nftJsonTableNames`), and returns a
 * function that gives them (`summarizeIptablesSave(text).value`, in order): from the worker
 * when one started and answered (only when every input is a file, together at least
 * `minBytes`), else made then in-thread (files read with `readTextFile`, which throws as it
 * does for an unreadable file). The worker runs while the caller does other synchronous
 * work; call the function when the answer is needed.
 */
export function summarizeOffThread(inputs: readonly SummaryInput[], options: SummaryOffThreadOptions = {}, nftJson?: SummaryInput): () => Promise<SummaryAnswer> {
  const textOf = (i: SummaryInput) => ('text' in i ? i.text : readTextFile(i.file));
  const inThread = (): SummaryAnswer => ({ summaries: inputs.map((i) => summarizeIptablesSave(textOf(i)).value), tables: nftJson ? nftJsonTableNames(textOf(nftJson)) : null, how: 'thread' });
  const all = nftJson ? [...inputs, nftJson] : inputs;
  const files = all.flatMap((i) => ('file' in i ? [i.file] : []));
  const minBytes = options.worker === false ? undefined : options.worker === true ? (options.minBytes ?? SUMMARY_WORKER_MIN_BYTES) : (options.minBytes ?? summaryWorkerMinBytes());
  const wanted = minBytes !== undefined && all.length > 0 && files.length === all.length && bytesOf(files) >= minBytes;
  const script = wanted ? (options.script ?? summaryWorkerUrl()) : undefined;
  const job: SummaryJob | undefined = wanted ? { files: files.slice(0, inputs.length), ...(nftJson ? { nftJson: files[inputs.length]! } : {}) } : undefined;
  const answer = script && job ? startWorker(job, script) : undefined;
  return async () => {
    const got = answer ? await answer : undefined;
    return got && got.summaries.length === inputs.length && (got.tables !== null) === (nftJson !== undefined) ? { ...got, how: 'worker' } : inThread();
  };
}

/** The files' sizes together; -1 when one cannot be read (then no worker: the in-thread read says why). */
function bytesOf(files: readonly string[]): number {
  try {
    return files.reduce((n, f) => n + statSync(f).size, 0);
  } catch {
    return -1;
  }
}

/** The worker's answer, or undefined when it could not start, failed, exited or answered anything else. */
function startWorker(job: SummaryJob, script: URL): Promise<Omit<SummaryAnswer, 'how'> | undefined> | undefined {
  if (!existsSync(script) && script.protocol === 'file:') return undefined;
  let worker: Worker;
  try {
    worker = new Worker(script, { workerData: job });
  } catch {
    return undefined;
  }
  return new Promise<Omit<SummaryAnswer, 'how'> | undefined>((resolve) => {
    worker.once('message', (m: unknown) => {
      const { summaries: packed, tables } = (m ?? {}) as { summaries?: unknown; tables?: unknown };
      const summaries = Array.isArray(packed) ? packed.map(unpackSummary) : undefined;
      const names = tables === undefined ? null : Array.isArray(tables) && tables.every((t) => typeof t === 'string') ? (tables as string[]) : undefined;
      resolve(summaries?.every((x) => x !== undefined) && names !== undefined ? { summaries: summaries as ChainSummary[], tables: names } : undefined);
      void worker.terminate();
    });
    worker.once('error', () => resolve(undefined));
    worker.once('exit', () => resolve(undefined));
  });
}
