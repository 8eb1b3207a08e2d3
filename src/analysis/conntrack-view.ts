/**
 * The Conntrack pane's data: every conntrack entry of a snapshot with its NAT view, the
 * Service it belongs to and whether it is stale, sortable by column and filterable by
 * text and by the selected Service.
 *
 * Built for tables of a million entries (`nf_conntrack_max` is 262,144 by default and
 * often raised): the classification runs once per snapshot (memoised by snapshot
 * identity) into typed arrays — one service index and one status code per entry, no
 * object per entry — sort orders are memoised per column and direction, text filtering
 * refines the previous result when the filter only grew, and display rows
 * ({@link conntrackRow}) are built only for the rows a pane shows.
 *
 * One job per module: classification (conntrack-classify.ts), the per-snapshot index
 * (conntrack-index.ts), sorting (conntrack-sort.ts), filtering (conntrack-filter.ts);
 * this module assembles the view and re-exports their vocabulary so a pane or report
 * imports the pane's data from one place.
 */
import { conntrackNatView, type ConntrackEndpoint, type ConntrackNatView } from './conntrack-nat.js';
import { conntrackEventFlows } from './conntrack-events.js';
import {
  CODE_NO_SERVICE,
  CODE_OK,
  CODE_STALE_GONE,
  CODE_STALE_UNTRANSLATED,
  CODE_VIA_ENDPOINT,
  CODE_VIA_NODEPORT,
  type ConntrackStaleReason,
  type ConntrackStatus,
} from './conntrack-classify.js';
import { buildConntrackIndex, conntrackIndex, conntrackSource, type ConntrackIndex, type ConntrackSourceKind } from './conntrack-index.js';
import { conntrackOrder, type ConntrackQuery } from './conntrack-filter.js';
import type { ConntrackEntry } from '../model/conntrack.js';
import { conntrackEntryCount } from '../model/conntrack-ids.js';
import type { Diagnostic } from '../model/diagnostics.js';
import { isPending, type NodeSnapshot } from '../model/snapshot.js';
import { detectProxyMode } from './proxy-mode.js';

export * from './conntrack-classify.js';
export * from './conntrack-index.js';
export * from './conntrack-sort.js';
export * from './conntrack-filter.js';

/**
 * The summary line's numbers: entries shown and in the table (`total`), the kernel's
 * `nf_conntrack_count` and `nf_conntrack_max` (entries; null when not read) and
 * `percent` = count / max × 100, stale entries in the table and among those shown;
 * `events`/`eventFlows`: `conntrack -E` events captured and the flows they are about (never
 * rows of the table); `tableRead`: false when the capture holds events only (the table's
 * size is then unknown, not 0).
 */
export interface ConntrackSummary {
  readonly shown: number;
  readonly total: number;
  readonly events?: number;
  readonly eventFlows?: number;
  readonly tableRead?: boolean;
  readonly count: number | null;
  readonly max: number | null;
  readonly percent: number | null;
  readonly stale: number;
  readonly staleShown: number;
  /**
   * False on a Cilium node: stale flows are judged against kube-proxy's translation, and
   * Cilium's own conntrack is not compared yet (as `diagnose` says), so `stale` is unknown, not 0.
   */
  readonly staleChecked: boolean;
}

/**
 * Whether there is a table to show: `loading` (no snapshot yet, or the table still pending), `none` (conntrack
 * was not captured, or its probe printed nothing: `reason` says why, null when the
 * probe was not run), or `table`.
 */
export type ConntrackAvailability =
  | { readonly kind: 'loading' }
  | { readonly kind: 'none'; readonly reason: string | null }
  | { readonly kind: 'table' };

/**
 * The Conntrack pane's data.
 * - `order`: entry indices to show, in order (build display rows with {@link conntrackRow});
 * - `scope`: the Service the rows are limited to and whether the API objects have it;
 * - `readAt`: when the conntrack probe started (ms since epoch), for the countdown;
 * - `live`: the source can be re-read (timeouts count down only then);
 * - `error`: the probe failed after printing part of the table (what was printed is shown);
 * - `diagnostics`: lines of the conntrack output not understood.
 */
export interface ConntrackView {
  readonly availability: ConntrackAvailability;
  readonly index: ConntrackIndex;
  readonly order: Uint32Array;
  readonly query: ConntrackQuery;
  readonly scope: { readonly service: string; readonly found: boolean } | null;
  readonly summary: ConntrackSummary;
  readonly readAt: number | null;
  readonly live: boolean;
  readonly error: string | null;
  readonly diagnostics: readonly Diagnostic[];
  /** Which table the rows are: netfilter conntrack, or Cilium's CT maps (no netfilter entries). */
  readonly source: ConntrackSourceKind;
}

const EMPTY_INDEX = buildConntrackIndex([], [], [], false);

const staleCheckedOf = new WeakMap<NodeSnapshot, boolean>();
/**
 * {@link ConntrackSummary.staleChecked} for `snapshot`: false on a node whose Service dataplane is
 * Cilium (detectProxyMode, as diagnose reads it), where the stale count is unknown, not 0. Once per snapshot.
 */
export function conntrackStaleChecked(snapshot: NodeSnapshot): boolean {
  let v = staleCheckedOf.get(snapshot);
  if (v === undefined) staleCheckedOf.set(snapshot, (v = detectProxyMode(snapshot).mode !== 'cilium'));
  return v;
}

function countStale(index: ConntrackIndex, order: Uint32Array): number {
  if (order.length === index.rows.length) return index.staleCount;
  let n = 0;
  for (let k = 0; k < order.length; k++) {
    const c = index.codeOf[order[k]!]! & 3;
    if (c === CODE_STALE_GONE || c === CODE_STALE_UNTRANSLATED) n++;
  }
  return n;
}

/**
 * The table is still being parsed (staged load): netfilter's, or Cilium's when netfilter's
 * came out empty (the pane then shows Cilium's).
 */
function conntrackPending(snapshot: NodeSnapshot): boolean {
  if (isPending(snapshot, 'conntrack')) return true;
  const nf = snapshot.conntrack?.value;
  return isPending(snapshot, 'ciliumConntrack') && (nf ? conntrackEntryCount(nf) : 0) === 0;
}

/** The pane's data for `snapshot` (null or a part still pending: loading) and `query`. Never throws. */
export function conntrackView(snapshot: NodeSnapshot | null, query: ConntrackQuery): ConntrackView {
  const source = snapshot ? conntrackSource(snapshot) : null;
  const ct = source?.part ?? null;
  const readAt = ct?.probe ? Date.parse(ct.probe.startedAt) : NaN;
  const base = {
    query,
    source: source?.kind ?? 'netfilter',
    readAt: Number.isFinite(readAt) ? readAt : null,
    live: snapshot?.meta.source.live ?? false,
    error: ct?.error ?? null,
    diagnostics: ct?.diagnostics ?? [],
  };
  const count = snapshot?.conntrackCount ?? null;
  const max = snapshot?.conntrackMax ?? null;
  const percent = count !== null && max !== null && max > 0 ? (count / max) * 100 : null;
  if (!snapshot || !ct?.value || conntrackPending(snapshot)) {
    const availability: ConntrackAvailability = snapshot && !conntrackPending(snapshot) ? { kind: 'none', reason: ct?.error ?? null } : { kind: 'loading' };
    const summary = { shown: 0, total: 0, count, max, percent, stale: 0, staleShown: 0, staleChecked: snapshot ? conntrackStaleChecked(snapshot) : true };
    return { ...base, availability, index: EMPTY_INDEX, order: new Uint32Array(0), scope: null, summary };
  }
  const index = conntrackIndex(snapshot);
  const order = conntrackOrder(index, query);
  const scope = query.service === null ? null : { service: query.service, found: index.services.some((s) => s.label === query.service) };
  const events = ct.value.events ?? [];
  const summary: ConntrackSummary = {
    shown: order.length,
    total: index.rows.length,
    ...(events.length > 0 ? { events: events.length, eventFlows: conntrackEventFlows(events).length, tableRead: index.rows.length > 0 } : {}),
    count,
    max,
    percent,
    stale: index.staleCount,
    staleShown: countStale(index, order),
    staleChecked: conntrackStaleChecked(snapshot),
  };
  return { ...base, availability: { kind: 'table' }, index, order, scope, summary };
}

/**
 * Seconds since the conntrack table was read, for the countdown of timeouts: `now` (ms
 * since epoch, from the injected clock) minus `view.readAt`, never negative; 0 for a
 * replayed capture (its timeouts are shown as captured) or when the time is unknown.
 */
export function conntrackElapsedSeconds(view: ConntrackView, now: number): number {
  if (!view.live || view.readAt === null) return 0;
  return Math.max(0, (now - view.readAt) / 1000);
}

/**
 * One row as a pane shows it.
 * - `timeoutLeft`: seconds, `max(0, timeout − elapsed)` rounded down; null for entries
 *   without a timeout (offloaded flows);
 * - `service`: `ns/name`, `via` how the destination matched it (`endpoint`: an untranslated
 *   flow straight to a current endpoint — Cilium socket LB, or a Pod dialled directly);
 * - `pointsAt`: for stale entries, where the entry sends the flow (the reply source);
 * - `packets`/`bytes`: per direction, null when accounting was off.
 */
export interface ConntrackRowView {
  readonly index: number;
  readonly entry: ConntrackEntry;
  readonly nat: ConntrackNatView;
  readonly timeoutLeft: number | null;
  readonly service: string | null;
  readonly via: 'vip' | 'nodePort' | 'endpoint' | null;
  readonly status: ConntrackStatus;
  readonly staleReason: ConntrackStaleReason | null;
  readonly pointsAt: ConntrackEndpoint | null;
  readonly packets: { readonly orig: bigint; readonly reply: bigint } | null;
  readonly bytes: { readonly orig: bigint; readonly reply: bigint } | null;
}

/** The display row of entry `i` (an index from {@link ConntrackView.order}), `elapsedSeconds` after it was read. */
export function conntrackRow(index: ConntrackIndex, i: number, elapsedSeconds = 0): ConntrackRowView {
  const entry = index.rows.entry(i);
  const nat = conntrackNatView(entry);
  const s = index.serviceOf[i]!;
  const code = index.codeOf[i]!;
  const st = code & 3;
  const { orig, reply } = entry;
  return {
    index: i,
    entry,
    nat,
    timeoutLeft: entry.timeout === undefined ? null : Math.max(0, Math.floor(entry.timeout - elapsedSeconds)),
    service: s < 0 ? null : index.services[s]!.label,
    via: s < 0 ? null : code & CODE_VIA_NODEPORT ? 'nodePort' : code & CODE_VIA_ENDPOINT ? 'endpoint' : 'vip',
    status: st === CODE_OK ? 'ok' : st === CODE_NO_SERVICE ? 'no-service' : 'stale',
    staleReason: st === CODE_STALE_GONE ? 'endpoint-gone' : st === CODE_STALE_UNTRANSLATED ? 'not-translated' : null,
    pointsAt: st === CODE_STALE_GONE || st === CODE_STALE_UNTRANSLATED ? nat.answeredBy : null,
    packets: orig.packets !== undefined && reply.packets !== undefined ? { orig: orig.packets, reply: reply.packets } : null,
    bytes: orig.bytes !== undefined && reply.bytes !== undefined ? { orig: orig.bytes, reply: reply.bytes } : null,
  };
}
