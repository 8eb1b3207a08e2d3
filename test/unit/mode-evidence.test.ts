/** The header's mode evidence in each UI language: English as the reports print it, Japanese through i18n. */
import { describe, expect, it } from 'vitest';
import { modeFactText, type ModeFact } from '../../src/analysis/proxy-mode.js';
import { modeEvidenceLine, modeFactLine } from '../../src/ui/mode-evidence.js';

/** One fact of every kind, with distinct numbers so a swapped parameter shows. */
const everyFact: readonly ModeFact[] = [
  { kind: 'kubeProxyTable' },
  { kind: 'kubeChains', ruleset: 'iptables', backend: 'nf_tables', chains: 23 },
  { kind: 'kubeChains', ruleset: 'iptables-legacy', backend: null, chains: 4 },
  { kind: 'ipvs', virtualServers: 9, kubeIpvs0: true },
  { kind: 'ipvs', virtualServers: 3, kubeIpvs0: false },
  { kind: 'ciliumKpr' },
  { kind: 'ciliumServices', maps: ['cilium_lb4_services_v2', 'cilium_lb6_services_v2'], frontends: 7, backendSlots: 14 },
  { kind: 'ciliumChains', chains: 10 },
  { kind: 'noProxy' },
  { kind: 'noRules' },
];

describe('modeFactLine', () => {
  it.each(everyFact.map((f) => [modeFactText(f), f] as const))('says "%s" in English exactly as the reports do', (_text, f) => {
    expect(modeFactLine('en', f)).toBe(modeFactText(f));
  });

  it.each(everyFact.map((f) => [f.kind, f] as const))('words %s in Japanese, keeping its numbers and names', (_kind, f) => {
    const ja = modeFactLine('ja', f);
    expect(ja).not.toBe(modeFactText(f));
    expect(ja).toMatch(/[\u3040-\u30ff]/);
    for (const token of modeFactText(f).match(/\d+|cilium_lb\d_services_v2|kube-ipvs0|nf_tables|iptables-legacy/g) ?? []) expect(ja).toContain(token);
  });

  it('joins the facts with "; " as the header shows them', () => {
    expect(modeEvidenceLine('ja', everyFact.slice(5, 7))).toBe(`${modeFactLine('ja', everyFact[5]!)}; ${modeFactLine('ja', everyFact[6]!)}`);
  });
});
