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
import type { NftLexer, NftToken } from './nft-lexer.js';
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

/** Whether `t` is the word `value` (or any word when `value` is omitted). */
export function isWord(t: NftToken, value?: string): boolean {
  return t.type === 'word' && (value === undefined || t.value === value);
}

/** Whether `t` is the punctuation `value`. */
export function isPunct(t: NftToken, value: string): boolean {
  return t.type === 'punct' && t.value === value;
}

/** Consumes a word (or, when `value` is given, exactly that word) or throws {@link Unparsed}. */
export function expectWord(lex: NftLexer, value?: string): string {
  const t = lex.next();
  if (!isWord(t, value)) throw new Unparsed(value ? `expected "${value}"` : 'expected a word', t);
  return t.value;
}

/** Consumes a word or a quoted string (names, comments) or throws. */
export function expectName(lex: NftLexer): string {
  const t = lex.next();
  if (t.type !== 'word' && t.type !== 'string') throw new Unparsed('expected a name', t);
  return t.value;
}

/** Consumes a quoted string (or a bare word) or throws. */
export function expectString(lex: NftLexer): string {
  return expectName(lex);
}

/** Consumes a non-negative integer (decimal or hex) or throws. */
export function expectNumber(lex: NftLexer): number {
  const t = lex.next();
  const n = t.type === 'word' ? parseInteger(t.value) : undefined;
  if (n === undefined) throw new Unparsed('expected a number', t);
  return n;
}

/** Decimal or `0x` hex integer within the safe range, else undefined. */
export function parseInteger(word: string): number | undefined {
  if (!/^(?:\d+|0x[0-9a-fA-F]+)$/.test(word)) return undefined;
  const n = word.startsWith('0x') || word.startsWith('0X') ? Number.parseInt(word, 16) : Number(word);
  return Number.isSafeInteger(n) ? n : undefined;
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
  if (word.startsWith('@') && word.length > 1) return { kind: 'setref', name: word.slice(1) };
  const n = parseInteger(word);
  if (n !== undefined) return { kind: 'value', value: n };
  const slash = word.lastIndexOf('/');
  if (slash > 0) {
    const addr = word.slice(0, slash);
    const len = word.slice(slash + 1);
    if (/^\d{1,3}$/.test(len) && isAddress(addr)) return { kind: 'prefix', addr, len: Number(len) };
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
  const t = lex.next();
  if (t.type === 'string') return { kind: 'value', value: t.value };
  if (t.type !== 'word') throw new Unparsed('expected a value', t);
  return atomFromWord(t.value);
}

/** Whether the next tokens start an expression (as opposed to a value). */
export function startsExpr(lex: NftLexer): boolean {
  const t = lex.peek();
  if (t.type !== 'word') return false;
  const w = t.value;
  if (w === 'meta' || w === 'ct' || w === 'numgen' || w === 'fib' || UNQUALIFIED_META_KEYS.has(w)) return true;
  if (PAYLOAD_PROTOCOLS.has(w)) {
    const field = lex.peek(1);
    return field.type === 'word' && /^[a-z][a-z0-9-]*$/.test(field.value) && !VERDICTS.has(field.value);
  }
  return false;
}

// Rules repeat the same few header expressions (`ip daddr`, `meta l4proto`) hundreds of
// thousands of times; the model is immutable, so one shared object per key saves memory.
const INTERNED = new Map<string, NftExpr>();
const INTERN_MAX = 4096;

function interned(key: string, make: (key: string) => NftExpr): NftExpr {
  let e = INTERNED.get(key);
  if (!e) {
    e = Object.freeze(make(key));
    if (INTERNED.size < INTERN_MAX) INTERNED.set(key, e);
  }
  return e;
}

function parsePrimary(lex: NftLexer): NftExpr {
  const t = lex.next();
  if (t.type !== 'word') throw new Unparsed('expected an expression', t);
  const w = t.value;
  if (w === 'meta') return interned(`meta ${expectWord(lex)}`, (k) => ({ kind: 'meta', key: k.slice(5) }));
  if (UNQUALIFIED_META_KEYS.has(w)) return interned(`meta ${w}`, () => ({ kind: 'meta', key: w }));
  if (w === 'ct') return parseCt(lex);
  if (w === 'fib') {
    const flags = [expectWord(lex)];
    while (isWord(lex.peek(), '.')) {
      lex.next();
      flags.push(expectWord(lex));
    }
    return { kind: 'fib', flags, result: expectWord(lex) };
  }
  if (w === 'numgen') {
    const mode = expectWord(lex);
    if (mode !== 'random' && mode !== 'inc') throw new Unparsed(`unknown numgen mode "${mode}"`, t);
    expectWord(lex, 'mod');
    const mod = expectNumber(lex);
    let offset = 0;
    if (isWord(lex.peek(), 'offset')) {
      lex.next();
      offset = expectNumber(lex);
    }
    return { kind: 'numgen', mode, mod, offset };
  }
  if (PAYLOAD_PROTOCOLS.has(w)) {
    const field = expectWord(lex);
    return interned(`payload ${w} ${field}`, () => ({ kind: 'payload', protocol: w, field }));
  }
  throw new Unparsed(`unknown expression "${w}"`, t);
}

function parseCt(lex: NftLexer): NftExpr {
  let dir: 'original' | 'reply' | undefined;
  const d = lex.peek();
  if (isWord(d, 'original') || isWord(d, 'reply')) {
    // `ct direction reply` has `reply` as value, not as direction: a direction is followed by a key.
    const after = lex.peek(1);
    if (after.type === 'word' && !isEnd(after)) {
      lex.next();
      dir = d.value as 'original' | 'reply';
    }
  }
  let key = expectWord(lex);
  if ((key === 'ip' || key === 'ip6') && isWord(lex.peek())) key = `${key} ${expectWord(lex)}`;
  return interned(`ct ${dir ?? ''} ${key}`, () => (dir ? { kind: 'ct', key, dir } : { kind: 'ct', key }));
}

function isEnd(t: NftToken): boolean {
  return t.type === 'nl' || t.type === 'eof' || t.type === 'handle' || (t.type === 'punct' && t.value !== ',');
}

/** Reads an expression: primaries joined by ` . ` (concatenation), then bitwise operators. */
export function parseExpr(lex: NftLexer): NftExpr {
  let expr = parsePrimary(lex);
  if (isWord(lex.peek(), '.')) {
    const items = [expr];
    while (isWord(lex.peek(), '.')) {
      lex.next();
      items.push(parsePrimary(lex));
    }
    expr = { kind: 'concat', items };
  }
  for (;;) {
    const t = lex.peek();
    const op = t.type === 'word' ? BINOPS[t.value] : undefined;
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
  const t = lex.peek();
  if (isPunct(t, '{')) return parseSetLiteral(lex);
  if (allowExpr && startsExpr(lex)) {
    const expr = parseExpr(lex);
    if (!isWord(lex.peek(), 'map')) return expr;
    lex.next();
    const data = isPunct(lex.peek(), '{') ? parseSetLiteral(lex) : parseAtom(lex);
    if (data.kind !== 'set' && data.kind !== 'setref') throw new Unparsed('expected a map after "map"', t);
    return { kind: 'map', key: expr, data };
  }
  const first = parseAtom(lex);
  if (!isPunct(lex.peek(), ',')) return first;
  const items = [first];
  while (isPunct(lex.peek(), ',')) {
    lex.next();
    items.push(parseAtom(lex));
  }
  return { kind: 'list', items };
}

/** Reads `accept`, `drop`, `continue`, `return`, `jump X`, `goto X` if next; else undefined. */
export function parseVerdict(lex: NftLexer): NftVerdict | undefined {
  const t = lex.peek();
  if (t.type !== 'word' || !VERDICTS.has(t.value)) return undefined;
  lex.next();
  const verdict = t.value as NftVerdictKind;
  if (verdict === 'jump' || verdict === 'goto') return { kind: 'verdict', verdict, target: expectName(lex) };
  return { kind: 'verdict', verdict };
}

function skipNewlines(lex: NftLexer): void {
  while (lex.peek().type === 'nl') lex.next();
}

/** Reads `{ elem, elem, … }`, newlines allowed anywhere inside. */
export function parseSetLiteral(lex: NftLexer): NftExpr {
  return { kind: 'set', elements: parseElementList(lex) };
}

/** Reads the elements of `{ … }` (set literal, `elements = { … }`, `add element … { … }`). */
export function parseElementList(lex: NftLexer): NftElement[] {
  const open = lex.next();
  if (!isPunct(open, '{')) throw new Unparsed('expected "{"', open);
  const elements: NftElement[] = [];
  for (;;) {
    skipNewlines(lex);
    const t = lex.peek();
    if (isPunct(t, '}')) {
      lex.next();
      return elements;
    }
    if (t.type === 'eof') throw new Unparsed('unterminated "{"', open);
    elements.push(parseElement(lex));
    skipNewlines(lex);
    const sep = lex.peek();
    if (isPunct(sep, ',')) lex.next();
    else if (!isPunct(sep, '}')) throw new Unparsed('expected "," or "}" after element', sep);
  }
}

function parseElementKey(lex: NftLexer): NftExpr {
  const first = parseAtom(lex);
  if (!isWord(lex.peek(), '.')) return first;
  const items = [first];
  while (isWord(lex.peek(), '.')) {
    lex.next();
    items.push(parseAtom(lex));
  }
  return { kind: 'concat', items };
}

/** Reads `counter packets N bytes M` after the word `counter` was consumed; undefined without values. */
export function parseCounterValues(lex: NftLexer): NftCounters | undefined {
  if (!isWord(lex.peek(), 'packets')) return undefined;
  lex.next();
  const packets = parseBigint(expectWord(lex));
  expectWord(lex, 'bytes');
  const bytesToken = lex.peek();
  const bytes = parseBigint(expectWord(lex));
  if (packets === undefined || bytes === undefined) throw new Unparsed('bad counter value', bytesToken);
  return { packets, bytes };
}

function expectDuration(lex: NftLexer): number {
  const t = lex.next();
  const d = t.type === 'word' ? parseDuration(t.value) : undefined;
  if (d === undefined) throw new Unparsed('expected a time', t);
  return d;
}

/** Reads one element: key, then `counter …`, `timeout`, `expires`, `comment` in any order, then `: value`. */
function parseElement(lex: NftLexer): NftElement {
  const key = parseElementKey(lex);
  let value: NftExpr | undefined;
  let comment: string | undefined;
  let timeout: number | undefined;
  let expires: number | undefined;
  let counters: NftCounters | undefined;
  for (;;) {
    const t = lex.peek();
    if (isWord(t, 'timeout')) {
      lex.next();
      timeout = expectDuration(lex);
    } else if (isWord(t, 'expires')) {
      lex.next();
      expires = expectDuration(lex);
    } else if (isWord(t, 'comment')) {
      lex.next();
      comment = expectString(lex);
    } else if (isWord(t, 'counter')) {
      lex.next();
      counters = parseCounterValues(lex) ?? { packets: 0n, bytes: 0n };
    } else break;
  }
  if (isWord(lex.peek(), ':')) {
    lex.next();
    value = parseVerdict(lex) ?? parseElementKey(lex);
  }
  return {
    key,
    ...(value !== undefined && { value }),
    ...(comment !== undefined && { comment }),
    ...(timeout !== undefined && { timeout }),
    ...(expires !== undefined && { expires }),
    ...(counters !== undefined && { counters }),
  };
}
