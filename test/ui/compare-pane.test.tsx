import React, { act } from 'react';
import { describe, expect, it } from 'vitest';
import { COMPARE_MODES, compareModes, modeTotal } from '../../src/analysis/compare-modes.js';
import { createModeComparer, type ModeComparer } from '../../src/analysis/compare-modes-lazy.js';
import { ComparePane, groupNames } from '../../src/ui/panes/ComparePane.js';
import { t, tf, type Lang } from '../../src/text/i18n.js';
import type { NodeSnapshot } from '../../src/model/snapshot.js';
import { parseK8sObjects } from '../../src/parsers/k8s-objects.js';
import { apiObjectsText } from '../lab/api-objects.js';
import { cellWidth } from '../../src/text/cells.js';
import { snapshotOf } from '../helpers/fixtures.js';
import { FRAME_WIDTHS, renderAt } from '../helpers/render.js';

/** The comparer of `capture` with its totals pass run to the end. */
async function comparerOf(capture: string): Promise<ModeComparer> {
  const data = createModeComparer(await snapshotOf(capture))!;
  data.runToEnd();
  return data;
}

/** The pane on `capture`, showing the `at`-th Service of its per-Service rows (the Services cursor's unless `pinned`). */
async function frame(capture: string, width: number, lang: Lang, at = 0, pinned = false): Promise<string> {
  const data = await comparerOf(capture);
  const service = data.services[at];
  const shown = service ? { service, pinned } : null;
  const r = renderAt(<ComparePane data={data} shown={shown} width={width} height={30} focused lang={lang} />, width);
  const f = r.frame();
  r.unmount();
  return f;
}

describe.each(FRAME_WIDTHS)('Compare pane at %i columns', (width) => {
  it.each(['en', 'ja'] as const)('on the iptables capture in %s: the three modes, the node equal to iptables, per Service costs', async (lang) => {
    const cmp = compareModes(await snapshotOf('lab-iptables'))!;
    const f = await frame('lab-iptables', width, lang);
    for (const l of f.split('\n')) expect(cellWidth(l)).toBeLessThanOrEqual(width);
    const row = (mode: string) => f.split('\n').find((l) => l.startsWith(mode))!;
    for (const m of COMPARE_MODES) expect(row(m === 'cilium' ? 'Cilium' : m)).toContain(String(modeTotal(cmp.predicted[m])));
    expect(row('iptables')).toContain(`${modeTotal(cmp.actual[0]!.count)} ${t(lang, 'compare.same')}`);
    expect(row('nftables').trimEnd()).toMatch(/ -$/);
    for (const p of cmp.perService) expect(f).toContain(p.service);
    expect(f).toMatchSnapshot();
  });
});

describe('Compare pane', () => {
  it('lists what the selected Service adds in each mode', async () => {
    const cmp = compareModes(await snapshotOf('lab-nftables'))!;
    const at = cmp.perService.findIndex((p) => p.service === 'default/web');
    const f = await frame('lab-nftables', 120, 'en', at);
    expect(f).toContain('what default/web adds in each mode');
    // The title names the Service shown, and that it follows the Services cursor.
    expect(f.split('\n')[0]).toMatch(/^default\/web \(Services cursor\) · \d+ Services/);
    expect(f).toMatch(/iptables: KUBE-EXT-…, KUBE-SEP-… ×3, KUBE-SVC-…/);
    expect(f).toMatch(/nftables: endpoint-… ×3, service-…, external-…/);
    expect(f).toContain('Cilium: 10.96.12.34:80/TCP (ClusterIP), 0.0.0.0:30080/TCP (NodePort)');
    expect(f.split('\n').find((l) => l.startsWith('nftables'))).toContain('equal');
  });

  it('says a pinned Service is pinned, and selects no row for a Service it does not list', async () => {
    const cmp = compareModes(await snapshotOf('lab-nftables'))!;
    const at = cmp.perService.findIndex((p) => p.service === 'default/web');
    expect((await frame('lab-nftables', 120, 'ja', at, true)).split('\n')[0]).toMatch(/^default\/web（固定） · /);
    const r = renderAt(<ComparePane data={await comparerOf('lab-nftables')} shown={{ service: 'default/nowhere', pinned: true }} width={120} height={30} focused lang="en" />, 120);
    const f = r.frame();
    r.unmount();
    expect(f.split('\n')[0]).toContain('default/nowhere (pinned)');
    expect(f).not.toContain('adds in each mode');
  });

  it.each(['en', 'ja'] as const)('says in %s that a headless or ExternalName Service programs nothing, as show compare does', async (lang) => {
    // The lab's objects plus an ExternalName Service.
    const doc = JSON.parse(apiObjectsText()) as { items: unknown[] };
    doc.items.push({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'outside', namespace: 'default' }, spec: { type: 'ExternalName', externalName: 'example.com' } });
    const lab = await snapshotOf('lab-iptables');
    const data = createModeComparer({ ...lab, api: { value: parseK8sObjects(JSON.stringify(doc), 'test').value, diagnostics: [], probe: null, error: null } } satisfies NodeSnapshot)!;
    data.runToEnd();
    for (const service of ['default/web-headless', 'default/outside']) {
      const r = renderAt(<ComparePane data={data} shown={{ service, pinned: true }} width={120} height={30} focused lang={lang} />, 120);
      const f = r.frame();
      r.unmount();
      expect(f).toContain(tf(lang, 'compare.notProgrammed', { service }));
      expect(f).not.toContain(tf(lang, 'compare.chainsOf', { service }));
    }
    // A programmed one gets its chains instead.
    const r = renderAt(<ComparePane data={data} shown={{ service: 'default/web', pinned: true }} width={120} height={30} focused lang={lang} />, 120);
    expect(r.frame()).toContain(tf(lang, 'compare.chainsOf', { service: 'default/web' }));
    expect(r.frame()).not.toContain(tf(lang, 'compare.notProgrammed', { service: 'default/web' }).split(': ')[1]);
    r.unmount();
  });

  it('shows the Service at once and says it is computing the totals, which it does between keypresses', async () => {
    const data = createModeComparer(await snapshotOf('lab-iptables'))!;
    // As on a node with more Services than the pane compares in one render.
    const r = renderAt(<ComparePane data={data} shown={{ service: 'default/web', pinned: false }} width={120} height={30} focused lang="en" syncServices={0} />, 120);
    const first = r.frame();
    expect(first.split('\n')[0]).toContain(tf('en', 'compare.computing', { services: 3, done: 0, total: 4 }).split('…')[0]!);
    expect(first).toContain('what default/web adds in each mode');
    expect(first.split('\n').find((l) => l.startsWith('iptables'))).toMatch(/^iptables\s+…/);
    await act(async () => {
      for (let i = 0; i < 50 && !data.totals(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
    });
    const done = r.frame();
    r.unmount();
    const totals = compareModes(await snapshotOf('lab-iptables'))!;
    expect(done.split('\n')[0]).toContain(tf('en', 'compare.title', { services: totals.services, ports: totals.servicePorts, endpoints: totals.endpoints }));
    expect(done.split('\n').find((l) => l.startsWith('iptables'))).toContain(String(modeTotal(totals.predicted.iptables)));
  });

  it('gives the whole comparison in the first frame on a small node', async () => {
    const data = createModeComparer(await snapshotOf('lab-iptables'))!;
    const r = renderAt(<ComparePane data={data} shown={{ service: 'default/web', pinned: false }} width={120} height={30} focused lang="en" />, 120);
    const first = r.frame();
    r.unmount();
    const totals = compareModes(await snapshotOf('lab-iptables'))!;
    expect(first.split('\n')[0]).toContain(tf('en', 'compare.title', { services: totals.services, ports: totals.servicePorts, endpoints: totals.endpoints }));
    expect(first.split('\n').find((l) => l.startsWith('iptables'))).toContain(String(modeTotal(totals.predicted.iptables)));
  });

  it('says so when the source has no API objects', () => {
    const r = renderAt(<ComparePane data={null} shown={null} width={80} height={10} focused lang="ja" />, 80);
    expect(r.frame()).toContain(t('ja', 'compare.noApi').slice(0, 20));
    r.unmount();
  });

  it.each(FRAME_WIDTHS)('agrees with itself for a Service without endpoints at %i columns: its counts are the rules and elements it adds to existing chains and sets', async (width) => {
    for (const capture of ['lab-iptables', 'lab-nftables']) {
      const cmp = compareModes(await snapshotOf(capture))!;
      // Every Service of the capture: what it alone adds sums to its counts.
      for (const p of cmp.perService) {
        for (const m of ['iptables', 'nftables'] as const) {
          if (p.names[m].length > 0) continue;
          const added = p.grown[m].reduce((n, g) => n + Number(/\+(\d+)$/.exec(g)![1]), 0);
          expect(added, `${capture} ${p.service} ${m}`).toBe(modeTotal(p.cost[m]));
        }
      }
      const empty = cmp.perService.find((p) => p.service === 'default/empty')!;
      expect(empty.endpoints).toBe(0);
      expect(modeTotal(empty.cost.iptables)).toBeGreaterThan(0);
      expect(modeTotal(empty.cost.nftables)).toBeGreaterThan(0);
      const f = await frame(capture, width, 'en', cmp.perService.indexOf(empty));
      const line = (m: string) => f.split('\n').filter((l) => l.startsWith(`${m}: `)).at(-1)!;
      // kube-proxy's REJECT for a Service without endpoints sits in filter/KUBE-SERVICES; nftables keys it in no-endpoint-services.
      expect(line('iptables')).toContain('into existing: filter/KUBE-SERVICES +1');
      expect(line('nftables')).toMatch(/into existing: .*@no-endpoint-services \+1/);
    }
  });

  it('groups chain names by kind', () => {
    expect(groupNames(['KUBE-SEP-A', 'KUBE-SVC-B', 'KUBE-SEP-C'])).toBe('KUBE-SEP-… ×2, KUBE-SVC-…');
    expect(groupNames([])).toBe('');
  });
});
