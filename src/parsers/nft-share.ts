/**
 * Compacts the rules and set elements of a parsed nft ruleset (issue 10: a 25,000-Service
 * node has half a million rules). Used by {@link RulesetBuilder} for both parsers; what a
 * consumer reads is unchanged:
 *
 * - Identical expressions and statements are one shared, frozen object (`meta l4proto`,
 *   `ct state new`, `jump mark-for-masquerade`, the value `10.0.0.1` in a match and in a
 *   `dnat to`), kube-proxy repeats them across hundreds of thousands of rules. The model
 *   is immutable, so sharing is invisible except to `===` between two rules' statements.
 * - A rule whose text is what {@link formatRuleText} prints (every JSON rule; text rules as
 *   nft prints them) keeps no `raw` string: `raw` is an own enumerable getter that prints
 *   it again, so `rule.raw`, spread, `Object.keys`, `JSON.stringify` and deep equality see
 *   the same string as before. Other text rules keep `raw` as a flat copy.
 * - No kept string is a view into the input text (V8 slices of 13+ characters would keep
 *   the whole 68 MB `nft list` output alive); chain names and jump targets are one string.
 * - Empty lists are one frozen array; zero counters one frozen object; arrays exact-size.
 */
import type {
  NftCounters,
  NftElement,
  NftExpr,
  NftMatchOp,
  NftNatStmt,
  NftRule,
  NftStatement,
  NftValueExpr,
  NftVerdictKind,
} from '../model/nftables.js';
import { flatCopy } from '../flat-string.js';
import { ruleCounters } from '../model/nftables.js';
import { formatRuleText, formatStatement, quote } from './nft-format-expr.js';

/** The one empty list the compacted model uses (`flags: []` of a `dnat`, …). */
export const EMPTY_LIST: readonly never[] = Object.freeze([]);

const ZERO = 0n;
const ZERO_COUNTERS: NftCounters = Object.freeze({ packets: ZERO, bytes: ZERO });

type Obj = Record<string, unknown>;

// Ends a key path in the composite trie (no part is ever this symbol).
const END = Symbol('end');

/** The getter every compact rule shares: the rule's text as the formatter prints it. */
function printedRaw(this: NftRule): string {
  return formatRuleText(this);
}
const RAW_GETTER: PropertyDescriptor = { get: printedRaw, enumerable: true, configurable: false };

/**
 * A rule whose `raw` is printed on demand. Instances are plain objects (their prototype is
 * `Object.prototype`); properties come in the order the parsers always used (statements,
 * raw, handle, comment, counters) and optional ones are absent, not undefined. A
 * constructor (not a literal) so V8 keeps all fields in the object and every rule of one
 * shape shares one hidden class with the getter.
 */
function PrintedRule(
  this: Obj,
  statements: readonly NftStatement[],
  handle: number | undefined,
  comment: string | undefined,
  counters: NftCounters | undefined,
): void {
  this['statements'] = statements;
  Object.defineProperty(this, 'raw', RAW_GETTER);
  if (handle !== undefined) this['handle'] = handle;
  if (comment !== undefined) this['comment'] = comment;
  if (counters !== undefined) this['counters'] = counters;
}
PrintedRule.prototype = Object.prototype;
const NewPrintedRule = PrintedRule as unknown as new (
  statements: readonly NftStatement[],
  handle: number | undefined,
  comment: string | undefined,
  counters: NftCounters | undefined,
) => NftRule;

/** What a parser knows of one rule; `raw` is the text as read (text input only). */
export interface RuleParts {
  readonly statements: readonly NftStatement[];
  readonly handle?: number;
  readonly comment?: string;
  readonly raw?: string;
}

/**
 * Shares identical parts while one ruleset is built; dropped with the builder, so its
 * lookup tables cost memory only during the parse.
 */
export class NftSharer {
  private readonly names = new Map<string, string>();
  private readonly strValues = new Map<string, NftValueExpr>();
  private readonly numValues = new Map<number, NftValueExpr>();
  // Small leaf expressions and statements by a text key (`p ip saddr`, `v accept`).
  private readonly leaves = new Map<string, object>();
  private readonly payloads = new Map<string, Map<string, NftExpr>>();
  private readonly metas = new Map<string, NftExpr>();
  // `jump X` / `goto X` by target (other verdicts with a target are `jump`/`goto` only).
  private readonly jumps = new Map<string, NftExpr>();
  private readonly gotos = new Map<string, NftExpr>();
  // Matches by left → op → right (children already shared): no key string per lookup.
  private readonly matches = new Map<object, Map<string, Map<object, NftStatement>>>();
  // Elements that are only a key (and value), by key → value.
  private readonly pairs = new Map<object, Map<object | undefined, NftElement>>();
  // Composite expressions made of shared parts, by kind and parts (a trie of maps).
  private readonly composites = new Map<unknown, unknown>();
  // Printed text of shared statements (see isPrinted).
  private readonly texts = new Map<NftStatement, string>();
  // Matches the rule being compacted made (not yet seen in another rule): the first
  // `createdCount` entries (no `length = 0` per rule, a runtime call in V8).
  private readonly created: NftStatement[] = [];
  private createdCount = 0;

  /** One flat string per distinct name (chain names, jump targets, set names). */
  name(s: string): string {
    let n = this.names.get(s);
    if (n === undefined) {
      n = flatCopy(s);
      // Keyed by the copy: `s` may be a view into the input (nft-json-fast.ts passes slices).
      this.names.set(n, n);
    }
    return n;
  }

  /**
   * The compact rule of statements already shared (by {@link statement} or the lookups
   * below): {@link rule} without the re-sharing, for a reader that builds shared
   * statements itself (nft-json-fast.ts). JSON rules only (`raw` is always printed).
   */
  sharedRule(statements: readonly NftStatement[], handle: number | undefined, comment: string | undefined): NftRule {
    const list = statements.length === 0 ? EMPTY_LIST : statements;
    // The matches this rule made are only looked at for a rule read as text (isPrinted).
    this.createdCount = 0;
    let counters = ruleCounters(list);
    if (counters && counters.packets === ZERO && counters.bytes === ZERO) counters = ZERO_COUNTERS;
    return new NewPrintedRule(list, handle, comment === undefined ? undefined : flatCopy(comment), counters);
  }

  /** The shared `left op right` match; `left` and `right` must be shared already. */
  match(left: NftExpr, op: NftMatchOp, right: NftExpr): NftStatement {
    let byOp = this.matches.get(left);
    if (!byOp) this.matches.set(left, (byOp = new Map()));
    let byRight = byOp.get(op);
    if (!byRight) byOp.set(op, (byRight = new Map()));
    let m = byRight.get(right);
    if (!m) {
      byRight.set(right, (m = Object.freeze({ kind: 'match', left, op, right } as NftStatement)));
      this.created[this.createdCount++] = m;
    }
    return m;
  }

  /** The shared value expression of string `v` (a view into the input is fine: what is kept is copied). */
  stringValue(v: string): NftValueExpr {
    let out = this.strValues.get(v);
    if (!out) {
      const flat = flatCopy(v);
      out = Object.freeze({ kind: 'value', value: flat });
      this.strValues.set(flat, out);
    }
    return out;
  }

  /** The shared value expression of number `v`. */
  numberValue(v: number): NftValueExpr {
    let out = this.numValues.get(v);
    if (!out) this.numValues.set(v, (out = Object.freeze({ kind: 'value', value: v })));
    return out;
  }

  /** The shared `protocol field` payload expression (views into the input are fine). */
  payload(protocol: string, field: string): NftExpr {
    let byField = this.payloads.get(protocol);
    if (!byField) this.payloads.set(flatCopy(protocol), (byField = new Map()));
    let hit = byField.get(field);
    if (!hit) {
      const e = { kind: 'payload', protocol: flatCopy(protocol), field: flatCopy(field) } as const;
      byField.set(e.field, (hit = this.leaf(`p ${e.protocol} ${e.field}`, e)));
    }
    return hit;
  }

  /** The shared `meta key` expression. */
  meta(key: string): NftExpr {
    let hit = this.metas.get(key);
    if (!hit) {
      const e = { kind: 'meta', key: flatCopy(key) } as const;
      this.metas.set(e.key, (hit = this.leaf(`m ${e.key}`, e)));
    }
    return hit;
  }

  /** The shared `jump`/`goto` verdict to `target` (a view into the input is fine). */
  jumpTo(verdict: 'jump' | 'goto', target: string): NftExpr {
    const byTarget = verdict === 'goto' ? this.gotos : this.jumps;
    const hit = byTarget.get(target);
    if (hit) return hit;
    const name = this.name(target);
    // A literal, not a spread: V8 gave each spread-and-frozen copy a hidden class of its own.
    const v = Object.freeze({ kind: 'verdict', verdict, target: name } as const);
    byTarget.set(name, v);
    return v;
  }

  /**
   * `dnat to ADDR:PORT` (one per endpoint, not shared): a literal keeps its five fields in
   * the object. `addr` and `port` must be shared already, `flags` flat strings.
   */
  natTo(type: NftNatStmt['type'], flags: readonly string[], addr: NftExpr, port: NftExpr): NftStatement {
    return { kind: 'nat', type: this.name(type) as typeof type, flags, addr, port };
  }

  /** The shared verdict without a target (`accept`, `drop`, `return`, `continue`). */
  verdict(verdict: NftVerdictKind): NftExpr {
    return this.leaf(`v ${verdict}`, { kind: 'verdict', verdict });
  }

  /** The compact rule (see the module comment). */
  rule(parts: RuleParts): NftRule {
    this.createdCount = 0;
    const statements = parts.statements.length === 0 ? EMPTY_LIST : parts.statements.map((s) => this.statement(s));
    const comment = parts.comment === undefined ? undefined : flatCopy(parts.comment);
    let counters = ruleCounters(statements);
    if (counters && counters.packets === ZERO && counters.bytes === ZERO) counters = ZERO_COUNTERS;
    const printed = parts.raw === undefined || this.isPrinted(parts.raw, statements, comment);
    if (printed) return new NewPrintedRule(statements, parts.handle, comment, counters);
    return {
      statements,
      raw: flatCopy(parts.raw as string),
      ...(parts.handle !== undefined && { handle: parts.handle }),
      ...(comment !== undefined && { comment }),
      ...(counters && { counters }),
    };
  }

  /**
   * Whether `raw` is `formatRuleText({statements, comment})`, compared piece by piece: the
   * text of a shared statement is printed once per ruleset, not once per rule.
   */
  private isPrinted(raw: string, statements: readonly NftStatement[], comment: string | undefined): boolean {
    let pos = 0;
    for (let i = 0; i < statements.length; i++) {
      if (i > 0) {
        if (raw.charCodeAt(pos) !== 32) return false;
        pos++;
      }
      const text = this.statementText(statements[i] as NftStatement);
      if (!raw.startsWith(text, pos)) return false;
      pos += text.length;
    }
    if (comment !== undefined) {
      // `formatRuleText`: a space before `comment` only after a non-empty body.
      const tail = `${pos > 0 ? ' ' : ''}comment ${quote(comment)}`;
      if (!raw.startsWith(tail, pos)) return false;
      pos += tail.length;
    }
    return pos === raw.length;
  }

  /**
   * `formatStatement(s)`, kept for the shared (frozen) statements seen in an earlier rule too:
   * most matches are of one rule only (`ip saddr <endpoint>`), and their text is not kept.
   */
  private statementText(s: NftStatement): string {
    let text = this.texts.get(s);
    if (text === undefined) {
      text = formatStatement(s);
      if (Object.isFrozen(s) && !this.isCreated(s)) this.texts.set(s, text);
    }
    return text;
  }

  private isCreated(s: NftStatement): boolean {
    for (let i = 0; i < this.createdCount; i++) if (this.created[i] === s) return true;
    return false;
  }

  /** A shared equal of statement `s`. */
  statement(s: NftStatement): NftStatement {
    switch (s.kind) {
      case 'match':
        return this.match(this.expr(s.left), s.op, this.expr(s.right));
      case 'verdict':
        return this.expr(s) as NftStatement;
      case 'notrack':
        return this.leaf('notrack', s);
      case 'counter':
        if (s.name === undefined && (s.packets ?? ZERO) === ZERO && (s.bytes ?? ZERO) === ZERO) {
          return this.leaf(`counter ${s.packets === undefined ? '-' : '0'} ${s.bytes === undefined ? '-' : '0'}`, s);
        }
        return this.copy(s);
      case 'nat':
        if (s.addr === undefined && s.port === undefined && s.flags.length === 0) return this.leaf(`nat ${s.type} ${s.family ?? ''}`, s);
        if (s.family === undefined && s.addr !== undefined && s.port !== undefined) {
          const flags = s.flags.length === 0 ? EMPTY_LIST : s.flags.map(flatCopy);
          return this.natTo(s.type, flags, this.expr(s.addr), this.expr(s.port));
        }
        return this.copy(s);
      case 'reject':
        return this.leaf(`reject ${s.type ?? ''} ${s.code ?? ''}`, s);
      default:
        return this.copy(s);
    }
  }

  /** A shared equal of expression `e`. */
  expr(e: NftExpr): NftExpr {
    switch (e.kind) {
      case 'value':
        return this.value(e);
      case 'payload':
        // Two lookups by the words themselves: no key string built for the commonest leaves.
        return this.payload(e.protocol, e.field);
      case 'meta':
        return this.meta(e.key);
      case 'ct':
        return this.leaf(`c ${e.dir ?? ''} ${e.key}`, e);
      case 'setref':
        return this.leaf(`@${e.name}`, e);
      case 'numgen':
        return this.leaf(`n ${e.mode} ${e.mod} ${e.offset}`, e);
      case 'prefix':
        return this.leaf(`/ ${e.addr} ${e.len}`, e);
      case 'verdict':
        if (e.target === undefined) return this.leaf(`v ${e.verdict}`, e);
        return this.jumpTo(e.verdict === 'goto' ? 'goto' : 'jump', e.target);
      case 'concat':
      case 'list':
      case 'binop':
      case 'range':
      case 'map': {
        const copy = this.copy(e);
        // Element keys (`10.0.0.1 . tcp . 80`) are mostly unique: not worth a table entry.
        if (e.kind === 'concat' && e.items.some((i) => i.kind === 'value')) return copy;
        return this.composite(copy);
      }
      default:
        return this.copy(e);
    }
  }

  /** A shared equal of a set element (key and value only), or a compact copy. */
  element(el: NftElement): NftElement {
    const key = this.expr(el.key);
    const value = el.value === undefined ? undefined : this.expr(el.value);
    let only = true;
    for (const k in el) if (k !== 'key' && k !== 'value') only = false;
    if (!only) return this.copy({ ...el, key, ...(value !== undefined && { value }) }, true);
    return this.pair(key, value);
  }

  /** The shared element of only a key and a value (both shared already; `value` undefined: a key alone). */
  pair(key: NftExpr, value: NftExpr | undefined): NftElement {
    let byValue = this.pairs.get(key);
    if (!byValue) this.pairs.set(key, (byValue = new Map()));
    let out = byValue.get(value);
    if (!out) byValue.set(value, (out = Object.freeze(value === undefined ? { key } : { key, value })));
    return out;
  }

  private value(e: NftValueExpr): NftValueExpr {
    const v = e.value;
    if (typeof v === 'string') return this.stringValue(v);
    if (typeof v === 'number') return this.numberValue(v);
    return this.leaf(`b ${v}`, e);
  }

  /** The shared object for `key`; the first one seen (copied flat, frozen) becomes it. */
  private leaf<T extends object>(key: string, x: T): T {
    let hit = this.leaves.get(key);
    if (!hit) this.leaves.set(key, (hit = Object.freeze(this.copy(x))));
    return hit as T;
  }

  /** The shared equal of a composite whose parts are shared already (keyed by kind, then each own value). */
  private composite<T extends object>(x: T): T {
    let node = this.composites;
    for (const k in x) {
      const v = (x as Obj)[k];
      const parts = Array.isArray(v) ? [k, v.length, ...v] : [k, v];
      for (const p of parts) {
        let next = node.get(p) as Map<unknown, unknown> | undefined;
        if (!next) node.set(p, (next = new Map()));
        node = next;
      }
    }
    let hit = node.get(END) as T | undefined;
    if (!hit) node.set(END, (hit = Object.freeze(x)));
    return hit;
  }

  /**
   * A copy with every string flat, nested expressions shared, empty arrays the shared one
   * and zero bigints the shared zero; key order kept. `element`: `x` is a set element
   * (its key and value are shared already).
   */
  private copy<T extends object>(x: T, element = false): T {
    const out: Obj = {};
    for (const k in x) {
      const v = (x as Obj)[k];
      out[k] = element && (k === 'key' || k === 'value') ? v : this.part(v);
    }
    return out as T;
  }

  private part(v: unknown): unknown {
    if (typeof v === 'string') return flatCopy(v);
    if (typeof v === 'bigint') return v === ZERO ? ZERO : v;
    if (Array.isArray(v)) return v.length === 0 ? EMPTY_LIST : v.map((x) => this.part(x));
    if (typeof v !== 'object' || v === null) return v;
    const o = v as Obj;
    if (typeof o['kind'] === 'string') return this.expr(o as unknown as NftExpr);
    if ('key' in o) return this.element(o as unknown as NftElement);
    return this.copy(o);
  }
}
