/**
 * The heavy dumps queued on the exec worker (src/sources/exec-off-thread.ts `runQueuedOffThread`,
 * exec-worker.ts): runs asked all at once run one at a time, in the order asked, each spawned as
 * the one before it ends — while this thread is held by a synchronous loop (no round trip through
 * it); each result equals the in-thread `runProcess`'s (the reference); a queued run's timeout
 * counts from its own spawn; an abort ends a queued run before or during its turn and the queue
 * goes on; with no worker, or a worker that dies before spawning them, the runs keep the order,
 * one at a time, on this thread. The worker's script is tsc's output: run `npx tsc` first.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { runProcess } from '../../src/sources/child-process.js';
import { offThreadChildren, runQueuedOffThread } from '../../src/sources/exec-off-thread.js';
import type { ExecResult } from '../../src/sources/transport.js';
import { seededRandom } from '../helpers/seeded.js';

const temp = mkdtempSync(path.join(tmpdir(), 'nodescope-exec-queue-'));
afterAll(() => rmSync(temp, { recursive: true, force: true }));

/** What the queued and the in-thread runs must agree on (the clock's fields and the CPU time differ run to run). */
const same = ({ startedAt: _s, durationMs: _d, cpuMs: _c, ...rest }: ExecResult) => rest;

/** A child that prints `begin NS`, its payload, then `end NS` (the wall clock in ns, read by `date`). */
const stamped = (payload: string, sleep = '0.05') => ['sh', '-c', `echo begin $(date +%s%N); ${payload}; sleep ${sleep}; echo end $(date +%s%N)`];
const span = (r: ExecResult) => {
  const begin = /begin (\d+)/.exec(r.stdout)?.[1];
  const end = /end (\d+)/.exec(r.stdout)?.[1];
  return { begin: Number(BigInt(begin ?? '0') / 1_000_000n), end: Number(BigInt(end ?? '0') / 1_000_000n) };
};

/** Each run began after the one before it ended (one at a time, in the order asked). */
function expectOneAtATime(results: readonly ExecResult[]): void {
  const spans = results.map(span);
  for (const s of spans) expect(s.begin).toBeGreaterThan(0);
  for (let i = 1; i < spans.length; i++) expect(spans[i]!.begin).toBeGreaterThanOrEqual(spans[i - 1]!.end);
}

describe('runQueuedOffThread', () => {
  it('runs the queued argvs one at a time, in the order asked, each result equal to runProcess', async () => {
    const rand = seededRandom(23);
    const argvs = Array.from({ length: 6 }, (_, i) => {
      const bytes = Math.floor(rand() * 300_000);
      return [...stamped(`head -c ${bytes} /dev/zero | tr '\\0' '${'abcdef'[i]}'; echo; echo err${i} >&2; exit ${i % 3}`)];
    });
    const queued = await Promise.all(argvs.map((a) => runQueuedOffThread(a, 20_000)));
    expectOneAtATime(queued);
    for (const [i, argv] of argvs.entries()) {
      const reference = await runProcess(argv, 20_000);
      const strip = (r: ExecResult) => ({ ...same(r), stdout: r.stdout.replace(/\d{10,}/g, 'NS') });
      expect(strip(queued[i]!)).toEqual(strip(reference));
      expect(queued[i]!.exitCode).toBe(i % 3);
    }
  });

  it('starts each next run while this thread is held by a synchronous loop', async () => {
    const running = [0, 1, 2, 3].map(() => runQueuedOffThread(stamped('true', '0.1'), 20_000));
    // Synchronous: no event-loop turn here for 4 s (the four children take ~0.5 s together).
    const bound = Date.now() + 4_000;
    while (Date.now() < bound);
    const loopEnd = Date.now();
    const results = await Promise.all(running);
    expectOneAtATime(results);
    // All four ran to their end inside the loop: none waited for this thread between two.
    expect(span(results[3]!).end).toBeLessThanOrEqual(loopEnd);
  });

  it('reports each run its own start and duration, not its wait in the queue', async () => {
    const [first, second] = await Promise.all([runQueuedOffThread(stamped('true', '0.4'), 20_000), runQueuedOffThread(stamped('true', '0.05'), 20_000)]);
    expect(Date.parse(second!.startedAt)).toBeGreaterThanOrEqual(Date.parse(first!.startedAt) + first!.durationMs - 5);
    expect(second!.durationMs).toBeLessThan(first!.durationMs);
  });

  it('counts a queued run’s timeout from its own spawn, and kills it there with its partial output', async () => {
    const [slow, inTime, late] = await Promise.all([
      runQueuedOffThread(['sh', '-c', 'sleep 0.6; echo slow'], 20_000),
      runQueuedOffThread(['sh', '-c', 'sleep 0.1; echo in time'], 400),
      runQueuedOffThread(['sh', '-c', 'echo partial; exec sleep 5'], 300),
    ]);
    expect([slow!.stdout, slow!.timedOut]).toEqual(['slow\n', undefined]);
    expect([inTime!.stdout, inTime!.timedOut, inTime!.exitCode]).toEqual(['in time\n', undefined, 0]);
    expect(same(late!)).toEqual(same(await runProcess(['sh', '-c', 'echo partial; exec sleep 5'], 300)));
    expect(late!.timedOut).toBe(true);
    expect(offThreadChildren()).toBe(0);
  });

  it('ends a queued run aborted while it waits or while it runs, and runs the rest of the queue', async () => {
    const waiting = new AbortController();
    const runningAbort = new AbortController();
    const results = [
      runQueuedOffThread(['sh', '-c', 'echo started; exec sleep 5'], 20_000, Date.now, runningAbort.signal),
      runQueuedOffThread(['sh', '-c', 'echo started; exec sleep 5'], 20_000, Date.now, waiting.signal),
      runQueuedOffThread(['sh', '-c', 'echo after'], 20_000),
    ];
    waiting.abort();
    while (offThreadChildren() === 0) await new Promise((resolve) => setImmediate(resolve));
    runningAbort.abort();
    const [ran, waited, after] = await Promise.all(results);
    // The reference: runProcess with its signal aborted (before or while it runs) — the ending is compared.
    const ending = ({ exitCode, timedOut, missing, stderr }: ExecResult) => ({ exitCode, timedOut, missing, stderr });
    const early = new AbortController();
    early.abort();
    expect(ending(waited!)).toEqual(ending(await runProcess(['sh', '-c', 'echo started; exec sleep 5'], 20_000, Date.now, early.signal)));
    expect([ran!.exitCode, ran!.timedOut, waited!.exitCode]).toEqual([null, undefined, null]);
    expect([after!.stdout, after!.exitCode]).toEqual(['after\n', 0]);
    expect(offThreadChildren()).toBe(0);
  });

  it('keeps the order, one at a time, on this thread when no worker can start', async () => {
    vi.resetModules();
    const fresh = await import('../../src/sources/exec-off-thread.js');
    const none = new URL('file:///nonexistent/exec-worker.js');
    const results = await Promise.all([0, 1, 2].map((i) => fresh.runQueuedOffThread(stamped(`echo ${i}`), 20_000, Date.now, undefined, none)));
    expectOneAtATime(results);
    expect(results.map((r) => /^\d$/m.exec(r.stdout)?.[0])).toEqual(['0', '1', '2']);
    expect(fresh.offThreadCounts).toEqual({ worker: 0, inThread: 3 });
  });

  it('runs the queue on this thread, in order and one at a time, when the worker dies before spawning them', async () => {
    vi.resetModules();
    const fresh = await import('../../src/sources/exec-off-thread.js');
    const dying = path.join(temp, 'dying-worker.mjs');
    writeFileSync(dying, 'process.exit(3);\n');
    const results = await Promise.all([0, 1, 2].map((i) => fresh.runQueuedOffThread(stamped(`echo ${i}`), 20_000, Date.now, undefined, pathToFileURL(dying))));
    expectOneAtATime(results);
    expect(results.map((r) => /^\d$/m.exec(r.stdout)?.[0])).toEqual(['0', '1', '2']);
    expect(fresh.offThreadCounts.inThread).toBe(3);
  });
});
