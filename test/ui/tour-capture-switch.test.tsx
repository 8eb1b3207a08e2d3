/**
 * Regression (NOTES "Switching panes inside a tour can leave nft chains open over an
 * iptables capture"): the tour's panes share one UI state, so the Rules pane's stack
 * opened by a step on lab-nftables stayed open when the next step ran on lab-iptables,
 * and pressing 2 there showed "… not in this capture (nft)". A step on another capture
 * now leaves the last capture's views first.
 */
import React from 'react';
import { describe, expect, it } from 'vitest';
import { loadTour } from '../../src/tour/load.js';
import { App } from '../../src/ui/App.js';
import { t, tf } from '../../src/text/i18n.js';
import { tourSessions } from '../helpers/fixtures.js';
import { renderApp } from '../helpers/render.js';

const WIDTH = 80;
const HEIGHT = 40;

/** Renders tour `name` and presses `n` until step `n` (1-based) of it is shown. */
async function atStep(name: string, n: number) {
  const tour = loadTour(name);
  const sessions = await tourSessions(tour);
  const r = await renderApp(<App session={sessions.get(tour.capture)!} lang="en" width={WIDTH} height={HEIGHT} tour={{ tour, session: (c) => sessions.get(c)! }} />, WIDTH, HEIGHT);
  for (let i = 1; i < n; i++) await r.press('n');
  expect(r.frame()).toContain(tf('en', 'tour.step', { n, total: tour.steps.length }));
  return { r, tour };
}

describe('the Rules pane after a tour step on another capture', () => {
  it.each([
    // second-packet: step 5 opens an nft service chain on lab-nftables, step 6 is Conntrack on lab-iptables.
    ['second-packet', 5],
    // where-rewritten: step 8 opens an nft endpoint chain, step 9 is Cilium's LB pane, step 10 lab-iptables.
    ['where-rewritten', 8],
  ] as const)('%s: leaving the nft step, 2 shows the new capture\'s chains, not the nft chain', async (name, nftStep) => {
    const { r, tour } = await atStep(name, nftStep);
    expect(r.frame()).toMatch(/ip kube-proxy\/(service|endpoint)-/);
    for (let i = nftStep; i < tour.steps.length; i++) {
      await r.press('n');
      await r.press('2');
      const frame = r.frame();
      expect(frame).toContain(tf('en', 'tour.exploring', { n: i + 1 }));
      expect(frame).not.toMatch(/not in this capture/);
      expect(frame).not.toMatch(/service-SUSTUHLJ|endpoint-\w+-default/);
      expect(frame).toContain(t('en', 'col.chain'));
      await r.press('.');
    }
    r.unmount();
  });

  it('the iptables capture\'s chain list shows its KUBE- chains with the cursor on the first', async () => {
    const { r } = await atStep('second-packet', 5);
    await r.press('n', '2');
    const frame = r.frame();
    expect(frame).toMatch(/KUBE-SERVICES/);
    r.unmount();
  });
});
