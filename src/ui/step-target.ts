/**
 * Where Enter on a step of the walk goes (issue 22 item 1): the rule in its chain (on an nft
 * random choice, the branch taken), the element of a named set or map the rule's lookup hit,
 * the end of a chain for a policy or return, the Cilium LB frontend a map lookup read, or the
 * conntrack entry a known flow belongs to — each in its pane with the cursor on that row, in
 * the order the pane shows (its sort). Esc comes back to the step (src/ui/state.ts `returnTo`).
 * Pure: a step becomes reducer actions.
 */
import { conntrackView } from '../analysis/conntrack-view.js';
import { buildLbView, type LbFrontendRow } from '../analysis/lb-view.js';
import { nftChainRows, nftSetRows } from '../analysis/nft-view.js';
import { chainRows, type RuleRow } from '../analysis/rules-view.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import type { TraceResult, TraceStep } from '../trace/types.js';
import { lbSortColumns, ruleSortColumns } from './sort-columns.js';
import type { OpenTarget, RulesLocation, UiAction, UiState } from './state.js';
import { sortRows } from './table-sort.js';

/** The Rules pane's ruleset id of an iptables step: by family and, with both backends holding rules, by backend. */
function iptablesRuleset(s: TraceStep): string {
  if (s.xtables === 'legacy') return 'iptables-legacy';
  return s.family === 'ip6' ? 'ip6tables' : 'iptables';
}

/** The row of `rows` (in the pane's sort) a step names: its rule, or the branch it took of a random choice; -1 when none. */
function ruleRowIndex(rows: readonly RuleRow[], s: TraceStep, ui: UiState): number {
  const sort = ui.sorts['rules:chain'];
  const shown = sort ? sortRows(rows.slice(), ruleSortColumns('en'), sort) : rows;
  const index = s.kind === 'policy' || s.kind === 'return' ? null : s.ruleIndex;
  if (index === null) return shown.length - 1;
  const chosen = s.branches?.find((b) => b.chosen);
  if (chosen) {
    const branch = rows.filter((r) => r.index === index && r.branch)[chosen.index];
    if (branch) return shown.indexOf(branch);
  }
  return shown.findIndex((r) => r.index === index && !r.branch);
}

/** A rule step (iptables or nft; a rule, a policy or the end of a user chain) as a Rules location and row. */
function ruleTarget(snapshot: NodeSnapshot, s: TraceStep, ui: UiState): OpenTarget | null {
  if (s.table === null || s.chain === null) return null;
  if (s.backend === 'nft') {
    const nft = snapshot.nft?.value;
    const label = `${s.family} ${s.table}`;
    if (!nft) return null;
    if (s.element) {
      const rows = nftSetRows(nft, label, s.element.set);
      const sort = ui.sorts['rules:chain'];
      const shown = rows && sort ? sortRows(rows.slice(), ruleSortColumns('en'), sort) : rows;
      const at = shown?.findIndex((r) => r.index === s.element!.index + 1) ?? -1;
      if (shown && at >= 0) return { kind: 'rules', location: { kind: 'set', ruleset: 'nft', table: label, set: s.element.set }, cursor: at };
    }
    const rows = nftChainRows(nft, label, s.chain);
    if (!rows) return null;
    return { kind: 'rules', location: { kind: 'chain', ruleset: 'nft', table: label, chain: s.chain }, cursor: Math.max(0, ruleRowIndex(rows, s, ui)) };
  }
  if (s.backend !== 'iptables') return null;
  const id = iptablesRuleset(s);
  const part = id === 'iptables-legacy' ? snapshot.iptablesLegacy : id === 'ip6tables' ? snapshot.ip6tables : snapshot.iptables;
  const rows = part?.value ? chainRows(part.value, s.table, s.chain) : null;
  if (!rows) return null;
  const location: RulesLocation = { kind: 'chain', ruleset: id, table: s.table, chain: s.chain };
  return { kind: 'rules', location, cursor: Math.max(0, ruleRowIndex(rows, s, ui)) };
}

/**
 * The LB frontend a Cilium step read: the service ID of the last services-map hit at or
 * before the step (`service N`), else the step's destination as a frontend address.
 */
function lbTarget(snapshot: NodeSnapshot, r: TraceResult, s: TraceStep, ui: UiState): OpenTarget | null {
  const view = buildLbView(snapshot, '');
  if (view.status !== 'ready') return null;
  const sort = ui.sorts['lb'];
  const rows: readonly LbFrontendRow[] = sort ? sortRows(view.frontends.slice(), lbSortColumns('en'), sort) : view.frontends;
  const hit = r.steps.slice(0, s.index + 1).reverse().find((x) => x.kind === 'map-lookup' && x.matched === true && /^service \d+$/.test(x.verdict ?? ''));
  const id = hit ? Number(hit.verdict!.slice('service '.length)) : null;
  let at = id === null ? -1 : rows.findIndex((f) => f.revNatId === id);
  if (at < 0) at = rows.findIndex((f) => f.address.startsWith(`${s.header.dst}:${s.header.dport}/`));
  return at >= 0 ? { kind: 'lb', cursor: at } : null;
}

/** The conntrack entry a known flow belongs to, in the Conntrack pane's order (all flows, no filter). */
function conntrackTarget(snapshot: NodeSnapshot, r: TraceResult, ui: UiState): OpenTarget | null {
  if (!r.conntrack?.existing) return null;
  const entries = snapshot.conntrack?.value?.entries ?? [];
  const text = r.conntrack.text;
  const i = entries.findIndex((e) => e.raw.trim() === text);
  if (i < 0) return null;
  const order = conntrackView(snapshot, { sort: ui.conntrackSort, filter: '', service: null }).order;
  const at = order.indexOf(i);
  return at >= 0 ? { kind: 'conntrack', cursor: at } : null;
}

/** What Enter on step `at` of the walk dispatches: the open of its row, or a notice that it has none in any pane. */
export function stepTargetActions(snapshot: NodeSnapshot, r: TraceResult, at: number, ui: UiState): UiAction[] {
  const s = r.steps[at];
  if (!s) return [];
  let target: OpenTarget | null = null;
  if (s.kind === 'conntrack') target = conntrackTarget(snapshot, r, ui);
  else if (s.backend === 'ebpf' && s.table !== null && s.chain !== null && /_lb[46]_|lb[46]_/.test(s.chain)) target = lbTarget(snapshot, r, s, ui);
  else if (s.backend === 'iptables' || s.backend === 'nft') target = ruleTarget(snapshot, s, ui);
  return target ? [{ type: 'openTarget', target }] : [{ type: 'notice', notice: s.kind === 'conntrack' ? 'stepNewFlow' : 'stepNoRow' }];
}
