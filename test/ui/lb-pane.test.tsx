/**
 * Frames of the LB pane (Cilium) at 80 and 120 columns: on the Cilium lab capture (alone,
 * and inside the App after Enter on a Service), on a copy whose backend map dump has an
 * unknown value size, and on a node without Cilium maps.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import React from 'react';
import { describe, expect, it } from 'vitest';
import { buildLbView, lbFrontendIndexForService } from '../../src/analysis/lb-view.js';
import { staticSession } from '../../src/collect/session.js';
import { App } from '../../src/ui/App.js';
import { LbPane } from '../../src/ui/panes/LbPane.js';
import { cellWidth } from '../../src/text/cells.js';
import { copyFixture, snapshotOf, snapshotOfDir } from '../helpers/fixtures.js';
import { FRAME_WIDTHS, KEYS, renderApp, renderAt } from '../helpers/render.js';

/** A backend map dump whose values are 4 bytes longer than any Cilium layout: a bundle copy. */
function damagedCiliumCapture(): string {
  const dir = copyFixture('lab-cilium');
  const file = path.join(dir, 'probes', 'bpf-lb4-backends.stdout');
  const entries = JSON.parse(readFileSync(file, 'utf8')) as { key: string[]; value: string[] }[];
  writeFileSync(file, JSON.stringify(entries.map((e) => ({ ...e, value: [...e.value, '0x00', '0x00', '0x00', '0x00'] }))));
  return dir;
}

describe.each(FRAME_WIDTHS)('LB pane on the Cilium lab capture at %i columns', async (width) => {
  const view = buildLbView(await snapshotOf('lab-cilium'));
  const web = lbFrontendIndexForService(view, 'default', 'web');

  it("lists the frontends, and the selected one's slots with states, nodes and conditions", () => {
    const r = renderAt(<LbPane data={view} width={width} height={24} focused cursor={web} lang="en" />, width);
    const frame = r.frame();
    expect(frame).toContain('source: pinned BPF maps via bpftool: cilium_lb{4,6}_services_v2,');
    expect(frame).toContain('cilium-agent not reached');
    expect(frame).toMatch(/10\.96\.12\.34:80\/TCP +ClusterIP, non-routable +1 +2\+1 default\/web/);
    expect(frame).toMatch(/192\.168\.49\.2:30080\/TCP NodePort +3 +2\+1 default\/web/);
    expect(frame).toContain('default/web (http) · 10.96.12.34:80/TCP · ID 1 · count 2 + qcount 1');
    expect(frame).toMatch(/ 3 .*10\.244\.1\.15:8080 +terminating no +lab-node2 +!ready serving terminating/);
    expect(frame.split('\n').every((l) => l.length <= width)).toBe(true);
    expect(frame).toMatchSnapshot();
    r.unmount();
  });

  it('in Japanese keeps the yes/no of new connections whole and tells the two state columns apart', () => {
    const frame = renderAt(<LbPane data={view} width={width} height={24} focused cursor={web} lang="ja" />, width).frame();
    expect(frame).toMatch(/10\.244\.1\.15:8080 +terminating +いいえ +lab-node2/);
    expect(frame).not.toContain('い…');
    const header = frame.split('\n').find((l) => l.includes('バックエンド'))!;
    expect(header.match(/状態/g)).toHaveLength(2);
    expect(header).toMatch(/ 状態 .* EP状態/);
    expect(frame.split('\n').every((l) => cellWidth(l) <= width)).toBe(true);
    expect(frame).toMatchSnapshot();
  });

  it('says a frontend has no backend slots', () => {
    const empty = view.frontends.findIndex((f) => f.service?.name === 'empty');
    const r = renderAt(<LbPane data={view} width={width} height={24} focused cursor={empty} lang="en" />, width);
    expect(r.frame()).toContain('no backend slots: a new connection to this frontend finds no backend');
    r.unmount();
  });

  it('shows a map dump with an unknown value size as undecoded, with the reason, and the slots it left without backends', async () => {
    const damaged = buildLbView(await snapshotOfDir(damagedCiliumCapture()));
    const r = renderAt(<LbPane data={damaged} width={width} height={24} focused cursor={lbFrontendIndexForService(damaged, 'default', 'web')} lang="en" />, width);
    const frame = r.frame();
    expect(frame.replace(/\n/g, ' ')).toContain('⚠ cilium_lb4_backends_v3: 8 entries not decoded: key/value size 4/16 bytes matches no known layout of cilium_lb4_backends_v3');
    expect(frame).toMatch(/ {3}1 id 1 not in map +missing +yes/);
    expect(frame).toMatchSnapshot();
    r.unmount();
  });

  it('says what was tried on a node without Cilium maps', async () => {
    const absent = buildLbView(await snapshotOf('lab-iptables'));
    const r = renderAt(<LbPane data={absent} width={width} height={24} focused cursor={0} lang="en" />, width);
    expect(r.frame().replace(/\n/g, ' ')).toContain('no Cilium LB table: bpftool -j map dump pinned /sys/fs/bpf/tc/globals/cilium_lb4_services_v2: exit code 255');
    expect(r.frame()).toContain('--bpf-root DIR');
    r.unmount();
  });
});

describe('LB pane in the App on a Cilium node', () => {
  it('Enter on web in the Services pane opens its ClusterIP frontend and backends', async () => {
    const snapshot = await snapshotOf('lab-cilium');
    const r = await renderApp(<App session={staticSession(snapshot)} lang="en" width={120} height={30} />, 120, 30);
    expect(r.frame()).toContain('mode: cilium');
    expect(r.frame()).toContain('mode: cilium — 0 KUBE- chains; lb4: 7 frontends + 14 slots; 10 CILIUM_ chains');
    await r.press('/', 'w', 'e', 'b', KEYS.enter); // web, web-headless
    await r.press(KEYS.enter);
    const frame = r.frame();
    expect(frame).toContain('default/web (http) · 10.96.12.34:80/TCP · ID 1 · count 2 + qcount 1');
    expect(frame).toMatch(/10\.244\.0\.23:8080 +active +yes +lab-node \(this node\)/);
    expect(frame).toMatch(/10\.244\.1\.15:8080 +terminating +no +lab-node2/);
    // The header (mode evidence) belongs to the Header's tests; the pane's body is kept whole.
    expect(frame.split('\n').slice(3).join('\n')).toMatchSnapshot();
    r.unmount();
  });

  it('filters frontends with / and renders in Japanese', async () => {
    const snapshot = await snapshotOf('lab-cilium');
    const r = await renderApp(<App session={staticSession(snapshot)} lang="ja" width={80} height={30} />, 80, 30);
    await r.press('3', '/', 'd', 'n', 's', KEYS.enter);
    const frame = r.frame();
    expect(frame).toContain('ソース: bpftoolで読んだピン留めBPFマップ');
    expect(frame).toContain('10.96.0.10:53/TCP');
    expect(frame).toContain('10.96.0.10:53/UDP');
    expect(frame).not.toContain('10.96.12.34:80/TCP');
    r.unmount();
  });
});
