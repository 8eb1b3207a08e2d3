/**
 * The work the App does during a real staged load (issue 23 item 4: the app's huge replay load
 * against the same load headless), counted, never timed: React commits against the states the
 * session publishes, and the heavy views built while the parts arrive — the conntrack pane's
 * classification (src/analysis/conntrack-classify.ts, 1M entries on a huge node) and the
 * Services grouping (src/analysis/service-row.ts `slicesByService`, 25,000 Services) — once per
 * load, not once per published snapshot or frame. The frame after the load is the one a
 * session holding the whole snapshot from the start draws.
 */
import React, { Profiler, act } from 'react';
import { describe, expect, it, vi } from 'vitest';
import { openReplaySession } from '../../src/collect/replay-session.js';
import { buildSnapshot } from '../../src/collect/build-snapshot.js';
import { staticSession } from '../../src/collect/session.js';
import { runProbes } from '../../src/sources/probe-runner.js';
import { ReplayTransport } from '../../src/sources/replay.js';
import { App } from '../../src/ui/App.js';
import { fixtureDir } from '../helpers/fixtures.js';
import { renderApp } from '../helpers/render.js';

const counted = vi.hoisted(() => ({ classify: 0, slices: 0 }));

vi.mock('../../src/analysis/conntrack-classify.js', async (importOriginal) => {
  const m = await importOriginal<typeof import('../../src/analysis/conntrack-classify.js')>();
  return { ...m, classifyConntrackRows: (...args: Parameters<typeof m.classifyConntrackRows>) => (counted.classify++, m.classifyConntrackRows(...args)) };
});
vi.mock('../../src/analysis/service-row.js', async (importOriginal) => {
  const m = await importOriginal<typeof import('../../src/analysis/service-row.js')>();
  return { ...m, slicesByService: (...args: Parameters<typeof m.slicesByService>) => (counted.slices++, m.slicesByService(...args)) };
});

const settle = () => new Promise<void>((resolve) => setTimeout(resolve, 20));

/** The App on a real replay session of `fixture`, `keys` pressed before the load starts; counts commits and published states. */
async function stagedLoad(fixture: string, keys: readonly string[]) {
  const session = await openReplaySession(fixtureDir(fixture));
  let commits = 0;
  const r = await renderApp(
    <Profiler id="app" onRender={() => void commits++}>
      <App session={session} lang="en" now={() => 0} width={120} height={30} />
    </Profiler>,
    120,
    30,
  );
  await r.press(...keys);
  counted.classify = 0;
  counted.slices = 0;
  let published = 0;
  const off = session.subscribe(() => void published++);
  const before = commits;
  await act(async () => {
    await session.start();
    await settle();
  });
  off();
  const frame = r.frame();
  r.unmount();
  return { commits: commits - before, published, frame, snapshot: session.getState().snapshot! };
}

/** The frame of the same App holding the whole snapshot from the start, with the same keys. */
async function wholeFrame(fixture: string, keys: readonly string[]): Promise<string> {
  const transport = new ReplayTransport(fixtureDir(fixture));
  const runs = await runProbes(transport, {});
  const whole = buildSnapshot({ runs, apiText: transport.apiText()!, source: { kind: 'replay', label: fixture, live: false }, capturedAt: runs[0]!.result.startedAt });
  const r = await renderApp(<App session={staticSession(whole)} lang="en" now={() => 0} width={120} height={30} />, 120, 30);
  await r.press(...keys);
  const frame = r.frame();
  r.unmount();
  return frame;
}

describe('the App during a real staged load: work counted', () => {
  it('commits at most once per published state and classifies the conntrack table once (conntrack pane open)', async () => {
    const load = await stagedLoad('lab-iptables', ['4']);
    // The staged load publishes the first snapshot and one per stage: several states, no ticks between.
    expect(load.published).toBeGreaterThanOrEqual(3);
    expect(load.commits).toBeGreaterThan(0);
    expect(load.commits).toBeLessThanOrEqual(load.published);
    // The snapshots after the conntrack stage share its table: one classification for the load.
    expect(counted.classify).toBe(1);
    // The Services grouped twice at most: the Services view (the pane's cursor row scopes the
    // conntrack pane) and the classification's targets — not once per snapshot.
    expect(counted.slices).toBeGreaterThanOrEqual(1);
    expect(counted.slices).toBeLessThanOrEqual(2);
    const entries = load.snapshot.conntrack!.value!.entries.length;
    expect(entries).toBeGreaterThan(0);
    expect(load.frame).toMatch(/ entries · /);
    expect(load.frame).toBe(await wholeFrame('lab-iptables', ['4']));
  });

  it('builds no conntrack index behind the Services pane, and draws the frame the whole snapshot draws', async () => {
    const load = await stagedLoad('lab-iptables', []);
    expect(load.commits).toBeLessThanOrEqual(load.published);
    expect(counted.classify).toBe(0);
    expect(counted.slices).toBe(1);
    expect(load.frame).toMatch(/kube-system\s+kube-dns/);
    expect(load.frame).toBe(await wholeFrame('lab-iptables', []));
  });

  it('on a Cilium capture: the mode read and the same frame as the whole snapshot', async () => {
    const load = await stagedLoad('lab-cilium', ['4']);
    expect(load.commits).toBeLessThanOrEqual(load.published);
    expect(counted.classify).toBeLessThanOrEqual(1);
    expect(load.frame).toMatch(/mode: /);
    expect(load.frame).toBe(await wholeFrame('lab-cilium', ['4']));
  });
});
