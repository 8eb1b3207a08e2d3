/**
 * Undo on every exit path: the one registry for everything nodescope creates or starts
 * (a debug pod, a temporary nftrace table, the `nft monitor trace` child, the TUI's hold
 * on the terminal). The undos run once, latest first, within one bounded budget
 * ({@link CLEANUP_BUDGET_MS}) on normal exit, SIGINT, SIGTERM, SIGHUP (a closed terminal:
 * tmux kill-pane, a dropped SSH session), EPIPE/EIO on stdout and an uncaught error or
 * rejection — then the process exits. What did not finish in time is named on stderr,
 * with how to remove it, after the TUI has left the screen. SIGKILL runs nothing: what it
 * leaves is bounded by the pod's deadline and the next run's sweeps (README, "What runs on
 * a node").
 *
 * Why the handlers stay installed with `process.on` (never `once`) from the start:
 * signal-exit (v3, loaded by Ink) re-raises a signal when, at delivery, its own listener
 * is the only one left (`process.listeners(sig).length === emitter.count`). A `once`
 * listener removes itself before it is called, so signal-exit saw itself alone and
 * killed the process while our async undo was still waiting for the API server (issue 24,
 * item 2). With a permanent listener signal-exit stands aside on signals, and still
 * restores the terminal when we call `process.exit`.
 */

import { isatty } from 'node:tty';
import { keepRunRecord } from './run-record.js';

/** Total time the undos may take at exit, ms (quit must not hang on an API that does not answer). */
export const CLEANUP_BUDGET_MS = 7_000;
/** At most this long for an undo that leaves nothing behind (stopping the session, leaving the TUI), ms. */
const HOUSEKEEPING_MS = 1_000;
/** After this long an unfinished undo is announced on stderr ("still deleting …"), ms. */
const SLOW_NOTICE_MS = 1_500;

/** Options of {@link onCleanup}. */
export interface CleanupOptions {
  /**
   * What stays on the node or in the cluster if this undo does not finish, with how to
   * remove it (e.g. `debug pod default/x — kubectl delete pod -n default x`). Undos
   * without it are housekeeping: given at most 1 s, never reported as left behind.
   */
  readonly leftBehind?: string;
}

type Undo = { readonly label: string; readonly run: () => Promise<void>; readonly leftBehind?: string };

const undos: Undo[] = [];
let installed = false;
let running: Promise<readonly string[]> | null = null;
let exiting: { code: number } | null = null;
/** Messages held until the TUI has left the screen (the uncaught error's stack). */
const pending: string[] = [];

/** Writes to stderr, ignoring a terminal that is gone (EIO after a hang-up). */
function say(text: string): void {
  try {
    process.stderr.write(text);
  } catch {
    // nowhere to say it
  }
}

/**
 * Registers an undo; returns a function that unregisters it (after it was done by hand).
 * The undo may be async; it is given the time left of the budget and no more.
 */
export function onCleanup(label: string, run: () => Promise<void> | void, options: CleanupOptions = {}): () => void {
  installExitHandlers();
  const entry: Undo = { label, run: async () => run(), ...(options.leftBehind ? { leftBehind: options.leftBehind } : {}) };
  undos.push(entry);
  return () => {
    const i = undos.indexOf(entry);
    if (i >= 0) undos.splice(i, 1);
  };
}

/** Labels of the undos registered now, latest first (tests, and the "left behind" list). */
export function pendingCleanups(): string[] {
  return undos.map((u) => u.label).reverse();
}

const timeout = (ms: number) => new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), Math.max(0, ms)).unref());

function flushPending(): void {
  while (pending.length) say(pending.shift()!);
}

/**
 * Runs every registered undo (latest first), each at most once, within `budgetMs` in all.
 * An undo that throws or runs out of time is reported on stderr with what it leaves
 * behind; nothing is thrown. Resolves with the `leftBehind` texts of what did not finish.
 * Concurrent calls share one run.
 */
export function runCleanups(budgetMs: number = CLEANUP_BUDGET_MS): Promise<readonly string[]> {
  if (running) return running;
  const run = (async () => {
    const end = Date.now() + budgetMs;
    const left: string[] = [];
    while (undos.length) {
      const u = undos.pop()!;
      if (u.leftBehind) flushPending(); // the housekeeping (leaving the TUI) came first
      const remaining = end - Date.now();
      const allowed = u.leftBehind ? remaining : Math.min(remaining, HOUSEKEEPING_MS);
      if (allowed <= 0) {
        if (u.leftBehind) left.push(u.leftBehind);
        continue;
      }
      const slow = u.leftBehind
        ? setTimeout(() => say(`nodescope: still undoing: ${u.label} (giving up in ${Math.ceil((end - Date.now()) / 1000)} s)\n`), Math.max(0, Math.min(SLOW_NOTICE_MS, allowed - 500)))
        : undefined;
      slow?.unref();
      try {
        const outcome = await Promise.race([u.run().then(() => 'done' as const), timeout(allowed)]);
        if (outcome === 'timeout' && u.leftBehind) {
          left.push(u.leftBehind);
          say(`nodescope: ${u.label}: no answer within ${Math.round(allowed / 100) / 10} s\n`);
        }
      } catch (e) {
        say(`nodescope: ${u.label} failed: ${(e as Error)?.message ?? String(e)}\n`);
        if (u.leftBehind) left.push(u.leftBehind);
      } finally {
        if (slow) clearTimeout(slow);
      }
    }
    flushPending();
    if (left.length) say(`nodescope: left behind:\n${left.map((l) => `  ${l}\n`).join('')}`);
    return left;
  })();
  running = run;
  void run.finally(() => {
    if (running === run) running = null;
  });
  return run;
}

/**
 * The one way out: runs the undos (bounded), prints what is held, then exits with `code`
 * (the first caller's code wins: a signal during a normal exit keeps 130/143/129; a
 * normal exit during a signal's cleanup keeps the signal's). `message` is printed after
 * the TUI has left the screen.
 */
export async function exitAfterCleanup(code: number, message?: string): Promise<never> {
  if (message) pending.push(message);
  exiting ??= { code };
  const left = await runCleanups();
  flushPending();
  if (left.length) {
    // Something stays on the node or in the cluster: not a clean success, and the next
    // run here must find this run's record (refused: gone) to remove it.
    keepRunRecord();
    if (exiting.code === 0) exiting.code = 1;
  }
  // A pipe's reader may be slower than we write (Node writes to pipes asynchronously):
  // process.exit drops what is still queued, so a big document piped on was cut at 64 KiB.
  // Not on a signal's way out: a reader that never reads must not hold Ctrl-C.
  if (exiting.code < 128) await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
  if (terminalGone()) {
    // Node's exit restores the terminal's mode and aborts when the terminal is gone
    // (tcsetattr: EIO after a hang-up); end as a hang-up ends a program instead.
    process.removeAllListeners('SIGHUP');
    process.kill(process.pid, 'SIGHUP');
    await new Promise((r) => setTimeout(r, 200));
  }
  process.exit(exiting.code);
}

/**
 * Resolves when what was written to `stream` has been handed to the OS, at once when nothing
 * is queued or the stream is gone (EPIPE: the reader left; the write's callback gets the error).
 */
function flushed(stream: NodeJS.WriteStream): Promise<void> {
  if (stream.destroyed || stream.writableLength === 0) return Promise.resolve();
  return new Promise((resolve) => {
    stream.write('', () => resolve());
  });
}

/** The file descriptors (0–2) that were terminals when the handlers were installed. */
let ttysAtStart: number[] = [];

/** Whether a terminal we started on has hung up (isatty fails with EIO afterwards). */
function terminalGone(): boolean {
  return ttysAtStart.some((fd) => !isatty(fd));
}

/** Exit codes of the signals we undo on: 128 + the signal number, as a shell reports them. */
const SIGNAL_CODES = { SIGHUP: 129, SIGINT: 130, SIGTERM: 143 } as const;

/**
 * Installs the signal, hang-up and uncaught-error handlers (idempotent). Called by the
 * command line at start — before Ink loads signal-exit — and by {@link onCleanup}.
 */
export function installExitHandlers(): void {
  if (installed) return;
  installed = true;
  ttysAtStart = [0, 1, 2].filter((fd) => isatty(fd));
  for (const sig of Object.keys(SIGNAL_CODES) as (keyof typeof SIGNAL_CODES)[]) {
    process.on(sig, () => {
      if (exiting) {
        // A second Ctrl-C while undoing: the bound still holds; say so rather than die.
        if (sig !== 'SIGHUP') say(`nodescope: ${sig} again: still undoing (${pendingCleanups().length} left, at most ${CLEANUP_BUDGET_MS / 1000} s)\n`);
        return;
      }
      void exitAfterCleanup(SIGNAL_CODES[sig]);
    });
  }
  const fatal = (e: unknown) => {
    const text = e instanceof Error ? (e.stack ?? e.message) : String(e);
    if (exiting) return; // an echo of the shutdown (a write to a closed terminal): already on the way out
    void exitAfterCleanup(2, `nodescope: internal error (please report): ${text}\n`);
  };
  process.on('uncaughtException', fatal);
  process.on('unhandledRejection', fatal);
  // The terminal or the reader is gone: EIO (hang-up) or EPIPE (`| head`). Nothing more
  // can be shown; undo and leave (0 for EPIPE: closing the pipe is the reader's choice).
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (e: NodeJS.ErrnoException) => {
      if (exiting) return;
      void exitAfterCleanup(e.code === 'EPIPE' ? 0 : e.code === 'EIO' ? SIGNAL_CODES.SIGHUP : 2);
    });
  }
}
