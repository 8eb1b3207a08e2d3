/**
 * Facts about an iptables chain that its raw `iptables-save` lines give before its rules are
 * built: a chain parsed on first read of `rules` (src/parsers/iptables-save.ts
 * `parseIptablesSaveLazyPieces`) carries them until then, so readers that need only these
 * facts (the proxy mode's per-Service chain rule counts and nat ipset matches) do not make
 * the parser build every rule of a 25,000-Service dump.
 *
 * Every reader falls back on the chain's rules when a chain has no facts (any chain of an
 * eagerly parsed ruleset, or a lazy chain already parsed): the answers are the same either way.
 */
import type { IptablesChain } from './iptables.js';

/**
 * What a chain's rule lines say before they are parsed (iptables-save(8) rule lines,
 * `[p:b] -A CHAIN …`):
 * - `ruleCount`: how many rule lines the chain has (what `rules.length` will be);
 * - `maySetMatch`: some rule line could hold an option named `match-set` (iptables'
 *   restore tokenizer, `iptables/xshared.c`: the line holds the text `match-set`, a
 *   backslash, or a double quote joined to a word, which the tokenizer glues to it). False
 *   means no rule of the chain has a `--match-set` option.
 */
export interface ChainLineFacts {
  readonly ruleCount: number;
  readonly maySetMatch: boolean;
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

/** False when no rule of `chain` has a `--match-set` option (see {@link ChainLineFacts}); true when one may. */
export function chainMaySetMatch(chain: IptablesChain): boolean {
  return chainLineFacts(chain)?.maySetMatch ?? true;
}
