/**
 * Frames of the fleet matrix (`nodescope --fleet DIR`) at 80 and 120 columns, in English
 * and Japanese, over a generated lab fleet (test/helpers/fleet-fixtures.ts: lab-node2 with a
 * stale web endpoint, lab-node3 without kube-dns, lab-node9 not captured): header counts,
 * a row per Service with a non-ok node, columns with the nodes at fault first, the cursor
 * cell's findings; Enter opens the node's panes on that Service, Esc returns.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import React from 'react';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { staticSession } from '../../src/collect/session.js';
import { diagnoseFleet, type FleetDiagnosis } from '../../src/fleet/diagnose.js';
import { fleetDiagnoseNode } from '../../src/fleet/node-diagnosis.js';
import { FleetApp } from '../../src/ui/fleet/FleetApp.js';
import { FleetMatrixPane } from '../../src/ui/fleet/FleetMatrixPane.js';
import { matrixColumns, visibleColumns } from '../../src/ui/fleet/fleet-matrix.js';
import { writeLabFleet } from '../helpers/fleet-fixtures.js';
import { snapshotOfDir } from '../helpers/fixtures.js';
import { FRAME_WIDTHS, KEYS, renderApp, renderAt } from '../helpers/render.js';

const LANGS = ['en', 'ja'] as const;
let dir: string;
let data: FleetDiagnosis;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'nodescope-fleet-ui-'));
  writeLabFleet(dir);
  data = await diagnoseFleet(dir, { diagnose: fleetDiagnoseNode });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.each(FRAME_WIDTHS.flatMap((w) => LANGS.map((l) => [w, l] as const)))('fleet matrix at %i columns (%s)', (width, lang) => {
  it('shows the counts, the Services × nodes matrix with the nodes at fault first, and the cursor cell\'s findings', () => {
    // Row 1 is default/web, column 0 lab-node2 (the stale endpoint).
    const r = renderAt(<FleetMatrixPane data={data} dir="fleet" cursor={{ row: 1, col: 0 }} width={width} height={20} lang={lang} notice={null} />, width);
    const frame = r.frame();
    expect(frame).toContain(lang === 'en' ? '4 nodes: 1 ok · 1 degraded · 1 broken · 1 failed' : 'ノード 4 台: 正常 1 · 劣化 1 · 故障 1 · 取得失敗 1');
    const header = frame.split('\n').find((l) => l.includes('lab-node2'))!;
    expect(header.indexOf('lab-node2')).toBeLessThan(header.indexOf('lab-node3'));
    const ok = lang === 'en' ? 'ok' : '正常';
    const broken = lang === 'en' ? 'broken' : '故障';
    const degraded = lang === 'en' ? 'degraded' : '劣化';
    expect(frame).toMatch(new RegExp(`kube-system/kube-dns +${ok} +${broken}`));
    expect(frame).toMatch(new RegExp(`default/web +${degraded} +${ok}`));
    // The finding sentence in the pane's language (its `said` key, not the English message).
    expect(frame).toContain(lang === 'en' ? '10.96.12.34:80/TCP → 10.244.1.99:8080: in no EndpointSlice' : '10.96.12.34:80/TCP → 10.244.1.99:8080: Service のどの EndpointSlice にも');
    expect(frame).toContain('+10.244.1.99:8080');
    // Under the node names, each node's freshness: lab-node's kube-proxy synced 12 s before the capture, the others' metrics unread.
    expect(frame).toMatch(lang === 'en' ? /^freshness +\? +\? +sync 12s *$/m : /^鮮度 +不明 +不明 +同期 12s前 *$/m);
    expect(frame.split('\n').every((l) => [...l].length <= width)).toBe(true);
    expect(frame).toMatchSnapshot();
    r.unmount();
  });

  it('names why a failed node has no cells', () => {
    const failedCol = matrixColumns(data).findIndex((c) => c.failed);
    const r = renderAt(<FleetMatrixPane data={data} dir="fleet" cursor={{ row: 0, col: failedCol }} width={width} height={20} lang={lang} notice={null} />, width);
    expect(r.frame()).toContain('lab-node9');
    expect(r.frame()).toContain(lang === 'en' ? 'timed out after 2 min while opening the node' : 'ノードを開く途中で時間切れ（2 分）');
    r.unmount();
  });
});

describe('the fleet TUI', () => {
  it('Enter on a cell opens that node on that Service; Esc returns to the matrix', async () => {
    const opened: string[] = [];
    const openNode = async (node: string) => {
      opened.push(node);
      const session = staticSession(await snapshotOfDir(path.join(dir, 'nodes', node)));
      return { session, stop: async () => undefined };
    };
    const app = await renderApp(<FleetApp data={data} dir="fleet" lang="en" openNode={openNode} />, 120, 30);
    expect(app.frame()).toContain('4 nodes: 1 ok');
    await app.press(KEYS.down, KEYS.enter);
    await new Promise((r) => setTimeout(r, 300));
    await app.press('');
    expect(opened).toEqual(['lab-node2']);
    const node = app.frame();
    expect(node).toContain('lab-node2');
    expect(node).toMatch(/\* web \(pinned\)/);
    await app.press(KEYS.escape);
    expect(app.frame()).toContain('4 nodes: 1 ok');
    app.unmount();
  });

  it('keeps the cursor column on screen when the nodes do not fit', () => {
    const cols = Array.from({ length: 30 }, (_, i) => ({ node: `node-${i}`, failed: false, width: 8 }));
    expect(visibleColumns(cols, 0, 50)).toEqual({ first: 0, count: 5 });
    expect(visibleColumns(cols, 12, 50)).toEqual({ first: 8, count: 5 });
    expect(visibleColumns(cols, 29, 50)).toEqual({ first: 25, count: 5 });
  });
});
