/**
 * The header's mode evidence in the UI's language: each {@link ModeFact} of
 * `detectProxyMode` through the `mode.fact.*` strings (English equals `modeFactText`,
 * which the reports print).
 */
import { kubeChainsRuleset, type ModeFact } from '../analysis/proxy-mode.js';
import { t, tf, type Lang } from './i18n.js';

/** One fact in `lang`. */
export function modeFactLine(lang: Lang, f: ModeFact): string {
  switch (f.kind) {
    case 'kubeProxyTable':
      return t(lang, 'mode.fact.kubeProxyTable');
    case 'kubeChains':
      return tf(lang, 'mode.fact.kubeChains', { ruleset: kubeChainsRuleset(f), chains: f.chains });
    case 'ipvs':
      return tf(lang, f.kubeIpvs0 ? 'mode.fact.ipvsIface' : 'mode.fact.ipvs', { servers: f.virtualServers });
    case 'ciliumKpr':
      return t(lang, 'mode.fact.ciliumKpr');
    case 'ciliumServices':
      return tf(lang, 'mode.fact.ciliumServices', { maps: f.maps.join(' + '), frontends: f.frontends, slots: f.backendSlots, entries: f.frontends + f.backendSlots });
    case 'ciliumChains':
      return tf(lang, 'mode.fact.ciliumChains', { chains: f.chains });
    case 'noProxy':
      return t(lang, 'mode.fact.noProxy');
    case 'noRules':
      return t(lang, 'mode.fact.noRules');
  }
}

/** Every fact in `lang`, joined as the header shows them. */
export function modeEvidenceLine(lang: Lang, facts: readonly ModeFact[]): string {
  return facts.map((f) => modeFactLine(lang, f)).join('; ');
}
