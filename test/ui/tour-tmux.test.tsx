/**
 * End to end: `nodescope tour where-rewritten`, the real binary in a real terminal
 * (tmux), walked from the first step to the last with n, back with p, away and back to
 * the step with `.`, and quit with q. Each step's highlighted object (computed here from
 * the same capture) must be on the screen, with the step number and the pane it opens.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/paths.js';
import { loadTour } from '../../src/tour/load.js';
import { resolveStep } from '../../src/tour/resolve.js';
import { fitCell } from '../../src/ui/text.js';
import { snapshotOf } from '../helpers/fixtures.js';

const session = `nodescope-tour-${process.pid}`;
const binary = path.join(packageRoot(), 'dist', 'src', 'cli.js');
const WIDTH = 100;

function tmuxAvailable(): boolean {
  const ok = spawnSync('tmux', ['-V']).status === 0;
  if (!ok && process.env.NODESCOPE_REQUIRE_LAB === '1') throw new Error('tmux is required for the end-to-end test');
  if (!ok) console.warn('skipping the tmux tour test: tmux is not installed');
  if (ok && !existsSync(binary)) throw new Error(`${binary} is missing: run \`npm run build\` (npm test does)`);
  return ok;
}

const tmux = (...args: string[]) => spawnSync('tmux', args, { encoding: 'utf8' });
const screen = () => tmux('capture-pane', '-p', '-t', session).stdout;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits (at most 15 s) until the screen shows every text; returns the screen. */
async function waitFor(...texts: (string | RegExp)[]): Promise<string> {
  for (let i = 0; i < 150; i++) {
    const s = screen();
    if (texts.every((t) => (typeof t === 'string' ? s.includes(t) : t.test(s)))) return s;
    await sleep(100);
  }
  throw new Error(`screen never showed ${texts.map(String).join(' and ')}:\n${screen()}`);
}

async function keys(...k: string[]): Promise<void> {
  for (const key of k) {
    tmux('send-keys', '-t', session, key);
    await sleep(150);
  }
}

afterAll(() => {
  tmux('kill-session', '-t', session);
});

describe.runIf(tmuxAvailable())('nodescope tour in tmux', () => {
  it('walks where-rewritten from the first step to the last, back and forth, and quits on q', async () => {
    const tour = loadTour('where-rewritten');
    const n = tour.steps.length;
    const started = tmux('new-session', '-d', '-s', session, '-x', String(WIDTH), '-y', '45', `node ${binary} tour where-rewritten --lang en`);
    expect(started.status).toBe(0);

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
    for (let i = 0; i < 50 && tmux('has-session', '-t', session).status === 0; i++) await sleep(100);
    expect(tmux('has-session', '-t', session).status).not.toBe(0);
  });
});
