/**
 * runProbes' heavy probes queued on a transport that queues (`Transport.queuesOffThread`,
 * `ExecOptions.queued`: src/sources/probe-runner.ts): all heavy probes are asked at once, in
 * catalog order, each with `queued`, and the runs — ids, argv, status, output, in catalog order —
 * equal those of the old path (a transport that does not queue: each heavy probe asked as the one
 * before ended, the reference); a heavy probe's alternative (its first argv failed) is asked once
 * that failure is known and gives the same run. A transport that does not queue is never given
 * `queued`. The transports here replay the lab-cilium capture (fixtures/) as a live node.
 */
import { describe, expect, it } from 'vitest';
import { firstStageIds, partStageIds, planOf } from '../../src/collect/planned-runs.js';
import { plannedIds } from '../../src/collect/probe-plan.js';
import { catalog } from '../../src/sources/catalog.js';
import { runProbes, type ProbeRun } from '../../src/sources/probe-runner.js';
import { ReplayTransport } from '../../src/sources/replay.js';
import type { ExecOptions, ExecResult, Transport } from '../../src/sources/transport.js';
import { fixtureDir } from '../helpers/fixtures.js';

interface Logged {
  readonly transport: Transport;
  /** `ask ARGV [queued]` as exec is called, `end ARGV` as its result is given. */
  readonly log: string[];
}

/**
 * lab-cilium replayed as a live node. `queues`: it honours `queued` as the exec worker does (one
 * queued run at a time, in call order). `fail`: argvs that exit 1 (a pin name this node lacks).
 */
function replayed(queues: boolean, fail: (argv: readonly string[]) => boolean = () => false): Logged {
  const replay = new ReplayTransport(fixtureDir('lab-cilium'));
  const log: string[] = [];
  let queueEnd: Promise<unknown> = Promise.resolve();
  let inFlight = 0;
  const run = async (argv: readonly string[], options: ExecOptions): Promise<ExecResult> => {
    if (options.readOffThread && ++inFlight > 1) throw new Error('two heavy runs at once');
    // A turn of the event loop, as a child would take.
    await new Promise((resolve) => setImmediate(resolve));
    const r: ExecResult = fail(argv) ? { argv: [...argv], stdout: '', stderr: 'Error: bpf obj get: No such file or directory\n', exitCode: 255, startedAt: new Date(0).toISOString(), durationMs: 1 } : await replay.exec(argv, options);
    if (options.readOffThread) inFlight--;
    log.push(`end ${argv.join(' ')}`);
    return r;
  };
  const transport: Transport = {
    kind: 'local',
    label: 'replayed',
    ...(queues ? { queuesOffThread: true } : {}),
    exec(argv, options) {
      log.push(`ask ${argv.join(' ')}${options.queued ? ' [queued]' : ''}`);
      if (!options.queued) return run(argv, options);
      const r = queueEnd.then(() => run(argv, options));
      queueEnd = r.catch(() => {});
      return r;
    },
    close: async () => {},
  };
  return { transport, log };
}

const heavyIds = new Set(catalog().probes.filter((p) => p.heavy).map((p) => p.id));
/** What the two paths must agree on (the clock's fields differ). */
const runsOf = (runs: readonly ProbeRun[]) => runs.map((r) => ({ id: r.id, argv: r.argv, status: r.status, stdout: r.result.stdout, stderr: r.result.stderr, exitCode: r.result.exitCode }));

async function stageTwo(logged: Logged): Promise<ProbeRun[]> {
  const first = await runProbes(logged.transport, { ids: firstStageIds() });
  logged.log.length = 0;
  const ids = plannedIds(planOf(logged.transport, first), partStageIds());
  return runProbes(logged.transport, { ids, heavyOffThread: true });
}

describe('runProbes with the heavy probes queued on the transport', () => {
  it('asks every heavy probe at once, in catalog order, queued — and the runs equal the old path’s', async () => {
    const queued = replayed(true);
    const reference = replayed(false);
    const runs = await stageTwo(queued);
    const old = await stageTwo(reference);
    expect(runsOf(runs)).toEqual(runsOf(old));
    const heavyArgv = runs.filter((r) => heavyIds.has(r.id)).map((r) => r.argv.join(' '));
    expect(heavyArgv.length).toBeGreaterThan(3);
    // Queued: all asked before the first heavy one ended, in the order of the runs (catalog order).
    const asked = queued.log.filter((l) => l.endsWith(' [queued]')).map((l) => l.slice(4, -' [queued]'.length));
    expect(asked).toEqual(heavyArgv);
    const firstHeavyEnd = queued.log.findIndex((l) => heavyArgv.some((a) => l === `end ${a}`));
    expect(queued.log.findIndex((l) => l === `ask ${heavyArgv.at(-1)} [queued]`)).toBeLessThan(firstHeavyEnd);
    // The old path: no `queued`, and each heavy probe asked only after the one before it ended.
    expect(reference.log.some((l) => l.endsWith('[queued]'))).toBe(false);
    const oldAsk = (a: string) => reference.log.indexOf(`ask ${a}`);
    for (let i = 1; i < heavyArgv.length; i++) expect(oldAsk(heavyArgv[i]!)).toBeGreaterThan(reference.log.indexOf(`end ${heavyArgv[i - 1]}`));
  });

  it('asks an alternative once its probe’s first argv failed, and gives the old path’s run', async () => {
    const current = (argv: readonly string[]) => argv.at(-1)!.endsWith('cilium_lb4_backends_v3');
    const queued = replayed(true, current);
    const reference = replayed(false, current);
    const runs = await stageTwo(queued);
    expect(runsOf(runs)).toEqual(runsOf(await stageTwo(reference)));
    // Both paths asked the same pin names for it, in the same order.
    const backendsAsked = (l: Logged) => l.log.filter((x) => x.startsWith('ask ') && x.includes('cilium_lb4_backends')).map((x) => x.replace(' [queued]', ''));
    expect(backendsAsked(queued)).toEqual(backendsAsked(reference));
    expect(backendsAsked(queued).length).toBeGreaterThan(1);
    const failedEnd = queued.log.findIndex((l) => l.startsWith('end ') && l.endsWith('cilium_lb4_backends_v3'));
    const alternativeAsk = queued.log.findIndex((l) => l.startsWith('ask ') && l.includes('cilium_lb4_backends_v2'));
    expect(failedEnd).toBeGreaterThan(-1);
    expect(alternativeAsk).toBeGreaterThan(failedEnd);
  });
});
