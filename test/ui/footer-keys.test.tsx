/**
 * The footer of the Services list names `d` (the findings; session 18's new user found it only
 * under `?`) and `t`, and every key a footer hint names is one the key bindings give a command
 * on its pane, so the footer cannot promise a key that does nothing.
 */
import React from 'react';
import { describe, expect, it } from 'vitest';
import { staticSession } from '../../src/collect/session.js';
import { cellWidth } from '../../src/text/cells.js';
import { t, type MessageKey } from '../../src/text/i18n.js';
import { App } from '../../src/ui/App.js';
import { commandOf, type InkKey } from '../../src/ui/key-bindings.js';
import type { PaneId } from '../../src/ui/pane-ids.js';
import { snapshotOf } from '../helpers/fixtures.js';
import { FRAME_WIDTHS, renderApp } from '../helpers/render.js';

/** A footer's key names as Ink reports them (`Enter` → return, `Esc` → escape, `Space` → ' '). */
function keyOf(name: string): { input: string; key: InkKey } {
  if (name === 'Enter') return { input: '', key: { return: true } };
  if (name === 'Esc') return { input: '', key: { escape: true } };
  if (name === 'Space') return { input: ' ', key: {} };
  return { input: name, key: {} };
}

describe('footer hints', () => {
  it.each<[MessageKey, PaneId]>([
    ['footer.hintServices', 'services'],
    ['footer.hint', 'rules'],
    ['footer.hintShown', 'conntrack'],
    ['footer.hintDns', 'dns'],
  ])('%s names only keys bound on the %s pane', (hint, pane) => {
    for (const lang of ['en', 'ja'] as const) {
      const names = t(lang, hint)
        .split(/ {2}/)
        .map((part) => part.slice(0, part.indexOf(':')));
      expect(names.length).toBeGreaterThan(3);
      for (const name of names) expect(commandOf(keyOf(name).input, keyOf(name).key, pane), `${lang} ${name}`).not.toBeNull();
    }
  });
});

describe.each(FRAME_WIDTHS)('the Services footer at %i columns', (width) => {
  it.each(['en', 'ja'] as const)('names d and t whole (%s)', async (lang) => {
    const r = await renderApp(<App session={staticSession(await snapshotOf('lab-iptables'))} lang={lang} width={width} height={30} />, width, 30);
    const footer = r.frame().split('\n').at(-1)!;
    expect(footer).toBe(t(lang, 'footer.hintServices'));
    expect(footer).toContain(lang === 'en' ? 'd:diagnose' : 'd:診断');
    expect(cellWidth(footer)).toBeLessThanOrEqual(width);
    // On another pane `d` does nothing, and the footer does not name it.
    await r.press('2');
    expect(r.frame().split('\n').at(-1)).not.toContain('d:');
    r.unmount();
  });
});
