/**
 * Parser for `nft -j list ruleset` (libnftables JSON, libnftables-json(5); nft 0.9.x–1.1.x):
 * `{"nftables": [{"metainfo": {…}}, {"table": {…}}, {"chain": {…}}, {"rule": {…}}, …]}`.
 *
 * nft's printed shape is read straight into the compact model (nft-json-direct.ts);
 * anything else through `JSON.parse` and one linear walk over the tree. Never throws: text that is not JSON
 * (e.g. `nft list` text given by mistake) and truncated JSON become an error diagnostic with
 * line and column; from truncated output the complete objects before the cut are kept.
 * A missing or non-1 `json_schema_version` is an error (knftables refuses such output) but
 * the objects are still read. Counters above 2^53 keep full precision (read as text).
 */
import { diagnostic, type Diagnostic, type ParseResult } from '../model/diagnostics.js';
import type { NftRuleset } from '../model/nftables.js';
import { singleKey } from './nft-json-expr.js';
import { nftJsonBatches, quoteBigCounters } from './nft-json-batches.js';
import { lineColumn, scanJson } from './nft-json-syntax.js';
import { JsonWalker } from './nft-json-walker.js';
import { readNftJsonDirect, readNftJsonDirectSync, readNftJsonLazy } from './nft-json-direct.js';
import { PACK_BLOCK_CHARS, type PackWhere } from './packed-texts.js';

import type { NftMetainfo } from '../model/nftables.js';
export type { NftMetainfo };

/** A parsed JSON document: the ruleset plus nft's metainfo (absent when the input had none). */
export interface NftJsonDocument {
  readonly metainfo?: NftMetainfo;
  readonly ruleset: NftRuleset;
}

/**
 * Parses `nft -j list …` output into the ruleset model: nft's printed shape is read
 * straight into the model ({@link readNftJsonDirectSync}, nft-json-direct.ts), anything
 * else item by item through `JSON.parse`; text that is not such output whole by
 * {@link parseNftJsonDocumentViaTree}, whose result it always equals.
 *
 * Diagnostics (codes): `json-syntax` (error: not JSON / truncated; line and column given),
 * `not-nftables` (error: JSON without an `nftables` array), `schema-version` (error: missing
 * or non-1 `json_schema_version`), `bad-object`/`bad-element` (error: malformed object or set
 * element, skipped), `unknown-statement`/`unknown-object` (warning: kept as unknown/raw or
 * skipped), `implicit-table` (info: object of a table not listed, as `nft -j list chain`
 * prints), `implicit-chain`/`implicit-set` (warning), `not-modelled` (info).
 */
export function parseNftJsonDocument(text: string, origin: string): ParseResult<NftJsonDocument> {
  const direct = readNftJsonDirectSync(text, origin);
  if (direct === undefined) return parseNftJsonDocumentViaTree(text, origin);
  return { value: { ...(direct.metainfo && { metainfo: direct.metainfo }), ruleset: direct.ruleset }, diagnostics: direct.diagnostics };
}

/**
 * {@link parseNftJsonDocument} by one `JSON.parse` of the whole text and a walk over the
 * tree (the reader before nft-json-direct.ts; kept for text of any other shape, and as
 * the reference the direct reader is tested against).
 */
export function parseNftJsonDocumentViaTree(text: string, origin: string): ParseResult<NftJsonDocument> {
  const walker = new JsonWalker(origin);
  const doc = readJson(text, origin, walker.diagnostics);
  if (doc !== undefined) walker.walk(doc);
  return {
    value: { ...(walker.metainfo && { metainfo: walker.metainfo }), ruleset: walker.builder.finish() },
    diagnostics: walker.diagnostics,
  };
}

/**
 * The `metainfo` of the `nft -j` output a ruleset was parsed from (by {@link parseNftJson} or
 * {@link parseNftJsonPieces}), null for a ruleset from elsewhere or output without one. Kept
 * beside the ruleset, not in it: a ruleset is the same whether it came from JSON or text.
 */
export function nftMetainfoOf(ruleset: NftRuleset): NftMetainfo | null {
  return METAINFO.get(ruleset) ?? null;
}

const METAINFO = new WeakMap<NftRuleset, NftMetainfo>();

function withMetainfo(ruleset: NftRuleset, metainfo: NftMetainfo | undefined): NftRuleset {
  if (metainfo) METAINFO.set(ruleset, metainfo);
  return ruleset;
}

/** Like {@link parseNftJsonDocument}, returning only the ruleset (its metainfo: {@link nftMetainfoOf}). */
export function parseNftJson(text: string, origin: string): ParseResult<NftRuleset> {
  const { value, diagnostics } = parseNftJsonDocument(text, origin);
  return { value: withMetainfo(value.ruleset, value.metainfo), diagnostics };
}

/** {@link parseNftJson} by {@link parseNftJsonDocumentViaTree}. */
export function parseNftJsonViaTree(text: string, origin: string): ParseResult<NftRuleset> {
  const { value, diagnostics } = parseNftJsonDocumentViaTree(text, origin);
  return { value: withMetainfo(value.ruleset, value.metainfo), diagnostics };
}

/**
 * {@link parseNftJson} in pieces: `await turn()` comes after about `chunkChars` characters
 * of items, so the event loop keeps turning, and the whole document is never one JSON tree
 * (the 229 MB output of a 25,000-Service node parses to over 1 GB). Same result as
 * {@link parseNftJson}: text of any other shape (not nft -j output, truncated, bad JSON in
 * an item, no leading metainfo) is handed to {@link parseNftJsonViaTree} whole, so its
 * diagnostics are the one-shot parse's. Never rejects on bad input.
 */
export async function parseNftJsonChunked(text: string, origin: string, chunkChars: number, turn: () => Promise<void>): Promise<ParseResult<NftRuleset>> {
  return parseDirect(() => [text], () => text, origin, chunkChars, turn);
}

/**
 * {@link parseNftJsonChunked} of a text given in pieces, cut anywhere (inside a string, a
 * number or a key; `nft -j` prints one line, so a replay reads it in byte pieces): items
 * are read across the cuts, so only a piece and the item being read are held, never the
 * whole text. `pieces()` yields the pieces in order; it is called once, and once more only
 * for text of another shape, whose pieces are then joined and handed to
 * {@link parseNftJsonViaTree} (same result and diagnostics, positions included, as one
 * call on the whole text). Never rejects on bad input (rejects only when `pieces` throws).
 */
export async function parseNftJsonPieces(pieces: () => Iterable<string>, origin: string, chunkChars: number, turn: () => Promise<void>): Promise<ParseResult<NftRuleset>> {
  return parseDirect(pieces, () => joinPieces(pieces()), origin, chunkChars, turn);
}

/**
 * {@link parseNftJsonPieces} whose chains' rules are built when first read (a replay's
 * load: the header, the Services pane and `trace` read few chains of a big ruleset).
 * Pass 1 reads tables, chains, sets and maps as {@link parseNftJsonPieces} does and only
 * locates each rule (nft-json-direct.ts `readNftJsonLazy`); the model, every chain's rules
 * and the diagnostics equal {@link parseNftJsonPieces}' (the reference it is tested
 * against). `diagnostics` is a getter: reading it builds every chain not read yet (the
 * Rules pane reads src/model/nft-facts.ts `nftReadState` instead). Text of a shape pass 1
 * does not keep apart is read by {@link parseNftJsonPieces}. The text is kept deflated in
 * blocks of about `packChars` characters (src/parsers/packed-texts.ts) until every chain is
 * read, deflated where `packWhere` says (by default on libuv's thread pool, beside this read:
 * a block is kept as text until its deflate comes back at a turn). Never rejects on bad input.
 */
export async function parseNftJsonLazyPieces(
  pieces: () => Iterable<string>,
  origin: string,
  chunkChars: number,
  turn: () => Promise<void>,
  packChars = PACK_BLOCK_CHARS,
  packWhere: PackWhere = 'pool',
): Promise<ParseResult<NftRuleset>> {
  const read = readNftJsonLazy(pieces(), origin, chunkChars, packChars, packWhere);
  for (;;) {
    const next = read.next();
    if (!next.done) {
      await turn();
      continue;
    }
    const lazy = next.value;
    if (lazy === 'eager') return parseNftJsonPieces(pieces, origin, chunkChars, turn);
    if (lazy === undefined) return parseNftJsonViaTree(joinPieces(pieces()), origin);
    let diagnostics: readonly Diagnostic[] | undefined;
    return {
      value: withMetainfo(lazy.ruleset, lazy.metainfo),
      get diagnostics() {
        return (diagnostics ??= lazy.diagnostics(() => eagerDiagnostics(pieces, origin)));
      },
    };
  }
}

/**
 * {@link parseNftJsonChunked} whose chains' rules are built when first read (a live load:
 * the first frames read table names and few chains of a big ruleset): the same model, rules
 * and diagnostics as {@link parseNftJsonChunked} (`diagnostics` a getter, see
 * {@link parseNftJsonLazyPieces}); the text is held as it is (the run keeps its stdout
 * anyway) until every chain is read. Never rejects on bad input.
 */
export async function parseNftJsonLazyChunked(text: string, origin: string, chunkChars: number, turn: () => Promise<void>): Promise<ParseResult<NftRuleset>> {
  return parseNftJsonLazyPieces(() => [text], origin, chunkChars, turn, Infinity);
}

/**
 * {@link parseNftJson} whose chains' rules are built when first read (for one-shot commands
 * that read few chains of a big ruleset: `trace`): the same model, rules and diagnostics
 * (`diagnostics` is a getter that builds every chain not read yet; see
 * {@link parseNftJsonLazyPieces}). The text is held until every chain is read.
 */
export function parseNftJsonLazy(text: string, origin: string): ParseResult<NftRuleset> {
  const read = readNftJsonLazy([text], origin, Infinity);
  for (;;) {
    const next = read.next();
    if (!next.done) continue;
    const lazy = next.value;
    if (lazy === 'eager') return parseNftJson(text, origin);
    if (lazy === undefined) return parseNftJsonViaTree(text, origin);
    let diagnostics: readonly Diagnostic[] | undefined;
    return {
      value: withMetainfo(lazy.ruleset, lazy.metainfo),
      get diagnostics() {
        return (diagnostics ??= lazy.diagnostics(() => parseNftJson(text, origin).diagnostics));
      },
    };
  }
}

/** The diagnostics of {@link parseNftJsonPieces}, read at once (no turns). */
function eagerDiagnostics(pieces: () => Iterable<string>, origin: string): readonly Diagnostic[] {
  const read = readNftJsonDirect(pieces(), origin, Infinity);
  for (;;) {
    const next = read.next();
    if (next.done) return next.value?.diagnostics ?? parseNftJsonViaTree(joinPieces(pieces()), origin).diagnostics;
  }
}

/** The direct read of {@link parseNftJsonChunked} and {@link parseNftJsonPieces}, a turn at each of its pauses. */
async function parseDirect(
  pieces: () => Iterable<string>,
  whole: () => string,
  origin: string,
  chunkChars: number,
  turn: () => Promise<void>,
): Promise<ParseResult<NftRuleset>> {
  const read = readNftJsonDirect(pieces(), origin, chunkChars);
  for (;;) {
    const next = read.next();
    if (next.done) {
      const direct = next.value;
      if (direct === undefined) return parseNftJsonViaTree(whole(), origin);
      return { value: withMetainfo(direct.ruleset, direct.metainfo), diagnostics: direct.diagnostics };
    }
    await turn();
  }
}

/**
 * The reader of {@link parseNftJsonChunked} before nft-json-direct.ts (kept as the
 * reference it is tested and measured against): the `{"nftables": [ … ]}` array cut into
 * batches of about `chunkChars` characters where nft's printer starts an item, one
 * `JSON.parse` each ({@link nftJsonBatches}); when such a batch is not valid JSON, the
 * items are found again by a scan that follows only strings and nesting, one `JSON.parse`
 * each; text of any other shape goes whole to {@link parseNftJsonViaTree}.
 */
export async function parseNftJsonChunkedViaTree(text: string, origin: string, chunkChars: number, turn: () => Promise<void>): Promise<ParseResult<NftRuleset>> {
  return parseItems(() => [text], () => text, origin, chunkChars, turn);
}

/** {@link parseNftJsonChunkedViaTree} of a text in pieces (the reader of {@link parseNftJsonPieces} before nft-json-direct.ts). */
export async function parseNftJsonPiecesViaTree(pieces: () => Iterable<string>, origin: string, chunkChars: number, turn: () => Promise<void>): Promise<ParseResult<NftRuleset>> {
  return parseItems(pieces, () => joinPieces(pieces()), origin, chunkChars, turn);
}

function joinPieces(pieces: Iterable<string>): string {
  let text = '';
  for (const piece of pieces) text += piece;
  return text;
}

/**
 * The walk of {@link parseNftJsonChunked} over pieces: first in batches of items
 * ({@link nftJsonBatches}), then, when a batch was not valid JSON, item by item
 * ({@link NftItemScanner}); `whole` gives the text for the one-shot fallback.
 */
async function parseItems(
  pieces: () => Iterable<string>,
  whole: () => string,
  origin: string,
  chunkChars: number,
  turn: () => Promise<void>,
): Promise<ParseResult<NftRuleset>> {
  const batched = await parseBatches(pieces(), origin, chunkChars, turn);
  if (batched === 'other-shape') return parseNftJsonViaTree(whole(), origin);
  if (batched !== 'bad-batch') return batched;
  return scanItems(pieces(), whole, origin, chunkChars, turn);
}

/**
 * The walk over {@link nftJsonBatches}, a turn after each batch: the result when every
 * item was read so, else why not (`bad-batch`: the item scanner may still read the text;
 * `other-shape`, also for a first item that is not the metainfo: only the one-shot parse).
 */
async function parseBatches(
  pieces: Iterable<string>,
  origin: string,
  batchChars: number,
  turn: () => Promise<void>,
): Promise<ParseResult<NftRuleset> | 'bad-batch' | 'other-shape'> {
  const walker = new JsonWalker(origin);
  const batches = nftJsonBatches(pieces, batchChars);
  let index = 0;
  for (;;) {
    const next = batches.next();
    if (next.done) {
      if (next.value !== 'read') return next.value;
      return { value: withMetainfo(walker.builder.finish(), walker.metainfo), diagnostics: walker.diagnostics };
    }
    for (const item of next.value) {
      if (index === 0) {
        // The one-shot walk checks the metainfo before any item: here it must come first.
        if (singleKey(item) !== 'metainfo') return 'other-shape';
        walker.checkMetainfo([item]);
      }
      walker.itemAt(item, index++);
    }
    await turn();
  }
}

/** The item-by-item walk of {@link parseItems}. */
async function scanItems(
  pieces: Iterable<string>,
  whole: () => string,
  origin: string,
  chunkChars: number,
  turn: () => Promise<void>,
): Promise<ParseResult<NftRuleset>> {
  const scanner = new NftItemScanner();
  const walker = new JsonWalker(origin);
  let index = 0;
  let since = 0;
  for (const piece of pieces) {
    scanner.feed(piece);
    for (let text = scanner.next(); text !== null; text = scanner.next()) {
      let item: unknown;
      try {
        item = JSON.parse(quoteBigCounters(text));
      } catch {
        return parseNftJsonViaTree(whole(), origin);
      }
      if (index === 0) {
        // The one-shot walk checks the metainfo before any item: here it must come first.
        if (singleKey(item) !== 'metainfo') return parseNftJsonViaTree(whole(), origin);
        walker.checkMetainfo([item]);
      }
      walker.itemAt(item, index++);
      if (scanner.offset - since >= chunkChars) {
        since = scanner.offset;
        await turn();
      }
    }
    if (scanner.bad) return parseNftJsonViaTree(whole(), origin);
  }
  // No item at all: the one-shot parse words the missing metainfo.
  if (index === 0 || !scanner.closed()) return parseNftJsonViaTree(whole(), origin);
  return { value: withMetainfo(walker.builder.finish(), walker.metainfo), diagnostics: walker.diagnostics };
}

/** Where {@link NftItemScanner} is: before the array, in it, after it (`}` expected, then seen). */
type ScanPhase = 'open' | 'items' | 'close' | 'end';

/** What must precede the first item, token by token (JSON space allowed between tokens). */
const OPENER = ['{', '"nftables"', ':', '['];

/**
 * Finds the items of `{"nftables": [ … ]}` without parsing them, in text fed piece by
 * piece: strings (with their escapes) and the nesting of `{}`/`[]` are followed, nothing
 * else is checked (each item is then given to `JSON.parse`, which checks it). Any other
 * shape (no such opener, an empty item, `}` closing the array, anything but JSON space
 * after the closing `}`, text ending inside the array) sets `bad` or leaves it not closed.
 */
class NftItemScanner {
  /** Set at a shape the scan does not follow; nothing more is read then. */
  bad = false;
  /** Characters fed before the current piece plus the position in it: where the last item ended. */
  offset = 0;
  private phase: ScanPhase = 'open';
  private token = 0;
  private tokenAt = 0;
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** The current item's text in earlier pieces; undefined while between items. */
  private head: string[] | undefined;
  private piece = '';
  private i = 0;
  private before = 0;

  /** Continues the scan in the next piece (after {@link next} returned null). */
  feed(piece: string): void {
    this.before += this.piece.length;
    this.piece = piece;
    this.i = 0;
    if (this.phase === 'open') this.open();
  }

  /** The text of the next complete item (JSON space around it left out); null at the end of the piece. */
  next(): string | null {
    if (this.bad || this.phase === 'open') return null;
    if (this.phase !== 'items') return this.after();
    const t = this.piece;
    let depth = this.depth;
    let inString = this.inString;
    let escaped = this.escaped;
    let start = this.head !== undefined ? 0 : -1;
    let i = this.i;
    for (; i < t.length; i++) {
      const c = t.charCodeAt(i);
      if (inString) {
        if (escaped) escaped = false;
        else if (c === 0x5c) escaped = true;
        else if (c === 0x22) inString = false;
        continue;
      }
      if (start < 0) {
        if (isJsonSpace(c)) continue;
        start = i;
        this.head = [];
      }
      if (c === 0x22) inString = true;
      else if (c === 0x7b || c === 0x5b) depth++;
      else if (c === 0x7d || c === 0x5d) {
        if (depth > 0) depth--;
        else if (c === 0x5d) return this.itemEnd(i, start, 'close');
        else return this.fail();
      } else if (c === 0x2c && depth === 0) return this.itemEnd(i, start, 'items');
    }
    // The piece ends inside an item or between two: the rest is kept for the next piece.
    this.depth = depth;
    this.inString = inString;
    this.escaped = escaped;
    if (start >= 0) this.head!.push(start === 0 ? t : t.slice(start));
    this.i = i;
    return null;
  }

  /** After the last piece: true when the array and the object ended and only JSON space followed. */
  closed(): boolean {
    return !this.bad && this.phase === 'end';
  }

  /** The item ending at `end` (a `,` or the array's `]`), from `start` in this piece and the earlier pieces' text. */
  private itemEnd(end: number, start: number, then: ScanPhase): string | null {
    const head = this.head!;
    let text = head.length ? head.join('') + this.piece.slice(start, end) : this.piece.slice(start, end);
    let n = text.length;
    while (n > 0 && isJsonSpace(text.charCodeAt(n - 1))) n--;
    if (n === 0) return this.fail();
    if (n < text.length) text = text.slice(0, n);
    this.head = undefined;
    this.depth = 0;
    this.inString = false;
    this.escaped = false;
    this.i = end + 1;
    this.offset = this.before + end + 1;
    this.phase = then;
    return text;
  }

  /** Reads the opener as far as this piece goes. */
  private open(): void {
    const t = this.piece;
    let i = this.i;
    for (; i < t.length && this.phase === 'open'; i++) {
      const c = t.charCodeAt(i);
      const token = OPENER[this.token]!;
      if (this.tokenAt === 0 && isJsonSpace(c)) continue;
      if (c !== token.charCodeAt(this.tokenAt)) {
        this.fail();
        return;
      }
      if (++this.tokenAt === token.length) {
        this.tokenAt = 0;
        if (++this.token === OPENER.length) this.phase = 'items';
      }
    }
    this.i = i;
  }

  /** After the array: its `}`, then JSON space only. Always null (no more items). */
  private after(): null {
    const t = this.piece;
    for (let i = this.i; i < t.length; i++) {
      const c = t.charCodeAt(i);
      if (isJsonSpace(c)) continue;
      if (this.phase === 'close' && c === 0x7d) this.phase = 'end';
      else return this.fail();
    }
    this.i = t.length;
    return null;
  }

  private fail(): null {
    this.bad = true;
    return null;
  }
}

function isJsonSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

function readJson(text: string, origin: string, diags: Diagnostic[]): unknown {
  const prepared = quoteBigCounters(text);
  if (prepared.trim() === '') {
    diags.push(diagnostic('error', origin, 0, '', 'json-syntax', 'empty input where nft JSON was expected'));
    return undefined;
  }
  try {
    return JSON.parse(prepared);
  } catch {
    const scan = scanJson(prepared);
    const offset = scan.errorOffset ?? 0;
    const { line, column } = lineColumn(prepared, offset);
    const lineText = text.split('\n', line)[line - 1] ?? '';
    const looksLikeText = /^\s*(table|add|chain|flush|insert|#)\b/.test(text);
    const hint = looksLikeText ? ' (this looks like nft text; use the text parser)' : '';
    diags.push(
      diagnostic('error', origin, line, lineText, 'json-syntax', `not valid JSON: ${scan.message ?? 'syntax error'} at line ${line} column ${column}${hint}`),
    );
    const last = scan.itemEnds[scan.itemEnds.length - 1];
    if (last === undefined) return undefined;
    try {
      const salvaged = JSON.parse(`${prepared.slice(0, last)}]}`);
      diags.push(
        diagnostic('warning', origin, line, lineText, 'json-syntax', `kept the ${scan.itemEnds.length} complete objects before the error`),
      );
      return salvaged;
    } catch {
      return undefined;
    }
  }
}
