/**
 * Starting step mode with `t` where the default packet is not obvious: a capture whose
 * API objects hold Services but no Pods (the node itself sends, as `trace --entry host`),
 * a headless Service (the pane says why there is nothing to walk), a snapshot still
 * loading (the pane says loading); and the step rows numbered as the footer counts them.
 */
import React from 'react';
import { describe, expect, it } from 'vitest';
import { defaultStepPacket } from '../../src/analysis/step-defaults.js';
import type { NodeSnapshot } from '../../src/model/snapshot.js';
import { staticSession } from '../../src/collect/session.js';
import { App } from '../../src/ui/App.js';
import type { Lang } from '../../src/text/i18n.js';
import { snapshotOf } from '../helpers/fixtures.js';
import { KEYS, renderApp } from '../helpers/render.js';

/** `snapshot` with its API objects' Pods dropped (a generated capture of Services and EndpointSlices only). */
function withoutPods(snapshot: NodeSnapshot): NodeSnapshot {
  const api = snapshot.api!;
  return { ...snapshot, api: { ...api, value: { ...api.value!, pods: [] } } };
}

async function app(snapshot: NodeSnapshot, lang: Lang = 'en') {
  return renderApp(<App session={staticSession(snapshot)} lang={lang} width={120} height={34} />, 120, 34);
}

describe.each(['lab-iptables', 'lab-nftables'])('t on %s without Pods in the API objects', (fixture) => {
  it('walks a packet from the node itself to the ClusterIP', async () => {
    const snapshot = withoutPods(await snapshotOf(fixture));
    const packet = defaultStepPacket(snapshot, 'default', 'web');
    expect(packet).toEqual({ from: '', to: '10.96.12.34:80/tcp', entry: 'host' });
    const r = await app(snapshot);
    await r.press(KEYS.down, 't'); // empty → web
    const frame = r.frame();
    expect(frame).not.toContain('no packet walked yet');
    expect(frame).toContain('→ 10.96.12.34:80');
    expect(frame).toContain('entry host');
    expect(frame).toMatch(/→ 10\.244\.0\.\d+:8080/);
    r.unmount();
  });
});

describe('t on a Service with no dataplane path', () => {
  it.each([
    ['en', 'no packet to walk for default/web-headless', 'headless Service (clusterIP: None)', 'nodescope trace --from'],
    ['ja', 'default/web-headless には辿るパケットがありません', 'ヘッドレス Service (clusterIP: None)', 'nodescope trace --from'],
  ] as const)('says why in %s', async (lang, title, reason, hint) => {
    const r = await app(await snapshotOf('lab-iptables'), lang);
    await r.press('jj', 't'); // empty → web → web-headless
    const frame = r.frame();
    expect(frame).toContain(title);
    expect(frame).toContain(reason);
    expect(frame).toContain(hint);
    expect(frame).not.toContain('no packet walked yet');
    r.unmount();
  });

  it('forgets the reason once a packet is walked', async () => {
    const r = await app(await snapshotOf('lab-iptables'));
    await r.press('jj', 't', KEYS.escape, 'k', 't');
    expect(r.frame()).not.toContain('no packet to walk');
    expect(r.frame()).toContain('step 1 of');
    r.unmount();
  });
});

describe('Step pane while the dataplane parts are loading', () => {
  it('says loading, not "no packet walked yet", before and after t', async () => {
    const whole = await snapshotOf('lab-iptables');
    const loading: NodeSnapshot = { ...withoutPods(whole), iptables: null, pending: ['iptables'] };
    const r = await app(loading);
    await r.press('6');
    expect(r.frame()).toContain('loading…');
    expect(r.frame()).not.toContain('no packet walked yet');
    await r.press('1', KEYS.down, 't');
    expect(r.frame()).toContain('loading…');
    expect(r.frame()).not.toContain('no packet walked yet');
    r.unmount();
  });
});

describe('step numbers', () => {
  it('numbers the rows from 1, as the footer counts: the last row is "n of n"', async () => {
    const r = await app(await snapshotOf('lab-iptables'));
    await r.press(KEYS.down, 't', 'G');
    const frame = r.frame();
    const total = Number(/step (\d+) of (\d+)/.exec(frame)![2]);
    expect(frame).toContain(`step ${total} of ${total}`);
    const numbers = frame.split('\n').map((l) => /^\s*[>▶ ]?\s*(\d+)\s+(prerouting|input|forward|output|postrouting|\S+)/.exec(l)?.[1]).filter((n) => n !== undefined).map(Number);
    expect(numbers.at(-1)).toBe(total);
    expect(numbers).not.toContain(0);
    r.unmount();
  });
});
