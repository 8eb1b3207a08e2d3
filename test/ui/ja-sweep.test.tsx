/**
 * No English reaches the screen in Japanese (issue 22 item 5): (a) every English UI string
 * and every step-walk sentence has a Japanese one with no English word left, and (b) every
 * pane of the pane registry, the help and the step walk of every Service (each step, the
 * cursor moved with n) rendered in ja at 80 and 120 columns on the shipped captures show no
 * English word outside the allow-list of proper terms and the words of the capture itself
 * (test/helpers/english.ts).
 */
import React from 'react';
import { describe, expect, it } from 'vitest';
import { staticSession } from '../../src/collect/session.js';
import { messageKeys, t, type MessageKey } from '../../src/text/i18n.js';
import { WHY_GENERIC, WHY_PHRASES, WHY_PIECES } from '../../src/text/messages/why.js';
import { App } from '../../src/ui/App.js';
import { PANE_REGISTRY } from '../../src/ui/pane-registry.js';
import { captureWords, englishLeft } from '../helpers/english.js';
import { snapshotOf } from '../helpers/fixtures.js';
import { FRAME_WIDTHS, KEYS, renderApp } from '../helpers/render.js';

const CAPTURES = ['lab-iptables', 'lab-nftables', 'lab-cilium'] as const;
const NONE: ReadonlySet<string> = new Set();

/** A string with its `{param}` / `$hole` slots taken out. */
function withoutSlots(text: string): string {
  return text.replace(/\{\w+\}/g, ' ').replace(/\$\*?[A-Za-z]\w*/g, ' ');
}


describe('the English finder', () => {
  it('flags an English sentence and an English column header, and lets proper terms, data, flags and cut identifiers pass', () => {
    const data = new Set(['web', 'kubernetes', 'portals']);
    expect(englishLeft('理由  the packet starts a NEW flow', NONE).map((w) => w.word)).toEqual(['the', 'starts', 'flow']);
    expect(englishLeft('TABLE  チェイン  HOOK / TYPE', NONE).map((w) => w.word)).toEqual(['TABLE', 'HOOK', 'TYPE']);
    const fine = 'ルール -A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES  jump KUBE-SVC-CDGGSHY… ct state NEW web resolv.conf';
    expect(englishLeft(fine, data)).toEqual([]);
  });
});

describe('the i18n tables in Japanese', () => {
  it('give every English key a Japanese string with no English word left', () => {
    const bad: string[] = [];
    for (const key of messageKeys) {
      const ja = t('ja', key as MessageKey);
      if (typeof ja !== 'string' || ja.trim() === '' && t('en', key as MessageKey).trim() !== '') bad.push(`${key}: missing`);
      else for (const { word } of englishLeft(withoutSlots(ja), NONE)) bad.push(`${key}: ${word} in "${ja}"`);
    }
    expect(bad).toEqual([]);
  });

  it('give every step-walk sentence a Japanese one with no English word left', () => {
    const bad: string[] = [];
    for (const [en, ja] of [...WHY_PHRASES, ...WHY_GENERIC, ...WHY_PIECES]) {
      for (const { word } of englishLeft(withoutSlots(ja), NONE)) bad.push(`${word} in "${ja}" (for "${en}")`);
      const holes = (s: string) => [...s.matchAll(/\$\*?([A-Za-z]\w*)/g)].map((m) => m[1]).sort();
      expect(holes(ja), en).toEqual(holes(en));
    }
    expect(bad).toEqual([]);
  });
});

/** Presses `key` and waits (up to ~1 s) until the frame no longer says it is loading. */
async function settled(r: Awaited<ReturnType<typeof renderApp>>, ...keys: string[]): Promise<string> {
  await r.press(...keys);
  for (let i = 0; i < 25 && /問い合わせ中|読み込み中|…（/.test(r.frame()); i++) await new Promise((resolve) => setTimeout(resolve, 40));
  return r.frame();
}

describe.each(CAPTURES)('the %s capture in Japanese', (capture) => {
  it.each(FRAME_WIDTHS)('shows no English in any pane, the help or any step of any walk at %i columns', async (width) => {
    const snapshot = await snapshotOf(capture);
    const words = captureWords(capture);
    const r = await renderApp(<App session={staticSession(snapshot)} lang="ja" width={width} height={40} />, width, 40);
    const left = new Map<string, string>();
    const check = (where: string, frame: string) => {
      for (const { word, line } of englishLeft(frame, words)) if (!left.has(word)) left.set(word, `${where}: ${line.trim()}`);
    };
    for (const pane of PANE_REGISTRY) check(pane.id, await settled(r, pane.key));
    check('help', await settled(r, '?'));
    await r.press(KEYS.escape);
    const services = snapshot.api?.value?.services.length ?? 0;
    for (let row = 0; row < services; row++) {
      await r.press('1', ...Array<string>(row).fill(KEYS.down), 't');
      let previous = '';
      for (let step = 0; step < 60; step++) {
        const frame = r.frame();
        if (frame === previous) break;
        check(`walk of row ${row + 1}, step ${step + 1}`, frame);
        previous = frame;
        await r.press('n');
      }
      await r.press('1', ...Array<string>(services).fill(KEYS.up));
    }
    r.unmount();
    expect([...left].map(([word, where]) => `${word} — ${where}`)).toEqual([]);
  }, 240_000);
});
