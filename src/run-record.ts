/**
 * This run's identity: a random run id, written on what nodescope leaves on a node or in
 * the cluster (the debug pod's `nodescope/run` annotation, the live trace table's name),
 * and recorded on this machine as a Unix socket that only the live process listens on:
 * `$XDG_STATE_HOME/nodescope/runs/<id>.sock` (default `~/.local/state/…`).
 *
 * Whether a run is alive is asked of the socket, not of a PID: a connect succeeds while the
 * process holds its listening socket, is refused once the process is gone (the kernel
 * closes it even after SIGKILL; the file stays), and finds no file for a run that was never
 * recorded here. Two runs that share `user@host` but not a PID namespace (a container,
 * `unshare -p`) share the file system or they do not: either way neither mistakes the other
 * for a dead run (a PID of one namespace can be a dead or a reused PID in the other).
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import os from 'node:os';
import path from 'node:path';

/** A run id: 12 lower-case hex digits (48 random bits). */
export const RUN_ID_PATTERN = /^[0-9a-f]{12}$/;

/** What a run record says about a run id. */
export type RunState =
  /** Its process listens on its socket: a live run on this machine. */
  | 'alive'
  /** Its socket file is here and nobody listens: the run is gone (killed, crashed). */
  | 'gone'
  /** No record here (another machine's or container's run), or it cannot be read. */
  | 'unknown';

/** The directory of run records: `$XDG_STATE_HOME/nodescope/runs` (default `~/.local/state/nodescope/runs`). */
export function runsDir(env: NodeJS.ProcessEnv = process.env): string {
  const state = env['XDG_STATE_HOME'] || path.join(os.homedir(), '.local', 'state');
  return path.join(state, 'nodescope', 'runs');
}

function socketPath(id: string, dir: string): string {
  if (!RUN_ID_PATTERN.test(id)) throw new Error(`not a run id: ${JSON.stringify(id)}`);
  return path.join(dir, `${id}.sock`);
}

/** This process's run. `recorded` is false when the record could not be made (then no sweep can claim its leftovers as gone). */
export interface CurrentRun {
  readonly id: string;
  readonly recorded: boolean;
  /** Why it is not recorded (the file system's error), for a progress line. */
  readonly problem?: string;
}

let current: Promise<CurrentRun> | undefined;
let server: Server | undefined;
let keep = false;

/**
 * Keeps this run's record file at exit: something it made was left behind, and the next
 * run must find the record refused (gone) to remove it. Called by the cleanup registry.
 */
export function keepRunRecord(): void {
  keep = true;
}

/**
 * This process's run id, recorded on first use (listening on its socket, unref'd so it
 * never keeps the process alive; the file is removed at exit). Never throws.
 */
export function currentRun(dir: string = runsDir()): Promise<CurrentRun> {
  current ??= (async () => {
    const id = randomBytes(6).toString('hex');
    const file = socketPath(id, dir);
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      const s = createServer((c) => c.destroy());
      await new Promise<void>((resolve, reject) => {
        s.once('error', reject);
        s.listen(file, () => resolve());
      });
      s.on('error', () => undefined);
      s.unref();
      server = s;
      process.on('exit', () => {
        if (!keep) rmSync(file, { force: true });
      });
      return { id, recorded: true };
    } catch (e) {
      return { id, recorded: false, problem: `${file}: ${(e as Error).message}` };
    }
  })();
  return current;
}

/** Whether this process's record is listening (tests). */
export function runRecordListening(): boolean {
  return server?.listening ?? false;
}

/**
 * What the record of run `id` in `dir` says: `alive`, `gone` or `unknown` (see
 * {@link RunState}). An id that is not {@link RUN_ID_PATTERN} is `unknown` (annotations
 * are input from the cluster: never a path). Waits at most `timeoutMs` (default 1,000 ms).
 */
export function runState(id: string, dir: string = runsDir(), timeoutMs = 1_000): Promise<RunState> {
  if (!RUN_ID_PATTERN.test(id)) return Promise.resolve('unknown');
  return new Promise((resolve) => {
    const c = connect(socketPath(id, dir));
    const done = (s: RunState) => {
      clearTimeout(timer);
      c.destroy();
      resolve(s);
    };
    const timer = setTimeout(() => done('unknown'), timeoutMs);
    c.once('connect', () => done('alive'));
    c.once('error', (e: NodeJS.ErrnoException) => done(e.code === 'ECONNREFUSED' ? 'gone' : 'unknown'));
  });
}
