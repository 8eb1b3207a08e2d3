/**
 * What a key does in the app: the key bindings (src/ui/key-bindings.ts) say which command
 * a key is on the shown pane; this module turns a command into reducer actions (or a
 * session call). Pure of React: the App passes the latest state and a dispatch.
 */
import { defaultStepPacket } from '../analysis/step-defaults.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import type { SessionLike } from '../collect/session.js';
import type { AppViews } from './app-views.js';
import { commandOf, type Command, type InkKey } from './key-bindings.js';
import { openServiceActions } from './open-location.js';
import { openEvidenceActions } from './diagnosis-view.js';
import { stepTargetActions } from './step-target.js';
import { highlightedService, togglePin } from './shown-service.js';
import { cursorOf, currentRules, filterOf, type UiAction, type UiState } from './state.js';
import { formatServiceRef } from '../model/service-ref.js';
import type { Lang } from '../text/i18n.js';
import { sortChoices } from './sort-columns.js';
import { completeCommand, runCommand } from './command-line.js';
import { sortLetters } from './table-sort.js';
import { rowIndexOf, rowKeyOf } from './row-keys.js';
import { findHits } from './find-view.js';

/** The state a key acts on: the latest UI state and views (not the last render's), and the sizes. */
export interface KeyContext {
  readonly ui: UiState;
  readonly views: AppViews;
  readonly snapshot: NodeSnapshot | null;
  /** Rows of the shown pane's list (its registry `rowCount`); with the help open, its first lines possible (`maxTop + 1`). */
  readonly count: number;
  /** Rows a page key moves (with the help open, the lines it shows). */
  readonly page: number;
  readonly session: SessionLike;
  readonly dispatch: (action: UiAction) => void;
  readonly quit: () => void;
  readonly lang: Lang;
  /** The state, views and row count after the actions dispatched so far (a filter change looks up its kept row there). */
  readonly after?: () => { readonly ui: UiState; readonly views: AppViews; readonly count: number };
}

/** The net move of a chunk of j/k (a held or fast-typed key arrives as "jjj"). */
function jkDelta(input: string): number {
  return input.split('').reduce((d, c) => d + (c === 'j' ? 1 : -1), 0);
}

/**
 * The row a move key takes a cursor at `at` (-1: none yet) to, among `count` rows, or
 * null when the key is not a move key or there are no rows.
 */
function moveTarget(input: string, key: InkKey, at: number, count: number, page: number): number | null {
  if (count === 0) return null;
  let to: number;
  if (/^[jk]+$/.test(input)) to = at + jkDelta(input);
  else if (key.upArrow) to = at - 1;
  else if (key.downArrow) to = at + 1;
  else if (key.pageUp) to = at - page;
  else if (key.pageDown) to = at + page;
  else if (input === 'g') to = 0;
  else if (input === 'G') to = count - 1;
  else return null;
  return Math.max(0, Math.min(to, count - 1));
}

/** Keys while a filter is typed: they edit it; Enter keeps it, Esc drops it. The cursor stays on its row while that row is shown. */
function filterKey(input: string, key: InkKey, ctx: KeyContext): void {
  const typed = filterOf(ctx.ui);
  const kept = rowKeyOf(ctx.ui, ctx.views, cursorOf(ctx.ui));
  if (key.escape) ctx.dispatch({ type: 'filterEnd', keep: false });
  else if (key.return) return ctx.dispatch({ type: 'filterEnd', keep: true });
  else if (key.backspace || key.delete) ctx.dispatch({ type: 'filterInput', text: typed.slice(0, -1) });
  else if (input && !key.ctrl && !key.meta) ctx.dispatch({ type: 'filterInput', text: typed + input });
  else return;
  const next = kept === null ? null : ctx.after?.();
  if (!next || kept === null) return;
  const at = rowIndexOf(next.ui, next.views, next.count, kept);
  if (at > 0) ctx.dispatch({ type: 'jumpTo', index: at, count: next.count });
}

/** Keys while the `:` line is open: Tab completes, Enter runs, Esc closes, others edit. */
function commandKey(input: string, key: InkKey, line: NonNullable<UiState['commandLine']>, ctx: KeyContext): void {
  const { dispatch } = ctx;
  if (key.escape) return dispatch({ type: 'command', line: null });
  if (key.tab) {
    const done = completeCommand(line.text, ctx.snapshot);
    return dispatch({ type: 'command', line: { text: done.text, choices: done.choices, error: null } });
  }
  if (key.return) {
    const result = runCommand(line.text, ctx.snapshot, ctx.ui.sorts['services']);
    if (result.kind === 'error') return dispatch({ type: 'command', line: { ...line, error: result.message } });
    dispatch({ type: 'command', line: null });
    if (result.kind === 'quit') return COMMANDS.quit(ctx);
    for (const action of result.actions) dispatch(action);
    return;
  }
  if (key.backspace || key.delete) return dispatch({ type: 'command', line: { text: line.text.slice(0, -1), choices: [], error: null } });
  if (input && !key.ctrl && !key.meta) dispatch({ type: 'command', line: { text: line.text + input, choices: [], error: null } });
}

/** The key after `s`: a column's letter sorts by it (again: reversed); any other key only ends the choice. */
function sortKeyPress(input: string, ctx: KeyContext): void {
  const choices = sortChoices(ctx.ui.pane, currentRules(ctx.ui).kind === 'chains', ctx.lang);
  const letters = sortLetters(choices.map((c) => c.title));
  const at = letters.indexOf(input);
  const column = at >= 0 ? choices[at] : undefined;
  ctx.dispatch(column ? { type: 'sortBy', column: column.key } : { type: 'sortPick', on: false });
}

/**
 * Keys while a name is typed in the DNS pane's prompt: they edit it; Enter asks it, Esc closes
 * the prompt. Ink hands a chunk of input as one string (a paste, fast typing over a slow link):
 * a line break in it — CR, or LF (Ctrl-J, some terminals' Enter) — is Enter, after the text before it.
 */
function nameKey(input: string, key: InkKey, ctx: KeyContext): void {
  const typed = ctx.ui.dnsPrompt ?? '';
  const lineBreak = key.ctrl || key.meta ? -1 : input.search(/[\r\n]/);
  if (key.escape) ctx.dispatch({ type: 'dnsNameEnd', keep: false });
  else if (key.return) ctx.dispatch({ type: 'dnsNameEnd', keep: true });
  else if (key.backspace || key.delete) ctx.dispatch({ type: 'dnsNameInput', text: typed.slice(0, -1) });
  else if (lineBreak >= 0) {
    ctx.dispatch({ type: 'dnsNameInput', text: typed + nameText(input.slice(0, lineBreak)) });
    ctx.dispatch({ type: 'dnsNameEnd', keep: true });
  } else if (input && !key.ctrl && !key.meta) ctx.dispatch({ type: 'dnsNameInput', text: typed + nameText(input) });
}

/** A DNS name has no blanks or control characters: typed or pasted ones are dropped. */
function nameText(input: string): string {
  return input.replace(/[\s\p{Cc}]/gu, '');
}

/** Step mode from the Service under the cursor: a pod on this node to its ClusterIP. */
function startStep({ ui, views, snapshot, dispatch }: KeyContext): void {
  const row = views.services.rows?.[cursorOf(ui)];
  if (!row || !snapshot) return;
  const packet = defaultStepPacket(snapshot, row.namespace, row.name);
  dispatch({ type: 'selectService', service: formatServiceRef(row) });
  if ('from' in packet) dispatch({ type: 'startStep', from: packet.from, to: packet.to, ...(packet.entry ? { entry: packet.entry } : {}) });
  else dispatch({ type: 'stepNoPacket', reason: packet.reason });
}

/** `d`: the findings of the Service under the cursor (the diagnosis is made now if it was not). */
function diagnose({ ui, views, dispatch }: KeyContext): void {
  const row = views.services.rows?.[cursorOf(ui)];
  if (!row || ui.findings) return;
  dispatch({ type: 'selectService', service: formatServiceRef(row) });
  dispatch({ type: 'openFindings' });
}

/** Enter: open the Service's dataplane (Services), the proving row of a finding, or the chain or set under the cursor (Rules). */
function open({ ui, views, snapshot, dispatch }: KeyContext): void {
  const cursor = cursorOf(ui);
  if (ui.pane === 'services' && ui.findings) {
    for (const action of openEvidenceActions(views.findings?.findings[cursor]?.evidence ?? [])) dispatch(action);
    return;
  }
  if (ui.find !== null) {
    const hit = snapshot ? findHits(snapshot, ui.find, ui.conntrackSort).hits[cursor] : undefined;
    if (hit) dispatch({ type: 'openTarget', target: hit.target });
    return;
  }
  if (ui.pane === 'step') {
    if (views.step.kind !== 'result' || !snapshot) return;
    const at = Math.min(cursor, views.step.result.steps.length - 1);
    for (const action of stepTargetActions(snapshot, views.step.result, at, ui)) dispatch(action);
    return;
  }
  if (ui.pane === 'services') {
    const row = views.services.rows?.[cursor];
    if (!row || !snapshot) return;
    dispatch({ type: 'selectService', service: formatServiceRef(row) });
    for (const action of openServiceActions(snapshot, row)) dispatch(action);
    return;
  }
  if (ui.pane === 'rules' && views.rules) {
    const loc = currentRules(ui);
    const rules = views.rules;
    if (rules.kind === 'chains') {
      const row = rules.rows.at(cursor);
      if (!row) return;
      if (row.kind === 'chain') dispatch({ type: 'openRules', location: { kind: 'chain', ruleset: row.ruleset, table: row.table, chain: row.name } });
      else dispatch({ type: 'openRules', location: { kind: 'set', ruleset: row.ruleset, table: row.table, set: row.name } });
    } else if (rules.kind === 'chain' && loc.kind !== 'chains') {
      const row = rules.rows.at(cursor);
      if (row?.jumpTo) dispatch({ type: 'openRules', location: { kind: 'chain', ruleset: loc.ruleset, table: loc.table, chain: row.jumpTo } });
      else if (row?.jumpSet) dispatch({ type: 'openRules', location: { kind: 'set', ruleset: loc.ruleset, table: loc.table, set: row.jumpSet } });
    }
  }
}

/** Space: pin or unpin the shown Service (src/ui/shown-service.ts). */
function pin({ ui, views, dispatch }: KeyContext): void {
  const inServices = ui.pane === 'services';
  const highlighted = highlightedService(views.services.rows, ui);
  dispatch({ type: 'pinService', service: togglePin(inServices, inServices ? highlighted : (views.shown?.service ?? null), ui) });
}

/** The branches of the walk's first random choice (0: none). */
function stepBranches(views: AppViews): number {
  return views.step.kind === 'result' ? (views.step.result.steps.find((s) => s.branches && s.branches.length > 1)?.branches?.length ?? 0) : 0;
}

/** Each command's effect (`switchPane` is done by {@link handleKey}: it carries its pane). */
const COMMANDS: Readonly<Record<Exclude<Command, 'switchPane'>, (ctx: KeyContext) => void>> = {
  quit: (ctx) => {
    ctx.dispatch({ type: 'quit' });
    ctx.quit();
  },
  help: (ctx) => ctx.dispatch({ type: 'toggleHelp' }),
  back: (ctx) => ctx.dispatch({ type: 'back' }),
  prevPane: (ctx) => ctx.dispatch({ type: 'nextPane', delta: -1 }),
  nextPane: (ctx) => ctx.dispatch({ type: 'nextPane', delta: 1 }),
  up: (ctx) => ctx.dispatch({ type: 'move', delta: -1, count: ctx.count }),
  down: (ctx) => ctx.dispatch({ type: 'move', delta: 1, count: ctx.count }),
  pageUp: (ctx) => ctx.dispatch({ type: 'move', delta: -ctx.page, count: ctx.count }),
  pageDown: (ctx) => ctx.dispatch({ type: 'move', delta: ctx.page, count: ctx.count }),
  top: (ctx) => ctx.dispatch({ type: 'jumpTo', index: 0, count: ctx.count }),
  bottom: (ctx) => ctx.dispatch({ type: 'jumpTo', index: ctx.count - 1, count: ctx.count }),
  open,
  diagnose,
  filter: (ctx) => ctx.dispatch({ type: 'filterStart' }),
  refresh: (ctx) => ctx.session.refreshNow(true),
  trace: startStep,
  pin,
  stepNext: (ctx) => ctx.dispatch({ type: 'move', delta: 1, count: ctx.count }),
  stepPrev: (ctx) => ctx.dispatch({ type: 'move', delta: -1, count: ctx.count }),
  branch: (ctx) => ctx.dispatch({ type: 'stepBranch', branches: stepBranches(ctx.views) }),
  sortPick: (ctx) => ctx.dispatch({ type: 'sortPick', on: true }),
  command: (ctx) => ctx.dispatch({ type: 'command', line: { text: '', choices: [], error: null } }),
  sortReverse: (ctx) => ctx.dispatch({ type: 'sortReverse' }),
  scope: (ctx) => ctx.dispatch({ type: 'conntrackScopeToggle' }),
  askName: (ctx) => ctx.dispatch({ type: 'dnsNameStart' }),
};

/**
 * What works while the help box is open (as in k9s' help): the move keys scroll it, and the
 * keys that close it or leave it; the rest would act on the pane it covers, unseen.
 */
const HELP_COMMANDS: ReadonlySet<Command> = new Set<Command>(['up', 'down', 'pageUp', 'pageDown', 'top', 'bottom', 'help', 'back', 'quit', 'switchPane', 'nextPane', 'prevPane']);

/**
 * Acts on one key (after the tour bar had its turn): edits a filter being typed; on the
 * Modes pane a move key moves to (and pins) another Service; a chunk of j/k moves by all
 * of it (with the help open: scrolls it); else the key's bound command, if any.
 */
export function handleKey(input: string, key: InkKey, ctx: KeyContext): void {
  const { ui, views, dispatch } = ctx;
  if (ui.typingFilter) return filterKey(input, key, ctx);
  if (ui.sortPicking) return sortKeyPress(input, ctx);
  if (ui.commandLine) return commandKey(input, key, ui.commandLine, ctx);
  if (ui.dnsPrompt !== null) return nameKey(input, key, ctx);
  // The Modes pane's cursor is the Service it shows: moving it there pins the row's Service.
  if (ui.pane === 'compare' && !ui.help && ui.find === null && views.compareServices && !key.return) {
    const rows = views.compareServices;
    const at = views.shown ? rows.indexOf(views.shown.service) : -1;
    const to = moveTarget(input, key, at, rows.length, ctx.page);
    if (to !== null) {
      const row = rows[to];
      if (row) dispatch({ type: 'pinService', service: row });
      return;
    }
  }
  if (input.length > 1 && /^[jk]+$/.test(input)) return dispatch({ type: 'move', delta: jkDelta(input), count: ctx.count });
  const bound = commandOf(input, key, ui.pane);
  if (!bound || (ui.help && !HELP_COMMANDS.has(bound.command))) return;
  if (bound.command === 'switchPane') {
    if (bound.pane) dispatch({ type: 'switchPane', pane: bound.pane });
    return;
  }
  COMMANDS[bound.command](ctx);
}
