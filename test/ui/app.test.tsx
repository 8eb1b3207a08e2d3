import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import React from 'react';
import { describe, expect, it } from 'vitest';
import { staticSession } from '../../src/collect/session.js';
import { App } from '../../src/ui/App.js';
import { copyFixture, snapshotOf, snapshotOfDir } from '../helpers/fixtures.js';
import { FRAME_WIDTHS, KEYS, renderApp } from '../helpers/render.js';

async function app(width: number, snapshotName = 'lab-iptables', height = 30) {
  const snapshot = await snapshotOf(snapshotName);
  return renderApp(<App session={staticSession(snapshot)} lang="en" width={width} height={height} />, width, height);
}

describe.each(FRAME_WIDTHS)('App on the iptables lab capture at %i columns', (width) => {
  it('opens on the Services pane with endpoints and their conditions', async () => {
    const r = await app(width);
    const frame = r.frame();
    expect(frame).toContain('node lab-node');
    expect(frame).toContain('mode: iptables');
    expect(frame).toMatch(/kube-system\s+kube-dns\s+ClusterIP\s+10\.96\.0\.10/);
    expect(frame).toContain('endpoints of default/empty');
    expect(frame).toMatchSnapshot();
    r.unmount();
  });

  it('selects web, opens its KUBE-SVC chain with 1/N probabilities, follows a jump to KUBE-SEP, and goes back', async () => {
    const r = await app(width);
    await r.press(KEYS.down); // empty → web
    expect(r.frame()).toContain('endpoints of default/web');
    expect(r.frame()).toMatch(/10\.244\.1\.15.*lab-node2/);
    await r.press(KEYS.enter);
    let frame = r.frame();
    expect(frame).toMatch(/chain nat\/KUBE-SVC-[A-Z2-7]{16}/);
    expect(frame.match(/33\.3%/g)).toHaveLength(3);
    expect(frame).toMatchSnapshot();
    await r.press(KEYS.enter); // the cursor already sits on the first KUBE-SEP branch
    frame = r.frame();
    expect(frame).toMatch(/chain nat\/KUBE-SEP-[A-Z2-7]{16}/);
    expect(frame).toContain('DNAT 10.244.0.23:8080');
    expect(frame).toMatchSnapshot();
    await r.press(KEYS.escape);
    expect(r.frame()).toMatch(/chain nat\/KUBE-SVC-/);
    r.unmount();
  });

  it('lists every chain on the Rules pane and filters them with /', async () => {
    const r = await app(width);
    await r.press('2');
    expect(r.frame()).toContain('tables and chains');
    expect(r.frame()).toContain('KUBE-POSTROUTING');
    // The list keeps chains by name or by what they hold: KUBE-POSTROUTING holds no jump to KUBE-MARK-MASQ.
    await r.press('/', ...'MARK-MASQ', KEYS.enter);
    const frame = r.frame();
    expect(frame).toContain('KUBE-MARK-MASQ');
    expect(frame).toContain('KUBE-SVC-');
    expect(frame).not.toContain('KUBE-POSTROUTING');
    expect(frame).toContain('filter: MARK-MASQ');
    r.unmount();
  });
});

describe('App key handling', () => {
  it('shows and hides help with ?', async () => {
    const r = await app(80);
    await r.press('?');
    expect(r.frame()).toContain('Keys');
    expect(r.frame()).toContain('follow jump');
    await r.press('?');
    expect(r.frame()).not.toContain('follow jump');
    r.unmount();
  });

  it('renders in Japanese with --lang ja', async () => {
    const snapshot = await snapshotOf('lab-iptables');
    const r = await renderApp(<App session={staticSession(snapshot)} lang="ja" width={80} height={30} />, 80);
    expect(r.frame()).toContain('サービス');
    expect(r.frame()).toContain('ノード lab-node');
    expect(r.frame()).toContain('モード: iptables — iptables (nf_tables): KUBE- チェイン');
    r.unmount();
  });

  it('words the mode evidence in Japanese on a Cilium node, naming the services map count', async () => {
    const snapshot = await snapshotOf('lab-cilium');
    const r = await renderApp(<App session={staticSession(snapshot)} lang="ja" width={120} height={30} />, 120);
    // The full words are wider than 120 columns: the header's short forms keep every fact.
    expect(r.frame()).toContain('モード: cilium — KUBE- なし; lb4: フロント 7 + スロット 14; CILIUM_ チェイン 10');
    r.unmount();
  });
});

describe('App on damaged input', () => {
  it('shows the line iptables-save could not parse, and the rules it could', async () => {
    const dir = copyFixture('lab-iptables');
    const file = path.join(dir, 'probes', 'iptables-save.stdout');
    const lines = readFileSync(file, 'utf8').split('\n');
    const at = lines.findIndex((l) => l.includes('-A KUBE-SERVICES'));
    lines.splice(at, 0, '-A KUBE-SERVICES -x garbled \u0000\u0001 [oops');
    // and cut the dump in the middle of the last table: no COMMIT
    writeFileSync(file, lines.slice(0, lines.length - 4).join('\n'));
    const snapshot = await snapshotOfDir(dir);
    const r = await renderApp(<App session={staticSession(snapshot)} lang="en" width={120} height={30} />, 120, 30);
    await r.press('2');
    const frame = r.frame();
    expect(frame).toMatch(/line\(s\) not understood/);
    expect(frame).toContain(`iptables-save:${at + 1}`);
    expect(frame).toContain('KUBE-SERVICES');
    r.unmount();
  });
});

describe('navigation back from a Service', () => {
  it('returns to the Services pane with Esc after opening a Service chain', async () => {
    const r = await app(120);
    await r.press(KEYS.down, KEYS.enter);
    expect(r.frame()).toContain('Esc: back to Services');
    await r.press(KEYS.escape);
    expect(r.frame()).toContain('endpoints of default/web');
    r.unmount();
  });
});

describe('step mode from the Services pane', () => {
  it('walks a pod → web ClusterIP packet with t, steps with n, and follows another branch with b', async () => {
    const r = await app(120, 'lab-iptables', 34);
    await r.press(KEYS.down, 't');
    let frame = r.frame();
    expect(frame).toContain('tcp 10.244.0.9:43210 → 10.96.12.34:80');
    expect(frame).toMatch(/forwarded → 10\.244\.0\.23:8080/);
    expect(frame).toContain('step 1 of');
    await r.press('n', 'n');
    expect(r.frame()).toContain('step 3 of');
    await r.press('b');
    frame = r.frame();
    expect(frame).toMatch(/forwarded → 10\.244\.0\.31:8080/);
    r.unmount();
  });
});

describe('keys as a terminal sends them', () => {
  it('moves by every j of a burst ("jj" in one read), and Esc from the Step pane returns to Services', async () => {
    const r = await app(120, 'lab-iptables', 34);
    await r.press('jj'); // empty → web → web-headless
    expect(r.frame()).toContain('endpoints of default/web-headless');
    await r.press('k', 't');
    expect(r.frame()).toContain('step 1 of');
    await r.press(KEYS.escape);
    expect(r.frame()).toContain('endpoints of default/web');
    r.unmount();
  });
});

describe('before the first snapshot', () => {
  it('says loading, then the failure when the first load failed', async () => {
    const loading = await renderApp(<App session={staticSession(null)} lang="en" width={80} height={20} />, 80, 20);
    expect(loading.frame()).toContain('loading…');
    loading.unmount();
    const failed = await renderApp(<App session={staticSession(null, { loading: false, error: 'ssh: connection refused' })} lang="en" width={80} height={20} />, 80, 20);
    expect(failed.frame()).toContain('failed: ssh: connection refused');
    failed.unmount();
  });
});

describe('Enter on a Service with nothing to open', () => {
  it('says a headless Service has no dataplane rules, until the next key', async () => {
    const r = await app(120);
    await r.press(KEYS.down, KEYS.down); // empty → web → web-headless
    expect(r.frame()).toContain('endpoints of default/web-headless');
    await r.press(KEYS.enter);
    const frame = r.frame();
    expect(frame).toContain('headless Service (clusterIP: None): no ClusterIP, so no dataplane rules');
    expect(frame).toMatch(/default\s+web-headless\s+ClusterIP\s+None/); // still on the Services pane
    await r.press(KEYS.up);
    expect(r.frame()).not.toContain('headless Service (clusterIP: None)');
    expect(r.frame()).toContain('endpoints of default/web');
    r.unmount();
  });
});

describe('Enter on a Service without endpoints (issue 19 item 8: REJECT is not DROP)', () => {
  it('opens its REJECT rule in filter/KUBE-SERVICES, cursor on it, instead of saying nothing exists', async () => {
    const r = await app(120);
    expect(r.frame()).toContain('endpoints of default/empty'); // the first row
    await r.press(KEYS.enter);
    const frame = r.frame();
    expect(frame).toContain('chain filter/KUBE-SERVICES');
    expect(frame).not.toContain('no dataplane');
    // The detail under the table is the cursor's rule: the REJECT, quoted from the dump.
    expect(frame).toMatch(/line \d+:\n.*--comment "default\/empty has no endpoints"[^]*REJECT --reject-with icmp-port-unreachable/);
    await r.press(KEYS.escape);
    expect(r.frame()).toContain('endpoints of default/empty'); // back on Services
    r.unmount();
  });
});
