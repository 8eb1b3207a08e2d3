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
  type IptablesTable,
} from '../model/iptables.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import { isPlainFilter, rowMatcher } from '../text/row-filter.js';

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
  const index = chainListIndex(snapshot);
  return Array.from({ length: index.length }, (_, i) => index.row(i));
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
  const source = chainRowIndex(ruleset, table, chainName, rates)!;
  const rows = Array.from({ length: source.length }, (_, i) => source.row(i));
  chainRowsCache.set(chain, { rates, rows });
  return [...rows];
}

const chainRowsCache = new WeakMap<IptablesChain, { readonly rates: RuleRates | undefined; readonly rows: readonly RuleRow[] }>();

/**
 * Rows a pane reads by position: a plain array satisfies it, and so does a virtualised
 * list that builds row `i` only when asked. `at`/`slice` follow Array's semantics.
 */
export interface LazyRows<T> {
  readonly length: number;
  at(index: number): T | undefined;
  slice(start?: number, end?: number): T[];
}

/**
 * Rows known by position without being built: `row(i)` builds row i (0 ≤ i < length),
 * `text(i)` is the text a filter searches (any case; compared lowercased).
 */
export interface RowIndex<T> {
  readonly length: number;
  row(i: number): T;
  text(i: number): string;
  /**
   * When `text(i)` is `${prefix(i)} ${name(i)}` (`nat KUBE-SERVICES`): a filter then tests the
   * two parts without building the text, each distinct prefix once.
   */
  readonly parts?: { prefix(i: number): string; name(i: number): string };
  /**
   * For a list of chains and sets: the texts of what position i holds (one per rule or
   * element), each as that chain's own `/` tests it. Read by src/analysis/chain-search.ts.
   */
  readonly held?: (i: number) => readonly string[];
}

/** A {@link LazyRows} over `length` positions, building each with `rowAt` when asked (never kept). */
export function lazyRows<T>(length: number, rowAt: (i: number) => T): LazyRows<T> {
  return {
    length,
    at(index) {
      const n = Math.trunc(index) || 0;
      const i = n < 0 ? n + length : n;
      return i >= 0 && i < length ? rowAt(i) : undefined;
    },
    slice(start = 0, end = length) {
      const clamp = (x: number) => {
        const n = Math.trunc(x) || 0;
        return Math.min(length, Math.max(0, n < 0 ? n + length : n));
      };
      const out: T[] = [];
      for (let i = clamp(start), e = clamp(end); i < e; i++) out.push(rowAt(i));
      return out;
    },
  };
}

// The positions matching the last filter, per list (`key`): a cursor move re-asks with the
// same filter, and typing one more letter only narrows the previous matches.
const filterCache = new WeakMap<object, { readonly needle: string; readonly picked: Uint32Array }>();

// Lowercases to U+0069/U+006B from outside ASCII: the only way a text can contain an ASCII
// needle after toLowerCase() that a case-insensitive ASCII regular expression misses.
const LOWERS_TO_ASCII = /[\u0130\u212a]/;

/**
 * `text.toLowerCase().includes(needle)` for a lowercase `needle`, without building the
 * lowercased text when the needle is ASCII (a filter runs it over 272,000 chain names).
 */
function containsTest(needle: string): (text: string) => boolean {
  if (!/^[\x00-\x7f]*$/.test(needle)) return (text) => text.toLowerCase().includes(needle);
  const re = new RegExp(needle.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'), 'i');
  return (text) => re.test(text) || (LOWERS_TO_ASCII.test(text) && text.toLowerCase().includes(needle));
}

/**
 * For a needle found across `${prefix} ${name}`, not within either part: the tests the
 * name must pass, one per space of the needle whose head ends the (lowercased) prefix; the
 * name must then start with the rest.
 */
function straddling(prefix: string, needle: string): ((name: string) => boolean)[] {
  const out: ((name: string) => boolean)[] = [];
  const lower = prefix.toLowerCase();
  for (let j = needle.indexOf(' '); j >= 0; j = needle.indexOf(' ', j + 1)) {
    if (lower.endsWith(needle.slice(0, j))) out.push(startsTest(needle.slice(j + 1)));
  }
  return out;
}

/** `text.toLowerCase().startsWith(head)` for a lowercase `head`, as {@link containsTest} does it. */
function startsTest(head: string): (text: string) => boolean {
  if (!/^[\x00-\x7f]*$/.test(head)) return (text) => text.toLowerCase().startsWith(head);
  const re = new RegExp('^' + head.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'), 'i');
  return (text) => re.test(text) || (LOWERS_TO_ASCII.test(text) && text.toLowerCase().startsWith(head));
}

/** {@link filteredPositions} for a regex or `!` filter (src/text/row-filter.ts): every row's text tested, the result kept per filter. */
function matchedPositions<T>(index: RowIndex<T>, key: object, filter: string): Uint32Array {
  const cached = filterCache.get(key);
  if (cached && cached.needle === filter) return cached.picked;
  const { test } = rowMatcher(filter);
  const out = new Uint32Array(index.length);
  let count = 0;
  for (let i = 0; i < index.length; i++) if (test(index.text(i))) out[count++] = i;
  const picked = out.slice(0, count);
  filterCache.set(key, { needle: filter, picked });
  return picked;
}

/**
 * The rows of `index` whose {@link RowIndex.text} contains `filter` (case-insensitive),
 * virtualised; all rows when `filter` is empty. `key` identifies the list (same key, same
 * texts) so the matches are computed once per filter.
 */
export function filteredRows<T>(index: RowIndex<T>, key: object, filter: string): LazyRows<T> {
  if (!filter) return lazyRows(index.length, (i) => index.row(i));
  const picked = filteredPositions(index, key, filter);
  return lazyRows(picked.length, (k) => index.row(picked[k]!));
}

/**
 * The positions (ascending) of the rows {@link filteredRows} keeps for a non-empty `filter`;
 * the same cache, so a list filtered both ways computes each filter once.
 */
export function filteredPositions<T>(index: RowIndex<T>, key: object, filter: string): Uint32Array {
  if (!isPlainFilter(filter)) return matchedPositions(index, key, filter);
  const needle = filter.toLowerCase();
  const cached = filterCache.get(key);
  let picked: Uint32Array;
  if (cached && cached.needle === needle) picked = cached.picked;
  else {
    const from = cached && isPlainFilter(cached.needle) && needle.includes(cached.needle) ? cached.picked : null;
    const n = from ? from.length : index.length;
    const out = new Uint32Array(n);
    let count = 0;
    const test = containsTest(needle);
    const parts = index.parts;
    let prefix: string | undefined;
    let prefixHit = false;
    let tails: ((name: string) => boolean)[] = [];
    for (let k = 0; k < n; k++) {
      const i = from ? from[k]! : k;
      let hit: boolean;
      if (parts) {
        const p = parts.prefix(i);
        if (p !== prefix) {
          prefixHit = test((prefix = p));
          tails = prefixHit ? [] : straddling(p, needle);
        }
        if (prefixHit) hit = true;
        else {
          const name = parts.name(i);
          hit = test(name) || tails.some((t) => t(name));
        }
      } else hit = test(index.text(i));
      if (hit) out[count++] = i;
    }
    picked = out.slice(0, count);
    filterCache.set(key, { needle, picked });
  }
  return picked;
}

const probabilityCache = new WeakMap<IptablesChain, readonly (number | null)[]>();

/**
 * One chain's rules as a {@link RowIndex} (null when the chain does not exist): rows
 * (as {@link chainRows} gives them) and filter texts (`label matches target`) are built
 * per rule when asked; only the branch probabilities are computed for the whole chain.
 */
export function chainRowIndex(ruleset: IptablesRuleset, table: string, chainName: string, rates?: RuleRates): (RowIndex<RuleRow> & { readonly chain: IptablesChain }) | null {
  const t = ruleset.tables.find((x) => x.name === table);
  const chain = t ? chainNamed(t, chainName) : undefined;
  if (!t || !chain) return null;
  let probs = probabilityCache.get(chain);
  if (!probs) probabilityCache.set(chain, (probs = branchProbabilities(chain.rules)));
  const p = probs;
  const rules = chain.rules;
  return {
    chain,
    length: rules.length,
    row: (i) => ruleRow(t, chainName, rules[i]!, p[i] ?? null, rates),
    text: (i) => ruleFilterText(rules[i]!),
  };
}

/** What `/` inside a chain matches for one rule: comment, matches and target as the row shows them. */
export function ruleFilterText(rule: IptablesRule): string {
  return `${rule.comment ?? ''} ${describeMatches(rule)} ${describeTarget(rule)}`;
}

function ruleRow(t: IptablesTable, chainName: string, rule: IptablesRule, probability: number | null, rates: RuleRates | undefined): RuleRow {
  const table = t.name;
  const targetName = rule.target?.name ?? '';
  const jumpTo = rule.target && (rule.target.kind === 'jump' || rule.target.kind === 'goto') && chainNamed(t, targetName) ? targetName : null;
  return {
    index: rule.index,
    packets: rule.counters?.packets ?? null,
    bytes: rule.counters?.bytes ?? null,
    rate: rates?.get(ruleKey(table, chainName, rule.index)) ?? null,
    label: rule.comment ?? '',
    matches: describeMatches(rule),
    target: describeTarget(rule),
    jumpTo,
    probability,
    line: rule.line,
    raw: rule.raw,
  };
}

// Chain positions by name per table, as an open-addressed hash of (position + 1): 4 bytes a
// slot where a Map of 272,000 chain names costs ~14 MB. The last chain of a name wins, as in
// the model's findChain.
const chainSlotsCache = new WeakMap<IptablesTable, Int32Array>();

function hashName(name: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

function chainSlots(chains: readonly IptablesChain[]): Int32Array {
  let size = 16;
  while (size < chains.length * 2) size *= 2;
  const slots = new Int32Array(size);
  const mask = size - 1;
  chains.forEach((chain, pos) => {
    let s = hashName(chain.name) & mask;
    while (slots[s] !== 0 && chains[slots[s]! - 1]!.name !== chain.name) s = (s + 1) & mask;
    slots[s] = pos + 1;
  });
  return slots;
}

/** The chain `name` of `table` (the last of that name), or undefined. */
function chainNamed(table: IptablesTable, name: string): IptablesChain | undefined {
  const chains = table.chains;
  if (chains.length <= 8) {
    for (let i = chains.length - 1; i >= 0; i--) if (chains[i]!.name === name) return chains[i];
    return undefined;
  }
  let slots = chainSlotsCache.get(table);
  if (!slots) chainSlotsCache.set(table, (slots = chainSlots(chains)));
  const mask = slots.length - 1;
  for (let s = hashName(name) & mask; slots[s] !== 0; s = (s + 1) & mask) {
    const chain = chains[slots[s]! - 1]!;
    if (chain.name === name) return chain;
  }
  return undefined;
}

/** A table's chains, first at position `start` of the chain list. */
interface ChainSegment {
  readonly ruleset: IptablesRulesetId;
  readonly table: string;
  readonly chains: readonly IptablesChain[];
  readonly start: number;
}

const chainIndexCache = new WeakMap<NodeSnapshot, RowIndex<ChainListRow>>();

/**
 * {@link chainList} as a {@link RowIndex}: the model's chains by position, each row (with
 * its counter totals) built when asked; the filter text is `table chain`. Once per snapshot.
 */
export function chainListIndex(snapshot: NodeSnapshot): RowIndex<ChainListRow> {
  const cached = chainIndexCache.get(snapshot);
  if (cached) return cached;
  const segments: ChainSegment[] = [];
  let length = 0;
  for (const { id, ruleset } of iptablesRulesets(snapshot)) {
    for (const table of ruleset.tables) {
      if (table.chains.length === 0) continue;
      segments.push({ ruleset: id, table: table.name, chains: table.chains, start: length });
      length += table.chains.length;
    }
  }
  // The segment holding position i: a filter walks positions in order, so the last one
  // found usually holds the next; else a binary search over a handful of tables.
  const segmentOf = segmentLookup(segments, (s) => s.chains.length);
  const at = (i: number): [ChainSegment, IptablesChain] => {
    const seg = segmentOf(i);
    return [seg, seg.chains[i - seg.start]!];
  };
  const index: RowIndex<ChainListRow> = {
    length,
    row(i) {
      const [seg, chain] = at(i);
      return { ruleset: seg.ruleset, table: seg.table, chain: chain.name, policy: chain.policy, ruleCount: chain.rules.length, ...chainTotals(chain) };
    },
    text(i) {
      const [seg, chain] = at(i);
      return `${seg.table} ${chain.name}`;
    },
    held: (i) => at(i)[1].rules.map(ruleFilterText),
    parts: {
      prefix: (i) => segmentOf(i).table,
      name(i) {
        const seg = segmentOf(i);
        return seg.chains[i - seg.start]!.name;
      },
    },
  };
  chainIndexCache.set(snapshot, index);
  return index;
}

/**
 * Decimals for a column of probabilities (0..1; nulls ignored): 2 when any is under 10%,
 * else 1. Compared after rounding to 1e-8, so float noise (1/10 computed as 0.0999…) does
 * not change the format of equal branches.
 */
export function probabilityDigits(ps: Iterable<number | null>): 1 | 2 {
  for (const p of ps) if (p !== null && Math.round(p * 1e8) < 1e7) return 2;
  return 1;
}

/**
 * Formats a probability (0..1) as a percentage: 0.333… → `33.3%`, 0.05 → `5.00%`.
 * `digits` (default {@link probabilityDigits} of `p` alone): pass one value for a whole
 * column so every row has the same format.
 */
export function formatProbability(p: number, digits: 1 | 2 = probabilityDigits([p])): string {
  return `${(p * 100).toFixed(digits)}%`;
}

/**
 * The segment holding row `i` of a list made of segments one after the other (ascending
 * `start`, `size(s)` rows each): the last hit first (a frame reads neighbouring rows), else a
 * binary search. For lists that are several tables' rows in a row.
 */
export function segmentLookup<S extends { readonly start: number }>(segments: readonly S[], size: (s: S) => number): (i: number) => S {
  let last = segments[0];
  return (i) => {
    if (last && i >= last.start && i < last.start + size(last)) return last;
    let lo = 0;
    let hi = segments.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (segments[mid]!.start <= i) lo = mid;
      else hi = mid - 1;
    }
    return (last = segments[lo]!);
  };
}
