/**
 * One live refresh of the chain on screen (src/collect/chain-refresh.ts): the cheap check
 * and the chain's own probe in one batch, the chain spliced into the snapshot, its rates.
 * The session (src/collect/session.ts) falls back to a full read whenever this says so.
 */
import type { RuleRates } from '../analysis/rules-view.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import { runProbes, type ProbeRun } from '../sources/probe-runner.js';
import type { Transport } from '../sources/transport.js';
import { chainProbe, oneChainRates, rulesetCheckFingerprint, spliceIptablesChain, spliceNftChain, type ChainFocus } from './chain-refresh.js';
import { summarize } from './build-snapshot.js';

/**
 * The probes of the cheap "did the ruleset change" check: the table names (`nft list
 * flowtables`: `nft list tables` fetches every rule of every table first, which on a big
 * iptables-nft node outlasted its timeout and made every refresh a full read). `nft list chains` would also see new chains, but on a 10,000-Service node it lists ~65,000 chains
 * (over a second of the node's CPU per refresh): a new Service shows in the open chain when
 * that is KUBE-SERVICES or kube-proxy's `services` map, else at the periodic full read.
 */
export const CHECK_PROBES: readonly string[] = ['nft-tables'];

/**
 * What a focused refresh gives: the new snapshot and rates, or why a full read is needed
 * instead. `checkOnly`: the chain was not re-read (it keeps no counters), only the check ran.
 */
export type FocusedResult =
  | { readonly kind: 'chain'; readonly snapshot: NodeSnapshot; readonly rates: RuleRates; readonly runs: readonly ProbeRun[]; readonly checkOnly?: true }
  | { readonly kind: 'full'; readonly reason: string; readonly fingerprint: string | null; readonly runs?: readonly ProbeRun[] };

/** What {@link focusedRefresh} needs. `elapsedSeconds`: since the chain's counters shown were read. */
export interface FocusedInput {
  readonly transport: Transport;
  readonly params: Readonly<Record<string, string | undefined>>;
  readonly focus: ChainFocus;
  readonly snapshot: NodeSnapshot;
  /** The check's fingerprint at the last full read; null: unknown (a full read follows). */
  readonly fingerprint: string | null;
  readonly elapsedSeconds: number;
}

/**
 * Reads the check probes and the focused chain's probe (at most one heavy probe: none of
 * these is) and splices the chain in. `full` when the check changed or did not answer,
 * the chain's probe failed, the chain is not in the shown ruleset, or its rules changed
 * (kube-proxy rewrote it: the rest likely changed too).
 */
export async function focusedRefresh(input: FocusedInput): Promise<FocusedResult> {
  const probe = chainProbe(input.focus);
  if (!probe) return { kind: 'full', reason: `no per-chain read for ${input.focus.ruleset}`, fingerprint: null };
  if (input.focus.ruleset === 'nft' && nftChainWithoutCounters(input.snapshot, input.focus)) return checkOnly(input);
  const runs = await runProbes(input.transport, { ids: [...CHECK_PROBES, probe.id], params: { ...input.params, ...probe.params } });
  const byId = new Map(runs.map((r) => [r.id, r]));
  const fingerprint = rulesetCheckFingerprint(CHECK_PROBES.map((id) => byId.get(id)));
  if (fingerprint === null || fingerprint !== input.fingerprint) return { kind: 'full', reason: 'tables or chains changed', fingerprint, runs };
  const run = byId.get(probe.id);
  if (!run || run.status !== 'ok') return { kind: 'full', reason: `${probe.id}: ${run?.status ?? 'not run'}`, fingerprint, runs };
  const { focus, snapshot } = input;
  const withProbe = (probes: NodeSnapshot['probes']) => [...probes.filter((p) => p.id !== run.id), summarize(run)];
  if (focus.ruleset === 'nft') {
    const nft = snapshot.nft?.value;
    const spliced = nft ? spliceNftChain(nft, focus.table, focus.chain, run.result.stdout, run.id) : null;
    if (!spliced || spliced.changed) return { kind: 'full', reason: spliced ? 'the open chain changed' : 'chain not found', fingerprint, runs };
    // kube-proxy's nftables rules carry no counters: the rates come from conntrack, not from here.
    return { kind: 'chain', snapshot: { ...snapshot, probes: withProbe(snapshot.probes), nft: { ...snapshot.nft!, value: spliced.ruleset } }, rates: new Map(), runs };
  }
  const key = focus.ruleset === 'iptables' ? 'iptables' : 'ip6tables';
  const part = snapshot[key];
  const ruleset = part?.value;
  const old = ruleset?.tables.find((t) => t.name === focus.table)?.chains.find((c) => c.name === focus.chain);
  const spliced = ruleset ? spliceIptablesChain(ruleset, focus.table, focus.chain, run.result.stdout, run.id) : null;
  if (!spliced || !old || spliced.changed) return { kind: 'full', reason: spliced ? 'the open chain changed' : 'chain not found', fingerprint, runs };
  const rates = oneChainRates(focus.table, old, spliced.chain, input.elapsedSeconds);
  return { kind: 'chain', snapshot: { ...snapshot, probes: withProbe(snapshot.probes), [key]: { ...part!, value: spliced.ruleset } }, rates, runs };
}

/**
 * Whether the open nftables chain holds rules and none of them counts (kube-proxy's table
 * keeps no counters). Re-reading such a chain shows nothing new but a rewrite, and nft
 * 1.0.x's `list chain` fetches every set of the table with its elements first (src/cache.c:
 * a chain listing asks for the full cache; `--terse` only hides the elements), so it costs
 * as much as reading the whole table. False when the chain is not in the shown ruleset.
 */
export function nftChainWithoutCounters(snapshot: NodeSnapshot, focus: ChainFocus): boolean {
  const [family, name] = focus.table.split(' ');
  const chain = snapshot.nft?.value?.tables.find((t) => t.family === family && t.name === name)?.chains.find((c) => c.name === focus.chain);
  return !!chain && chain.rules.length > 0 && chain.rules.every((r) => !r.counters);
}

/**
 * The refresh of a chain without counters: the cheap check alone. The chain stays as the
 * last full read gave it (the header says when); a rewrite of it or of its maps shows at the
 * session's periodic full read, a table that came or went at once.
 */
async function checkOnly(input: FocusedInput): Promise<FocusedResult> {
  const runs = await runProbes(input.transport, { ids: [...CHECK_PROBES], params: input.params });
  const fingerprint = rulesetCheckFingerprint(CHECK_PROBES.map((id) => runs.find((r) => r.id === id)));
  if (fingerprint === null || fingerprint !== input.fingerprint) return { kind: 'full', reason: 'tables or chains changed', fingerprint, runs };
  return { kind: 'chain', snapshot: input.snapshot, rates: new Map(), runs, checkOnly: true };
}
