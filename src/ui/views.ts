/**
 * From snapshot + UI state to each pane's props. Selection logic only: the domain
 * work is in src/analysis. Pure, so frame tests and the app share it.
 */
import { countByReplySource } from '../analysis/conntrack-nat.js';
import { findTableByLabel, iptablesNftTables, nftChainListIndex, nftChainRows, nftEndpointCountLookup, nftSetRowIndex, rowFilterText } from '../analysis/nft-view.js';
import { chainListIndex, chainRowIndex, filteredRows, iptablesRulesets, type IptablesRulesetId, type RowIndex } from '../analysis/rules-view.js';
import { buildServiceView, endpointAddresses, type ServiceRow } from '../analysis/service-view.js';
import type { Diagnostic } from '../model/diagnostics.js';
import { rulesetReadState } from '../model/iptables-facts.js';
import { nftReadState } from '../model/nft-facts.js';
import type { ConntrackEntry } from '../model/conntrack.js';
import { isPending, type NodeSnapshot, type SnapshotPart } from '../model/snapshot.js';
import type { SessionState } from '../collect/session.js';
import type { RulesListRow, RulesPaneData } from './panes/RulesPane.js';
import { t, tf, type Lang, type MessageKey } from '../text/i18n.js';
import { currentRules, type UiState } from './state.js';
import { isPlainFilter, rowMatcher } from '../text/row-filter.js';
import { heldRows } from '../analysis/chain-search.js';

/** The parts the Rules pane shows: it waits for all of them (staged load). */
const RULESET_PARTS: readonly SnapshotPart[] = ['iptables', 'ip6tables', 'iptablesLegacy', 'nft'];

const replyCounts = new WeakMap<readonly ConntrackEntry[], Map<string, number>>();

/** {@link countByReplySource}, once per conntrack table (a cursor move must not recount 1M entries). */
function replySourceCounts(entries: readonly ConntrackEntry[]): Map<string, number> {
  let counts = replyCounts.get(entries);
  if (!counts) replyCounts.set(entries, (counts = countByReplySource(entries)));
  return counts;
}

/** Keeps rows whose text matches `filter` (src/text/row-filter.ts: text, a regex, `!` inverse; any case); all rows when empty. */
export function applyFilter<T>(rows: readonly T[], filter: string, text: (row: T) => string): readonly T[] {
  if (!filter) return rows;
  const { test } = rowMatcher(filter);
  return rows.filter((r) => test(text(r)));
}

const servicesFiltered = new WeakMap<readonly ServiceRow[], { readonly needle: string; readonly rows: readonly ServiceRow[] }>();

/** What the Services filter matches: `ns/name type clusterIPs endpoint-addresses`. */
function serviceText(r: ServiceRow): string {
  return `${r.namespace}/${r.name} ${r.type} ${r.clusterIPs.join(' ')} ${endpointAddresses(r).join(' ')}`;
}

/**
 * The Services pane rows (null without API objects), filtered. A filter that contains the
 * previous one (typing on) refines the previous result instead of scanning every Service.
 */
export function servicesView(snapshot: NodeSnapshot | null, filter: string): { rows: readonly ServiceRow[] | null; diagnostics: readonly Diagnostic[] } {
  const api = snapshot?.api;
  if (!snapshot || !api?.value) return { rows: null, diagnostics: api?.diagnostics ?? [] };
  const all = buildServiceView(api.value, { nodeName: snapshot.meta.node }).rows;
  if (!filter) return { rows: all, diagnostics: api.diagnostics };
  const needle = filter.toLowerCase();
  const last = servicesFiltered.get(all);
  if (last?.needle === needle) return { rows: last.rows, diagnostics: api.diagnostics };
  // A plain filter that grew refines the last result; a regex or `!` filter scans every Service.
  const refine = last && isPlainFilter(needle) && isPlainFilter(last.needle) && needle.includes(last.needle);
  const rows = applyFilter(refine ? last.rows : all, needle, serviceText);
  servicesFiltered.set(all, { needle, rows });
  return { rows, diagnostics: api.diagnostics };
}

/**
 * The rulesets' diagnostics for the Rules pane, and how many iptables and nftables chains are
 * not read yet (`unreadChains`): a ruleset parsed on first read gives what it knows so far
 * (src/model/iptables-facts.ts `rulesetReadState`, src/model/nft-facts.ts `nftReadState`)
 * instead of parsing every chain to give all.
 */
function rulesetDiagnostics(snapshot: NodeSnapshot): { diagnostics: Diagnostic[]; unreadChains: number } {
  const diagnostics: Diagnostic[] = [];
  let unreadChains = 0;
  for (const p of [snapshot.iptables, snapshot.ip6tables, snapshot.iptablesLegacy]) {
    const state = p?.value ? rulesetReadState(p.value) : undefined;
    if (state) unreadChains += state.unreadChains;
    if (p) diagnostics.push(...(state ? state.diagnosticsSoFar : p.diagnostics));
  }
  const nft = snapshot.nft;
  const nftState = nft?.value ? nftReadState(nft.value) : undefined;
  if (nftState) unreadChains += nftState.unreadChains;
  if (nft) diagnostics.push(...(nftState ? nftState.diagnosticsSoFar : nft.diagnostics));
  return { diagnostics, unreadChains };
}

const rulesListCache = new WeakMap<NodeSnapshot, RowIndex<RulesListRow>>();

/**
 * Every chain, set and map of every ruleset, iptables first, then nftables in hook order,
 * by position: rows are built when the pane asks for them (272,000 chains on a large node).
 */
export function rulesList(snapshot: NodeSnapshot): RowIndex<RulesListRow> {
  const cached = rulesListCache.get(snapshot);
  if (cached) return cached;
  const ipt = chainListIndex(snapshot);
  const nftModel = snapshot.nft?.value;
  const nft = nftModel ? nftChainListIndex(nftModel, iptablesNftTables(snapshot)) : null;
  const index: RowIndex<RulesListRow> = {
    length: ipt.length + (nft?.length ?? 0),
    row(i) {
      if (i >= ipt.length) return { ruleset: 'nft', ...nft!.row(i - ipt.length) };
      const r = ipt.row(i);
      return { ruleset: r.ruleset, kind: 'chain', table: r.table, name: r.chain, detail: '', policy: r.policy, count: r.ruleCount, packets: r.packets, bytes: r.bytes };
    },
    text: (i) => (i >= ipt.length ? nft!.text(i - ipt.length) : ipt.text(i)),
    held: (i) => (i >= ipt.length ? nft!.held!(i - ipt.length) : ipt.held!(i)),
    parts: {
      prefix: (i) => (i >= ipt.length ? nft!.parts!.prefix(i - ipt.length) : ipt.parts!.prefix(i)),
      name: (i) => (i >= ipt.length ? nft!.parts!.name(i - ipt.length) : ipt.parts!.name(i)),
    },
  };
  rulesListCache.set(snapshot, index);
  return index;
}

/** The Rules pane data for the current location, filtered (the chain list over what each chain holds: src/analysis/chain-search.ts). */
export function rulesView(snapshot: NodeSnapshot | null, session: SessionState, ui: UiState, filter: string, lang: Lang): RulesPaneData {
  if (!snapshot) return { kind: 'message', text: session.error ? tf(lang, 'status.failed', { reason: session.error }) : t(lang, 'status.loading'), diagnostics: [] };
  if (RULESET_PARTS.some((p) => isPending(snapshot, p))) return { kind: 'message', text: t(lang, 'status.loading'), diagnostics: [] };
  const { diagnostics, unreadChains } = rulesetDiagnostics(snapshot);
  // Only a deferred ruleset's pane data has the field: an eager one's is as before.
  const unread = unreadChains > 0 ? { unreadChains } : {};
  const loc = currentRules(ui);
  const prev = ui.rulesStack[ui.rulesStack.length - 2];
  const from = loc.kind === 'chain' ? loc.from : undefined;
  // Where Esc goes (src/ui/state.ts `back`): a chain or set opened from a step or a find hit goes back there first.
  const opened = ui.returnTo && ui.rulesStack.length <= ui.returnTo.depth ? ui.returnTo : null;
  const backTo = opened
    ? opened.find !== null
      ? `:find ${opened.find}`
      : // Each pane's tab title is `pane.<id>` (src/ui/pane-registry.tsx; the registry imports these views).
        t(lang, `pane.${opened.pane}` as MessageKey)
    : from
      ? t(lang, 'pane.services')
      : prev
        ? prev.kind === 'chain'
          ? prev.chain
          : prev.kind === 'set'
            ? `@${prev.set}`
            : t(lang, 'rules.tables')
        : null;
  if (loc.kind === 'chains') {
    const list = rulesList(snapshot);
    if (list.length === 0) {
      const err = snapshot.iptables?.error ?? snapshot.nft?.error;
      return { kind: 'message', text: err ? tf(lang, 'status.failed', { reason: err }) : t(lang, 'rules.noRules'), diagnostics, ...unread };
    }
    return { kind: 'chains', rows: heldRows(list, list, filter), diagnostics, ...unread };
  }
  // A live source is read again each refresh: the chain is gone from the node, not from a file.
  const missingKey = snapshot.meta.source.live ? 'rules.missing.live' : 'rules.missing.replay';
  const missing = (what: string): RulesPaneData => ({ kind: 'message', text: tf(lang, missingKey, { table: loc.table, what, ruleset: loc.ruleset }), diagnostics, ...unread });
  if (loc.ruleset === 'nft') {
    const nft = snapshot.nft?.value;
    if (!nft) return missing(loc.kind === 'set' ? `@${loc.set}` : loc.chain);
    if (loc.kind === 'set') {
      const index = nftSetRowIndex(nft, loc.table, loc.set);
      if (!index) return missing(`@${loc.set}`);
      return { kind: 'chain', ruleset: 'nft', table: loc.table, chain: `@${loc.set}`, policy: null, rows: filteredRows(index, index.set, filter), diagnostics, ...unread, backTo, derivedNote: false };
    }
    const table = findTableByLabel(nft, loc.table);
    // Counts from a conntrack table still being parsed would not be final: none until it is.
    const entries = isPending(snapshot, 'conntrack') ? undefined : snapshot.conntrack?.value?.entries;
    const derived = table && entries ? nftEndpointCountLookup(table, replySourceCounts(entries)) : undefined;
    const rows = nftChainRows(nft, loc.table, loc.chain, derived);
    if (!rows) return missing(loc.chain);
    const chain = table?.chains.find((c) => c.name === loc.chain);
    return {
      kind: 'chain',
      ruleset: 'nft',
      table: loc.table,
      chain: loc.chain,
      policy: chain?.base?.policy ?? null,
      rows: applyFilter(rows, filter, rowFilterText),
      diagnostics,
      ...unread,
      backTo,
      derivedNote: rows.some((r) => r.derivedCount !== undefined && r.derivedCount !== null),
    };
  }
  if (loc.kind !== 'chain') return missing('?');
  const ruleset = iptablesRulesets(snapshot).find((r) => r.id === (loc.ruleset as IptablesRulesetId))?.ruleset;
  // Rows built only for the lines a frame shows: KUBE-SERVICES has one rule per Service port.
  const index = ruleset ? chainRowIndex(ruleset, loc.table, loc.chain, session.rates) : null;
  if (!ruleset || !index) return missing(loc.chain);
  return { kind: 'chain', ruleset: loc.ruleset, table: loc.table, chain: loc.chain, policy: index.chain.policy, rows: filteredRows(index, index.chain, filter), diagnostics, ...unread, backTo, derivedNote: false };
}
