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

type Chain = IptablesRuleset['tables'][number]['chains'][number];

function chainsByKey(ruleset: IptablesRuleset): Map<string, Chain> {
  const out = new Map<string, Chain>();
  for (const table of ruleset.tables) for (const chain of table.chains) out.set(`${table.name}/${chain.name}`, chain);
  return out;
}

/**
 * The rates of {@link iptablesRates}, computed one chain at a time when first asked for
 * (`get`, `has`): the Rules pane shows one chain, and reading every rule of a 1M-rule
 * ruleset each refresh took seconds. Iterating (`entries`, `size`, …) computes them all.
 */
class LazyRuleRates implements ReadonlyMap<string, number> {
  private readonly byChain = new Map<string, ReadonlyMap<string, number>>();
  private before: Map<string, Chain> | undefined;
  private after: Map<string, Chain> | undefined;
  private everything: Map<string, number> | undefined;

  constructor(
    private readonly previous: IptablesRuleset,
    private readonly current: IptablesRuleset,
    private readonly elapsedSeconds: number,
  ) {}

  private chain(tableChain: string): ReadonlyMap<string, number> {
    let rates = this.byChain.get(tableChain);
    if (rates) return rates;
    this.before ??= chainsByKey(this.previous);
    this.after ??= chainsByKey(this.current);
    const slash = tableChain.indexOf('/');
    rates = chainRates(tableChain.slice(0, slash), tableChain.slice(slash + 1), this.before.get(tableChain), this.after.get(tableChain), this.elapsedSeconds);
    this.byChain.set(tableChain, rates);
    return rates;
  }

  private all(): Map<string, number> {
    if (!this.everything) {
      this.everything = new Map();
      for (const table of this.current.tables) for (const chain of table.chains) for (const [k, v] of this.chain(`${table.name}/${chain.name}`)) this.everything.set(k, v);
    }
    return this.everything;
  }

  get(key: string): number | undefined {
    const hash = key.lastIndexOf('#');
    return hash < 0 ? undefined : this.chain(key.slice(0, hash)).get(key);
  }
  has(key: string): boolean {
    return this.get(key) !== undefined;
  }
  get size(): number {
    return this.all().size;
  }
  forEach(fn: (value: number, key: string, map: ReadonlyMap<string, number>) => void): void {
    for (const [k, v] of this.all()) fn(v, k, this);
  }
  entries(): MapIterator<[string, number]> {
    return this.all().entries();
  }
  keys(): MapIterator<string> {
    return this.all().keys();
  }
  values(): MapIterator<number> {
    return this.all().values();
  }
  [Symbol.iterator](): MapIterator<[string, number]> {
    return this.all()[Symbol.iterator]();
  }
}

/** The rates of one chain's rules, matched by position; none when the chain is new or gone. */
function chainRates(table: string, chainName: string, old: Chain | undefined, chain: Chain | undefined, elapsedSeconds: number): Map<string, number> {
  const rates = new Map<string, number>();
  if (!old || !chain) return rates;
  const oldByIndex = new Map(old.rules.map((r) => [r.index, r]));
  for (const rule of chain.rules) {
    const was = oldByIndex.get(rule.index);
    if (!was?.counters || !rule.counters || !sameRule(was.raw, rule.raw)) continue;
    const delta = rule.counters.packets - was.counters.packets;
    if (delta >= 0n) rates.set(ruleKey(table, chainName, rule.index), Number(delta) / elapsedSeconds);
  }
  return rates;
}

/**
 * Packets per second for every rule present in both rulesets with the same text, keyed by
 * {@link ruleKey}. `elapsedSeconds` must be > 0 (seconds between the two reads); otherwise
 * the result is empty. A counter that went down (reset, e.g. a chain flush) gives no rate.
 * Rules are matched by table, chain and position, without copying their text; each chain's
 * rates are computed when first read (see {@link LazyRuleRates}).
 */
export function iptablesRates(previous: IptablesRuleset, current: IptablesRuleset, elapsedSeconds: number): RuleRates {
  if (!(elapsedSeconds > 0)) return new Map();
  return new LazyRuleRates(previous, current, elapsedSeconds);
}
