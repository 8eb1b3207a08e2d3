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
import type { ConntrackEntry } from './conntrack.js';

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
  const origSrc = new Int32Array(n);
  const origDst = new Int32Array(n);
  const replySrc = new Int32Array(n);
  const replyDst = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const { orig, reply } = entries[i]!;
    origSrc[i] = id(orig.src);
    origDst[i] = id(orig.dst);
    replySrc[i] = id(reply.src);
    replyDst[i] = id(reply.dst);
  }
  return { addresses, idOf: (text) => byText.get(text) ?? -1, origSrc, origDst, replySrc, replyDst };
}
