/**
 * The local transport: runs declared probes on this machine, optionally inside a
 * network namespace through the catalog's `netns` wrapper (`ip netns exec NAME`).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { said, UserError } from '../errors.js';
import { wrapperArgv } from './catalog.js';
import { runProcess } from './child-process.js';
import { runProcessOffThread, startExecWorker } from './exec-off-thread.js';
import type { ExecOptions, ExecResult, Transport } from './transport.js';

// The in-thread runner lives in child-process.ts (the exec worker imports it without the catalog).
export { runProcess } from './child-process.js';

/** Options of {@link LocalTransport}: `netns` runs every probe inside that namespace. */
export interface LocalOptions {
  readonly netns?: string;
  /** Injected clock (ms since epoch), for deterministic tests. */
  readonly now?: () => number;
}

/**
 * Where `ip netns` keeps named network namespaces: iproute2's `NETNS_RUN_DIR`
 * (Makefile default `/var/run/netns`; `/var/run` is `/run` on Debian and systemd
 * systems). `ip netns add NAME` mounts the namespace at `DIR/NAME`, `ip netns exec NAME`
 * opens that file, `ip netns list` lists the directory.
 */
export const NETNS_RUN_DIR = '/var/run/netns';

/**
 * Throws `UserError` naming `name` (hint: `ip netns list`) when no network namespace
 * of that name exists in `runDir` (default {@link NETNS_RUN_DIR}). Reads the file
 * system only: nothing runs.
 */
export function assertNetnsExists(name: string, runDir: string = NETNS_RUN_DIR): void {
  if (!existsSync(path.join(runDir, name))) {
    throw new UserError(said('ue.netns.none', { name, path: path.join(runDir, name) }), said('ue.netns.list'));
  }
}

/** Runs probes on this machine (`--local`), or inside `--netns NAME`. */
export class LocalTransport implements Transport {
  readonly kind;
  readonly label: string;
  readonly feedsStdin = true;
  private readonly prefix: readonly string[];
  private readonly now: () => number;

  constructor(options: LocalOptions = {}) {
    this.kind = options.netns ? ('netns' as const) : ('local' as const);
    this.label = options.netns ? `netns:${options.netns}` : 'local';
    this.prefix = options.netns ? wrapperArgv('netns', { netns: options.netns }) : [];
    this.now = options.now ?? Date.now;
  }

  exec(argv: readonly string[], options: ExecOptions): Promise<ExecResult> {
    const full = [...this.prefix, ...argv];
    // Stdin is fed on this thread (a small lookup list); the big dumps' pipes may be read off it.
    return options.readOffThread && options.stdin === undefined ? runProcessOffThread(full, options.timeoutMs, this.now, options.signal) : runProcess(full, options.timeoutMs, this.now, options.signal, options.stdin);
  }

  /** Starts the exec worker (see {@link Transport.prepareOffThread}). */
  prepareOffThread(): void {
    startExecWorker();
  }

  async close(): Promise<void> {}
}
