/**
 * Regression (NOTES "The header's mode/evidence line is cut at the terminal width"): on a
 * Cilium node the evidence (KPR; services maps; CILIUM_ chains) is wider than 80 columns,
 * and the header cut it at the edge, losing the services-map count or the CILIUM_ chains
 * fact (sooner in Japanese). The whole App on lab-cilium, at 80 and 120 columns, en and ja:
 * the mode line keeps every number of the evidence and stays one line.
 */
import React from 'react';
import { describe, expect, it } from 'vitest';
import { detectProxyMode, type ModeFact } from '../../src/analysis/proxy-mode.js';
import { staticSession } from '../../src/collect/session.js';
import { App } from '../../src/ui/App.js';
import { t } from '../../src/text/i18n.js';
import { cellWidth } from '../../src/text/cells.js';
import { snapshotOf } from '../helpers/fixtures.js';
import { FRAME_WIDTHS, renderApp } from '../helpers/render.js';

/** The numbers a reader needs from the facts: map sizes and chain counts. */
function numbersOf(facts: readonly ModeFact[]): string[] {
  return facts.flatMap((f) => (f.kind === 'ciliumServices' ? [String(f.frontends), String(f.backendSlots)] : f.kind === 'ciliumChains' || f.kind === 'kubeChains' ? [String(f.chains)] : []));
}

describe.each(FRAME_WIDTHS)('the header on a Cilium node at %i columns', (width) => {
  it.each(['en', 'ja'] as const)('keeps the services-map count and the CILIUM_ chains (%s)', async (lang) => {
    const snapshot = await snapshotOf('lab-cilium');
    const { mode, facts } = detectProxyMode(snapshot);
    expect(mode).toBe('cilium');
    const r = await renderApp(<App session={staticSession(snapshot)} lang={lang} width={width} height={24} />, width, 24);
    const lines = r.frame().split('\n');
    const modeLine = lines.find((l) => l.startsWith(`${t(lang, 'header.mode')}: cilium — `))!;
    expect(modeLine).toBeDefined();
    expect(cellWidth(modeLine)).toBeLessThanOrEqual(width);
    expect(modeLine).not.toMatch(/…$/);
    const evidence = modeLine.slice(modeLine.indexOf(' — ') + 3).split('; ');
    expect(evidence).toHaveLength(facts.length);
    const services = evidence.find((e) => e.includes('lb4'))!;
    const chains = evidence.find((e) => e.includes('CILIUM_'))!;
    for (const n of numbersOf(facts.filter((f) => f.kind === 'ciliumServices'))) expect(services).toMatch(new RegExp(`\\b${n}\\b`));
    for (const n of numbersOf(facts.filter((f) => f.kind === 'ciliumChains'))) expect(chains).toMatch(new RegExp(`\\b${n}\\b`));
    expect(evidence.some((e) => e.includes('KUBE-'))).toBe(true);
    // The pane tabs stay on the third line: the header did not grow.
    expect(lines[2]).toContain(t(lang, 'pane.services'));
    r.unmount();
  });
});
