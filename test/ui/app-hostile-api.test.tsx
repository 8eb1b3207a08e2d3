/**
 * The TUI on a capture whose api.json holds a Service selector nested 6,000 levels deep
 * (issue 24 item 8): the API part reports a diagnostic, the Services and the node's rules
 * still show (before, a RangeError left the TUI without any data).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import React from 'react';
import { describe, expect, it } from 'vitest';
import { staticSession } from '../../src/collect/session.js';
import { App } from '../../src/ui/App.js';
import { copyFixture, snapshotOfDir } from '../helpers/fixtures.js';
import { FRAME_WIDTHS, renderApp } from '../helpers/render.js';

describe.each(FRAME_WIDTHS)('App on a capture with a 6,000-level selector at %i columns', (width) => {
  it('shows the Services and, on 2, the rules; the API diagnostic is kept', async () => {
    const dir = copyFixture('lab-iptables');
    const file = path.join(dir, 'api.json');
    const api = JSON.parse(readFileSync(file, 'utf8')) as { items: Record<string, any>[] };
    api.items.find((i) => i['kind'] === 'Service' && i['metadata']['name'] === 'web')!['spec']['selector'] = '@DEEP@';
    writeFileSync(file, JSON.stringify(api).replace('"@DEEP@"', `${'{"a":'.repeat(6000)}1${'}'.repeat(6000)}`));
    const snapshot = await snapshotOfDir(dir);
    expect(snapshot.api?.diagnostics.some((d) => d.code === 'wrong-type' && d.message.includes('spec.selector.a'))).toBe(true);
    const r = await renderApp(<App session={staticSession(snapshot)} lang="en" width={width} height={30} />, width, 30);
    expect(r.frame()).toContain('default/web');
    await r.press('2');
    expect(r.frame()).toContain('KUBE-POSTROUTING');
    r.unmount();
  });
});
