/**
 * The cross-pane find (`:find 10.96.0.10`, issue 22 item 2): every Service, iptables and
 * nftables rule, set or map element, Cilium LB frontend or backend and conntrack flow of the
 * snapshot whose text holds the query — an IP, a Service name, any word — as a whole word (an
 * address does not match inside a longer one: `10.96.0.1` is not found in `10.96.0.10`). Each
 * hit names its pane and row ({@link OpenTarget}): Enter opens it there, Esc comes back.
 * Pure; made once per snapshot and query.
 */
import { conntrackView, DEFAULT_CONNTRACK_SORT, type ConntrackSort } from '../analysis/conntrack-view.js';
import { buildLbView, lbFilterText } from '../analysis/lb-view.js';
import { nftChainRows, nftSetRowIndex, tableLabel } from '../analysis/nft-view.js';
import { iptablesRulesets } from '../analysis/rules-view.js';
import { buildServiceView, endpointAddresses } from '../analysis/service-view.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import type { PaneId } from './pane-ids.js';
import type { OpenTarget } from './state.js';

/** Hits kept of each kind (Services, rules, elements, frontends, flows): more are counted, not listed. */
export const FIND_LIMIT = 200;

/** One hit: the pane it opens in, where it is there, its text, and the row to open. */
export interface FindHit {
  readonly pane: PaneId;
  readonly where: string;
  readonly text: string;
  readonly target: OpenTarget;
}

/** The hits of one query; `capped`: some kind had more than {@link FIND_LIMIT} hits. */
export interface FindResult {
  readonly query: string;
  readonly hits: readonly FindHit[];
  readonly capped: boolean;
}

/** A test for `query` as a whole word of a text (any case): no letter, digit, `-`, `_` or `.digit` around it. */
export function wordTest(query: string): (text: string) => boolean {
  const q = query.trim().replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  if (q === '') return () => false;
  const re = new RegExp(`(?<![\\p{L}\\p{N}_.-])${q}(?![\\p{L}\\p{N}_-]|\\.\\p{N})`, 'iu');
  return (text) => re.test(text);
}

/** Collects up to {@link FIND_LIMIT} hits of one kind. */
class Kind {
  readonly hits: FindHit[] = [];
  capped = false;
  add(hit: () => FindHit): boolean {
    if (this.hits.length >= FIND_LIMIT) {
      this.capped = true;
      return false;
    }
    this.hits.push(hit());
    return true;
  }
}

function services(snapshot: NodeSnapshot, test: (t: string) => boolean, out: Kind): void {
  const api = snapshot.api?.value;
  if (!api) return;
  buildServiceView(api, { nodeName: snapshot.meta.node }).rows.forEach((r, i) => {
    const text = `${r.namespace}/${r.name} ${r.type} ${r.clusterIPs.join(' ')} ${endpointAddresses(r).join(' ')}`;
    if (test(text) || test(r.name)) out.add(() => ({ pane: 'services', where: `${r.namespace}/${r.name}`, text, target: { kind: 'services', cursor: i } }));
  });
}

function iptablesRules(snapshot: NodeSnapshot, test: (t: string) => boolean, out: Kind): void {
  for (const { id, ruleset } of iptablesRulesets(snapshot)) {
    for (const table of ruleset.tables) {
      for (const chain of table.chains) {
        chain.rules.forEach((rule, i) => {
          if (!test(rule.raw)) return;
          const location = { kind: 'chain' as const, ruleset: id, table: table.name, chain: chain.name };
          out.add(() => ({ pane: 'rules', where: `${id} ${table.name}/${chain.name} #${rule.index}`, text: rule.raw, target: { kind: 'rules', location, cursor: i } }));
        });
      }
    }
  }
}

function nftRules(snapshot: NodeSnapshot, test: (t: string) => boolean, rules: Kind, elements: Kind): void {
  const nft = snapshot.nft?.value;
  if (!nft) return;
  for (const table of nft.tables) {
    const label = tableLabel(table);
    for (const chain of table.chains) {
      chain.rules.forEach((rule, k) => {
        if (!test(rule.raw)) return;
        rules.add(() => {
          // A numgen vmap rule is several rows (its branches): the cursor goes to the rule's own row.
          const at = (nftChainRows(nft, label, chain.name) ?? []).findIndex((r) => r.index === k + 1 && !r.branch);
          return { pane: 'rules', where: `nft ${label}/${chain.name} #${k + 1}`, text: rule.raw, target: { kind: 'rules', location: { kind: 'chain', ruleset: 'nft', table: label, chain: chain.name }, cursor: Math.max(0, at) } };
        });
      });
    }
    for (const set of table.sets) {
      const index = nftSetRowIndex(nft, label, set.name);
      for (let i = 0; index && i < index.length; i++) {
        if (!test(index.text(i))) continue;
        if (!elements.add(() => ({ pane: 'rules', where: `nft ${label} @${set.name} [${i + 1}]`, text: index.row(i).raw, target: { kind: 'rules', location: { kind: 'set', ruleset: 'nft', table: label, set: set.name }, cursor: i } }))) break;
      }
    }
  }
}

function lbEntries(snapshot: NodeSnapshot, test: (t: string) => boolean, out: Kind): void {
  const view = buildLbView(snapshot, '');
  if (view.status !== 'ready') return;
  view.frontends.forEach((f, i) => {
    if (!test(lbFilterText(f))) return;
    const backend = f.backends.find((b) => b.address !== null && test(b.address));
    const where = backend ? `backend ${backend.address} of ${f.address}` : `frontend ${f.address}`;
    out.add(() => ({ pane: 'lb', where, text: f.raw.split('\n')[0] ?? f.address, target: { kind: 'lb', cursor: i } }));
  });
}

function flows(snapshot: NodeSnapshot, test: (t: string) => boolean, sort: ConntrackSort, out: Kind): void {
  const entries = snapshot.conntrack?.value?.entries;
  if (!entries || entries.length === 0) return;
  let order: Uint32Array | null = null;
  entries.forEach((e, i) => {
    if (!test(e.raw)) return;
    out.add(() => {
      // The Conntrack pane's order (all flows, no filter, its sort): the row the cursor goes to.
      order ??= conntrackView(snapshot, { sort, filter: '', service: null }).order;
      return { pane: 'conntrack', where: `flow ${e.proto} ${e.orig.src} → ${e.orig.dst}`, text: e.raw.trim(), target: { kind: 'conntrack', cursor: order.indexOf(i) } };
    });
  });
}

const cache = new WeakMap<NodeSnapshot, FindResult & { readonly sort: ConntrackSort }>();

/** Every hit of `query` in `snapshot` (see the module doc); none for no snapshot. `sort`: the Conntrack pane's. */
export function findHits(snapshot: NodeSnapshot | null, query: string, sort: ConntrackSort = DEFAULT_CONNTRACK_SORT): FindResult {
  if (!snapshot) return { query, hits: [], capped: false };
  const last = cache.get(snapshot);
  if (last?.query === query && last.sort === sort) return last;
  const test = wordTest(query);
  const kinds = { services: new Kind(), rules: new Kind(), elements: new Kind(), lb: new Kind(), flows: new Kind() };
  services(snapshot, test, kinds.services);
  iptablesRules(snapshot, test, kinds.rules);
  nftRules(snapshot, test, kinds.rules, kinds.elements);
  lbEntries(snapshot, test, kinds.lb);
  flows(snapshot, test, sort, kinds.flows);
  const all = Object.values(kinds);
  const result = { query, hits: all.flatMap((k) => k.hits), capped: all.some((k) => k.capped) };
  cache.set(snapshot, { ...result, sort });
  return result;
}
