/**
 * The refresh's cost rule (issue 23: node CPU of refreshes ≤ 5 % of a core): the wait after
 * a refresh stretches with the node CPU its probes used, and the session says so. The
 * session runs over a replay of the iptables lab capture whose open-chain listing
 * (`iptables -t nat -S KUBE-SERVICES -v`, not in the capture) is made from the capture's own
 * nat rules and reports the node CPU the test sets.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Session } from '../../src/collect/session.js';
import { nextRefreshDelayMs, REFRESH_CPU_SHARE, refreshNodeCpuMs } from '../../src/collect/refresh-cost.js';
import type { ProbeRun } from '../../src/sources/probe-runner.js';
import { ReplayTransport } from '../../src/sources/replay.js';
import type { ExecOptions, ExecResult, Transport } from '../../src/sources/transport.js';
import { copyFixture } from '../helpers/fixtures.js';
import { sessionUntil } from '../helpers/session-wait.js';

const run = (durationMs: number, cpuMs?: number): ProbeRun =>
  ({ id: 'x', status: 'ok', result: { argv: [], stdout: '', stderr: '', exitCode: 0, startedAt: new Date(0).toISOString(), durationMs, ...(cpuMs !== undefined ? { cpuMs } : {}) } }) as unknown as ProbeRun;

describe('the refresh cost rule', () => {
  it('waits the interval while a read is cheap, and cpu / 5 % when it is not', () => {
    expect(REFRESH_CPU_SHARE).toBe(0.05);
    expect(nextRefreshDelayMs(2000, 300, 20)).toBe(2000);
    expect(nextRefreshDelayMs(2000, 300, 100)).toBe(2000);
    expect(nextRefreshDelayMs(2000, 300, 220)).toBe(4400);
    // A refresh that took longer than all of it: never two at once.
    expect(nextRefreshDelayMs(2000, 9000, 220)).toBe(9000);
  });

  it('counts each probe\'s node CPU, its wall time where the transport cannot measure CPU', () => {
    expect(refreshNodeCpuMs([run(300, 160), run(40, 10)])).toBe(170);
    expect(refreshNodeCpuMs([run(300, 160), run(900)])).toBe(1060);
    expect(refreshNodeCpuMs([])).toBe(0);
  });
});

/** The lab capture as a live node whose open-chain read costs `cpu.ms` of node CPU. */
function liveLab(cpu: { ms: number }): { transport: Transport; apiText: string; chainReads: () => number } {
  const dir = copyFixture('lab-iptables');
  const replay = new ReplayTransport(dir);
  const save = readFileSync(path.join(dir, 'probes', 'iptables-save.stdout'), 'utf8');
  const nat = save.slice(save.indexOf('*nat'));
  const listing = ['-N KUBE-SERVICES', ...nat.split('\n').filter((l) => / -A KUBE-SERVICES /.test(` ${l.replace(/^\[\d+:\d+\] /, '')}`)).map((l) => l.replace(/^\[(\d+):(\d+)\] (.*)$/, '$3 -c $1 $2'))].join('\n') + '\n';
  let reads = 0;
  const ok = (argv: readonly string[], stdout: string, cpuMs: number): ExecResult => ({ argv, stdout, stderr: '', exitCode: 0, startedAt: new Date().toISOString(), durationMs: 5, cpuMs });
  const transport: Transport = {
    kind: 'local',
    label: 'lab-iptables as live',
    exec: (argv: readonly string[], o: ExecOptions): Promise<ExecResult> => {
      if (argv.join(' ') === 'iptables -t nat -S KUBE-SERVICES -v') {
        reads++;
        return Promise.resolve(ok(argv, listing, cpu.ms));
      }
      if (argv.join(' ') === 'nft list flowtables') return Promise.resolve(ok(argv, 'table ip filter {\n}\ntable ip nat {\n}\n', 1));
      return replay.exec(argv, o);
    },
    close: async () => {},
  };
  return { transport, apiText: replay.apiText()!, chainReads: () => reads };
}


describe('a live session under the cost rule', () => {
  it('stretches the wait after a chain read that costs more than 5 % of a core at the interval, says so, and goes back when it is cheap', async () => {
    const cpu = { ms: 40 };
    const lab = liveLab(cpu);
    const session = new Session({ transport: lab.transport, apiText: lab.apiText, live: true, intervalMs: 100 });
    try {
      await session.start();
      session.focus({ ruleset: 'iptables', table: 'nat', chain: 'KUBE-SERVICES' });
      await sessionUntil(session, () => (session.getState().stretched ?? null) !== null);
      expect(session.lastRefreshKind()).toBe('chain');
      // 40 ms of the chain's read + 1 ms of the check: 41 / 0.05.
      expect(session.getState().stretched).toEqual({ everyMs: 820, nodeCpuMs: 41 });
      const reads = lab.chainReads();
      await new Promise((r) => setTimeout(r, 600));
      expect(lab.chainReads()).toBe(reads); // 100 ms interval, but 820 ms between reads
      cpu.ms = 1;
      await sessionUntil(session, () => session.getState().stretched === null);
      const cheap = lab.chainReads();
      await new Promise((r) => setTimeout(r, 600));
      expect(lab.chainReads()).toBeGreaterThan(cheap);
    } finally {
      await session.stop();
    }
  }, 20_000);
});
