/**
 * Parsing a replay's conntrack table on a worker thread (src/collect/parse-worker.ts)
 * while the main thread reads the API objects and the rules: the biggest text of a huge
 * capture (220 MB, 1M flows) and its classification against the Services leave the main
 * thread, which receives the parser's columns by transfer and rebuilds the same column
 * table (kinds re-packed, the interner's lookup state restored): no object per entry. Used by
 * `completeSnapshot` for a run whose stdout is a file (`stdoutPath`, a replay) of at
 * least {@link WORKER_MIN_BYTES}; smaller tables are parsed in-process (a worker's start
 * costs more than it saves). A worker that fails, exits or answers something undecodable
 * leaves the parse to the main thread, with a `parse-worker-failed` warning: never a crash.
 */
import { existsSync, statSync } from 'node:fs';
import { Worker, type ResourceLimits } from 'node:worker_threads';
import { conntrackTargetColumns, conntrackTargets, primeConntrackIndex } from '../analysis/conntrack-index.js';
import type { ServiceRef } from '../model/service-ref.js';
import { diagnostic, type ParseResult } from '../model/diagnostics.js';
import type { ConntrackTable } from '../model/conntrack.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import { decodeConntrack, decodeConntrackColumns } from '../parsers/conntrack-transfer.js';
import type { ProbeRun } from '../sources/probe-runner.js';
import type { ConntrackJobInput, ConntrackJobReply, ConntrackTargetsMessage } from './worker-protocol.js';

/** Bytes of conntrack text from which a worker parses it: 16 MiB (~75,000 flows). */
export const WORKER_MIN_BYTES = 16 * 1024 * 1024;

/**
 * The worker's V8 limits: a young generation of 2 MiB (V8's default lets it grow to tens of
 * MiB per semi-space). The parse keeps little but its columns and the interner, so short-lived
 * garbage is scavenged sooner at about the same CPU, and the worker's RSS is ~30 MB lower at its
 * peak (the end of the parse, where it meets the main thread's). No old-generation limit: a
 * table of odd lines (objects, not columns) may need more, and a worker out of memory would only
 * fall back to the main thread's parse.
 */
export const WORKER_LIMITS: ResourceLimits = { maxYoungGenerationSizeMb: 2 };

/**
 * When a replay's big conntrack table is parsed on a worker (`NODESCOPE_PARSE_WORKERS`):
 * `on` (`=1`: always, started before the rules' stage), `off` (`=0`: never), else
 * `beside-long-rules` — only when the rules' stage is a long nft -j parse the worker can run
 * beside ({@link startsBesideRules}). The worker takes the parse and the pane's classification
 * off the main thread but costs the process more CPU, and its table's columns meet the main
 * thread's peak of the stage it runs beside: beside a short rules stage (iptables) it has
 * little to hide behind, and beside the Cilium LB maps' decode the huge replay's peak came
 * near the 800 MB budget (NOTES.md, issue 23, session 17).
 */
export type WorkerPolicy = 'on' | 'off' | 'beside-long-rules';

/** The {@link WorkerPolicy} the environment asks for: `NODESCOPE_PARSE_WORKERS=1` on, `=0` off, anything else `beside-long-rules`. */
export function parseWorkerPolicy(env: NodeJS.ProcessEnv = process.env): WorkerPolicy {
  const v = env.NODESCOPE_PARSE_WORKERS;
  return v === '1' ? 'on' : v === '0' ? 'off' : 'beside-long-rules';
}

/**
 * How a staged load uses the worker: `enabled` (true: always, false: never; default as
 * {@link parseWorkerPolicy} says),
 * `minBytes` (default {@link WORKER_MIN_BYTES}), `script` (default {@link parseWorkerUrl}; tests give another).
 */
export interface WorkerOptions {
  readonly enabled?: boolean;
  readonly minBytes?: number;
  readonly script?: URL;
}

/** A conntrack parse under way on a worker: its result, or why the worker failed. */
export interface ConntrackJob {
  readonly run: ProbeRun;
  readonly outcome: Promise<{ readonly parsed: ParseResult<ConntrackTable> } | { readonly error: string }>;
}

/**
 * Where the worker's script is: beside this module (tsc's dist/src/collect/), one level up
 * from the bundle's chunks (dist/bin/parse-worker.js), or tsc's output when this module
 * runs from its TypeScript source (tests). Undefined when none exists.
 */
export function parseWorkerUrl(): URL | undefined {
  const candidates = ['./parse-worker.js', '../parse-worker.js', '../../dist/src/collect/parse-worker.js'].map((p) => new URL(p, import.meta.url));
  return candidates.find((u) => existsSync(u));
}

/**
 * Starts the worker on `run`'s stdout file when it is big enough (see the module doc),
 * classifying against the Services of `first` (the staged load's first snapshot: its API
 * objects, node and addresses are the final snapshot's). Undefined when no worker is used.
 */
export function startConntrackJob(run: ProbeRun | undefined, first: NodeSnapshot, options: WorkerOptions = {}): ConntrackJob | undefined {
  const file = run?.status === 'ok' ? run.result.stdoutPath : undefined;
  if (options.enabled === false) return undefined;
  const script = options.script ?? parseWorkerUrl();
  if (!run || file === undefined || !script || !existsSync(file) || statSync(file).size < (options.minBytes ?? WORKER_MIN_BYTES)) return undefined;
  // The parse starts before the targets are made; they follow in one message (see below).
  const input: ConntrackJobInput = { file, origin: run.id, targetsLater: true };
  let services: readonly ServiceRef[] = [];
  const outcome = new Promise<{ parsed: ParseResult<ConntrackTable> } | { error: string }>((resolve) => {
    let started: Worker | undefined;
    try {
      started = new Worker(script, { workerData: input, resourceLimits: WORKER_LIMITS });
      services = postTargets(started, first);
    } catch (e) {
      void started?.terminate();
      resolve({ error: (e as Error).message });
      return;
    }
    const worker = started;
    worker.once('message', (reply: ConntrackJobReply) => {
      void worker.terminate();
      if (!reply.ok) return resolve({ error: reply.error });
      const parsed = reply.table.format === 'columns' ? decodeConntrackColumns(reply.table.encoded) : decodeConntrack(reply.table.encoded);
      if (!parsed) return resolve({ error: 'more conntrack kinds than the kind table holds' });
      if (reply.columns) primeConntrackIndex(first, parsed.value, services, reply.columns);
      resolve({ parsed });
    });
    worker.once('error', (e) => resolve({ error: e.message }));
    worker.once('exit', (code) => resolve({ error: `exited with code ${code} before it answered` }));
  });
  return { run, outcome };
}

/**
 * Sends the classification targets of `first` to a worker started with `targetsLater`, and
 * returns their Services' names in order (the pane's index, made when the worker answers): the
 * targets as columns (typed arrays, transferred; src/analysis/conntrack-index.ts
 * `conntrackTargetColumns`), or as objects when the columns do not hold their shape. Making the
 * objects and a structured clone of them cost the main thread, before the rules' stage, more
 * than the columns, and the clone's objects lived on both threads (the load's peak).
 */
function postTargets(worker: Worker, first: NodeSnapshot): readonly ServiceRef[] {
  const columns = conntrackTargetColumns(first);
  if (columns) {
    const { encoded, transfer } = columns.message;
    worker.postMessage({ format: 'encoded', encoded } satisfies ConntrackTargetsMessage, transfer);
    return columns.services;
  }
  const targets = conntrackTargets(first);
  worker.postMessage({ format: 'objects', targets } satisfies ConntrackTargetsMessage);
  return targets.services;
}

/**
 * Whether a staged load starts the conntrack worker before its first stage, beside the rules'
 * parse (it is never started later: after the rules the main thread has nothing to do but
 * wait for it). `options.enabled` true: yes; false: no; unset: as {@link parseWorkerPolicy}
 * says of `env` — for `beside-long-rules`, when `nftRun` (the `nft-json` probe's run) printed
 * at least `options.minBytes` (default {@link WORKER_MIN_BYTES}), sized by its file (a replay)
 * or its text; false for a failed or absent run. Never throws.
 */
export function startsBesideRules(options: WorkerOptions, nftRun: ProbeRun | undefined, env: NodeJS.ProcessEnv = process.env): boolean {
  const policy = options.enabled === undefined ? parseWorkerPolicy(env) : options.enabled ? 'on' : 'off';
  if (policy !== 'beside-long-rules') return policy === 'on';
  if (nftRun?.status !== 'ok') return false;
  const minBytes = options.minBytes ?? WORKER_MIN_BYTES;
  const file = nftRun.result.stdoutPath;
  try {
    if (file !== undefined) return statSync(file).size >= minBytes;
  } catch {
    return false;
  }
  return nftRun.result.stdout.length >= minBytes;
}

/**
 * The job's parse, or — when the worker failed — `inProcess()`'s, with a
 * `parse-worker-failed` warning naming the failure added to its diagnostics.
 */
export async function conntrackJobResult(job: ConntrackJob, inProcess: () => Promise<ParseResult<ConntrackTable>>): Promise<ParseResult<ConntrackTable>> {
  const got = await job.outcome;
  if ('parsed' in got) return got.parsed;
  const result = await inProcess();
  const warning = diagnostic('warning', job.run.id, 0, '', 'parse-worker-failed', `parsed on the main thread: the parse worker failed (${got.error})`);
  return { value: result.value, diagnostics: [...result.diagnostics, warning] };
}
