/**
 * From snapshot + UI state to each pane's props. Selection logic only: the domain
 * work is in src/analysis. Pure, so frame tests and the app share it.
 */
import { chainList, chainRows, iptablesRulesets, type IptablesRulesetId } from '../analysis/rules-view.js';
import { buildServiceView, type ServiceRow } from '../analysis/service-view.js';
import { findChain } from '../model/iptables.js';
import type { Diagnostic } from '../model/diagnostics.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import type { SessionState } from '../session.js';
import type { RulesPaneData } from './panes/RulesPane.js';
import { t, tf, type Lang } from './i18n.js';
import { currentRules, type UiState } from './state.js';

/** Keeps rows whose text contains `filter` (case-insensitive); all rows when empty. */
export function applyFilter<T>(rows: readonly T[], filter: string, text: (row: T) => string): readonly T[] {
  if (!filter) return rows;
  const needle = filter.toLowerCase();
  return rows.filter((r) => text(r).toLowerCase().includes(needle));
}

/** The Services pane rows (null without API objects), filtered. */
export function servicesView(snapshot: NodeSnapshot | null, filter: string): { rows: readonly ServiceRow[] | null; diagnostics: readonly Diagnostic[] } {
  const api = snapshot?.api;
  if (!snapshot || !api?.value) return { rows: null, diagnostics: api?.diagnostics ?? [] };
  const view = buildServiceView(api.value, { nodeName: snapshot.meta.node });
  const rows = applyFilter(view.rows, filter, (r) => `${r.namespace}/${r.name} ${r.type} ${r.clusterIPs.join(' ')} ${r.endpoints.map((e) => e.address).join(' ')}`);
  return { rows, diagnostics: api.diagnostics };
}

function rulesetDiagnostics(snapshot: NodeSnapshot): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (const p of [snapshot.iptables, snapshot.ip6tables, snapshot.iptablesLegacy]) if (p) out.push(...p.diagnostics);
  return out;
}

/** The Rules pane data for the current location, filtered. */
export function rulesView(snapshot: NodeSnapshot | null, session: SessionState, ui: UiState, filter: string, lang: Lang): RulesPaneData {
  if (!snapshot) return { kind: 'message', text: session.error ? tf(lang, 'status.failed', { reason: session.error }) : t(lang, 'status.loading'), diagnostics: [] };
  const diagnostics = rulesetDiagnostics(snapshot);
  const rulesets = iptablesRulesets(snapshot);
  if (rulesets.length === 0) {
    const err = snapshot.iptables?.error;
    return { kind: 'message', text: err ? tf(lang, 'status.failed', { reason: err }) : t(lang, 'rules.noRules'), diagnostics };
  }
  const loc = currentRules(ui);
  if (loc.kind !== 'chain') {
    const rows = applyFilter(chainList(snapshot), filter, (r) => `${r.table} ${r.chain}`);
    return { kind: 'chains', rows, diagnostics };
  }
  const ruleset = rulesets.find((r) => r.id === (loc.ruleset as IptablesRulesetId))?.ruleset;
  const rows = ruleset ? chainRows(ruleset, loc.table, loc.chain, session.rates) : null;
  if (!ruleset || !rows) return { kind: 'message', text: `${loc.table}/${loc.chain}: no such chain in ${loc.ruleset}`, diagnostics };
  const chain = findChain(ruleset, loc.table as never, loc.chain);
  const prev = ui.rulesStack[ui.rulesStack.length - 2];
  return {
    kind: 'chain',
    ruleset: loc.ruleset,
    table: loc.table,
    chain: loc.chain,
    policy: chain?.policy ?? null,
    rows: applyFilter(rows, filter, (r) => `${r.label} ${r.matches} ${r.target}`),
    diagnostics,
    backTo: prev ? (prev.kind === 'chain' ? prev.chain : t(lang, 'rules.tables')) : null,
  };
}
