/**
 * The header's mode evidence in the UI's language: each {@link ModeFact} of
 * `detectProxyMode` through the `mode.fact.*` strings (English equals `modeFactText`,
 * which the reports print), and the line that fits the header's width: the full words
 * when they fit, else the short `mode.short.*` forms, else the short forms of the facts
 * that matter most with `+N more` for the rest (never a fact cut in half).
 */
import { ipsetNames, kubeChainsRuleset, type ModeFact, type ProxyModeResult } from './proxy-mode.js';
import { t, tf, type Lang, type MessageKey } from '../text/i18n.js';
import { cellWidth } from '../text/cells.js';

/** The two wordings of a fact: the full words (`mode.fact.*`) and the header's short form (`mode.short.*`). */
type FactForm = 'fact' | 'short';

/** The message names of the facts (the part after `mode.fact.` / `mode.short.`; both tables have each). */
type FactName = ModeFact['kind'] | 'kubeChainsLeftover' | 'ipvsIface' | 'ipvsUnread' | 'ipvsUnreadIface';

/** The message name of fact `f`. */
function factName(f: ModeFact): FactName {
  switch (f.kind) {
    case 'kubeChains':
      return f.leftovers > 0 ? 'kubeChainsLeftover' : 'kubeChains';
    case 'ipvs':
      if (f.virtualServers === null) return f.kubeIpvs0 ? 'ipvsUnreadIface' : 'ipvsUnread';
      return f.kubeIpvs0 ? 'ipvsIface' : 'ipvs';
    default:
      return f.kind;
  }
}

/** The parameters of fact `f`'s message in `form` (short: `legacy` for iptables-legacy, `lb4+lb6` for the maps). */
function factParams(f: ModeFact, form: FactForm): Record<string, string | number> {
  switch (f.kind) {
    case 'kubeProxyTable':
      return { family: f.family };
    case 'kubeChains':
      return { ruleset: form === 'fact' ? kubeChainsRuleset(f) : f.ruleset === 'iptables-legacy' ? 'legacy' : (f.backend ?? f.ruleset), chains: f.chains, leftovers: f.leftovers };
    case 'ipsetMatches':
      return { rules: f.rules, sets: ipsetNames(f.sets) };
    case 'ipvs':
      return f.virtualServers === null ? { probe: f.probe ?? 'ipvsadm' } : { servers: f.virtualServers };
    case 'ciliumServices':
      return { maps: form === 'fact' ? f.maps.join(' + ') : shortMaps(f.maps), frontends: f.frontends, slots: f.backendSlots, entries: f.frontends + f.backendSlots };
    case 'ciliumChains':
      return { chains: f.chains };
    default:
      return {};
  }
}

/** One fact in `lang` and `form`. */
function factIn(lang: Lang, f: ModeFact, form: FactForm): string {
  const key: MessageKey = `mode.${form}.${factName(f)}`;
  return tf(lang, key, factParams(f, form));
}

/** One fact in `lang`. */
export function modeFactLine(lang: Lang, f: ModeFact): string {
  return factIn(lang, f, 'fact');
}

/** The mode's name in `lang`, with why it is unconfirmed when it is: `ipvs (unconfirmed: ipvsadm not read)`. */
export function modeLabelIn(lang: Lang, r: Pick<ProxyModeResult, 'mode' | 'unconfirmed'>): string {
  const u = r.unconfirmed;
  if (!u) return r.mode;
  const why = u.reason === 'leftoversOnly' ? t(lang, 'mode.unconfirmed.leftoversOnly') : tf(lang, u.reason === 'notRead' ? 'mode.unconfirmed.notRead' : 'mode.unconfirmed.noVirtualServers', { probe: u.probe });
  return tf(lang, 'mode.unconfirmed', { mode: r.mode, why });
}

/** Every fact in `lang`, joined as the header shows them. */
export function modeEvidenceLine(lang: Lang, facts: readonly ModeFact[]): string {
  return facts.map((f) => modeFactLine(lang, f)).join('; ');
}

/** `lb4`, `lb6`, `lb4+lb6`: the family part of Cilium's services map names (`cilium_lb4_services_v2`). */
function shortMaps(maps: readonly string[]): string {
  return maps.map((m) => /^cilium_(lb\d)_/.exec(m)?.[1] ?? m).join('+');
}

/** One fact in `lang`, in the header's short form (e.g. `lb4: 7 frontends + 14 slots`). */
export function modeFactShort(lang: Lang, f: ModeFact): string {
  return factIn(lang, f, 'short');
}

/**
 * Which facts the header keeps when short of room, most important first (0): what
 * kube-proxy wrote, then the Cilium services maps' size, its iptables chains, and last
 * "0 KUBE- chains", which the mode name `cilium` already implies.
 */
const KEEP_RANK: Record<ModeFact['kind'], number> = {
  kubeProxyTable: 0,
  kubeChains: 0,
  ipvs: 0,
  ipsetMatches: 0,
  noProxy: 0,
  noRules: 0,
  ciliumServices: 1,
  ciliumChains: 2,
  ciliumKpr: 3,
};

/**
 * The evidence as it fits `room` cells (the header line's width after `mode: X — `), in
 * `lang`: every fact in full words when they fit; else every fact in short form; else the
 * short forms of the facts that rank first ({@link KEEP_RANK}), in the facts' order, with
 * `+N more`. Only when not even the first fact fits is the result wider than `room` (the
 * header cuts it). Facts keep `detectProxyMode`'s order.
 */
export function modeEvidenceFit(lang: Lang, facts: readonly ModeFact[], room: number): string {
  const full = modeEvidenceLine(lang, facts);
  if (cellWidth(full) <= room) return full;
  const short = facts.map((f) => modeFactShort(lang, f));
  if (cellWidth(short.join('; ')) <= room) return short.join('; ');
  const order = facts.map((f, i) => ({ i, rank: KEEP_RANK[f.kind] })).sort((a, b) => a.rank - b.rank || a.i - b.i);
  for (let keep = facts.length - 1; keep >= 1; keep--) {
    const kept = new Set(order.slice(0, keep).map((o) => o.i));
    const line = [...short.filter((_s, i) => kept.has(i)), tf(lang, 'mode.more', { n: facts.length - keep })].join('; ');
    if (cellWidth(line) <= room || keep === 1) return line;
  }
  return short.join('; ');
}
