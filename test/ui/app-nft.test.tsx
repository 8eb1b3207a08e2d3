import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import React from 'react';
import { describe, expect, it } from 'vitest';
import { staticSession } from '../../src/collect/session.js';
import { App } from '../../src/ui/App.js';
import { copyFixture, fixtureDir, snapshotOf, snapshotOfDir } from '../helpers/fixtures.js';
import { FRAME_WIDTHS, KEYS, renderApp } from '../helpers/render.js';

async function app(width: number, dir?: string) {
  const snapshot = dir ? await snapshotOfDir(dir) : await snapshotOf('lab-nftables');
  return renderApp(<App session={staticSession(snapshot)} lang="en" width={width} height={30} />, width, 30);
}

describe('the nftables Rules pane\'s hook cell', () => {
  it('shows each base chain\'s type, hook and priority as nft list prints them, the priority never cut (120 columns)', async () => {
    const r = await app(120);
    await r.press('2');
    const frame = r.frame();
    // The reference: `chain NAME {` and its `type T hook H priority P;` line in the capture's `nft list ruleset`.
    const text = readFileSync(path.join(fixtureDir('lab-nftables'), 'probes', 'nft-text.stdout'), 'utf8');
    const hooks = [...text.matchAll(/chain (\S+) \{\n\s*type (\S+) hook (\S+) priority ([^;]+);/g)];
    expect(hooks.map((m) => m[4])).toEqual(expect.arrayContaining(['dstnat - 10', '-110', 'filter']));
    for (const [, chain, type, hook, priority] of hooks) {
      const row = frame.split('\n').find((l) => l.includes(` ${chain!} `));
      expect(row, chain).toMatch(new RegExp(` ${type!} ${hook!} ${priority!.replace(/[-+]/g, '\\$&')} +accept `));
    }
    expect(frame).not.toContain('- …');
    r.unmount();
  });
});

describe.each(FRAME_WIDTHS)('App on the nftables lab capture at %i columns', (width) => {
  it('lists kube-proxy chains in hook order and the service-ips map', async () => {
    const r = await app(width);
    expect(r.frame()).toContain('mode: nftables');
    await r.press('2');
    const frame = r.frame();
    expect(frame).toContain('ip kube-proxy');
    // base chains come first, by hook then priority: prerouting before output before postrouting
    const pre = frame.indexOf('nat-prerouting');
    const out = frame.indexOf('nat-output');
    const post = frame.indexOf('nat-postrouting');
    expect(pre).toBeGreaterThan(0);
    expect(pre).toBeLessThan(out);
    expect(out).toBeLessThan(post);
    expect(frame).toMatchSnapshot();
    await r.press('/', ...'service-', KEYS.enter);
    expect(r.frame()).toContain('@service-ips');
    expect(r.frame()).toContain('@service-nodeports');
    r.unmount();
  });

  it('reaches a dnat from the web Service in 2 keys: Enter, Enter', async () => {
    const r = await app(width);
    await r.press(KEYS.down); // empty → web
    await r.press(KEYS.enter);
    const svc = r.frame();
    expect(svc).toMatch(/service-[A-Z0-9]{8}-default\/web\/tcp\/http/);
    expect(svc.match(/33\.3%/g)).toHaveLength(3);
    expect(svc).toContain('derived from conntrack');
    await r.press(KEYS.enter);
    const ep = r.frame();
    expect(ep).toMatch(/endpoint-[A-Z0-9]{8}-default\/web\/tcp\/http__10\.244\.0\.\d+\/8080/);
    expect(ep).toMatch(/dnat to 10\.244\.0\.\d+:8080/);
    r.unmount();
  });

  it('opens the service-ips map and follows an element to its service chain', async () => {
    const r = await app(width);
    // The list keeps the map and the chain that holds @service-ips (issue 22 item 2): the map is second.
    await r.press('2', '/', ...'service-ips', KEYS.enter);
    expect(r.frame()).toMatch(/kube-proxy\s+services[^\n]*\n[^\n]*@service-ips/);
    await r.press(KEYS.down, KEYS.enter);
    const map = r.frame();
    expect(map).toContain('10.96.12.34 . tcp . 80');
    await r.press('/', ...'12.34', KEYS.enter, KEYS.enter);
    expect(r.frame()).toMatch(/chain ip kube-proxy\/service-[A-Z0-9]{8}-default\/web\/tcp\/http/);
    r.unmount();
  });
});

describe('App on a damaged nft JSON capture', () => {
  const cases: [string, (json: string) => string][] = [
    ['truncated JSON', (json) => json.slice(0, Math.floor(json.length / 2))],
    ['a wrong json_schema_version', (json) => json.replace('"json_schema_version": 1', '"json_schema_version": 7').replace('"json_schema_version":1', '"json_schema_version":7')],
    ['text where JSON was expected', () => 'table ip kube-proxy {\n\tchain x {\n\t}\n}\n'],
  ];
  it.each(cases)('shows a clear error in the Rules pane for %s, and does not crash', async (_name, damage) => {
    const dir = copyFixture('lab-nftables');
    const file = path.join(dir, 'probes', 'nft-json.stdout');
    writeFileSync(file, damage(readFileSync(file, 'utf8')));
    const r = await app(120, dir);
    await r.press('2');
    const frame = r.frame();
    expect(frame).toMatch(/line\(s\) not understood/);
    expect(frame).toMatch(/nft-json(:\d+)?: error:/);
    r.unmount();
  });
});
