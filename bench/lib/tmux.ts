/**
 * Drives a real program in a real terminal: a detached tmux session of a fixed size,
 * whose screen is read with `tmux capture-pane -p` (the way test/ui/e2e-tmux.test.ts
 * drives nodescope). Times are wall-clock ms from `performance.now()`.
 *
 * Resolution: each screen read is one `tmux capture-pane` process (~2–5 ms on an idle
 * machine), so a "frame seen" time is late by at most one read; {@link tmuxFloorMs}
 * measures that overhead on a program that answers instantly (`cat`).
 */
import { spawnSync } from 'node:child_process';

const tmux = (...args: string[]) => spawnSync('tmux', args, { encoding: 'utf8' });

/** True when a tmux binary answers. */
export function tmuxAvailable(): boolean {
  return tmux('-V').status === 0;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One program in one tmux session. Always {@link kill} it (also on failure). */
export class TmuxProgram {
  private constructor(readonly name: string, readonly startedAt: number) {}

  /**
   * Starts `command` (a shell command line) in a `cols`×`rows` terminal; throws when tmux refuses.
   * `CI=false`: a tmux server started under CI passes `CI` on, and Ink then draws only the last
   * frame (is-in-ci) — the screen would stay blank until the program exits.
   */
  static start(name: string, command: string, cols = 120, rows = 40): TmuxProgram {
    tmux('kill-session', '-t', name);
    let startedAt = performance.now();
    let r = tmux('new-session', '-d', '-s', name, '-x', String(cols), '-y', String(rows), `env CI=false ${command}`);
    // A new client can reach a server that is exiting because its last session was just
    // killed ("server exited unexpectedly"): that race is tmux's, so try again.
    for (let retry = 0; r.status !== 0 && retry < 5; retry++) {
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
      tmux('kill-session', '-t', name);
      startedAt = performance.now();
      r = tmux('new-session', '-d', '-s', name, '-x', String(cols), '-y', String(rows), `env CI=false ${command}`);
    }
    if (r.status !== 0) throw new Error(`tmux new-session failed: ${r.stderr}`);
    return new TmuxProgram(name, startedAt);
  }

  screen(): string {
    return tmux('capture-pane', '-p', '-t', this.name).stdout;
  }

  alive(): boolean {
    return tmux('has-session', '-t', this.name).status === 0;
  }

  /**
   * Polls until `test(screen)` holds, every `everyMs` ms; returns the time it was first seen
   * (ms since `since`, default the program's start) and the screen. Throws after `timeoutMs`.
   * Each poll is a tmux client process (~3–8 ms of CPU with the tmux server's share): at the
   * default 2 ms, a long wait keeps about one core busy, which a 2-core machine takes from
   * the program measured — long waits whose time is measured otherwise poll less often.
   */
  async waitFor(test: (screen: string) => boolean, timeoutMs: number, since = this.startedAt, everyMs = 2): Promise<{ ms: number; screen: string }> {
    const deadline = performance.now() + timeoutMs;
    while (performance.now() < deadline) {
      const s = this.screen();
      if (test(s)) return { ms: performance.now() - since, screen: s };
      await sleep(everyMs);
    }
    throw new Error(`${this.name}: screen never matched within ${timeoutMs} ms:\n${this.screen()}`);
  }

  /** Sends keys (tmux key names: `j`, `Enter`, `Escape`); returns when tmux accepted them. */
  keys(...keys: string[]): void {
    for (const k of keys) tmux('send-keys', '-t', this.name, k);
  }

  /** Types `text` literally (`send-keys -l`: no key-name lookup). */
  type(text: string): void {
    tmux('send-keys', '-t', this.name, '-l', text);
  }

  /**
   * Sends one key and returns ms until the screen differs from what it was before (the
   * next frame), or null when nothing changed within `timeoutMs`.
   */
  async keyToFrame(key: string, timeoutMs = 5000): Promise<number | null> {
    const before = this.screen();
    const t0 = performance.now();
    tmux('send-keys', '-t', this.name, key);
    try {
      return (await this.waitFor((s) => s !== before, timeoutMs, t0)).ms;
    } catch {
      return null;
    }
  }

  kill(): void {
    tmux('kill-session', '-t', this.name);
  }
}

/** The tmux round trip alone: a key to `cat`, until its echo shows (median of `n`). */
export async function tmuxFloorMs(n = 10): Promise<number[]> {
  const p = TmuxProgram.start(`nodescope-bench-floor-${process.pid}`, 'cat', 80, 10);
  try {
    await sleep(200);
    const out: number[] = [];
    for (let i = 0; i < n; i++) {
      const ms = await p.keyToFrame('x');
      if (ms !== null) out.push(ms);
    }
    return out;
  } finally {
    p.kill();
  }
}
