/**
 * Address ids of a conntrack table: every distinct address text of its entries gets a
 * small integer, and four Int32Array columns give, per entry (in `entries` order), the id
 * of its original source and destination and of its reply source and destination. Equal
 * text ⇔ equal id, so a comparison or a look-up by address is an integer one
 * (src/analysis/conntrack-classify.ts reads them instead of the strings).
 *
 * The parser hands them out with the entries (its interner numbers each address as it
 * reads it, src/parsers/conntrack-scan.ts) and registers them here against the entries
 * array; a table built otherwise (Cilium's CT maps, tests) gets them made from the
 * entries' text on first use. Kept beside the model, not in it: the model's shape, its
 * JSON and its plain copies stay what they were.
 */
import type { ConntrackEntry, ConntrackProto, ConntrackTable } from './conntrack.js';

/**
 * The ids of one entries array. `addresses[id]` is the text of id `id`; `idOf(text)` the
 * id of a text (-1 when no entry holds it); `origSrc[i]`, `origDst[i]`, `replySrc[i]`,
 * `replyDst[i]` the ids of entry `i`'s addresses.
 */
export interface ConntrackAddressIds {
  readonly addresses: readonly string[];
  idOf(text: string): number;
  readonly origSrc: Int32Array;
  readonly origDst: Int32Array;
  readonly replySrc: Int32Array;
  readonly replyDst: Int32Array;
}

const REGISTRY = new WeakMap<readonly ConntrackEntry[], ConntrackAddressIds>();

/** Records `ids` as the address ids of `entries` (the parser calls it once its table is done). */
export function registerConntrackAddressIds(entries: readonly ConntrackEntry[], ids: ConntrackAddressIds): void {
  REGISTRY.set(entries, ids);
}

/**
 * The address ids of `entries`: the parser's when it registered them, else made from the
 * entries' text (one pass, then remembered). Never throws.
 */
export function conntrackAddressIds(entries: readonly ConntrackEntry[]): ConntrackAddressIds {
  const known = REGISTRY.get(entries);
  if (known !== undefined) return known;
  const ids = addressIdsFromText(entries);
  REGISTRY.set(entries, ids);
  return ids;
}

/** {@link ConntrackAddressIds} made from the entries' address text (a Map from text to id). */
export function addressIdsFromText(entries: readonly ConntrackEntry[]): ConntrackAddressIds {
  const byText = new Map<string, number>();
  const addresses: string[] = [];
  const id = (text: string): number => {
    let k = byText.get(text);
    if (k === undefined) {
      k = addresses.length;
      addresses.push(text);
      byText.set(text, k);
    }
    return k;
  };
  const n = entries.length;
  const column = (text: (e: ConntrackEntry) => string): Int32Array => {
    const out = new Int32Array(n);
    for (let i = 0; i < n; i++) out[i] = id(text(entries[i]!));
    return out;
  };
  // The classification and the sorts read these two; the others are made when first read.
  const origDst = column((e) => e.orig.dst);
  const replySrc = column((e) => e.reply.src);
  let origSrc: Int32Array | undefined;
  let replyDst: Int32Array | undefined;
  return {
    addresses,
    idOf: (text) => byText.get(text) ?? -1,
    origDst,
    replySrc,
    get origSrc() {
      return (origSrc ??= column((e) => e.orig.src));
    },
    get replyDst() {
      return (replyDst ??= column((e) => e.reply.dst));
    },
  };
}

/**
 * A conntrack table's entries read by index, without an object per entry where the table
 * is held in columns (the parser's, src/parsers/conntrack-columns.ts): `length` entries;
 * `entry(i)` entry `i` as an object (made on demand: the same values as `entries[i]`, not
 * always the same object); `proto`, `origDport`, `replySport` its fields read in place;
 * `ids` its address ids.
 */
export interface ConntrackRows {
  readonly length: number;
  entry(i: number): ConntrackEntry;
  proto(i: number): ConntrackProto;
  origDport(i: number): number | undefined;
  replySport(i: number): number | undefined;
  readonly ids: ConntrackAddressIds;
}

const ROWS = new WeakMap<object, ConntrackRows>();

/** Records `rows` as the row reader of `table` (the parser calls it for the tables it builds). */
export function registerConntrackRows(table: ConntrackTable, rows: ConntrackRows): void {
  ROWS.set(table, rows);
}

/**
 * The rows of `table`: the parser's column reader when it built the table, else one over
 * `table.entries` (reading `entries` builds them for a column table: avoid it on big tables).
 * Never throws.
 */
export function conntrackRows(table: ConntrackTable): ConntrackRows {
  const known = ROWS.get(table);
  if (known !== undefined) return known;
  const entries = table.entries;
  const byEntries = ROWS.get(entries);
  if (byEntries !== undefined) return byEntries;
  const rows = entryRows(entries);
  ROWS.set(entries, rows);
  return rows;
}

/** The number of entries of `table`, without building them. */
export function conntrackEntryCount(table: ConntrackTable): number {
  return (ROWS.get(table) ?? table.entries).length;
}

/** {@link ConntrackRows} over an array of entries (ids from the registry, else made from the text on first use). */
export function entryRows(entries: readonly ConntrackEntry[]): ConntrackRows {
  let ids: ConntrackAddressIds | undefined;
  return {
    length: entries.length,
    entry: (i) => entries[i]!,
    proto: (i) => entries[i]!.proto,
    origDport: (i) => entries[i]!.orig.dport,
    replySport: (i) => entries[i]!.reply.sport,
    get ids() {
      return (ids ??= conntrackAddressIds(entries));
    },
  };
}
