/**
 * Text filtering of a conntrack index: the search text of an entry, one filter word
 * tested field by field without building that text, and the rows a query keeps (the
 * selected Service's, then those matching every word), refining the previous result
 * when the filter only grew.
 */
import { conntrackNatView } from './conntrack-nat.js';
import { CODE_NO_SERVICE, CODE_OK } from './conntrack-classify.js';
import type { ConntrackIndex } from './conntrack-index.js';
import { conntrackSortKeys, sortedOrder, type ConntrackSort } from './conntrack-sort.js';
import { isPlainFilter, rowMatcher } from '../text/row-filter.js';

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
  const e = index.rows.entry(i);
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
  // Fields read from the rows in place (a column table makes no object per entry tested).
  const { rows } = index;
  const { addresses, origSrc, origDst, replySrc, replyDst } = rows.ids;
  return (i) => {
    const proto = rows.proto(i);
    if (inText(proto)) return true;
    const state = rows.state(i);
    if (state !== undefined && inText(lower(state))) return true;
    const ported = PORTED.has(proto);
    const osport = ported ? rows.origSport(i) : undefined;
    const osrc = addresses[origSrc[i]!]!;
    if (endpoint(osrc, osport) || endpoint(addresses[origDst[i]!]!, ported ? rows.origDport(i) : undefined) || endpoint(addresses[replySrc[i]!]!, ported ? rows.replySport(i) : undefined)) return true;
    const rdport = ported ? rows.replyDport(i) : undefined;
    const rdst = addresses[replyDst[i]!]!;
    if ((rdst !== osrc || rdport !== osport) && (snatNote || endpoint(rdst, rdport))) return true;
    for (const f of rows.flags(i)) if (flag(f)) return true;
    const m = rows.mark(i);
    if (m !== undefined && mark(m)) return true;
    const z = rows.zone(i);
    if (z !== undefined && zone(z)) return true;
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
 * The entries of Service `s` (index into `index.services`; none when negative) in `sort`
 * order: equal to {@link scopedOrderViaWhole} (the whole table's order, then kept), without
 * ordering the whole table — the pane opens scoped to one Service, and a million entries'
 * order is made only when the pane is unscoped. The Service's entries are found in entry order
 * and stably sorted by the whole table's keys ({@link conntrackSortKeys}); by the `service`
 * column every key of one Service is the same, so entry order is already the order.
 */
export function scopedOrder(index: ConntrackIndex, s: number, sort: ConntrackSort): Uint32Array {
  // The whole order already made (a sort seen unscoped): keep from it, as before.
  const whole = index.sortCache.get(`${sort.column}:${sort.descending ? 'desc' : 'asc'}`);
  if (whole) return keep(whole, (i) => s >= 0 && index.serviceOf[i] === s);
  const serviceOf = index.serviceOf;
  let n = 0;
  if (s >= 0) for (let i = 0; i < serviceOf.length; i++) if (serviceOf[i] === s) n++;
  const own = new Uint32Array(n);
  if (n > 0) for (let i = 0, k = 0; i < serviceOf.length; i++) if (serviceOf[i] === s) own[k++] = i;
  if (sort.column === 'service' || n < 2) return own;
  // A Service holding much of the table: the whole order by counting is cheaper than a comparator sort.
  if (n > serviceOf.length / 8) return scopedOrderViaWhole(index, s, sort);
  const { keys } = conntrackSortKeys(index, sort.column);
  const sign = sort.descending ? -1 : 1;
  // Ties by entry index, as the whole order's (ascending or descending key).
  return Uint32Array.from([...own].sort((a, b) => sign * (keys[a]! - keys[b]!) || a - b));
}

/** {@link scopedOrder} as it was made before: the whole table in `sort` order, then Service `s`'s entries kept (the tests' reference). */
export function scopedOrderViaWhole(index: ConntrackIndex, s: number, sort: ConntrackSort): Uint32Array {
  return keep(sortedOrder(index, sort), (i) => s >= 0 && index.serviceOf[i] === s);
}

/**
 * Entry indices for `query`, in its sort order: the selected Service's entries (those
 * whose destination is one of its VIPs or a NodePort on a node address) when
 * `query.service` is set (none when no Service has that name), then those matching the
 * filter. A filter that extends the previous one (same sort and Service) refines the
 * previous result instead of scanning the whole table.
 */
export function conntrackOrder(index: ConntrackIndex, query: ConntrackQuery): Uint32Array {
  let order: Uint32Array;
  if (query.service !== null) {
    const s = index.services.findIndex((x) => x.label === query.service);
    const scopeKey = `${query.sort.column}:${query.sort.descending}:${query.service}`;
    const cached = index.filterCache.get(`scope ${scopeKey}`);
    order = cached?.order ?? scopedOrder(index, s, query.sort);
    if (!cached) index.filterCache.set(`scope ${scopeKey}`, { filter: '', order });
  } else {
    order = sortedOrder(index, query.sort);
  }
  if (query.filter.trim() !== '' && !isPlainFilter(query.filter.trim())) {
    // A regex or `!` filter (src/text/row-filter.ts) tests each entry's whole search text.
    const { test } = rowMatcher(query.filter.trim());
    return keep(order, (i) => test(conntrackSearchText(index, i)));
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
