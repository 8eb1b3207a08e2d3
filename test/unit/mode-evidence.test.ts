/** The header's mode evidence in each UI language: English as the reports print it, Japanese through i18n. */
import { describe, expect, it } from 'vitest';
import { modeFactText, type ModeFact } from '../../src/analysis/proxy-mode.js';
import { modeEvidenceFit, modeEvidenceLine, modeFactLine, modeFactShort } from '../../src/analysis/mode-evidence.js';
import { tf } from '../../src/text/i18n.js';
import { cellWidth } from '../../src/text/cells.js';

/** One fact of every kind, with distinct numbers so a swapped parameter shows. */
const everyFact: readonly ModeFact[] = [
  { kind: 'kubeProxyTable', family: 'ip' },
  { kind: 'kubeProxyTable', family: 'ip6' },
  { kind: 'kubeChains', ruleset: 'iptables', backend: 'nf_tables', chains: 23, leftovers: 0 },
  { kind: 'kubeChains', ruleset: 'iptables-legacy', backend: null, chains: 4, leftovers: 0 },
  { kind: 'kubeChains', ruleset: 'iptables-legacy', backend: null, chains: 26, leftovers: 21 },
  { kind: 'ipsetMatches', rules: 5, sets: ['KUBE-CLUSTER-IP', 'KUBE-LOOP-BACK', 'KUBE-NODE-PORT-TCP', 'KUBE-EXTERNAL-IP'] },
  { kind: 'ipvs', virtualServers: 9, probe: null, kubeIpvs0: true },
  { kind: 'ipvs', virtualServers: 3, probe: null, kubeIpvs0: false },
  { kind: 'ipvs', virtualServers: null, probe: 'ipvsadm', kubeIpvs0: true },
  { kind: 'ipvs', virtualServers: null, probe: 'ipvsadm', kubeIpvs0: false },
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

/** A Cilium node's facts, as detectProxyMode orders them, with `frontends`/`slots`/`chains` to vary. */
function ciliumFacts(frontends: number, slots: number, chains: number): ModeFact[] {
  return [
    { kind: 'ciliumKpr' },
    { kind: 'ciliumServices', maps: ['cilium_lb4_services_v2'], frontends, backendSlots: slots },
    { kind: 'ciliumChains', chains },
  ];
}

describe('modeEvidenceFit', () => {
  it.each(['en', 'ja'] as const)('keeps the full words when they fit (%s)', (lang) => {
    const facts = ciliumFacts(7, 14, 10);
    const full = modeEvidenceLine(lang, facts);
    expect(modeEvidenceFit(lang, facts, cellWidth(full))).toBe(full);
  });

  it.each(['en', 'ja'] as const)('switches every fact to its short form, in the same order, when the full words do not fit (%s)', (lang) => {
    const facts = ciliumFacts(7, 14, 10);
    const room = cellWidth(modeEvidenceLine(lang, facts)) - 1;
    expect(modeEvidenceFit(lang, facts, room)).toBe(facts.map((f) => modeFactShort(lang, f)).join('; '));
  });

  it.each(['en', 'ja'] as const)('short forms keep the numbers and the map family (%s)', (lang) => {
    const [kpr, svc, chains] = ciliumFacts(1234, 56789, 42).map((f) => modeFactShort(lang, f));
    expect(kpr).toContain('KUBE-');
    expect(svc).toMatch(/lb4.*1234.*56789/);
    expect(chains).toContain('CILIUM_');
    expect(chains).toContain('42');
  });

  it.each(['en', 'ja'] as const)('when even the short forms do not fit, drops "0 KUBE- chains" first, then the CILIUM_ chains, and says how many (%s)', (lang) => {
    const facts = ciliumFacts(1234, 56789, 42);
    const short = facts.map((f) => modeFactShort(lang, f));
    const room = cellWidth(short.join('; ')) - 1;
    const two = modeEvidenceFit(lang, facts, room);
    expect(cellWidth(two)).toBeLessThanOrEqual(room);
    expect(two).toBe(`${short[1]}; ${short[2]}; ${tf(lang, 'mode.more', { n: 1 })}`);
    const one = modeEvidenceFit(lang, facts, cellWidth(`${short[1]}; ${short[2]}`));
    expect(one).toBe(`${short[1]}; ${tf(lang, 'mode.more', { n: 2 })}`);
  });

  it('on a kube-proxy node keeps the KUBE- chains before the Cilium facts', () => {
    const facts: ModeFact[] = [{ kind: 'kubeChains', ruleset: 'iptables', backend: 'nf_tables', chains: 23, leftovers: 0 }, ...ciliumFacts(7, 14, 10).slice(1)];
    const short = facts.map((f) => modeFactShort('en', f));
    expect(modeEvidenceFit('en', facts, cellWidth(short.join('; ')) - 1)).toBe(`${short[0]}; ${short[1]}; +1 more`);
  });
});
