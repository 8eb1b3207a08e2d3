/**
 * Parser for nft(8) ruleset text in both of its forms:
 *
 * - the block form `nft list ruleset` prints (`table ip kube-proxy { chain x { … } map y { … } }`),
 *   with or without `nft -a` handles, including `nft list chain` fragments without a table;
 * - the `nft -f` transaction form kube-proxy and knftables write (`add table …`, `add chain …`,
 *   `add rule ip kube-proxy <chain> …`, `add element … { k : v }`, `add set`/`add map`,
 *   `insert`/`replace rule`, `flush …`/`delete …`, which are applied and noted as info).
 *
 * Pure and total: never throws on any input; what is not understood becomes a diagnostic
 * with its 1-based line and the line text, and parsing continues with the next item.
 * Linear in the input: a streaming tokenizer and a recursive-descent reader, no regular
 * expression over more than one token.
 */
import { diagnostic, type Diagnostic, type ParseResult } from '../model/diagnostics.js';
import {
  isNftChainType,
  isNftFamily,
  isNftHook,
  type NftExpr,
  type NftFamily,
  type NftRuleset,
} from '../model/nftables.js';
import { normalizeSetFlags, RulesetBuilder, type ChainDraft, type SetDraft, type TableDraft } from './nft-builder.js';
import { collapseSpaces, EOF, HANDLE, NL, NftLexer, PUNCT_TOKEN, STRING, WORD, type NftToken } from './nft-lexer.js';
import { resolvePriority } from './nft-priority.js';
import type { RuleParts } from './nft-share.js';
import {
  COMMA,
  expectName,
  expectNumber,
  expectString,
  expectWord,
  fail,
  LBRACE,
  parseAtom,
  parseBigint,
  parseDuration,
  parseElementList,
  parseExpr,
  RBRACE,
  SEMI,
  Unparsed,
} from './nft-text-expr.js';
import { endsRule, readRule, type RuleContext } from './nft-text-rule.js';
import { counterAboveMax, counterAboveMaxMessage, exprType, splitConcatType } from './nft-types.js';

const MAX_DIAGNOSTICS = 1000;
const RAW_OBJECTS: ReadonlySet<string> = new Set(['flowtable', 'quota', 'limit', 'synproxy', 'secmark', 'tunnel']);

/**
 * Parses `nft list ruleset` / `nft -f` text into the ruleset model.
 *
 * Diagnostics (codes): `syntax` (error: an item not understood, skipped), `unterminated`
 * (error: `{` or string not closed), `unknown-statement` (warning: kept as `unknown`),
 * `chain-outside-table` (warning: fragment chains go to a table with an empty name),
 * `implicit-table`/`implicit-chain`/`implicit-set` (warning: referenced before declared),
 * `redeclared` (info: a block repeated, contents merged as nft does), `command-applied`
 * (info: flush/delete/replace), `no-such-rule` (warning: position handle/index absent; appended),
 * `not-modelled` (info: kept as text or ignored).
 */
export function parseNftText(text: string, origin: string): ParseResult<NftRuleset> {
  const parser = new TextParser(text, origin);
  parser.run();
  const value = parser.builder.finish();
  // V8 keeps the subject of the last regular expression match (RegExp.lastMatch & co.): a
  // view into this text (a rule's raw) would keep all of it alive after the parse.
  RESET_LAST_MATCH.test('');
  return { value, diagnostics: capDiagnostics(parser.diagnostics, origin) };
}

const RESET_LAST_MATCH = /^/;

function capDiagnostics(diags: Diagnostic[], origin: string): Diagnostic[] {
  if (diags.length <= MAX_DIAGNOSTICS) return diags;
  const more = diags.length - MAX_DIAGNOSTICS;
  return [
    ...diags.slice(0, MAX_DIAGNOSTICS),
    diagnostic('info', origin, 0, '', 'too-many-diagnostics', `${more} more diagnostics not shown`),
  ];
}

/** A token's position, kept instead of the token while an item is read (a diagnostic makes the token). */
interface Mark {
  readonly start: number;
  readonly line: number;
}

class TextParser {
  readonly builder = new RulesetBuilder();
  readonly diagnostics: Diagnostic[] = [];
  private readonly lex: NftLexer;
  private readonly declared = new Set<string>();
  /** Chains and sets declared, by table (`family name`), then by kind and name: no key string per chain. */
  private readonly declaredItems = new Map<string, { chain: Set<string>; set: Set<string> }>();
  // The table whose declared items were looked up last, and its `family name` and items.
  private itemsTable: TableDraft | undefined;
  private itemsKey = '';
  private items: { chain: Set<string>; set: Set<string> } | undefined;
  // Tables named before the first `nft -f` command (see noteItemRedeclared).
  private commandSeen = false;
  private readonly tablesSeen = new Set<TableDraft>();
  private lastSeen: TableDraft | undefined;
  // One rule context per family (rules read in it only read it).
  private readonly contexts = new Map<NftFamily, RuleContext>();

  constructor(
    text: string,
    private readonly origin: string,
  ) {
    this.lex = new NftLexer(text);
  }

  run(): void {
    const lex = this.lex;
    for (;;) {
      const kind = lex.kind;
      if (kind === EOF) {
        this.reportUnterminated();
        return;
      }
      if (kind === NL || kind === HANDLE || lex.isPunct(SEMI)) {
        lex.next();
        continue;
      }
      const start = lex.start;
      const line = lex.line;
      try {
        this.topLevel();
      } catch (e) {
        this.recover(e, start, line);
      }
    }
  }

  private reportUnterminated(): void {
    for (const s of this.lex.unterminatedStrings) this.report('error', s, 'unterminated', 'string not closed before end of line');
  }

  /** After an item that began at `start` threw: reports an {@link Unparsed} and skips the rest of the item. */
  private recover(e: unknown, start: number, line: number): void {
    if (!(e instanceof Unparsed)) throw e;
    const at = e.token.type === 'eof' ? { start, line } : e.token;
    const code = e.message.startsWith('unterminated') ? 'unterminated' : 'syntax';
    this.report('error', at, code, e.message);
    this.skipItem(start);
    // A stray `}` at top level ends no item: step over it so reading goes on.
    if (this.lex.start === start) this.lex.next();
  }

  private report(severity: 'error' | 'warning' | 'info', at: Mark, code: string, message: string): void {
    this.diagnostics.push(diagnostic(severity, this.origin, at.line, this.lex.lineAt(at.start), code, message));
  }

  /** The current token's position. */
  private mark(): Mark {
    return { start: this.lex.start, line: this.lex.line };
  }

  /** Skips to the end of the item that began at offset `start`: end of line or `;` outside braces, or the enclosing `}`. */
  private skipItem(start: number): void {
    const lex = this.lex;
    let depth = 0;
    // Braces opened since the item began and not yet closed.
    for (const ch of lex.text.slice(start, Math.max(lex.lastEnd, start))) {
      if (ch === '{') depth++;
      else if (ch === '}') depth = Math.max(0, depth - 1);
    }
    for (;;) {
      const kind = lex.kind;
      if (kind === EOF) {
        this.reportUnterminated();
        return;
      }
      if (depth === 0 && (kind === NL || lex.isPunct(SEMI) || lex.isPunct(RBRACE))) return;
      if (lex.isPunct(LBRACE)) depth++;
      if (lex.isPunct(RBRACE)) depth--;
      lex.next();
    }
  }

  private topLevel(): void {
    const lex = this.lex;
    if (lex.kind !== WORD) {
      throw new Unparsed(`unexpected ${lex.kind === STRING ? 'string' : `"${lex.value()}"`}`, lex.token());
    }
    const t = this.mark();
    const w = lex.value();
    switch (w) {
      case 'table': {
        lex.next();
        const table = this.tableRef(false);
        this.noteRedeclared(t, `table ${table.family} ${table.name}`);
        if (lex.isPunct(LBRACE)) this.tableBody(table);
        return;
      }
      case 'chain':
      case 'set':
      case 'map': {
        // A `nft list chain` fragment or grep output: no table around it.
        this.report('warning', t, 'chain-outside-table', `${w} outside a table: kept in a table without name`);
        this.tableItem(this.seen(this.builder.table('ip', '')));
        return;
      }
      case 'define':
      case 'include':
        this.report('info', t, 'not-modelled', `"${w}" is not evaluated`);
        this.skipItem(t.start);
        return;
      default:
        this.command(t);
    }
  }

  /** {@link noteRedeclared} for a chain or set of `table`. */
  private noteItemRedeclared(at: Mark, kind: 'chain' | 'set', table: TableDraft, name: string): void {
    if (!this.commandSeen) {
      if (kind === 'chain' ? table.chains.has(name) : table.sets.has(name)) {
        this.report('info', at, 'redeclared', `${kind} ${table.family} ${table.name} ${name} declared again; contents merged`);
      }
      return;
    }
    const items = this.itemsOf(table);
    const names = items[kind];
    const size = names.size;
    names.add(name);
    if (names.size === size) this.report('info', at, 'redeclared', `${kind} ${this.itemsKey} ${name} declared again; contents merged`);
  }

  /** The declared chains and sets of `table`'s `family name`. */
  private itemsOf(table: TableDraft): { chain: Set<string>; set: Set<string> } {
    let items = this.items;
    if (this.itemsTable !== table || items === undefined) {
      // Keyed by `family name`, not by draft: a table deleted and added again keeps its names.
      this.itemsKey = `${table.family} ${table.name}`;
      items = this.declaredItems.get(this.itemsKey);
      if (items === undefined) {
        items = { chain: new Set(), set: new Set() };
        this.declaredItems.set(this.itemsKey, items);
      }
      this.itemsTable = table;
      this.items = items;
    }
    return items;
  }

  private noteRedeclared(at: Mark, key: string): void {
    if (this.declared.has(key)) this.report('info', at, 'redeclared', `${key} declared again; contents merged`);
    this.declared.add(key);
  }

  /** `[family] name` of a table; creates it. */
  private tableRef(implicitWarning: boolean, at?: Mark): TableDraft {
    const family = this.family();
    const nameToken = this.mark();
    const name = expectName(this.lex);
    if (implicitWarning && !this.builder.findTable(family, name)) {
      this.report('warning', at ?? nameToken, 'implicit-table', `table ${family} ${name} used before it was added`);
    }
    return this.seen(this.builder.table(family, name));
  }

  /** Notes a table the text names (see {@link noteItemRedeclared}). */
  private seen(table: TableDraft): TableDraft {
    if (!this.commandSeen && table !== this.lastSeen) {
      this.tablesSeen.add(table);
      this.lastSeen = table;
    }
    return table;
  }

  /**
   * Before the first `nft -f` command, every chain and set was made by a declaration and
   * none was deleted: what is declared is what the tables hold. From the first command on,
   * declarations are kept by name (a deleted chain declared again is still "redeclared").
   */
  private commandStarts(): void {
    if (this.commandSeen) return;
    this.commandSeen = true;
    for (const table of this.tablesSeen) {
      const items = this.itemsOf(table);
      for (const name of table.chains.keys()) items.chain.add(name);
      for (const name of table.sets.keys()) items.set.add(name);
    }
    this.tablesSeen.clear();
  }

  private family(): NftFamily {
    const lex = this.lex;
    if (lex.kind === WORD) {
      const w = lex.value();
      if (isNftFamily(w)) {
        lex.next();
        return w;
      }
    }
    return 'ip';
  }

  /** `{ … }` of a table: items until the matching `}`. */
  private tableBody(table: TableDraft): void {
    this.block(() => {
      const lex = this.lex;
      if (lex.kind === HANDLE) {
        table.handle = Number(lex.value());
        lex.next();
        return;
      }
      this.tableItem(table);
    });
  }

  /**
   * Reads `{`, then calls `item` for each item until `}` (`atStart`: the first item), the
   * current token being the item's first; reports a missing `}`.
   */
  private block(item: (atStart: boolean) => void): void {
    const lex = this.lex;
    if (!lex.isPunct(LBRACE)) fail(lex, 'expected "{"');
    const open = this.mark();
    lex.next();
    let atStart = true;
    for (;;) {
      const kind = lex.kind;
      if (kind === EOF) {
        this.report('error', open, 'unterminated', 'missing "}" before end of input');
        return;
      }
      if (kind === PUNCT_TOKEN) {
        const c = lex.firstCode();
        if (c === RBRACE) {
          lex.next();
          return;
        }
        if (c === SEMI) {
          lex.next();
          continue;
        }
      } else if (kind === NL) {
        lex.next();
        continue;
      }
      const start = lex.start;
      const line = lex.line;
      const first = atStart;
      atStart = false;
      try {
        item(first);
      } catch (e) {
        this.recover(e, start, line);
      }
    }
  }

  private tableItem(table: TableDraft): void {
    const lex = this.lex;
    if (lex.kind !== WORD) fail(lex, `unexpected "${lex.value()}" in table`);
    const t = this.mark();
    const w = lex.value();
    lex.next();
    switch (w) {
      case 'comment':
        table.comment = expectString(lex);
        return;
      case 'flags':
        table.flags = this.wordList();
        return;
      case 'chain': {
        const name = expectName(lex);
        this.noteItemRedeclared(t, 'chain', table, name);
        const chain = this.builder.chain(table, name);
        if (lex.isPunct(LBRACE)) this.chainBody(chain, table.family);
        return;
      }
      case 'set':
      case 'map': {
        const name = expectName(lex);
        this.noteItemRedeclared(t, 'set', table, name);
        this.setBody(this.builder.set(table, name, w));
        return;
      }
      case 'counter':
        this.counterDecl(table);
        return;
      case 'ct':
        this.rawObject(table, t, `ct ${expectWord(lex)}`);
        return;
      default:
        if (RAW_OBJECTS.has(w)) {
          this.rawObject(table, t, w);
          return;
        }
        throw new Unparsed(`unknown table item "${w}"`, tokenAt(t, 'word', w));
    }
  }

  /** `a,b,c` after `flags`. */
  private wordList(): string[] {
    const out = [expectWord(this.lex)];
    while (this.lex.isPunct(COMMA)) {
      this.lex.next();
      out.push(expectWord(this.lex));
    }
    return out;
  }

  private ruleContext(family: NftFamily): RuleContext {
    let ctx = this.contexts.get(family);
    if (ctx === undefined) {
      ctx = { family, origin: this.origin, diagnostics: this.diagnostics };
      this.contexts.set(family, ctx);
    }
    return ctx;
  }

  private chainBody(chain: ChainDraft, family: NftFamily): void {
    const lex = this.lex;
    const ctx = this.ruleContext(family);
    this.block((atStart) => {
      if (lex.kind === HANDLE) {
        const handle = Number(lex.value());
        lex.next();
        if (atStart) chain.handle = handle;
        return;
      }
      if (lex.kind === WORD) {
        if (lex.is('type')) return this.baseChainDecl(chain, family);
        if (lex.is('policy')) {
          const t = lex.token();
          lex.next();
          const policy = expectWord(lex);
          if (!chain.base || (policy !== 'accept' && policy !== 'drop')) throw new Unparsed(`bad policy "${policy}"`, t);
          chain.base = { ...chain.base, policy };
          return;
        }
        if (lex.is('comment')) {
          lex.next();
          chain.comment = expectString(lex);
          return;
        }
        if (lex.is('flags')) {
          this.report('info', this.mark(), 'not-modelled', 'chain flags are not modelled');
          lex.next();
          this.wordList();
          return;
        }
      }
      const at = this.mark();
      const rule = readRule(lex, ctx);
      if (rule) {
        const big = counterAboveMax(rule.statements);
        if (big) this.report('warning', at, 'counter-overflow', counterAboveMaxMessage(big));
        chain.rules.push(this.builder.rule(rule));
      }
    });
  }

  /** `type T hook H [device D | devices = { … }] priority P` */
  private baseChainDecl(chain: ChainDraft, family: NftFamily): void {
    const lex = this.lex;
    const start = lex.token();
    lex.next();
    const type = expectWord(lex);
    expectWord(lex, 'hook');
    const hook = expectWord(lex);
    if (!isNftChainType(type)) throw new Unparsed(`unknown chain type "${type}"`, start);
    if (!isNftHook(hook)) throw new Unparsed(`unknown hook "${hook}"`, start);
    let devices: string[] | undefined;
    if (lex.is('device')) {
      lex.next();
      devices = [expectName(lex)];
    } else if (lex.is('devices')) {
      lex.next();
      expectWord(lex, '=');
      devices = parseElementList(lex).map((e) => (e.key.kind === 'value' ? String(e.key.value) : ''));
    }
    expectWord(lex, 'priority');
    const words: string[] = [];
    while (!endsRule(lex) && lex.kind === WORD) {
      words.push(lex.value());
      lex.next();
    }
    const priorityText = words.join(' ');
    const priority = resolvePriority(priorityText, family);
    if (priority === undefined) throw new Unparsed(`unknown priority "${priorityText}"`, start);
    chain.base = {
      type,
      hook,
      priority,
      priorityText,
      policy: chain.base?.policy ?? 'accept',
      ...(devices && { devices }),
    };
  }

  private setBody(set: SetDraft): void {
    const lex = this.lex;
    this.block((atStart) => {
      if (lex.kind === HANDLE) {
        const handle = Number(lex.value());
        lex.next();
        if (atStart) set.handle = handle;
        return;
      }
      if (lex.kind !== WORD) fail(lex, `unexpected "${lex.value()}" in set`);
      const t = this.mark();
      const w = lex.value();
      lex.next();
      switch (w) {
        case 'type':
          return this.setType(set, t);
        case 'typeof':
          return this.setTypeof(set, t);
        case 'flags': {
          const { flags, unknown } = normalizeSetFlags(this.wordList());
          set.flags = normalizeSetFlags([...set.flags, ...flags]).flags;
          if (unknown.length) this.report('info', t, 'not-modelled', `set flags not modelled: ${unknown.join(',')}`);
          return;
        }
        case 'timeout':
        case 'gc-interval': {
          const d = this.duration();
          if (w === 'timeout') {
            set.timeout = d;
            // nft prints no `flags timeout` when a default timeout is given; the flag is implied.
            set.flags = normalizeSetFlags([...set.flags, 'timeout']).flags;
          } else set.gcInterval = d;
          return;
        }
        case 'size':
          set.size = expectNumber(lex);
          return;
        case 'policy': {
          const p = expectWord(lex);
          if (p !== 'performance' && p !== 'memory') throw new Unparsed(`unknown set policy "${p}"`, tokenAt(t, 'word', w));
          set.policy = p;
          return;
        }
        case 'counter':
          set.counter = true;
          return;
        case 'comment':
          set.comment = expectString(lex);
          return;
        case 'auto-merge':
          this.report('info', t, 'not-modelled', 'auto-merge is not modelled');
          return;
        case 'elements':
          expectWord(lex, '=');
          appendAll(set.elements, parseElementList(lex));
          return;
        default:
          throw new Unparsed(`unknown set property "${w}"`, tokenAt(t, 'word', w));
      }
    });
  }

  private duration(): number {
    const lex = this.lex;
    const d = lex.kind === WORD ? parseDuration(lex.value()) : undefined;
    if (d === undefined) fail(lex, 'expected a time');
    lex.next();
    return d;
  }

  /** `type K1 . K2 [: V]` */
  private setType(set: SetDraft, start: Mark): void {
    const words: string[] = [];
    while (!endsRule(this.lex)) words.push(expectWord(this.lex));
    const colon = words.indexOf(':');
    const keyText = (colon < 0 ? words : words.slice(0, colon)).join(' ');
    set.keyTypes = splitConcatType(keyText);
    set.type = set.keyTypes.join(' . ');
    if (set.keyTypes.length === 0) throw new Unparsed('set type missing', tokenAt(start, 'word', 'type'));
    if (colon >= 0) set.mapType = splitConcatType(words.slice(colon + 1).join(' ')).join(' . ');
  }

  /** `typeof EXPR [: EXPR]`: key types derived from the expressions where known. */
  private setTypeof(set: SetDraft, start: Mark): void {
    const lex = this.lex;
    const from = lex.start;
    while (!endsRule(lex)) lex.next();
    const text = collapseSpaces(lex.text.slice(from, lex.lastEnd));
    const [keyText = '', valueText] = text.split(' : ');
    const keyExprs = typeofExprs(keyText);
    if (!keyExprs) throw new Unparsed(`typeof expression not understood: ${keyText}`, tokenAt(start, 'word', 'typeof'));
    set.typeof = text;
    set.keyTypes = keyExprs.map((e, i) => exprType(e) ?? keyText.split(' . ')[i] ?? '');
    set.type = set.keyTypes.join(' . ');
    if (valueText !== undefined) {
      const valueExprs = valueText === 'verdict' ? undefined : typeofExprs(valueText);
      set.mapType = valueExprs ? valueExprs.map((e) => exprType(e) ?? valueText).join(' . ') : valueText;
    }
  }

  /** `counter NAME [{ packets N bytes M ; comment "…" }]` */
  private counterDecl(table: TableDraft): void {
    const lex = this.lex;
    const name = expectName(lex);
    const counter: { name: string; handle?: number; comment?: string; packets: bigint; bytes: bigint } = {
      name,
      packets: 0n,
      bytes: 0n,
    };
    if (lex.isPunct(LBRACE)) {
      this.block((atStart) => {
        if (lex.kind === HANDLE) {
          const handle = Number(lex.value());
          lex.next();
          if (atStart) counter.handle = handle;
        } else if (lex.is('comment')) {
          lex.next();
          counter.comment = expectString(lex);
        } else if (lex.is('packets')) {
          lex.next();
          counter.packets = this.bigint();
          expectWord(lex, 'bytes');
          counter.bytes = this.bigint();
        } else fail(lex, `unknown counter property "${lex.value()}"`);
      });
    }
    table.counters.set(name, counter);
  }

  private bigint(): bigint {
    const lex = this.lex;
    const v = lex.kind === WORD ? parseBigint(lex.value()) : undefined;
    if (v === undefined) fail(lex, 'expected a number');
    lex.next();
    return v;
  }

  /** An object kept as text: `flowtable NAME { … }`, `quota NAME { … }`, `ct helper NAME { … }`. */
  private rawObject(table: TableDraft, start: Mark, kind: string): void {
    const lex = this.lex;
    const name = expectName(lex);
    let handle: number | undefined;
    if (lex.isPunct(LBRACE)) {
      let depth = 0;
      do {
        const k = lex.kind;
        if (k === EOF) {
          lex.next();
          throw new Unparsed('unterminated "{"', tokenAt(start, 'word', kind));
        }
        if (k === HANDLE && depth === 1 && handle === undefined) handle = Number(lex.value());
        if (lex.isPunct(LBRACE)) depth++;
        if (lex.isPunct(RBRACE)) depth--;
        lex.next();
      } while (depth > 0);
    }
    const raw = collapseSpaces(lex.text.slice(start.start, lex.lastEnd).replace(/#\s*handle\s+\d+/g, ''));
    table.objects.push({ kind, name, raw, ...(handle !== undefined && { handle }) });
    if (kind !== 'flowtable') this.report('info', start, 'not-modelled', `${kind} ${name} kept as text`);
  }

  // -------------------------------------------------------------------------------------------
  // nft -f commands

  private command(t: Mark): void {
    this.commandStarts();
    const lex = this.lex;
    const verb = lex.value();
    lex.next();
    const objToken = this.mark();
    switch (verb) {
      case 'add':
      case 'create':
      case 'insert':
      case 'replace':
        this.addCommand(verb, expectWord(lex), objToken);
        break;
      case 'delete':
      case 'destroy':
      case 'flush':
        this.removeCommand(verb, expectWord(lex), t);
        break;
      case 'list':
      case 'reset':
      case 'rename':
      case 'describe':
      case 'monitor':
      case 'export':
      case 'import':
        this.report('info', t, 'not-modelled', `"${verb}" command ignored`);
        this.skipItem(t.start);
        return;
      default:
        throw new Unparsed(`unknown statement "${verb}"`, tokenAt(t, 'word', verb));
    }
    if (!endsRule(lex) && lex.kind !== HANDLE) throw new Unparsed(`unexpected "${lex.value()}" after command`, lex.token());
  }

  private addCommand(verb: string, obj: string, at: Mark): void {
    const lex = this.lex;
    if (obj === 'table') {
      const table = this.tableRef(false);
      if (lex.isPunct(LBRACE)) this.tableBody(table);
      return;
    }
    if (obj === 'rule') return this.addRule(verb, at);
    if (verb !== 'add' && verb !== 'create') throw new Unparsed(`"${verb} ${obj}" is not a command`, tokenAt(at, 'word', obj));
    const table = this.tableRef(true, at);
    switch (obj) {
      case 'chain': {
        const chain = this.builder.chain(table, expectName(lex));
        if (lex.isPunct(LBRACE)) this.chainBody(chain, table.family);
        return;
      }
      case 'set':
      case 'map':
        this.setBody(this.builder.set(table, expectName(lex), obj));
        return;
      case 'element': {
        const nameToken = this.mark();
        const name = expectName(lex);
        const set = this.existingSet(table, name, nameToken);
        appendAll(set.elements, parseElementList(lex));
        return;
      }
      case 'counter':
        this.counterDecl(table);
        return;
      case 'ct':
        this.rawObject(table, at, `ct ${expectWord(lex)}`);
        return;
      default:
        if (RAW_OBJECTS.has(obj)) return this.rawObject(table, at, obj);
        throw new Unparsed(`unknown object "${obj}"`, tokenAt(at, 'word', obj));
    }
  }

  private existingSet(table: TableDraft, name: string, at: Mark): SetDraft {
    const set = table.sets.get(name);
    if (set) return set;
    this.report('warning', at, 'implicit-set', `set ${name} used before it was added`);
    return this.builder.set(table, name, 'set');
  }

  /** `add|insert|create rule [family] TABLE CHAIN [handle N|index N|position N] STATEMENTS`, `replace rule … handle N …`. */
  private addRule(verb: string, at: Mark): void {
    const lex = this.lex;
    const table = this.tableRef(true, at);
    const chainToken = this.mark();
    const chainName = expectName(lex);
    if (!table.chains.has(chainName)) {
      this.report('warning', chainToken, 'implicit-chain', `chain ${chainName} used before it was added`);
    }
    const chain = this.builder.chain(table, chainName);
    let anchor: { by: 'handle' | 'index'; value: number } | undefined;
    if (lex.is('handle') || lex.is('position') || lex.is('index')) {
      const by = lex.is('index') ? 'index' : 'handle';
      lex.next();
      anchor = { by, value: expectNumber(lex) };
    }
    const ruleAt = this.mark();
    const read = readRule(lex, this.ruleContext(table.family));
    if (!read) throw new Unparsed('rule without statements', tokenAt(chainToken, 'word', chainName));
    const big = counterAboveMax(read.statements);
    if (big) this.report('warning', ruleAt, 'counter-overflow', counterAboveMaxMessage(big));
    this.placeRule(chain, read, verb, anchor, at);
  }

  private placeRule(
    chain: ChainDraft,
    parts: RuleParts,
    verb: string,
    anchor: { by: 'handle' | 'index'; value: number } | undefined,
    at: Mark,
  ): void {
    const rules = chain.rules;
    if (verb === 'replace' && anchor) {
      // The replaced rule's handle stays (`replace rule … handle N` keeps N).
      const old = anchor.by === 'index' ? rules[anchor.value] : rules.find((r) => r.handle === anchor.value);
      if (old?.handle !== undefined) parts = { ...parts, handle: old.handle };
    }
    const rule = this.builder.rule(parts);
    if (!anchor) {
      if (verb === 'insert') rules.unshift(rule);
      else rules.push(rule);
      return;
    }
    const i = anchor.by === 'index' ? anchor.value : rules.findIndex((r) => r.handle === anchor.value);
    if (i < 0 || i >= rules.length) {
      this.report('warning', at, 'no-such-rule', `no rule with ${anchor.by} ${anchor.value}; rule appended`);
      rules.push(rule);
    } else if (verb === 'replace') {
      this.report('info', at, 'command-applied', `rule ${anchor.by} ${anchor.value} replaced`);
      rules[i] = rule;
    } else rules.splice(verb === 'insert' ? i : i + 1, 0, rule);
  }

  /** `delete|destroy|flush …`: applied to what was read so far, noted as info. */
  private removeCommand(verb: string, obj: string, at: Mark): void {
    const lex = this.lex;
    const done = (what: string) => this.report('info', at, 'command-applied', `${verb} ${what}`);
    if (obj === 'ruleset') {
      this.family();
      this.builder.clear();
      return done('ruleset');
    }
    const family = this.family();
    const tableName = expectName(lex);
    const table = this.builder.findTable(family, tableName);
    if (obj === 'table') {
      if (verb === 'flush' && table) {
        for (const c of table.chains.values()) c.rules.length = 0;
        for (const s of table.sets.values()) s.elements.length = 0;
      } else this.builder.deleteTable(family, tableName);
      return done(`table ${family} ${tableName}`);
    }
    const name = expectName(lex);
    const what = `${obj} ${family} ${tableName} ${name}`;
    switch (obj) {
      case 'chain':
        if (verb === 'flush') table?.chains.get(name)?.rules.splice(0);
        else {
          table?.chains.delete(name);
          this.builder.forget();
        }
        return done(what);
      case 'set':
      case 'map':
        if (verb === 'flush') table?.sets.get(name)?.elements.splice(0);
        else table?.sets.delete(name);
        return done(what);
      case 'counter':
        table?.counters.delete(name);
        return done(what);
      case 'rule': {
        expectWord(lex, 'handle');
        const handle = expectNumber(lex);
        const rules = table?.chains.get(name)?.rules;
        const i = rules?.findIndex((r) => r.handle === handle) ?? -1;
        if (rules && i >= 0) rules.splice(i, 1);
        return done(`${what} handle ${handle}`);
      }
      case 'element': {
        const keys = parseElementList(lex).map((e) => keyOf(e.key));
        const set = table?.sets.get(name);
        if (set) set.elements = set.elements.filter((e) => !keys.includes(keyOf(e.key)));
        return done(what);
      }
      default:
        throw new Unparsed(`unknown object "${obj}"`, tokenAt(at, 'word', obj));
    }
  }
}

/** A token at a kept position, for an error pointing at it (only `line` and `start` are read). */
function tokenAt(at: Mark, type: NftToken['type'], value: string): NftToken {
  return { type, value, line: at.line, start: at.start, end: at.start + value.length };
}

/** `target.push(...items)` without the argument-count limit a million-element set would hit. */
function appendAll<T>(target: T[], items: readonly T[]): void {
  for (const item of items) target.push(item);
}

function keyOf(expr: NftExpr): string {
  return JSON.stringify(expr);
}

/** Parses `ip saddr . tcp dport` (a typeof key) into its expressions, or undefined. */
function typeofExprs(text: string): NftExpr[] | undefined {
  try {
    const lex = new NftLexer(text);
    const expr = lex.kind === WORD && /^[a-z]/.test(lex.value()) ? parseExpr(lex) : parseAtom(lex);
    if (lex.kind !== EOF) return undefined;
    return expr.kind === 'concat' ? [...expr.items] : [expr];
  } catch (e) {
    if (e instanceof Unparsed) return undefined;
    throw e;
  }
}
