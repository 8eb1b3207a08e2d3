/**
 * A capture read from a replay bundle says it is a copy and keeps the bundle's note (issue 22
 * item 7); the Cilium lab bundle's note explains its cali* pod interfaces beside lxc+ rules.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import React from 'react';
import { describe, expect, it } from 'vitest';
import { captureBundle } from '../../src/collect/capture.js';
import { staticSession } from '../../src/collect/session.js';
import { showHead, headText } from '../../src/report/header.js';
import { App } from '../../src/ui/App.js';
import { FRAME_WIDTHS, renderApp } from '../helpers/render.js';
import { readBundle } from '../../src/sources/bundle.js';
import { openSource } from '../../src/sources/open.js';
import { fixtureDir, snapshotOfDir } from '../helpers/fixtures.js';

describe('re-capturing a replay', () => {
  it('keeps the note of the bundle it copies, says it is a copy of which capture, and adds the new note', async () => {
    const original = readBundle(fixtureDir('lab-cilium')).manifest;
    const source = await openSource({ replay: fixtureDir('lab-cilium') }, { progress: () => undefined });
    const out = mkdtempSync(path.join(tmpdir(), 'nodescope-copy-'));
    const manifest = await captureBundle(source, out, { progress: () => undefined, dns: false, note: 'workshop copy' });
    expect(manifest.note).toContain('workshop copy');
    expect(manifest.note).toContain(`copy of the capture of ${original.node} taken ${original.capturedAt}`);
    expect(manifest.note).toContain(original.note!);
    expect(JSON.parse(readFileSync(path.join(out, 'manifest.json'), 'utf8')).note).toBe(manifest.note);
  });

  it('explains in the Cilium lab bundle why its pod interfaces are cali* while the CILIUM_* rules name lxc+', () => {
    const { manifest, dir } = readBundle(fixtureDir('lab-cilium'));
    const addrs = readFileSync(path.join(dir, 'probes', 'ip-addr.stdout'), 'utf8');
    const rules = readFileSync(path.join(dir, 'probes', 'iptables-save.stdout'), 'utf8');
    expect(addrs).toMatch(/"ifname":"cali/);
    expect(addrs).not.toMatch(/"ifname":"lxc/);
    expect(rules).toContain('lxc+');
    expect(manifest.note).toMatch(/cali\*.*lxc\+/s);
  });

  it.each(FRAME_WIDTHS)('shows the copy and its note in the show head (text, JSON) and the ? overlay at %i columns', async (width) => {
    const original = readBundle(fixtureDir('lab-iptables')).manifest;
    const source = await openSource({ replay: fixtureDir('lab-iptables') }, { progress: () => undefined });
    const out = mkdtempSync(path.join(tmpdir(), 'nodescope-copy-'));
    const manifest = await captureBundle(source, out, { progress: () => undefined, dns: false });
    const snapshot = await snapshotOfDir(out);
    expect(snapshot.meta.note).toBe(manifest.note);
    const head = showHead(snapshot);
    expect(head.captureNote).toBe(manifest.note);
    const text = headText(head);
    expect(text.split('\n')[2]).toBe(`capture note: ${manifest.note}`);
    expect(text).toContain(`copy of the capture of ${original.node} taken ${original.capturedAt}`);
    expect(headText(head, 'ja')).toContain(`キャプチャの注記: copy of the capture of ${original.node}`);
    const r = await renderApp(<App session={staticSession(snapshot)} lang="en" width={width} height={40} />, width, 40);
    await r.press('?');
    // The overlay wraps the note inside its border: compare without the border and line breaks.
    const overlay = r.frame().split('\n').map((l) => l.replace(/^\s*│\s?|\s*│\s*$/g, '')).join(' ').replace(/\s+/g, ' ');
    r.unmount();
    expect(overlay).toContain(`capture note: copy of the capture of ${original.node} taken ${original.capturedAt}`);
  });
});
