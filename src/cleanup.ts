/**
 * Undo on every exit path. Anything nodescope changes on a node (a debug pod, a
 * temporary nftrace table) registers its undo here; the undos run once, in
 * reverse order, on normal exit, Ctrl-C (SIGINT), SIGTERM, SIGHUP, and an
 * uncaught error — then the process exits.
 */

type Undo = { readonly label: string; readonly run: () => Promise<void> };

const undos: Undo[] = [];
let installed = false;
let running: Promise<void> | null = null;

/** Registers an undo; returns a function that unregisters it (after it was done by hand). */
export function onCleanup(label: string, run: () => Promise<void>): () => void {
  installHandlers();
  const entry = { label, run };
  undos.push(entry);
  return () => {
    const i = undos.indexOf(entry);
    if (i >= 0) undos.splice(i, 1);
  };
}

/** Runs every registered undo (latest first), each at most once; errors are reported on stderr, not thrown. */
export function runCleanups(): Promise<void> {
  running ??= (async () => {
    while (undos.length) {
      const u = undos.pop()!;
      try {
        await u.run();
      } catch (e) {
        process.stderr.write(`nodescope: cleanup "${u.label}" failed: ${(e as Error).message}\n`);
      }
    }
    running = null;
  })();
  return running;
}

function installHandlers(): void {
  if (installed) return;
  installed = true;
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(sig, () => {
      void runCleanups().finally(() => process.exit(sig === 'SIGINT' ? 130 : 143));
    });
  }
  process.once('uncaughtException', (e) => {
    process.stderr.write(`nodescope: ${e.stack ?? e.message}\n`);
    void runCleanups().finally(() => process.exit(2));
  });
  process.once('unhandledRejection', (e) => {
    process.stderr.write(`nodescope: ${(e as Error)?.stack ?? String(e)}\n`);
    void runCleanups().finally(() => process.exit(2));
  });
}
