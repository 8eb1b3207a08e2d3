/**
 * Counter rates: packets per second per rule between two snapshots of the same
 * node. A rule whose text changed between the two (kube-proxy rewrote the chain)
 * gets no rate rather than a wrong one. Pure.
 */
import type { IptablesRuleset } from '../model/iptables.js';
import { ruleKey, type RuleRates } from './rules-view.js';

function ruleIdentity(raw: string): string {
  // The counters prefix `[pkts:bytes] ` changes every refresh; the rest identifies the rule.
  return raw.startsWith('[') ? raw.slice(raw.indexOf(']') + 1).trim() : raw.trim();
}

/**
 * Packets per second for every rule present in both rulesets with the same text.
 * `elapsedSeconds` must be > 0 (seconds between the two reads); otherwise the
 * result is empty. A counter that went down (reset, e.g. a chain flush) gives no rate.
 */
export function iptablesRates(previous: IptablesRuleset, current: IptablesRuleset, elapsedSeconds: number): RuleRates {
  const rates = new Map<string, number>();
  if (!(elapsedSeconds > 0)) return rates;
  const before = new Map<string, { id: string; packets: bigint }>();
  for (const table of previous.tables) {
    for (const chain of table.chains) {
      for (const rule of chain.rules) {
        if (rule.counters) before.set(ruleKey(table.name, chain.name, rule.index), { id: ruleIdentity(rule.raw), packets: rule.counters.packets });
      }
    }
  }
  for (const table of current.tables) {
    for (const chain of table.chains) {
      for (const rule of chain.rules) {
        const key = ruleKey(table.name, chain.name, rule.index);
        const old = before.get(key);
        if (!old || !rule.counters || old.id !== ruleIdentity(rule.raw)) continue;
        const delta = rule.counters.packets - old.packets;
        if (delta >= 0n) rates.set(key, Number(delta) / elapsedSeconds);
      }
    }
  }
  return rates;
}
