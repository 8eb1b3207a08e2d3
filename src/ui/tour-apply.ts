/**
 * A tour step as the app's own reducer actions (src/ui/state.ts): switch to the step's
 * pane, select its Service, put the Services cursor on its row, open the Rules pane's
 * chains in the order a reader follows them with the cursor on the highlighted rule,
 * set the Conntrack filter, start the step-mode walk of a packet with the cursor on the
 * step to look at. Pure: the same UI state, step
 * and snapshot give the same actions, and the actions are the ones keys dispatch.
 *
 * The Rules pane keeps a navigation stack; a step first unwinds it (as repeated Esc
 * would) so that after the step, Esc walks back along the step's own path.
 */
import type { NodeSnapshot } from '../model/snapshot.js';
import type { Lang } from '../text/i18n.js';
import { PANE_IDS } from './pane-registry.js';
import { cursorOf, filterOf, uiReducer, type PaneId, type UiAction, type UiState } from './state.js';
import type { TourStep } from '../tour/model.js';
import { resolveStep, type StepResolution } from '../tour/resolve.js';

/** The app's pane of that name, or null for a pane name the app does not know. */
function appPane(pane: string): PaneId | null {
  return (PANE_IDS as readonly string[]).includes(pane) ? (pane as PaneId) : null;
}

/** Actions that empty the Rules pane's stack back to its chain list, from `ui`. */
function unwindRules(ui: UiState): UiAction[] {
  const out: UiAction[] = [];
  let state = ui;
  // Each `back` pops one location (after clearing that view's filter, which takes its own back).
  for (let guard = 0; state.rulesStack.length > 1 && guard < 4 * ui.rulesStack.length + 4; guard++) {
    for (const a of [{ type: 'switchPane', pane: 'rules' } as const, { type: 'back' } as const]) {
      out.push(a);
      state = uiReducer(state, a);
    }
  }
  return out;
}

/**
 * Actions that drop the view state bound to the objects of the capture the UI showed
 * before a step on another capture: the Rules pane's stack back to its chain list (a
 * chain or set of one capture is "not in this capture" in another's), and the cursors
 * and filter of the lists whose rows were that capture's (chain list, LB, Conntrack,
 * Modes), as `g` and Esc would.
 */
export function leaveCaptureActions(ui: UiState): UiAction[] {
  const out = unwindRules(ui);
  let state = out.reduce(uiReducer, ui);
  for (const pane of ['rules', 'lb', 'conntrack', 'compare'] as const) {
    const on = uiReducer(state, { type: 'switchPane', pane });
    const actions: UiAction[] = [];
    if (filterOf(on)) actions.push({ type: 'filterInput', text: '' });
    if (cursorOf(on) !== 0) actions.push({ type: 'jumpTo', index: 0, count: 1 });
    if (actions.length === 0) continue;
    out.push({ type: 'switchPane', pane }, ...actions);
    state = [{ type: 'switchPane', pane } as const, ...actions].reduce(uiReducer, state);
  }
  return out;
}

/**
 * The actions for an already resolved step (see {@link applyTourStep}). `shownCapture`:
 * the capture the UI state was built on (the last step's); when it is another than the
 * step's, {@link leaveCaptureActions} come first, so no pane keeps the other capture's
 * chains or rows (null: a fresh UI state, nothing to leave).
 */
export function actionsFor(ui: UiState, step: TourStep, where: StepResolution, shownCapture: string | null = null): UiAction[] {
  const actions: UiAction[] = shownCapture !== null && shownCapture !== step.capture ? leaveCaptureActions(ui) : [];
  const pane = appPane(step.pane);
  actions.push({ type: 'switchPane', pane: pane ?? 'services' });
  if (where.service !== null) actions.push({ type: 'selectService', service: where.service });
  if (where.serviceRow !== null && (step.pane === 'services' || step.pane === 'dns' || step.pane === 'compare' || step.pane === 'conntrack' || where.rulesPath.length > 0 || pane === null)) {
    // Put the Services cursor on the Service too, so going back there shows it.
    actions.push({ type: 'switchPane', pane: 'services' }, { type: 'filterInput', text: '' });
    actions.push({ type: 'jumpTo', index: where.serviceRow.index, count: where.serviceRow.count });
  }
  if (step.pane === 'rules') {
    actions.push(...unwindRules(actions.reduce(uiReducer, ui)));
    where.rulesPath.forEach((hop, i) => {
      const from = i === 0 && where.service !== null ? { from: 'services' as const } : {};
      const location = hop.set !== null
        ? { kind: 'set' as const, ruleset: hop.ruleset, table: hop.table, set: hop.set }
        : { kind: 'chain' as const, ruleset: hop.ruleset, table: hop.table, chain: hop.chain ?? '', focusRule: hop.cursor.index, ...from };
      actions.push({ type: 'openRules', location }, { type: 'filterInput', text: '' }, { type: 'jumpTo', index: hop.cursor.index, count: hop.cursor.count });
    });
    if (where.rulesPath.length === 0) actions.push({ type: 'switchPane', pane: 'rules' });
  } else if (step.target.kind === 'packet') {
    const { from, to, flags, entry } = step.target;
    actions.push({ type: 'startStep', from, to, ...(flags ? { flags } : {}), ...(entry ? { entry } : {}) });
    if (where.cursor !== null) actions.push({ type: 'jumpTo', index: where.cursor.index, count: where.cursor.count });
  } else if (pane !== null) {
    actions.push({ type: 'switchPane', pane });
    if (step.pane === 'conntrack') actions.push({ type: 'filterInput', text: where.filter ?? '' });
    if (where.cursor !== null && step.pane !== 'conntrack') actions.push({ type: 'jumpTo', index: where.cursor.index, count: where.cursor.count });
  } else {
    actions.push({ type: 'switchPane', pane: 'services' });
  }
  return actions;
}

/**
 * The reducer actions that show `step` of a tour on `snapshot`, from the current UI
 * state `ui`, and the resolution they came from (its `focus` lines are what the tour
 * bar highlights; its `problem` says when the capture lacks the object). A pane name
 * the app does not know leaves the app on the Services pane with the Service selected;
 * the tour bar carries the step's lines. `shownCapture`: as in {@link actionsFor}.
 */
export function applyTourStep(ui: UiState, step: TourStep, snapshot: NodeSnapshot, lang: Lang, shownCapture: string | null = null): { actions: UiAction[]; resolution: StepResolution } {
  const resolution = resolveStep(snapshot, step, lang);
  return { actions: actionsFor(ui, step, resolution, shownCapture), resolution };
}

/** The UI state after the step's actions (what a frame test of the step renders). */
export function uiAfterStep(ui: UiState, step: TourStep, snapshot: NodeSnapshot, lang: Lang, shownCapture: string | null = null): UiState {
  return applyTourStep(ui, step, snapshot, lang, shownCapture).actions.reduce(uiReducer, ui);
}
