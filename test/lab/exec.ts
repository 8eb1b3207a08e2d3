/**
 * Running commands for the node lab: on the host, and inside a network namespace with
 * `ip netns exec NS argv…`. Results use the project's {@link ExecResult} shape
 * (src/sources/transport.ts) so captures made in the lab look like any other probe.
 */
import { execFile } from 'node:child_process';
import { TransportError, tail } from '../../src/errors.js';
import type { ExecResult } from '../../src/sources/transport.js';

/** Options of one command: `timeoutMs` (default 15,000 ms) and text fed to stdin. */
export interface RunOptions {
  readonly timeoutMs?: number;
  readonly input?: string;
}

/**
 * Runs `argv` on the host and returns what it printed. Never throws for a failing
 * command: exit code, `missing` (binary not found) and `timedOut` say what happened.
 */
export function run(argv: readonly string[], options: RunOptions = {}): Promise<ExecResult> {
  const [file, ...args] = argv;
  const startedAt = new Date();
  const timeoutMs = options.timeoutMs ?? 15_000;
  return new Promise((resolve) => {
    if (file === undefined) {
      resolve({ argv, stdout: '', stderr: 'empty argv', exitCode: null, startedAt: startedAt.toISOString(), durationMs: 0, missing: true });
      return;
    }
    const child = execFile(file, args, { timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024, encoding: 'utf8' }, (err, stdout, stderr) => {
      const durationMs = Date.now() - startedAt.getTime();
      const base = { argv, stdout, stderr, startedAt: startedAt.toISOString(), durationMs };
      if (err === null) {
        resolve({ ...base, exitCode: 0 });
        return;
      }
      const e = err as NodeJS.ErrnoException & { code?: string | number; killed?: boolean; signal?: string | null };
      if (e.code === 'ENOENT') resolve({ ...base, exitCode: null, missing: true });
      else if (e.killed === true || (e.signal !== null && e.signal !== undefined && typeof e.code !== 'number')) {
        resolve({ ...base, exitCode: null, timedOut: e.killed === true });
      } else resolve({ ...base, exitCode: typeof e.code === 'number' ? e.code : 1 });
    });
    if (options.input !== undefined) child.stdin?.end(options.input);
  });
}

/** Like {@link run} but throws {@link TransportError} unless the command exits 0. */
export async function runOk(argv: readonly string[], options: RunOptions = {}, node = 'local'): Promise<ExecResult> {
  const r = await run(argv, options);
  if (r.exitCode !== 0) {
    const why = r.missing ? 'not found' : r.timedOut ? `timed out after ${options.timeoutMs ?? 15_000} ms` : `exited ${r.exitCode}`;
    throw new TransportError(`${argv.join(' ')}: ${why}: ${tail(r.stderr, 400).trim()}`, node, argv, r.exitCode, tail(r.stderr));
  }
  return r;
}

/**
 * Runs `argv` inside network namespace `ns` (`ip netns exec ns argv…`). Never throws for
 * a failing command; see {@link run}. The result's `argv` is the full `ip netns exec` argv.
 */
export function nsExec(ns: string, argv: readonly string[], options: RunOptions = {}): Promise<ExecResult> {
  return run(['ip', 'netns', 'exec', ns, ...argv], options);
}

/** Like {@link nsExec} but throws {@link TransportError} (node `netns:NS`) unless it exits 0. */
export function nsExecOk(ns: string, argv: readonly string[], options: RunOptions = {}): Promise<ExecResult> {
  return runOk(['ip', 'netns', 'exec', ns, ...argv], options, `netns:${ns}`);
}

/** True when `tool` is on PATH. */
export async function haveTool(tool: string): Promise<boolean> {
  const r = await run(['sh', '-c', `command -v ${tool}`]);
  return r.exitCode === 0;
}

/** Resolves after `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
