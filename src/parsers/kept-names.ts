/**
 * The names of the chains the nft -j lazy pass keeps as entries (nft-json-direct.ts
 * `keepChain`), by table: whether a name is kept twice in one table (nft merges such chains;
 * the eager reader then reads the text) and, once pass 1 is over, which kept chain a table's
 * name is. A quarter of a million names go in on a big node and few are looked up, so no map
 * is filled name by name: each name's hash goes into an array, which is sorted once at
 * {@link KeptNames.seal} (hash, then index); a look-up is a binary search, then an exact
 * compare of table and name among equal hashes. {@link KeptNamesViaMap} is the reference
 * (a Map per table), and the fallback past {@link MAX_SORTED} names.
 */

/** Names past this count are indexed by {@link KeptNamesViaMap} (a sort key holds a 32-bit hash and a 21-bit index). */
export const MAX_SORTED = 1 << 21;

/** The hash of a name: FNV-1a over its UTF-16 code units, unsigned 32-bit. */
export function nameHash(name: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** What both indexes answer: kept chains by (table, name), table a small number given by the caller. */
export interface KeptNameIndex {
  /** Adds name `name` of table `table` as the next index (0, 1, …). */
  add(table: number, name: string): void;
  /** Ends the adding: true when some name was added twice for one table. */
  seal(): boolean;
  /** After {@link seal}: the index of `name` in `table` (the first added, when added twice), or -1. */
  find(table: number, name: string): number;
}

/** The reference index: one Map of names per table. */
export class KeptNamesViaMap implements KeptNameIndex {
  private readonly byTable = new Map<number, Map<string, number>>();
  private twice = false;
  private count = 0;

  add(table: number, name: string): void {
    let names = this.byTable.get(table);
    if (names === undefined) this.byTable.set(table, (names = new Map()));
    if (names.has(name)) this.twice = true;
    else names.set(name, this.count);
    this.count++;
  }

  seal(): boolean {
    return this.twice;
  }

  find(table: number, name: string): number {
    return this.byTable.get(table)?.get(name) ?? -1;
  }
}

/** The index of the module comment: hashes sorted once; a Map index past {@link MAX_SORTED} names. */
export class KeptNames implements KeptNameIndex {
  private names: string[] = [];
  private tables: number[] = [];
  private hashes: number[] = [];
  /** After {@link seal}: hash × 2^21 + index, ascending. */
  private sorted: Float64Array = new Float64Array(0);
  private viaMap: KeptNamesViaMap | undefined;

  /**
   * `hash`: the names' hash (a test gives a poor one to make names collide); `maxSorted`: past
   * this many names the Map index answers (at most {@link MAX_SORTED}; a test gives fewer).
   */
  constructor(
    private readonly hash: (name: string) => number = nameHash,
    private readonly maxSorted = MAX_SORTED,
  ) {}

  add(table: number, name: string): void {
    this.names.push(name);
    this.tables.push(table);
    this.hashes.push(this.hash(name));
  }

  seal(): boolean {
    const n = this.names.length;
    if (n > Math.min(this.maxSorted, MAX_SORTED)) {
      const map = (this.viaMap = new KeptNamesViaMap());
      for (let k = 0; k < n; k++) map.add(this.tables[k]!, this.names[k]!);
      this.hashes = [];
      return map.seal();
    }
    const sorted = new Float64Array(n);
    for (let k = 0; k < n; k++) sorted[k] = this.hashes[k]! * MAX_SORTED + k;
    sorted.sort();
    this.sorted = sorted;
    this.hashes = [];
    // Equal (table, name) pairs have equal hashes: they sit in one run of equal hashes.
    for (let i = 1; i < n; i++) {
      if (Math.floor(sorted[i]! / MAX_SORTED) !== Math.floor(sorted[i - 1]! / MAX_SORTED)) continue;
      const k = sorted[i]! % MAX_SORTED;
      for (let j = i - 1; j >= 0 && Math.floor(sorted[j]! / MAX_SORTED) === Math.floor(sorted[i]! / MAX_SORTED); j--) {
        const other = sorted[j]! % MAX_SORTED;
        if (this.tables[other] === this.tables[k] && this.names[other] === this.names[k]) return true;
      }
    }
    return false;
  }

  find(table: number, name: string): number {
    if (this.viaMap !== undefined) return this.viaMap.find(table, name);
    const sorted = this.sorted;
    const low = this.hash(name) * MAX_SORTED;
    // The first key ≥ hash × 2^21 (index 0 of that hash).
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (sorted[mid]! < low) lo = mid + 1;
      else hi = mid;
    }
    // Keys of this hash ascend by index: the first match is the first added.
    for (let i = lo; i < sorted.length && sorted[i]! < low + MAX_SORTED; i++) {
      const k = sorted[i]! - low;
      if (this.tables[k] === table && this.names[k] === name) return k;
    }
    return -1;
  }
}
