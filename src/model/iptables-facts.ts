/**
 * Facts about an iptables chain that its raw `iptables-save` lines give before its rules are
 * built: a chain parsed on first read of `rules` (src/parsers/iptables-save.ts
 * `parseIptablesSaveLazyPieces`) carries them until then, so readers that need only these
 * facts (the proxy mode's per-Service chain rule counts and nat ipset matches, the header's
 * dump notes looking for a few words) do not make the parser build every rule of a
 * 25,000-Service dump.
 *
 * Every reader falls back on the chain's rules when a chain has no facts (any chain of an
 * eagerly parsed ruleset, or a lazy chain already parsed): the answers are the same either way.
 * Such a ruleset also tells how many chains are not read yet and the diagnostics known so far
 * ({@link rulesetReadState}), for the Rules pane, which must not parse every chain to open.
 */
import type { Diagnostic } from './diagnostics.js';
import type { IptablesChain, IptablesRule, IptablesRuleset } from './iptables.js';

/**
 * What a chain's rule lines say before they are parsed (iptables-save(8) rule lines,
 * `[p:b] -A CHAIN …`):
 * - `ruleCount`: how many rule lines the chain has (what `rules.length` will be);
 * - `mayHold(literal)`: false when no word of the chain's rule lines, as iptables' restore
 *   tokenizer reads them (`iptables/xshared.c`), contains `literal`: then no field of its
 *   rules that is one word (a module or option name, an option value, one comment, a target
 *   name) contains it. True when one may (the lines hold it, or a backslash or a quote glued
 *   to a word, which make words that are not plain text of the line).
 * - `ruleAt(k)` (optional): the rule at 0-based position `k` (undefined past the end), the
 *   same object `rules[k]` will be, made by parsing the chain's lines only up to it: a walk
 *   that stops early in a 10,000-rule chain does not parse the rest.
 */
export interface ChainLineFacts {
  readonly ruleCount: number;
  readonly mayHold: (literal: string) => boolean;
  readonly ruleAt?: (k: number) => IptablesRule | undefined;
}

/**
 * The method a chain whose rules are not built yet answers its {@link ChainLineFacts} with
 * (the parser's deferred chains have it on their prototype; it answers undefined once the
 * rules are built). Chains without it have no facts: readers read their rules.
 */
export const CHAIN_LINE_FACTS: unique symbol = Symbol('iptables chain line facts');

type WithFacts = { readonly [CHAIN_LINE_FACTS]?: () => ChainLineFacts | undefined };

/** The line facts of a chain whose rules are not built yet; undefined for any other chain. */
export function chainLineFacts(chain: IptablesChain): ChainLineFacts | undefined {
  return (chain as WithFacts)[CHAIN_LINE_FACTS]?.call(chain);
}

/** `chain.rules.length`, without building the rules of a chain not parsed yet. */
export function chainRuleCount(chain: IptablesChain): number {
  return chainLineFacts(chain)?.ruleCount ?? chain.rules.length;
}

/**
 * `chain.rules[k]` (0-based; undefined past the end), parsing a chain not parsed yet only up
 * to that rule when it can ({@link ChainLineFacts} `ruleAt`): the same rule object either way.
 */
export function chainRuleAt(chain: IptablesChain, k: number): IptablesRule | undefined {
  const facts = chainLineFacts(chain);
  return facts?.ruleAt !== undefined ? facts.ruleAt(k) : chain.rules[k];
}

/**
 * False when no one-word field of `chain`'s rules contains `literal` (see {@link ChainLineFacts}),
 * read from its lines when its rules are not built yet; true otherwise (a reader then reads the rules).
 */
export function chainMayHold(chain: IptablesChain, literal: string): boolean {
  return chainLineFacts(chain)?.mayHold(literal) ?? true;
}

/**
 * What a ruleset parsed on first read (src/parsers/iptables-save.ts
 * `parseIptablesSaveLazyPieces`) can say of its diagnostics before every chain is read:
 * - `diagnosticsSoFar`: the diagnostics of the table, chain, comment and COMMIT lines (pass 1),
 *   then those the chains read so far met, by line — not the complete list;
 * - `unreadChains`: how many chains' rule lines are not parsed yet (> 0), whose rule-level
 *   diagnostics are not known.
 */
export interface RulesetReadState {
  readonly diagnosticsSoFar: readonly Diagnostic[];
  readonly unreadChains: number;
}

/**
 * The method a deferred ruleset answers its {@link RulesetReadState} with (not enumerable:
 * deep equality, spread and JSON do not see it); it answers undefined once every chain is read.
 */
export const RULESET_READ_STATE: unique symbol = Symbol('iptables ruleset read state');

type WithReadState = { readonly [RULESET_READ_STATE]?: () => RulesetReadState | undefined };

/**
 * The read state of a ruleset some chains of which are not parsed yet; undefined when its
 * diagnostics (the part's `diagnostics`) can be read without parsing any more rules: an eager
 * ruleset, or a deferred one whose chains are all read.
 */
export function rulesetReadState(ruleset: IptablesRuleset): RulesetReadState | undefined {
  return (ruleset as WithReadState)[RULESET_READ_STATE]?.call(ruleset);
}
