/** The Step pane's final step says what the API expects for the traced Service on this node (issue 21), 80 and 120 columns, en and ja. */
import React from 'react';
import { describe, expect, it } from 'vitest';
import { staticSession } from '../../src/collect/session.js';
import { App } from '../../src/ui/App.js';
import { snapshotOf } from '../helpers/fixtures.js';
import { FRAME_WIDTHS, renderApp } from '../helpers/render.js';

describe.each(FRAME_WIDTHS)('Step pane with the API expectation at %i columns', (width) => {
  it.each([['en', 'API says', 'the API expects cluster traffic to default/empty', /REJECT — no endpoints$/m], ['ja', 'API上', 'API によれば、このノードで default/empty 宛ての cluster 通信', /REJECT。 ?エンドポイントなし$/m]] as const)('%s: a REJECTed Service', async (lang, label, text, verdict) => {
    const r = await renderApp(<App session={staticSession(await snapshotOf('lab-iptables'))} lang={lang} width={width} height={40} />, width, 40);
    // default/empty is the first Service: t walks a packet to it; n steps to the final step.
    await r.press('t');
    for (let i = 0; i < 40; i++) await r.press('n');
    const frame = r.frame();
    expect(frame).toContain(label);
    expect(frame.replace(/\n\s+/g, ' ')).toContain(text);
    expect(frame.replace(/\n\s+/g, ' ')).toMatch(verdict);
    r.unmount();
  }, 30_000);
});
