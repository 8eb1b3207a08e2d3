/**
 * Test helper: another nodescope run's record (src/run-record.ts) held by a separate
 * process, optionally in its own PID namespace (`unshare --pid --fork`), so the sweep's
 * rule is tested against a real listener and a real SIGKILL, not a stub.
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { runsDir } from '../../src/run-record.js';

/** A run record held by a child process. */
export interface HeldRun {
  readonly id: string;
  /** The holder's pid in this PID namespace. */
  readonly pid: number;
  /** SIGKILL the holder (its record stays, refused: a gone run); resolves when it is dead. */
  kill(): Promise<void>;
}

/** Whether `unshare --pid` works here (root, util-linux). */
export const canUnsharePid = spawnSync('unshare', ['--pid', '--fork', '--kill-child', 'true']).status === 0;

/**
 * Starts a process holding the record of a new run id in `dir` (default: this process's
 * runs directory); `pidns`: in a new PID namespace. Resolves once it listens.
 */
export async function holdRun(options: { dir?: string; pidns?: boolean } = {}): Promise<HeldRun> {
  const dir = options.dir ?? runsDir();
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const id = randomBytes(6).toString('hex');
  const script = `require('net').createServer((c) => c.destroy()).listen(${JSON.stringify(path.join(dir, `${id}.sock`))}, () => console.log('ready'))`;
  const argv = options.pidns ? ['unshare', '--pid', '--fork', '--kill-child', process.execPath, '-e', script] : [process.execPath, '-e', script];
  const child = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => d.toString().includes('ready') && resolve());
    child.once('exit', (code) => reject(new Error(`run record holder exited (${code}) before listening`)));
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    id,
    pid: child.pid!,
    kill: async () => {
      child.kill('SIGKILL');
      await exited;
    },
  };
}
