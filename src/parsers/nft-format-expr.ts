/**
 * Prints statements, expressions and set elements the way `nft list ruleset` does (nftables
 * 1.0.x src/statement.c, src/expression.c): marks as `0x%08x`, interface names quoted, `==`
 * only where nft shows it, verdict maps `{ k : v, … }`, times as `1h30m`. The JSON parser
 * uses this for a rule's `raw`, so for nft's own output JSON and text give the same text.
 */
import type { NftElement, NftExpr, NftRule, NftStatement } from '../model/nftables.js';
import { atomFromWord } from './nft-text-expr.js';
import { exprType, isBitmaskType, isQuotedType, PRINTED_UNQUALIFIED_META_KEYS } from './nft-types.js';

/** Datatype of a value being printed: one name, or one per field of a concatenation. */
export type TypeHint = string | readonly string[] | undefined;

/** The type hint an expression gives the value it is compared with. */
export function hintOf(expr: NftExpr): TypeHint {
  if (expr.kind === 'concat') return expr.items.map((i) => exprType(i) ?? '');
  return exprType(expr);
}

/** nft time text: `3h`, `1m29s992ms`, `0s`; Infinity → `never`. Input in seconds. */
export function formatDuration(seconds: number): string {
  if (seconds === Number.POSITIVE_INFINITY) return 'never';
  let ms = Math.round(seconds * 1000);
  const parts: string[] = [];
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ] as const) {
    const n = Math.floor(ms / size);
    if (n > 0) parts.push(`${n}${unit}`);
    ms -= n * size;
  }
  if (ms > 0) parts.push(`${ms}ms`);
  return parts.length ? parts.join('') : '0s';
}

/** A quoted nft string: `"…"` with `"` and `\` escaped. */
export function quote(s: string): string {
  return `"${s.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

function formatString(s: string, type: string | undefined): string {
  if (isQuotedType(type) || s === '' || /[\s{};,"#]/.test(s)) return quote(s);
  // A string that would read back as a number, prefix, range or set reference needs quotes.
  const back = atomFromWord(s);
  return back.kind === 'value' && back.value === s ? s : quote(s);
}

function fieldHint(hint: TypeHint, i: number): string | undefined {
  return typeof hint === 'string' || hint === undefined ? undefined : hint[i];
}

function scalarHint(hint: TypeHint): string | undefined {
  return typeof hint === 'string' ? hint : undefined;
}

/** Prints an expression; `hint` is the datatype of values in it (from the other side of a match). */
export function formatExpr(expr: NftExpr, hint?: TypeHint): string {
  switch (expr.kind) {
    case 'value': {
      const v = expr.value;
      const type = scalarHint(hint);
      if (typeof v === 'number') return type === 'mark' ? `0x${v.toString(16).padStart(8, '0')}` : String(v);
      if (typeof v === 'boolean') return v ? 'exists' : 'missing';
      return formatString(v, type);
    }
    case 'payload':
      return `${expr.protocol} ${expr.field}`;
    case 'meta':
      return PRINTED_UNQUALIFIED_META_KEYS.has(expr.key) ? expr.key : `meta ${expr.key}`;
    case 'ct':
      return `ct ${expr.dir ? `${expr.dir} ` : ''}${expr.key}`;
    case 'fib':
      return `fib ${expr.flags.join(' . ')} ${expr.result}`;
    case 'numgen':
      return `numgen ${expr.mode} mod ${expr.mod}${expr.offset ? ` offset ${expr.offset}` : ''}`;
    case 'concat':
      return expr.items.map((item, i) => formatExpr(item, fieldHint(hint, i))).join(' . ');
    case 'binop':
      return `${formatExpr(expr.left, hint)} ${expr.op} ${formatExpr(expr.right, exprType(expr.left) ?? scalarHint(hint))}`;
    case 'prefix':
      return `${expr.addr}/${expr.len}`;
    case 'range':
      return `${formatExpr(expr.from, hint)}-${formatExpr(expr.to, hint)}`;
    case 'list':
      return expr.items.map((i) => formatExpr(i, hint)).join(',');
    case 'set':
      return `{ ${expr.elements.map((e) => formatElement(e, hint)).join(', ')} }`;
    case 'setref':
      return `@${expr.name}`;
    case 'map':
      return `${formatExpr(expr.key)} map ${formatExpr(expr.data, hintOf(expr.key))}`;
    case 'verdict':
      return expr.target !== undefined ? `${expr.verdict} ${expr.target}` : expr.verdict;
    case 'unknown':
      return expr.raw;
  }
}

/** Prints a set element: key, counter, timeout, expires, comment, then `: value` (nft's order). */
export function formatElement(e: NftElement, keyHint?: TypeHint, valueHint?: TypeHint): string {
  let out = formatExpr(e.key, keyHint);
  if (e.counters) out += ` counter packets ${e.counters.packets} bytes ${e.counters.bytes}`;
  if (e.timeout !== undefined) out += ` timeout ${formatDuration(e.timeout)}`;
  if (e.expires !== undefined) out += ` expires ${formatDuration(e.expires)}`;
  if (e.comment !== undefined) out += ` comment ${quote(e.comment)}`;
  if (e.value !== undefined) out += ` : ${formatExpr(e.value, valueHint)}`;
  return out;
}

/** `==` is shown only before a bitmask value or after a bitwise expression (`must_print_eq_op()`). */
function opText(stmt: Extract<NftStatement, { kind: 'match' }>): string {
  if (stmt.op === 'in') return '';
  if (stmt.op !== '==') return `${stmt.op} `;
  const type = exprType(stmt.left);
  const bitmaskValue = isBitmaskType(type) && stmt.right.kind === 'value';
  return stmt.left.kind === 'binop' || bitmaskValue ? '== ' : '';
}

function natTarget(stmt: Extract<NftStatement, { kind: 'nat' }>): string {
  const { addr, port } = stmt;
  const portText = port ? formatExpr(port) : undefined;
  if (!addr) return portText !== undefined ? ` to :${portText}` : '';
  const addrText = formatExpr(addr);
  if (portText === undefined) return ` to ${addrText}`;
  const v6 = addr.kind === 'value' && typeof addr.value === 'string' && addr.value.includes(':');
  return ` to ${v6 ? `[${addrText}]` : addrText}:${portText}`;
}

/** Prints one statement. */
export function formatStatement(stmt: NftStatement): string {
  switch (stmt.kind) {
    case 'match': {
      const { left } = stmt;
      if (left.kind === 'binop' && left.op === '&' && isBitmaskType(exprType(left.left))) {
        // Flag tests print as `value / mask` (`tcp flags syn / syn,ack`).
        const hint = hintOf(left.left);
        const op = stmt.op === '==' ? '' : `${stmt.op} `;
        return `${formatExpr(left.left)} ${op}${formatExpr(stmt.right, hint)} / ${formatExpr(left.right, hint)}`;
      }
      return `${formatExpr(left)} ${opText(stmt)}${formatExpr(stmt.right, hintOf(left))}`;
    }
    case 'verdict':
      return formatExpr(stmt);
    case 'vmap':
      return `${formatExpr(stmt.key)} vmap ${formatExpr(stmt.data, hintOf(stmt.key))}`;
    case 'reject':
      if (stmt.type === 'tcp reset') return 'reject with tcp reset';
      return stmt.type ? `reject with ${stmt.type}${stmt.code ? ` ${stmt.code}` : ''}` : 'reject';
    case 'nat': {
      const family = stmt.family ? ` ${stmt.family}` : '';
      const flags = stmt.flags.length ? ` ${stmt.flags.join(',')}` : '';
      return `${stmt.type}${family}${natTarget(stmt)}${flags}`;
    }
    case 'mangle':
      return `${formatExpr(stmt.key)} set ${formatExpr(stmt.value, hintOf(stmt.key))}`;
    case 'counter':
      // nft quotes the name of a referenced counter object (`counter name "x"`).
      if (stmt.name !== undefined) return `counter name ${quote(stmt.name)}`;
      return stmt.packets !== undefined ? `counter packets ${stmt.packets} bytes ${stmt.bytes ?? 0n}` : 'counter';
    case 'log': {
      let out = 'log';
      if (stmt.prefix !== undefined) out += ` prefix ${quote(stmt.prefix)}`;
      if (stmt.group !== undefined) out += ` group ${stmt.group}`;
      if (stmt.snaplen !== undefined) out += ` snaplen ${stmt.snaplen}`;
      if (stmt.queueThreshold !== undefined) out += ` queue-threshold ${stmt.queueThreshold}`;
      if (stmt.level !== undefined) out += ` level ${stmt.level}`;
      if (stmt.flags?.length) out += ` flags ${stmt.flags.join(',')}`;
      return out;
    }
    case 'notrack':
      return 'notrack';
    case 'limit': {
      const unit = stmt.unit === 'packets' ? '' : ` ${stmt.unit}`;
      let out = `limit rate ${stmt.over ? 'over ' : ''}${stmt.rate}${unit}/${stmt.per}`;
      if (stmt.burst !== undefined) out += ` burst ${stmt.burst} ${stmt.unit === 'packets' ? 'packets' : (stmt.burstUnit ?? 'bytes')}`;
      return out;
    }
    case 'set-update': {
      const timeout = stmt.timeout !== undefined ? ` timeout ${formatDuration(stmt.timeout)}` : '';
      return `${stmt.op} @${stmt.set} { ${formatExpr(stmt.elem)}${timeout} }`;
    }
    case 'xt':
      return stmt.xtType ? `xt ${stmt.xtType} ${stmt.name}` : `# xt_${stmt.name}`;
    case 'unknown':
      return stmt.raw;
  }
}

/** A rule's text: its statements, then `comment "…"`, as `nft list` prints it. */
export function formatRuleText(rule: Pick<NftRule, 'statements' | 'comment'>): string {
  const body = rule.statements.map(formatStatement).join(' ');
  return rule.comment !== undefined ? `${body}${body ? ' ' : ''}comment ${quote(rule.comment)}` : body;
}
