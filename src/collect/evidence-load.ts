/**
 * The cheap mode evidence of a load that parses no ruleset (`show services`): chain names and
 * rule counts scanned from iptables-save text (a replay's held text, or a legacy node's dump)
 * or read from `nft list chains` (iptables-nft, live), and the nftables table names (`nft list
 * tables` live; a replay captured before that probe: the table objects of its `nft -j` text,
 * found by a pattern, not parsed). See src/parsers/chain-summary.ts.
 */
import type { ChainSummary } from '../model/chain-summary.js';
import { summarizeIptablesSave, summarizeNftChains } from '../parsers/chain-summary.js';
import { runProbes, type ProbeRun } from '../sources/probe-runner.js';
import { ReplayTransport } from '../sources/replay.js';
import type { Transport } from '../sources/transport.js';
import { nftTableNames } from './probe-plan.js';
import { summarizeOffThread, type SummaryInput, type SummaryOffThreadOptions } from './summary-off-thread.js';

/** What {@link cheapEvidence} found: summaries by ruleset, and the nftables table names when known. */
export interface CheapEvidence {
  readonly chainSummaries: { iptables?: ChainSummary; iptablesLegacy?: ChainSummary };
  readonly nftTableNames: readonly string[] | null;
}

export { nftJsonTableNames } from '../parsers/chain-summary.js';

const ok = (r: ProbeRun | undefined): r is ProbeRun => r?.status === 'ok';

/**
 * Reads the evidence through `transport` given the first-stage runs (`nft-tables`,
 * `iptables-version`). A replay reads the iptables texts it holds (and its nft -j text when
 * it has no table listing); a live node is asked `nft list chains`, and its iptables-save
 * only when iptables runs on the legacy backend (no nftables chains to list then).
 */
export async function cheapEvidence(transport: Transport, firstRuns: readonly ProbeRun[], params: Readonly<Record<string, string | undefined>> = {}): Promise<CheapEvidence> {
  return (await startCheapEvidence(transport, firstRuns, params, { worker: false }))();
}

/**
 * {@link cheapEvidence} in two steps: a replay's iptables-save scans and its `nft -j` table
 * names' search are started (on a worker that reads the files when they are big:
 * src/collect/summary-off-thread.ts), and the returned function gives the evidence (made
 * in-thread when the worker failed). A live node's evidence is read when the function is called, as before.
 * `offThread`: {@link summarizeOffThread}'s options (default: a worker for big texts).
 */
export async function startCheapEvidence(transport: Transport, firstRuns: readonly ProbeRun[], params: Readonly<Record<string, string | undefined>> = {}, offThread: SummaryOffThreadOptions = {}): Promise<() => Promise<CheapEvidence>> {
  const first = new Map(firstRuns.map((r) => [r.id, r]));
  let tables: readonly string[] | null = nftTableNames(first.get('nft-tables'));
  if (transport instanceof ReplayTransport) {
    // The dumps' files, not their texts: the worker reads them (a text read here would be copied to it).
    const runs = new Map((await runProbes(transport, { params, ids: ['iptables-save', 'iptables-legacy-save', ...(tables === null ? ['nft-json'] : [])], stdoutAsPieces: ['iptables-save', 'iptables-legacy-save', 'nft-json'] })).map((r) => [r.id, r]));
    const v4 = runs.get('iptables-save');
    const legacy = runs.get('iptables-legacy-save');
    const json = runs.get('nft-json');
    const input = (r: ProbeRun): SummaryInput => (r.result.stdoutPath !== undefined ? { file: r.result.stdoutPath } : { text: r.result.stdout });
    const scans = summarizeOffThread([...(ok(v4) ? [input(v4)] : []), ...(ok(legacy) ? [input(legacy)] : [])], offThread, tables === null && ok(json) ? input(json) : undefined);
    return async () => {
      const answer = await scans();
      const summaries = answer.summaries;
      if (answer.tables !== null) tables = answer.tables;
      const found: CheapEvidence['chainSummaries'] = {};
      let i = 0;
      if (ok(v4)) found.iptables = summaries[i++]!;
      if (ok(legacy)) found.iptablesLegacy = summaries[i++]!;
      return { chainSummaries: found, nftTableNames: tables };
    };
  }
  return async () => {
    const summaries: CheapEvidence['chainSummaries'] = {};
    const legacyBackend = /legacy/.test(first.get('iptables-version')?.result.stdout ?? '');
    const runs = new Map((await runProbes(transport, { params, ids: ['nft-chains', 'iptables-legacy-save', ...(legacyBackend ? ['iptables-save'] : [])] })).map((r) => [r.id, r]));
    const chains = runs.get('nft-chains');
    const v4 = runs.get('iptables-save');
    if (legacyBackend && ok(v4)) summaries.iptables = summarizeIptablesSave(v4.result.stdout).value;
    else if (ok(chains)) summaries.iptables = summarizeNftChains(chains.result.stdout, 'ip').value;
    const legacy = runs.get('iptables-legacy-save');
    if (ok(legacy)) summaries.iptablesLegacy = summarizeIptablesSave(legacy.result.stdout).value;
    return { chainSummaries: summaries, nftTableNames: tables };
  };
}
