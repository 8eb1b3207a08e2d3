/**
 * `trace --replay DIR --to IP…`: the API worker (src/cli/trace-api.ts) started as soon as the
 * command line is parsed, before the command's modules load, for the api.json the replay's
 * manifest names (the file src/sources/open.ts hands to `trace` later: the same
 * src/sources/bundle.ts `readBundle` and `bundleFilePath`). When the later open asks for
 * the same file and destination it adopts this worker; otherwise the worker is ended. Only for
 * a replay as the one source and no `--api-file` (openSource then reads the manifest's file).
 */
import { bundleFilePath, readBundle } from '../sources/bundle.js';
import { startTraceApiEarly } from './trace-api.js';
import { traceQuery } from './trace-query.js';

/** The options {@link startTraceApiForReplay} reads (the trace command's). */
export interface EarlyTraceOptions {
  readonly replay?: string;
  readonly apiFile?: string;
  readonly local?: boolean;
  readonly netns?: string;
  readonly ssh?: string;
  readonly node?: string;
  readonly to?: string;
  readonly allowTrace?: boolean;
}

/**
 * Starts the API worker for `opts` when `trace` will hand a replay's api.json to it (see the
 * module comment); whatever cannot be read now (no manifest, a file outside the bundle) is left
 * to the open, which says so as before. Returns whether a worker started. Never throws.
 */
export function startTraceApiForReplay(opts: EarlyTraceOptions): boolean {
  if (opts.replay === undefined || opts.apiFile !== undefined || opts.local || opts.netns !== undefined || opts.ssh !== undefined || opts.node !== undefined) return false;
  const q = traceQuery(opts.to, opts.allowTrace === true);
  if (q === null) return false;
  try {
    const bundle = readBundle(opts.replay);
    const api = bundle.manifest.api;
    const file = api ? bundleFilePath(bundle.dir, api.file, 'api.file') : undefined;
    return file !== undefined && startTraceApiEarly(file, q);
  } catch {
    return false;
  }
}
