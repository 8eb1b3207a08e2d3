/**
 * Chooses the source from the command-line options shared by every command:
 * `--local [--netns NAME]`, `--replay DIR`, `--api-file FILE`; none of them → the
 * embedded default capture. Later sources (`--ssh`, `--node`) plug in here.
 */
import { existsSync, readFileSync } from 'node:fs';
import { UserError } from '../errors.js';
import { defaultCaptureDir } from '../paths.js';
import { LocalTransport } from './local.js';
import { ReplayTransport } from './replay.js';
import type { Transport } from './transport.js';

/** Source options as parsed from the command line. */
export interface SourceOptions {
  readonly local?: boolean;
  readonly netns?: string;
  readonly replay?: string;
  readonly apiFile?: string;
}

/** An opened source: the transport, whether it is live, and the API objects text if any. */
export interface OpenedSource {
  readonly transport: Transport;
  readonly live: boolean;
  readonly apiText: string | undefined;
  readonly apiOrigin: string | undefined;
}

/**
 * Opens the source the options name. Throws `UserError` for contradictory options
 * or an unreadable `--api-file`, and what {@link ReplayTransport} throws for a bad bundle.
 */
export function openSource(options: SourceOptions): OpenedSource {
  const chosen = [options.local || options.netns ? 'local' : null, options.replay ? 'replay' : null].filter(Boolean);
  if (chosen.length > 1) throw new UserError('choose one source: --local/--netns or --replay');
  let apiText: string | undefined;
  let apiOrigin: string | undefined;
  if (options.apiFile) {
    if (!existsSync(options.apiFile)) throw new UserError(`--api-file ${options.apiFile}: no such file`);
    apiText = readFileSync(options.apiFile, 'utf8');
    apiOrigin = options.apiFile;
  }
  if (options.local || options.netns) {
    return { transport: new LocalTransport({ ...(options.netns ? { netns: options.netns } : {}) }), live: true, apiText, apiOrigin };
  }
  const replay = new ReplayTransport(options.replay ?? defaultCaptureDir());
  if (apiText === undefined) {
    apiText = replay.apiText();
    apiOrigin = replay.bundle.manifest.api ? `${replay.bundle.dir}/${replay.bundle.manifest.api.file}` : undefined;
  }
  return { transport: replay, live: false, apiText, apiOrigin };
}
