/** The VERDICT column of the Services pane and the findings view (`d`), at 80 and 120 columns, en and ja. */
import React from 'react';
import { describe, expect, it } from 'vitest';
import { staticSession } from '../../src/collect/session.js';
import { App } from '../../src/ui/App.js';
import type { Lang } from '../../src/text/i18n.js';
import { snapshotOf } from '../helpers/fixtures.js';
import { FRAME_WIDTHS, KEYS, renderApp } from '../helpers/render.js';

async function app(width: number, lang: Lang, name = 'lab-iptables') {
  const snapshot = await snapshotOf(name);
  return renderApp(<App session={staticSession(snapshot)} lang={lang} width={width} height={24} />, width, 24);
}

describe.each(FRAME_WIDTHS)('diagnosis in the Services pane at %i columns', (width) => {
  it('en: a VERDICT per Service; d on default/empty lists its findings, the cursor one in full with its proof; Esc comes back', async () => {
    const r = await app(width, 'en');
    let frame = r.frame();
    if (process.env['SHOW_FRAME']) console.log(frame);
    expect(frame).toMatch(/VERDICT/);
    expect(frame).toMatch(/default\s+empty\b.*broken/);
    expect(frame).toMatch(/kube-system\s+kube-dns\b.*ok/);
    expect(frame).toMatchSnapshot();
    await r.press('d');
    frame = r.frame();
    expect(frame).toContain('default/empty: broken');
    expect(frame).toMatch(/broken\s+endpoints/);
    expect(frame).toMatchSnapshot();
    await r.press(KEYS.escape);
    expect(r.frame()).toMatch(/default\s+empty\b.*broken/);
    r.unmount();
  });

  it('ja: the same in Japanese', async () => {
    const r = await app(width, 'ja');
    expect(r.frame()).toContain('判定');
    expect(r.frame()).toContain('不通');
    await r.press('d');
    expect(r.frame()).toContain('default/empty: 不通');
    expect(r.frame()).toMatchSnapshot();
    r.unmount();
  });
});

describe('from a finding to the rule that proves it', () => {
  it('a broken verdict (nftables node, web endpoints missing) → d → Enter: the proving rule, 2 keys', async () => {
    const { generatedNode, withService, RICH_SCENARIO } = await import('../helpers/diagnose-scenario.js');
    const base = await snapshotOf('lab-nftables');
    const rules = withService(RICH_SCENARIO, 'web', (s) => ({ ...s, endpoints: s.endpoints.slice(0, 1), ports: s.ports.map((p) => ({ ...p, targetPort: 8081 })) }));
    const snapshot = generatedNode(base, { mode: 'nftables', rules });
    const r = await renderApp(<App session={staticSession(snapshot)} lang="en" width={120} height={24} />, 120, 24);
    // Services rows by name: default/empty, ext, remote-local, sticky, web (the fifth).
    for (let i = 0; i < 4; i++) await r.press(KEYS.down);
    expect(r.frame()).toMatch(/endpoints of default\/web$/m);
    expect(r.frame()).toMatch(/default\s+web\s.*broken/);
    await r.press('d');
    expect(r.frame()).toContain('default/web: broken');
    await r.press(KEYS.enter);
    const frame = r.frame();
    expect(frame).toMatch(/chain ip kube-proxy\/endpoint-\S+__10\.244\.0\.23\/8081/);
    expect(frame).toContain('dnat to 10.244.0.23:8081');
    r.unmount();
  });
});
