/**
 * One probe run to its {@link Parsed} part: the run's summary for the snapshot, why it
 * printed nothing, its parse (partial output of a failed run is data), and the per-session
 * cache that skips re-parsing an unchanged text.
 */
import { createHash } from 'node:crypto';
import { tail } from '../errors.js';
import type { ParseResult } from '../model/diagnostics.js';
import type { Parsed, ProbeSummary } from '../model/snapshot.js';
import { catalog } from '../sources/catalog.js';
import type { ProbeRun } from '../sources/probe-runner.js';
import { isParsedRun } from './parts.js';

/**
 * Remembers, per probe id, a fingerprint of the last text parsed (its length and SHA-1,
 * not the text: a 1M-entry conntrack table is 220 MB) and the parse result, so a refresh
 * that re-reads an unchanged ruleset does not parse it again. One per session.
 */
export class ParseCache {
  private readonly entries = new Map<string, { readonly length: number; readonly digest: string; readonly result: ParseResult<unknown> }>();

  /** The parse of `text` for probe `id`: the cached one when the text is unchanged. */
  parse<T>(id: string, text: string, parse: () => ParseResult<T>): ParseResult<T> {
    return this.lookup<T>(id, text) ?? this.store(id, text, parse());
  }

  /** The cached parse when `text` is what `id` printed last time; else undefined (nothing is parsed). */
  lookup<T>(id: string, text: string): ParseResult<T> | undefined {
    const hit = this.entries.get(id);
    // The length rules out most changed texts without hashing them.
    if (hit && hit.length === text.length && hit.digest === fingerprint(text)) return hit.result as ParseResult<T>;
    return undefined;
  }

  /** Remembers `result` as the parse of `text` for probe `id`; returns it. */
  store<T>(id: string, text: string, result: ParseResult<T>): ParseResult<T> {
    this.entries.set(id, { length: text.length, digest: fingerprint(text), result });
    return result;
  }
}

const fingerprint = (text: string): string => createHash('sha1').update(text).digest('base64');

/** Summarises a probe run for the snapshot (stderr cut to its last 2,000 characters). */
export function summarize(run: ProbeRun): ProbeSummary {
  return {
    id: run.id,
    argv: run.argv,
    status: run.status,
    exitCode: run.result.exitCode,
    startedAt: run.result.startedAt,
    durationMs: run.result.durationMs,
    ...(run.result.cpuMs !== undefined ? { cpuMs: run.result.cpuMs } : {}),
    stderrTail: tail(run.result.stderr),
    ...(run.result.notCaptured ? { notCaptured: true } : {}),
    optional: catalog().probes.find((p) => p.id === run.id)?.optional ?? false,
  };
}

/** Why a probe produced nothing to parse, in words for a pane. */
export function failureReason(run: ProbeRun): string {
  switch (run.status) {
    case 'missing':
      // A replay that never ran the probe knows nothing about the node's binaries.
      return run.result.notCaptured ? 'not in this capture' : `${run.argv[0]} is not installed on the node`;
    case 'timeout':
      return `timed out after ${run.result.durationMs} ms`;
    case 'failed': {
      const last = run.result.stderr.trim().split('\n').pop() ?? '';
      return `exit code ${run.result.exitCode}${last ? `: ${last}` : ''}`;
    }
    default:
      return '';
  }
}

/**
 * Parses one run with `parse`. A probe that failed but printed something is still
 * parsed (partial output is data), with the failure kept in `error`.
 */
export function parseRunCached<T>(run: ProbeRun | undefined, parse: (text: string, origin: string) => ParseResult<T>, cache?: ParseCache): Parsed<T> | null {
  if (!run) return null;
  const probe = summarize(run);
  const error = run.status === 'ok' ? null : failureReason(run);
  if (!isParsedRun(run)) return { value: null, diagnostics: [], probe, error };
  const result = cache ? cache.parse(run.id, run.result.stdout, () => parse(run.result.stdout, run.id)) : parse(run.result.stdout, run.id);
  return parsedOf(result, probe, error);
}

/** A run's parse with its `diagnostics` read when asked for: a parser may complete them late (rules built on first read). */
export function parsedOf<T>(result: ParseResult<T>, probe: ProbeSummary | null, error: string | null): Parsed<T> {
  return {
    value: result.value,
    get diagnostics() {
      return result.diagnostics;
    },
    probe,
    error,
  };
}
