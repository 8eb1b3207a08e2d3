/**
 * Every pane's data for one UI state, memoised on what each view reads, so the key
 * handler can compute the views of the state its previous keys produced (not the last
 * render's) and the render that follows reuses them. A view is built only while its
 * pane is shown (the conntrack index of 1M entries is not built behind the Services pane).
 */
import { conntrackView, type ConntrackView } from '../analysis/conntrack-view.js';
import { createModeComparer, type ModeComparer } from '../analysis/compare-modes-lazy.js';
import { buildLbView, type LbView } from '../analysis/lb-view.js';
import { detectProxyMode, type ProxyModeResult } from '../analysis/proxy-mode.js';
import { earlyProxyMode, type EarlyMode } from '../analysis/early-mode.js';
import { UserError } from '../errors.js';
import { isPending, type NodeSnapshot, type SnapshotPart } from '../model/snapshot.js';
import { traceFromSnapshot } from '../trace/choose-engine.js';
import { withExpectation } from '../trace/with-expectation.js';
import type { SessionState } from '../collect/session.js';
import type { RulesPaneData } from './panes/RulesPane.js';
import type { StepPaneData } from './panes/StepPane.js';
import { t, type Lang } from '../text/i18n.js';
import { highlightedService, shownService, type ShownService } from './shown-service.js';
import { currentRules, filterOf, type UiState } from './state.js';
import { chainListSortColumns, lbSortColumns, ruleSortColumns, serviceSortColumns } from './sort-columns.js';
import { sortRows, type TableSort } from './table-sort.js';
import { applyFilter, rulesView, servicesView } from './views.js';
import { diagnosisOf, type DiagnosisIndex } from './diagnosis-view.js';
import type { ServiceDiagnosis } from '../analysis/diagnose/index.js';

/** The data of every pane; null for a pane not shown (its view is not built). */
export interface AppViews {
  readonly services: ReturnType<typeof servicesView>;
  readonly rules: RulesPaneData | null;
  readonly lb: LbView | null;
  readonly conntrack: ConntrackView | null;
  readonly compare: ModeComparer | null;
  /** The Modes pane's Service rows under its `/` filter (null when the pane is not shown). */
  readonly compareServices: readonly string[] | null;
  readonly step: StepPaneData;
  readonly mode: ProxyModeResult | null;
  /** The mode named from the light probes while the LB maps are read (src/analysis/early-mode.ts); null once {@link mode} is known or when they cannot decide. */
  readonly earlyMode: EarlyMode | null;
  /** The Service Conntrack, DNS and Modes show: pinned, else under the Services cursor. */
  readonly shown: ShownService | null;
  /** The node's diagnosis (src/ui/diagnosis-view.ts), null until made. */
  readonly diagnosis: DiagnosisIndex | null;
  /** The diagnosis of the Service the findings view shows (`ui.selectedService`), when open. */
  readonly findings: ServiceDiagnosis | null;
}

/** The parts the proxy mode is read from: the header says `…` until they are parsed. */
const MODE_PARTS: readonly SnapshotPart[] = ['iptables', 'iptablesLegacy', 'nft', 'lb', 'ipvs'];

/** The parts a step walk reads (everything of the dataplane). */
const STEP_PARTS: readonly SnapshotPart[] = ['iptables', 'ip6tables', 'iptablesLegacy', 'nft', 'lb', 'ipvs', 'ipset', 'xtRecent', 'conntrack'];

/**
 * A function remembering its last arguments and result: the first `keys` arguments (all by
 * default) are compared with `Object.is`; the others are only passed through.
 */
function memoLast<A extends readonly unknown[], R>(fn: (...args: A) => R, keys = Infinity): (...args: A) => R {
  let last: { args: A; value: R } | null = null;
  return (...args: A): R => {
    const n = Math.min(keys, args.length);
    if (last && last.args.slice(0, n).every((a, i) => Object.is(a, args[i]))) return last.value;
    const value = fn(...args);
    last = { args, value };
    return value;
  };
}

/** The rows of a Rules view in `sort` order (the rows are built: a sort reads every one). */
function sortedRules(data: RulesPaneData, sort: TableSort | undefined): RulesPaneData {
  if (!sort) return data;
  if (data.kind === 'chains') return { ...data, rows: sortRows(data.rows.slice(), chainListSortColumns('en'), sort) };
  if (data.kind === 'chain') return { ...data, rows: sortRows(data.rows.slice(), ruleSortColumns('en'), sort) };
  return data;
}

/** The memoised view builders of one App instance (see {@link createAppViews}). */
export type AppViewsOf = (snapshot: NodeSnapshot | null, state: SessionState, ui: UiState, lang: Lang) => AppViews;

/** A views function for one App: call it with the current snapshot, session state and UI state. */
export function createAppViews(): AppViewsOf {
  const services = memoLast((snapshot: NodeSnapshot | null, filter: string, sort: TableSort | undefined) => {
    const view = servicesView(snapshot, filter);
    return sort && view.rows ? { ...view, rows: sortRows(view.rows, serviceSortColumns('en'), sort) } : view;
  });
  // Keyed on the location stack and the filter, not the whole UI state: a cursor move reuses it.
  const rules = memoLast(
    (snapshot: NodeSnapshot | null, _rates: unknown, _error: unknown, _stack: unknown, filter: string, lang: Lang, sort: TableSort | undefined, state: SessionState, ui: UiState) =>
      sortedRules(rulesView(snapshot, state, ui, filter, lang), sort),
    7,
  );
  const lb = memoLast((snapshot: NodeSnapshot | null, filter: string, sort: TableSort | undefined) => {
    const view = buildLbView(snapshot, filter);
    return sort ? { ...view, frontends: sortRows(view.frontends, lbSortColumns('en'), sort) } : view;
  });
  const conntrack = memoLast((snapshot: NodeSnapshot | null, sort: UiState['conntrackSort'], all: boolean, service: string | null, filter: string) =>
    conntrackView(snapshot, { sort, filter, service: all ? null : service }),
  );
  const compare = memoLast((snapshot: NodeSnapshot | null) => (snapshot && !snapshot.pending?.length ? createModeComparer(snapshot) : null));
  const compareServices = memoLast((comparer: ModeComparer | null, filter: string): readonly string[] | null => (comparer ? applyFilter(comparer.services, filter, (s) => s) : null));
  const mode = memoLast((snapshot: NodeSnapshot | null) => (snapshot && !MODE_PARTS.some((p) => isPending(snapshot, p)) ? detectProxyMode(snapshot) : null));
  const earlyMode = memoLast((snapshot: NodeSnapshot | null, pinned: readonly string[] | null | undefined) => earlyProxyMode(snapshot, pinned));
  const step = memoLast((snapshot: NodeSnapshot | null, ui: UiState['step'], lang: Lang): StepPaneData => {
    if (!snapshot || !ui) return { kind: 'none' };
    if (STEP_PARTS.some((p) => isPending(snapshot, p))) return { kind: 'loading', text: t(lang, 'status.loading') };
    try {
      const { from, to, branch, flags, entry } = ui;
      return { kind: 'result', result: withExpectation(snapshot, traceFromSnapshot(snapshot, { from, to, branch: String(branch), ...(flags ? { flags } : {}), ...(entry ? { entry } : {}) })) };
    } catch (e) {
      if (e instanceof UserError) return { kind: 'failed', reason: `${e.text(lang)}${e.hint ? ` (${e.text(lang, 'hint')})` : ''}` };
      throw e;
    }
  });
  // The Services pane's rows under its own filter, whichever pane is shown: its cursor indexes them.
  const servicesRows = memoLast((snapshot: NodeSnapshot | null, servicesFilter: string, sort: TableSort | undefined) => {
    const rows = servicesView(snapshot, servicesFilter).rows;
    return sort && rows ? sortRows(rows, serviceSortColumns('en'), sort) : rows;
  });
  const highlighted = memoLast((snapshot: NodeSnapshot | null, servicesFilter: string, _cursor: number | undefined, sort: TableSort | undefined, ui: UiState) =>
    highlightedService(servicesRows(snapshot, servicesFilter, sort), ui), 4);
  const shown = memoLast((highlighted: string | null, _pinned: string | null, ui: UiState) => shownService(highlighted, ui), 2);
  return (snapshot, state, ui, lang) => {
    const filter = filterOf(ui);
    const pane = ui.pane;
    const current = shown(highlighted(snapshot, ui.filters['services'] ?? '', ui.cursors['services'], ui.sorts['services'], ui), ui.pinnedService, ui);
    const diagnosis = diagnosisOf(snapshot, ui.findings);
    return {
      services: services(snapshot, pane === 'services' ? filter : '', ui.sorts['services']),
      rules: pane === 'rules' ? rules(snapshot, state.rates, state.error, ui.rulesStack, filter, lang, ui.sorts[currentRules(ui).kind === 'chains' ? 'rules:chains' : 'rules:chain'], state, ui) : null,
      lb: pane === 'lb' ? lb(snapshot, filter, ui.sorts['lb']) : null,
      conntrack: pane === 'conntrack' ? conntrack(snapshot, ui.conntrackSort, ui.conntrackAll, current?.service ?? null, filter) : null,
      compare: pane === 'compare' ? compare(snapshot) : null,
      compareServices: pane === 'compare' ? compareServices(compare(snapshot), filter) : null,
      step: pane === 'step' ? step(snapshot, ui.step, lang) : { kind: 'none' },
      mode: mode(snapshot),
      earlyMode: mode(snapshot) ? null : earlyMode(snapshot, state.pinnedLbMaps),
      shown: current,
      diagnosis,
      findings: ui.findings && ui.selectedService ? (diagnosis?.byService.get(ui.selectedService) ?? null) : null,
    };
  };
}

/** The LB view unfiltered, for Enter on a Cilium node's Service (the LB pane is not open then). */
export function lbViewForOpen(snapshot: NodeSnapshot | null): LbView {
  return buildLbView(snapshot, '');
}
