/**
 * Runs the built binary as a lab test's user would: `HOME` set to the test's folder (its
 * ~/.ssh, no kubeconfig), no colour, PATH kept. Resolves with the exit code and both
 * streams; never rejects (a spawn failure shows as a null code and the error on stderr).
 */
import { spawn } from 'node:child_process';
import { BINARY } from './tmux.js';

/** Exit code (null when killed) and the whole stdout and stderr of one run. */
export interface BinaryRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** `node dist/bin/nodescope.js ARGS` with `HOME=home` and an empty KUBECONFIG. */
export function runBinary(args: readonly string[], home: string): Promise<BinaryRun> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BINARY, ...args], { env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: home, KUBECONFIG: '', NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', (e) => resolve({ code: null, stdout, stderr: `${stderr}${e.message}\n` }));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
