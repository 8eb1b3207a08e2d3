/**
 * The pane tabs name every pane, as k9s' crumbs do (session 18's new user: Japanese at 80
 * columns showed only the current pane's name, `1 サービス  2  3  4 …`): the titles when they
 * fit, the short titles (`追跡`) when not, cut titles on a narrower terminal, numbers alone
 * only where nothing else fits.
 */
import React from 'react';
import { describe, expect, it } from 'vitest';
import { Header, paneTabs, type HeaderProps } from '../../src/ui/components/Header.js';
import { cellWidth } from '../../src/text/cells.js';
import { t } from '../../src/text/i18n.js';
import { PANE_REGISTRY } from '../../src/ui/pane-registry.js';
import { PANE_IDS } from '../../src/ui/pane-ids.js';
import { FRAME_WIDTHS, renderAt } from '../helpers/render.js';

function props(width: number, lang: 'en' | 'ja', pane: HeaderProps['pane']): HeaderProps {
  return { node: 'lab-node', live: false, sourceLabel: '', capturedAt: '2026-11-29T15:08:15Z', mode: 'cilium', evidence: '', ageSeconds: null, error: null, refreshing: false, pane, width, lang };
}

describe.each(FRAME_WIDTHS)('the pane tabs at %i columns', (width) => {
  it.each(['en', 'ja'] as const)('name every pane on every pane, within the width (%s)', (lang) => {
    for (const pane of PANE_IDS) {
      const tabs = renderAt(<Header {...props(width, lang, pane)} />, width).frame().split('\n')[2]!;
      expect(cellWidth(tabs)).toBeLessThanOrEqual(width);
      for (const p of PANE_REGISTRY) {
        const names = [t(lang, p.title), ...('short' in p ? [t(lang, p.short)] : [])];
        expect(names.some((name) => tabs.includes(` ${p.key} ${name} `) || tabs.endsWith(` ${p.key} ${name}`))).toBe(true);
      }
    }
  });

  it.each(['en', 'ja'] as const)('show the whole titles when they fit, the short ones only when not (%s)', (lang) => {
    const labels = paneTabs('conntrack', width, lang).map((tab) => tab.label.trim());
    const whole = cellWidth(PANE_REGISTRY.map((p) => ` ${p.key} ${t(lang, p.title)} `).join('')) <= width;
    expect(labels[3]).toBe(`4 ${t(lang, whole ? 'pane.conntrack' : 'pane.conntrack.short')}`);
    // English fits whole at 80; Japanese only at 120 (its titles are twice as wide).
    expect(whole).toBe(lang === 'en' || width === 120);
  });
});

describe('the pane tabs on a narrow terminal', () => {
  it.each(['en', 'ja'] as const)('cut the other titles to what fits, the current one whole, then numbers alone (%s)', (lang) => {
    const at60 = paneTabs('services', 60, lang);
    expect(cellWidth(at60.map((tab) => tab.label).join(''))).toBeLessThanOrEqual(60);
    expect(at60[0]!.label).toBe(` 1 ${t(lang, 'pane.services')} `);
    expect(at60.slice(1).every((tab) => /^ \d \S/.test(tab.label))).toBe(true);
    expect(at60.some((tab) => tab.label.includes('…'))).toBe(true);
    const at40 = paneTabs('step', 40, lang).map((tab) => tab.label);
    expect(at40[5]).toBe(` 6 ${t(lang, 'pane.step')} `);
    expect(at40.filter((l) => /^ \d $/.test(l))).toHaveLength(7);
  });
});

describe('the pane titles', () => {
  it('are `pane.<id>` for every pane (the Rules pane names where Esc goes by it: src/ui/views.ts)', () => {
    for (const p of PANE_REGISTRY) expect(p.title).toBe(`pane.${p.id}`);
  });
});
