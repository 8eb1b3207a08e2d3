/**
 * One rule of nft(8) text: its statements (nft(8) "STATEMENTS"), comment, counters and
 * `# handle`. A statement that is not understood becomes `{kind: 'unknown', raw}` and a
 * warning; reading resumes at the next verdict, `counter` or `comment`, so the rest of the
 * rule (its counter, its verdict) is still modelled.
 */
import { diagnostic, type Diagnostic } from '../model/diagnostics.js';
import {
  ruleCounters,
  type NftFamily,
  type NftLimitStmt,
  type NftLogStmt,
  type NftNatStmt,
  type NftRejectStmt,
  type NftRule,
  type NftStatement,
} from '../model/nftables.js';
import { collapseSpaces, type NftLexer, type NftToken } from './nft-lexer.js';
import {
  atomFromWord,
  expectName,
  expectNumber,
  expectString,
  expectWord,
  isPunct,
  isWord,
  parseCounterValues,
  parseDuration,
  parseExpr,
  parseInteger,
  parseValueOrExpr,
  parseVerdict,
  startsExpr,
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

/** Whether `t` ends the rule at brace depth 0: end of line, `;`, `}` or end of text. */
export function endsRule(t: NftToken): boolean {
  return t.type === 'nl' || t.type === 'eof' || (t.type === 'punct' && (t.value === ';' || t.value === '}'));
}

/**
 * Reads one rule from the lexer up to (not including) its end token. Returns undefined when
 * the rule is empty. `raw` is the rule's text with white space collapsed.
 */
export function readRule(lex: NftLexer, ctx: RuleContext): NftRule | undefined {
  const statements: NftStatement[] = [];
  let comment: string | undefined;
  let handle: number | undefined;
  let rawStart = -1;
  let rawEnd = -1;
  for (;;) {
    const t = lex.peek();
    if (endsRule(t)) break;
    if (t.type === 'handle') {
      lex.next();
      handle = Number(t.value);
      continue;
    }
    if (rawStart < 0) rawStart = t.start;
    if (isWord(t, 'comment')) {
      lex.next();
      try {
        comment = expectString(lex);
      } catch (e) {
        if (!(e instanceof Unparsed)) throw e;
        statements.push(unknownStatement(lex, ctx, t));
      }
      rawEnd = lex.lastEnd;
      continue;
    }
    try {
      statements.push(readStatement(lex, ctx));
    } catch (e) {
      if (!(e instanceof Unparsed)) throw e;
      statements.push(unknownStatement(lex, ctx, t));
    }
    rawEnd = lex.lastEnd;
  }
  if (rawStart < 0) return undefined;
  const counters = ruleCounters(statements);
  return {
    statements,
    raw: collapseSpaces(lex.text.slice(rawStart, rawEnd)),
    ...(handle !== undefined && { handle }),
    ...(comment !== undefined && { comment }),
    ...(counters && { counters }),
  };
}

/** Skips from a statement that failed to the next statement the reader knows; records it. */
function unknownStatement(lex: NftLexer, ctx: RuleContext, start: NftToken): NftStatement {
  // Depth of braces opened since the statement began (the failure may be inside `{ … }`).
  let depth = braceDepth(lex.text.slice(start.start, lex.lastEnd));
  for (;;) {
    const t = lex.peek();
    if (t.type === 'eof' || (depth === 0 && (endsRule(t) || t.type === 'handle'))) break;
    if (depth === 0 && t.type === 'word' && RESYNC.has(t.value) && t.start > start.start) break;
    if (isPunct(t, '{')) depth++;
    if (isPunct(t, '}')) depth--;
    lex.next();
  }
  const raw = collapseSpaces(lex.text.slice(start.start, Math.max(lex.lastEnd, start.end)));
  ctx.diagnostics.push(
    diagnostic('warning', ctx.origin, start.line, lex.lineAt(start.start), 'unknown-statement', `statement not modelled: ${raw}`),
  );
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
  const t = lex.peek();
  if (t.type === 'xt') {
    lex.next();
    return { kind: 'xt', name: t.value, raw: `# xt_${t.value}` };
  }
  const verdict = parseVerdict(lex);
  if (verdict) return verdict;
  if (t.type !== 'word') throw new Unparsed('unexpected token', t);
  switch (t.value) {
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
      return readNat(lex, t.value);
    case 'xt':
      return readXt(lex);
    case 'add':
    case 'update':
    case 'delete':
      if (lex.peek(1).type === 'word' && lex.peek(1).value.startsWith('@')) return readSetUpdate(lex);
      break;
  }
  return readExpressionStatement(lex);
}

function readExpressionStatement(lex: NftLexer) {
  const first = lex.peek();
  if (!startsExpr(lex)) throw new Unparsed(`unknown statement "${first.value}"`, first);
  const left = parseExpr(lex);
  const t = lex.peek();
  if (isWord(t, 'set')) {
    lex.next();
    return { kind: 'mangle' as const, key: left, value: parseValueOrExpr(lex, true) };
  }
  if (isWord(t, 'vmap')) {
    lex.next();
    const data = parseValueOrExpr(lex, false);
    if (data.kind !== 'set' && data.kind !== 'setref') throw new Unparsed('expected a map after "vmap"', t);
    return { kind: 'vmap' as const, key: left, data };
  }
  if (endsRule(t) || t.type === 'handle') throw new Unparsed('expression without a value', first);
  const op = t.type === 'word' ? MATCH_OPS[t.value] : undefined;
  if (op) lex.next();
  const right = parseValueOrExpr(lex, false);
  if (isWord(lex.peek(), '/')) {
    // `tcp flags syn / syn,ack` is nft's print of `tcp flags & (syn|ack) == syn`.
    lex.next();
    const mask = parseValueOrExpr(lex, false);
    return { kind: 'match' as const, left: { kind: 'binop' as const, op: '&' as const, left, right: mask }, op: op ?? '==', right };
  }
  return { kind: 'match' as const, left, op: op ?? implicitOp(left, right), right };
}

function readReject(lex: NftLexer, family: NftFamily): NftRejectStmt {
  if (!isWord(lex.peek(), 'with')) return normalizeReject({ kind: 'reject' }, family);
  lex.next();
  const kind = expectWord(lex);
  if (kind === 'tcp') {
    expectWord(lex, 'reset');
    return { kind: 'reject', type: 'tcp reset' };
  }
  if (kind !== 'icmp' && kind !== 'icmpv6' && kind !== 'icmpx') throw new Unparsed(`unknown reject "${kind}"`, lex.peek());
  if (isWord(lex.peek(), 'type')) lex.next();
  return normalizeReject({ kind: 'reject', type: kind, code: expectWord(lex) }, family);
}

function readCounter(lex: NftLexer): NftStatement {
  if (isWord(lex.peek(), 'name')) {
    lex.next();
    return { kind: 'counter', name: expectName(lex) };
  }
  const values = parseCounterValues(lex);
  return values ? { kind: 'counter', ...values } : { kind: 'counter' };
}

function readLog(lex: NftLexer): NftLogStmt {
  const log: { -readonly [K in keyof NftLogStmt]: NftLogStmt[K] } = { kind: 'log' };
  for (;;) {
    const t = lex.peek();
    if (isWord(t, 'prefix')) {
      lex.next();
      log.prefix = expectString(lex);
    } else if (isWord(t, 'level')) {
      lex.next();
      log.level = expectWord(lex);
    } else if (isWord(t, 'group')) {
      lex.next();
      log.group = expectNumber(lex);
    } else if (isWord(t, 'snaplen')) {
      lex.next();
      log.snaplen = expectNumber(lex);
    } else if (isWord(t, 'queue-threshold')) {
      lex.next();
      log.queueThreshold = expectNumber(lex);
    } else if (isWord(t, 'flags')) {
      lex.next();
      const flags = [expectWord(lex)];
      while (isPunct(lex.peek(), ',')) {
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
  if (isWord(lex.peek(), 'over')) {
    lex.next();
    over = true;
  }
  const first = lex.peek();
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
  if (isWord(lex.peek(), 'burst')) {
    lex.next();
    burst = expectNumber(lex);
    const u = lex.peek();
    if (isWord(u) && (u.value === 'packets' || u.value.endsWith('bytes'))) {
      lex.next();
      if (u.value !== 'packets') burstUnit = u.value;
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
  const f = lex.peek();
  if ((isWord(f, 'ip') || isWord(f, 'ip6')) && isWord(lex.peek(1), 'to')) {
    lex.next();
    family = f.value as 'ip' | 'ip6';
  }
  let addr: NftNatStmt['addr'];
  let port: NftNatStmt['port'];
  if (isWord(lex.peek(), 'to')) {
    lex.next();
    if (startsExpr(lex)) addr = parseValueOrExpr(lex, true);
    else {
      const target = splitAddrPort(expectWord(lex));
      addr = target.addr;
      port = target.port;
    }
  }
  const flags: string[] = [];
  while (isWord(lex.peek()) && NAT_FLAGS.has(lex.peek().value)) {
    flags.push(lex.next().value);
    if (isPunct(lex.peek(), ',')) lex.next();
  }
  return {
    kind: 'nat',
    type,
    flags,
    ...(family && { family }),
    ...(addr && { addr }),
    ...(port && { port }),
  };
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
  const start = lex.next();
  const type = expectWord(lex);
  if (type !== 'match' && type !== 'target' && type !== 'watcher') throw new Unparsed(`unknown xt type "${type}"`, start);
  const name = expectName(lex);
  return { kind: 'xt', xtType: type, name, raw: collapseSpaces(lex.text.slice(start.start, lex.lastEnd)) };
}

/** `update @set { ip saddr [timeout 5s] }` (also `add`, `delete`). */
function readSetUpdate(lex: NftLexer): NftStatement {
  const op = expectWord(lex) as 'add' | 'update' | 'delete';
  const set = expectWord(lex).slice(1);
  const open = lex.next();
  if (!isPunct(open, '{')) throw new Unparsed('expected "{"', open);
  const elem = parseExpr(lex);
  let timeout: number | undefined;
  if (isWord(lex.peek(), 'timeout')) {
    lex.next();
    const t = lex.next();
    timeout = t.type === 'word' ? parseDuration(t.value) : undefined;
    if (timeout === undefined) throw new Unparsed('expected a time', t);
  }
  const close = lex.next();
  if (!isPunct(close, '}')) throw new Unparsed('expected "}"', close);
  return { kind: 'set-update', op, set, elem, ...(timeout !== undefined && { timeout }) };
}
