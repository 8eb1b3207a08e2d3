/**
 * The per-snapshot conntrack index: the entries of the table a pane shows (netfilter's
 * or Cilium's), the Services they were matched against and their classification columns
 * (src/analysis/conntrack-classify.ts), memoised by snapshot identity. The frontends and
 * endpoints come from the API objects (src/analysis/conntrack-targets.ts, or
 * `dataplaneTargets` of src/analysis/service-view.ts), the node addresses from `ip -j addr`.
 */
import { buildServiceView, dataplaneTargets } from './service-view.js';
import { classificationTargets, readClassificationTargets } from './conntrack-targets.js';
import { encodeConntrackTargets, TargetColumnsWriter, type EncodedTargetsMessage } from './conntrack-targets-codec.js';
import type { ServiceFrontends } from './conntrack-nat.js';
import { classifyConntrackRows, type ConntrackClassificationColumns } from './conntrack-classify.js';
import type { ConntrackEntry, ConntrackTable } from '../model/conntrack.js';
import { conntrackEntryCount, conntrackRows, entryRows, type ConntrackRows } from '../model/conntrack-ids.js';
import { localAddresses } from '../model/iproute.js';
import type { NodeSnapshot, Parsed } from '../model/snapshot.js';
import { formatServiceRef, type ServiceRef } from '../model/service-ref.js';

/** A Service as the pane names it: `label` is `namespace/name`. */
export interface ConntrackServiceRef {
  readonly namespace: string;
  readonly name: string;
  readonly label: string;
}

/**
 * Everything computed once per snapshot: the entries, the Services they were matched
 * against (in `dataplaneTargets` order: namespace, then name), the classification
 * columns, and whether Services were known at all (API objects present).
 * `rows` reads the entries in place (a parsed table is held in columns); `entries` is the
 * array of objects, made on first read for such a table: panes read `rows`.
 * `sortCache`, `keyCache` and `filterCache` hold memoised orders and keys; treat them as private.
 */
export interface ConntrackIndex extends ConntrackClassificationColumns {
  readonly rows: ConntrackRows;
  readonly entries: readonly ConntrackEntry[];
  readonly services: readonly ConntrackServiceRef[];
  readonly servicesKnown: boolean;
  readonly sortCache: Map<string, Uint32Array>;
  /** The last sorted column's numeric keys, by column name (both directions sort on them; one column kept: 8 MB per 1M flows). */
  readonly keyCache: Map<string, { readonly keys: Float64Array; readonly max: number }>;
  readonly filterCache: Map<string, { readonly filter: string; readonly order: Uint32Array }>;
}

/** Builds the index of `entries` against `services` and `nodeAddresses` (not memoised). */
export function buildConntrackIndex(
  entries: readonly ConntrackEntry[],
  services: readonly ServiceFrontends[],
  nodeAddresses: readonly string[],
  servicesKnown = true,
): ConntrackIndex {
  return indexOf(entryRows(entries), () => entries, services, servicesKnown, classifyConntrackRows(entryRows(entries), services, nodeAddresses));
}

/** {@link buildConntrackIndex} of a table read through its rows (`conntrackRows`: in place for a parsed column table). Not memoised. */
export function buildConntrackTableIndex(
  table: ConntrackTable,
  services: readonly ServiceFrontends[],
  nodeAddresses: readonly string[],
  servicesKnown = true,
): ConntrackIndex {
  const rows = conntrackRows(table);
  return indexOf(rows, () => table.entries, services, servicesKnown, classifyConntrackRows(rows, services, nodeAddresses));
}

/** The index of `rows` (entries as objects from `entries`, read only when asked) with its classification `columns`. */
function indexOf(
  rows: ConntrackRows,
  entries: () => readonly ConntrackEntry[],
  services: readonly ServiceRef[],
  servicesKnown: boolean,
  columns: ConntrackClassificationColumns,
): ConntrackIndex {
  return {
    rows,
    get entries() {
      return entries();
    },
    services: services.map((s) => ({ namespace: s.namespace, name: s.name, label: formatServiceRef(s) })),
    servicesKnown,
    serviceOf: columns.serviceOf,
    codeOf: columns.codeOf,
    staleCount: columns.staleCount,
    sortCache: new Map(),
    keyCache: new Map(),
    filterCache: new Map(),
  };
}

const indexCache = new WeakMap<ConntrackRows, { readonly api: unknown; readonly node: string; readonly addrs: unknown; readonly index: ConntrackIndex }>();
const NO_ENTRIES: ConntrackTable = { entries: [], trailers: [] };

/**
 * The index of a snapshot's conntrack table, memoised by the identity of its entries, API
 * objects, node and addresses (a staged load or a refresh that re-reads only the rules
 * builds new snapshots around the same table; they share the index).
 * Services come from the snapshot's API objects (none when it has no API objects), node
 * addresses from its `ip -j addr`.
 */
export function conntrackIndex(snapshot: NodeSnapshot): ConntrackIndex {
  const table = conntrackSource(snapshot).part?.value ?? NO_ENTRIES;
  const rows = conntrackRows(table);
  const api = snapshot.api?.value ?? null;
  const addrs = snapshot.addrs?.value ?? null;
  const cached = indexCache.get(rows);
  if (cached && cached.api === api && cached.node === snapshot.meta.node && cached.addrs === addrs) return cached.index;
  const { services, nodeAddresses } = conntrackTargets(snapshot);
  const index = indexOf(rows, () => table.entries, services, api !== null, classifyConntrackRows(rows, services, nodeAddresses));
  indexCache.set(rows, { api, node: snapshot.meta.node, addrs, index });
  return index;
}

/** What a snapshot's conntrack entries are classified against: Services from its API objects (none without), node addresses from `ip -j addr`. */
export interface ConntrackTargets {
  readonly services: readonly ServiceFrontends[];
  readonly nodeAddresses: readonly string[];
}

/**
 * The {@link ConntrackTargets} {@link conntrackIndex} uses for `snapshot` (its API objects and
 * addresses): the Services read straight from the API objects (`classificationTargets`,
 * src/analysis/conntrack-targets.ts: the same Services in the same order, each one's lists as
 * sets), or through the Services view ({@link conntrackTargetsViaView}) when an address is
 * spelled in a way only the view's keys settle. Classifies the same as the view's targets.
 */
export function conntrackTargets(snapshot: Pick<NodeSnapshot, 'api' | 'addrs' | 'meta'>): ConntrackTargets {
  const api = snapshot.api?.value ?? null;
  const services = api ? classificationTargets(api) : [];
  if (services === undefined) return conntrackTargetsViaView(snapshot);
  return { services, nodeAddresses: nodeAddressesOf(snapshot) };
}

/**
 * The {@link ConntrackTargets} of `snapshot` through the Services view: `dataplaneTargets` of
 * `buildServiceView` (sorted, de-duplicated, with readiness). The fallback of
 * {@link conntrackTargets} and the reference its tests compare with.
 */
export function conntrackTargetsViaView(snapshot: Pick<NodeSnapshot, 'api' | 'addrs' | 'meta'>): ConntrackTargets {
  const api = snapshot.api?.value ?? null;
  return {
    services: api ? dataplaneTargets(buildServiceView(api, { nodeName: snapshot.meta.node })) : [],
    nodeAddresses: nodeAddressesOf(snapshot),
  };
}

function nodeAddressesOf(snapshot: Pick<NodeSnapshot, 'addrs'>): string[] {
  const addrs = snapshot.addrs?.value ?? null;
  return addrs ? localAddresses(addrs).map((a) => a.address) : [];
}

/**
 * The {@link ConntrackTargets} of `snapshot` as {@link conntrackTargets} makes them, encoded for
 * the parse worker (src/analysis/conntrack-targets-codec.ts), with the Services' names in the
 * same order (`services`, for {@link primeConntrackIndex}): read straight from the API objects
 * into the columns, or — when an address is not plain — the view's targets encoded. Undefined
 * when the targets hold an item the columns cannot (then send {@link conntrackTargets}' objects).
 */
export function conntrackTargetColumns(snapshot: Pick<NodeSnapshot, 'api' | 'addrs' | 'meta'>): { readonly message: EncodedTargetsMessage; readonly services: readonly ServiceRef[] } | undefined {
  const api = snapshot.api?.value ?? null;
  const w = new TargetColumnsWriter();
  if (api === null || readClassificationTargets(api, w)) {
    for (const a of nodeAddressesOf(snapshot)) if (!w.node(a)) return undefined;
    return { message: w.finish(), services: w.names };
  }
  const targets = conntrackTargetsViaView(snapshot);
  const message = encodeConntrackTargets(targets);
  return message && { message, services: targets.services };
}

/**
 * Remembers `columns` — `classifyConntrackRows` of `table`'s rows against targets whose Services
 * are `services` (their names, in order), computed elsewhere (a parse worker) — as the index of
 * every snapshot with this table and the API objects, node and addresses of `snapshot` (the
 * ones the targets came from), so {@link conntrackIndex} does not classify them again on the
 * render path.
 */
export function primeConntrackIndex(
  snapshot: Pick<NodeSnapshot, 'api' | 'addrs' | 'meta'>,
  table: ConntrackTable,
  services: readonly ServiceRef[],
  columns: ConntrackClassificationColumns,
): void {
  const api = snapshot.api?.value ?? null;
  const rows = conntrackRows(table);
  const index = indexOf(rows, () => table.entries, services, api !== null, columns);
  indexCache.set(rows, { api, node: snapshot.meta.node, addrs: snapshot.addrs?.value ?? null, index });
}

/**
 * Which conntrack a snapshot's pane shows: netfilter's (`conntrack -L`) when it has
 * entries, else Cilium's CT map (`cilium-dbg bpf ct list global`) when that was read,
 * else netfilter's part as it is (empty, failed or null).
 */
export function conntrackSource(snapshot: NodeSnapshot): { readonly kind: ConntrackSourceKind; readonly part: Parsed<ConntrackTable> | null } {
  const nf = snapshot.conntrack ?? null;
  const cilium = snapshot.ciliumConntrack ?? null;
  if ((nf?.value ? conntrackEntryCount(nf.value) : 0) === 0 && cilium?.value) return { kind: 'cilium', part: cilium };
  return { kind: 'netfilter', part: nf };
}

/** Where the pane's entries come from: netfilter conntrack, or Cilium's CT BPF maps. */
export type ConntrackSourceKind = 'netfilter' | 'cilium';
