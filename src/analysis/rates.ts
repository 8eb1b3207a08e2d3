/**
 * Counter rates: packets per second per rule between two snapshots of the same
 * node. A rule whose text changed between the two (kube-proxy rewrote the chain)
 * gets no rate rather than a wrong one. Pure.
 */
import type { IptablesRuleset } from '../model/iptables.js';
import { ruleKey, type RuleRates } from './rules-view.js';

/** Where a rule's identity starts in its raw line: after the `[pkts:bytes] ` counters prefix, which changes every refresh. */
function identityStart(raw: string): number {
  if (!raw.startsWith('[')) return 0;
  let i = raw.indexOf(']') + 1;
  while ([32, 9, 13, 10].includes(raw.charCodeAt(i))) i++;
  return i;
}

/** The two raw lines are the same rule (equal apart from their counters); no copies made. */
function sameRule(a: string, b: string): boolean {
  if (a === b) return true;
  const ia = identityStart(a);
  const ib = identityStart(b);
  const ea = identityEnd(a, ia);
  const eb = identityEnd(b, ib);
  if (ea - ia !== eb - ib) return false;
  for (let k = ea - 1, j = eb - 1; k >= ia; k--, j--) if (a.charCodeAt(k) !== b.charCodeAt(j)) return false;
  return true;
}

/** End of a rule's identity: trailing blanks (space, tab, CR, LF) are not part of it. */
function identityEnd(raw: string, from: number): number {
  let e = raw.length;
  while (e > from && [32, 9, 13, 10].includes(raw.charCodeAt(e - 1))) e--;
  return e;
}

/**
 * Packets per second for every rule present in both rulesets with the same text.
 * `elapsedSeconds` must be > 0 (seconds between the two reads); otherwise the
 * result is empty. A counter that went down (reset, e.g. a chain flush) gives no rate.
 * Rules are matched by table, chain and position, chains by name (one pass, no copies:
 * a 1M-rule ruleset takes a fraction of a second).
 */
export function iptablesRates(previous: IptablesRuleset, current: IptablesRuleset, elapsedSeconds: number): RuleRates {
  const rates = new Map<string, number>();
  if (!(elapsedSeconds > 0)) return rates;
  const before = new Map<string, IptablesRuleset['tables'][number]['chains'][number]>();
  for (const table of previous.tables) for (const chain of table.chains) before.set(`${table.name}/${chain.name}`, chain);
  for (const table of current.tables) {
    for (const chain of table.chains) {
      const old = before.get(`${table.name}/${chain.name}`);
      if (!old) continue;
      const oldByIndex = new Map(old.rules.map((r) => [r.index, r]));
      for (const rule of chain.rules) {
        const was = oldByIndex.get(rule.index);
        if (!was?.counters || !rule.counters || !sameRule(was.raw, rule.raw)) continue;
        const delta = rule.counters.packets - was.counters.packets;
        if (delta >= 0n) rates.set(ruleKey(table.name, chain.name, rule.index), Number(delta) / elapsedSeconds);
      }
    }
  }
  return rates;
}
