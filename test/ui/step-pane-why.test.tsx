/**
 * The Step pane's why reads whole: a reason longer than the line is wrapped below the
 * steps over the lines the table can spare (the table keeps the current step and its
 * neighbours), and cut with … only when the pane is too short for all of it.
 */
import React from 'react';
import { describe, expect, it } from 'vitest';
import { traceFromSnapshot } from '../../src/trace/choose-engine.js';
import { StepPane, type StepPaneData } from '../../src/ui/panes/StepPane.js';
import { snapshotOf } from '../helpers/fixtures.js';
import { FRAME_WIDTHS, renderAt } from '../helpers/render.js';

function frame(data: StepPaneData, width: number, cursor: number, height: number): string[] {
  const r = renderAt(<StepPane data={data} width={width} height={height} focused cursor={cursor} lang="en" />, width);
  const text = r.frame();
  r.unmount();
  return text.split('\n');
}

/** The why block of a frame: the `why` line and the unlabelled lines under it, words rejoined. */
function whyText(lines: readonly string[]): { text: string; lines: number } {
  const at = lines.findIndex((l) => l.startsWith('why '));
  const block = [lines[at]!.slice(11)];
  for (let i = at + 1; i < lines.length && lines[i]!.startsWith(' '.repeat(11)); i++) block.push(lines[i]!.slice(11));
  return { text: block.map((l) => l.trim()).join(' '), lines: block.length };
}

/** Step rows shown: lines that start with a right-aligned step number. */
const stepRows = (lines: readonly string[]) => lines.filter((l) => /^ {0,2}\d+ /.test(l)).length;

describe.each(FRAME_WIDTHS)('the why of the selected step at %i columns', async (width) => {
  const snapshot = await snapshotOf('lab-cilium');
  const result = traceFromSnapshot(snapshot, { from: '10.244.0.9', to: '10.96.12.34:80/tcp' });
  const data: StepPaneData = { kind: 'result', result };
  // The backend choice explains the slot arithmetic and the skipped slots: longer than any line.
  const choice = result.steps.findIndex((s) => s.branches !== null);
  const reason = result.steps[choice]!.reason;

  it('is longer than a line here (else this test proves nothing)', () => {
    expect(reason.length).toBeGreaterThan(width);
  });

  it('is shown whole, wrapped, within the pane height, with the current step and its neighbours still listed', () => {
    const lines = frame(data, width, choice, 24);
    const why = whyText(lines);
    expect(why.text).toBe(reason.replace(/\s+/g, ' '));
    expect(why.lines).toBeGreaterThan(1);
    expect(lines.length).toBeLessThanOrEqual(24);
    for (const l of lines) expect(l.length).toBeLessThanOrEqual(width);
    expect(stepRows(lines)).toBeGreaterThanOrEqual(5);
    expect(lines.some((l) => l.startsWith(`  ${choice} `) || l.startsWith(` ${choice} `))).toBe(true);
  });

  it('is cut with … when the pane is too short for all of it, and the pane keeps its height', () => {
    const lines = frame(data, width, choice, 14);
    const why = whyText(lines);
    expect(lines.length).toBeLessThanOrEqual(14);
    expect(why.text.endsWith('…')).toBe(true);
    expect(reason.replace(/\s+/g, ' ').startsWith(why.text.slice(0, -1).trimEnd())).toBe(true);
  });
});
