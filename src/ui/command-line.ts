/**
 * The `:` command line, as k9s has one: `:svc web` (the Services pane on that Service, or
 * filtered by the text when no Service has that name), `:ns kube-system` (Services of a
 * namespace), `:rules KUBE-SERVICES` (that chain or set in the Rules pane), `:trace from
 * client to web:80 nodeport established` (the Step pane on that packet), `:find 10.96.0.10`
 * (every row of every pane holding it), a pane's name (`:conntrack`), `:q`. Tab completes
 * the command, then its argument from the capture (Service names, namespaces, chain names;
 * for `:trace` each word: Pods, Services and their ports, frontends). Pure: a command becomes
 * reducer actions; the App runs them.
 */
import { buildServiceView } from '../analysis/service-view.js';
import { chooseTracePacket, traceWordChoices, type StartTrace } from '../analysis/trace-choice.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import { formatServiceRef } from '../model/service-ref.js';
import { PANE_IDS, type PaneId } from './pane-ids.js';
import type { UiAction } from './state.js';
import { rulesList } from './views.js';
import { serviceSortColumns } from './sort-columns.js';
import { sortRows, type TableSort } from './table-sort.js';

/** The commands, each with the panes' names as aliases (k9s accepts `svc` and `services`). */
const COMMANDS: readonly { readonly name: string; readonly aliases: readonly string[] }[] = [
  { name: 'svc', aliases: ['services', 'service'] },
  { name: 'ns', aliases: ['namespace'] },
  { name: 'rules', aliases: ['chain'] },
  { name: 'trace', aliases: ['step'] },
  { name: 'find', aliases: ['search'] },
  { name: 'q', aliases: ['quit'] },
  ...PANE_IDS.filter((p) => p !== 'services' && p !== 'rules' && p !== 'step').map((p) => ({ name: p === 'compare' ? 'modes' : p, aliases: p === 'compare' ? ['compare'] : [] })),
];

/** What a command line asks for: actions for the reducer, quitting, or why it cannot be done. */
export type CommandResult = { readonly kind: 'actions'; readonly actions: readonly UiAction[] } | { readonly kind: 'quit' } | { readonly kind: 'error'; readonly message: string };

function commandNamed(word: string): string | null {
  const w = word.toLowerCase();
  return COMMANDS.find((c) => c.name === w || c.aliases.includes(w))?.name ?? null;
}

function serviceRefs(snapshot: NodeSnapshot | null, sort?: TableSort): string[] {
  const api = snapshot?.api?.value;
  if (!api) return [];
  // In the order the Services pane shows them, so a jump lands on the row named.
  const rows = buildServiceView(api, { nodeName: snapshot.meta.node }).rows;
  return sortRows(rows, serviceSortColumns('en'), sort).map((r) => formatServiceRef(r));
}

/** Chain and set names of every ruleset, each once (the Rules pane's list). */
function chainNames(snapshot: NodeSnapshot | null, prefix: string): string[] {
  if (!snapshot) return [];
  const list = rulesList(snapshot);
  const out = new Set<string>();
  const p = prefix.toLowerCase();
  for (let i = 0; i < list.length && out.size < 200; i++) {
    const name = list.parts ? list.parts.name(i) : list.row(i).name;
    if (name.toLowerCase().startsWith(p)) out.add(name);
  }
  return [...out];
}

/** What Tab may complete the argument of `command` to. */
function argumentChoices(command: string, arg: string, snapshot: NodeSnapshot | null): string[] {
  if (command === 'svc') {
    const refs = serviceRefs(snapshot);
    return [...refs.filter((r) => r.startsWith(arg)), ...refs.map((r) => r.split('/')[1]!).filter((n) => n.startsWith(arg))];
  }
  if (command === 'ns') return [...new Set(serviceRefs(snapshot).map((r) => r.split('/')[0]!))].filter((n) => n.startsWith(arg));
  if (command === 'rules') return chainNames(snapshot, arg);
  if (command === 'find') return serviceRefs(snapshot).map((r) => r.split('/')[1]!).filter((n) => n.startsWith(arg));
  return [];
}

/** The longest common start of `words`. */
function commonPrefix(words: readonly string[]): string {
  if (words.length === 0) return '';
  let p = words[0]!;
  for (const w of words) while (!w.startsWith(p)) p = p.slice(0, -1);
  return p;
}

/** Completes the last word of `text` among `choices` (a space after a word completed whole). */
function completeLastWord(text: string, choices: readonly string[]): { readonly text: string; readonly choices: readonly string[] } {
  const at = text.lastIndexOf(' ') + 1;
  const last = text.slice(at);
  const sorted = [...new Set(choices)].sort();
  if (sorted.length === 0) return { text, choices: [] };
  const completed = sorted.length === 1 ? `${sorted[0]!} ` : commonPrefix(sorted);
  return { text: `${text.slice(0, at)}${completed.length > last.length ? completed : last}`, choices: sorted.slice(0, 20) };
}

/**
 * Completion of the text typed after `:`: the command word first, then its argument.
 * Returns the completed text (unchanged when nothing completes) and the choices left.
 */
export function completeCommand(text: string, snapshot: NodeSnapshot | null): { readonly text: string; readonly choices: readonly string[] } {
  const space = text.indexOf(' ');
  if (space < 0) {
    const names = COMMANDS.map((c) => c.name).filter((n) => n.startsWith(text.toLowerCase()));
    if (names.length === 1) return { text: `${names[0]} `, choices: names };
    return { text: commonPrefix(names) || text, choices: names };
  }
  const command = commandNamed(text.slice(0, space));
  const arg = text.slice(space + 1).trimStart();
  if (!command) return { text, choices: [] };
  if (command === 'trace') return completeLastWord(text, traceWordChoices(snapshot, arg.split(/\s+/).slice(0, -1), arg.split(/\s+/).pop() ?? ''));
  const choices = [...new Set(argumentChoices(command, arg, snapshot))].sort();
  if (choices.length === 0) return { text, choices };
  const completed = choices.length === 1 ? choices[0]! : commonPrefix(choices);
  return { text: `${text.slice(0, space)} ${completed.length > arg.length ? completed : arg}`, choices: choices.slice(0, 20) };
}

/** `:svc ARG`: the Service named (`ns/name` or a name only one namespace has) under the cursor, else the Services filtered by the text. */
function serviceCommand(arg: string, snapshot: NodeSnapshot | null, sort: TableSort | undefined): CommandResult {
  const refs = serviceRefs(snapshot, sort);
  const exact = refs.includes(arg) ? [arg] : refs.filter((r) => r.split('/')[1] === arg);
  if (arg === '') return { kind: 'actions', actions: [{ type: 'switchPane', pane: 'services' }] };
  if (exact.length === 1) {
    return { kind: 'actions', actions: [{ type: 'switchPane', pane: 'services' }, { type: 'setFilter', text: '' }, { type: 'jumpTo', index: refs.indexOf(exact[0]!), count: refs.length }] };
  }
  return { kind: 'actions', actions: [{ type: 'switchPane', pane: 'services' }, { type: 'setFilter', text: arg }] };
}

/** `:rules NAME`: the chain or set of that name (any case; nat first, iptables before nftables) in the Rules pane. */
function rulesCommand(arg: string, snapshot: NodeSnapshot | null): CommandResult {
  if (arg === '') return { kind: 'actions', actions: [{ type: 'switchPane', pane: 'rules' }] };
  if (!snapshot) return { kind: 'error', message: 'no capture yet' };
  const list = rulesList(snapshot);
  const want = arg.replace(/^@/, '').toLowerCase();
  let found: ReturnType<typeof list.row> | null = null;
  for (let i = 0; i < list.length; i++) {
    const row = list.row(i);
    if (row.name.toLowerCase() !== want) continue;
    found ??= row;
    // kube-proxy's chains of one name live in nat and filter: the nat one is where Services are rewritten.
    if (row.table === 'nat' || row.table.endsWith('kube-proxy')) {
      found = row;
      break;
    }
  }
  if (found) {
    const row = found;
    const location = row.kind === 'chain' ? { kind: 'chain' as const, ruleset: row.ruleset, table: row.table, chain: row.name } : { kind: 'set' as const, ruleset: row.ruleset, table: row.table, set: row.name };
    return { kind: 'actions', actions: [{ type: 'switchPane', pane: 'rules' }, { type: 'openRules', location }] };
  }
  return { kind: 'error', message: `no chain or set ${arg} in this capture` };
}

/**
 * `:trace [from] SOURCE [to] TARGET [clusterip|nodeport|externalip|lb] [first|established]`:
 * the Step pane on that packet (src/analysis/trace-choice.ts; `FROM TO:PORT[/PROTO]` as
 * `nodescope trace` takes them still works).
 */
function traceCommand(args: readonly string[], snapshot: NodeSnapshot | null): CommandResult {
  const choice = chooseTracePacket(snapshot, args);
  if (choice.kind === 'error') return { kind: 'error', message: choice.message };
  const { from, to, entry, flags } = choice.packet;
  return { kind: 'actions', actions: [{ type: 'startStep', from, to, ...(flags ? { flags } : {}), ...(entry ? { entry } : {}) }] };
}

/** Runs one command line (the text after `:`); `servicesSort` is the Services pane's sort (`:svc` jumps in that order). */
export function runCommand(text: string, snapshot: NodeSnapshot | null, servicesSort?: TableSort): CommandResult {
  const words = text.trim().split(/\s+/).filter(Boolean);
  if (words.length === 0) return { kind: 'actions', actions: [] };
  const command = commandNamed(words[0]!);
  const arg = words.slice(1).join(' ');
  switch (command) {
    case 'q':
      return { kind: 'quit' };
    case 'svc':
      return serviceCommand(arg, snapshot, servicesSort);
    case 'ns':
      // The namespace is the text before the slash of `ns/name`: an anchored expression (src/text/row-filter.ts).
      return { kind: 'actions', actions: [{ type: 'switchPane', pane: 'services' }, { type: 'setFilter', text: arg ? `^${arg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/` : '' }] };
    case 'rules':
      return rulesCommand(arg, snapshot);
    case 'trace':
      return traceCommand(words.slice(1), snapshot);
    case 'find':
      return arg ? { kind: 'actions', actions: [{ type: 'find', text: arg }] } : { kind: 'error', message: 'find needs a text: an IP, a Service name, e.g. :find 10.96.0.10' };
    case null:
      return { kind: 'error', message: `unknown command ${words[0]} (Tab completes: ${COMMANDS.map((c) => c.name).join(' ')})` };
    default: {
      const pane: PaneId = command === 'modes' ? 'compare' : (command as PaneId);
      return { kind: 'actions', actions: [{ type: 'switchPane', pane }] };
    }
  }
}

/**
 * What the TUI does with `start` once a snapshot is there: the Step pane on its walk, or the
 * `:trace` line left open with the words and what is wrong with them (a Pod or Service the
 * API objects do not hold), to be corrected there.
 */
export function startTraceActions(start: StartTrace, snapshot: NodeSnapshot): readonly UiAction[] {
  const text = `trace ${start.words}`;
  const result = runCommand(text, snapshot);
  if (result.kind === 'error') return [{ type: 'command', line: { text, choices: [], error: result.message } }];
  if (result.kind !== 'actions') return [];
  return result.actions.map((a) => (a.type === 'startStep' && start.flags ? { ...a, flags: start.flags } : a));
}
