/**
 * The local transport: runs declared probes on this machine, optionally inside a
 * network namespace through the catalog's `netns` wrapper (`ip netns exec NAME`).
 */
import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { said, UserError } from '../errors.js';
import { wrapperArgv } from './catalog.js';
import { childCpuSinceLastReap, resetChildCpuCount } from './child-cpu.js';
import type { ExecOptions, ExecResult, Transport } from './transport.js';

/** Options of {@link LocalTransport}: `netns` runs every probe inside that namespace. */
export interface LocalOptions {
  readonly netns?: string;
  /** Injected clock (ms since epoch), for deterministic tests. */
  readonly now?: () => number;
}

/** Process groups of children still running (each child leads its own: see runProcess). */
const liveGroups = new Set<number>();
let exitHookInstalled = false;

/** Sends `sig` to a child's whole process group (`timeout`, `nft` under it, …); ignores a group already gone. */
function killGroup(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(-pid, sig);
  } catch {
    // gone already
  }
}

/**
 * Runs an argv as a child process (no shell), collecting stdout and stderr as
 * UTF-8. A missing binary gives `{exitCode: null, missing: true}`; a timeout kills
 * the process group (SIGKILL) and gives `{exitCode: null, timedOut: true}`; `signal`
 * aborted ends the group (SIGTERM, SIGKILL after 1 s) and gives `{exitCode: null}`.
 * Never throws. `cpuMs`: the child's CPU time, from /proc/self/stat (src/sources/child-cpu.ts).
 * `stdoutToFile`: the child writes its stdout to a file of ours (private, removed once read)
 * instead of a pipe, read whole when it ends: the same bytes, and a child printing megabytes
 * never waits on a full pipe while this process's event loop is busy (a parse between
 * turns); a file that cannot be made falls back to the pipe.
 *
 * The child leads its own process group, so what it starts goes with it: coreutils
 * `timeout` (the trace monitor's bound) puts its command in a group apart from the
 * terminal's, where a Ctrl-C never reaches it; killing the group does. Groups still
 * running when nodescope exits (any exit that runs `exit` handlers) get SIGKILL.
 */
export function runProcess(argv: readonly string[], timeoutMs: number, now: () => number = Date.now, signal?: AbortSignal, stdoutToFile = false): Promise<ExecResult> {
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on('exit', () => {
      for (const pid of liveGroups) killGroup(pid, 'SIGKILL');
    });
  }
  const started = now();
  const startedAt = new Date(started).toISOString();
  return new Promise((resolve) => {
    const [cmd, ...args] = argv;
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    const file = stdoutToFile ? stdoutFile() : null;
    let timedOut = false;
    let settled = false;
    const finish = (r: Omit<ExecResult, 'argv' | 'startedAt' | 'durationMs' | 'stdout' | 'stderr'>, extraErr = '') => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({
        argv: [...argv],
        stdout: (file ? file.take() : Buffer.concat(out)).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8') + extraErr,
        startedAt,
        durationMs: now() - started,
        ...(cpuMs !== undefined ? { cpuMs } : {}),
        ...r,
      });
    };
    // No measured child running: the next reap's CPU time is the next probe's alone.
    if (liveGroups.size === 0) resetChildCpuCount();
    let cpuMs: number | undefined;
    let child;
    try {
      child = spawn(cmd ?? '', args, { stdio: ['ignore', file ? file.fd : 'pipe', 'pipe'], env: { ...process.env, LC_ALL: 'C' }, detached: true });
    } finally {
      // The child holds its own copy of the descriptor; ours is not needed to read the file.
      file?.closeFd();
    }
    const pid = child.pid;
    if (pid !== undefined) liveGroups.add(pid);
    const timer = setTimeout(() => {
      timedOut = true;
      if (pid !== undefined) killGroup(pid, 'SIGKILL');
    }, timeoutMs);
    let hardKill: NodeJS.Timeout | undefined;
    const onAbort = () => {
      if (pid === undefined) return;
      killGroup(pid, 'SIGTERM');
      hardKill = setTimeout(() => killGroup(pid, 'SIGKILL'), 1000);
    };
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
    const release = () => {
      if (pid !== undefined) liveGroups.delete(pid);
      signal?.removeEventListener('abort', onAbort);
      if (hardKill) clearTimeout(hardKill);
    };
    // Read at the reap (`exit`), before `close` waits for the pipes: see child-cpu.ts.
    child.on('exit', () => {
      cpuMs = childCpuSinceLastReap();
    });
    child.stdout?.on('data', (d: Buffer) => out.push(d));
    child.stderr?.on('data', (d: Buffer) => err.push(d));
    child.on('error', (e: NodeJS.ErrnoException) => {
      release();
      finish({ exitCode: null, ...(e.code === 'ENOENT' ? { missing: true } : {}) }, `${cmd}: ${e.message}\n`);
    });
    child.on('close', (code) => {
      release();
      if (timedOut) finish({ exitCode: null, timedOut: true }, `killed after ${timeoutMs} ms\n`);
      // `ip netns exec` reports a missing binary as exit 255 with "No such file";
      // a shell-less exec elsewhere gives ENOENT above; 127 is the shell convention.
      else if (code === 127 || (code === 255 && /exec of ".*" failed: No such file or directory/.test(Buffer.concat(err).toString('utf8')))) {
        finish({ exitCode: code, missing: true });
      } else finish({ exitCode: code });
    });
  });
}

let outDir: string | null | undefined;
let outCount = 0;

/**
 * A new private file for one child's stdout, in a directory of this process's own under the
 * system's temporary directory (removed at exit), or null when none can be made. `take`
 * reads it whole and removes it (an empty buffer when it cannot be read).
 */
function stdoutFile(): { fd: number; closeFd: () => void; take: () => Buffer } | null {
  try {
    if (outDir === undefined) {
      outDir = mkdtempSync(path.join(os.tmpdir(), 'nodescope-out-'));
      const dir = outDir;
      process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
    }
    if (outDir === null) return null;
    const file = path.join(outDir, `${++outCount}.out`);
    const fd = openSync(file, 'wx', 0o600);
    let open = true;
    return {
      fd,
      closeFd: () => {
        if (open) closeSync(fd);
        open = false;
      },
      take: () => {
        try {
          return readFileSync(file);
        } catch {
          return Buffer.alloc(0);
        } finally {
          rmSync(file, { force: true });
        }
      },
    };
  } catch {
    outDir ??= null;
    return null;
  }
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
  private readonly prefix: readonly string[];
  private readonly now: () => number;

  constructor(options: LocalOptions = {}) {
    this.kind = options.netns ? ('netns' as const) : ('local' as const);
    this.label = options.netns ? `netns:${options.netns}` : 'local';
    this.prefix = options.netns ? wrapperArgv('netns', { netns: options.netns }) : [];
    this.now = options.now ?? Date.now;
  }

  exec(argv: readonly string[], options: ExecOptions): Promise<ExecResult> {
    return runProcess([...this.prefix, ...argv], options.timeoutMs, this.now, options.signal, options.stdoutToFile === true);
  }

  async close(): Promise<void> {}
}
