/**
 * The cleanup registry (src/cleanup.ts) in a real child process, with signal-exit loaded
 * after the undo is registered — as the TUI does (the pod first, then Ink) — so a signal
 * must still wait for the async undo: SIGINT, SIGTERM, SIGHUP, an uncaught error, and an
 * undo that never finishes (the bound, and the message naming what is left).
 * Runs the tsc output dist/src/cleanup.js (`npx tsc -p .` builds it).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/paths.js';

const CLEANUP = path.join(packageRoot(), 'dist', 'src', 'cleanup.js');
const SIGNAL_EXIT = path.join(packageRoot(), 'node_modules', 'signal-exit', 'index.js');

/** A child that registers an undo (`undoMs` long; Infinity never ends), then loads signal-exit like Ink, then waits. */
function child(undoMs: number, then: 'wait' | 'throw' = 'wait') {
  if (!existsSync(CLEANUP)) throw new Error(`${CLEANUP} is missing: build first (npx tsc -p .)`);
  const marker = path.join(mkdtempSync(path.join(tmpdir(), 'nodescope-cleanup-')), 'undone');
  const script = `
    import { createRequire } from 'node:module';
    import { writeFileSync } from 'node:fs';
    const { onCleanup } = await import(${JSON.stringify(pathToFileURL(CLEANUP).href)});
    onCleanup('delete the test pod', () => new Promise((resolve) => {
      if (${Number.isFinite(undoMs)}) setTimeout(() => { writeFileSync(${JSON.stringify(marker)}, 'yes'); resolve(); }, ${Number.isFinite(undoMs) ? undoMs : 0});
    }), { leftBehind: 'test pod default/p1: kubectl delete pod -n default p1' });
    const onExit = createRequire(import.meta.url)(${JSON.stringify(SIGNAL_EXIT)});
    onExit(() => undefined, { alwaysLast: false });
    ${then === 'throw' ? "setTimeout(() => { throw new Error('boom from a timer'); }, 100);" : ''}
    setInterval(() => undefined, 1000);
    console.log('ready');
  `;
  const p = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const ready = new Promise<void>((resolve) => p.stdout.on('data', (d: Buffer) => d.toString().includes('ready') && resolve()));
  const started = Date.now();
  const done = new Promise<{ code: number | null; signal: string | null; ms: number; stderr: string; undone: boolean }>((resolve) =>
    p.on('close', (code, signal) => resolve({ code, signal, ms: Date.now() - started, stderr, undone: existsSync(marker) && readFileSync(marker, 'utf8') === 'yes' })),
  );
  return { p, ready, done };
}

describe('cleanup on every exit path (real process, signal-exit loaded as Ink loads it)', () => {
  it.each([
    ['SIGINT', 130],
    ['SIGTERM', 143],
    ['SIGHUP', 129],
  ] as const)('%s waits for the async undo, then exits %i', async (sig, code) => {
    const c = child(700);
    await c.ready;
    c.p.kill(sig);
    const r = await c.done;
    expect(r.undone, r.stderr).toBe(true);
    expect(r.signal).toBeNull();
    expect(r.code).toBe(code);
  }, 20_000);

  it('an uncaught error runs the undo, prints the error after it, exits 2', async () => {
    const c = child(300, 'throw');
    const r = await c.done;
    expect(r.undone, r.stderr).toBe(true);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('boom from a timer');
  }, 20_000);

  it('an undo that never finishes is given up within the bound, and what it leaves is named', async () => {
    const c = child(Infinity);
    await c.ready;
    c.p.kill('SIGTERM');
    const r = await c.done;
    expect(r.code).toBe(143);
    expect(r.ms).toBeLessThan(10_000);
    expect(r.stderr).toContain('left behind:');
    expect(r.stderr).toContain('test pod default/p1: kubectl delete pod -n default p1');
  }, 20_000);

  it('a second SIGINT while undoing does not cut the undo short', async () => {
    const c = child(1500);
    await c.ready;
    c.p.kill('SIGINT');
    await new Promise((r) => setTimeout(r, 300));
    c.p.kill('SIGINT');
    const r = await c.done;
    expect(r.undone, r.stderr).toBe(true);
    expect(r.code).toBe(130);
    expect(r.stderr).toContain('SIGINT again: still undoing');
  }, 20_000);
});
