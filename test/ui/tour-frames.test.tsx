/**
 * Frames of every step of every shipped tour, through the whole App, in English and
 * Japanese at 80 columns: the step's pane and highlighted object, the tour bar with the
 * step number, the focus lines and the narration wrapped by cells. Japanese must not
 * break the layout: no line wider than the terminal, table columns where their titles
 * are, narration lines exactly as wrapped by cell width. Whole frames are snapshots.
 */
import React from 'react';
import { describe, expect, it } from 'vitest';
import { loadTour, tourNames } from '../../src/tour/load.js';
import { resolveStep } from '../../src/tour/resolve.js';
import { breaksKinsoku, wrapCells } from '../../src/tour/wrap.js';
import { App } from '../../src/ui/App.js';
import { t, tf, type Lang } from '../../src/text/i18n.js';
import { cellWidth, fitCell } from '../../src/text/cells.js';
import { snapshotOf, tourSessions } from '../helpers/fixtures.js';
import { renderApp } from '../helpers/render.js';

const WIDTH = 80;
const HEIGHT = 40;

/** Cell offset of `text` in `line` (-1 when absent). */
function cellOffset(line: string, text: string): number {
  const at = line.indexOf(text);
  return at < 0 ? -1 : cellWidth(line.slice(0, at));
}

/** The lines of the table whose header is `header`: from the line after it to the pane's detail lines. */
function tableBlock(lines: readonly string[], header: string): string[] {
  const out: string[] = [];
  for (const l of lines.slice(lines.indexOf(header) + 1)) {
    if (/^(line \d+:|rule:|ct N|─ |▶ )/.test(l) || l === '') break;
    out.push(l);
  }
  return out;
}

/** Every table column in `frame` starts where its title does: checked for the columns a step shows. */
function expectAligned(frame: string, lang: Lang): void {
  const lines = frame.split('\n');
  const services = lines.find((l) => l.includes(t(lang, 'col.clusterIP')) && l.includes(t(lang, 'col.namespace')));
  if (services) {
    const col = cellOffset(services, t(lang, 'col.clusterIP'));
    const rows = tableBlock(lines, services).filter((l) => /\s10\.96\.\d+\.\d+\s/.test(l));
    expect(rows.length).toBeGreaterThan(0);
    for (const r of rows) expect(cellOffset(r, r.match(/10\.96\.\d+\.\d+/)![0]), r).toBe(col);
  }
  const rules = lines.find((l) => l.includes(t(lang, 'col.target')) && l.includes(t(lang, 'col.rule')));
  if (rules) {
    const col = cellOffset(rules, t(lang, 'col.target'));
    const rows = tableBlock(lines, rules).filter((l) => /(→ (KUBE-|goto|jump)|DNAT \d|dnat to \d|REJECT --)/.test(l));
    expect(rows.length).toBeGreaterThan(0);
    for (const r of rows) {
      const m = r.match(/(→ (KUBE-|goto|jump)|DNAT \d|dnat to \d|REJECT --)/)!;
      expect(cellOffset(r, m[0]), r).toBe(col);
    }
  }
}

describe.each(tourNames())('tour %s', (name) => {
  describe.each(['en', 'ja'] as const)('in %s at 80 columns', (lang) => {
    it('shows every step: its pane, its object, the bar and the narration, without breaking the layout', async () => {
      const tour = loadTour(name);
      const sessions = await tourSessions(tour);
      const r = await renderApp(<App session={sessions.get(tour.capture)!} lang={lang} width={WIDTH} height={HEIGHT} tour={{ tour, session: (c) => sessions.get(c)! }} />, WIDTH, HEIGHT);
      for (const [i, step] of tour.steps.entries()) {
        if (i > 0) await r.press('n');
        const frame = r.frame();
        const lines = frame.split('\n');
        for (const l of lines) expect(cellWidth(l), l).toBeLessThanOrEqual(WIDTH);
        expect(lines.length).toBeLessThanOrEqual(HEIGHT);
        expect(frame).toContain(tf(lang, 'tour.step', { n: i + 1, total: tour.steps.length }));
        expect(frame).toContain(`${tf(lang, 'tour.title', { title: tour.title[lang] })}`);
        const where = resolveStep(await snapshotOf(step.capture), step, lang);
        expect(where.problem).toBeNull();
        for (const f of where.focus.slice(0, 4)) expect(frame).toContain(fitCell(`▶ ${f.text}`, WIDTH).trimEnd());
        const narration = wrapCells(step.narration[lang], WIDTH);
        for (const n of narration) {
          expect(lines).toContain(n);
          expect(breaksKinsoku(n), n).toBe(false);
        }
        expectAligned(frame, lang);
        expect(frame).toMatchSnapshot(`${name} ${lang} step ${i + 1}`);
      }
      expect(r.frame()).toContain(t(lang, 'tour.lastStep'));
      r.unmount();
    });
  });
});

describe('moving around a tour inside the app', () => {
  it('p goes back, a pane key marks exploring, and . restores the step\'s screen exactly', async () => {
    const tour = loadTour('where-rewritten');
    const sessions = await tourSessions(tour);
    const r = await renderApp(<App session={sessions.get(tour.capture)!} lang="ja" width={WIDTH} height={HEIGHT} tour={{ tour, session: (c) => sessions.get(c)! }} />, WIDTH, HEIGHT);
    await r.press('n', 'n', 'n', 'n'); // step 5: KUBE-SEP of 10.244.0.23
    const step5 = r.frame();
    expect(step5).toMatch(/DNAT 10\.244\.0\.23:8080/);
    await r.press('p');
    expect(r.frame()).toContain(tf('ja', 'tour.step', { n: 4, total: tour.steps.length }));
    await r.press('n', '\u001B', '\u001B', '3');
    const away = r.frame();
    expect(away).toContain(tf('ja', 'tour.exploring', { n: 5 }));
    expect(away).not.toMatch(/DNAT 10\.244\.0\.23:8080/);
    await r.press('.');
    expect(r.frame()).toBe(step5);
    r.unmount();
  });
});
