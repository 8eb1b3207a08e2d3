/**
 * The heavy dumps' reader on the exec worker (src/sources/exec-off-thread.ts, exec-worker.ts):
 * the same ExecResult as the in-thread runProcess (the reference) for megabytes of multi-byte
 * text, stderr, exit codes, a timed-out and an aborted command, a missing binary; the fallback
 * to this thread when no worker can start; and a child printing far more than a pipe holds ends
 * while this thread is in a synchronous loop (the in-thread reader would hold it until the loop
 * ends). The worker's script is tsc's output (dist/src/sources/exec-worker.js): run `npx tsc` first.
 */
import { describe, expect, it, vi } from 'vitest';
import { runProcess } from '../../src/sources/child-process.js';
import { execWorkerUrl, offThreadChildren, offThreadCounts, runProcessOffThread } from '../../src/sources/exec-off-thread.js';
import { LocalTransport } from '../../src/sources/local.js';
import type { ExecResult } from '../../src/sources/transport.js';

/** What both readers must agree on (the clock's fields and the CPU time differ run to run). */
const same = ({ startedAt: _s, durationMs: _d, cpuMs: _c, ...rest }: ExecResult) => rest;

const printer = `const s = 'ascii é 日本 🙂 '.repeat(40000); for (let i = 0; i < 4; i++) process.stdout.write(s); process.stderr.write('warn ü\\n'); process.exitCode = 3;`;

describe('runProcessOffThread', () => {
  it('has a worker script to run (tsc built)', () => {
    expect(execWorkerUrl()).toBeDefined();
  });

  it('gives the same result as the in-thread runProcess (megabytes of multi-byte text, stderr, exit code)', async () => {
    const before = offThreadCounts.worker;
    const inThread = await runProcess([process.execPath, '-e', printer], 20000);
    const offThread = await runProcessOffThread([process.execPath, '-e', printer], 20000);
    expect(offThreadCounts.worker).toBe(before + 1);
    expect(Buffer.byteLength(inThread.stdout)).toBeGreaterThan(3_000_000);
    expect(same(offThread)).toEqual(same(inThread));
    expect(offThread.stdout).toBe(inThread.stdout);
    expect([offThread.exitCode, offThread.stderr]).toEqual([3, 'warn ü\n']);
    expect(offThread.cpuMs).toBeGreaterThanOrEqual(0);
  });

  it('gives the same small outputs, a timed-out command with its partial output, and a missing binary', async () => {
    for (const [argv, timeout] of [
      [['sh', '-c', 'printf "a\\nb"; echo err >&2; exit 0'], 5000],
      [['sh', '-c', 'exit 7'], 5000],
      [['sh', '-c', 'echo partial; exec sleep 5'], 300],
      [['nodescope-no-such-binary-xyz'], 2000],
      [['sh', '-c', 'exit 127'], 2000],
    ] as const) {
      const inThread = await runProcess(argv, timeout);
      const offThread = await runProcessOffThread(argv, timeout);
      expect(same(offThread)).toEqual(same(inThread));
    }
    const killed = await runProcessOffThread(['sh', '-c', 'echo partial; exec sleep 5'], 300);
    expect([killed.timedOut, killed.stdout, killed.exitCode]).toEqual([true, 'partial\n', null]);
    const missing = await runProcessOffThread(['nodescope-no-such-binary-xyz'], 2000);
    expect([missing.missing, missing.stdout]).toEqual([true, '']);
  });

  it('ends a command when its signal aborts, before or while it runs', async () => {
    const early = new AbortController();
    early.abort();
    // Whether `sh` printed before the SIGTERM is a race in both readers: the ending is compared.
    const ending = ({ exitCode, timedOut, missing, stderr }: ExecResult) => ({ exitCode, timedOut, missing, stderr });
    const inThread = await runProcess(['sh', '-c', 'echo started; exec sleep 5'], 10000, Date.now, early.signal);
    const before = await runProcessOffThread(['sh', '-c', 'echo started; exec sleep 5'], 10000, Date.now, early.signal);
    expect(ending(before)).toEqual(ending(inThread));
    expect(before.exitCode).toBeNull();
    const late = new AbortController();
    const running = runProcessOffThread(['sh', '-c', 'echo started; exec sleep 5'], 10000, Date.now, late.signal);
    while (offThreadChildren() === 0) await new Promise((resolve) => setImmediate(resolve));
    late.abort();
    const r = await running;
    expect(r.exitCode).toBeNull();
    expect(r.timedOut).toBeUndefined();
    expect(offThreadChildren()).toBe(0);
  });

  it('runs on this thread when there is no worker script (the same result)', async () => {
    const transport = new LocalTransport();
    const viaTransport = await transport.exec(['sh', '-c', 'echo via'], { timeoutMs: 5000, readOffThread: true });
    expect(viaTransport.stdout).toBe('via\n');
    // The worker of this process is up by now: a missing script only matters at the first start,
    // so the fallback is shown with a module of its own.
    vi.resetModules();
    const { runProcessOffThread: fresh, offThreadCounts: counts } = await import('../../src/sources/exec-off-thread.js');
    expect(counts).not.toBe(offThreadCounts);
    const r = await fresh(['sh', '-c', 'echo fallback; exit 2'], 5000, Date.now, undefined, new URL('file:///nonexistent/exec-worker.js'));
    expect(same(r)).toEqual(same(await runProcess(['sh', '-c', 'echo fallback; exit 2'], 5000)));
    expect(counts).toEqual({ worker: 0, inThread: 1 });
  });

  it('starts the worker ahead of the first run when asked (LocalTransport.prepareOffThread), then runs on it', async () => {
    vi.resetModules();
    const fresh = await import('../../src/sources/exec-off-thread.js');
    const { LocalTransport: FreshLocal } = await import('../../src/sources/local.js');
    expect(fresh.execWorkerStarted()).toBe(false);
    const transport = new FreshLocal();
    transport.prepareOffThread();
    expect(fresh.execWorkerStarted()).toBe(true);
    transport.prepareOffThread();
    const r = await transport.exec(['sh', '-c', 'echo warm'], { timeoutMs: 5000, readOffThread: true });
    expect(r.stdout).toBe('warm\n');
    expect(fresh.offThreadCounts).toEqual({ worker: 1, inThread: 0 });
  });

  it('drains a child printing far more than a pipe holds while this thread is busy', async () => {
    // 4 MB, 64 pipes' worth, then the child's clock once the kernel took all of it (the write's
    // callback; Node's stdout on a socket queues in the child's memory until then): that time is
    // after a reader drained all but a socket buffer's worth.
    const child = `process.stdout.write('x'.repeat(64 << 16), () => process.stdout.write('end ' + Date.now()));`;
    const running = runProcessOffThread([process.execPath, '-e', child], 60000);
    let seenRunning = false;
    let seenEnded = false;
    // Synchronous: this thread's event loop does not turn until the child ended (or a bound far beyond it).
    const bound = Date.now() + 45_000;
    while (Date.now() < bound) {
      const n = offThreadChildren();
      if (n > 0) seenRunning = true;
      else if (seenRunning) {
        seenEnded = true;
        break;
      }
    }
    const loopEnd = Date.now();
    const r = await running;
    expect([seenRunning, seenEnded]).toEqual([true, true]);
    expect(r.stdout.slice(0, 64 << 16)).toBe('x'.repeat(64 << 16));
    expect(r.stdout.slice(64 << 16)).toMatch(/^end \d+$/);
    const childEnd = Number(r.stdout.slice((64 << 16) + 4));
    expect(childEnd).toBeLessThanOrEqual(loopEnd);
  });
});
