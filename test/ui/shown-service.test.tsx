/**
 * Which Service the Conntrack, DNS and Modes panes show: the one highlighted in the
 * Services pane (under its own filter) unless one is pinned with Space; each pane's title
 * names it and says which; Enter and `t` open a Service without pinning it.
 */
import React from 'react';
import { describe, expect, it } from 'vitest';
import { buildServiceView } from '../../src/analysis/service-view.js';
import { staticSession } from '../../src/collect/session.js';
import { App } from '../../src/ui/App.js';
import type { Lang } from '../../src/text/i18n.js';
import { t } from '../../src/text/i18n.js';
import { highlightedService, shownService, togglePin } from '../../src/ui/shown-service.js';
import { initialUiState, uiReducer, type UiAction, type UiState } from '../../src/ui/state.js';
import { snapshotOf } from '../helpers/fixtures.js';
import { KEYS, renderApp } from '../helpers/render.js';

const CAPTURE = 'lab-iptables';

async function app(lang: Lang = 'en', width = 120) {
  const snapshot = await snapshotOf(CAPTURE);
  const rows = buildServiceView(snapshot.api!.value!, { nodeName: snapshot.meta.node }).rows;
  const names = rows.map((r) => `${r.namespace}/${r.name}`);
  const r = await renderApp(<App session={staticSession(snapshot)} lang={lang} width={width} height={30} now={() => 0} />, width, 30);
  /** Presses `down` until the Services cursor is on `service`. */
  const highlight = async (service: string) => {
    await r.press('1', 'g');
    for (let i = 0; i < names.indexOf(service); i++) await r.press(KEYS.down);
  };
  return { r, names, highlight, snapshot };
}

/** The first line under the pane tabs (each pane's title line). */
function title(frame: string): string {
  return frame.split('\n')[3] ?? '';
}

describe('the Service Conntrack, DNS and Modes show', () => {
  it('follows the Services cursor, not the Service last opened with Enter', async () => {
    const { r, names, highlight } = await app();
    expect(names).toContain('default/web');
    const other = names.find((n) => n !== 'default/web' && n.startsWith('kube-system/'))!;
    await highlight('default/web');
    await r.press(KEYS.enter, KEYS.escape); // opens web's chain and comes back
    await highlight(other);
    await r.press('7');
    expect(title(r.frame())).toMatch(new RegExp(`^${other} \\(Services cursor\\) · \\d+ Services`));
    await r.press('5');
    expect(title(r.frame())).toContain(`about ${other} (Services cursor)`);
    await r.press('4');
    // Conntrack starts on every flow and names the Service `a` would keep.
    expect(title(r.frame())).toMatch(new RegExp(`^all Services \\(a: ${other} only\\) · \\d+/\\d+ entries`));
    expect(r.frame().split('\n').at(-1)).toContain('Space:pin/unpin');
    await r.press('a');
    expect(title(r.frame())).toMatch(new RegExp(`^Service ${other} \\(Services cursor\\) · `));
    await highlight('default/web');
    await r.press('4');
    expect(title(r.frame())).toMatch(/^Service default\/web \(Services cursor\) · [1-9]\d*\/\d+ entries/);
    r.unmount();
  });

  it('marks the pinned Service at the start of its NAME cell, so 80 columns still show it', async () => {
    const { r, highlight } = await app('en', 80);
    await highlight('default/web');
    await r.press(' ');
    const row = r.frame().split('\n').find((l) => /^\S*\s*default\s+\* web/.test(l.replace(/^[>▌ ]+/, '')));
    expect(row, r.frame()).toBeDefined();
    await r.press(' ');
    expect(r.frame()).not.toMatch(/default\s+\* web/);
    r.unmount();
  });

  it('keeps a pinned Service while the Services cursor moves, until Space unpins it', async () => {
    const { r, names, highlight } = await app();
    await highlight('default/web');
    await r.press(' ');
    expect(r.frame()).toMatch(/default\s+\* web \(pinned\)\s+NodePort/);
    const other = names.find((n) => n !== 'default/web')!;
    await highlight(other);
    await r.press('7');
    expect(title(r.frame())).toMatch(/^default\/web \(pinned\) · /);
    expect(r.frame()).toContain('what default/web adds in each mode');
    await r.press('4', 'a');
    expect(title(r.frame())).toMatch(/^Service default\/web \(pinned\) · [1-9]\d*\/\d+ entries/);
    await r.press('5');
    expect(title(r.frame())).toContain('about default/web (pinned)');
    await r.press(' '); // unpin: back to the Services cursor
    expect(title(r.frame())).toContain(`about ${other} (Services cursor)`);
    r.unmount();
  });

  it('moving the Modes cursor pins the Service of its row', async () => {
    const { r, highlight } = await app();
    await highlight('default/web');
    await r.press('7');
    const before = r.frame();
    expect(title(before)).toMatch(/^default\/web \(Services cursor\)/);
    await r.press('j');
    const after = title(r.frame());
    expect(after).toMatch(/^\S+\/\S+ \(pinned\) · /);
    expect(after).not.toMatch(/^default\/web /);
    const pinned = after.split(' ')[0]!;
    expect(r.frame()).toContain(`what ${pinned} adds in each mode`);
    await r.press('1', 'k', '5');
    expect(title(r.frame())).toContain(`about ${pinned} (pinned)`);
    r.unmount();
  });

  it("indexes the Services pane's filtered rows, not all Services", async () => {
    const { r } = await app();
    await r.press('/', 'd', 'n', 's', KEYS.enter, '7');
    expect(title(r.frame())).toMatch(/^kube-system\/kube-dns \(Services cursor\)/);
    r.unmount();
  });

  it('says it in Japanese, and Help lists Space', async () => {
    const { r, highlight } = await app('ja', 80);
    await highlight('default/web');
    await r.press(' ', '7');
    expect(title(r.frame())).toMatch(/^default\/web（固定） · /);
    await r.press('?');
    expect(r.frame()).toMatch(new RegExp(`Space +${t('ja', 'key.pin')}`));
    r.unmount();
  });
});

describe('shownService and togglePin', () => {
  const reduce = (actions: UiAction[], from: UiState = initialUiState) => actions.reduce(uiReducer, from);

  it('prefer the pin over the cursor, and clamp the cursor to the rows', async () => {
    const snapshot = await snapshotOf(CAPTURE);
    const rows = buildServiceView(snapshot.api!.value!, { nodeName: snapshot.meta.node }).rows;
    const last = rows[rows.length - 1]!;
    const far = reduce([{ type: 'jumpTo', index: rows.length + 5, count: rows.length + 10 }]);
    expect(highlightedService(rows, far)).toBe(`${last.namespace}/${last.name}`);
    expect(highlightedService(null, far)).toBeNull();
    expect(shownService('a/b', initialUiState)).toEqual({ service: 'a/b', pinned: false });
    expect(shownService('a/b', reduce([{ type: 'pinService', service: 'c/d' }]))).toEqual({ service: 'c/d', pinned: true });
    expect(shownService(null, initialUiState)).toBeNull();
  });

  it('pins the highlighted Service in the Services pane, re-pins another, and unpins elsewhere', () => {
    const pinned = reduce([{ type: 'pinService', service: 'a/b' }]);
    expect(togglePin(true, 'a/b', initialUiState)).toBe('a/b');
    expect(togglePin(true, 'a/b', pinned)).toBeNull();
    expect(togglePin(true, 'c/d', pinned)).toBe('c/d');
    expect(togglePin(false, 'c/d', pinned)).toBeNull();
    expect(togglePin(false, 'c/d', initialUiState)).toBe('c/d');
  });

  it('Enter and t select a Service without pinning it', () => {
    const s = reduce([{ type: 'selectService', service: 'a/b' }]);
    expect(s.selectedService).toBe('a/b');
    expect(s.pinnedService).toBeNull();
  });
});
