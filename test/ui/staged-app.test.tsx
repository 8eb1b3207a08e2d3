/**
 * The App during a staged load (issue 10): the Services pane has data from the first
 * snapshot, panes whose parts are still parsed say "loading…", then show the data; keys
 * typed faster than frames act in order on the state the previous keys made.
 */
import { act } from 'react';
import React from 'react';
import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import { buildFirstSnapshot, buildSnapshot, type SnapshotInput } from '../../src/collect/build-snapshot.js';
import type { NodeSnapshot } from '../../src/model/snapshot.js';
import { staticSession, type SessionLike, type SessionState } from '../../src/collect/session.js';
import { runProbes } from '../../src/sources/probe-runner.js';
import { ReplayTransport } from '../../src/sources/replay.js';
import { App } from '../../src/ui/App.js';
import { fixtureDir } from '../helpers/fixtures.js';
import { KEYS, plainFrame, renderApp } from '../helpers/render.js';

async function inputOf(name: string): Promise<SnapshotInput> {
  const transport = new ReplayTransport(fixtureDir(name));
  const runs = await runProbes(transport, {});
  return { runs, apiText: transport.apiText()!, source: { kind: 'replay', label: name, live: false }, capturedAt: runs[0]!.result.startedAt };
}

/** A session whose snapshot the test replaces, as the staged load does. */
function controlledSession(snapshot: NodeSnapshot): { session: SessionLike; publish(next: NodeSnapshot): void } {
  let state: SessionState = { snapshot, rates: new Map(), loading: false, refreshing: false, error: null, dataAt: 0, dns: null };
  const listeners = new Set<() => void>();
  return {
    session: {
      getState: () => state,
      subscribe: (l) => {
        listeners.add(l);
        return () => listeners.delete(l);
      },
      refreshNow: () => {},
      resolveDns: () => {},
    },
    publish(next) {
      state = { ...state, snapshot: next };
      for (const l of listeners) l();
    },
  };
}

const settle = () => new Promise<void>((resolve) => setTimeout(resolve, 20));

describe('App during a staged load', () => {
  it('shows the Services from the first snapshot, loading… in the panes still parsed, then their data', async () => {
    const input = await inputOf('lab-iptables');
    const first = buildFirstSnapshot(input);
    const whole = buildSnapshot(input);
    const src = controlledSession(first);
    const r = await renderApp(<App session={src.session} lang="en" now={() => 0} />, 120, 30);
    expect(r.frame()).toContain('node lab-node');
    expect(r.frame()).toMatch(/kube-system\s+kube-dns\s+ClusterIP\s+10\.96\.0\.10/);
    expect(r.frame()).toContain('mode: …'); // no mode until the rulesets are read
    await r.press('2');
    expect(r.frame()).toContain('loading…');
    expect(r.frame()).not.toContain('KUBE-SERVICES');
    await r.press('4');
    expect(r.frame()).toContain('loading…');
    expect(r.frame()).not.toMatch(/\d+\/\d+ entries/); // no count presented before the table is read

    // The rules arrive, the conntrack table is still pending.
    await act(async () => {
      src.publish({ ...whole, conntrack: null, pending: ['conntrack', 'ciliumConntrack'] });
      await settle();
    });
    expect(r.frame()).toContain('loading…');
    await r.press('2');
    expect(r.frame()).toContain('KUBE-SERVICES');
    expect(r.frame()).toMatch(/mode: iptables/);

    await act(async () => {
      src.publish(whole);
      await settle();
    });
    await r.press('4');
    const entries = whole.conntrack!.value!.entries.length;
    expect(r.frame()).toContain(`${entries}/${entries} entries`);
    r.unmount();
  });

  it('applies keys typed faster than frames in order, as if typed slowly', async () => {
    const input = await inputOf('lab-iptables');
    const snapshot = buildSnapshot(input);
    const keys = ['2', '/', 'K', 'U', 'B', 'E', '-', 'S', 'V', 'C', KEYS.enter, 'G', KEYS.enter, 'j'];

    const slow = await renderApp(<App session={staticSession(snapshot)} lang="en" now={() => 0} />, 120, 30);
    await slow.press(...keys);
    const expected = slow.frame();
    slow.unmount();
    // The last KUBE-SVC chain of the filtered list is open, the cursor on its second rule.
    expect(expected).toMatch(/chain nat\/KUBE-SVC-/);
    expect(expected).toMatch(/^ {2}2 .*KUBE-SEP-/m);

    let instance!: ReturnType<typeof render>;
    await act(async () => {
      instance = render(<App session={staticSession(snapshot)} lang="en" now={() => 0} />);
      Object.defineProperty(instance.stdout, 'columns', { value: 120, configurable: true });
      Object.defineProperty(instance.stdout, 'rows', { value: 30, configurable: true });
      instance.rerender(<App session={staticSession(snapshot)} lang="en" now={() => 0} />);
      await settle();
    });
    // Every key in one go: no render between them.
    await act(async () => {
      for (const k of keys) instance.stdin.write(k);
      await settle();
    });
    expect(plainFrame(instance.lastFrame())).toBe(expected);
    act(() => instance.unmount());
  });
});
