/**
 * Runs the built binary as a lab test's user would. `runBinary(args, home)`: `HOME` set to
 * the test's folder (its ~/.ssh, no kubeconfig), no colour, PATH kept; resolves with the
 * exit code and both streams. `startBinary(args, options)`: the same process with the
 * test's own environment, optionally under another command (`ip netns exec NS`), with the
 * child kept so a test can signal it and watch stderr as it comes. Neither rejects (a
 * spawn failure shows as a null code and the error on stderr).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { BINARY } from './tmux.js';

/** Exit code and signal (code null when killed) and the whole stdout and stderr of one run. */
export interface BinaryRun {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** How {@link startBinary} starts the binary. */
export interface BinaryOptions {
  /** The child's whole environment (nothing of this process's is added). */
  readonly env: NodeJS.ProcessEnv;
  /** A command the binary runs under, e.g. `['ip', 'netns', 'exec', NS]`; none by default. */
  readonly under?: readonly string[];
  /** Called with all of stderr so far, each time more arrives. */
  readonly onStderr?: (all: string) => void;
}

/** A started run: the child (to signal), its end, and stderr so far. */
export interface RunningBinary {
  readonly child: ChildProcess;
  readonly done: Promise<BinaryRun>;
  stderr(): string;
}

/** The plain environment of a lab run: PATH kept, `HOME=home`, an empty KUBECONFIG, no colour. */
export function plainEnv(home: string): NodeJS.ProcessEnv {
  return { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: home, KUBECONFIG: '', NO_COLOR: '1' };
}

/** Starts `node dist/bin/nodescope.js ARGS` (under `options.under` when given). */
export function startBinary(args: readonly string[], options: BinaryOptions): RunningBinary {
  const [command, ...prefix] = [...(options.under ?? []), process.execPath];
  const child = spawn(command!, [...prefix, BINARY, ...args], { env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => {
    stderr += d.toString();
    options.onStderr?.(stderr);
  });
  const done = new Promise<BinaryRun>((resolve) => {
    child.on('error', (e) => resolve({ code: null, signal: null, stdout, stderr: `${stderr}${e.message}\n` }));
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  return { child, done, stderr: () => stderr };
}

/** `node dist/bin/nodescope.js ARGS` with {@link plainEnv}`(home)`, to its end. */
export function runBinary(args: readonly string[], home: string): Promise<BinaryRun> {
  return startBinary(args, { env: plainEnv(home) }).done;
}
