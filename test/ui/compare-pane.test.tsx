import React from 'react';
import { describe, expect, it } from 'vitest';
import { COMPARE_MODES, compareModes, modeTotal } from '../../src/analysis/compare-modes.js';
import { ComparePane, groupNames } from '../../src/ui/panes/ComparePane.js';
import { t, type Lang } from '../../src/ui/i18n.js';
import { cellWidth } from '../../src/ui/text.js';
import { snapshotOf } from '../helpers/fixtures.js';
import { FRAME_WIDTHS, renderAt } from '../helpers/render.js';

async function frame(capture: string, width: number, lang: Lang, cursor = 0): Promise<string> {
  const data = compareModes(await snapshotOf(capture));
  const r = renderAt(<ComparePane data={data} cursor={cursor} width={width} height={30} focused lang={lang} />, width);
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
    expect(f).toMatch(/iptables: KUBE-EXT-…, KUBE-SEP-… ×3, KUBE-SVC-…/);
    expect(f).toMatch(/nftables: endpoint-… ×3, service-…, external-…/);
    expect(f).toContain('Cilium: 10.96.12.34:80/TCP (ClusterIP), 0.0.0.0:30080/TCP (NodePort)');
    expect(f.split('\n').find((l) => l.startsWith('nftables'))).toContain('equal');
  });

  it('says so when the source has no API objects', () => {
    const r = renderAt(<ComparePane data={null} cursor={0} width={80} height={10} focused lang="ja" />, 80);
    expect(r.frame()).toContain(t('ja', 'compare.noApi').slice(0, 20));
    r.unmount();
  });

  it('groups chain names by kind', () => {
    expect(groupNames(['KUBE-SEP-A', 'KUBE-SVC-B', 'KUBE-SEP-C'])).toBe('KUBE-SEP-… ×2, KUBE-SVC-…');
    expect(groupNames([])).toBe('');
  });
});
