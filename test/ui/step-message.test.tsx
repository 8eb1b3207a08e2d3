/**
 * The Step pane's messages (no walk yet, no packet for a Service, a failed walk) wrap to the
 * pane's width instead of being cut at its edge (at 80 columns in Japanese the "no walk yet"
 * line lost its last word, `実行`).
 */
import React from 'react';
import { describe, expect, it } from 'vitest';
import { cellWidth } from '../../src/text/cells.js';
import { t, tf } from '../../src/text/i18n.js';
import { StepPane, type StepPaneData } from '../../src/ui/panes/StepPane.js';
import { FRAME_WIDTHS, renderAt } from '../helpers/render.js';

/** Text without its blanks: a wrap drops the blank it breaks at (Japanese breaks with none). */
const solid = (text: string) => text.replace(/\s+/g, '');

describe.each(FRAME_WIDTHS)('Step pane messages at %i columns', (width) => {
  it.each(['en', 'ja'] as const)('are shown whole, wrapped (%s)', (lang) => {
    const cases: [StepPaneData, string[]][] = [
      [{ kind: 'none' }, [t(lang, 'step.none')]],
      [{ kind: 'noPacket', service: 'default/web-headless', reason: 'headless' }, [tf(lang, 'step.noPacket', { service: 'default/web-headless' }), t(lang, 'step.noPacket.headless'), t(lang, 'step.noPacket.hint')]],
    ];
    for (const [data, texts] of cases) {
      const frame = renderAt(<StepPane data={data} width={width} height={20} focused cursor={0} lang={lang} />, width).frame();
      for (const line of frame.split('\n')) expect(cellWidth(line)).toBeLessThanOrEqual(width);
      expect(frame).not.toContain('…');
      for (const part of texts) expect(solid(frame)).toContain(solid(part));
    }
  });
});
