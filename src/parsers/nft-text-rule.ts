/**
 * One rule of nft(8) text: its statements (nft(8) "STATEMENTS"), comment, counters and
 * `# handle`. A statement that is not understood becomes `{kind: 'unknown', raw}` and a
 * warning; reading resumes at the next verdict, `counter` or `comment`, so the rest of the
 * rule (its counter, its verdict) is still modelled.
 */
import { diagnostic, type Diagnostic } from '../model/diagnostics.js';
import type { NftFamily, NftLimitStmt, NftLogStmt, NftNatStmt, NftRejectStmt, NftStatement } from '../model/nftables.js';
import { collapseSpaces, EOF, HANDLE, NL, PUNCT_TOKEN, WORD, XT, type NftLexer, type NftToken } from './nft-lexer.js';
import type { RuleParts } from './nft-share.js';
import {
  atomFromWord,
  COMMA,
  expectName,
  expectNumber,
  expectString,
  expectWord,
  fail,
  LBRACE,
  parseCounterValues,
  parseDuration,
  parseExpr,
  parseInteger,
  parseValueOrExpr,
  parseVerdict,
  RBRACE,
  SEMI,
  startsExpr,
  startsWithDigit,
  Unparsed,
} from './nft-text-expr.js';
import { implicitOp, isDefaultBurst, normalizeReject } from './nft-types.js';

/** Where a rule is read: table family (for `reject` defaults) and where diagnostics go. */
export interface RuleContext {
  readonly family: NftFamily;
  readonly origin: string;
  readonly diagnostics: Diagnostic[];
}

const MATCH_OPS: Readonly<Record<string, '==' | '!=' | '<' | '>' | '<=' | '>='>> = {
  '==': '==',
  '!=': '!=',
  '<': '<',
  '>': '>',
  '<=': '<=',
  '>=': '>=',
  eq: '==',
  ne: '!=',
  lt: '<',
  gt: '>',
  le: '<=',
  ge: '>=',
};

const NAT_FLAGS: ReadonlySet<string> = new Set(['random', 'fully-random', 'persistent']);

// Statements the reader can resume at after something it did not understand.
const RESYNC: ReadonlySet<string> = new Set(['accept', 'drop', 'continue', 'return', 'jump', 'goto', 'counter', 'comment']);

/** Whether the current token ends the rule at brace depth 0: end of line, `;`, `}` or end of text. */
export function endsRule(lex: NftLexer): boolean {
  const kind = lex.kind;
  if (kind === NL || kind === EOF) return true;
  if (kind !== PUNCT_TOKEN) return false;
  const c = lex.firstCode();
  return c === SEMI || c === RBRACE;
}

/**
 * Reads one rule from the lexer up to (not including) its end token. Returns undefined when
 * the rule is empty. `raw` is the rule's text with white space collapsed.
 */
export function readRule(lex: NftLexer, ctx: RuleContext): RuleParts | undefined {
  const statements: NftStatement[] = [];
  let comment: string | undefined;
  let handle: number | undefined;
  let rawStart = -1;
  let rawEnd = -1;
  for (;;) {
    if (endsRule(lex)) break;
    if (lex.kind === HANDLE) {
      handle = Number(lex.value());
      lex.next();
      continue;
    }
    const start = lex.start;
    const end = lex.end;
    const line = lex.line;
    if (rawStart < 0) rawStart = start;
    if (lex.is('comment')) {
      lex.next();
      try {
        comment = expectString(lex);
      } catch (e) {
        if (!(e instanceof Unparsed)) throw e;
        statements.push(unknownStatement(lex, ctx, start, end, line));
      }
      rawEnd = lex.lastEnd;
      continue;
    }
    try {
      statements.push(readStatement(lex, ctx));
    } catch (e) {
      if (!(e instanceof Unparsed)) throw e;
      statements.push(unknownStatement(lex, ctx, start, end, line));
    }
    rawEnd = lex.lastEnd;
  }
  if (rawStart < 0) return undefined;
  const raw = collapseSpaces(lex.text.slice(rawStart, rawEnd));
  // Fields in this order, absent when undefined (the builder reads them; tests compare them).
  if (handle === undefined) return comment === undefined ? { statements, raw } : { statements, raw, comment };
  return comment === undefined ? { statements, raw, handle } : { statements, raw, handle, comment };
}

/** Skips from a statement that failed (its first token at `start`–`end`) to the next statement the reader knows; records it. */
function unknownStatement(lex: NftLexer, ctx: RuleContext, start: number, end: number, line: number): NftStatement {
  // Depth of braces opened since the statement began (the failure may be inside `{ … }`).
  let depth = braceDepth(lex.text.slice(start, lex.lastEnd));
  for (;;) {
    const kind = lex.kind;
    if (kind === EOF || (depth === 0 && (endsRule(lex) || kind === HANDLE))) break;
    if (depth === 0 && kind === WORD && RESYNC.has(lex.value()) && lex.start > start) break;
    if (lex.isPunct(LBRACE)) depth++;
    if (lex.isPunct(RBRACE)) depth--;
    lex.next();
  }
  const raw = collapseSpaces(lex.text.slice(start, Math.max(lex.lastEnd, end)));
  ctx.diagnostics.push(diagnostic('warning', ctx.origin, line, lex.lineAt(start), 'unknown-statement', `statement not modelled: ${raw}`));
  return { kind: 'unknown', raw };
}

function braceDepth(text: string): number {
  let depth = 0;
  let quoted = false;
  for (const ch of text) {
    if (ch === '"') quoted = !quoted;
    else if (!quoted && ch === '{') depth++;
    else if (!quoted && ch === '}') depth = Math.max(0, depth - 1);
  }
  return depth;
}

function readStatement(lex: NftLexer, ctx: RuleContext): NftStatement {
  if (lex.kind === XT) {
    const name = lex.value();
    lex.next();
    return { kind: 'xt', name, raw: `# xt_${name}` };
  }
  const verdict = parseVerdict(lex);
  if (verdict) return verdict;
  if (lex.kind !== WORD) throw new Unparsed('unexpected token', lex.token());
  const w = lex.value();
  switch (w) {
    case 'reject':
      lex.next();
      return readReject(lex, ctx.family);
    case 'counter':
      lex.next();
      return readCounter(lex);
    case 'log':
      lex.next();
      return readLog(lex);
    case 'limit':
      lex.next();
      return readLimit(lex);
    case 'notrack':
      lex.next();
      return { kind: 'notrack' };
    case 'dnat':
    case 'snat':
    case 'masquerade':
    case 'redirect':
      lex.next();
      return readNat(lex, w);
    case 'xt':
      return readXt(lex);
    case 'add':
    case 'update':
    case 'delete':
      if (lex.peekKind() === WORD && lex.peekText().startsWith('@')) return readSetUpdate(lex);
      break;
  }
  return readExpressionStatement(lex);
}

function readExpressionStatement(lex: NftLexer): NftStatement {
  if (!startsExpr(lex)) throw new Unparsed(`unknown statement "${lex.token().value}"`, lex.token());
  // The first word, for an error after it was read.
  const fStart = lex.start;
  const fEnd = lex.end;
  const fLine = lex.line;
  const left = parseExpr(lex);
  if (lex.is('set')) {
    lex.next();
    return { kind: 'mangle', key: left, value: parseValueOrExpr(lex, true) };
  }
  if (lex.is('vmap')) {
    const at = lex.token();
    lex.next();
    const data = parseValueOrExpr(lex, false);
    if (data.kind !== 'set' && data.kind !== 'setref') throw new Unparsed('expected a map after "vmap"', at);
    return { kind: 'vmap', key: left, data };
  }
  if (endsRule(lex) || lex.kind === HANDLE) {
    throw new Unparsed('expression without a value', { type: 'word', value: lex.text.slice(fStart, fEnd), line: fLine, start: fStart, end: fEnd });
  }
  // See parseExpr: a value starting with a digit is no operator.
  const op = lex.kind === WORD && !startsWithDigit(lex) ? MATCH_OPS[lex.value()] : undefined;
  if (op) lex.next();
  const right = parseValueOrExpr(lex, false);
  if (lex.is('/')) {
    // `tcp flags syn / syn,ack` is nft's print of `tcp flags & (syn|ack) == syn`.
    lex.next();
    const mask = parseValueOrExpr(lex, false);
    return { kind: 'match', left: { kind: 'binop', op: '&', left, right: mask }, op: op ?? '==', right };
  }
  return { kind: 'match', left, op: op ?? implicitOp(left, right), right };
}

function readReject(lex: NftLexer, family: NftFamily): NftRejectStmt {
  if (!lex.is('with')) return normalizeReject({ kind: 'reject' }, family);
  lex.next();
  const kind = expectWord(lex);
  if (kind === 'tcp') {
    expectWord(lex, 'reset');
    return { kind: 'reject', type: 'tcp reset' };
  }
  if (kind !== 'icmp' && kind !== 'icmpv6' && kind !== 'icmpx') throw new Unparsed(`unknown reject "${kind}"`, lex.token());
  if (lex.is('type')) lex.next();
  return normalizeReject({ kind: 'reject', type: kind, code: expectWord(lex) }, family);
}

function readCounter(lex: NftLexer): NftStatement {
  if (lex.is('name')) {
    lex.next();
    return { kind: 'counter', name: expectName(lex) };
  }
  const values = parseCounterValues(lex);
  return values ? { kind: 'counter', ...values } : { kind: 'counter' };
}

function readLog(lex: NftLexer): NftLogStmt {
  const log: { -readonly [K in keyof NftLogStmt]: NftLogStmt[K] } = { kind: 'log' };
  for (;;) {
    if (lex.is('prefix')) {
      lex.next();
      log.prefix = expectString(lex);
    } else if (lex.is('level')) {
      lex.next();
      log.level = expectWord(lex);
    } else if (lex.is('group')) {
      lex.next();
      log.group = expectNumber(lex);
    } else if (lex.is('snaplen')) {
      lex.next();
      log.snaplen = expectNumber(lex);
    } else if (lex.is('queue-threshold')) {
      lex.next();
      log.queueThreshold = expectNumber(lex);
    } else if (lex.is('flags')) {
      lex.next();
      const flags = [expectWord(lex)];
      while (lex.isPunct(COMMA)) {
        lex.next();
        flags.push(expectWord(lex));
      }
      log.flags = flags;
    } else return log;
  }
}

function readLimit(lex: NftLexer): NftLimitStmt {
  expectWord(lex, 'rate');
  let over = false;
  if (lex.is('over')) {
    lex.next();
    over = true;
  }
  const first = lex.token();
  const rateWord = expectWord(lex);
  let rate: number | undefined;
  let unit = 'packets';
  let per: string;
  if (rateWord.includes('/')) {
    // `10/second`
    const [r = '', p = ''] = rateWord.split('/');
    rate = parseInteger(r);
    per = p;
  } else {
    // `1 mbytes/second`
    rate = parseInteger(rateWord);
    const [u = '', p = ''] = expectWord(lex).split('/');
    unit = u;
    per = p;
  }
  if (rate === undefined || per === '') throw new Unparsed('bad limit rate', first);
  let burst: number | undefined;
  let burstUnit: string | undefined;
  if (lex.is('burst')) {
    lex.next();
    burst = expectNumber(lex);
    if (lex.kind === WORD) {
      const u = lex.value();
      if (u === 'packets' || u.endsWith('bytes')) {
        lex.next();
        if (u !== 'packets') burstUnit = u;
      }
    }
  }
  return {
    kind: 'limit',
    rate,
    unit,
    per,
    over,
    // The default burst is what nft's text leaves out; drop it when given explicitly too.
    ...(burst !== undefined && !isDefaultBurst(unit, burst) && { burst }),
    ...(burstUnit !== undefined && { burstUnit }),
  };
}

/** `dnat [ip|ip6] to ADDR[:PORT] [flags]`, `masquerade [to :PORT] [flags]`, `redirect [to :PORT]`. */
function readNat(lex: NftLexer, type: NftNatStmt['type']): NftNatStmt {
  let family: 'ip' | 'ip6' | undefined;
  if ((lex.is('ip') || lex.is('ip6')) && lex.peekIs('to')) {
    family = lex.value() as 'ip' | 'ip6';
    lex.next();
  }
  let addr: NftNatStmt['addr'];
  let port: NftNatStmt['port'];
  if (lex.is('to')) {
    lex.next();
    if (startsExpr(lex)) addr = parseValueOrExpr(lex, true);
    else {
      const target = splitAddrPort(expectWord(lex));
      addr = target.addr;
      port = target.port;
    }
  }
  const flags: string[] = [];
  while (lex.kind === WORD && NAT_FLAGS.has(lex.value())) {
    flags.push(lex.value());
    lex.next();
    if (lex.isPunct(COMMA)) lex.next();
  }
  // Fields in this order, absent when undefined.
  const nat: { -readonly [K in keyof NftNatStmt]: NftNatStmt[K] } = { kind: 'nat', type, flags };
  if (family) nat.family = family;
  if (addr) nat.addr = addr;
  if (port) nat.port = port;
  return nat;
}

/** `10.0.0.1:80`, `[fd00::1]:80`, `:80`, `fd00::1`, `10.0.0.1-10.0.0.9` → address and port. */
function splitAddrPort(word: string): Pick<NftNatStmt, 'addr' | 'port'> {
  if (word.startsWith(':')) return { port: atomFromWord(word.slice(1)) };
  if (word.startsWith('[')) {
    const close = word.indexOf(']');
    const addr = atomFromWord(word.slice(1, close < 0 ? word.length : close));
    const rest = close < 0 ? '' : word.slice(close + 1);
    return rest.startsWith(':') ? { addr, port: atomFromWord(rest.slice(1)) } : { addr };
  }
  const colon = word.indexOf(':');
  // One colon: IPv4 with a port; more: a bare IPv6 address.
  if (colon > 0 && word.indexOf(':', colon + 1) < 0) {
    return { addr: atomFromWord(word.slice(0, colon)), port: atomFromWord(word.slice(colon + 1)) };
  }
  return { addr: atomFromWord(word) };
}

function readXt(lex: NftLexer): NftStatement {
  const start = lex.token();
  lex.next();
  const type = expectWord(lex);
  if (type !== 'match' && type !== 'target' && type !== 'watcher') throw new Unparsed(`unknown xt type "${type}"`, start);
  const name = expectName(lex);
  return { kind: 'xt', xtType: type, name, raw: collapseSpaces(lex.text.slice(start.start, lex.lastEnd)) };
}

/** `update @set { ip saddr [timeout 5s] }` (also `add`, `delete`). */
function readSetUpdate(lex: NftLexer): NftStatement {
  const op = expectWord(lex) as 'add' | 'update' | 'delete';
  const set = expectWord(lex).slice(1);
  if (!lex.isPunct(LBRACE)) fail(lex, 'expected "{"');
  lex.next();
  const elem = parseExpr(lex);
  let timeout: number | undefined;
  if (lex.is('timeout')) {
    lex.next();
    timeout = lex.kind === WORD ? parseDuration(lex.value()) : undefined;
    if (timeout === undefined) fail(lex, 'expected a time');
    lex.next();
  }
  if (!lex.isPunct(RBRACE)) fail(lex, 'expected "}"');
  lex.next();
  return { kind: 'set-update', op, set, elem, ...(timeout !== undefined && { timeout }) };
}
