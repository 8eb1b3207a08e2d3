/**
 * What an nftables ruleset whose chains' rules are built on first read (a replay's `nft -j`
 * read by src/parsers/nft-json-direct.ts `readNftJsonLazy`) can say before every chain is
 * read: the Rules pane shows the diagnostics known so far and how many chains are not read
 * yet, as it does for iptables (src/model/iptables-facts.ts), instead of building every rule
 * of a 25,000-Service ruleset to open.
 */
import type { RulesetReadState } from './iptables-facts.js';
import type { NftRuleset } from './nftables.js';

/**
 * The method a ruleset with chains not read yet answers its {@link RulesetReadState} with
 * (not enumerable: deep equality, spread and JSON do not see it); it answers undefined once
 * every chain is read.
 */
export const NFT_READ_STATE: unique symbol = Symbol('nftables ruleset read state');

type WithReadState = { readonly [NFT_READ_STATE]?: () => RulesetReadState | undefined };

/**
 * The read state of an nftables ruleset some chains of which are not read yet: the
 * diagnostics of the items read so far (not the complete list) and how many chains'
 * rules are not built yet; undefined when the part's `diagnostics` can be read without
 * building any more rules (a ruleset read whole, or one whose chains are all read).
 */
export function nftReadState(ruleset: NftRuleset): RulesetReadState | undefined {
  return (ruleset as WithReadState)[NFT_READ_STATE]?.call(ruleset);
}
