/**
 * Expressions, values and set elements of nft(8) text, read from an {@link NftLexer}.
 *
 * Covers what `nft list ruleset` prints and kube-proxy/knftables write: payload (`ip saddr`,
 * `th dport`), meta (`meta l4proto`, bare `iifname`, bare `mark`), ct (`ct state`,
 * `ct original ip saddr`), `fib daddr type`, `numgen random mod N [offset K]`, concatenations,
 * bitwise `& | ^ << >>` (and the word forms `and or xor`), values, prefixes, ranges, comma
 * lists, set literals with optional `: value` mappings, `@set` references and `map` lookups.
 * Anything else throws {@link Unparsed}, which the rule reader turns into an `unknown`
 * statement; nothing here throws past the parsers.
 */
import { isIP } from 'node:net';
import type { NftCounters, NftElement, NftExpr, NftVerdict, NftVerdictKind } from '../model/nftables.js';
import { EOF, NL, PUNCT_TOKEN, WORD, STRING, type NftLexer, type NftToken } from './nft-lexer.js';
import { PAYLOAD_PROTOCOLS, UNQUALIFIED_META_KEYS } from './nft-types.js';

/** Thrown inside the text parser when the tokens are not understood; never escapes it. */
export class Unparsed extends Error {
  constructor(
    message: string,
    readonly token: NftToken,
  ) {
    super(message);
  }
}

/** Char codes of the punctuation tokens. */
export const LBRACE = 0x7b;
export const RBRACE = 0x7d;
export const SEMI = 0x3b;
export const COMMA = 0x2c;

const BINOPS: Readonly<Record<string, '&' | '|' | '^' | '<<' | '>>'>> = {
  '&': '&',
  '|': '|',
  '^': '^',
  '<<': '<<',
  '>>': '>>',
  and: '&',
  or: '|',
  xor: '^',
  lshift: '<<',
  rshift: '>>',
};

const VERDICTS: ReadonlySet<string> = new Set(['accept', 'drop', 'continue', 'return', 'jump', 'goto']);

/** Consumes the current token and throws {@link Unparsed} at it (the reader had taken it before looking). */
export function fail(lex: NftLexer, message: string): never {
  const t = lex.token();
  lex.next();
  throw new Unparsed(message, t);
}

/** Consumes a word (or, when `value` is given, exactly that word) or throws {@link Unparsed}. */
export function expectWord(lex: NftLexer, value?: string): string {
  if (lex.kind !== WORD || (value !== undefined && !lex.is(value))) fail(lex, value ? `expected "${value}"` : 'expected a word');
  const v = value ?? lex.value();
  lex.next();
  return v;
}

/** Consumes a word or a quoted string (names, comments) or throws. */
export function expectName(lex: NftLexer): string {
  if (lex.kind !== WORD && lex.kind !== STRING) fail(lex, 'expected a name');
  const v = lex.value();
  lex.next();
  return v;
}

/** Consumes a quoted string (or a bare word) or throws. */
export function expectString(lex: NftLexer): string {
  return expectName(lex);
}

/** Consumes a non-negative integer (decimal or hex) or throws. */
export function expectNumber(lex: NftLexer): number {
  const n = lex.kind === WORD ? parseInteger(lex.value()) : undefined;
  if (n === undefined) fail(lex, 'expected a number');
  lex.next();
  return n;
}

/** Whether the current token's first char is a decimal digit. */
export function startsWithDigit(lex: NftLexer): boolean {
  return isDigit(lex.firstCode());
}

/** Decimal or `0x` hex integer within the safe range, else undefined. */
export function parseInteger(word: string): number | undefined {
  const len = word.length;
  if (len === 0) return undefined;
  if (len > 2 && word.charCodeAt(0) === 48 && word.charCodeAt(1) === 120) {
    // `0x…`: lower-case x only, as nft prints.
    for (let i = 2; i < len; i++) if (!isHexDigit(word.charCodeAt(i))) return undefined;
    const n = Number.parseInt(word, 16);
    return Number.isSafeInteger(n) ? n : undefined;
  }
  for (let i = 0; i < len; i++) if (!isDigit(word.charCodeAt(i))) return undefined;
  const n = Number(word);
  return Number.isSafeInteger(n) ? n : undefined;
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

function isHexDigit(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 97 && c <= 102) || (c >= 65 && c <= 70);
}

/** A counter value (`packets 12`) as bigint; undefined when not an integer. */
export function parseBigint(word: string): bigint | undefined {
  return /^\d+$/.test(word) ? BigInt(word) : undefined;
}

const DURATION = /^(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m(?!s))?(?:(\d+)s)?(?:(\d+)ms)?$/;

/** nft time text (`3h`, `1m29s992ms`, `10800s`, `10800`, `never`) in seconds; undefined if not a time. */
export function parseDuration(word: string): number | undefined {
  if (word === 'never') return Number.POSITIVE_INFINITY;
  if (/^\d+$/.test(word)) return Number(word);
  const m = DURATION.exec(word);
  if (!m || word === '') return undefined;
  const [, d, h, min, s, ms] = m;
  return (
    Number(d ?? 0) * 86400 + Number(h ?? 0) * 3600 + Number(min ?? 0) * 60 + Number(s ?? 0) + Number(ms ?? 0) / 1000
  );
}

function isAddress(word: string): boolean {
  return isIP(word) !== 0;
}

function isScalar(word: string): boolean {
  return parseInteger(word) !== undefined || isAddress(word);
}

/**
 * One value word as an expression: `@name` → set reference, `10.0.0.0/8` → prefix,
 * `1000-2000` / `10.0.0.1-10.0.0.9` → range, integers → numbers, anything else → string.
 */
export function atomFromWord(word: string): NftExpr {
  if (word.charCodeAt(0) === 0x40 && word.length > 1) return { kind: 'setref', name: word.slice(1) };
  const n = parseInteger(word);
  if (n !== undefined) return { kind: 'value', value: n };
  // `lastIndexOf` is a runtime call in V8, `indexOf` is not: most words have no slash.
  const slash = word.indexOf('/') < 0 ? -1 : word.lastIndexOf('/');
  if (slash > 0) {
    const len = word.length - slash - 1;
    // One to three digits after the slash.
    if (len >= 1 && len <= 3 && isDigit(word.charCodeAt(slash + 1)) && (len < 2 || isDigit(word.charCodeAt(slash + 2))) && (len < 3 || isDigit(word.charCodeAt(slash + 3)))) {
      const addr = word.slice(0, slash);
      if (isAddress(addr)) return { kind: 'prefix', addr, len: Number(word.slice(slash + 1)) };
    }
  }
  const dash = word.indexOf('-');
  if (dash > 0) {
    const from = word.slice(0, dash);
    const to = word.slice(dash + 1);
    if (isScalar(from) && isScalar(to)) return { kind: 'range', from: atomFromWord(from), to: atomFromWord(to) };
  }
  return { kind: 'value', value: word };
}

/** Reads one value token (word or quoted string) as an expression. */
export function parseAtom(lex: NftLexer): NftExpr {
  const kind = lex.kind;
  if (kind !== STRING && kind !== WORD) fail(lex, 'expected a value');
  const v = lex.value();
  lex.next();
  return kind === STRING ? { kind: 'value', value: v } : atomFromWord(v);
}

/** Whether `word` can be a header field name: `^[a-z][a-z0-9-]*$`. */
function isField(word: string): boolean {
  const first = word.charCodeAt(0);
  if (!(first >= 97 && first <= 122)) return false;
  for (let i = 1; i < word.length; i++) {
    const c = word.charCodeAt(i);
    if (!((c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 45)) return false;
  }
  return true;
}

/** Whether the next tokens start an expression (as opposed to a value). */
export function startsExpr(lex: NftLexer): boolean {
  if (lex.kind !== WORD) return false;
  const w = lex.value();
  if (w === 'meta' || w === 'ct' || w === 'numgen' || w === 'fib' || UNQUALIFIED_META_KEYS.has(w)) return true;
  if (PAYLOAD_PROTOCOLS.has(w)) {
    if (lex.peekKind() !== WORD) return false;
    const field = lex.peekValue();
    return isField(field) && !VERDICTS.has(field);
  }
  return false;
}

function parsePrimary(lex: NftLexer): NftExpr {
  if (lex.kind !== WORD) fail(lex, 'expected an expression');
  const w = lex.value();
  // Kept for the error of an unknown numgen mode, which points at the expression's first word.
  const at = w === 'numgen' ? lex.token() : undefined;
  lex.next();
  // Fresh objects: the ruleset builder shares equal expressions (nft-share.ts).
  if (w === 'meta') return { kind: 'meta', key: expectWord(lex) };
  if (UNQUALIFIED_META_KEYS.has(w)) return { kind: 'meta', key: w };
  if (w === 'ct') return parseCt(lex);
  if (w === 'fib') {
    const flags = [expectWord(lex)];
    while (lex.is('.')) {
      lex.next();
      flags.push(expectWord(lex));
    }
    return { kind: 'fib', flags, result: expectWord(lex) };
  }
  if (at !== undefined) {
    const mode = expectWord(lex);
    if (mode !== 'random' && mode !== 'inc') throw new Unparsed(`unknown numgen mode "${mode}"`, at);
    expectWord(lex, 'mod');
    const mod = expectNumber(lex);
    let offset = 0;
    if (lex.is('offset')) {
      lex.next();
      offset = expectNumber(lex);
    }
    return { kind: 'numgen', mode, mod, offset };
  }
  if (PAYLOAD_PROTOCOLS.has(w)) return { kind: 'payload', protocol: w, field: expectWord(lex) };
  throw new Unparsed(`unknown expression "${w}"`, wordToken(lex, w));
}

/** The word `w` just consumed, as a token (for an error pointing at it). */
function wordToken(lex: NftLexer, w: string): NftToken {
  const end = lex.lastEnd;
  const start = end - w.length;
  return { type: 'word', value: w, line: lineOf(lex, start), start, end };
}

/** 1-based line of offset `at`, counted from the current token's line (`at` is at most a line or two back). */
function lineOf(lex: NftLexer, at: number): number {
  let line = lex.line;
  for (let i = lex.start - 1; i >= at; i--) if (lex.text.charCodeAt(i) === 0x0a) line--;
  return line;
}

function parseCt(lex: NftLexer): NftExpr {
  let dir: 'original' | 'reply' | undefined;
  if (lex.is('original') || lex.is('reply')) {
    // `ct direction reply` has `reply` as value, not as direction: a direction is followed by a key.
    if (lex.peekKind() === WORD) {
      dir = lex.value() as 'original' | 'reply';
      lex.next();
    }
  }
  let key = expectWord(lex);
  if ((key === 'ip' || key === 'ip6') && lex.kind === WORD) key = `${key} ${expectWord(lex)}`;
  return dir ? { kind: 'ct', key, dir } : { kind: 'ct', key };
}

/** Reads an expression: primaries joined by ` . ` (concatenation), then bitwise operators. */
export function parseExpr(lex: NftLexer): NftExpr {
  let expr = parsePrimary(lex);
  if (lex.is('.')) {
    const items = [expr];
    while (lex.is('.')) {
      lex.next();
      items.push(parsePrimary(lex));
    }
    expr = { kind: 'concat', items };
  }
  for (;;) {
    // A value after an expression mostly starts with a digit: no operator does (and no
    // property of the table's prototype), so no property lookup by a fresh string.
    const op = lex.kind === WORD && !startsWithDigit(lex) ? BINOPS[lex.value()] : undefined;
    if (!op) return expr;
    lex.next();
    expr = { kind: 'binop', op, left: expr, right: parseValueOrExpr(lex, false) };
  }
}

/**
 * Reads a right-hand side: `{ … }` set literal, `@name`, or a value with optional comma list
 * (`established,related`). With `allowExpr`, also an expression (`meta mark | 0x4000`,
 * `numgen random mod 2 map { … }`), as `set` and NAT targets take.
 */
export function parseValueOrExpr(lex: NftLexer, allowExpr: boolean): NftExpr {
  if (lex.isPunct(LBRACE)) return parseSetLiteral(lex);
  if (allowExpr && startsExpr(lex)) {
    const at = lex.token();
    const expr = parseExpr(lex);
    if (!lex.is('map')) return expr;
    lex.next();
    const data = lex.isPunct(LBRACE) ? parseSetLiteral(lex) : parseAtom(lex);
    if (data.kind !== 'set' && data.kind !== 'setref') throw new Unparsed('expected a map after "map"', at);
    return { kind: 'map', key: expr, data };
  }
  const first = parseAtom(lex);
  if (!lex.isPunct(COMMA)) return first;
  const items = [first];
  while (lex.isPunct(COMMA)) {
    lex.next();
    items.push(parseAtom(lex));
  }
  return { kind: 'list', items };
}

/** Reads `accept`, `drop`, `continue`, `return`, `jump X`, `goto X` if next; else undefined. */
export function parseVerdict(lex: NftLexer): NftVerdict | undefined {
  if (lex.kind !== WORD) return undefined;
  const verdict = lex.value();
  if (!VERDICTS.has(verdict)) return undefined;
  lex.next();
  if (verdict === 'jump' || verdict === 'goto') return { kind: 'verdict', verdict, target: expectName(lex) };
  return { kind: 'verdict', verdict: verdict as NftVerdictKind };
}

function skipNewlines(lex: NftLexer): void {
  while (lex.kind === NL) lex.next();
}

/** Reads `{ elem, elem, … }`, newlines allowed anywhere inside. */
export function parseSetLiteral(lex: NftLexer): NftExpr {
  return { kind: 'set', elements: parseElementList(lex) };
}

/** Reads the elements of `{ … }` (set literal, `elements = { … }`, `add element … { … }`). */
export function parseElementList(lex: NftLexer): NftElement[] {
  if (!lex.isPunct(LBRACE)) fail(lex, 'expected "{"');
  // The `{` is kept as a token only when the list turns out unterminated.
  const openStart = lex.start;
  const openLine = lex.line;
  lex.next();
  const elements: NftElement[] = [];
  for (;;) {
    skipNewlines(lex);
    if (lex.isPunct(RBRACE)) {
      lex.next();
      return elements;
    }
    if (lex.kind === EOF) {
      throw new Unparsed('unterminated "{"', { type: 'punct', value: '{', line: openLine, start: openStart, end: openStart + 1 });
    }
    elements.push(parseElement(lex));
    skipNewlines(lex);
    if (lex.isPunct(COMMA)) lex.next();
    else if (!lex.isPunct(RBRACE)) throw new Unparsed('expected "," or "}" after element', lex.token());
  }
}

function parseElementKey(lex: NftLexer): NftExpr {
  const first = parseAtom(lex);
  if (!lex.is('.')) return first;
  const items = [first];
  while (lex.is('.')) {
    lex.next();
    items.push(parseAtom(lex));
  }
  return { kind: 'concat', items };
}

/** Reads `counter packets N bytes M` after the word `counter` was consumed; undefined without values. */
export function parseCounterValues(lex: NftLexer): NftCounters | undefined {
  if (!lex.is('packets')) return undefined;
  lex.next();
  const packets = parseBigint(expectWord(lex));
  expectWord(lex, 'bytes');
  const bytesToken = lex.token();
  const bytes = parseBigint(expectWord(lex));
  if (packets === undefined || bytes === undefined) throw new Unparsed('bad counter value', bytesToken);
  return { packets, bytes };
}

function expectDuration(lex: NftLexer): number {
  const d = lex.kind === WORD ? parseDuration(lex.value()) : undefined;
  if (d === undefined) fail(lex, 'expected a time');
  lex.next();
  return d;
}

type MutableElement = { -readonly [K in keyof NftElement]: NftElement[K] };

/** Reads one element: key, then `counter …`, `timeout`, `expires`, `comment` in any order, then `: value`. */
function parseElement(lex: NftLexer): NftElement {
  const key = parseElementKey(lex);
  let value: NftExpr | undefined;
  let comment: string | undefined;
  let timeout: number | undefined;
  let expires: number | undefined;
  let counters: NftCounters | undefined;
  while (lex.kind === WORD) {
    if (lex.is('timeout')) {
      lex.next();
      timeout = expectDuration(lex);
    } else if (lex.is('expires')) {
      lex.next();
      expires = expectDuration(lex);
    } else if (lex.is('comment')) {
      lex.next();
      comment = expectString(lex);
    } else if (lex.is('counter')) {
      lex.next();
      counters = parseCounterValues(lex) ?? { packets: 0n, bytes: 0n };
    } else break;
  }
  if (lex.is(':')) {
    lex.next();
    value = parseVerdict(lex) ?? parseElementKey(lex);
  }
  // Fields in this order, absent when undefined (as a literal with spreads gave).
  const e: MutableElement = { key };
  if (value !== undefined) e.value = value;
  if (comment !== undefined) e.comment = comment;
  if (timeout !== undefined) e.timeout = timeout;
  if (expires !== undefined) e.expires = expires;
  if (counters !== undefined) e.counters = counters;
  return e;
}
