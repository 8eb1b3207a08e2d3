/**
 * The conntrack table in columns: what the parser fills for the lines its fast path reads
 * (`conntrack-fast.ts`), one slot per entry in typed arrays — line number, kind (see
 * `packKind`), both tuples' ports and counters, the four address ids — and no object per
 * entry. Entries of any other shape (the general parser's, or compact entries with extras
 * or counters too large to pack) are kept as objects beside the columns.
 *
 * The table's `entries` array is made from the columns when something first reads it
 * (trace, diagnose, `show conntrack`): the same compact entries the fast path made before
 * (`conntrack-compact.ts`), equal field for field. The Conntrack pane reads the rows in
 * place through {@link ConntrackRows} (src/model/conntrack-ids.ts) and builds objects only
 * for the rows it shows.
 */
import type { ConntrackEntry, ConntrackFlag, ConntrackProto, ConntrackState, ConntrackTable } from '../model/conntrack.js';
import { entryCounterTotal, registerConntrackAddressIds, registerConntrackRows, type ConntrackAddressIds, type ConntrackRows } from '../model/conntrack-ids.js';
import { CompactConntrackEntry, compactKindFlags, compactKindMark, compactKindProto, compactKindState, compactKindTimeout, makeCompactTupleFromCounters, packedCounter } from './conntrack-compact.js';
import { CONNTRACK_BYTES_ROW } from './conntrack-bytes.js';
import { lastConntrackFastEntry, lastConntrackFastLine, lastConntrackFastQueuedIds } from './conntrack-fast.js';
import type { ConntrackInterner } from './conntrack-scan.js';

const FIRST_CAPACITY = 1024;
// Queued address lookups (see `ConntrackInterner.defer`) resolved about this often: a batch
// whose slots fit in the cache several times over.
const RESOLVE_AT = 4096;

function grown(a: Int32Array, size: number): Int32Array<ArrayBuffer> {
  const b = new Int32Array(size);
  b.set(a);
  return b;
}

/**
 * Fills the columns entry by entry, in table order; {@link finish} gives the rows. The
 * fast path's lines may come with address lookups queued in `interner` (read `deferred`):
 * their ids are written into the columns when the queue is resolved.
 */
export class ConntrackColumnBuilder {
  private n = 0;
  // Rows from here on may hold queued lookups (-2 - place) in their id columns.
  private unresolved = 0;
  private cap = FIRST_CAPACITY;
  private line = new Int32Array(FIRST_CAPACITY);
  // ≥ 0: the kind of a column entry; < 0: -(index in `special` + 1).
  private kind = new Int32Array(FIRST_CAPACITY);
  // Two per entry (original, reply): sport << 16 | dport; counters packed (packCounters) or -1 for none.
  private ports = new Int32Array(2 * FIRST_CAPACITY);
  private counters = new Int32Array(2 * FIRST_CAPACITY);
  // The four address ids, one column each (orig src, dst, reply src, dst): cut, not copied, at the end.
  private src0 = new Int32Array(FIRST_CAPACITY);
  private dst0 = new Int32Array(FIRST_CAPACITY);
  private src1 = new Int32Array(FIRST_CAPACITY);
  private dst1 = new Int32Array(FIRST_CAPACITY);
  private readonly special: ConntrackEntry[] = [];

  /** `interner`: the one the fast path reads with (its queue is resolved and cleared here). */
  constructor(private readonly interner?: ConntrackInterner) {}

  /** Number of entries added. */
  get length(): number {
    return this.n;
  }

  private slot(): number {
    if (this.n === this.cap) this.resize(this.cap * 2);
    return this.n++;
  }

  /**
   * Room for `capacity` entries in all, allocated now: a table whose size is known (a file's
   * bytes over its lines' length) is then filled without the columns growing — each growth
   * is a new set of typed arrays (external memory, which drives V8's mark-compacts) and a copy.
   * No effect when there is room already. Past the capacity the columns grow as before.
   */
  reserve(capacity: number): void {
    if (capacity > this.cap) this.resize(Math.ceil(capacity));
  }

  /** How many times the columns were allocated anew (grown or reserved): a count of work for tests. */
  get allocations(): number {
    return this.resizes;
  }

  private resizes = 0;

  private resize(cap: number): void {
    this.resizes++;
    this.cap = cap;
    this.line = grown(this.line, cap);
    this.kind = grown(this.kind, cap);
    this.ports = grown(this.ports, 2 * cap);
    this.counters = grown(this.counters, 2 * cap);
    this.src0 = grown(this.src0, cap);
    this.dst0 = grown(this.dst0, cap);
    this.src1 = grown(this.src1, cap);
    this.dst1 = grown(this.dst1, cap);
  }

  /** The row `readConntrackBytes` last accepted (`CONNTRACK_BYTES_ROW`), as line `lineNo`; its queued lookups resolved with the next batch. */
  addBytesRow(lineNo: number): void {
    const r = CONNTRACK_BYTES_ROW;
    const i = this.slot();
    this.line[i] = lineNo;
    this.kind[i] = r[0]!;
    this.ports[2 * i] = r[1]!;
    this.ports[2 * i + 1] = r[2]!;
    this.counters[2 * i] = r[3]!;
    this.counters[2 * i + 1] = r[4]!;
    this.src0[i] = r[5]!;
    this.dst0[i] = r[6]!;
    this.src1[i] = r[7]!;
    this.dst1[i] = r[8]!;
    const interner = this.interner;
    if (interner !== undefined && interner.queued >= RESOLVE_AT) this.resolveIds();
  }

  /** The entry the fast path last read (`readConntrackFast` returned true), as line `lineNo`. */
  addFast(lineNo: number): void {
    const { k, ports, counters } = lastConntrackFastLine();
    const c0 = counters[0];
    const c1 = counters[1];
    const i = this.slot();
    this.setIds(i, lastConntrackFastQueuedIds());
    if (k < 0 || typeof c0 === 'object' || typeof c1 === 'object') {
      // The entry resolves the line's lookups (its texts); the row's are written with the rest.
      this.kind[i] = -(this.special.push(lastConntrackFastEntry(lineNo)));
    } else {
      this.line[i] = lineNo;
      this.kind[i] = k;
      this.ports[2 * i] = ports[0]!;
      this.ports[2 * i + 1] = ports[1]!;
      this.counters[2 * i] = c0 === undefined ? -1 : c0;
      this.counters[2 * i + 1] = c1 === undefined ? -1 : c1;
    }
    const interner = this.interner;
    if (interner !== undefined && interner.queued >= RESOLVE_AT) this.resolveIds();
  }

  /** Any other entry, with its address ids (orig src, dst, reply src, dst). */
  addEntry(entry: ConntrackEntry, ids: ArrayLike<number>): void {
    const i = this.slot();
    this.setIds(i, ids);
    this.kind[i] = -(this.special.push(entry));
    // Lines the fast path gave up on may have queued lookups too.
    const interner = this.interner;
    if (interner !== undefined && interner.queued >= RESOLVE_AT) this.resolveIds();
  }

  /**
   * Writes the ids of the queued lookups into the rows that hold them, and clears the queue
   * (and so lets go of the texts or bytes the lookups were read from).
   */
  resolveIds(): void {
    const interner = this.interner;
    if (interner === undefined) return;
    interner.resolve();
    for (const col of [this.src0, this.dst0, this.src1, this.dst1]) {
      for (let r = this.unresolved; r < this.n; r++) {
        const v = col[r]!;
        if (v <= -2) col[r] = interner.queuedId(-2 - v);
      }
    }
    this.unresolved = this.n;
    interner.clearQueue();
  }

  private setIds(i: number, ids: ArrayLike<number>): void {
    this.src0[i] = ids[0]!;
    this.dst0[i] = ids[1]!;
    this.src1[i] = ids[2]!;
    this.dst1[i] = ids[3]!;
  }

  /**
   * The rows, the columns cut to their length (the builder is not used after). A column at
   * least three quarters full is cut as a view of its buffer (no copy: a million entries'
   * 40 MB would otherwise be held twice at the end of the parse, the parse's peak), else copied.
   */
  finish(interner: ConntrackInterner): ConntrackColumnRows {
    this.resolveIds();
    const n = this.n;
    const cut = (a: Int32Array<ArrayBuffer>, size: number): Int32Array<ArrayBuffer> => (cutsInPlace(size, a.length) ? a.subarray(0, size) : a.slice(0, size));
    const ids = internerIds(interner, cut(this.src0, n), cut(this.dst0, n), cut(this.src1, n), cut(this.dst1, n));
    const rows = new ConntrackColumnRows(n, cut(this.line, n), cut(this.kind, n), cut(this.ports, 2 * n), cut(this.counters, 2 * n), this.special, ids, interner);
    this.line = this.kind = this.ports = this.counters = this.src0 = this.dst0 = this.src1 = this.dst1 = new Int32Array(0);
    return rows;
  }
}

/** True when a column of `used` slots out of `capacity` is kept as a view (≥ 3/4 used: at most a third more memory than a copy). */
export function cutsInPlace(used: number, capacity: number): boolean {
  return used * 4 >= capacity * 3;
}

/** {@link ConntrackAddressIds} of `interner`'s numbering with the four id columns given. */
export function internerIds(interner: ConntrackInterner, origSrc: Int32Array, origDst: Int32Array, replySrc: Int32Array, replyDst: Int32Array): ConntrackAddressIds {
  return { addresses: interner.texts, idOf: (text) => interner.idOf(text), origSrc, origDst, replySrc, replyDst };
}

/**
 * What a column table is made of (see {@link ConntrackColumnRows.parts}): `kind[i]` ≥ 0 is
 * a `packKind` value of this thread's kind table, < 0 is -(index in `special` + 1);
 * `ports` and `counters` two per entry (original, reply: sport << 16 | dport; counters as
 * `packCounters` packs them, -1 none).
 */
export interface ConntrackColumnParts {
  readonly length: number;
  readonly line: Int32Array;
  readonly kind: Int32Array;
  readonly ports: Int32Array;
  readonly counters: Int32Array;
  readonly special: readonly ConntrackEntry[];
  readonly ids: ConntrackAddressIds;
  /** The parser's interner (its lookup state travels with a table sent to another thread); absent for rows made otherwise. */
  readonly interner: ConntrackInterner | undefined;
}

/**
 * The {@link ConntrackTable} of `rows`: `entries` made from the columns on first read,
 * the rest as given; registered so `conntrackRows(table)` is `rows`.
 */
export function columnTable(rows: ConntrackColumnRows, rest: Omit<ConntrackTable, 'entries'>): ConntrackTable {
  const value: ConntrackTable = {
    get entries() {
      return rows.entries();
    },
    ...rest,
  };
  registerConntrackRows(value, rows);
  return value;
}

/** The rows of a column table (see the module doc). Never throws for `0 ≤ i < length`. */
export class ConntrackColumnRows implements ConntrackRows {
  private built: ConntrackEntry[] | undefined;
  private made = 0;

  constructor(
    readonly length: number,
    private readonly line: Int32Array,
    private readonly kind: Int32Array,
    private readonly ports: Int32Array,
    private readonly counters: Int32Array,
    private readonly special: readonly ConntrackEntry[],
    readonly ids: ConntrackAddressIds,
    private readonly interner?: ConntrackInterner,
  ) {}

  /** The columns as held (views, not copies: for moving the table to another thread). */
  parts(): ConntrackColumnParts {
    const { length, line, kind, ports, counters, special, ids, interner } = this;
    return { length, line, kind, ports, counters, special, ids, interner };
  }

  /** True once {@link entries} made the objects (a pane that reads rows in place never does). */
  get materialized(): boolean {
    return this.built !== undefined;
  }

  /** How many entry objects {@link entry} has made one by one (a count of work: a pane that reads rows in place makes a screenful). */
  get entriesMade(): number {
    return this.made;
  }

  entry(i: number): ConntrackEntry {
    if (this.built !== undefined) return this.built[i]!;
    this.made++;
    return this.make(i);
  }

  private make(i: number): ConntrackEntry {
    const k = this.kind[i]!;
    if (k < 0) return this.special[-k - 1]!;
    const texts = this.ids.addresses;
    const ids = this.ids;
    const po = this.ports[2 * i]!;
    const pr = this.ports[2 * i + 1]!;
    const co = this.counters[2 * i]!;
    const cr = this.counters[2 * i + 1]!;
    const orig = makeCompactTupleFromCounters(texts[ids.origSrc[i]!]!, texts[ids.origDst[i]!]!, po >>> 16, po & 0xffff, co < 0 ? undefined : co);
    const reply = makeCompactTupleFromCounters(texts[ids.replySrc[i]!]!, texts[ids.replyDst[i]!]!, pr >>> 16, pr & 0xffff, cr < 0 ? undefined : cr);
    return new CompactConntrackEntry(this.line[i]!, orig, reply, k);
  }

  /** Every entry as an object, made once (then kept: later reads give the same objects). */
  entries(): readonly ConntrackEntry[] {
    if (this.built === undefined) {
      const out = new Array<ConntrackEntry>(this.length);
      for (let i = 0; i < this.length; i++) out[i] = this.make(i);
      this.built = out;
      registerConntrackAddressIds(out, this.ids);
    }
    return this.built;
  }

  proto(i: number): ConntrackProto {
    const k = this.kind[i]!;
    return k < 0 ? this.special[-k - 1]!.proto : compactKindProto(k);
  }

  origDport(i: number): number | undefined {
    const k = this.kind[i]!;
    return k < 0 ? this.special[-k - 1]!.orig.dport : this.ports[2 * i]! & 0xffff;
  }

  replySport(i: number): number | undefined {
    const k = this.kind[i]!;
    return k < 0 ? this.special[-k - 1]!.reply.sport : this.ports[2 * i + 1]! >>> 16;
  }

  origSport(i: number): number | undefined {
    const k = this.kind[i]!;
    return k < 0 ? this.special[-k - 1]!.orig.sport : this.ports[2 * i]! >>> 16;
  }

  replyDport(i: number): number | undefined {
    const k = this.kind[i]!;
    return k < 0 ? this.special[-k - 1]!.reply.dport : this.ports[2 * i + 1]! & 0xffff;
  }

  state(i: number): ConntrackState | undefined {
    const k = this.kind[i]!;
    return k < 0 ? this.special[-k - 1]!.state : compactKindState(k);
  }

  timeout(i: number): number | undefined {
    const k = this.kind[i]!;
    return k < 0 ? this.special[-k - 1]!.timeout : compactKindTimeout(k);
  }

  flags(i: number): readonly ConntrackFlag[] {
    const k = this.kind[i]!;
    return k < 0 ? this.special[-k - 1]!.flags : compactKindFlags(k);
  }

  mark(i: number): number | undefined {
    const k = this.kind[i]!;
    return k < 0 ? this.special[-k - 1]!.mark : compactKindMark(k);
  }

  zone(i: number): number | undefined {
    const k = this.kind[i]!;
    // A column entry has no zone (one with a zone needs extras: a special).
    return k < 0 ? this.special[-k - 1]!.zone : undefined;
  }

  counterTotal(i: number, which: 'packets' | 'bytes'): number | null {
    const k = this.kind[i]!;
    if (k < 0) return entryCounterTotal(this.special[-k - 1]!, which);
    const a = packedCounter(this.counters[2 * i]!, which);
    const b = packedCounter(this.counters[2 * i + 1]!, which);
    return a === undefined && b === undefined ? null : (a ?? 0) + (b ?? 0);
  }
}
