/**
 * The `?` help box fits the terminal and scrolls (session 18's new user: cut at 80×30 and at
 * 120×40, no scroll, the capture note first, wrapped lines without their indent): it opens on
 * the keys, keeps a wrapped description in its column, says which lines show, and the move
 * keys of the key bindings scroll it to the last probe and back.
 */
import React from 'react';
import { describe, expect, it } from 'vitest';
import { staticSession } from '../../src/collect/session.js';
import { cellWidth } from '../../src/text/cells.js';
import { t } from '../../src/text/i18n.js';
import { App } from '../../src/ui/App.js';
import { helpLines, helpWindow } from '../../src/ui/components/Help.js';
import { helpRows, scrollKeyLabels } from '../../src/ui/key-bindings.js';
import { snapshotOf } from '../helpers/fixtures.js';
import { KEYS, renderApp } from '../helpers/render.js';

/** The terminals the new user tried. */
const SIZES = [
  [80, 30],
  [120, 40],
] as const;

/** The box's inside lines: the text between its side borders, trailing blanks cut. */
function inside(frame: string): string[] {
  return frame
    .split('\n')
    .filter((l) => l.startsWith('│'))
    .map((l) => l.replace(/^│ /, '').replace(/\s*│$/, ''));
}

async function openHelp(width: number, height: number, lang: 'en' | 'ja') {
  const snapshot = await snapshotOf('lab-cilium');
  const r = await renderApp(<App session={staticSession(snapshot)} lang={lang} width={width} height={height} />, width, height);
  await r.press('?');
  return { r, snapshot };
}

describe.each(SIZES)('the ? help at %i×%i', (width, height) => {
  it.each(['en', 'ja'] as const)('fits the terminal, opens on the keys, and scrolls to the last probe and back (%s)', async (lang) => {
    const { r, snapshot } = await openHelp(width, height, lang);
    let frame = r.frame();
    const lines = frame.split('\n');
    expect(lines.length).toBeLessThanOrEqual(height);
    for (const line of lines) expect(cellWidth(line)).toBeLessThanOrEqual(width);
    // The box is whole: its bottom border is drawn above the footer.
    expect(lines.at(-2)).toMatch(/^╰─+╯$/);
    const body = inside(frame);
    expect(body[0]).toBe(t(lang, 'help.title'));
    expect(body[1]).toMatch(/^1-8 {2}Tab {4}/);
    const total = snapshot.probes.length + (snapshot.skipped?.filter((s) => !s.silent).length ?? 0);
    expect(total).toBeGreaterThan(10);
    const hint = lang === 'en' ? /lines 1–(\d+) of (\d+) · ↑↓ {2}j k {2}PgUp PgDn {2}g {2}G scroll/ : /1–(\d+)\/(\d+) 行 · ↑↓ {2}j k {2}PgUp PgDn {2}g {2}G でスクロール/;
    const [, shown, all] = hint.exec(body.at(-1)!)!;
    expect(Number(shown)).toBe(height - 4 - 3);
    const lastProbe = snapshot.probes.at(-1)!.id;
    expect(frame).not.toContain(lastProbe);

    await r.press('j');
    expect(inside(r.frame())[0]).toBe(body[1]);
    await r.press(KEYS.down, KEYS.up, 'k');
    expect(inside(r.frame())[0]).toBe(body[0]);

    await r.press('G');
    frame = r.frame();
    expect(inside(frame).at(-2)).toMatch(new RegExp(`^${lastProbe}\\s`));
    expect(inside(frame).at(-1)).toContain(lang === 'en' ? `–${all} of ${all}` : `–${all}/${all} 行`);
    await r.press('g');
    expect(inside(r.frame())).toEqual(body);

    // A page is the lines shown, and no further than the last line.
    await r.press(KEYS.pageDown);
    const top = Math.min(Number(shown), Number(all) - Number(shown)) + 1;
    expect(inside(r.frame()).at(-1)).toMatch(new RegExp(`^(lines )?${top}–`));
    await r.press(KEYS.pageUp);
    expect(inside(r.frame())).toEqual(body);
    r.unmount();
  });

  it.each(['en', 'ja'] as const)('keeps the capture note after the keys and a wrapped line in its column (%s)', async (lang) => {
    const { r, snapshot } = await openHelp(width, height, lang);
    const all = helpLines({ lang, note: snapshot.meta.note! }, width - 4);
    const note = all.findIndex((l) => l.text.startsWith(t(lang, 'help.note').split('{')[0]!));
    // The note follows the last key row (quit), not the title.
    expect(all[note - 1]!.text).toBe(t(lang, 'key.quit'));
    // Every wrapped description stays right of the 12-cell key column.
    const wrapped = all.filter((l, i) => i > 0 && i < note && l.key.trim() === '');
    for (const l of wrapped) expect(l.key).toBe(' '.repeat(12));
    // At 80 columns some descriptions wrap (`:`, `:find`, `d`): on screen their second line starts in the description column.
    const continued = inside(r.frame()).filter((l) => /^ {12}\S/.test(l));
    expect(continued).toHaveLength(wrapped.length);
    if (width === 80) expect(wrapped.length).toBeGreaterThanOrEqual(2);
    r.unmount();
  });

  it('lets only the scroll and closing keys act while it is open (t would start a walk unseen)', async () => {
    const { r } = await openHelp(width, height, 'en');
    await r.press('t', '/', 'x');
    expect(r.frame()).toContain('lines 1–');
    expect(r.frame()).not.toContain('filter: ');
    await r.press(KEYS.escape);
    expect(r.frame()).not.toContain('lines 1–');
    expect(r.frame()).toMatch(/NAMESPACE\s+NAME/);
    // Open again: it starts at the top.
    await r.press('?', 'G', '?', '?');
    expect(inside(r.frame())[0]).toBe('Keys');
    r.unmount();
  });
});

describe('the help box model', () => {
  it('has one key row per help row of the key bindings, and the scroll hint names the move keys of the bindings', () => {
    const lines = helpLines({ lang: 'en' }, 200);
    expect(lines.slice(1).map((l) => l.key.trim())).toEqual(helpRows().map(([keys]) => keys));
    expect(scrollKeyLabels()).toEqual(['↑↓  j k', 'PgUp PgDn', 'g  G']);
  });

  it('scrolls only as far as the last line shows (and not at all when everything fits)', () => {
    expect(helpWindow(64, 26)).toEqual({ rows: 23, maxTop: 41 });
    expect(helpWindow(20, 26)).toEqual({ rows: 23, maxTop: 0 });
    expect(helpWindow(5, 2)).toEqual({ rows: 1, maxTop: 4 });
  });
});
