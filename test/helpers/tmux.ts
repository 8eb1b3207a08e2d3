/**
 * Driving the real binary in a real terminal (tmux) for end-to-end tests: start it in
 * a detached session of a given size, type keys like a user, and wait for the screen.
 */
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { packageRoot } from '../../src/paths.js';

/** The built binary every end-to-end test runs (`npm test` builds it first). */
export const BINARY = path.join(packageRoot(), 'dist', 'bin', 'nodescope.js');

/**
 * Whether tmux can run the binary here: false (with a printed reason) when tmux is
 * missing, a thrown error when it is required (CI) or when the binary is not built.
 */
export function tmuxAvailable(what: string): boolean {
  const ok = spawnSync('tmux', ['-V']).status === 0;
  if (!ok && process.env.NODESCOPE_REQUIRE_LAB === '1') throw new Error(`tmux is required for ${what}`);
  if (!ok) console.warn(`skipping ${what}: tmux is not installed`);
  if (ok && !existsSync(BINARY)) throw new Error(`${BINARY} is missing: run \`npm run build\` (npm test does)`);
  return ok;
}

/**
 * `tmux [tmuxArgs] new-session -d -s name -x width -y height command`, tried again (up to 5
 * times, 200 ms apart) when it fails: a new client can reach a server that is exiting because
 * the last session was just killed ("server exited unexpectedly", about 1 start in 300 here).
 * Returns the last try's result; a failure's stderr is printed.
 */
export function newTmuxSession(name: string, width: number, height: number, command: string, tmuxArgs: readonly string[] = []): SpawnSyncReturns<string> {
  const run = () => spawnSync('tmux', [...tmuxArgs, 'new-session', '-d', '-s', name, '-x', String(width), '-y', String(height), command], { encoding: 'utf8' });
  let r = run();
  for (let retry = 0; r.status !== 0 && retry < 5; retry++) {
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
    spawnSync('tmux', [...tmuxArgs, 'kill-session', '-t', name]);
    r = run();
  }
  if (r.status !== 0) console.error(`tmux new-session ${name} failed (${r.status}): ${r.stderr}`);
  return r;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One tmux session running one command. */
export class TmuxSession {
  constructor(readonly name: string) {}

  private tmux(...args: string[]) {
    return spawnSync('tmux', args, { encoding: 'utf8' });
  }

  /**
   * Starts `command` in a `width` × `height` terminal; returns tmux's exit status.
   * `CI=false`: Ink draws only the last frame when it believes it runs in CI (is-in-ci
   * reads CI and CI_* variables), and a tmux server started by the test inherits them.
   */
  start(command: string, width: number, height: number): number | null {
    return newTmuxSession(this.name, width, height, `env CI=false ${command}`).status;
  }

  /** The screen as text. */
  screen(): string {
    return this.tmux('capture-pane', '-p', '-t', this.name).stdout;
  }

  /** Waits (at most `ms`, default 15 s) until the screen shows every text; returns the screen. */
  async waitFor(texts: readonly (string | RegExp)[], ms = 15_000): Promise<string> {
    for (const started = Date.now(); Date.now() - started < ms; await sleep(100)) {
      const s = this.screen();
      if (texts.every((t) => (typeof t === 'string' ? s.includes(t) : t.test(s)))) return s;
    }
    throw new Error(`screen never showed ${texts.map(String).join(' and ')}:\n${this.screen()}`);
  }

  /** Types keys one at a time, as tmux key names (`Enter`, `Escape`, `j`). */
  async keys(...keys: string[]): Promise<void> {
    for (const key of keys) {
      this.tmux('send-keys', '-t', this.name, key);
      await sleep(150);
    }
  }

  /** Whether the session still runs (the program has not exited). */
  alive(): boolean {
    return this.tmux('has-session', '-t', this.name).status === 0;
  }

  /** Waits (at most 5 s) for the program to exit. */
  async waitExit(): Promise<void> {
    for (let i = 0; i < 50 && this.alive(); i++) await sleep(100);
  }

  kill(): void {
    this.tmux('kill-session', '-t', this.name);
  }
}
