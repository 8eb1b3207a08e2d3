/**
 * End to end: `nodescope tour where-rewritten`, the real binary in a real terminal
 * (tmux), walked from the first step to the last with n, back with p, away and back to
 * the step with `.`, and quit with q. Each step's highlighted object (computed here from
 * the same capture) must be on the screen, with the step number and the pane it opens.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { loadTour } from '../../src/tour/load.js';
import { resolveStep } from '../../src/tour/resolve.js';
import { fitCell } from '../../src/text/cells.js';
import { snapshotOf } from '../helpers/fixtures.js';
import { BINARY, TmuxSession, tmuxAvailable } from '../helpers/tmux.js';

const tmux = new TmuxSession(`nodescope-tour-${process.pid}`);
const WIDTH = 100;
const waitFor = (...texts: (string | RegExp)[]) => tmux.waitFor(texts);
const keys = (...k: string[]) => tmux.keys(...k);

afterAll(() => tmux.kill());

describe.runIf(tmuxAvailable('the tmux tour test'))('nodescope tour in tmux', () => {
  it('walks where-rewritten from the first step to the last, back and forth, and quits on q', async () => {
    const tour = loadTour('where-rewritten');
    const n = tour.steps.length;
    expect(tmux.start(`node ${BINARY} tour where-rewritten --lang en`, WIDTH, 45)).toBe(0);

    for (const [i, step] of tour.steps.entries()) {
      const where = resolveStep(await snapshotOf(step.capture), step, 'en');
      expect(where.problem).toBeNull();
      // the bar's first focus line, as the bar fits it to the terminal
      const focus = fitCell(`▶ ${where.focus[0]!.text}`, WIDTH).trimEnd();
      const s = await waitFor(`step ${i + 1}/${n} · ${step.capture}`, focus);
      expect(s).toContain(step.narration.en.split(' ').slice(0, 4).join(' '));
      if (step.target.kind === 'serviceChain' && step.target.hop === 'endpoint') expect(s).toMatch(/(DNAT|dnat to) 10\.244\.0\.23:8080/);
      if (step.capture === 'lab-nftables') expect(s).toContain('mode: nftables');
      if (i < n - 1) await keys('n');
    }
    await waitFor('last step: q quits');

    // back one step, wander off, and come back with .
    await keys('p');
    await waitFor(`step ${n - 1}/${n}`);
    await keys('1', 'j', 'j');
    await waitFor('exploring — press . to return to step');
    await keys('.');
    const back = await waitFor(`step ${n - 1}/${n}`, 'n: next  p: previous');
    expect(back).not.toContain('exploring');

    await keys('q');
    await tmux.waitExit();
    expect(tmux.alive()).toBe(false);
  });
});
