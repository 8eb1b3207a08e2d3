/**
 * No English reaches the screen in Japanese (issue 22 item 5): (a) every English UI string
 * and every step-walk sentence has a Japanese one with no English word left, and (b) every
 * pane of the pane registry, the help, the step walk of every Service (each step, the
 * cursor moved with n), the findings view of every Service (each finding), the dashboard
 * (with its help) and the fleet matrix (every cell, a kube-proxy and a Cilium fleet)
 * rendered in ja at 80 and 120 columns show no English word outside the allow-list of
 * proper terms and the words of the data itself (test/helpers/english.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import React from 'react';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { staticSession } from '../../src/collect/session.js';
import { diagnoseFleet } from '../../src/fleet/diagnose.js';
import { fleetDiagnoseNode } from '../../src/fleet/node-diagnosis.js';
import { messageKeys, t, type MessageKey } from '../../src/text/i18n.js';
import { WHY_GENERIC, WHY_PHRASES, WHY_PIECES } from '../../src/text/messages/why.js';
import { App } from '../../src/ui/App.js';
import { FleetMatrixPane } from '../../src/ui/fleet/FleetMatrixPane.js';
import { matrixColumns } from '../../src/ui/fleet/fleet-matrix.js';
import { PANE_REGISTRY } from '../../src/ui/pane-registry.js';
import { frontendsText, statusText } from '../helpers/cilium-agent-text.js';
import { openDash } from '../helpers/dash-screen.js';
import { captureWords, englishLeft, treeWords } from '../helpers/english.js';
import { writeCiliumFleet } from '../helpers/fleet-cilium-fixtures.js';
import { writeLabFleet } from '../helpers/fleet-fixtures.js';
import { fixtureDir, snapshotOf } from '../helpers/fixtures.js';
import { FRAME_WIDTHS, KEYS, renderAt, renderApp } from '../helpers/render.js';

const CAPTURES = ['lab-iptables', 'lab-nftables', 'lab-cilium'] as const;
const NONE: ReadonlySet<string> = new Set();

/** A string with its `{param}` / `$hole` slots taken out. */
function withoutSlots(text: string): string {
  return text.replace(/\{\w+\}/g, ' ').replace(/\$\*?[A-Za-z]\w*/g, ' ');
}


describe('the English finder', () => {
  it('flags an English sentence and an English column header, and lets proper terms, data, flags and cut identifiers pass', () => {
    const data = new Set(['web', 'kubernetes', 'portals']);
    expect(englishLeft('理由  the packet starts a NEW flow', NONE).map((w) => w.word)).toEqual(['the', 'starts', 'flow']);
    expect(englishLeft('TABLE  チェイン  HOOK / TYPE', NONE).map((w) => w.word)).toEqual(['TABLE', 'HOOK', 'TYPE']);
    const fine = 'ルール -A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES  jump KUBE-SVC-CDGGSHY… ct state NEW web resolv.conf';
    expect(englishLeft(fine, data)).toEqual([]);
  });
});

describe('the i18n tables in Japanese', () => {
  it('give every English key a Japanese string with no English word left', () => {
    const bad: string[] = [];
    for (const key of messageKeys) {
      const ja = t('ja', key as MessageKey);
      if (typeof ja !== 'string' || ja.trim() === '' && t('en', key as MessageKey).trim() !== '') bad.push(`${key}: missing`);
      else for (const { word } of englishLeft(withoutSlots(ja), NONE)) bad.push(`${key}: ${word} in "${ja}"`);
    }
    expect(bad).toEqual([]);
  });

  it('give every step-walk sentence a Japanese one with no English word left', () => {
    const bad: string[] = [];
    for (const [en, ja] of [...WHY_PHRASES, ...WHY_GENERIC, ...WHY_PIECES]) {
      for (const { word } of englishLeft(withoutSlots(ja), NONE)) bad.push(`${word} in "${ja}" (for "${en}")`);
      const holes = (s: string) => [...s.matchAll(/\$\*?([A-Za-z]\w*)/g)].map((m) => m[1]).sort();
      expect(holes(ja), en).toEqual(holes(en));
    }
    expect(bad).toEqual([]);
  });
});

/** Presses `key` and waits (up to ~1 s) until the frame no longer says it is loading. */
async function settled(r: Awaited<ReturnType<typeof renderApp>>, ...keys: string[]): Promise<string> {
  await r.press(...keys);
  for (let i = 0; i < 25 && /問い合わせ中|読み込み中|…（/.test(r.frame()); i++) await new Promise((resolve) => setTimeout(resolve, 40));
  return r.frame();
}

describe.each(CAPTURES)('the %s capture in Japanese', (capture) => {
  it.each(FRAME_WIDTHS)('shows no English in any pane, the help or any step of any walk at %i columns', async (width) => {
    const snapshot = await snapshotOf(capture);
    const words = captureWords(capture);
    const r = await renderApp(<App session={staticSession(snapshot)} lang="ja" width={width} height={40} />, width, 40);
    const left = new Map<string, string>();
    const check = (where: string, frame: string) => {
      for (const { word, line } of englishLeft(frame, words)) if (!left.has(word)) left.set(word, `${where}: ${line.trim()}`);
    };
    for (const pane of PANE_REGISTRY) check(pane.id, await settled(r, pane.key));
    check('help', await settled(r, '?'));
    // The help scrolls: its end (the capture note, the probes) too.
    check('help end', await settled(r, 'G'));
    await r.press(KEYS.escape);
    const services = snapshot.api?.value?.services.length ?? 0;
    for (let row = 0; row < services; row++) {
      await r.press('1', ...Array<string>(row).fill(KEYS.down), 't');
      let previous = '';
      for (let step = 0; step < 60; step++) {
        const frame = r.frame();
        if (frame === previous) break;
        check(`walk of row ${row + 1}, step ${step + 1}`, frame);
        previous = frame;
        await r.press('n');
      }
      await r.press('1', ...Array<string>(services).fill(KEYS.up));
    }
    r.unmount();
    expect([...left].map(([word, where]) => `${word} — ${where}`)).toEqual([]);
  }, 240_000);
});

/** Collects the English words of frames, each with the first place it was seen. */
function englishFinder(words: ReadonlySet<string>) {
  const left = new Map<string, string>();
  return {
    check(where: string, frame: string): void {
      for (const { word, line } of englishLeft(frame, words)) if (!left.has(word)) left.set(word, `${where}: ${line.trim()}`);
    },
    found: () => [...left].map(([word, where]) => `${word} — ${where}`),
  };
}

describe.each(CAPTURES)('the findings view and the dashboard of the %s capture in Japanese', (capture) => {
  it.each(FRAME_WIDTHS)('the findings view (d) of every Service, each finding under the cursor, shows no English at %i columns', async (width) => {
    const snapshot = await snapshotOf(capture);
    const finder = englishFinder(captureWords(capture));
    const r = await renderApp(<App session={staticSession(snapshot)} lang="ja" width={width} height={30} />, width, 30);
    const services = snapshot.api?.value?.services.length ?? 0;
    let seen = 0;
    for (let row = 0; row < services; row++) {
      await r.press('1', ...Array<string>(services).fill(KEYS.up), ...Array<string>(row).fill(KEYS.down));
      let previous = '';
      let frame = await settled(r, 'd');
      for (let finding = 0; finding < 30 && frame !== previous; finding++) {
        finder.check(`findings of row ${row + 1}, finding ${finding + 1}`, frame);
        seen++;
        previous = frame;
        await r.press(KEYS.down);
        frame = r.frame();
      }
      await r.press(KEYS.escape);
    }
    r.unmount();
    expect(seen).toBeGreaterThan(services);
    expect(finder.found()).toEqual([]);
  }, 120_000);

  it.each(FRAME_WIDTHS)('the dashboard of default/web and its help (?) show no English at %i columns', async (width) => {
    const finder = englishFinder(captureWords(capture));
    const dash = await openDash(staticSession(await snapshotOf(capture)), 'default/web', 'ja', width);
    try {
      finder.check('dash', dash.frame());
      expect(dash.frame()).toContain('default/web');
      await dash.press('?');
      finder.check('dash help', dash.frame());
      // The help box is drawn over the chart (made after it), its title and its last line whole.
      expect(dash.frame()).toContain(t('ja', 'dash.helpTitle'));
      expect(dash.frame()).toContain('このヘルプの表示・非表示');
    } finally {
      await dash.close();
    }
    // The replay header names the capture's folder: its path is data.
    expect(finder.found().filter((f) => !fixtureDir(capture).includes(f.split(' — ')[0]!))).toEqual([]);
  }, 60_000);
});

describe('the fleet matrix in Japanese', () => {
  const OK = [['cilium-health-ep', '14s ago', 'never', 0, 'no error']] as const;
  const FAILING = [['sync-lb-maps', '2m ago', '2m ago', 3, 'lb4 map full']] as const;
  const web = (status: string, since: string, error = '') => frontendsText([['10.96.12.34:80/TCP', 'ClusterIP', 'default/web', 'http', '10.244.0.23:8080/TCP', status, since, error]]);
  let root: string;
  const fleets: { name: string; dir: string }[] = [];

  beforeAll(() => {
    root = mkdtempSync(path.join(tmpdir(), 'nodescope-ja-fleet-'));
    const lab = path.join(root, 'lab');
    writeLabFleet(lab);
    // Each Cilium node's agent in another state: a frontend pending, one in error, a failing controller.
    const cilium = path.join(root, 'cilium');
    writeCiliumFleet(cilium, {
      'lab-node': { status: statusText('Ok   1.34', FAILING), frontends: web('Done', '5m2s') },
      'lab-node2': { status: statusText('Ok   1.34', OK), frontends: web('Pending', '3m5s') },
      'lab-node3': { status: statusText('Ok   1.34', OK), frontends: web('Error', '1m', 'map full') },
    });
    fleets.push({ name: 'kube-proxy', dir: lab }, { name: 'Cilium', dir: cilium });
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it.each(FRAME_WIDTHS)('every cell of a kube-proxy and a Cilium fleet shows no English at %i columns', async (width) => {
    let cells = 0;
    for (const fleet of fleets) {
      const data = await diagnoseFleet(fleet.dir, { diagnose: fleetDiagnoseNode });
      // The nodes' bundles are data; fleet.json's reasons for a failed node are nodescope's own sentences.
      const finder = englishFinder(treeWords(path.join(fleet.dir, 'nodes')));
      const columns = matrixColumns(data).length;
      for (let row = 0; row < data.services.length; row++) {
        for (let col = 0; col < columns; col++) {
          const r = renderAt(<FleetMatrixPane data={data} dir={fleet.dir} cursor={{ row, col }} width={width} height={24} lang="ja" notice={null} />, width);
          finder.check(`${fleet.name} fleet, row ${row + 1}, column ${col + 1}`, r.frame());
          r.unmount();
          cells++;
        }
      }
      expect(finder.found(), fleet.name).toEqual([]);
    }
    expect(cells).toBeGreaterThan(12);
  }, 60_000);
});
