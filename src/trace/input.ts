/**
 * What the step engine reads: the node's rulesets, addresses, routes and conntrack
 * table. A small input type rather than the whole {@link NodeSnapshot}, so callers can
 * add the nft ruleset (parsed from `nft -j list ruleset`) or hand-built data in tests.
 */
import type { ConntrackEntry } from '../model/conntrack.js';
import type { NetInterface, Route } from '../model/iproute.js';
import type { IptablesRuleset } from '../model/iptables.js';
import type { IpsetSet } from '../model/ipvs.js';
import type { NftRuleset } from '../model/nftables.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import type { XtRecentCapture } from '../model/xt-recent.js';
import { xtRecentAge } from '../parsers/xt-recent.js';

/**
 * One address of an `xt_recent` list (`/proc/net/xt_recent/NAME`): the address and how
 * long ago it was last seen (seconds), null when unknown.
 */
export interface XtRecentEntry {
  readonly address: string;
  readonly ageSeconds: number | null;
}

/**
 * The input of a walk.
 * - `iptables`: every iptables ruleset of the node (iptables-save, ip6tables-save,
 *   iptables-legacy-save), each with its `family` and `generator.backend`;
 * - `nft`: the whole nftables ruleset (`nft -j list ruleset`). Tables iptables-nft
 *   manages (`table ip nat` … of an nf_tables-backend dump) are evaluated once, through
 *   the iptables model; the nft copy only lends its rule handles;
 * - `addrs`, `routes`: `ip -j addr`, `ip -j route show table all`;
 * - `conntrack`: the conntrack table (`conntrack -L`), to find flows already known;
 * - `xtRecent`: contents of `-m recent` lists by name, when captured (else a rule that
 *   checks one is unsupported);
 * - `ipsets`: the sets of `ipset list` by name, for `-m set` (else such a rule is unsupported).
 */
export interface TraceInput {
  readonly iptables?: readonly IptablesRuleset[];
  readonly nft?: NftRuleset;
  readonly addrs: readonly NetInterface[];
  readonly routes: readonly Route[];
  readonly conntrack?: readonly ConntrackEntry[];
  readonly xtRecent?: Readonly<Record<string, readonly XtRecentEntry[]>>;
  /** Every list was read (the `xt-recent` probe): a list with no entry in `xtRecent` is empty, not unknown. */
  readonly xtRecentComplete?: boolean;
  readonly ipsets?: Readonly<Record<string, IpsetSet>>;
}

/** Inputs built from one snapshot: without an `nft` override, and by override (weakly). */
interface SnapshotInputs {
  plain?: TraceInput;
  readonly byNft: WeakMap<NftRuleset, TraceInput>;
}

const inputs = new WeakMap<NodeSnapshot, SnapshotInputs>();

/**
 * The walk's input from a snapshot: its iptables rulesets (iptables, ip6tables,
 * iptables-legacy, those that parsed), its nft ruleset (`nft` overrides it when given),
 * addresses, routes and conntrack entries. Missing parts become empty lists; the walk
 * then says what it could not decide. Never throws.
 *
 * The same snapshot (and `nft`) gives the same input object (remembered in WeakMaps;
 * snapshots are never changed in place), so what walks build once per input (hook plans,
 * nft twins) is kept from one walk to the next.
 */
export function traceInputFromSnapshot(snapshot: NodeSnapshot, nft?: NftRuleset): TraceInput {
  let memo = inputs.get(snapshot);
  if (!memo) {
    memo = { byNft: new WeakMap() };
    inputs.set(snapshot, memo);
  }
  let input = nft === undefined ? memo.plain : memo.byNft.get(nft);
  if (!input) {
    input = buildInput(snapshot, nft);
    if (nft === undefined) memo.plain = input;
    else memo.byNft.set(nft, input);
  }
  return input;
}

function buildInput(snapshot: NodeSnapshot, nft: NftRuleset | undefined): TraceInput {
  const iptables: IptablesRuleset[] = [];
  // On a node whose `iptables` is the legacy one, iptables-legacy-save prints the same tables again.
  const sameAsLegacy = snapshot.iptables?.value?.generator?.backend === 'legacy';
  for (const part of [snapshot.iptables, snapshot.ip6tables, sameAsLegacy ? null : snapshot.iptablesLegacy]) {
    if (part?.value && part.value.tables.length > 0) iptables.push(part.value);
  }
  const ruleset = nft ?? snapshot.nft?.value ?? undefined;
  return {
    iptables,
    ...(ruleset ? { nft: ruleset } : {}),
    addrs: snapshot.addrs?.value ?? [],
    routes: snapshot.routes?.value ?? [],
    conntrack: snapshot.conntrack?.value?.entries ?? [],
    ...xtRecentInput(snapshot.xtRecent?.value ?? null),
    ...(snapshot.ipset?.value ? { ipsets: Object.fromEntries(snapshot.ipset.value.map((s) => [s.name, s])) } : {}),
  };
}

/** The walk's `-m recent` lists from the `xt-recent` probe: ages in seconds when jiffies and HZ are known. */
function xtRecentInput(capture: XtRecentCapture | null): Pick<TraceInput, 'xtRecent' | 'xtRecentComplete'> {
  if (!capture) return {};
  const lists: Record<string, XtRecentEntry[]> = {};
  for (const [name, rows] of Object.entries(capture.lists)) lists[name] = rows.map((r) => ({ address: r.address, ageSeconds: xtRecentAge(capture, r) }));
  return { xtRecent: lists, xtRecentComplete: true };
}
