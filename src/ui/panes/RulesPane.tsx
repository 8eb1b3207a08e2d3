/**
 * The Rules pane: either every table and chain with rule counts and totals, or one
 * chain's rules with packets, bytes, rate, the kube-proxy comment as label, the
 * branch probability, and the target. The selected rule is shown in full below.
 */
import { Box } from 'ink';
import { Text } from '../components/SafeText.js';
import React from 'react';
import type { NftListRow } from '../../analysis/nft-view.js';
import { formatProbability, probabilityDigits, type LazyRows, type RuleRow } from '../../analysis/rules-view.js';
import type { Diagnostic } from '../../model/diagnostics.js';
import { Diagnostics, diagnosticsHeight } from '../components/Diagnostics.js';
import { Table, windowStart, type TableRow } from '../components/Table.js';
import { t, tf, type Lang } from '../../text/i18n.js';
import { fitCell, humanBytes, humanCount, humanRate, type ColumnSpec, wrapLines } from '../../text/cells.js';
import { theme } from '../theme.js';

/**
 * One line of the chain list, for iptables-save and nftables alike: a chain, set or
 * map, its table (`nat`, or `ip kube-proxy`), hook/priority or key type, policy,
 * rule or element count, and counter totals (packets, bytes).
 */
export interface RulesListRow extends NftListRow {
  /** `iptables`, `ip6tables`, `iptables-legacy` or `nft`. */
  readonly ruleset: string;
}

/**
 * What the Rules pane shows. `rows` may be virtualised ({@link LazyRows}): the pane asks
 * only for the rows in view, so a frame costs the same for 10 rows as for 272,000.
 * `unreadChains` (only when > 0): `diagnostics` is what is known so far, the rules of that many
 * iptables chains not being parsed yet (src/ui/views.ts `rulesView`).
 */
export type RulesPaneData = (
  | { readonly kind: 'chains'; readonly rows: LazyRows<RulesListRow>; readonly diagnostics: readonly Diagnostic[] }
  | {
      readonly kind: 'chain';
      readonly ruleset: string;
      readonly table: string;
      readonly chain: string;
      readonly policy: string | null;
      readonly rows: LazyRows<RuleRow>;
      readonly diagnostics: readonly Diagnostic[];
      readonly backTo: string | null;
      /** Set when the branch counts come from conntrack (rules without counters). */
      readonly derivedNote: boolean;
    }
  | { readonly kind: 'message'; readonly text: string; readonly diagnostics: readonly Diagnostic[] }
) & { readonly unreadChains?: number };

/** Props of {@link RulesPane}. `height`: lines available, header included. */
export interface RulesPaneProps {
  readonly data: RulesPaneData;
  readonly cursor: number;
  readonly width: number;
  readonly height: number;
  readonly focused: boolean;
  readonly lang: Lang;
}

/** The widest a base chain's hook cell may ask for: `filter postrouting srcnat - 10`. */
const HOOK_CELL_MAX = 30;

/**
 * `hookWidth`: the longest base chain's `type hook priority` in view (at most {@link HOOK_CELL_MAX}),
 * so nft's priority (`dstnat - 10`, `-110`) is never cut into `dstnat - …`.
 */
function chainColumns(lang: Lang, width: number, hookWidth: number): ColumnSpec[] {
  return [
    { key: 'table', title: t(lang, 'col.table'), width: 14 },
    { key: 'chain', title: t(lang, 'col.chain'), flex: 3, elide: 'middle' },
    ...(width >= 100 ? [{ key: 'detail', title: t(lang, 'col.hookType'), flex: 2, ...(hookWidth > 0 ? { minWidth: Math.min(HOOK_CELL_MAX, hookWidth) } : {}) } satisfies ColumnSpec] : []),
    { key: 'policy', title: t(lang, 'col.policy'), width: 7 },
    { key: 'rules', title: t(lang, 'col.rules'), width: 6, align: 'right' },
    { key: 'pkts', title: t(lang, 'col.pkts'), width: 8, align: 'right' },
    { key: 'bytes', title: t(lang, 'col.bytes'), width: 8, align: 'right' },
  ];
}

/** Widths the data decides: `num` fits the chain's largest rule number, `prob` its longest shown text. */
interface RuleColumnWidths {
  readonly num: number;
  readonly prob: number;
}

function ruleColumns(lang: Lang, width: number, sized: RuleColumnWidths = { num: 3, prob: 6 }): ColumnSpec[] {
  const cols: ColumnSpec[] = [
    { key: 'num', title: t(lang, 'col.num'), width: Math.max(3, sized.num), align: 'right' },
    { key: 'pkts', title: t(lang, 'col.pkts'), width: 7, align: 'right' },
    { key: 'rate', title: t(lang, 'col.rate'), width: 7, align: 'right' },
    { key: 'prob', title: t(lang, 'col.prob'), width: Math.max(6, sized.prob), align: 'right' },
    { key: 'rule', title: t(lang, 'col.rule'), flex: 3, elide: 'middle' },
  ];
  if (width >= 100) cols.push({ key: 'bytes', title: t(lang, 'col.bytes'), width: 8, align: 'right' });
  // KUBE-SEP-… names and `DNAT 10.244.0.23:8080` must fit whole: they are what the reader follows.
  cols.push(width >= 100 ? { key: 'target', title: t(lang, 'col.target'), flex: 2, minWidth: 28 } : { key: 'target', title: t(lang, 'col.target'), width: 27 });
  return cols;
}

/** The target as a narrow column needs it: the NAT address is the point, its option name is not. */
export function compactTarget(target: string): string {
  return target.replace(/^(DNAT|SNAT) --to-(destination|source) /, '$1 ').replace(/^MARK --set-xmark /, 'MARK ');
}

function ruleCells(r: RuleRow, width: number, digits: 1 | 2): string[] {
  // The kube-proxy comment names the Service; without one the matches say what the rule does.
  // Branch rows always show where they lead; other rows show the comment, then matches when wide.
  const rule = r.branch ? `${r.label} ${r.matches}` : r.label ? (width >= 100 && r.matches ? `${r.label}  ${r.matches}` : r.label) : r.matches;
  const pkts = r.derivedCount !== undefined && r.derivedCount !== null ? `ct ${r.derivedCount}` : r.packets === null ? (r.branch ? '' : '-') : humanCount(r.packets);
  const cells = [r.branch ? '' : String(r.index), pkts, r.rate === null ? '' : humanRate(r.rate), r.probability === null ? '' : formatProbability(r.probability, digits), rule];
  if (width >= 100) cells.push(r.bytes === null ? '-' : humanBytes(r.bytes));
  cells.push((r.jumpTo || r.jumpSet ? '→ ' : '') + compactTarget(r.target));
  return cells;
}

/** Renders the pane. */
export function RulesPane({ data, cursor, width, height, focused, lang }: RulesPaneProps): React.JSX.Element {
  const diagLines = diagnosticsHeight(data.diagnostics, 2, data.unreadChains);
  if (data.kind === 'message') {
    return (
      <Box flexDirection="column">
        <Text color={theme.muted}>{fitCell(data.text, width)}</Text>
        <Diagnostics diagnostics={data.diagnostics} width={width} lang={lang} unreadChains={data.unreadChains} />
      </Box>
    );
  }
  if (data.kind === 'chains') {
    // Only the rows in view are formatted (60,000 chains on a large node).
    const listHeight = Math.max(1, height - 2 - diagLines);
    const listStart = windowStart(data.rows.length, cursor, listHeight);
    const inView = data.rows.slice(listStart, listStart + listHeight);
    const hookWidth = inView.reduce((w, r) => (r.kind === 'chain' ? Math.max(w, r.detail.length) : w), 0);
    const rows: TableRow[] = inView.map((r) => {
      const name = `${r.kind === 'chain' ? '' : '@'}${r.name}${r.ruleset === 'iptables' || r.ruleset === 'nft' ? '' : ` (${r.ruleset})`}`;
      const cells = [r.table, name, ...(width >= 100 ? [r.detail] : []), r.policy ?? '-', String(r.count), r.packets === null ? '-' : humanCount(r.packets), r.bytes === null ? '-' : humanBytes(r.bytes)];
      return { key: `${r.ruleset}/${r.table}/${r.kind}/${r.name}`, cells, ...(r.name.startsWith('KUBE-') || r.kind !== 'chain' ? { color: 'jump' as const } : {}) };
    });
    return (
      <Box flexDirection="column">
        <Text bold>{fitCell(t(lang, 'rules.tables'), width)}</Text>
        <Table columns={chainColumns(lang, width, hookWidth)} rows={rows} cursor={cursor - listStart} width={width} height={listHeight} focused={focused} />
        <Diagnostics diagnostics={data.diagnostics} width={width} lang={lang} unreadChains={data.unreadChains} />
      </Box>
    );
  }
  const selected = data.rows.at(cursor);
  const detailLines = 3 + (data.derivedNote ? 1 : 0);
  const tableHeight = Math.max(1, height - 2 - detailLines - diagLines);
  const start = windowStart(data.rows.length, cursor, tableHeight);
  const shown = data.rows.slice(start, start + tableHeight);
  // One probability format for the whole column, and a `#` column as wide as the chain's last rule number.
  const digits = probabilityDigits(shown.map((r) => r.probability));
  const last = data.rows.length > 0 ? data.rows.at(data.rows.length - 1) : undefined;
  const sized: RuleColumnWidths = {
    num: Math.max(0, ...[last, ...shown].map((r) => (r ? String(r.index).length : 0))),
    prob: Math.max(0, ...shown.map((r) => (r.probability === null ? 0 : formatProbability(r.probability, digits).length))),
  };
  const rows: TableRow[] = shown.map((r) => ({
    key: `${r.index}/${r.branch ? r.label : ''}`,
    cells: ruleCells(r, width, digits),
    ...(/^(DNAT|SNAT|MASQUERADE|dnat|snat|masquerade)\b/.test(r.target) ? { color: 'nat' as const } : r.jumpTo || r.jumpSet ? { color: 'jump' as const } : {}),
  }));
  const title = `${tf(lang, 'rules.chain', { table: data.table, chain: data.chain })}${data.policy ? ` (policy ${data.policy})` : ''}${data.ruleset !== 'iptables' ? ` [${data.ruleset}]` : ''}`;
  return (
    <Box flexDirection="column">
      <Text bold>{fitCell(title + (data.backTo ? `   ${tf(lang, 'rules.back', { chain: data.backTo })}` : ''), width)}</Text>
      {data.rows.length === 0 ? (
        <Text color={theme.muted}>{t(lang, 'status.empty')}</Text>
      ) : (
        <Table columns={ruleColumns(lang, width, sized)} rows={rows} cursor={cursor - start} width={width} height={tableHeight} focused={focused} />
      )}
      {data.derivedNote ? <Text color={theme.info}>{fitCell(`ct N = ${t(lang, 'rules.derived')}`, width)}</Text> : null}
      {selected ? (
        <Box flexDirection="column">
          <Text color={theme.muted}>{fitCell(selected.line ? `line ${selected.line}:` : 'rule:', width)}</Text>
          {wrapLines(selected.raw, width, 2).map((l, i) => (
            <Text key={i}>{l}</Text>
          ))}
        </Box>
      ) : null}
      <Diagnostics diagnostics={data.diagnostics} width={width} lang={lang} unreadChains={data.unreadChains} />
    </Box>
  );
}
