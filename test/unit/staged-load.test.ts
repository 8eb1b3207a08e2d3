/**
 * Staged load (issue 10): the first snapshot carries the node and the API objects, the
 * other parts follow off the render path and equal a one-shot build; a refresh re-parses
 * only what changed; the conntrack interval stretches when the table is slow.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildFirstSnapshot, buildSnapshot, completeSnapshot, ParseCache, type SnapshotInput } from '../../src/collect/build-snapshot.js';
import { SNAPSHOT_PARTS, isPending, type NodeSnapshot } from '../../src/model/snapshot.js';
import { loadSnapshot, MAX_SLOW_PART_DELAY_MS, Session, slowPartDelayMs } from '../../src/collect/session.js';
import { openSource } from '../../src/sources/open.js';
import { runProbes } from '../../src/sources/probe-runner.js';
import { ReplayTransport } from '../../src/sources/replay.js';
import type { Transport } from '../../src/sources/transport.js';
import { copyFixture, fixtureDir } from '../helpers/fixtures.js';

/** The snapshot input of a fixture bundle, as the session builds it. */
async function inputOf(name: string): Promise<SnapshotInput> {
  const transport = new ReplayTransport(fixtureDir(name));
  const runs = await runProbes(transport, {});
  const apiText = transport.apiText();
  return { runs, ...(apiText !== undefined ? { apiText } : {}), source: { kind: 'replay', label: name, live: false }, capturedAt: runs[0]!.result.startedAt };
}

/** A session's snapshots as its listeners see them, until `done` holds for one. */
function snapshotsUntil(session: Session, done: (s: NodeSnapshot) => boolean): { seen: NodeSnapshot[]; finished: Promise<void> } {
  const seen: NodeSnapshot[] = [];
  const finished = new Promise<void>((resolve) => {
    const off = session.subscribe(() => {
      const s = session.getState().snapshot;
      if (s && seen[seen.length - 1] !== s) seen.push(s);
      if (s && done(s)) {
        off();
        resolve();
      }
    });
  });
  return { seen, finished };
}

describe('staged snapshot build', () => {
  it.each(['lab-iptables', 'lab-nftables', 'lab-cilium'])('%s: first the node and API objects, every other part pending; completed, equal to the one-shot build', async (name) => {
    const input = await inputOf(name);
    const whole = buildSnapshot(input);
    const first = buildFirstSnapshot(input);
    expect(first.pending).toEqual(SNAPSHOT_PARTS);
    expect(first.meta).toEqual(whole.meta);
    expect(first.api).toEqual(whole.api);
    for (const part of SNAPSHOT_PARTS) expect(first[part] ?? null, part).toBeNull();
    const progress: NodeSnapshot[] = [];
    // 200-character chunks: the conntrack table is parsed in many pieces.
    const done = await completeSnapshot(input, first, { chunkChars: 200, onProgress: (s) => progress.push(s) });
    expect(done).toEqual(whole);
    expect(done.pending).toBeUndefined();
    // Each intermediate snapshot has fewer pending parts, and what it carries is final.
    const counts = progress.map((s) => s.pending!.length);
    expect(counts.length).toBeGreaterThan(0);
    expect([...counts].sort((a, b) => b - a)).toEqual(counts);
    for (const s of progress) for (const part of SNAPSHOT_PARTS) if (!isPending(s, part)) expect(s[part] ?? null, part).toEqual(whole[part] ?? null);
    expect(isPending(progress[0], 'conntrack')).toBe(true);
    expect(isPending(progress[0], 'iptables')).toBe(false);
  });

  it('keeps the event loop turning while the conntrack table is parsed', async () => {
    const input = await inputOf('lab-iptables');
    let ticks = 0;
    const timer = setInterval(() => ticks++, 0);
    const parsed: string[] = [];
    await completeSnapshot(input, buildFirstSnapshot(input), { chunkChars: 100, onPartParsed: (part) => parsed.push(`${part}@${ticks}`) });
    clearInterval(timer);
    expect(parsed.map((p) => p.split('@')[0])).toEqual(SNAPSHOT_PARTS);
    const at = (part: string) => Number(parsed.find((p) => p.startsWith(`${part}@`))!.split('@')[1]);
    // Timers ran between the first part and the end (the parse yields).
    expect(at('ciliumConntrack')).toBeGreaterThan(at('iptables'));
  });
});

describe('parse cache by fingerprint', () => {
  it('tells a changed text of the same length from the cached one', () => {
    const cache = new ParseCache();
    let calls = 0;
    const parse = () => ({ value: ++calls, diagnostics: [] });
    expect(cache.parse('p', '[1:60] rule', parse).value).toBe(1);
    expect(cache.parse('p', '[1:60] rule', parse).value).toBe(1);
    expect(cache.parse('p', '[2:60] rule', parse).value).toBe(2);
    expect(cache.lookup('p', '[1:60] rule')).toBeUndefined();
    expect(cache.lookup('q', '[2:60] rule')).toBeUndefined();
  });
});

describe('slow parts on refresh', () => {
  it('are left alone for nothing while cheap, twenty times their cost when slow (≤ 5 % of the time), at most five minutes', () => {
    expect(slowPartDelayMs(2000, 30)).toBe(0);
    expect(slowPartDelayMs(2000, 100)).toBe(0);
    expect(slowPartDelayMs(2000, 101)).toBe(2020);
    expect(slowPartDelayMs(2000, 1500)).toBe(30_000);
    expect(slowPartDelayMs(2000, 60_000)).toBe(MAX_SLOW_PART_DELAY_MS);
    expect(MAX_SLOW_PART_DELAY_MS).toBe(300_000);
  });
});

/** A live source over a copy of a fixture whose files can change between refreshes; counts reads per probe. */
function liveFixture(name: string) {
  const dir = copyFixture(name);
  const replay = new ReplayTransport(dir);
  const reads = new Map<string, number>();
  const transport: Transport = {
    kind: 'local',
    label: 'live-copy',
    exec: (argv, o) => {
      reads.set(argv[0]!, (reads.get(argv[0]!) ?? 0) + 1);
      return replay.exec(argv, o);
    },
    close: async () => {},
  };
  const file = (id: string) => path.join(dir, 'probes', `${id}.stdout`);
  return { transport, apiText: replay.apiText()!, reads, edit: (id: string, f: (t: string) => string) => writeFileSync(file(id), f(readFileSync(file(id), 'utf8'))) };
}

function refreshed(session: Session, before: NodeSnapshot): Promise<void> {
  return snapshotsUntil(session, (s) => s !== before && !session.getState().refreshing).finished;
}

describe('session', () => {
  it('publishes the first snapshot with its parts pending, then the parts, and resolves start() when complete', async () => {
    const src = liveFixture('lab-iptables');
    const session = new Session({ transport: src.transport, apiText: src.apiText, live: false });
    const watch = snapshotsUntil(session, (s) => !s.pending);
    await session.start();
    await watch.finished;
    const [first] = watch.seen;
    expect(first!.pending).toEqual(SNAPSHOT_PARTS);
    expect(first!.meta.node).toBe('lab-node');
    expect(first!.api?.value?.services.length).toBeGreaterThan(0);
    expect(watch.seen.length).toBeGreaterThan(2);
    const last = session.getState().snapshot!;
    expect(last.pending).toBeUndefined();
    expect(last.conntrack?.value?.entries.length).toBeGreaterThan(0);
    expect(last.api).toBe(first!.api); // the API objects are parsed once
    await session.stop();
  });

  it('on refresh re-parses only the probe texts that changed', async () => {
    const src = liveFixture('lab-iptables');
    let now = 1_000_000;
    const session = new Session({ transport: src.transport, apiText: src.apiText, live: true, intervalMs: 3_600_000, now: () => now });
    await session.start();
    const a = session.getState().snapshot!;

    // Nothing changed: the same parsed rules, API objects, conntrack table and addresses.
    now += 2000;
    session.refreshNow();
    await refreshed(session, a);
    const b = session.getState().snapshot!;
    expect(b).not.toBe(a);
    expect(b.iptables?.value).toBe(a.iptables?.value);
    expect(b.conntrack?.value).toBe(a.conntrack?.value);
    expect(b.api).toBe(a.api);
    expect(b.addrs?.value).toBe(a.addrs?.value);
    expect(src.reads.get('iptables-save')).toBe(2);

    // One counter moved: the rules are parsed again, the conntrack table is not.
    src.edit('iptables-save', (t) => t.replace(/^\[(\d+):(\d+)\] -A KUBE-SEP/m, (_m, p: string, by: string) => `[${Number(p) + 7}:${by}] -A KUBE-SEP`));
    now += 2000;
    session.refreshNow();
    await refreshed(session, b);
    const c = session.getState().snapshot!;
    expect(c.iptables?.value).not.toBe(b.iptables?.value);
    expect(c.conntrack?.value).toBe(b.conntrack?.value);
    expect([...session.getState().rates.values()].some((r) => r > 0)).toBe(true);
    await session.stop();
  });

  it.each(['lab-iptables', 'lab-nftables', 'lab-cilium'])('%s: ends with the snapshot a one-shot load builds (Cilium agent probes included)', async (name) => {
    const source = await openSource({ replay: fixtureDir(name) }, { progress: () => {} });
    const options = {
      transport: source.transport,
      live: false,
      ...(source.apiText !== undefined ? { apiText: source.apiText } : {}),
      ...(source.ciliumAgent ? { ciliumAgent: source.ciliumAgent } : {}),
    };
    const { snapshot: once } = await loadSnapshot(options);
    const session = new Session(options);
    await session.start();
    expect(session.getState().snapshot).toEqual(once);
    await session.stop();
  });

  it('reads the Cilium agent probes through the agent transport, those feeding no part too', async () => {
    const asked: string[] = [];
    const agent: Transport = {
      kind: 'local',
      label: 'agent',
      exec: (argv) => {
        asked.push(argv.join(' '));
        // Read after the node's probes, as an agent always is.
        return Promise.resolve({ argv, stdout: '', stderr: '', exitCode: 0, startedAt: '2100-01-01T00:00:00.000Z', durationMs: 1 });
      },
      close: async () => {},
    };
    const replay = new ReplayTransport(fixtureDir('lab-cilium'));
    const options = { transport: replay, live: false, apiText: replay.apiText()!, ciliumAgent: agent };
    const { snapshot: once } = await loadSnapshot(options);
    const oneShotAsks = [...asked].sort();
    asked.length = 0;
    const session = new Session(options);
    await session.start();
    expect([...asked].sort()).toEqual(oneShotAsks);
    expect(session.getState().snapshot).toEqual(once);
    expect(once.probes.some((p) => p.id === 'cilium-service-list')).toBe(true);
    await session.stop();
  });

  it('a live session whose first load failed loads again on refresh', async () => {
    const src = liveFixture('lab-iptables');
    let down = true;
    const transport: Transport = { ...src.transport, exec: (argv, o) => (down ? Promise.reject(new Error('connection reset')) : src.transport.exec(argv, o)) };
    const session = new Session({ transport, apiText: src.apiText, live: true, intervalMs: 3_600_000 });
    await session.start();
    expect(session.getState()).toMatchObject({ snapshot: null, error: 'connection reset' });
    down = false;
    const loaded = snapshotsUntil(session, (s) => !s.pending && !session.getState().refreshing).finished;
    session.refreshNow();
    await loaded;
    expect(session.getState().error).toBeNull();
    expect(session.getState().snapshot?.iptables?.value).toBeTruthy();
    await session.stop();
  });

  it('skips a part that was slow to read on the next refresh, and keeps the rule rates', async () => {
    const src = liveFixture('lab-iptables');
    // The conntrack table "took" 5 s to read: 10 × 5 s exceeds the 2 s interval.
    let tableReads = 0;
    const transport: Transport = {
      ...src.transport,
      exec: async (argv, o) => {
        const r = await src.transport.exec(argv, o);
        if (argv[0] !== 'conntrack' || !argv.includes('-L')) return r;
        tableReads++;
        return { ...r, durationMs: 5000 };
      },
    };
    let now = 1_000_000;
    const session = new Session({ transport, apiText: src.apiText, live: true, intervalMs: 2000, now: () => now });
    await session.start();
    session.stop().catch(() => {}); // no timer: refreshes below are explicit
    const a = session.getState().snapshot!;
    expect(tableReads).toBe(1);
    src.edit('iptables-save', (t) => t.replace(/^\[(\d+):(\d+)\] -A KUBE-SEP/m, (_m, p: string, by: string) => `[${Number(p) + 10}:${by}] -A KUBE-SEP`));
    now += 2000;
    session.refreshNow();
    await refreshed(session, a);
    const b = session.getState().snapshot!;
    expect(src.reads.get('iptables-save')).toBe(2);
    expect(tableReads).toBe(1);
    expect(b.conntrack?.value).toBe(a.conntrack?.value);
    const rates = session.getState().rates;
    expect([...rates.values()]).toContain(5); // 10 packets over 2 s
    // The rules did not change since: a refresh reads them again, and they moved 0 packets.
    now += 2000;
    session.refreshNow();
    await refreshed(session, b);
    expect(src.reads.get('iptables-save')).toBe(3);
    expect(tableReads).toBe(1);
    expect([...session.getState().rates.values()].every((r) => r === 0)).toBe(true);
  });

  it('does not start a refresh while the staged load is running', async () => {
    const src = liveFixture('lab-iptables');
    const session = new Session({ transport: src.transport, apiText: src.apiText, live: true, intervalMs: 3_600_000 });
    const started = session.start();
    await snapshotsUntil(session, (s) => Boolean(s.pending)).finished;
    session.refreshNow();
    expect(session.getState().refreshing).toBe(false);
    await started;
    expect(src.reads.get('iptables-save')).toBe(1);
    await session.stop();
  });
});
