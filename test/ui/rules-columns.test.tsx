/**
 * The Rules pane's data-sized columns: a KUBE-SVC chain of 10 endpoints shows every
 * branch probability in one format (no `10.0%` next to `10.00%` from float noise), and
 * the `#` column of a chain with tens of thousands of rules shows the whole number.
 */
import React from 'react';
import { describe, expect, it } from 'vitest';
import { chainRowIndex, formatProbability, lazyRows, probabilityDigits } from '../../src/analysis/rules-view.js';
import type { IptablesRuleset } from '../../src/model/iptables.js';
import { RulesPane, type RulesPaneData } from '../../src/ui/panes/RulesPane.js';
import { FRAME_WIDTHS, renderAt } from '../helpers/render.js';
import { kubeNatTable, makeChain, makeRuleset, makeService, makeTable, serviceChains, target } from '../unit/builders/iptables.js';

function chainData(ruleset: IptablesRuleset, chain: string): RulesPaneData {
  const index = chainRowIndex(ruleset, 'nat', chain)!;
  return {
    kind: 'chain', ruleset: 'iptables', table: 'nat', chain, policy: null, diagnostics: [], backTo: null, derivedNote: false,
    rows: lazyRows(index.length, (i) => index.row(i)),
  };
}

function frame(data: RulesPaneData, width: number, cursor = 0, height = 20): string {
  const r = renderAt(<RulesPane data={data} cursor={cursor} width={width} height={height} focused lang="en" />, width);
  const text = r.frame();
  r.unmount();
  return text;
}

describe.each(FRAME_WIDTHS)('Rules pane columns at %i columns', (width) => {
  it('formats the 10 branch probabilities of a KUBE-SVC chain the same way', () => {
    const svc = makeService({ endpoints: Array.from({ length: 10 }, (_, i) => ({ ip: `10.180.0.${i + 1}`, port: 80 })) });
    const chain = serviceChains(svc).svc;
    const text = frame(chainData(makeRuleset([kubeNatTable([svc])]), chain), width);
    const probs = text.match(/\b\d+\.\d+%/g) ?? [];
    expect(probs.length).toBeGreaterThanOrEqual(10);
    expect(new Set(probs)).toEqual(new Set(['10.0%']));
  });

  it('shows the whole rule number of a chain with 24766 rules', () => {
    const n = 24766;
    const rules = Array.from({ length: n }, () => ({ target: target('KUBE-MARK-MASQ', [], 'jump') }));
    const ruleset = makeRuleset([makeTable('nat', [makeChain('KUBE-SERVICES', rules, { table: 'nat' }), makeChain('KUBE-MARK-MASQ', [], { table: 'nat' })])]);
    const text = frame(chainData(ruleset, 'KUBE-SERVICES'), width, n - 1);
    expect(text).toMatch(new RegExp(`^\\s*${n}\\s`, 'm'));
    expect(text).toMatch(/^\s*24765\s/m);
    expect(text).not.toContain('24…');
  });
});

describe('probabilityDigits', () => {
  it('gives one format to a column mixing branches above and below 10%', () => {
    const ps = [0.5, 0.05, null, 0.45];
    const digits = probabilityDigits(ps);
    expect(ps.flatMap((p) => (p === null ? [] : [formatProbability(p, digits)]))).toEqual(['50.00%', '5.00%', '45.00%']);
    expect(probabilityDigits([1 / 3, 0.1 * (1 - 1e-15)])).toBe(1);
  });
});
