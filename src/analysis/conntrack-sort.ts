/**
 * Sort orders of a conntrack index (src/analysis/conntrack-index.ts) by column: one
 * numeric key per entry, placed by counting when the keys are few, else by the typed
 * array's native sort; memoised per column and direction in the index.
 */
import { addressSortKey } from './service-view.js';
import type { ConntrackIndex } from './conntrack-index.js';

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

/** Ranks (0-based) of the distinct `value(i)` of entries 0…n-1, ordered by `sortKey` of each (computed once per distinct value). */
function ranks(n: number, value: (i: number) => string, sortKey: (v: string) => string = (v) => v): Map<string, number> {
  const distinct = new Set<string>();
  for (let i = 0; i < n; i++) distinct.add(value(i));
  const keyed = [...distinct].map((v) => [sortKey(v), v] as const).sort(([a], [b]) => byText(a, b));
  return new Map(keyed.map(([, v], i) => [v, i]));
}

/**
 * Ranks of the address ids `ids` (0-based, by `addressSortKey` of their text, ties — two
 * spellings with one key — by first appearance in `ids`, as the ranks of the texts were), by id.
 */
function addressRanks(ids: Int32Array, addresses: readonly string[]): Float64Array {
  const firstAt = new Int32Array(addresses.length).fill(-1);
  const keyed: (readonly [string, number, number])[] = [];
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i]!;
    if (firstAt[id] === -1) {
      firstAt[id] = i;
      keyed.push([addressSortKey(addresses[id]!), i, id]);
    }
  }
  // Pushed in order of first appearance: a stable sort by key keeps it for ties.
  keyed.sort(([a], [b]) => byText(a, b));
  const rank = new Float64Array(addresses.length);
  keyed.forEach(([, , id], r) => (rank[id] = r));
  return rank;
}

function byText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * One key per entry for `column`: a non-negative integer; absent values sort last
 * (timeout) or first (state). Every column reads the rows in place (no object per entry).
 */
function sortKeys(index: ConntrackIndex, column: ConntrackSortColumn): Float64Array {
  const { rows } = index;
  const n = rows.length;
  const keys = new Float64Array(n);
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
    for (let i = 0; i < n; i++) {
      const s = index.serviceOf[i]!;
      keys[i] = s < 0 ? none : rank[s]!;
    }
  } else if (column === 'vip' || column === 'endpoint') {
    // By address id (equal text, equal id), then port: no object per entry.
    const ids = column === 'vip' ? rows.ids.origDst : rows.ids.replySrc;
    const rank = addressRanks(ids, rows.ids.addresses);
    for (let i = 0; i < n; i++) keys[i] = rank[ids[i]!]! * 65536 + ((column === 'vip' ? rows.origDport(i) : rows.replySport(i)) ?? 0);
  } else if (column === 'protocol' || column === 'state') {
    const word = column === 'protocol' ? (i: number) => rows.proto(i) : (i: number) => rows.state(i) ?? '';
    const rank = ranks(n, word);
    for (let i = 0; i < n; i++) keys[i] = rank.get(word(i))!;
  } else if (column === 'packets' || column === 'bytes') {
    // Both directions' counters (nf_conntrack_acct=1); a flow without them sorts after every count.
    let max = 0;
    for (let i = 0; i < n; i++) {
      const c = rows.counterTotal(i, column);
      keys[i] = c ?? -1;
      if (c !== null && c > max) max = c;
    }
    for (let i = 0; i < n; i++) if (keys[i] === -1) keys[i] = max + 1;
  } else {
    let max = 0;
    const timeouts = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      const t = rows.timeout(i);
      timeouts[i] = t === undefined ? -1 : t;
      if (t !== undefined && t > max) max = t;
    }
    for (let i = 0; i < n; i++) keys[i] = timeouts[i]! < 0 ? max + 1 : timeouts[i]!;
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

/**
 * The keys {@link sortedOrder} sorts `column` on (whole numbers ≥ 0, one per entry), and their
 * largest (the last column's kept in the index: `S` reverses without recomputing them).
 */
export function conntrackSortKeys(index: ConntrackIndex, column: ConntrackSortColumn): { readonly keys: Float64Array; readonly max: number } {
  const cached = index.keyCache.get(column);
  if (cached) return cached;
  const n = index.rows.length;
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
 * Entry indices of the whole table in `sort` order (memoised in the index): ascending (or
 * descending) key, ties in entry order. Keys that are whole numbers up to a few times the
 * entry count (Services, states, timeouts) are placed by counting ({@link orderByCounting},
 * linear); other keys by {@link orderBySort}. Both give the same order (test/unit/conntrack-sort-order.test.ts).
 */
export function sortedOrder(index: ConntrackIndex, sort: ConntrackSort): Uint32Array {
  const cacheKey = `${sort.column}:${sort.descending ? 'desc' : 'asc'}`;
  const cached = index.sortCache.get(cacheKey);
  if (cached) return cached;
  const { keys, max } = conntrackSortKeys(index, sort.column);
  const order = orderByCounting(keys, max, sort.descending) ?? orderBySort(keys, max, sort.descending);
  index.sortCache.set(cacheKey, order);
  return order;
}

/**
 * Indices of `keys` (whole numbers 0…`max`, `(max + 1) × length` exact as a double) ordered by
 * ascending key (descending when asked), ties by index: each entry gets the number
 * `key × n + index` and the typed array's native numeric sort orders them — stable by
 * construction, several times faster than a comparator on a million entries.
 */
export function orderBySort(keys: Float64Array, max: number, descending: boolean): Uint32Array {
  const n = keys.length;
  const combined = new Float64Array(n);
  for (let i = 0; i < n; i++) combined[i] = (descending ? max - keys[i]! : keys[i]!) * n + i;
  combined.sort();
  const order = new Uint32Array(n);
  for (let k = 0; k < n; k++) order[k] = combined[k]! % n;
  return order;
}

/** The most key values {@link orderByCounting} keeps a count for: 4 per entry, at least 2^16. */
function countingLimit(n: number): number {
  return Math.max(4 * n, 1 << 16);
}

/**
 * {@link orderBySort}'s order by a stable counting sort (one count per key value, then each
 * index placed in its key's run in index order); undefined when a key is not a whole number
 * in 0…`max` or `max` passes {@link countingLimit} (the caller sorts then).
 */
export function orderByCounting(keys: Float64Array, max: number, descending: boolean): Uint32Array | undefined {
  const n = keys.length;
  if (!(max >= 0) || max >= countingLimit(n)) return undefined;
  const starts = new Uint32Array(max + 2);
  for (let i = 0; i < n; i++) {
    const key = keys[i]!;
    if (!Number.isInteger(key) || key < 0 || key > max) return undefined;
    starts[(descending ? max - key : key) + 1]!++;
  }
  for (let v = 1; v <= max + 1; v++) starts[v]! += starts[v - 1]!;
  const order = new Uint32Array(n);
  for (let i = 0; i < n; i++) order[starts[descending ? max - keys[i]! : keys[i]!]!++] = i;
  return order;
}
