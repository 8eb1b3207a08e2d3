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
import type { ConntrackEntry, ConntrackFlag, ConntrackProto, ConntrackState, ConntrackTable } from './conntrack.js';

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

/**
 * Numbering of texts in order of first sight: `id(text)` the text's id (a text not seen
 * before gets the next, 0, 1, 2…), `idOf(text)` the same without numbering (-1 when not
 * seen), `texts[id]` the text of an id. Equal text ⇔ equal id. Never throws.
 */
export interface TextIds {
  id(text: string): number;
  idOf(text: string): number;
  readonly texts: readonly string[];
}

/** A new, empty {@link TextIds} (a Map from text to id and the texts in order). */
export function textIds(): TextIds {
  const byText = new Map<string, number>();
  const texts: string[] = [];
  return {
    texts,
    idOf: (text) => byText.get(text) ?? -1,
    id(text) {
      let k = byText.get(text);
      if (k === undefined) {
        k = texts.length;
        texts.push(text);
        byText.set(text, k);
      }
      return k;
    },
  };
}

/** {@link ConntrackAddressIds} made from the entries' address text (see {@link textIds}). */
export function addressIdsFromText(entries: readonly ConntrackEntry[]): ConntrackAddressIds {
  const numbering = textIds();
  const id = (text: string): number => numbering.id(text);
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
    addresses: numbering.texts,
    idOf: (text) => numbering.idOf(text),
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
 * always the same object); `proto`, the ports, `state`, `timeout`, `flags`, `mark`, `zone`
 * and `counterTotal` its fields read in place (equal to the entry's); `ids` its address ids.
 */
export interface ConntrackRows {
  readonly length: number;
  entry(i: number): ConntrackEntry;
  proto(i: number): ConntrackProto;
  origDport(i: number): number | undefined;
  replySport(i: number): number | undefined;
  /** Entry `i`'s original source port and reply destination port (the filter's NAT view reads all four). */
  origSport(i: number): number | undefined;
  replyDport(i: number): number | undefined;
  state(i: number): ConntrackState | undefined;
  /** Seconds, as printed. */
  timeout(i: number): number | undefined;
  flags(i: number): readonly ConntrackFlag[];
  mark(i: number): number | undefined;
  zone(i: number): number | undefined;
  /**
   * Both directions' packets (or bytes) added, as a number (`Number` of the bigint sum);
   * null when neither direction has counters (`nf_conntrack_acct=0`).
   */
  counterTotal(i: number, which: 'packets' | 'bytes'): number | null;
  readonly ids: ConntrackAddressIds;
}

/** {@link ConntrackRows.counterTotal} of one entry object. */
export function entryCounterTotal(e: ConntrackEntry, which: 'packets' | 'bytes'): number | null {
  const a = which === 'packets' ? e.orig.packets : e.orig.bytes;
  const b = which === 'packets' ? e.reply.packets : e.reply.bytes;
  return a === undefined && b === undefined ? null : Number((a ?? 0n) + (b ?? 0n));
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
    origSport: (i) => entries[i]!.orig.sport,
    replyDport: (i) => entries[i]!.reply.dport,
    state: (i) => entries[i]!.state,
    timeout: (i) => entries[i]!.timeout,
    flags: (i) => entries[i]!.flags,
    mark: (i) => entries[i]!.mark,
    zone: (i) => entries[i]!.zone,
    counterTotal: (i, which) => entryCounterTotal(entries[i]!, which),
    get ids() {
      return (ids ??= conntrackAddressIds(entries));
    },
  };
}
