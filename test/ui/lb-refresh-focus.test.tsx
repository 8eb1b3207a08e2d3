/**
 * The App tells the session what a live refresh re-reads alone (src/collect/map-refresh.ts):
 * Cilium's service maps while the LB pane shows maps read from their pins, nothing on the
 * Services pane, and the open chain in the Rules pane (issue 23 item 2).
 */
import React from 'react';
import { describe, expect, it } from 'vitest';
import { LB_MAPS_FOCUS } from '../../src/collect/map-refresh.js';
import { staticSession, type ChainFocus, type SessionLike } from '../../src/collect/session.js';
import type { NodeSnapshot } from '../../src/model/snapshot.js';
import { buildLbView } from '../../src/analysis/lb-view.js';
import { App } from '../../src/ui/App.js';
import { initialUiState, type UiState } from '../../src/ui/state.js';
import { snapshotOf } from '../helpers/fixtures.js';
import { renderApp } from '../helpers/render.js';

/** A static session that records every focus the App gives it. */
function focusing(snapshot: NodeSnapshot): { session: SessionLike; focuses: (ChainFocus | null)[] } {
  const focuses: (ChainFocus | null)[] = [];
  return { session: { ...staticSession(snapshot), focus: (f) => void focuses.push(f) }, focuses };
}

async function lastFocus(snapshot: NodeSnapshot, state: UiState): Promise<ChainFocus | null | undefined> {
  const { session, focuses } = focusing(snapshot);
  const r = await renderApp(<App session={session} lang="en" width={120} height={30} initialState={state} />, 120, 30);
  r.unmount();
  return focuses[focuses.length - 1];
}

describe('what the App asks live refreshes to re-read alone', () => {
  it('the service maps while the LB pane shows maps read from their pins; none on the Services pane', async () => {
    const cilium = await snapshotOf('lab-cilium');
    expect(cilium.lbMapsRead.length).toBeGreaterThan(0);
    // With the frontends the pane may show (all of the lab's, a short table), in the pane's order.
    const shown = buildLbView(cilium, '').frontends.map((f) => f.key);
    expect(shown.length).toBeGreaterThan(3);
    expect(await lastFocus(cilium, { ...initialUiState, pane: 'lb' })).toEqual({ ...LB_MAPS_FOCUS, frontends: shown });
    expect(await lastFocus(cilium, { ...initialUiState, pane: 'services' })).toBeNull();
    // An LB table from cilium-agent's listings (no map read from a pin): no focus.
    expect(await lastFocus({ ...cilium, lbMapsRead: [] }, { ...initialUiState, pane: 'lb' })).toBeNull();
  });

  it('the frontends within a screen of the cursor on a long LB table, a superset of the pane\'s window', async () => {
    const cilium = await snapshotOf('lab-cilium');
    const table = cilium.lb!.value!;
    // 300 frontends: the lab's first one copied at ports 20000…20299.
    const services = Array.from({ length: 300 }, (_, i) => ({ ...table.services[0]!, frontend: { ...table.services[0]!.frontend, port: 20000 + i } }));
    const long: NodeSnapshot = { ...cilium, lb: { ...cilium.lb!, value: { ...table, services } } };
    const keys = buildLbView(long, '').frontends.map((f) => f.key);
    const focus = await lastFocus(long, { ...initialUiState, pane: 'lb', cursors: { lb: 150 } });
    const got = focus?.frontends ?? [];
    // The body is under 30 lines: at most a body above and below the cursor, the cursor's row among them.
    expect(got.length).toBeLessThanOrEqual(2 * 30 + 1);
    expect(got.length).toBeGreaterThan(20);
    expect(got).toEqual(keys.slice(keys.indexOf(got[0]!), keys.indexOf(got[0]!) + got.length));
    expect(got).toContain(keys[150]);
  });

  it('the open chain in the Rules pane', async () => {
    const ipt = await snapshotOf('lab-iptables');
    const state: UiState = { ...initialUiState, pane: 'rules', rulesStack: [{ kind: 'chain', ruleset: 'iptables', table: 'nat', chain: 'KUBE-SERVICES' }] };
    expect(await lastFocus(ipt, state)).toEqual({ ruleset: 'iptables', table: 'nat', chain: 'KUBE-SERVICES' });
  });
});
