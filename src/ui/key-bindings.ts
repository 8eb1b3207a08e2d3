/**
 * Key bindings as data: each command, the keys that give it, the panes it works in, and
 * the help row that explains it. The `?` overlay is generated from this table and the key
 * handler reads it, so a key and its help cannot drift apart (the shape follows
 * gemini-cli's `keyBindings.ts`: a command enum, its keys, its description).
 */
import type { MessageKey } from '../text/i18n.js';
import { followingPanes, paneByKey, PANE_REGISTRY, type PaneId } from './pane-registry.js';

/** Everything a key can ask the app to do. */
export type Command =
  | 'quit'
  | 'diagnose'
  | 'help'
  | 'back'
  | 'prevPane'
  | 'nextPane'
  | 'switchPane'
  | 'up'
  | 'down'
  | 'pageUp'
  | 'pageDown'
  | 'top'
  | 'bottom'
  | 'open'
  | 'filter'
  | 'refresh'
  | 'trace'
  | 'pin'
  | 'stepNext'
  | 'stepPrev'
  | 'branch'
  | 'sortPick'
  | 'command'
  | 'sortReverse'
  | 'scope'
  | 'askName';

/** The named keys of Ink's `useInput` key object that a binding may ask for. */
export type KeyName = 'upArrow' | 'downArrow' | 'pageUp' | 'pageDown' | 'return' | 'escape' | 'backspace' | 'delete' | 'tab';

/** Ink's key flags as `useInput` passes them (only the fields read here). */
export type InkKey = Readonly<Partial<Record<KeyName | 'ctrl' | 'shift' | 'meta', boolean>>>;

/** One key: a typed character (`input`) or a named key, with Ctrl/Shift when they must be held. */
export interface KeySpec {
  readonly input?: string;
  readonly key?: KeyName;
  readonly ctrl?: boolean;
  readonly shift?: boolean;
}

/** A command, its keys, where it works, and its help row (rows of the same description merge). */
export interface KeyBinding {
  readonly command: Command;
  readonly keys: readonly KeySpec[];
  /** The panes it works in: a list, `following` (the panes that follow the shown Service), or every pane when absent. */
  readonly panes?: readonly PaneId[] | 'following';
  /** The help row's description; the first binding of a description gives its `label`. */
  readonly description: MessageKey;
  readonly label?: string;
}

/** The panes whose tables sort by a chosen column (src/ui/sort-columns.ts). */
const SORTABLE_PANES: readonly PaneId[] = ['services', 'rules', 'lb', 'conntrack'];

const ch = (input: string, more: Omit<KeySpec, 'input'> = {}): KeySpec => ({ input, ...more });
const named = (key: KeyName, more: Omit<KeySpec, 'key'> = {}): KeySpec => ({ key, ...more });

/**
 * The bindings, in the order they are tried and shown. `switchPane` has no keys here: each
 * pane's digit is its registry entry's `key` (src/ui/pane-registry.tsx).
 */
export const KEY_BINDINGS: readonly KeyBinding[] = [
  { command: 'switchPane', keys: [], description: 'key.panes' },
  { command: 'prevPane', keys: [named('tab', { shift: true })], description: 'key.panes' },
  { command: 'nextPane', keys: [named('tab')], description: 'key.panes' },
  { command: 'up', keys: [named('upArrow'), ch('k')], description: 'key.move', label: '↑↓  j k' },
  { command: 'down', keys: [named('downArrow'), ch('j')], description: 'key.move' },
  { command: 'pageUp', keys: [named('pageUp')], description: 'key.page', label: 'PgUp PgDn' },
  { command: 'pageDown', keys: [named('pageDown')], description: 'key.page' },
  { command: 'top', keys: [ch('g')], description: 'key.ends', label: 'g  G' },
  { command: 'bottom', keys: [ch('G')], description: 'key.ends' },
  { command: 'open', keys: [named('return')], description: 'key.open', label: 'Enter' },
  { command: 'back', keys: [named('escape'), named('backspace'), named('delete')], description: 'key.back', label: 'Esc  ⌫' },
  { command: 'filter', keys: [ch('/')], description: 'key.filter', label: '/' },
  { command: 'command', keys: [ch(':')], description: 'key.command', label: ':' },
  // No key of its own: the help row says what `:find` does (src/ui/find-view.ts).
  { command: 'command', keys: [], description: 'key.findAll', label: ':find' },
  { command: 'refresh', keys: [ch('r')], description: 'key.refresh', label: 'r' },
  { command: 'trace', keys: [ch('t')], panes: ['services'], description: 'key.trace', label: 't' },
  { command: 'diagnose', keys: [ch('d')], panes: ['services'], description: 'key.diagnose', label: 'd' },
  { command: 'pin', keys: [ch(' ')], panes: 'following', description: 'key.pin', label: 'Space' },
  { command: 'stepNext', keys: [ch('n')], panes: ['step'], description: 'key.stepMove', label: 'n  p' },
  { command: 'stepPrev', keys: [ch('p')], panes: ['step'], description: 'key.stepMove' },
  { command: 'branch', keys: [ch('b')], panes: ['step'], description: 'key.branch', label: 'b' },
  { command: 'sortPick', keys: [ch('s')], panes: SORTABLE_PANES, description: 'key.sort', label: 's  S' },
  { command: 'sortReverse', keys: [ch('S')], panes: SORTABLE_PANES, description: 'key.sort' },
  { command: 'scope', keys: [ch('a')], panes: ['conntrack'], description: 'key.scope', label: 'a' },
  { command: 'askName', keys: [ch('n')], panes: ['dns'], description: 'key.askName', label: 'n' },
  { command: 'help', keys: [ch('?')], description: 'key.help', label: '?' },
  { command: 'quit', keys: [ch('q'), ch('c', { ctrl: true })], description: 'key.quit', label: 'q  Ctrl-C' },
];

function matches(spec: KeySpec, input: string, key: InkKey): boolean {
  if (spec.input !== undefined && spec.input !== input) return false;
  if (spec.key !== undefined && !key[spec.key]) return false;
  if (spec.ctrl !== undefined && Boolean(key.ctrl) !== spec.ctrl) return false;
  if (spec.shift && !key.shift) return false;
  return spec.input !== undefined || spec.key !== undefined;
}

function worksIn(binding: KeyBinding, pane: PaneId): boolean {
  if (binding.panes === undefined) return true;
  if (binding.panes === 'following') return followingPanes().includes(pane);
  return binding.panes.includes(pane);
}

/** What a key asks for on `pane`: a command (with the pane for `switchPane`), or null for a key bound to nothing there. */
export function commandOf(input: string, key: InkKey, pane: PaneId): { readonly command: Command; readonly pane?: PaneId } | null {
  if (!key.ctrl && !key.meta) {
    const target = paneByKey(input);
    if (target) return { command: 'switchPane', pane: target.id };
  }
  for (const b of KEY_BINDINGS) {
    if (worksIn(b, pane) && b.keys.some((k) => matches(k, input, key))) return { command: b.command };
  }
  return null;
}

/** The help rows: one per description, in table order, labelled by its first binding (the pane keys: `1-N  Tab`). */
export function helpRows(): readonly (readonly [string, MessageKey])[] {
  const rows: [string, MessageKey][] = [];
  const keys = PANE_REGISTRY.map((p) => p.key);
  for (const b of KEY_BINDINGS) {
    if (rows.some(([, d]) => d === b.description)) continue;
    const label = b.command === 'switchPane' ? `${keys[0]}-${keys[keys.length - 1]}  Tab` : (b.label ?? '');
    rows.push([label, b.description]);
  }
  return rows;
}

/** The labels of the move keys (`↑↓  j k`, `PgUp PgDn`, `g  G`): what scrolls a list, and the help box's scroll hint. */
export function scrollKeyLabels(): readonly string[] {
  const scroll: readonly Command[] = ['up', 'pageUp', 'top'];
  return KEY_BINDINGS.filter((b) => scroll.includes(b.command) && b.label).map((b) => b.label!);
}
