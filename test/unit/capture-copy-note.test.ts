/**
 * A capture read from a replay bundle says it is a copy and keeps the bundle's note (issue 22
 * item 7); the Cilium lab bundle's note explains its cali* pod interfaces beside lxc+ rules.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { captureBundle } from '../../src/collect/capture.js';
import { readBundle } from '../../src/sources/bundle.js';
import { openSource } from '../../src/sources/open.js';
import { fixtureDir } from '../helpers/fixtures.js';

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
});
