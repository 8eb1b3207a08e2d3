/**
 * Running one argv as a child process of this thread (no shell), as the local transport and
 * the exec worker (exec-worker.ts) do. Imports nothing but Node and child-cpu.ts, so the
 * worker loads no catalog.
 */
import { spawn } from 'node:child_process';
import { childCpuSinceLastReap, resetChildCpuCount } from './child-cpu.js';
import type { ExecResult } from './transport.js';

/** Process groups of children still running (each child leads its own: see runProcess). */
const liveGroups = new Set<number>();
let exitHookInstalled = false;

/** Sends `sig` to a child's whole process group (`timeout`, `nft` under it, …); ignores a group already gone. */
export function killGroup(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(-pid, sig);
  } catch {
    // gone already
  }
}

/** {@link ExecResult} with stdout as the bytes the child wrote (not yet decoded). */
export type RawExecResult = Omit<ExecResult, 'stdout'> & { readonly stdoutBytes: Buffer };

/** Called with a child's pid when it is spawned and again when it is gone (its pipes closed or its spawn failed). */
export interface GroupHooks {
  readonly spawned?: (pid: number) => void;
  readonly gone?: (pid: number) => void;
}

/**
 * Runs an argv as a child process (no shell), collecting stdout and stderr as
 * UTF-8. A missing binary gives `{exitCode: null, missing: true}`; a timeout kills
 * the process group (SIGKILL) and gives `{exitCode: null, timedOut: true}`; `signal`
 * aborted ends the group (SIGTERM, SIGKILL after 1 s) and gives `{exitCode: null}`.
 * `stdin`: written to the child's stdin, then closed (absent: no stdin).
 * Never throws. `cpuMs`: the child's CPU time, from /proc/self/stat (src/sources/child-cpu.ts).
 * Its pipes are drained by this thread's event loop: a child printing more than a pipe
 * holds (64 KiB) waits while this thread is busy — src/sources/exec-off-thread.ts reads on
 * a thread of its own for that.
 *
 * The child leads its own process group, so what it starts goes with it: coreutils
 * `timeout` (the trace monitor's bound) puts its command in a group apart from the
 * terminal's, where a Ctrl-C never reaches it; killing the group does. Groups still
 * running when nodescope exits (any exit that runs `exit` handlers) get SIGKILL.
 */
export async function runProcess(argv: readonly string[], timeoutMs: number, now: () => number = Date.now, signal?: AbortSignal, stdin?: string): Promise<ExecResult> {
  const { stdoutBytes, ...rest } = await runProcessRaw(argv, timeoutMs, now, signal, {}, stdin);
  return { ...rest, stdout: stdoutBytes.toString('utf8') };
}

/** {@link runProcess} with stdout as bytes; `hooks` hear of the child's pid (the exec worker shares them with the main thread). */
export function runProcessRaw(argv: readonly string[], timeoutMs: number, now: () => number = Date.now, signal?: AbortSignal, hooks: GroupHooks = {}, stdin?: string): Promise<RawExecResult> {
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
    let timedOut = false;
    let settled = false;
    const finish = (r: Omit<ExecResult, 'argv' | 'startedAt' | 'durationMs' | 'stdout' | 'stderr'>, extraErr = '') => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({
        argv: [...argv],
        stdoutBytes: Buffer.concat(out),
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
    const child = spawn(cmd ?? '', args, { stdio: [stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'], env: { ...process.env, LC_ALL: 'C' }, detached: true });
    // A command that exits before reading it all closes the pipe (EPIPE): its exit says why.
    if (stdin !== undefined) child.stdin?.on('error', () => {}).end(stdin);
    const pid = child.pid;
    if (pid !== undefined) {
      liveGroups.add(pid);
      hooks.spawned?.(pid);
    }
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
      if (pid !== undefined) {
        liveGroups.delete(pid);
        hooks.gone?.(pid);
      }
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
