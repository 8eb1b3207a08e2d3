/**
 * Phrases the rule walkers (iptables, nft) share, as keys of src/text/messages/steps.ts:
 * the end of a chain (policy, or back to the caller) and a condition list followed by
 * what the rule then did. Pure.
 */
import { phrase, stepSaid, type StepSaid } from '../text/step-said.js';

/** `end of CHAIN[ (reached by goto VIA)]: policy POLICY`: the policy of a base chain applies. */
export function chainEndPolicy(chain: string, via: string | null, policy: string): StepSaid {
  return via === null ? stepSaid('chain-end-policy', { chain, policy }) : stepSaid('chain-end-policy-goto', { chain, via, policy });
}

/** The end of a user chain: back to `caller` rule `pos + 1`, or to its end when `pos` is past its `length` rules. */
export function chainEndBack(chain: string, caller: string, pos: number, length: number): StepSaid {
  return pos < length ? stepSaid('chain-end-back-to-rule', { chain, caller, n: pos + 1 }) : stepSaid('chain-end-back-to-end', { chain, caller });
}

/** `first; next`: what a matched rule held, then what it did (not named `then`: a module exporting `then` is a thenable, and `await import()` of it never settles). */
export function andThen(first: StepSaid, next: StepSaid): StepSaid {
  return stepSaid('and-then', { first, next });
}

/** A matcher's condition list (English words, see StepPhrase), then `next`. */
export function condsThen(conds: string, next: StepSaid): StepSaid {
  return andThen(stepSaid('rule-conditions', { conds: phrase(conds) }), next);
}
