/**
 * `:find`'s WHERE column holds its addresses whole (session 18's new user: `backend 1…10.96.12.34:80/TCP`
 * at 80 columns in Japanese): it is as wide as its longest entry, the pane names fit theirs
 * (`追跡` for `コネクション追跡`, as in the tabs), and the raw text takes what is left.
 */
import React from 'react';
import { describe, expect, it } from 'vitest';
import { cellWidth } from '../../src/text/cells.js';
import { t } from '../../src/text/i18n.js';
import { findHits } from '../../src/ui/find-view.js';
import { FindView } from '../../src/ui/panes/FindView.js';
import { snapshotOf } from '../helpers/fixtures.js';
import { FRAME_WIDTHS, renderAt } from '../helpers/render.js';

describe.each(FRAME_WIDTHS)(':find at %i columns', (width) => {
  it.each(['en', 'ja'] as const)('shows every WHERE whole, with its pane named (%s)', async (lang) => {
    const result = findHits(await snapshotOf('lab-cilium'), '10.244.0.23');
    expect(result.hits.some((h) => h.where.startsWith('backend 10.244.0.23:8080 of 192.168.49.2:30080/TCP'))).toBe(true);
    const frame = renderAt(<FindView result={result} cursor={0} width={width} height={24} lang={lang} />, width).frame();
    const lines = frame.split('\n');
    for (const line of lines) expect(cellWidth(line)).toBeLessThanOrEqual(width);
    for (const hit of result.hits) expect(lines.some((l) => l.includes(` ${hit.where} `))).toBe(true);
    const conntrack = lang === 'en' ? 'Conntrack ' : `${t('ja', 'pane.conntrack.short')} `;
    expect(lines.filter((l) => l.startsWith(conntrack)).length).toBe(result.hits.filter((h) => h.pane === 'conntrack').length);
    expect(frame).toMatchSnapshot();
  });
});
