/**
 * Rows for the Rules pane from parsed iptables-save rulesets: the list of all
 * chains, and one chain's rules with counters, rates, the kube-proxy comment as
 * label, and each KUBE-SVC branch's effective probability. Pure.
 */
import {
  findChain,
  statisticProbability,
  type IptablesChain,
  type IptablesCounters,
  type IptablesRule,
  type IptablesRuleset,
} from '../model/iptables.js';
import type { NodeSnapshot } from '../model/snapshot.js';

/** Which iptables-save ruleset of the snapshot. */
export type IptablesRulesetId = 'iptables' | 'ip6tables' | 'iptables-legacy';

/** The rulesets of a snapshot that hold at least one table, with their ids. */
export function iptablesRulesets(snapshot: NodeSnapshot): { id: IptablesRulesetId; ruleset: IptablesRuleset }[] {
  const out: { id: IptablesRulesetId; ruleset: IptablesRuleset }[] = [];
  const parts: [IptablesRulesetId, NodeSnapshot['iptables']][] = [
    ['iptables', snapshot.iptables],
    ['ip6tables', snapshot.ip6tables],
    ['iptables-legacy', snapshot.iptablesLegacy],
  ];
  for (const [id, parsed] of parts) if (parsed?.value && parsed.value.tables.length > 0) out.push({ id, ruleset: parsed.value });
  return out;
}

/** One line of the chain list. `packets`/`bytes`: sum of the chain's rule counters. */
export interface ChainListRow {
  readonly ruleset: IptablesRulesetId;
  readonly table: string;
  readonly chain: string;
  readonly policy: string | null;
  readonly ruleCount: number;
  readonly packets: bigint;
  readonly bytes: bigint;
}

/** Sums packet and byte counters, skipping absent ones (rules without `counter`). */
export function sumCounters(counters: Iterable<{ readonly packets: bigint; readonly bytes: bigint } | null | undefined>): IptablesCounters {
  let packets = 0n;
  let bytes = 0n;
  for (const c of counters) {
    if (c) {
      packets += c.packets;
      bytes += c.bytes;
    }
  }
  return { packets, bytes };
}

/** Sums the counters of a chain's rules (0 when the capture had no counters). */
export function chainTotals(chain: IptablesChain): IptablesCounters {
  return sumCounters(chain.rules.map((r) => r.counters));
}

// The views are pure functions of immutable models: each is computed once per model (the UI
// asks again on every keypress) and handed out as a fresh array of the same row objects.
const chainListCache = new WeakMap<NodeSnapshot, readonly ChainListRow[]>();

/** Every chain of every ruleset, in the order the dump lists them. */
export function chainList(snapshot: NodeSnapshot): ChainListRow[] {
  const cached = chainListCache.get(snapshot);
  if (cached) return [...cached];
  const rows = computeChainList(snapshot);
  chainListCache.set(snapshot, rows);
  return [...rows];
}

function computeChainList(snapshot: NodeSnapshot): ChainListRow[] {
  const rows: ChainListRow[] = [];
  for (const { id, ruleset } of iptablesRulesets(snapshot)) {
    for (const table of ruleset.tables) {
      for (const chain of table.chains) {
        const totals = chainTotals(chain);
        rows.push({ ruleset: id, table: table.name, chain: chain.name, policy: chain.policy, ruleCount: chain.rules.length, ...totals });
      }
    }
  }
  return rows;
}

/** One rule line of a chain view. `probability`: chance this rule's branch is taken (0..1). */
export interface RuleRow {
  readonly index: number;
  readonly packets: bigint | null;
  readonly bytes: bigint | null;
  /** Packets per second since the previous snapshot; null without one. */
  readonly rate: number | null;
  readonly label: string;
  readonly matches: string;
  readonly target: string;
  /** The chain a jump/goto leads to, when it exists in the same table. */
  readonly jumpTo: string | null;
  readonly probability: number | null;
  readonly line: number;
  readonly raw: string;
  /** nftables: the named map a `vmap @map` lookup leads to. */
  readonly jumpSet?: string;
  /** A branch of a vmap (one endpoint of `numgen … vmap {…}`), shown under its rule. */
  readonly branch?: boolean;
  /** Conntrack entries whose reply source is this branch's endpoint (rules without counters). */
  readonly derivedCount?: number | null;
}

/**
 * The matches of a rule as short iptables words, without the comment and the
 * statistic match (shown in their own columns): `-d 10.96.0.10/32 -p udp --dport 53`.
 */
export function describeMatches(rule: IptablesRule): string {
  const parts: string[] = [];
  const neg = (n: boolean) => (n ? '! ' : '');
  if (rule.source) parts.push(`${neg(rule.source.negated)}-s ${rule.source.value}`);
  if (rule.destination) parts.push(`${neg(rule.destination.negated)}-d ${rule.destination.value}`);
  if (rule.inInterface) parts.push(`${neg(rule.inInterface.negated)}-i ${rule.inInterface.value}`);
  if (rule.outInterface) parts.push(`${neg(rule.outInterface.negated)}-o ${rule.outInterface.value}`);
  if (rule.protocol) parts.push(`${neg(rule.protocol.negated)}-p ${rule.protocol.value}`);
  for (const m of rule.matches) {
    if (m.module === 'comment' || m.module === 'statistic') continue;
    // `-m tcp` alone adds nothing a reader needs once `-p tcp` is shown.
    const opts = m.options.map((o) => `${neg(o.negated)}--${o.name}${o.values.length ? ' ' + o.values.join(' ') : ''}`);
    if (opts.length === 0 && (m.module === 'tcp' || m.module === 'udp' || m.module === 'sctp')) continue;
    parts.push(opts.length ? (['tcp', 'udp', 'sctp'].includes(m.module) ? opts.join(' ') : `-m ${m.module} ${opts.join(' ')}`) : `-m ${m.module}`);
  }
  return parts.join(' ');
}

/** The target as written: `DNAT --to-destination 10.244.0.23:8080`, `KUBE-SVC-…`, `(goto) X`. */
export function describeTarget(rule: IptablesRule): string {
  const t = rule.target;
  if (!t) return '';
  const opts = t.options.map((o) => `${o.negated ? '! ' : ''}--${o.name}${o.values.length ? ' ' + o.values.join(' ') : ''}`).join(' ');
  return `${t.kind === 'goto' ? '(goto) ' : ''}${t.name}${opts ? ' ' + opts : ''}`;
}

/**
 * Effective branch probabilities of a chain: rule i with statistic probability p_i
 * is taken with p_i × Π(1 − p_j) for earlier statistic rules j; the first rule
 * without a statistic match after them takes what remains. Rules outside such a
 * run get null. This is how kube-proxy's 1/N, 1/(N−1), … sequence spreads load evenly.
 */
export function branchProbabilities(rules: readonly IptablesRule[]): (number | null)[] {
  const out: (number | null)[] = rules.map(() => null);
  let remaining = 1;
  let inRun = false;
  for (let i = 0; i < rules.length; i++) {
    const rule = rules[i]!;
    const p = statisticProbability(rule);
    const branches = rule.target !== null && rule.target.kind !== 'builtin' && rule.target.kind !== 'extension';
    if (p !== null && branches) {
      out[i] = remaining * p;
      remaining *= 1 - p;
      inRun = true;
    } else if (inRun && branches) {
      out[i] = remaining;
      remaining = 0;
      inRun = false;
    }
  }
  return out;
}

/** Per-rule packet rates keyed by `table/chain#index`, for {@link chainRows}. */
export type RuleRates = ReadonlyMap<string, number>;

/** The key of a rule in {@link RuleRates}. */
export function ruleKey(table: string, chain: string, index: number): string {
  return `${table}/${chain}#${index}`;
}

/**
 * The rows of one chain, or null when the chain does not exist in the ruleset.
 * `rates` (optional) supplies packets per second per rule.
 */
export function chainRows(ruleset: IptablesRuleset, table: string, chainName: string, rates?: RuleRates): RuleRow[] | null {
  const chain = findChain(ruleset, table as never, chainName);
  if (!chain) return null;
  // A chain belongs to one ruleset and table, so (chain, rates) determines the rows; only the
  // latest rates are kept per chain.
  const cached = chainRowsCache.get(chain);
  if (cached && cached.rates === rates) return [...cached.rows];
  const rows = computeChainRows(ruleset, table, chainName, chain, rates);
  chainRowsCache.set(chain, { rates, rows });
  return [...rows];
}

const chainRowsCache = new WeakMap<IptablesChain, { readonly rates: RuleRates | undefined; readonly rows: readonly RuleRow[] }>();

function computeChainRows(ruleset: IptablesRuleset, table: string, chainName: string, chain: IptablesChain, rates: RuleRates | undefined): RuleRow[] {
  const probs = branchProbabilities(chain.rules);
  return chain.rules.map((rule, i) => {
    const targetName = rule.target?.name ?? '';
    const jumpTo = rule.target && (rule.target.kind === 'jump' || rule.target.kind === 'goto') && findChain(ruleset, table as never, targetName) ? targetName : null;
    return {
      index: rule.index,
      packets: rule.counters?.packets ?? null,
      bytes: rule.counters?.bytes ?? null,
      rate: rates?.get(ruleKey(table, chainName, rule.index)) ?? null,
      label: rule.comment ?? '',
      matches: describeMatches(rule),
      target: describeTarget(rule),
      jumpTo,
      probability: probs[i] ?? null,
      line: rule.line,
      raw: rule.raw,
    };
  });
}

/** Formats a probability for a pane: 0.333… → `33.3%`. */
export function formatProbability(p: number): string {
  return `${(p * 100).toFixed(p < 0.1 ? 2 : 1)}%`;
}
