/**
 * Rows for the Rules pane from a parsed nftables ruleset: base chains in the order
 * the kernel runs them (hook, then priority), then regular chains, then sets and
 * maps; one chain's rules with `numgen`/vmap branches expanded so each endpoint
 * can be followed; one set's or map's elements with their verdicts. Pure.
 */
import type { NftChain, NftElement, NftExpr, NftHookedChain, NftRule, NftRuleset, NftSet, NftStatement, NftTable } from '../model/nftables.js';
import { chainsByHook, findChain } from '../model/nftables.js';
import { formatExpr, formatStatement } from '../parsers/nft-format-expr.js';
import { endpointKey } from './conntrack-nat.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import { segmentLookup, sumCounters, type RowIndex, type RuleRow } from './rules-view.js';

/** One line of the nft part of the chain list. `table` is `family name`, e.g. `ip kube-proxy`. */
export interface NftListRow {
  readonly kind: 'chain' | 'set' | 'map';
  readonly table: string;
  readonly name: string;
  /** `nat prerouting dstnat` for base chains; the key type for sets and maps. */
  readonly detail: string;
  readonly policy: string | null;
  /** Rules of a chain, elements of a set or map. */
  readonly count: number;
  /**
   * Sums of the rules' `counter` statements; null when no rule of the chain has one (kube-proxy's
   * nftables chains keep counters only where it adds them) and for sets and maps.
   */
  readonly packets: bigint | null;
  readonly bytes: bigint | null;
}

/** `family name` of a table, as nft prints it after `table`. */
export function tableLabel(t: NftTable): string {
  return `${t.family} ${t.name}`;
}

/** The table named `family name`. */
export function findTableByLabel(ruleset: NftRuleset, label: string): NftTable | undefined {
  return ruleset.tables.find((t) => tableLabel(t) === label);
}

function totals(chain: NftChain): { packets: bigint | null; bytes: bigint | null } {
  if (!chain.rules.some((r) => r.counters)) return { packets: null, bytes: null };
  return sumCounters(chain.rules.map((r) => r.counters));
}

/**
 * The chain list of `ruleset`, leaving out tables in `skipTables` (`family name`),
 * used to hide the iptables-nft tables that the iptables-save view already shows.
 */
export function nftChainList(ruleset: NftRuleset, skipTables: ReadonlySet<string> = new Set()): NftListRow[] {
  const index = nftChainListIndex(ruleset, skipTables);
  return Array.from({ length: index.length }, (_, i) => index.row(i));
}

/** A run of the chain list: base chains in hook order, a table's regular chains, or its sets. */
type ListSegment =
  | { readonly kind: 'hooked'; readonly start: number; readonly length: number; readonly items: readonly NftHookedChain[] }
  | { readonly kind: 'chains'; readonly start: number; readonly length: number; readonly table: NftTable; readonly label: string; readonly positions: Uint32Array }
  | { readonly kind: 'sets'; readonly start: number; readonly length: number; readonly table: NftTable; readonly label: string };

/**
 * {@link nftChainList} as a {@link RowIndex}: rows are built when asked (272,000 chains on a
 * large kube-proxy node); the filter text is `family table name`. Holds the positions of the
 * regular chains (4 bytes each), not rows.
 */
export function nftChainListIndex(ruleset: NftRuleset, skipTables: ReadonlySet<string> = new Set()): RowIndex<NftListRow> {
  const segments: ListSegment[] = [];
  let length = 0;
  const push = (seg: ListSegment) => {
    if (seg.length === 0) return;
    segments.push(seg);
    length += seg.length;
  };
  const based = chainsByHook(ruleset).filter((h) => !skipTables.has(tableLabel(h.table)));
  push({ kind: 'hooked', start: length, length: based.length, items: based });
  for (const table of ruleset.tables) {
    const label = tableLabel(table);
    if (skipTables.has(label)) continue;
    const positions = new Uint32Array(table.chains.reduce((n, c) => (c.base ? n : n + 1), 0));
    let k = 0;
    table.chains.forEach((c, i) => {
      if (!c.base) positions[k++] = i;
    });
    push({ kind: 'chains', start: length, length: positions.length, table, label, positions });
    push({ kind: 'sets', start: length, length: table.sets.length, table, label });
  }
  const segmentOf = segmentLookup(segments, (s) => s.length);
  return {
    length,
    row(i) {
      const seg = segmentOf(i);
      const k = i - seg.start;
      if (seg.kind === 'hooked') {
        const { table, chain, base } = seg.items[k]!;
        return { kind: 'chain', table: tableLabel(table), name: chain.name, detail: `${base.type} ${base.hook} ${base.priorityText}`, policy: base.policy, count: chain.rules.length, ...totals(chain) };
      }
      if (seg.kind === 'chains') {
        const chain = seg.table.chains[seg.positions[k]!]!;
        return { kind: 'chain', table: seg.label, name: chain.name, detail: '', policy: null, count: chain.rules.length, ...totals(chain) };
      }
      const set = seg.table.sets[k]!;
      return { kind: set.kind, table: seg.label, name: set.name, detail: set.mapType ? `${set.type} : ${set.mapType}` : set.type, policy: null, count: set.elements.length, packets: null, bytes: null };
    },
    text(i) {
      const seg = segmentOf(i);
      const k = i - seg.start;
      if (seg.kind === 'hooked') return `${tableLabel(seg.items[k]!.table)} ${seg.items[k]!.chain.name}`;
      if (seg.kind === 'chains') return `${seg.label} ${seg.table.chains[seg.positions[k]!]!.name}`;
      return `${seg.label} ${seg.table.sets[k]!.name}`;
    },
    held(i) {
      const seg = segmentOf(i);
      const k = i - seg.start;
      if (seg.kind === 'sets') return seg.table.sets[k]!.elements.map(elementFilterText);
      const [table, chain] = seg.kind === 'hooked' ? [seg.items[k]!.table, seg.items[k]!.chain] : [seg.table, seg.table.chains[seg.positions[k]!]!];
      return chain.rules.flatMap((rule, r) => ruleRows(table, rule, r + 1).map(rowFilterText));
    },
    parts: {
      prefix(i) {
        const seg = segmentOf(i);
        return seg.kind === 'hooked' ? tableLabel(seg.items[i - seg.start]!.table) : seg.label;
      },
      name(i) {
        const seg = segmentOf(i);
        const k = i - seg.start;
        return seg.kind === 'hooked' ? seg.items[k]!.chain.name : seg.kind === 'chains' ? seg.table.chains[seg.positions[k]!]!.name : seg.table.sets[k]!.name;
      },
    },
  };
}

/** `goto X` / `jump X` target chain of a verdict expression, if it is one. */
function verdictTarget(e: NftExpr | undefined): { verdict: string; target: string | null } | null {
  if (!e || e.kind !== 'verdict') return null;
  return { verdict: e.verdict, target: e.target ?? null };
}

/** Branches of a vmap: for each element, its key text and verdict. */
function vmapBranches(elements: readonly NftElement[]): { key: string; verdict: string; target: string | null; comment: string }[] {
  return elements.map((el) => {
    const v = verdictTarget(el.value);
    return { key: formatExpr(el.key), verdict: v ? `${v.verdict}${v.target ? ' ' + v.target : ''}` : el.value ? formatExpr(el.value) : '', target: v?.target ?? null, comment: el.comment ?? '' };
  });
}

function isTerminal(s: NftStatement): boolean {
  return s.kind === 'verdict' || s.kind === 'vmap' || s.kind === 'nat' || s.kind === 'reject';
}

/**
 * Counts to show for endpoint chains when rules carry no counters (kube-proxy's), by chain
 * name: a Map, or {@link nftEndpointCountLookup} answering per chain when asked.
 */
export type DerivedCounts = Pick<ReadonlyMap<string, number>, 'get'>;

/**
 * The rows of one chain (null when absent). A `numgen random mod N vmap {…}` rule
 * gives one row per branch, each with probability 1/N and the chain it leads to;
 * a vmap over a named map (`vmap @service-ips`) leads to that map (`jumpSet`).
 * `derived` gives conntrack-derived entry counts for branch targets.
 */
export function nftChainRows(ruleset: NftRuleset, tableLabelText: string, chainName: string, derived?: DerivedCounts): RuleRow[] | null {
  const table = findTableByLabel(ruleset, tableLabelText);
  const chain = table ? findChain(table, chainName) : undefined;
  if (!table || !chain) return null;
  const rows: RuleRow[] = [];
  chain.rules.forEach((rule, i) => rows.push(...ruleRows(table, rule, i + 1, derived)));
  return rows;
}

function ruleRows(table: NftTable, rule: NftRule, index: number, derived?: DerivedCounts): RuleRow[] {
  const matches = rule.statements.filter((s) => !isTerminal(s) && s.kind !== 'counter').map(formatStatement).join(' ');
  const terminal = rule.statements.filter(isTerminal);
  const base: RuleRow = {
    index,
    packets: rule.counters?.packets ?? null,
    bytes: rule.counters?.bytes ?? null,
    rate: null,
    label: rule.comment ?? '',
    matches,
    target: terminal.map(formatStatement).join(' '),
    jumpTo: null,
    probability: null,
    line: 0,
    raw: rule.raw,
  };
  const last = terminal[terminal.length - 1];
  if (last?.kind === 'verdict' && (last.verdict === 'jump' || last.verdict === 'goto') && last.target && findChain(table, last.target)) {
    return [{ ...base, jumpTo: last.target }];
  }
  if (last?.kind === 'vmap') {
    if (last.data.kind === 'setref') return [{ ...base, jumpSet: last.data.name }];
    if (last.data.kind === 'set') {
      const numgen = last.key.kind === 'numgen' ? last.key : null;
      const branches = vmapBranches(last.data.elements);
      const head: RuleRow = { ...base, target: numgen ? `numgen ${numgen.mode} mod ${numgen.mod} vmap {${branches.length} branches}` : `vmap {${branches.length} branches}` };
      return [
        head,
        ...branches.map((b) => {
          const count = b.target ? derived?.get(b.target) : undefined;
          return {
            ...base,
            packets: null,
            bytes: null,
            derivedCount: count ?? null,
            // The branch's key and the chain it leads to name the endpoint (`…__10.244.0.23/8080`).
            label: `└ ${b.key}${b.comment ? ` ${b.comment}` : ''}`,
            matches: b.target ?? '',
            target: b.target ? b.verdict.split(' ')[0]! : b.verdict,
            jumpTo: b.target && findChain(table, b.target) ? b.target : null,
            probability: numgen && numgen.mode === 'random' ? 1 / numgen.mod : null,
            branch: true,
          } satisfies RuleRow;
        }),
      ];
    }
  }
  return [base];
}

/** One element of a set or map, as a row: key, value (verdict), comment, and the chain it leads to. */
export function nftSetRows(ruleset: NftRuleset, tableLabelText: string, setName: string): RuleRow[] | null {
  const index = nftSetRowIndex(ruleset, tableLabelText, setName);
  return index ? Array.from({ length: index.length }, (_, i) => index.row(i)) : null;
}

/**
 * {@link nftSetRows} as a {@link RowIndex} (null when the set is absent): each element's
 * row is built when asked (kube-proxy's service-ips map has one element per Service port);
 * the filter text is `comment key verdict`.
 */
export function nftSetRowIndex(ruleset: NftRuleset, tableLabelText: string, setName: string): (RowIndex<RuleRow> & { readonly set: NftSet }) | null {
  const table = findTableByLabel(ruleset, tableLabelText);
  const set: NftSet | undefined = table?.sets.find((s) => s.name === setName);
  if (!table || !set) return null;
  return {
    set,
    length: set.elements.length,
    row: (i) => setRow(table, set.elements[i]!, i),
    text: (i) => elementFilterText(set.elements[i]!),
  };
}

/** What `/` inside a set matches for one element: comment, key and value as the row shows them. */
function elementFilterText(el: NftElement): string {
  return `${el.comment ?? ''} ${formatExpr(el.key)} ${elementValue(el)}`;
}

/** What `/` inside an nft chain matches for one row (src/ui/views.ts filters the rows by it): label, matches, target. */
export function rowFilterText(r: { readonly label: string; readonly matches: string; readonly target: string }): string {
  return `${r.label} ${r.matches} ${r.target}`;
}

/** The value of an element as the pane shows it: `goto X`, or the expression. */
function elementValue(el: NftElement): string {
  const v = verdictTarget(el.value);
  return v ? `${v.verdict}${v.target ? ' ' + v.target : ''}` : el.value ? formatExpr(el.value) : '';
}

function setRow(table: NftTable, el: NftElement, i: number): RuleRow {
  const v = verdictTarget(el.value);
  return {
    index: i + 1,
    packets: el.counters?.packets ?? null,
    bytes: el.counters?.bytes ?? null,
    rate: null,
    label: el.comment ?? '',
    matches: formatExpr(el.key),
    target: elementValue(el),
    jumpTo: v?.target && findChain(table, v.target) ? v.target : null,
    probability: null,
    line: 0,
    raw: `${formatExpr(el.key)}${el.comment ? ` comment "${el.comment}"` : ''}${el.value ? ` : ${v ? `${v.verdict}${v.target ? ' ' + v.target : ''}` : formatExpr(el.value)}` : ''}`,
  };
}

/**
 * Conntrack-derived counts for kube-proxy's nftables endpoint chains, whose rules
 * carry no counters: for each `endpoint-…` chain with a `dnat to IP:PORT`, the
 * number of conntrack entries whose reply source is that IP:PORT over the protocol
 * named in the chain (`…/tcp/…`). `replyCounts` comes from `countByReplySource`.
 */
export function nftEndpointCounts(table: NftTable, replyCounts: ReadonlyMap<string, number>): Map<string, number> {
  const out = new Map<string, number>();
  for (const chain of table.chains) {
    const count = endpointChainCount(chain, replyCounts);
    if (count !== undefined) out.set(chain.name, count);
  }
  return out;
}

/**
 * {@link nftEndpointCounts} answered per chain when asked: a chain view looks up only the
 * endpoints its branches lead to, not the table's 250,000 endpoint chains.
 */
export function nftEndpointCountLookup(table: NftTable, replyCounts: ReadonlyMap<string, number>): DerivedCounts {
  return {
    get(name) {
      const chain = findChain(table, name);
      return chain ? endpointChainCount(chain, replyCounts) : undefined;
    },
  };
}

/** The count {@link nftEndpointCounts} gives `chain` (the last `dnat to` wins), or undefined. */
function endpointChainCount(chain: NftChain, replyCounts: ReadonlyMap<string, number>): number | undefined {
  if (!chain.name.startsWith('endpoint-')) return undefined;
  const proto = /\/(tcp|udp|sctp)\//.exec(chain.name)?.[1]?.toUpperCase() as 'TCP' | 'UDP' | 'SCTP' | undefined;
  if (!proto) return undefined;
  let count: number | undefined;
  for (const rule of chain.rules) {
    for (const s of rule.statements) {
      if (s.kind !== 'nat' || s.type !== 'dnat' || !s.addr || !s.port) continue;
      const port = Number(formatExpr(s.port));
      if (!Number.isInteger(port)) continue;
      count = replyCounts.get(endpointKey({ protocol: proto, ip: formatExpr(s.addr), port })) ?? 0;
    }
  }
  return count;
}

/**
 * nftables tables that iptables-nft manages (`ip nat`, `ip6 filter`, …): the
 * iptables-save view already shows them with their iptables syntax.
 */
export function iptablesNftTables(snapshot: NodeSnapshot): Set<string> {
  const out = new Set<string>();
  for (const [family, parsed] of [['ip', snapshot.iptables], ['ip6', snapshot.ip6tables]] as const) {
    const rs = parsed?.value;
    if (rs?.generator?.backend === 'nf_tables' || (rs && rs.tables.length > 0)) for (const table of rs.tables) out.add(`${family} ${table.name}`);
  }
  return out;
}
