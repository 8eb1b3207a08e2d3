/**
 * Issue 23 item 4: the staged load's full GC (src/collect/session.ts) runs through
 * `completeSnapshot`'s `beforeBigPart`, just before this thread parses a part whose probes
 * printed at least `bigPartBytes` — not after each stage, and not before the conntrack part
 * a parse worker read. The hook never changes what is parsed. The worker runs tsc's output
 * (dist/src/collect/parse-worker.js): build first.
 */
import { statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildFirstSnapshot, completeSnapshot, partProbes, piecedProbes, type SnapshotInput } from '../../src/collect/build-snapshot.js';
import { firstStageIds } from '../../src/collect/planned-runs.js';
import { toPlain } from '../../src/model/plain.js';
import type { NodeSnapshot, SnapshotPart } from '../../src/model/snapshot.js';
import { runProbes, type ProbeRun } from '../../src/sources/probe-runner.js';
import { ReplayTransport } from '../../src/sources/replay.js';
import { copyFixture } from '../helpers/fixtures.js';

/** A replay of fixture `name` as the session reads it: the first stage's runs, the parts' runs fetched stage by stage in pieces. */
async function replayOf(name: string): Promise<{ input: SnapshotInput; fetchRuns: (ids: readonly string[]) => Promise<readonly ProbeRun[]>; fetched: ProbeRun[] }> {
  const transport = new ReplayTransport(copyFixture(name));
  const runs = await runProbes(transport, { ids: firstStageIds(), stdoutAsPieces: piecedProbes() });
  const apiText = transport.apiText();
  const input: SnapshotInput = { runs, ...(apiText !== undefined ? { apiText } : {}), source: { kind: 'replay', label: name, live: false }, capturedAt: runs[0]!.result.startedAt };
  const fetched: ProbeRun[] = [];
  const fetchRuns = async (ids: readonly string[]) => {
    const got = await runProbes(transport, { ids: [...ids], stdoutAsPieces: piecedProbes() });
    fetched.push(...got);
    return got;
  };
  return { input, fetchRuns, fetched };
}

/** Bytes each part's probes printed (by their files, as the load sizes them; else the text). */
function bytesByPart(runs: readonly ProbeRun[]): Map<SnapshotPart, number> {
  const byId = new Map(runs.map((r) => [r.id, r]));
  const out = new Map<SnapshotPart, number>();
  for (const [part, ids] of Object.entries(partProbes()) as [SnapshotPart, readonly string[]][]) {
    let n = 0;
    for (const id of ids) {
      const run = byId.get(id);
      if (!run) continue;
      n += run.result.stdoutPath !== undefined ? statSync(run.result.stdoutPath).size : run.result.stdout.length;
    }
    out.set(part, n);
  }
  return out;
}

/** The snapshot as plain data (conntrack entries are compact classes); probe timings left out. */
function plain(s: NodeSnapshot): unknown {
  const ct = s.conntrack?.value;
  return { ...s, probes: s.probes.map((p) => p.id), ...(ct ? { conntrack: { ...s.conntrack, value: { ...ct, entries: ct.entries.map(toPlain), events: ct.events?.map(toPlain) } } } : {}) };
}

describe('completeSnapshot: beforeBigPart', () => {
  it.each(['lab-iptables', 'lab-nftables', 'lab-cilium'])('%s: called once just before each part parsed here whose probes printed at least bigPartBytes, never for the others; the snapshot is the same', async (name) => {
    const { input, fetchRuns } = await replayOf(name);
    const ref = await replayOf(name);
    const reference = await completeSnapshot(ref.input, buildFirstSnapshot(ref.input), { fetchRuns: ref.fetchRuns, workers: { enabled: false } });
    // What each part's probes printed: the runs the reference load read.
    const sizes = bytesByPart([...ref.input.runs, ...ref.fetched]);
    const positive = [...sizes.values()].filter((n) => n > 0).sort((a, b) => a - b);
    expect(positive.length).toBeGreaterThan(2);
    // A threshold between the parts' sizes: some parts are big, some not.
    const threshold = positive[Math.floor(positive.length / 2)]!;
    const events: string[] = [];
    const done = await completeSnapshot(input, buildFirstSnapshot(input), {
      fetchRuns,
      workers: { enabled: false },
      bigPartBytes: threshold,
      beforeBigPart: (part) => events.push(`gc ${part}`),
      onPartParsed: (part) => events.push(`parsed ${part}`),
    });
    const expected = [...sizes].filter(([, n]) => n >= threshold).map(([part]) => part);
    expect(expected.length).toBeGreaterThan(0);
    const called = events.filter((e) => e.startsWith('gc ')).map((e) => e.slice(3));
    expect([...called].sort()).toEqual([...expected].sort());
    // Each call comes just before that part's parse.
    for (const part of called) expect(events[events.indexOf(`gc ${part}`) + 1]).toBe(`parsed ${part}`);
    expect(plain(done)).toEqual(plain(reference));
    // Above every part's size: never called.
    const none: string[] = [];
    await completeSnapshot(input, buildFirstSnapshot(input), { fetchRuns: (await replayOf(name)).fetchRuns, workers: { enabled: false }, bigPartBytes: positive.at(-1)! + 1, beforeBigPart: (p) => none.push(p) });
    expect(none).toEqual([]);
  });

  it('the conntrack run a worker parses does not count: no call before the conntrack part, a call when the main thread parses it; the snapshots are equal', async () => {
    const calls = async (enabled: boolean): Promise<{ parts: SnapshotPart[]; done: NodeSnapshot }> => {
      const { input, fetchRuns } = await replayOf('lab-nftables');
      const parts: SnapshotPart[] = [];
      const done = await completeSnapshot(input, buildFirstSnapshot(input), { fetchRuns, workers: { enabled, minBytes: 0 }, bigPartBytes: 1, beforeBigPart: (p) => parts.push(p) });
      return { parts, done };
    };
    const worker = await calls(true);
    const here = await calls(false);
    expect(worker.done.conntrack!.diagnostics.some((d) => d.code === 'parse-worker-failed')).toBe(false);
    expect(here.parts).toContain('conntrack');
    expect(here.parts).toContain('nft');
    expect(worker.parts).toEqual(here.parts.filter((p) => p !== 'conntrack'));
    expect(plain(worker.done)).toEqual(plain(here.done));
  });
});
