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
 * The classification is the one of `classifyConntrack` (src/analysis/conntrack-nat.ts):
 * the original destination matched against Service VIPs, then against NodePorts when it
 * is a node address; the reply source against the Service's current endpoints. The
 * frontends and endpoints come from the API objects through `dataplaneTargets`
 * (src/analysis/service-view.ts), the node addresses from `ip -j addr`.
 */
import { buildServiceView, dataplaneTargets, addressSortKey } from './service-view.js';
import { conntrackNatView, serviceProtocolOf, type ConntrackEndpoint, type ConntrackNatView, type ServiceFrontends } from './conntrack-nat.js';
import { conntrackEventFlows } from './conntrack-events.js';
import { canonicalIp, type ConntrackEntry, type ConntrackTable } from '../model/conntrack.js';
import type { Diagnostic } from '../model/diagnostics.js';
import { localAddresses } from '../model/iproute.js';
import { isPending, type NodeSnapshot, type Parsed } from '../model/snapshot.js';
import { formatServiceRef } from '../model/service-ref.js';

// ---- classification ---------------------------------------------------------------------------

/** How an entry relates to the Services (see `ConntrackServiceMatch` in conntrack-nat.ts). */
export type ConntrackStatus = 'ok' | 'stale' | 'no-service';

/** Why a stale entry is stale: its endpoint is gone, or it was never translated (made while the Service had no endpoints). */
export type ConntrackStaleReason = 'endpoint-gone' | 'not-translated';

/** Status codes of {@link ConntrackClassificationColumns.codeOf} (low two bits), plus {@link CODE_VIA_NODEPORT}. */
export const CODE_NO_SERVICE = 0;
/** Answered by a current endpoint. */
export const CODE_OK = 1;
/** Stale: answered by something that is no current endpoint. */
export const CODE_STALE_GONE = 2;
/** Stale: not translated at all. */
export const CODE_STALE_UNTRANSLATED = 3;
/** Bit set when the Service was matched by a NodePort on a node address (clear: by VIP). */
export const CODE_VIA_NODEPORT = 4;
/** Bit set (with {@link CODE_OK}) when an untranslated entry's destination is a current endpoint of the Service (Cilium socket LB, or a Pod dialled directly). */
export const CODE_VIA_ENDPOINT = 8;

/**
 * The classification of every entry, one slot per entry in input order:
 * `serviceOf[i]` is the index of the Service in the `services` given (-1: none),
 * `codeOf[i]` a status code (`CODE_*`). `staleCount` counts the stale entries.
 */
export interface ConntrackClassificationColumns {
  readonly serviceOf: Int32Array;
  readonly codeOf: Uint8Array;
  readonly staleCount: number;
}

const PROTO_CODE: Readonly<Record<string, number>> = { TCP: 1, UDP: 2, SCTP: 3 };

function portKey(port: number | undefined, protocol: number): number {
  return (port ?? 0) * 4 + protocol;
}

/**
 * Classifies `entries` like `classifyConntrack(entries, services, nodeAddresses)` (same
 * statuses, same Service, same tie rule: the first Service in `services` order wins),
 * into typed columns: no allocation per entry, so a million entries take a fraction of a
 * second. Addresses in `services` and `nodeAddresses` may be in any IPv6 spelling
 * (entries hold canonical text). Never throws.
 */
export function classifyConntrackColumns(
  entries: readonly ConntrackEntry[],
  services: readonly ServiceFrontends[],
  nodeAddresses: readonly string[],
): ConntrackClassificationColumns {
  const canon = (ip: string) => canonicalIp(ip) ?? ip;
  // VIP address → (port, protocol) → service; NodePort (port, protocol) → service.
  const byVip = new Map<string, Map<number, number>>();
  const byNodePort = new Map<number, number>();
  // Endpoint address → (port, protocol) → service: untranslated flows straight to an endpoint.
  const byEndpoint = new Map<string, Map<number, number>>();
  // Per service: endpoint address → set of (port, protocol).
  const endpointsOf: Map<string, Set<number>>[] = [];
  services.forEach((svc, s) => {
    for (const v of svc.vips) {
      const ip = canon(v.ip);
      const ports = byVip.get(ip) ?? new Map<number, number>();
      byVip.set(ip, ports);
      const k = portKey(v.port, PROTO_CODE[v.protocol] ?? 0);
      if (!ports.has(k)) ports.set(k, s);
    }
    for (const np of svc.nodePorts) {
      const k = portKey(np.port, PROTO_CODE[np.protocol] ?? 0);
      if (!byNodePort.has(k)) byNodePort.set(k, s);
    }
    const eps = new Map<string, Set<number>>();
    for (const ep of svc.endpoints) {
      const ip = canon(ep.ip);
      const set = eps.get(ip) ?? new Set<number>();
      eps.set(ip, set);
      const k = portKey(ep.port, PROTO_CODE[ep.protocol] ?? 0);
      set.add(k);
      const ports = byEndpoint.get(ip) ?? new Map<number, number>();
      byEndpoint.set(ip, ports);
      if (!ports.has(k)) ports.set(k, s);
    }
    endpointsOf.push(eps);
  });
  const nodeSet = new Set(nodeAddresses.map(canon));

  const n = entries.length;
  const serviceOf = new Int32Array(n).fill(-1);
  const codeOf = new Uint8Array(n);
  let staleCount = 0;
  for (let i = 0; i < n; i++) {
    const e = entries[i]!;
    const protocol = serviceProtocolOf(e.proto);
    if (protocol === undefined) continue;
    const pc = PROTO_CODE[protocol]!;
    const { orig, reply } = e;
    let via = 0;
    let s = byVip.get(orig.dst)?.get(portKey(orig.dport, pc));
    if (s === undefined && nodeSet.has(orig.dst)) {
      s = byNodePort.get(portKey(orig.dport, pc));
      via = CODE_VIA_NODEPORT;
    }
    const translated = reply.src !== orig.dst || reply.sport !== orig.dport;
    if (s === undefined && !translated) {
      const direct = byEndpoint.get(orig.dst)?.get(portKey(orig.dport, pc));
      if (direct !== undefined) {
        serviceOf[i] = direct;
        codeOf[i] = CODE_OK | CODE_VIA_ENDPOINT;
      }
      continue;
    }
    if (s === undefined) continue;
    serviceOf[i] = s;
    let status: number;
    if (!translated) status = CODE_STALE_UNTRANSLATED;
    else if (endpointsOf[s]!.get(reply.src)?.has(portKey(reply.sport, pc))) status = CODE_OK;
    else status = CODE_STALE_GONE;
    if (status !== CODE_OK) staleCount++;
    codeOf[i] = status | via;
  }
  return { serviceOf, codeOf, staleCount };
}

// ---- the per-snapshot index -----------------------------------------------------------------

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
 * `sortCache`, `keyCache` and `filterCache` hold memoised orders and keys; treat them as private.
 */
export interface ConntrackIndex extends ConntrackClassificationColumns {
  readonly entries: readonly ConntrackEntry[];
  readonly services: readonly ConntrackServiceRef[];
  readonly servicesKnown: boolean;
  readonly sortCache: Map<string, Uint32Array>;
  /** The last sorted column's numeric keys (both directions sort on them; one column kept: 8 MB per 1M flows). */
  readonly keyCache: Map<ConntrackSortColumn, { readonly keys: Float64Array; readonly max: number }>;
  readonly filterCache: Map<string, { readonly filter: string; readonly order: Uint32Array }>;
}

/** Builds the index of `entries` against `services` and `nodeAddresses` (not memoised). */
export function buildConntrackIndex(
  entries: readonly ConntrackEntry[],
  services: readonly ServiceFrontends[],
  nodeAddresses: readonly string[],
  servicesKnown = true,
): ConntrackIndex {
  return {
    entries,
    services: services.map((s) => ({ namespace: s.namespace, name: s.name, label: formatServiceRef(s) })),
    servicesKnown,
    ...classifyConntrackColumns(entries, services, nodeAddresses),
    sortCache: new Map(),
    keyCache: new Map(),
    filterCache: new Map(),
  };
}

const indexCache = new WeakMap<readonly ConntrackEntry[], { readonly api: unknown; readonly node: string; readonly addrs: unknown; readonly index: ConntrackIndex }>();
const NO_ENTRIES: readonly ConntrackEntry[] = [];

/**
 * The index of a snapshot's conntrack table, memoised by the identity of its entries, API
 * objects, node and addresses (a staged load or a refresh that re-reads only the rules
 * builds new snapshots around the same table; they share the index).
 * Services come from the snapshot's API objects (none when it has no API objects), node
 * addresses from its `ip -j addr`.
 */
export function conntrackIndex(snapshot: NodeSnapshot): ConntrackIndex {
  const entries = conntrackSource(snapshot).part?.value?.entries ?? NO_ENTRIES;
  const api = snapshot.api?.value ?? null;
  const addrs = snapshot.addrs?.value ?? null;
  const cached = indexCache.get(entries);
  if (cached && cached.api === api && cached.node === snapshot.meta.node && cached.addrs === addrs) return cached.index;
  const services = api ? dataplaneTargets(buildServiceView(api, { nodeName: snapshot.meta.node })) : [];
  const nodeAddresses = addrs ? localAddresses(addrs).map((a) => a.address) : [];
  const index = buildConntrackIndex(entries, services, nodeAddresses, api !== null);
  indexCache.set(entries, { api, node: snapshot.meta.node, addrs, index });
  return index;
}

// ---- sorting and filtering ----------------------------------------------------------------------

/** The columns the pane sorts by. `vip`: original destination; `endpoint`: reply source. */
export type ConntrackSortColumn = 'service' | 'vip' | 'endpoint' | 'protocol' | 'state' | 'timeout' | 'packets' | 'bytes';

/** Every sort column, in the order `s` cycles through them. */
export const CONNTRACK_SORT_COLUMNS: readonly ConntrackSortColumn[] = ['service', 'vip', 'endpoint', 'protocol', 'state', 'timeout', 'packets', 'bytes'];

/** A sort order. Ties keep the input order (the order conntrack printed). */
export interface ConntrackSort {
  readonly column: ConntrackSortColumn;
  readonly descending: boolean;
}

/** The order the pane opens with: by Service, ascending. */
export const DEFAULT_CONNTRACK_SORT: ConntrackSort = { column: 'service', descending: false };

/** The next column of {@link CONNTRACK_SORT_COLUMNS} (wrapping), ascending. */
export function nextConntrackSort(sort: ConntrackSort): ConntrackSort {
  const i = CONNTRACK_SORT_COLUMNS.indexOf(sort.column);
  return { column: CONNTRACK_SORT_COLUMNS[(i + 1) % CONNTRACK_SORT_COLUMNS.length]!, descending: false };
}

/** The same column in the other direction. */
export function reverseConntrackSort(sort: ConntrackSort): ConntrackSort {
  return { column: sort.column, descending: !sort.descending };
}

/** Ranks (0-based) of the distinct `value(e)` of `entries`, ordered by `sortKey` of each (computed once per distinct value). */
function ranks(entries: readonly ConntrackEntry[], value: (e: ConntrackEntry) => string, sortKey: (v: string) => string = (v) => v): Map<string, number> {
  const distinct = new Set<string>();
  for (const e of entries) distinct.add(value(e));
  const keyed = [...distinct].map((v) => [sortKey(v), v] as const).sort(([a], [b]) => byText(a, b));
  return new Map(keyed.map(([, v], i) => [v, i]));
}

function byText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * One key per entry for `column`: a non-negative integer; absent values sort last
 * (timeout) or first (state).
 */
function sortKeys(index: ConntrackIndex, column: ConntrackSortColumn): Float64Array {
  const { entries } = index;
  const keys = new Float64Array(entries.length);
  if (column === 'service') {
    const labels = index.services.map((s) => s.label);
    const sorted = [...labels].sort(byText);
    // A label's rank is its first place in the sorted list (a Map: indexOf was O(services²)).
    const firstAt = new Map<string, number>();
    sorted.forEach((l, i) => {
      if (!firstAt.has(l)) firstAt.set(l, i);
    });
    const rank = labels.map((l) => firstAt.get(l)!);
    const none = labels.length;
    for (let i = 0; i < entries.length; i++) {
      const s = index.serviceOf[i]!;
      keys[i] = s < 0 ? none : rank[s]!;
    }
  } else if (column === 'vip' || column === 'endpoint') {
    const addr = column === 'vip' ? (e: ConntrackEntry) => e.orig.dst : (e: ConntrackEntry) => e.reply.src;
    const port = column === 'vip' ? (e: ConntrackEntry) => e.orig.dport : (e: ConntrackEntry) => e.reply.sport;
    const rank = ranks(entries, addr, addressSortKey);
    for (let i = 0; i < entries.length; i++) keys[i] = rank.get(addr(entries[i]!))! * 65536 + (port(entries[i]!) ?? 0);
  } else if (column === 'protocol' || column === 'state') {
    const word = column === 'protocol' ? (e: ConntrackEntry) => e.proto : (e: ConntrackEntry) => e.state ?? '';
    const rank = ranks(entries, word);
    for (let i = 0; i < entries.length; i++) keys[i] = rank.get(word(entries[i]!))!;
  } else if (column === 'packets' || column === 'bytes') {
    // Both directions' counters (nf_conntrack_acct=1); a flow without them sorts after every count.
    const count = (e: ConntrackEntry): number | null => {
      const a = column === 'packets' ? e.orig.packets : e.orig.bytes;
      const b = column === 'packets' ? e.reply.packets : e.reply.bytes;
      return a === undefined && b === undefined ? null : Number((a ?? 0n) + (b ?? 0n));
    };
    let max = 0;
    for (let i = 0; i < entries.length; i++) {
      const c = count(entries[i]!);
      keys[i] = c ?? -1;
      if (c !== null && c > max) max = c;
    }
    for (let i = 0; i < entries.length; i++) if (keys[i] === -1) keys[i] = max + 1;
  } else {
    let max = 0;
    for (const e of entries) if (e.timeout !== undefined && e.timeout > max) max = e.timeout;
    for (let i = 0; i < entries.length; i++) keys[i] = entries[i]!.timeout ?? max + 1;
  }
  return keys;
}

/** Each key's rank among the distinct keys (0-based, ascending); `distinct` is their count. */
function denseRanks(keys: Float64Array): { ranks: Float64Array; distinct: number } {
  const sorted = Float64Array.from(keys).sort();
  let m = 0;
  for (let k = 0; k < sorted.length; k++) if (m === 0 || sorted[k] !== sorted[m - 1]) sorted[m++] = sorted[k]!;
  const ranks = new Float64Array(keys.length);
  for (let i = 0; i < keys.length; i++) {
    const v = keys[i]!;
    let lo = 0;
    let hi = m - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (sorted[mid]! < v) lo = mid + 1;
      else hi = mid;
    }
    ranks[i] = lo;
  }
  return { ranks, distinct: m };
}

/** The keys `sortedOrder` sorts `column` on, and their largest (the last column's kept in the index: `S` reverses without recomputing them). */
function columnKeys(index: ConntrackIndex, column: ConntrackSortColumn): { readonly keys: Float64Array; readonly max: number } {
  const cached = index.keyCache.get(column);
  if (cached) return cached;
  const n = index.entries.length;
  let keys = sortKeys(index, column);
  let max = 0;
  for (let i = 0; i < n; i++) if (keys[i]! > max) max = keys[i]!;
  // Keys small enough (the usual case) are used as they are; others are ranked first.
  if ((max + 1) * n > Number.MAX_SAFE_INTEGER) {
    const dense = denseRanks(keys);
    keys = dense.ranks;
    max = dense.distinct - 1;
  }
  const result = { keys, max };
  index.keyCache.clear();
  index.keyCache.set(column, result);
  return result;
}

/**
 * Entry indices of the whole table in `sort` order (memoised in the index). Each entry
 * gets the number `key × n + index` and the typed array's native numeric sort orders
 * them: stable by construction, and several times faster than a comparator on a
 * million entries. Keys too large for that to stay exact are replaced by their rank
 * first (exact while n² < 2⁵³, n < 94 million).
 */
export function sortedOrder(index: ConntrackIndex, sort: ConntrackSort): Uint32Array {
  const cacheKey = `${sort.column}:${sort.descending ? 'desc' : 'asc'}`;
  const cached = index.sortCache.get(cacheKey);
  if (cached) return cached;
  const n = index.entries.length;
  const { keys, max } = columnKeys(index, sort.column);
  const combined = new Float64Array(n);
  for (let i = 0; i < n; i++) combined[i] = (sort.descending ? max - keys[i]! : keys[i]!) * n + i;
  combined.sort();
  const order = new Uint32Array(n);
  for (let k = 0; k < n; k++) order[k] = combined[k]! % n;
  index.sortCache.set(cacheKey, order);
  return order;
}

const STATE_LOWER = new Map<string, string>();
function lower(word: string): string {
  let l = STATE_LOWER.get(word);
  if (l === undefined) {
    l = word.toLowerCase();
    STATE_LOWER.set(word, l);
  }
  return l;
}

/**
 * The text a filter is matched against, all lowercase: protocol, state, the NAT view
 * text, flags, `mark=`/`zone=`, the Service (`ns/name`) and the status word (`stale`,
 * `ok`, `no-service`).
 */
export function conntrackSearchText(index: ConntrackIndex, i: number): string {
  const e = index.entries[i]!;
  const s = index.serviceOf[i]!;
  const code = index.codeOf[i]! & 3;
  const nat = conntrackNatView(e);
  // Addresses are lowercase already; only the SNAT note has capitals.
  let text = `${e.proto} ${e.state === undefined ? '' : lower(e.state)} ${nat.snat ? nat.text.toLowerCase() : nat.text}`;
  for (const f of e.flags) text += ` [${lower(f)}]`;
  if (e.mark !== undefined) text += ` mark=${e.mark}`;
  if (e.zone !== undefined) text += ` zone=${e.zone}`;
  if (s >= 0) text += ` ${index.services[s]!.label}`;
  return `${text} ${statusWord(code)}`;
}

/** What the pane asks for: sort order, filter text, and the Service (`ns/name`) to keep, if any. */
export interface ConntrackQuery {
  readonly sort: ConntrackSort;
  /** Whitespace-separated words; an entry is kept when each word (case-insensitive) is part of its search text. */
  readonly filter: string;
  readonly service: string | null;
}

const PORTED: ReadonlySet<string> = new Set(['tcp', 'udp', 'udplite', 'sctp', 'dccp']);

function memo<K>(f: (k: K) => boolean): (k: K) => boolean {
  const m = new Map<K, boolean>();
  return (k) => {
    let v = m.get(k);
    if (v === undefined) {
      v = f(k);
      m.set(k, v);
    }
    return v;
  };
}

/**
 * A test of one filter word (lowercase, no blanks) against entry `i`, true exactly when
 * the word is part of {@link conntrackSearchText} — without building that text: a word
 * cannot span a blank, so it is matched field by field (protocol, state, each `ip:port`
 * of the NAT view, flags, mark, zone, Service and status), and the answers for values
 * that repeat (addresses, ports, states, Services) are memoised. Words with the NAT
 * view's arrows or parentheses, and words against IPv6 endpoints, fall back to the text.
 */
export function conntrackWordTest(index: ConntrackIndex, word: string): (i: number) => boolean {
  if (/[→⇒()]/.test(word)) return (i) => conntrackSearchText(index, i).includes(word);
  const inText = memo((s: string) => s.includes(word));
  const inPort = memo((p: number) => String(p).includes(word));
  const colon = word.indexOf(':');
  const before = colon < 0 ? '' : word.slice(0, colon);
  const after = colon < 0 ? '' : word.slice(colon + 1);
  const ipEndsWith = memo((ip: string) => ip.endsWith(before));
  const portStartsWith = memo((p: number) => String(p).startsWith(after));
  // Most words (a Service name, `stale`, a state) cannot occur in an `ip:port`: skip those fields.
  const addressLike = /^[0-9a-f.:[\]]+$/.test(word);
  const endpoint = (ip: string, port: number | undefined): boolean => {
    if (!addressLike) return false;
    if (inText(ip)) return true;
    if (port === undefined) return false;
    if (ip.indexOf(':') >= 0) return `[${ip}]:${port}`.includes(word);
    if (inPort(port)) return true;
    return colon >= 0 && after.indexOf(':') < 0 && ipEndsWith(ip) && portStartsWith(port);
  };
  const flag = memo((f: string) => `[${lower(f)}]`.includes(word));
  const mark = memo((m: number) => `mark=${m}`.includes(word));
  const zone = memo((z: number) => `zone=${z}`.includes(word));
  // Keyed by (service index + 1) × 4 + status code.
  const tail = memo((k: number) => `${index.services[(k >> 2) - 1]?.label ?? ''} ${statusWord(k & 3)}`.includes(word));
  const snatNote = '(snat as'.includes(word);
  return (i) => {
    const e = index.entries[i]!;
    if (inText(e.proto)) return true;
    if (e.state !== undefined && inText(lower(e.state))) return true;
    const { orig, reply } = e;
    const ported = PORTED.has(e.proto);
    const osport = ported ? orig.sport : undefined;
    if (endpoint(orig.src, osport) || endpoint(orig.dst, ported ? orig.dport : undefined) || endpoint(reply.src, ported ? reply.sport : undefined)) return true;
    const rdport = ported ? reply.dport : undefined;
    if ((reply.dst !== orig.src || rdport !== osport) && (snatNote || endpoint(reply.dst, rdport))) return true;
    for (const f of e.flags) if (flag(f)) return true;
    if (e.mark !== undefined && mark(e.mark)) return true;
    if (e.zone !== undefined && zone(e.zone)) return true;
    return tail(((index.serviceOf[i]! + 1) << 2) | (index.codeOf[i]! & 3));
  };
}

function statusWord(code: number): string {
  return code === CODE_OK ? 'ok' : code === CODE_NO_SERVICE ? 'no-service' : 'stale';
}

/** The filter words, lowercased. */
function filterWords(filter: string): string[] {
  return filter.toLowerCase().split(/\s+/).filter((w) => w !== '');
}

function keep(order: Uint32Array, test: (i: number) => boolean): Uint32Array {
  const out = new Uint32Array(order.length);
  let n = 0;
  for (let k = 0; k < order.length; k++) {
    const i = order[k]!;
    if (test(i)) out[n++] = i;
  }
  return out.slice(0, n);
}

/**
 * Entry indices for `query`, in its sort order: the selected Service's entries (those
 * whose destination is one of its VIPs or a NodePort on a node address) when
 * `query.service` is set (none when no Service has that name), then those matching the
 * filter. A filter that extends the previous one (same sort and Service) refines the
 * previous result instead of scanning the whole table.
 */
export function conntrackOrder(index: ConntrackIndex, query: ConntrackQuery): Uint32Array {
  let order = sortedOrder(index, query.sort);
  if (query.service !== null) {
    const s = index.services.findIndex((x) => x.label === query.service);
    const scopeKey = `${query.sort.column}:${query.sort.descending}:${query.service}`;
    const cached = index.filterCache.get(`scope ${scopeKey}`);
    order = cached?.order ?? keep(order, (i) => s >= 0 && index.serviceOf[i] === s);
    if (!cached) index.filterCache.set(`scope ${scopeKey}`, { filter: '', order });
  }
  const words = filterWords(query.filter);
  if (words.length === 0) return order;
  const base = `${query.sort.column}:${query.sort.descending}:${query.service ?? ''}`;
  const last = index.filterCache.get(`text ${base}`);
  const normalized = words.join(' ');
  if (last && last.filter === normalized) return last.order;
  const from = last && normalized.startsWith(last.filter) ? last.order : order;
  const tests = words.map((w) => conntrackWordTest(index, w));
  const result = keep(from, (i) => tests.every((t) => t(i)));
  index.filterCache.set(`text ${base}`, { filter: normalized, order: result });
  return result;
}

// ---- the view ---------------------------------------------------------------------------------

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

function countStale(index: ConntrackIndex, order: Uint32Array): number {
  if (order.length === index.entries.length) return index.staleCount;
  let n = 0;
  for (let k = 0; k < order.length; k++) {
    const c = index.codeOf[order[k]!]! & 3;
    if (c === CODE_STALE_GONE || c === CODE_STALE_UNTRANSLATED) n++;
  }
  return n;
}

/**
 * Which conntrack a snapshot's pane shows: netfilter's (`conntrack -L`) when it has
 * entries, else Cilium's CT map (`cilium-dbg bpf ct list global`) when that was read,
 * else netfilter's part as it is (empty, failed or null).
 */
export function conntrackSource(snapshot: NodeSnapshot): { readonly kind: ConntrackSourceKind; readonly part: Parsed<ConntrackTable> | null } {
  const nf = snapshot.conntrack ?? null;
  const cilium = snapshot.ciliumConntrack ?? null;
  if ((nf?.value?.entries.length ?? 0) === 0 && cilium?.value) return { kind: 'cilium', part: cilium };
  return { kind: 'netfilter', part: nf };
}

/** Where the pane's entries come from: netfilter conntrack, or Cilium's CT BPF maps. */
export type ConntrackSourceKind = 'netfilter' | 'cilium';

/**
 * The table is still being parsed (staged load): netfilter's, or Cilium's when netfilter's
 * came out empty (the pane then shows Cilium's).
 */
function conntrackPending(snapshot: NodeSnapshot): boolean {
  if (isPending(snapshot, 'conntrack')) return true;
  return isPending(snapshot, 'ciliumConntrack') && (snapshot.conntrack?.value?.entries.length ?? 0) === 0;
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
    const summary = { shown: 0, total: 0, count, max, percent, stale: 0, staleShown: 0 };
    return { ...base, availability, index: EMPTY_INDEX, order: new Uint32Array(0), scope: null, summary };
  }
  const index = conntrackIndex(snapshot);
  const order = conntrackOrder(index, query);
  const scope = query.service === null ? null : { service: query.service, found: index.services.some((s) => s.label === query.service) };
  const events = ct.value.events ?? [];
  const summary: ConntrackSummary = {
    shown: order.length,
    total: index.entries.length,
    ...(events.length > 0 ? { events: events.length, eventFlows: conntrackEventFlows(events).length, tableRead: index.entries.length > 0 } : {}),
    count,
    max,
    percent,
    stale: index.staleCount,
    staleShown: countStale(index, order),
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
  const entry = index.entries[i]!;
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
