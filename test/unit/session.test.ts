import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildSnapshot, ParseCache } from '../../src/collect/build-snapshot.js';
import { Session } from '../../src/collect/session.js';
import type { ProbeRun } from '../../src/sources/probe-runner.js';
import type { ExecOptions, ExecResult, Transport } from '../../src/sources/transport.js';
import { ReplayTransport } from '../../src/sources/replay.js';
import { copyFixture } from '../helpers/fixtures.js';
import { sessionUntil } from '../helpers/session-wait.js';

/**
 * A replay that can be edited between refreshes: the bundle's iptables-save output
 * is rewritten on disk, as a live node's counters change between reads.
 */
function editableSource() {
  const dir = copyFixture('lab-iptables');
  const file = path.join(dir, 'probes', 'iptables-save.stdout');
  let broken = false;
  const replay = new ReplayTransport(dir);
  const transport: Transport = {
    kind: 'local',
    label: 'editable',
    exec: (argv: readonly string[], o: ExecOptions): Promise<ExecResult> => {
      if (broken && argv[0] === 'iptables-save') {
        return Promise.resolve({ argv, stdout: '', stderr: 'connection lost', exitCode: null, timedOut: true, startedAt: new Date(0).toISOString(), durationMs: 1 });
      }
      return replay.exec(argv, o);
    },
    close: async () => {},
  };
  return {
    transport,
    apiText: replay.apiText()!,
    bumpDnat(packets: number) {
      const text = readFileSync(file, 'utf8').replace(/^\[(\d+):(\d+)\] (-A KUBE-SEP-\S+ .*-j DNAT .*10\.244\.0\.23:8080)$/m, (_m, p: string, b: string, rest: string) => `[${Number(p) + packets}:${b}] ${rest}`);
      writeFileSync(file, text);
    },
    breakIt() {
      broken = true;
    },
  };
}


describe('live session', () => {
  it('computes packets per second between refreshes, and keeps the last good data when a refresh fails', async () => {
    let now = 1_000_000;
    const src = editableSource();
    const session = new Session({ transport: src.transport, apiText: src.apiText, live: true, intervalMs: 3_600_000, now: () => now });
    await session.start();
    const first = session.getState();
    expect(first.snapshot?.iptables?.value).toBeTruthy();

    src.bumpDnat(20);
    now += 2000; // 2 s later
    session.refreshNow();
    await sessionUntil(session, () => !session.getState().refreshing && session.getState().dataAt === now);
    const rates = [...session.getState().rates.entries()].filter(([k]) => k.startsWith('nat/KUBE-SEP-'));
    expect(rates.find(([, r]) => r > 0)).toEqual([expect.stringMatching(/^nat\/KUBE-SEP-[A-Z2-7]{16}#2$/), 10]);

    src.breakIt();
    now += 2000;
    session.refreshNow();
    await sessionUntil(session, () => !session.getState().refreshing && session.getState().error !== null);
    const state = session.getState();
    expect(state.error).toMatch(/iptables-save: timeout/);
    expect(state.snapshot?.iptables?.value).toBeTruthy(); // the last good rules stay
    await session.stop();
  });
});

describe('refresh staleness', () => {
  it('does not call data stale because a probe that never read anything failed again', async () => {
    const src = editableSource();
    // ipvsadm on a kernel without IPVS: fails on the first load and on every refresh.
    const transport: Transport = {
      ...src.transport,
      exec: (argv, o) =>
        argv[0] === 'ipvsadm'
          ? Promise.resolve({ argv, stdout: '', stderr: "Can't initialize ipvs: Protocol not available", exitCode: 2, timedOut: false, startedAt: new Date(0).toISOString(), durationMs: 1 })
          : src.transport.exec(argv, o),
    };
    let now = 1_000_000;
    // No kube-ipvs0 on this node: the probe plan would skip ipvsadm; --probe asks for it.
    const session = new Session({ transport, apiText: src.apiText, live: true, intervalMs: 3_600_000, now: () => now, probes: ['ipvsadm-stats', 'ipvsadm'] });
    await session.start();
    await sessionUntil(session, () => (session.getState().snapshot?.pending?.length ?? 0) === 0);
    expect(session.getState().snapshot?.ipvs?.error).toMatch(/exit code 2/);
    now += 2000;
    session.refreshNow();
    await sessionUntil(session, () => !session.getState().refreshing && session.getState().dataAt === now);
    expect(session.getState().error).toBeNull();
    // A probe that had data and then fails is stale data, and says so.
    src.breakIt();
    const wholeAt = now;
    now += 2000;
    session.refreshNow();
    await sessionUntil(session, () => !session.getState().refreshing && session.getState().error !== null);
    expect(session.getState().error).toBe('iptables-save: timeout — connection lost'); // the node's own words follow
    // The shown data is as old as the last whole read: the header's age keeps growing.
    expect(session.getState().dataAt).toBe(wholeAt);
    await session.stop();
  });
});

describe('parse cache', () => {
  it('parses an unchanged probe output once', () => {
    const cache = new ParseCache();
    let calls = 0;
    const parse = () => {
      calls++;
      return { value: 1, diagnostics: [] };
    };
    cache.parse('p', 'same text', parse);
    cache.parse('p', 'same text', parse);
    expect(calls).toBe(1);
    cache.parse('p', 'new text', parse);
    expect(calls).toBe(2);
  });

  it('gives the same snapshot parts with and without the cache', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'ns-cache-'));
    const run: ProbeRun = { id: 'iptables-save', argv: ['iptables-save', '-c'], status: 'ok', result: { argv: [], stdout: readFileSync(path.join(copyFixture('lab-iptables'), 'probes', 'iptables-save.stdout'), 'utf8'), stderr: '', exitCode: 0, startedAt: new Date(0).toISOString(), durationMs: 1 } };
    const source = { kind: 'replay' as const, label: dir, live: false };
    const cache = new ParseCache();
    const a = buildSnapshot({ runs: [run], source, capturedAt: 'x', cache });
    const b = buildSnapshot({ runs: [run], source, capturedAt: 'x', cache });
    const c = buildSnapshot({ runs: [run], source, capturedAt: 'x' });
    expect(b.iptables?.value).toBe(a.iptables?.value);
    expect(c.iptables?.value).toEqual(a.iptables?.value);
  });
});
