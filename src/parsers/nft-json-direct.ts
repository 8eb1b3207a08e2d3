/**
 * A reader of `nft -j` output (libnftables-json(5); nft's printer, src/json.c) straight
 * from the text into the compact model: no JSON tree per item. nft prints its JSON on one
 * line in a fixed shape (`{"rule": {"family": "ip", "table": "T", "chain": "C", "handle":
 * N, "expr": [ … ]}}`, `", "` and `": "` between tokens, keys always in one order); the
 * rules and regular chains of that shape are read here, token by token, and their
 * statements and expressions are looked up in the ruleset's sharer (nft-share.ts) by the
 * words of the text, so a statement seen before costs a few map look-ups and no objects.
 *
 * Anything else — another item kind, another key order or spacing, an escape in a string,
 * a number that is not a plain integer, a statement kind not read here, a rule of a chain
 * not listed — is handed to the tree walk: the item (or only the statement) is cut out by
 * its brackets and quotes, given to `JSON.parse` and read by {@link JsonWalker} or
 * `statementOf`, exactly as the one-shot parse reads it. So the fast path never decides
 * an answer the tree walk would give differently; it only skips the tree.
 *
 * The whole text is checked as JSON on the way (the fast path accepts only valid JSON;
 * every other item passes `JSON.parse`); when it is not `{"nftables": [ITEM, …]}` with
 * the metainfo first and nothing after, the reader gives up (`undefined`) and the caller
 * runs the one-shot parse, whose diagnostics (line, column, salvage) are the answer. Pure.
 */
import type { Diagnostic } from '../model/diagnostics.js';
import type { NftChain, NftElement, NftExpr, NftFamily, NftMatchOp, NftMetainfo, NftRule, NftRuleset, NftStatement, NftValueExpr, NftVerdictKind } from '../model/nftables.js';
import type { RulesetReadState } from '../model/iptables-facts.js';
import { NFT_READ_STATE } from '../model/nft-facts.js';
import type { ChainDraft, RulesetBuilder, TableDraft } from './nft-builder.js';
import { flatSlice } from '../flat-string.js';
import { EMPTY_LIST, type NftSharer } from './nft-share.js';
import { quoteBigCounters } from './nft-json-batches.js';
import { singleKey, statementOf, unknownsMadeCount } from './nft-json-expr.js';
import { JsonWalker } from './nft-json-walker.js';
import { jsonValueEnd } from './nft-json-scan.js';
import { KeptNames } from './kept-names.js';
import { PackedTexts, type PackWhere } from './packed-texts.js';
import { counterAboveMax } from './nft-types.js';

/** What {@link readNftJsonDirect} read: the ruleset, nft's metainfo, the walk's diagnostics. */
export interface DirectRead {
  readonly ruleset: NftRuleset;
  readonly metainfo: NftMetainfo | undefined;
  readonly diagnostics: Diagnostic[];
}

/**
 * Reads the `nft -j` text given by `pieces` (cut anywhere; read once, in order), yielding
 * after about every `chunkChars` characters of items (a caller turns the event loop
 * there). Returns the result, or `undefined` when the text is not nft -j output of the
 * shape read item by item (then the one-shot parse decides, see the module comment).
 */
export function* readNftJsonDirect(pieces: Iterable<string>, origin: string, chunkChars: number): Generator<void, DirectRead | undefined> {
  const reader = new DirectReader(origin, chunkChars);
  for (const piece of pieces) {
    reader.feed(piece);
    for (let step = reader.step(false); step !== 'more'; step = reader.step(false)) {
      if (step === 'bad') return undefined;
      yield;
    }
  }
  for (let step = reader.step(true); step !== 'end'; step = reader.step(true)) {
    if (step === 'bad') return undefined;
    yield;
  }
  return reader.result();
}

/** {@link readNftJsonDirect} of one text, without turns. */
export function readNftJsonDirectSync(text: string, origin: string): DirectRead | undefined {
  const read = readNftJsonDirect([text], origin, Infinity);
  for (;;) {
    const next = read.next();
    if (next.done) return next.value;
  }
}

/**
 * What {@link readNftJsonLazy} read: the ruleset, whose regular and base chains' rules are
 * built on first read of `rules` (by the same reader, so equal to {@link readNftJsonDirect}'s);
 * nft's metainfo; and `diagnostics()`, the complete list (it builds every chain not read yet
 * first; when a late read met a diagnostic, the list is `whole()`'s, the eager read's, as
 * items' diagnostics come in item order).
 */
export interface LazyRead {
  readonly ruleset: NftRuleset;
  readonly metainfo: NftMetainfo | undefined;
  readonly diagnostics: (whole: () => readonly Diagnostic[]) => readonly Diagnostic[];
}

/**
 * {@link readNftJsonDirect} that only locates each rule (its chain, its span in the text,
 * the item's JSON checked by a syntax scan) and builds a chain's rules when its `rules` is
 * first read: the text is kept until every chain is read. Returns `'eager'` when the text
 * holds a shape this pass does not keep apart (an escape in a rule's strings, a rule item
 * not in nft's printed key order, a rule of a chain not listed, a chain name listed twice in
 * a table, `add`/`insert`/`flush`/… commands): the caller then reads it with {@link readNftJsonDirect}; `undefined` as that
 * reader (not nft -j output of this shape: the one-shot parse decides). `packChars`: the kept
 * text is deflated in blocks of about that many characters as it is read past
 * (src/parsers/packed-texts.ts; a replay's pieces: the text then costs about a tenth of its
 * characters until every chain is read); Infinity keeps it as it came. `packWhere`: where the
 * blocks are deflated (packed-texts.ts `PackWhere`: on libuv's thread pool, beside this read, by default).
 */
export function* readNftJsonLazy(
  pieces: Iterable<string>,
  origin: string,
  chunkChars: number,
  packChars = Infinity,
  packWhere: PackWhere = 'pool',
): Generator<void, LazyRead | undefined | 'eager'> {
  const reader = new DirectReader(origin, chunkChars, true, packChars, packWhere);
  for (const piece of pieces) {
    reader.feed(piece);
    for (let step = reader.step(false); step !== 'more'; step = reader.step(false)) {
      if (step === 'bad') return reader.abandoned ? 'eager' : undefined;
      yield;
    }
  }
  for (let step = reader.step(true); step !== 'end'; step = reader.step(true)) {
    if (step === 'bad') return reader.abandoned ? 'eager' : undefined;
    yield;
  }
  return reader.lazyResult();
}

/** Why {@link DirectReader.step} stopped: more text needed, a turn due, not of this shape, read to the end. */
type Step = 'more' | 'turn' | 'bad' | 'end';

/** Where the reader is: before the array, at an item, after an item, after the array, after the document. */
type Phase = 'open' | 'item' | 'next' | 'close' | 'end';

/** How nft's printer starts a rule and a chain (up to the family's opening quote). */
const RULE_HEAD = '{"rule": {"family": "';
/** Where nft's printer ends one item and starts the next. */
const ITEM_START = '}, {"';
const CHAIN_HEAD = '{"chain": {"family": "';

/**
 * Where `piece` first seems to start a rule or chain item (nft's printer: `}, ` then the
 * item's head; the `}, {"` between statements of one rule is not one), at its `}`; -1 when
 * neither is found. Only where a reader joins text: a place that is not an item's start costs
 * a second join, never a different read (see `DirectReader.nextText`).
 */
function itemStartIn(piece: string): number {
  const rule = piece.indexOf(NEXT_RULE);
  return rule >= 0 ? rule : piece.indexOf(NEXT_CHAIN);
}
const NEXT_RULE = `}, ${RULE_HEAD}`;
const NEXT_CHAIN = `}, ${CHAIN_HEAD}`;

let joinedCharCount = 0;

/** `a` then `b` as one flat string (a join copies into a sequential string), counted by {@link joinedChars}. */
function joined(a: string, b: string): string {
  joinedCharCount += a.length + b.length;
  return [a, b].join('');
}

/** Characters the readers of this module copied to join pieces so far (what a test counts). */
export function joinedChars(): number {
  return joinedCharCount;
}

/** Slots of the word cache (a power of two, less one). */
const WORD_SLOTS_MASK = 4095;


/** Item kinds the tree walk reads that add rules or change chains: the lazy pass leaves such a text to the eager reader. */
const LAZY_STOP: ReadonlySet<string | undefined> = new Set(['rule', 'add', 'create', 'insert', 'delete', 'destroy', 'flush', 'replace', 'list', 'reset', 'rename']);

const EMPTY_KEPT: readonly number[] = [];

/** `a` in an array twice as long. */
function grown(a: Int32Array): Int32Array {
  const out = new Int32Array(a.length * 2);
  out.set(a);
  return out;
}

/**
 * `chain` with `get` as its `rules` getter (the reader's, shared by its chains: one hidden
 * class for them all, where a getter per object would make each a dictionary): same keys in
 * the same order as the chain read eagerly, so spread, JSON and deep equality see no difference.
 */
function lazyChain(chain: NftChain, get: (this: NftChain) => readonly NftRule[]): NftChain {
  // nft-builder's finishChain: a chain without comment or base is `{name, [handle], rules}`.
  const regular = chain.comment === undefined && chain.base === undefined;
  const out: { readonly name: string; readonly handle?: number } = regular ? (chain.handle === undefined ? { name: chain.name } : { name: chain.name, handle: chain.handle }) : { ...chain };
  Object.defineProperty(out, 'rules', { get, enumerable: true, configurable: true });
  return out as unknown as NftChain;
}

const OPENER = /^[ \t\n\r]*\{[ \t\n\r]*"nftables"[ \t\n\r]*:[ \t\n\r]*\[/;

const FAMILIES: ReadonlyMap<string, NftFamily> = new Map(
  (['ip', 'ip6', 'inet', 'arp', 'bridge', 'netdev'] as const).map((f) => [f, f]),
);
const MATCH_OPS: ReadonlyMap<string, NftMatchOp> = new Map(
  (['==', '!=', '<', '>', '<=', '>=', 'in'] as const).map((o) => [o, o]),
);

// Registers of the token readers below (no object per token): the last string's bounds,
// the last integer, the last expression or statement read.
let strFrom = 0;
let strTo = 0;
let intValue = 0;
let exprOut: NftExpr = EMPTY_LIST as unknown as NftExpr;
let stmtOut: NftStatement = EMPTY_LIST as unknown as NftStatement;

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/**
 * The end (after the closing quote) of the string whose opening quote is at `p`, its
 * contents' bounds in `strFrom`/`strTo`; -1 at an escape or a control character (the
 * tree walk reads those) or the end of the text.
 */
function stringAt(t: string, p: number): number {
  if (t.charCodeAt(p) !== 0x22) return -1;
  for (let q = p + 1; q < t.length; q++) {
    const c = t.charCodeAt(q);
    if (c === 0x22) {
      strFrom = p + 1;
      strTo = q;
      return q + 1;
    }
    if (c === 0x5c || c < 0x20) return -1;
  }
  return -1;
}

/**
 * The end of the JSON integer at `p` (`-?(0|[1-9][0-9]*)`, at most 15 digits: exact as a
 * double), its value in `intValue`; -1 for anything else (`-0`, a fraction, an exponent,
 * more digits: `JSON.parse` and the big-counter quoting read those) or the end of the text.
 */
function intAt(t: string, p: number): number {
  if (p < 0) return -1;
  let q = p;
  const negative = t.charCodeAt(q) === 0x2d;
  if (negative) q++;
  const first = q;
  let v = 0;
  for (; q < t.length; q++) {
    const d = t.charCodeAt(q) - 0x30;
    if (!(d >= 0 && d <= 9)) break;
    v = v * 10 + d;
  }
  const digits = q - first;
  if (digits === 0 || digits > 15 || (digits > 1 && t.charCodeAt(first) === 0x30) || (negative && v === 0)) return -1;
  const c = t.charCodeAt(q);
  if (c === 0x2e || c === 0x65 || c === 0x45 || q >= t.length) return -1;
  intValue = negative ? -v : v;
  return q;
}

/**
 * The end of the JSON value starting at `p` (the first character after it), found by
 * following strings and brackets only (`JSON.parse` checks the rest); -1 when the text
 * ends first.
 */
function valueEnd(t: string, p: number): number {
  const c0 = t.charCodeAt(p);
  if (c0 !== 0x7b && c0 !== 0x5b && c0 !== 0x22) {
    for (let q = p; q < t.length; q++) {
      const c = t.charCodeAt(q);
      if (c === 0x2c || c === 0x5d || c === 0x7d || isSpace(c)) return q;
    }
    return -1;
  }
  let depth = 0;
  for (let q = p; q < t.length; q++) {
    const c = t.charCodeAt(q);
    if (c === 0x22) {
      for (q++; q < t.length; q++) {
        const s = t.charCodeAt(q);
        if (s === 0x5c) q++;
        else if (s === 0x22) break;
      }
      if (q >= t.length) return -1;
      if (depth === 0) return q + 1;
    } else if (c === 0x7b || c === 0x5b) depth++;
    else if (c === 0x7d || c === 0x5d) {
      if (--depth <= 0) return q + 1;
    }
  }
  return -1;
}

/** The slot of the word cache for `t[from, to)`: from its length and a few of its characters (the ends differ most). */
function slotOf(t: string, from: number, to: number): number {
  const len = to - from;
  let h = len;
  h = (h * 31 + t.charCodeAt(to - 1)) | 0;
  h = (h * 31 + t.charCodeAt(to - 2)) | 0;
  h = (h * 31 + t.charCodeAt(to - 3)) | 0;
  h = (h * 31 + t.charCodeAt(from + (len >> 1))) | 0;
  return (h * 31 + t.charCodeAt(from + (len >> 2))) & WORD_SLOTS_MASK;
}

/** `t` at `p` starts with `lit`: the position after it, else -1. */
function litAt(t: string, p: number, lit: string): number {
  return p >= 0 && t.startsWith(lit, p) ? p + lit.length : -1;
}

/** Reads items of `{"nftables": [ … ]}` from text fed piece by piece (see {@link readNftJsonDirect}). */
class DirectReader {
  private walker: JsonWalker;
  private sharer: NftSharer;
  private readonly origin: string;
  /** Unread text: the rest of the earlier pieces and the current one. */
  private t = '';
  private i = 0;
  /** The piece to read after `t` when `t` is a joined head of it ({@link feed}), and the characters of the earlier rest at `t`'s start. */
  private nextPiece: string | undefined;
  private headRest = 0;
  /** Characters of the text before `t`. */
  private before = 0;
  private turnedAt = 0;
  private phase: Phase = 'open';
  private index = 0;
  private readonly words: (string | undefined)[] = new Array<string | undefined>(WORD_SLOTS_MASK + 1).fill(undefined);
  private lastChain: ChainDraft | undefined;
  private lastChainTable: TableDraft | undefined;
  private readonly values: (NftValueExpr | undefined)[] = new Array<NftValueExpr | undefined>(WORD_SLOTS_MASK + 1).fill(undefined);
  // Statements of the rule being read (copied exact-size into the rule).
  private readonly stmts: NftStatement[] = [];
  /** Lazy pass: set when the text holds a shape it does not keep apart (the eager reader then reads it). */
  abandoned = false;
  /**
   * Lazy pass: every text fed (rules are read from them later); per located rule its text,
   * start and item index (`spanText`, `spanStart`, `spanItem`, `spanCount` used); per run of
   * one chain's rules (nft prints a table's rules chain by chain) its first span, the chain
   * in pass 1 (`runChain`: a draft or a kept chain's index), then its family and table.
   */
  private texts: PackedTexts;
  private spanText: Int32Array = new Int32Array(1024);
  private spanStart: Int32Array = new Int32Array(1024);
  private spanItem: Int32Array = new Int32Array(1024);
  private spanCount = 0;
  private runFirst: number[] = [];
  /** Per run the chain its rules belong to: a draft of the builder's, or a kept chain's index (`keptName`). */
  private runChain: (ChainDraft | number)[] = [];
  private runOf = new Map<ChainDraft, number>();
  private runTable: { readonly family: NftFamily; readonly name: string }[] = [];
  private runBuilt: Uint8Array = new Uint8Array(0);
  private unread = 0;
  private lazyChains: NftChain[] = [];
  /** Lazy: the walk of the items read after pass 1 (its builder holds only the tables and chains being read). */
  private lateWalker: JsonWalker | undefined;
  /**
   * Lazy pass: the regular chains of listed tables (`{"chain": {"family", "table", "name",
   * "handle"}}`, most of a big node's chains) are kept as entries, not builder drafts: name,
   * handle, how many of the table's drafts came before it (`keptAt`: where it goes among
   * them), the run of its rules (-1: none). {@link lazyResult} makes their `NftChain`s.
   */
  private keptName: string[] = [];
  private keptHandle: number[] = [];
  private keptAt: number[] = [];
  private keptRun: number[] = [];
  /** Per table its kept chains' indexes, in listed order; the last table's list. */
  private keptOf = new Map<TableDraft, number[]>();
  private keptListTable: TableDraft | undefined;
  private keptList: number[] = [];
  /**
   * The kept chains by table and name (kept-names.ts: the run of a chain read later is found
   * by its name, unique in its table; a name kept twice in one table sends the text to the
   * eager reader, which merges such chains); per table with kept chains its number there, and the last table's.
   */
  private keptNames = new KeptNames();
  private keptTableNo = new Map<TableDraft, number>();
  private keptListNo = -1;
  /** Lazy pass: the last located rule's chain (a draft or a kept index), its name and table. */
  private locRef: ChainDraft | number = -1;
  private locName: string | undefined;
  private locTable: TableDraft | undefined;
  /** Lazy pass: the kept chains of the table of the last rule, in listed order, where its rules are in it, and by name (made on a miss). */
  private orderTable: TableDraft | undefined;
  private order: number[] = [];
  private orderAt: Map<string, number> | undefined;
  private cursor = -1;
  private firstDiagnostics: readonly Diagnostic[] = [];
  private lastReadState: RulesetReadState | undefined;
  /** {@link listedTable}: the text from the family's quote to the table name's closing quote last found, its table and builder. */
  private headText = '';
  private headTable: TableDraft | undefined;
  private headBuilder: RulesetBuilder | undefined;

  constructor(
    origin: string,
    private readonly chunkChars: number,
    private readonly lazy = false,
    packChars = Infinity,
    packWhere: PackWhere = 'pool',
  ) {
    this.texts = new PackedTexts(packChars, packWhere);
    this.origin = origin;
    this.walker = new JsonWalker(origin);
    this.sharer = this.walker.builder.sharer;
  }

  /**
   * `t[from, to)` as the sharer's one flat string for that text: a small cache indexed by
   * the length and a few characters answers most look-ups with one comparison in place
   * (no slice, no hash of the whole text); the sharer's names answer the rest.
   */
  private word(from: number, to: number): string {
    const t = this.t;
    const h = slotOf(t, from, to);
    const hit = this.words[h];
    if (hit !== undefined && hit.length === to - from && t.startsWith(hit, from)) return hit;
    const word = this.sharer.name(t.slice(from, to));
    this.words[h] = word;
    return word;
  }

  /**
   * The sharer's value expression of the string `t[from, to)`: the word cache's scheme,
   * for values (an endpoint's address is read twice in a row: its match and its dnat).
   */
  private stringValue(from: number, to: number): NftExpr {
    const t = this.t;
    const h = slotOf(t, from, to);
    const hit = this.values[h];
    if (hit !== undefined) {
      const v = hit.value as string;
      if (v.length === to - from && t.startsWith(v, from)) return hit;
    }
    const value = this.sharer.stringValue(t.slice(from, to));
    this.values[h] = value;
    return value;
  }

  /**
   * Appends the next piece to the text not yet read. The text read on must be one flat string
   * (a concatenation, or a piece grown by `+=`, would leave every look-up going through a cons
   * string), but a copy of every piece costs a copy of the whole text: when
   * the last piece left an item unread, only that rest and this piece's head up to the first
   * place nft's printer starts a rule or chain item ({@link itemStartIn}) are joined and read
   * first; the piece itself is read from there on ({@link nextText}).
   */
  feed(piece: string): void {
    this.before += this.i;
    const rest = this.i < this.t.length ? this.t.slice(this.i) : '';
    this.i = 0;
    const start = rest === '' ? -1 : itemStartIn(piece);
    if (rest === '') this.t = piece;
    else if (start < 0) this.t = joined(rest, piece);
    else {
      this.t = joined(rest, piece.slice(0, start + ITEM_START.length));
      this.nextPiece = piece;
      this.headRest = rest.length;
    }
    if (this.lazy && !this.abandoned) this.texts.push(this.t);
  }

  /**
   * When {@link feed} left a piece to read after the joined head `t` (the last piece's rest,
   * `headRest` characters, then the piece's first characters): reads on in the piece itself at
   * the same place (a place inside the rest: the rest and the whole piece joined, as before),
   * and says true; false when there is none.
   */
  private nextText(): boolean {
    const piece = this.nextPiece;
    if (piece === undefined) return false;
    this.nextPiece = undefined;
    const i = this.i;
    if (i >= this.headRest) {
      this.before += this.headRest;
      this.t = piece;
      this.i = i - this.headRest;
    } else {
      this.before += i;
      this.t = joined(this.t.slice(i, this.headRest), piece);
      this.i = 0;
    }
    if (this.lazy && !this.abandoned) this.texts.push(this.t);
    return true;
  }

  /** The finished ruleset, metainfo and diagnostics (after {@link step} said `end`). */
  result(): DirectRead {
    const w = this.walker;
    return { ruleset: w.builder.finish(), metainfo: w.metainfo, diagnostics: w.diagnostics };
  }

  /**
   * Reads on from `i`. Not `final`: items are read only up to the last place nft's printer
   * starts one (`}, {"`): the item there may be cut by the end of the piece.
   */
  step(final: boolean): Step {
    if (this.abandoned) return 'bad';
    const t = this.t;
    const limit = final ? t.length : t.lastIndexOf(ITEM_START);
    let i = this.i;
    for (;;) {
      while (i < t.length && isSpace(t.charCodeAt(i))) i++;
      this.i = i;
      // Wherever the text read so far ends, the piece after a joined head is read on first.
      if (i >= t.length) return this.nextText() ? this.step(final) : final && this.phase !== 'end' ? 'bad' : final ? 'end' : 'more';
      const c = t.charCodeAt(i);
      switch (this.phase) {
        case 'open': {
          const open = OPENER.exec(t);
          if (open === null) return this.nextText() ? this.step(final) : !final && t.length < 4096 ? 'more' : 'bad';
          i = open[0].length;
          this.phase = 'item';
          continue;
        }
        case 'item': {
          if (!final && i > limit) return this.nextText() ? this.step(final) : 'more';
          const end = this.item(i);
          if (end === -2 || this.abandoned) return 'bad';
          if (end < 0) return this.nextText() ? this.step(final) : final ? 'bad' : 'more';
          this.index++;
          this.i = i = end;
          this.phase = 'next';
          if (this.before + i - this.turnedAt >= this.chunkChars) {
            this.turnedAt = this.before + i;
            return 'turn';
          }
          continue;
        }
        case 'next':
          if (c === 0x2c) this.phase = 'item';
          else if (c === 0x5d) this.phase = 'close';
          else return 'bad';
          i++;
          continue;
        case 'close':
          if (c !== 0x7d) return 'bad';
          this.phase = 'end';
          i++;
          continue;
        case 'end':
          return 'bad';
      }
    }
  }

  /**
   * Reads the item at `i` (a non-space character): the position after it; -1 when the
   * text ends inside it; -2 when it is not JSON, or is the first item but not the metainfo.
   */
  private item(i: number): number {
    const t = this.t;
    if (this.index > 0) {
      const end = t.startsWith(RULE_HEAD, i) ? (this.lazy ? this.locateRule(i) : this.rule(i)) : t.startsWith(CHAIN_HEAD, i) ? this.chain(i) : -1;
      if (end >= 0) return end;
    }
    const end = valueEnd(t, i);
    if (end < 0) return -1;
    let item: unknown;
    try {
      item = JSON.parse(quoteBigCounters(t.slice(i, end)));
    } catch {
      return -2;
    }
    if (this.index === 0) {
      // As the one-shot walk: the metainfo is checked before any item is read.
      if (singleKey(item) !== 'metainfo') return -2;
      this.walker.checkMetainfo([item]);
    }
    if (this.lazy && LAZY_STOP.has(singleKey(item))) {
      this.abandoned = true;
      return -2;
    }
    this.forgetHead();
    this.walker.itemAt(item, this.index);
    return end;
  }

  /** `{"family": "F", "table": "T", ` from `p` (after `{"KIND": `): the family, the table's name in strFrom/strTo. */
  private familyAndTable(t: string, p: number): NftFamily | undefined {
    const q = stringAt(t, p);
    if (q < 0) return undefined;
    const family = FAMILIES.get(this.word(strFrom, strTo));
    if (family === undefined || stringAt(t, litAt(t, q, ', "table": ')) < 0) return undefined;
    return family;
  }

  /**
   * `{"family": "F", "table": "T", ` from `p`: the listed table it names (its name in
   * strFrom/strTo), or undefined. nft prints a table's chains, then its rules, one after
   * another: the text from the family's quote to the table name's closing quote is compared
   * in place with the last one found (its own flat copy; a table found by the builder now is
   * the same draft until the walk reads an item, which may delete or add tables: see
   * {@link forgetHead}).
   */
  private listedTable(t: string, p: number): TableDraft | undefined {
    const head = this.headText;
    if (this.headTable !== undefined && this.headBuilder === this.walker.builder && t.startsWith(head, p)) {
      strTo = p + head.length - 1;
      strFrom = strTo - this.headTable.name.length;
      return this.headTable;
    }
    const family = this.familyAndTable(t, p);
    if (family === undefined) return undefined;
    const table = this.walker.builder.findTable(family, this.word(strFrom, strTo));
    if (table !== undefined) {
      this.headText = flatSlice(t, p, strTo + 1);
      this.headTable = table;
      this.headBuilder = this.walker.builder;
    }
    return table;
  }

  /** Forgets the table {@link listedTable} compares in place (the walk is about to read an item). */
  private forgetHead(): void {
    this.headTable = undefined;
    this.headBuilder = undefined;
  }

  /** A regular chain of a listed table (`{"chain": {"family", "table", "name", "handle"}}`): its end, or -1. */
  private chain(i: number): number {
    const t = this.t;
    const table = this.listedTable(t, i + CHAIN_HEAD.length - 1);
    if (table === undefined) return -1;
    const family = table.family;
    let p = stringAt(t, litAt(t, strTo + 1, ', "name": '));
    if (p < 0) return -1;
    const nameFrom = strFrom;
    const nameTo = strTo;
    p = litAt(t, intAt(t, litAt(t, p, ', "handle": ')), '}}');
    if (p < 0) return -1;
    const builder = this.walker.builder;
    // Its own flat copy, not the sharer's: a kept chain's name is looked up in its table's names only.
    if (this.lazy) this.keepChain(table, flatSlice(t, nameFrom, nameTo), intValue);
    else builder.chain(builder.table(family, table.name), t.slice(nameFrom, nameTo)).handle = intValue;
    return p;
  }

  /**
   * Lazy pass: keeps a regular chain of `table` as an entry (see `keptName`): no draft, no
   * look-up by name. A name kept twice, or also a draft's, is found at {@link lazyResult}
   * (the eager reader then reads the text: it merges such chains).
   */
  private keepChain(table: TableDraft, name: string, handle: number): void {
    const k = this.keptName.length;
    this.keptName.push(name);
    this.keptHandle.push(handle);
    this.keptAt.push(table.chains.size);
    this.keptRun.push(-1);
    if (this.keptListTable !== table) {
      this.keptListTable = table;
      let list = this.keptOf.get(table);
      if (list === undefined) this.keptOf.set(table, (list = []));
      this.keptList = list;
      let no = this.keptTableNo.get(table);
      if (no === undefined) this.keptTableNo.set(table, (no = this.keptTableNo.size));
      this.keptListNo = no;
    }
    this.keptList.push(k);
    this.keptNames.add(this.keptListNo, name);
    if (this.orderTable === table) this.orderAt = undefined;
  }

  /**
   * Lazy pass: a rule of a listed chain in nft's printed key order (`family`, `table`,
   * `chain`, `handle`, [`comment`], `expr`) whose JSON is valid is only located; its end,
   * or -1 (then the item is read as any other: `JSON.parse`, and a rule there ends the lazy pass).
   */
  private locateRule(i: number): number {
    const t = this.t;
    const table = this.listedTable(t, i + RULE_HEAD.length - 1);
    if (table === undefined) return -1;
    let p = litAt(t, strTo + 1, ', "chain": ');
    if (p < 0) return -1;
    // The last rule's chain, compared in place with its closing quote: its name was read from
    // the text as a string without escapes (every place that sets locName does so), so the
    // text there is that string.
    const last = this.locName;
    let chain: ChainDraft | number;
    if (last !== undefined && this.locTable === table && t.startsWith(last, p + 1) && t.charCodeAt(p + 1 + last.length) === 0x22) {
      chain = this.locRef;
      p += last.length + 2;
    } else {
      p = stringAt(t, p);
      if (p < 0) return -1;
      if (!this.locatedChain(t, table.family, table)) return -1;
      chain = this.locRef;
    }
    p = intAt(t, litAt(t, p, ', "handle": '));
    if (p >= 0 && t.startsWith(', "comment": ', p)) p = stringAt(t, p + 13);
    p = litAt(t, p, ', "expr": ');
    if (p < 0 || t.charCodeAt(p) !== 0x5b) return -1;
    p = litAt(t, jsonValueEnd(t, p), '}}');
    if (p < 0) return -1;
    const runs = this.runChain;
    if (runs[runs.length - 1] !== chain) {
      // A chain's rules after another chain's: not nft's order (the eager reader reads it).
      if (typeof chain === 'number' ? this.keptRun[chain]! >= 0 : this.runOf.has(chain)) {
        this.abandoned = true;
        return -1;
      }
      if (typeof chain === 'number') this.keptRun[chain] = runs.length;
      else this.runOf.set(chain, runs.length);
      runs.push(chain);
      this.runFirst.push(this.spanCount);
      this.runTable.push(table);
    }
    const n = this.spanCount++;
    if (n === this.spanText.length) {
      this.spanText = grown(this.spanText);
      this.spanStart = grown(this.spanStart);
      this.spanItem = grown(this.spanItem);
    }
    this.spanText[n] = this.texts.length - 1;
    this.spanStart[n] = i;
    this.spanItem[n] = this.index;
    return p;
  }

  /**
   * Finds the listed chain named `t[strFrom, strTo)` in `table` (a kept chain or a draft) into
   * `locRef`/`locName`/`locTable`: false when there is none. nft prints a table's rules chain
   * by chain in the order it listed the chains, so the kept chain listed after the last one
   * found is compared in place before a look-up by name.
   */
  private locatedChain(t: string, family: NftFamily, table: TableDraft): boolean {
    const len = strTo - strFrom;
    const last = this.locName;
    if (last !== undefined && this.locTable === table && last.length === len && t.startsWith(last, strFrom)) return true;
    if (this.orderTable !== table) {
      this.orderTable = table;
      this.order = this.keptOf.get(table) ?? [];
      this.orderAt = undefined;
      this.cursor = -1;
    }
    const next = this.order[this.cursor + 1];
    if (next !== undefined && this.keptName[next]!.length === len && t.startsWith(this.keptName[next]!, strFrom)) {
      this.cursor++;
      return this.located(next, this.keptName[next]!, table);
    }
    const name = t.slice(strFrom, strTo);
    const draft = this.walker.builder.knownChain(this.walker.builder.table(family, table.name), name);
    if (draft !== undefined) return this.located(draft, draft.name, table);
    this.orderAt ??= new Map(this.order.map((k, j) => [this.keptName[k]!, j]));
    const at = this.orderAt.get(name);
    if (at === undefined) return false;
    this.cursor = at;
    return this.located(this.order[at]!, this.keptName[this.order[at]!]!, table);
  }

  /** Sets the located chain (`locRef`, `locName`, `locTable`); true. */
  private located(ref: ChainDraft | number, name: string, table: TableDraft): boolean {
    this.locRef = ref;
    this.locName = name;
    this.locTable = table;
    return true;
  }

  /**
   * The rules of run `run` (one chain's located rules), built as the eager reader builds
   * them: the fast path, else the item's tree walk with its diagnostics (a walk whose
   * builder holds only this chain, so it notes nothing about tables or chains); then kept
   * as `chain`'s own `rules`. Once every chain is read the kept text is let go.
   */
  readRun(chain: NftChain, run: number): readonly NftRule[] {
    let rules: NftRule[] = [];
    if (run >= 0 && this.runBuilt[run] === 0) {
      this.runBuilt[run] = 1;
      const table = this.runTable[run]!;
      const walker = (this.lateWalker ??= new JsonWalker(this.origin));
      this.walker = walker;
      this.sharer = walker.builder.sharer;
      const draft = walker.builder.chain(walker.builder.table(table.family, table.name), chain.name);
      draft.rules = rules;
      this.lastChain = undefined;
      const end = run + 1 < this.runFirst.length ? this.runFirst[run + 1]! : this.spanCount;
      for (let k = this.runFirst[run]!; k < end; k++) {
        const t = (this.t = this.texts.at(this.spanText[k]!));
        const start = this.spanStart[k]!;
        if (this.rule(start) >= 0) continue;
        // Checked JSON, so the parse does not throw; the walk says what the fast path does not read.
        this.forgetHead();
        walker.itemAt(JSON.parse(quoteBigCounters(t.slice(start, valueEnd(t, start)))), this.spanItem[k]!);
      }
      rules = draft.rules.slice();
      draft.rules = [];
      this.lastReadState = undefined;
      if (--this.unread === 0) {
        this.texts.clear();
        this.t = '';
      }
    }
    Object.defineProperty(chain, 'rules', { value: rules, writable: true, enumerable: true, configurable: true });
    return rules;
  }

  /** Reads every chain not read yet. */
  private readAll(): void {
    for (const chain of this.lazyChains) void chain.rules;
    this.lazyChains = [];
  }

  /**
   * The lazy pass' result (after {@link step} said `end`); `'eager'` when a chain name is
   * listed twice in a table (kept chains are not merged by name: the eager reader does it).
   */
  lazyResult(): LazyRead | 'eager' {
    if (this.keptNames.seal() || this.draftNameKept()) {
      this.texts.clear();
      return 'eager';
    }
    const w = this.walker;
    const runOf = this.runOf;
    const runOfChain = new WeakMap<NftChain, number>();
    const reader = this;
    const get = function (this: NftChain): readonly NftRule[] {
      return reader.readRun(this, runOfChain.get(this) ?? -1);
    };
    const lazyChains = this.lazyChains;
    const keptNames = this.keptNames;
    const keptTableNo = this.keptTableNo;
    const keptRun = this.keptRun;
    const lazyOf = (chain: NftChain, run: number): NftChain => {
      this.unread++;
      const lazy = lazyChain(chain, get);
      runOfChain.set(lazy, run);
      return lazy;
    };
    const ruleset = w.builder.finish(
      (draft, chain) => {
        const run = runOf.get(draft);
        return run === undefined ? chain : lazyOf(chain, run);
      },
      (table, drafts) => {
        // The kept chains in their listed places among the drafts' chains; the chains read
        // later listed in the same order (`readAll`).
        const kept = this.keptOf.get(table) ?? EMPTY_KEPT;
        const out: NftChain[] = [];
        // A kept chain's run is found by its name (unique in its table): one getter per table.
        const no = keptTableNo.get(table);
        const getKept = function (this: NftChain): readonly NftRule[] {
          const k = no === undefined ? -1 : keptNames.find(no, this.name);
          return reader.readRun(this, k < 0 ? -1 : keptRun[k]!);
        };
        // One descriptor for the table's kept chains (not one object per chain).
        const keptRules: PropertyDescriptor = { get: getKept, enumerable: true, configurable: true };
        let j = 0;
        const draftsTo = (at: number) => {
          for (; j < at; j++) {
            const c = drafts[j]!;
            out.push(c);
            if (runOfChain.has(c)) lazyChains.push(c);
          }
        };
        for (const k of kept) {
          draftsTo(this.keptAt[k]!);
          const name = this.keptName[k]!;
          const handle = this.keptHandle[k]!;
          if (this.keptRun[k]! < 0) out.push({ name, handle, rules: [] });
          else {
            this.unread++;
            const lazy = { name, handle } as unknown as NftChain;
            Object.defineProperty(lazy, 'rules', keptRules);
            out.push(lazy);
            lazyChains.push(lazy);
          }
        }
        draftsTo(drafts.length);
        return out;
      },
    );
    // Pass 1's builder, sharer, drafts and kept chains are let go: a late read has its own.
    this.runBuilt = new Uint8Array(this.runChain.length);
    this.runChain = [];
    this.runOf = new Map();
    this.keptName = [];
    this.keptHandle = [];
    this.keptAt = [];
    this.keptRun = [];
    this.keptOf = new Map();
    this.keptListTable = undefined;
    this.keptList = [];
    this.keptNames = new KeptNames();
    this.keptTableNo = new Map();
    this.keptListNo = -1;
    this.locName = undefined;
    this.locTable = undefined;
    this.locRef = -1;
    const tables = new Map<object, { readonly family: NftFamily; readonly name: string }>();
    this.runTable = this.runTable.map((t) => tables.get(t) ?? (tables.set(t, { family: t.family, name: t.name }), tables.get(t)!));
    this.order = [];
    this.orderAt = undefined;
    this.orderTable = undefined;
    this.lastChain = undefined;
    this.lastChainTable = undefined;
    this.headTable = undefined;
    this.headBuilder = undefined;
    this.values.fill(undefined);
    const first = w.diagnostics;
    this.firstDiagnostics = first;
    this.walker = new JsonWalker(this.origin);
    this.sharer = this.walker.builder.sharer;
    if (this.unread === 0) this.texts.clear();
    Object.defineProperty(ruleset, NFT_READ_STATE, { value: () => this.readState() });
    return {
      ruleset,
      metainfo: w.metainfo,
      diagnostics: (whole) => {
        this.readAll();
        return (this.lateWalker?.diagnostics.length ?? 0) > 0 ? whole() : first;
      },
    };
  }

  /** A draft's chain name also kept in its table (lazy pass, in {@link lazyResult} once the kept names are sealed). */
  private draftNameKept(): boolean {
    for (const [table, no] of this.keptTableNo) for (const name of table.chains.keys()) if (this.keptNames.find(no, name) >= 0) return true;
    return false;
  }

  /** What the Rules pane shows before every chain is read (src/model/nft-facts.ts). */
  private readState(): RulesetReadState | undefined {
    if (this.unread === 0) return undefined;
    if (this.lastReadState === undefined) {
      this.lastReadState = { diagnosticsSoFar: [...this.firstDiagnostics, ...(this.lateWalker?.diagnostics ?? [])], unreadChains: this.unread };
    }
    return this.lastReadState;
  }

  /** A rule of a listed chain whose statements are all read here or by `statementOf` without a note: its end, or -1. */
  private rule(i: number): number {
    const t = this.t;
    const table = this.listedTable(t, i + RULE_HEAD.length - 1);
    if (table === undefined) return -1;
    const family = table.family;
    const builder = this.walker.builder;
    let p = stringAt(t, litAt(t, strTo + 1, ', "chain": '));
    if (p < 0) return -1;
    // Rules of one chain come in a run: the last chain's name is compared in place.
    const last = this.lastChain;
    const chain =
      last !== undefined && last.name.length === strTo - strFrom && t.startsWith(last.name, strFrom) && this.lastChainTable === table
        ? last
        : builder.knownChain(builder.table(family, table.name), t.slice(strFrom, strTo));
    if (chain === undefined) return -1;
    this.lastChain = chain;
    this.lastChainTable = table;
    p = intAt(t, litAt(t, p, ', "handle": '));
    if (p < 0) return -1;
    const handle = intValue;
    let comment: string | undefined;
    if (t.startsWith(', "comment": ', p)) {
      p = stringAt(t, p + 13);
      if (p < 0) return -1;
      comment = t.slice(strFrom, strTo);
    }
    p = litAt(t, p, ', "expr": [');
    if (p < 0) return -1;
    const stmts = this.stmts;
    let n = 0;
    if (t.charCodeAt(p) !== 0x5d) {
      for (;;) {
        p = this.statement(t, p, family);
        if (p < 0) return -1;
        stmts[n++] = stmtOut;
        if (t.charCodeAt(p) === 0x5d) break;
        p = litAt(t, p, ', ');
        if (p < 0) return -1;
      }
    }
    p = litAt(t, p + 1, '}}');
    if (p < 0) return -1;
    chain.rules.push(this.sharer.sharedRule(n === 0 ? EMPTY_LIST : stmts.slice(0, n), handle, comment));
    return p;
  }

  /** The statement at `p` into `stmtOut`: its end, or -1 (then the whole item goes to the tree walk). */
  private statement(t: string, p: number, family: NftFamily): number {
    const end = this.fastStatement(t, p);
    return end >= 0 ? end : this.treeStatement(t, p, family);
  }

  /** The statements kube-proxy's rules are made of, in nft's printed shape. */
  private fastStatement(t: string, p: number): number {
    const sharer = this.sharer;
    switch (t.charCodeAt(p + 2)) {
      case 0x6d: {
        // {"match": {"op": "==", "left": L, "right": R}}
        let q = stringAt(t, litAt(t, p, '{"match": {"op": '));
        const op = q < 0 ? undefined : MATCH_OPS.get(this.word(strFrom, strTo));
        if (op === undefined) return -1;
        q = this.expr(t, litAt(t, q, ', "left": '));
        if (q < 0) return -1;
        const left = exprOut;
        q = litAt(t, this.expr(t, litAt(t, q, ', "right": ')), '}}');
        if (q < 0) return -1;
        stmtOut = sharer.match(left, op, exprOut);
        return q;
      }
      case 0x6a:
      case 0x67:
        return this.jumpOrGoto(t, p, true);
      case 0x64:
        if (t.startsWith('{"dnat": {"addr": ', p)) return this.dnat(t, p + 18);
        return this.bareVerdict(t, p);
      case 0x76: {
        // {"vmap": {"key": K, "data": D}}
        let q = this.expr(t, litAt(t, p, '{"vmap": {"key": '));
        if (q < 0) return -1;
        const key = exprOut;
        q = litAt(t, this.expr(t, litAt(t, q, ', "data": ')), '}}');
        if (q < 0) return -1;
        // What the sharer makes of a vmap: a fresh object of shared parts.
        stmtOut = { kind: 'vmap', key, data: exprOut };
        return q;
      }
      default:
        return this.bareVerdict(t, p);
    }
  }

  /** `{"dnat": {"addr": A, "port": P}}` from after `"addr": `. */
  private dnat(t: string, p: number): number {
    let q = this.expr(t, p);
    if (q < 0) return -1;
    const addr = exprOut;
    q = litAt(t, this.expr(t, litAt(t, q, ', "port": ')), '}}');
    if (q < 0) return -1;
    stmtOut = this.sharer.natTo('dnat', EMPTY_LIST, addr, exprOut);
    return q;
  }

  /** `{"jump": {"target": "C"}}` or `goto` into `stmtOut` (or `exprOut`: `statement` false). */
  private jumpOrGoto(t: string, p: number, statement: boolean): number {
    const verdict = t.startsWith('{"jump": {"target": ', p) ? 'jump' : t.startsWith('{"goto": {"target": ', p) ? 'goto' : undefined;
    if (verdict === undefined) return -1;
    const q = litAt(t, stringAt(t, p + 20), '}}');
    if (q < 0) return -1;
    const v = this.sharer.jumpTo(verdict, this.word(strFrom, strTo));
    if (statement) stmtOut = v as NftStatement;
    else exprOut = v;
    return q;
  }

  /** `{"accept": null}`, `drop`, `return`, `continue` into `stmtOut` and `exprOut`. */
  private bareVerdict(t: string, p: number): number {
    let verdict: NftVerdictKind;
    if (t.startsWith('{"accept": null}', p)) verdict = 'accept';
    else if (t.startsWith('{"drop": null}', p)) verdict = 'drop';
    else if (t.startsWith('{"return": null}', p)) verdict = 'return';
    else if (t.startsWith('{"continue": null}', p)) verdict = 'continue';
    else return -1;
    exprOut = this.sharer.verdict(verdict);
    stmtOut = exprOut as NftStatement;
    return p + verdict.length + 10;
  }

  /**
   * Any other statement: cut out, `JSON.parse`d and converted by `statementOf`, as the
   * tree walk does; -1 when that would say anything (not modelled, malformed): the tree
   * walk then reads the whole item and says it.
   */
  private treeStatement(t: string, p: number, family: NftFamily): number {
    if (t.charCodeAt(p) !== 0x7b) return -1;
    const end = valueEnd(t, p);
    if (end < 0) return -1;
    try {
      const before = unknownsMadeCount();
      const stmt = statementOf(JSON.parse(quoteBigCounters(t.slice(p, end))), family);
      if (stmt.kind === 'unknown' || unknownsMadeCount() !== before) return -1;
      // A counter above 2^64−1 is noted by the tree walk.
      if (stmt.kind === 'counter' && counterAboveMax([stmt])) return -1;
      stmtOut = this.sharer.statement(stmt);
      return end;
    } catch {
      return -1;
    }
  }

  /** The expression at `p` into `exprOut` (shared): its end, or -1 for a shape not read here. */
  private expr(t: string, p: number): number {
    if (p < 0) return -1;
    const c = t.charCodeAt(p);
    const sharer = this.sharer;
    if (c === 0x22) {
      const q = stringAt(t, p);
      if (q < 0) return -1;
      if (t.charCodeAt(strFrom) === 0x40 && strTo - strFrom > 1) {
        exprOut = sharer.expr({ kind: 'setref', name: t.slice(strFrom + 1, strTo) });
      } else exprOut = this.stringValue(strFrom, strTo);
      return q;
    }
    if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      const q = intAt(t, p);
      if (q >= 0) exprOut = sharer.numberValue(intValue);
      return q;
    }
    if (c !== 0x7b) return -1;
    switch (t.charCodeAt(p + 2)) {
      case 0x70:
        if (t.startsWith('{"payload": {"protocol": ', p)) return this.payload(t, p + 25);
        if (t.startsWith('{"prefix": {"addr": ', p)) return this.prefix(t, p + 20);
        return -1;
      case 0x6d: {
        const q = litAt(t, stringAt(t, litAt(t, p, '{"meta": {"key": ')), '}}');
        if (q >= 0) exprOut = sharer.meta(this.word(strFrom, strTo));
        return q;
      }
      case 0x6e:
        return this.numgen(t, p);
      case 0x63:
        return this.list(t, litAt(t, p, '{"concat": ['), 'concat');
      case 0x73:
        return this.list(t, litAt(t, p, '{"set": ['), 'set');
      case 0x6a:
      case 0x67:
        return this.jumpOrGoto(t, p, false);
      default:
        return this.bareVerdict(t, p);
    }
  }

  /** `{"payload": {"protocol": "P", "field": "F"}}` from after `"protocol": `. */
  private payload(t: string, p: number): number {
    const q = stringAt(t, p);
    if (q < 0) return -1;
    const protoFrom = strFrom;
    const protoTo = strTo;
    const end = litAt(t, stringAt(t, litAt(t, q, ', "field": ')), '}}');
    if (end >= 0) exprOut = this.sharer.payload(this.word(protoFrom, protoTo), this.word(strFrom, strTo));
    return end;
  }

  /** `{"prefix": {"addr": "A", "len": N}}` from after `"addr": `. */
  private prefix(t: string, p: number): number {
    const q = stringAt(t, p);
    if (q < 0) return -1;
    const addr = this.word(strFrom, strTo);
    const end = litAt(t, intAt(t, litAt(t, q, ', "len": ')), '}}');
    if (end >= 0) exprOut = this.sharer.expr({ kind: 'prefix', addr, len: intValue });
    return end;
  }

  /** `{"numgen": {"mode": "M", "mod": N, "offset": N}}`. */
  private numgen(t: string, p: number): number {
    let q = stringAt(t, litAt(t, p, '{"numgen": {"mode": '));
    if (q < 0) return -1;
    const mode = this.word(strFrom, strTo);
    if (mode !== 'random' && mode !== 'inc') return -1;
    q = intAt(t, litAt(t, q, ', "mod": '));
    if (q < 0) return -1;
    const mod = intValue;
    q = litAt(t, intAt(t, litAt(t, q, ', "offset": ')), '}}');
    if (q >= 0) exprOut = this.sharer.expr({ kind: 'numgen', mode, mod, offset: intValue });
    return q;
  }

  /**
   * `{"concat": [E, …]}`, or `{"set": [EL, …]}` whose elements are values or `[KEY, VALUE]`
   * pairs (no `{"elem": …}` wrapper: the tree walk reads those), from after the `[`.
   */
  private list(t: string, p: number, kind: 'concat' | 'set'): number {
    if (p < 0) return -1;
    const items: (NftExpr | NftElement)[] = [];
    const sharer = this.sharer;
    let q = p;
    if (t.charCodeAt(q) !== 0x5d) {
      for (;;) {
        if (kind === 'set' && t.charCodeAt(q) === 0x5b) {
          q = this.expr(t, q + 1);
          if (q < 0) return -1;
          const key = exprOut;
          q = litAt(t, this.expr(t, litAt(t, q, ', ')), ']');
          if (q < 0) return -1;
          items.push(sharer.pair(key, exprOut));
        } else {
          q = this.expr(t, q);
          if (q < 0) return -1;
          items.push(kind === 'set' ? sharer.pair(exprOut, undefined) : exprOut);
        }
        if (t.charCodeAt(q) === 0x5d) break;
        q = litAt(t, q, ', ');
        if (q < 0) return -1;
      }
    }
    q = litAt(t, q + 1, '}');
    if (q < 0) return -1;
    // A set literal is a fresh object of shared elements (as the sharer copies one); a
    // concatenation is the sharer's.
    if (kind === 'set') exprOut = { kind, elements: items.length === 0 ? EMPTY_LIST : (items.slice() as NftElement[]) };
    else exprOut = sharer.expr({ kind, items: items as NftExpr[] });
    return q;
  }
}
