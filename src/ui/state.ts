/**
 * UI state and its pure reducer (no clock, no I/O): which pane is shown, the
 * cursor of every list, the navigation stack of the rules pane, the filter being
 * typed, and the help overlay. Components dispatch {@link UiAction}s.
 */

import { DEFAULT_CONNTRACK_SORT, nextConntrackSort, reverseConntrackSort, type ConntrackSort } from '../analysis/conntrack-view.js';
import type { StepNoPacketReason } from '../analysis/step-defaults.js';
import { PANE_IDS, type PaneId } from './pane-ids.js';
import { chooseSort, type TableSort } from './table-sort.js';

export type { PaneId };

/**
 * Where the rules pane is: the list of all chains, or one chain of one ruleset
 * (`ruleset`: `iptables` (IPv4), `ip6tables`, `iptables-legacy`, `nft`).
 * `focusRule` is a 0-based rule index to put the cursor on when opening.
 */
export type RulesLocation =
  | { readonly kind: 'chains' }
  | {
      readonly kind: 'chain';
      readonly ruleset: string;
      readonly table: string;
      readonly chain: string;
      readonly focusRule?: number;
      /** The pane the user came from (Services): Esc returns there. */
      readonly from?: PaneId;
    }
  | { readonly kind: 'set'; readonly ruleset: string; readonly table: string; readonly set: string };

/**
 * A row to open in its pane with the cursor on it (Enter on a step of the walk or on a find
 * hit): a chain or set in the Rules pane, an LB frontend, a conntrack entry (all flows).
 * `cursor` is the row's position in the pane as it shows it (its sort, no filter).
 */
export type OpenTarget =
  | { readonly kind: 'rules'; readonly location: RulesLocation; readonly cursor: number }
  | { readonly kind: 'lb' | 'conntrack' | 'services'; readonly cursor: number };

/**
 * Where Esc goes back to after an {@link OpenTarget} was opened: the pane (and the find
 * view's query) it was opened from, and the Rules stack depth the opened chain or set sits at.
 */
export interface ReturnPoint {
  readonly pane: PaneId;
  readonly find: string | null;
  readonly depth: number;
}

/** The whole UI state. `cursors` is keyed by a view key (see {@link viewKey}). */
export interface UiState {
  readonly pane: PaneId;
  /**
   * The Services pane shows the diagnosis findings of the selected Service (`d`) instead of
   * its list; Esc returns to the list. Its cursor and filter are kept under `findings`.
   */
  readonly findings: boolean;
  readonly cursors: Readonly<Record<string, number>>;
  readonly rulesStack: readonly RulesLocation[];
  readonly filters: Readonly<Record<string, string>>;
  readonly typingFilter: boolean;
  readonly help: boolean;
  /** The first line the help box shows (its scroll): 0 each time it opens. */
  readonly helpTop: number;
  /** The Service last opened with Enter or `t` (`ns/name`): Esc from the LB and Step panes returns to Services. */
  readonly selectedService: string | null;
  /**
   * The Service pinned with Space (`ns/name`): Conntrack, DNS and Modes show it; null, they
   * follow the Services pane's cursor (src/ui/shown-service.ts).
   */
  readonly pinnedService: string | null;
  /**
   * Conntrack pane: sort column and direction, and whether to show all flows (the start, as
   * k9s lists start unfiltered) or only the shown Service's (`a`; src/ui/shown-service.ts).
   */
  readonly conntrackSort: ConntrackSort;
  readonly conntrackAll: boolean;
  /** Each table's sort (src/ui/table-sort.ts), by {@link sortKey}; absent: the table's own order. */
  readonly sorts: Readonly<Record<string, TableSort>>;
  /** `s` was pressed: the next key names the column to sort by (the footer lists them). */
  readonly sortPicking: boolean;
  /**
   * The `:` command line being typed (src/ui/command-line.ts): its text, what Tab offered,
   * and why the last command could not run; null when closed.
   */
  readonly commandLine: { readonly text: string; readonly choices: readonly string[]; readonly error: string | null } | null;
  /**
   * Step mode's packet (`from` IP, `to` `IP:PORT/proto`, optional TCP `flags` such as `ack`
   * and `entry` point, as `nodescope trace` takes them) and which random branch it follows (0-based).
   */
  readonly step: { readonly from: string; readonly to: string; readonly branch: number; readonly flags?: string; readonly entry?: string } | null;
  /** Why the last `t` could make no packet for its Service (the Step pane says so), else null. */
  readonly stepNoPacket: StepNoPacketReason | null;
  /** The name being typed in the DNS pane's prompt (`n`), null when no prompt is open. */
  readonly dnsPrompt: string | null;
  /** The name the DNS pane resolves (Enter in its prompt) instead of the shown Service's questions; Esc clears it. */
  readonly dnsName: string | null;
  /** Where Esc returns after Enter opened a step's or a find hit's row (null: nowhere special). */
  readonly returnTo: ReturnPoint | null;
  /**
   * The cross-pane find view (`:find TEXT`, src/ui/find-view.ts): every rule, set element, LB
   * frontend/backend, flow and Service that holds the text; it covers the pane while open.
   */
  readonly find: string | null;
  readonly quit: boolean;
  /** A one-line answer to the last key when it could do nothing (shown in the footer until the next key). */
  readonly notice: UiNotice | null;
}

/**
 * Why a key did nothing: an Enter on a headless Service, or on one with no rules, maps or chains
 * on this node; on a step with no row in any pane (routing, a kernel station), or on the
 * conntrack step of a new flow (its entry is not in the capture).
 */
export type UiNotice = 'headless' | 'noDataplane' | 'stepNoRow' | 'stepNewFlow';

/** Everything the UI can do to its state. `count` is the number of rows in the current view. */
export type UiAction =
  | { readonly type: 'switchPane'; readonly pane: PaneId }
  | { readonly type: 'nextPane'; readonly delta: 1 | -1 }
  | { readonly type: 'move'; readonly delta: number; readonly count: number }
  | { readonly type: 'jumpTo'; readonly index: number; readonly count: number }
  | { readonly type: 'openRules'; readonly location: RulesLocation }
  | { readonly type: 'openFindings' }
  | { readonly type: 'openTarget'; readonly target: OpenTarget }
  | { readonly type: 'find'; readonly text: string | null }
  | { readonly type: 'back' }
  | { readonly type: 'selectService'; readonly service: string | null }
  | { readonly type: 'pinService'; readonly service: string | null }
  | { readonly type: 'filterStart' }
  | { readonly type: 'filterInput'; readonly text: string }
  | { readonly type: 'filterEnd'; readonly keep: boolean }
  | { readonly type: 'conntrackSortNext' }
  | { readonly type: 'conntrackSortReverse' }
  | { readonly type: 'conntrackScopeToggle' }
  | { readonly type: 'sortPick'; readonly on: boolean }
  | { readonly type: 'command'; readonly line: UiState['commandLine'] }
  | { readonly type: 'setFilter'; readonly text: string }
  | { readonly type: 'sortBy'; readonly column: string }
  | { readonly type: 'sortReverse' }
  | { readonly type: 'startStep'; readonly from: string; readonly to: string; readonly flags?: string; readonly entry?: string }
  | { readonly type: 'stepBranch'; readonly branches: number }
  | { readonly type: 'stepNoPacket'; readonly reason: StepNoPacketReason }
  | { readonly type: 'dnsNameStart' }
  | { readonly type: 'dnsNameInput'; readonly text: string }
  | { readonly type: 'dnsNameEnd'; readonly keep: boolean }
  | { readonly type: 'toggleHelp' }
  | { readonly type: 'quit' }
  | { readonly type: 'notice'; readonly notice: UiNotice };

/** The state a fresh UI starts in. */
export const initialUiState: UiState = {
  pane: 'services',
  findings: false,
  cursors: {},
  rulesStack: [{ kind: 'chains' }],
  filters: {},
  typingFilter: false,
  help: false,
  helpTop: 0,
  selectedService: null,
  pinnedService: null,
  conntrackSort: DEFAULT_CONNTRACK_SORT,
  conntrackAll: true,
  sorts: {},
  sortPicking: false,
  commandLine: null,
  step: null,
  stepNoPacket: null,
  dnsPrompt: null,
  dnsName: null,
  returnTo: null,
  find: null,
  quit: false,
  notice: null,
};

/** The rules pane's current location (top of the stack). */
export function currentRules(state: UiState): RulesLocation {
  return state.rulesStack[state.rulesStack.length - 1] ?? { kind: 'chains' };
}

/** The key under which the current view keeps its cursor and filter. */
export function viewKey(state: UiState): string {
  if (state.find !== null) return 'find';
  if (state.pane === 'services' && state.findings) return 'findings';
  if (state.pane !== 'rules') return state.pane;
  const loc = currentRules(state);
  if (loc.kind === 'chains') return 'rules:chains';
  if (loc.kind === 'set') return `rules:${loc.ruleset}:${loc.table}:@${loc.set}`;
  return `rules:${loc.ruleset}:${loc.table}:${loc.chain}`;
}

/** The key under which a table keeps its sort: its pane, the Rules pane's chain list and chains apart (every chain shares one). */
export function sortKey(state: UiState): string {
  if (state.pane !== 'rules') return state.pane;
  return currentRules(state).kind === 'chains' ? 'rules:chains' : 'rules:chain';
}

/** The sort of the shown table, or null for its own order. */
export function sortOf(state: UiState): TableSort | null {
  if (state.pane === 'conntrack') return state.conntrackSort;
  return state.sorts[sortKey(state)] ?? null;
}

/** The cursor of the current view (0 when never moved). */
export function cursorOf(state: UiState): number {
  return state.cursors[viewKey(state)] ?? 0;
}

/** The filter text of the current view ('' when none). */
export function filterOf(state: UiState): string {
  return state.filters[viewKey(state)] ?? '';
}

function clamp(n: number, count: number): number {
  return Math.max(0, Math.min(n, count - 1));
}

function setCursor(state: UiState, value: number): UiState {
  return { ...state, cursors: { ...state.cursors, [viewKey(state)]: value } };
}

/** Opens `target` in its pane with the cursor on its row, its filter cleared; Esc comes back here ({@link goBack}). */
function openTarget(state: UiState, target: OpenTarget): UiState {
  const base = { ...state, typingFilter: false, help: false, find: null };
  let next: UiState;
  if (target.kind === 'rules') next = { ...base, pane: 'rules', rulesStack: [...state.rulesStack, target.location] };
  else if (target.kind === 'conntrack') next = { ...base, pane: 'conntrack', conntrackAll: true };
  else next = { ...base, pane: target.kind, findings: false };
  const key = viewKey(next);
  const returnTo: ReturnPoint = { pane: state.pane, find: state.find, depth: next.rulesStack.length };
  return { ...next, returnTo, filters: { ...next.filters, [key]: '' }, cursors: { ...next.cursors, [key]: target.cursor } };
}

/** Esc after {@link openTarget}: the opened chain or set leaves the Rules stack, the pane (and find view) opened from comes back. */
function goBack(state: UiState, to: ReturnPoint): UiState {
  const rulesStack = state.pane === 'rules' ? state.rulesStack.slice(0, Math.max(1, to.depth - 1)) : state.rulesStack;
  return { ...state, pane: to.pane, find: to.find, rulesStack, returnTo: null };
}

/** The reducer. Pure: same state and action, same result. A notice lasts until the next action. */
export function uiReducer(state: UiState, action: UiAction): UiState {
  if (action.type === 'notice') return { ...state, notice: action.notice };
  return reduce(state.notice === null ? state : { ...state, notice: null }, action);
}

function reduce(state: UiState, action: Exclude<UiAction, { type: 'notice' }>): UiState {
  switch (action.type) {
    case 'switchPane':
      return { ...state, pane: action.pane, help: false, typingFilter: false, returnTo: null, find: null };
    case 'nextPane': {
      const i = PANE_IDS.indexOf(state.pane);
      return { ...state, pane: PANE_IDS[(i + action.delta + PANE_IDS.length) % PANE_IDS.length]!, help: false, typingFilter: false, returnTo: null, find: null };
    }
    case 'openTarget':
      return openTarget(state, action.target);
    case 'find':
      return { ...state, find: action.text, typingFilter: false, help: false, cursors: { ...state.cursors, find: action.text === null ? (state.cursors['find'] ?? 0) : 0 } };
    // While the help is open the move keys scroll it (`count`: its first lines possible).
    case 'move':
      if (state.help) return { ...state, helpTop: clamp(state.helpTop + action.delta, action.count) };
      return setCursor(state, clamp(cursorOf(state) + action.delta, action.count));
    case 'jumpTo':
      if (state.help) return { ...state, helpTop: clamp(action.index, action.count) };
      return setCursor(state, clamp(action.index, action.count));
    case 'openRules': {
      const next: UiState = { ...state, pane: 'rules', rulesStack: [...state.rulesStack, action.location], typingFilter: false };
      const focus = action.location.kind === 'chain' ? action.location.focusRule : undefined;
      return focus === undefined ? next : setCursor(next, focus);
    }
    case 'back':
      if (state.typingFilter) return { ...state, typingFilter: false };
      if (state.dnsPrompt !== null) return { ...state, dnsPrompt: null };
      if (state.help) return { ...state, help: false };
      if (filterOf(state)) return { ...state, filters: { ...state.filters, [viewKey(state)]: '' } };
      if (state.find !== null) return { ...state, find: null };
      if (state.returnTo && (state.pane !== 'rules' || state.rulesStack.length <= state.returnTo.depth)) return goBack(state, state.returnTo);
      if (state.pane === 'rules' && state.rulesStack.length > 1) {
        const top = currentRules(state);
        const from = top.kind === 'chain' ? top.from : undefined;
        return { ...state, rulesStack: state.rulesStack.slice(0, -1), ...(from ? { pane: from } : {}) };
      }
      // A name asked in the DNS pane: Esc goes back to the shown Service's questions.
      if (state.pane === 'dns' && state.dnsName !== null) return { ...state, dnsName: null };
      if (state.pane === 'services' && state.findings) return { ...state, findings: false };
      // The LB and Step panes are opened from a Service (Enter, t): Esc goes back there.
      if ((state.pane === 'lb' || state.pane === 'step') && state.selectedService !== null) return { ...state, pane: 'services' };
      return state;
    case 'openFindings':
      return { ...state, pane: 'services', findings: true, typingFilter: false, cursors: { ...state.cursors, findings: 0 } };
    case 'selectService':
      return { ...state, selectedService: action.service };
    case 'pinService':
      return { ...state, pinnedService: action.service };
    case 'filterStart':
      return { ...state, typingFilter: true };
    case 'filterInput':
      return { ...state, filters: { ...state.filters, [viewKey(state)]: action.text }, cursors: { ...state.cursors, [viewKey(state)]: 0 } };
    case 'filterEnd':
      return action.keep ? { ...state, typingFilter: false } : { ...state, typingFilter: false, filters: { ...state.filters, [viewKey(state)]: '' } };
    case 'conntrackSortNext':
      return { ...state, conntrackSort: nextConntrackSort(state.conntrackSort) };
    case 'conntrackSortReverse':
      return { ...state, conntrackSort: reverseConntrackSort(state.conntrackSort) };
    case 'sortPick':
      return { ...state, sortPicking: action.on };
    case 'command':
      return { ...state, commandLine: action.line };
    case 'setFilter':
      return { ...state, filters: { ...state.filters, [viewKey(state)]: action.text }, cursors: { ...state.cursors, [viewKey(state)]: 0 } };
    case 'sortBy': {
      if (state.pane === 'conntrack') {
        const next = chooseSort(state.conntrackSort, action.column);
        return setCursor({ ...state, sortPicking: false, conntrackSort: { column: next.column as ConntrackSort['column'], descending: next.descending } }, 0);
      }
      // The cursor goes to the top: the row it was on is elsewhere in the new order.
      const sorted = { ...state, sortPicking: false, sorts: { ...state.sorts, [sortKey(state)]: chooseSort(state.sorts[sortKey(state)], action.column) } };
      return setCursor(sorted, 0);
    }
    case 'sortReverse': {
      if (state.pane === 'conntrack') return { ...state, conntrackSort: reverseConntrackSort(state.conntrackSort) };
      const current = state.sorts[sortKey(state)];
      return current ? { ...state, sorts: { ...state.sorts, [sortKey(state)]: { ...current, descending: !current.descending } } } : state;
    }
    case 'conntrackScopeToggle':
      return { ...state, conntrackAll: !state.conntrackAll, cursors: { ...state.cursors, conntrack: 0 } };
    case 'startStep':
      return {
        ...state,
        pane: 'step',
        step: { from: action.from, to: action.to, branch: 0, ...(action.flags ? { flags: action.flags } : {}), ...(action.entry ? { entry: action.entry } : {}) },
        stepNoPacket: null,
        cursors: { ...state.cursors, step: 0 },
      };
    case 'stepNoPacket':
      return { ...state, pane: 'step', step: null, stepNoPacket: action.reason, cursors: { ...state.cursors, step: 0 } };
    case 'stepBranch':
      if (!state.step || action.branches < 2) return state;
      // The cursor stays on its step number: the walks of two branches share their start.
      return { ...state, step: { ...state.step, branch: (state.step.branch + 1) % action.branches } };
    case 'dnsNameStart':
      return { ...state, dnsPrompt: '' };
    case 'dnsNameInput':
      return state.dnsPrompt === null ? state : { ...state, dnsPrompt: action.text };
    case 'dnsNameEnd': {
      const typed = (state.dnsPrompt ?? '').trim();
      return action.keep && typed !== '' ? { ...state, dnsPrompt: null, dnsName: typed } : { ...state, dnsPrompt: null };
    }
    case 'toggleHelp':
      return { ...state, help: !state.help, helpTop: 0 };
    case 'quit':
      return { ...state, quit: true };
  }
}
