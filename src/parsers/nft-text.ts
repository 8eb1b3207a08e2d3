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
  type NftRule,
  type NftRuleset,
} from '../model/nftables.js';
import { normalizeSetFlags, RulesetBuilder, type ChainDraft, type SetDraft, type TableDraft } from './nft-builder.js';
import { collapseSpaces, NftLexer, type NftToken } from './nft-lexer.js';
import { resolvePriority } from './nft-priority.js';
import {
  expectName,
  expectNumber,
  expectString,
  expectWord,
  isPunct,
  isWord,
  parseAtom,
  parseBigint,
  parseDuration,
  parseElementList,
  parseExpr,
  Unparsed,
} from './nft-text-expr.js';
import { endsRule, readRule, type RuleContext } from './nft-text-rule.js';
import { exprType, splitConcatType } from './nft-types.js';

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
  return { value: parser.builder.finish(), diagnostics: capDiagnostics(parser.diagnostics, origin) };
}

function capDiagnostics(diags: Diagnostic[], origin: string): Diagnostic[] {
  if (diags.length <= MAX_DIAGNOSTICS) return diags;
  const more = diags.length - MAX_DIAGNOSTICS;
  return [
    ...diags.slice(0, MAX_DIAGNOSTICS),
    diagnostic('info', origin, 0, '', 'too-many-diagnostics', `${more} more diagnostics not shown`),
  ];
}

class TextParser {
  readonly builder = new RulesetBuilder();
  readonly diagnostics: Diagnostic[] = [];
  private readonly lex: NftLexer;
  private readonly declared = new Set<string>();
  /** Chains and sets declared, by table (`family name`), then by kind and name: no key string per chain. */
  private readonly declaredItems = new Map<string, { chain: Set<string>; set: Set<string> }>();

  constructor(
    text: string,
    private readonly origin: string,
  ) {
    this.lex = new NftLexer(text);
  }

  run(): void {
    const lex = this.lex;
    for (;;) {
      const t = lex.peek();
      if (t.type === 'eof') {
        for (const s of lex.unterminatedStrings) this.report('error', s, 'unterminated', 'string not closed before end of line');
        return;
      }
      if (t.type === 'nl' || t.type === 'handle' || isPunct(t, ';')) {
        lex.next();
        continue;
      }
      this.guarded(t, () => this.topLevel(t));
    }
  }

  /** Runs one item; on {@link Unparsed}, reports it and skips the rest of the item. */
  private guarded(start: NftToken, item: () => void): void {
    try {
      item();
    } catch (e) {
      if (!(e instanceof Unparsed)) throw e;
      const at = e.token.type === 'eof' ? start : e.token;
      const code = e.message.startsWith('unterminated') ? 'unterminated' : 'syntax';
      this.report('error', at, code, e.message);
      this.skipItem(start);
      // A stray `}` at top level ends no item: step over it so reading goes on.
      if (this.lex.peek() === start) this.lex.next();
    }
  }

  private report(severity: 'error' | 'warning' | 'info', at: NftToken, code: string, message: string): void {
    this.diagnostics.push(diagnostic(severity, this.origin, at.line, this.lex.lineAt(at.start), code, message));
  }

  /** Skips to the end of the item that began at `start`: end of line or `;` outside braces, or the enclosing `}`. */
  private skipItem(start: NftToken): void {
    const lex = this.lex;
    let depth = 0;
    // Braces opened since the item began and not yet closed.
    for (const ch of lex.text.slice(start.start, Math.max(lex.lastEnd, start.start))) {
      if (ch === '{') depth++;
      else if (ch === '}') depth = Math.max(0, depth - 1);
    }
    for (;;) {
      const t = lex.peek();
      if (t.type === 'eof') {
        for (const s of lex.unterminatedStrings) this.report('error', s, 'unterminated', 'string not closed before end of line');
        return;
      }
      if (depth === 0 && (t.type === 'nl' || isPunct(t, ';') || isPunct(t, '}'))) return;
      if (isPunct(t, '{')) depth++;
      if (isPunct(t, '}')) depth--;
      lex.next();
    }
  }

  private topLevel(t: NftToken): void {
    const lex = this.lex;
    if (t.type !== 'word') throw new Unparsed(`unexpected ${t.type === 'string' ? 'string' : `"${t.value}"`}`, t);
    switch (t.value) {
      case 'table': {
        lex.next();
        const table = this.tableRef(false);
        this.noteRedeclared(t, `table ${table.family} ${table.name}`);
        if (isPunct(lex.peek(), '{')) this.tableBody(table);
        return;
      }
      case 'chain':
      case 'set':
      case 'map': {
        // A `nft list chain` fragment or grep output: no table around it.
        this.report('warning', t, 'chain-outside-table', `${t.value} outside a table: kept in a table without name`);
        this.tableItem(this.builder.table('ip', ''));
        return;
      }
      case 'define':
      case 'include':
        this.report('info', t, 'not-modelled', `"${t.value}" is not evaluated`);
        this.skipItem(t);
        return;
      default:
        this.command(t);
    }
  }

  /** {@link noteRedeclared} for a chain or set of `table`. */
  private noteItemRedeclared(at: NftToken, kind: 'chain' | 'set', table: TableDraft, name: string): void {
    const tableKey = `${table.family} ${table.name}`;
    let items = this.declaredItems.get(tableKey);
    if (items === undefined) {
      items = { chain: new Set(), set: new Set() };
      this.declaredItems.set(tableKey, items);
    }
    const names = items[kind];
    if (names.has(name)) this.report('info', at, 'redeclared', `${kind} ${tableKey} ${name} declared again; contents merged`);
    else names.add(name);
  }

  private noteRedeclared(at: NftToken, key: string): void {
    if (this.declared.has(key)) this.report('info', at, 'redeclared', `${key} declared again; contents merged`);
    this.declared.add(key);
  }

  /** `[family] name` of a table; creates it. */
  private tableRef(implicitWarning: boolean, at?: NftToken): TableDraft {
    const family = this.family();
    const nameToken = this.lex.peek();
    const name = expectName(this.lex);
    if (implicitWarning && !this.builder.findTable(family, name)) {
      this.report('warning', at ?? nameToken, 'implicit-table', `table ${family} ${name} used before it was added`);
    }
    return this.builder.table(family, name);
  }

  private family(): NftFamily {
    const t = this.lex.peek();
    if (t.type === 'word' && isNftFamily(t.value)) {
      this.lex.next();
      return t.value;
    }
    return 'ip';
  }

  /** `{ … }` of a table: items until the matching `}`. */
  private tableBody(table: TableDraft): void {
    this.block((t) => {
      if (t.type === 'handle') {
        this.lex.next();
        table.handle = Number(t.value);
        return;
      }
      this.tableItem(table);
    });
  }

  /** Reads `{`, then calls `item` for each item until `}`; reports a missing `}`. */
  private block(item: (t: NftToken) => void): void {
    const lex = this.lex;
    const open = lex.next();
    if (!isPunct(open, '{')) throw new Unparsed('expected "{"', open);
    for (;;) {
      const t = lex.peek();
      if (t.type === 'eof') {
        this.report('error', open, 'unterminated', 'missing "}" before end of input');
        return;
      }
      if (isPunct(t, '}')) {
        lex.next();
        return;
      }
      if (t.type === 'nl' || isPunct(t, ';')) {
        lex.next();
        continue;
      }
      this.guarded(t, () => item(t));
    }
  }

  private tableItem(table: TableDraft): void {
    const lex = this.lex;
    const t = lex.next();
    if (t.type !== 'word') throw new Unparsed(`unexpected "${t.value}" in table`, t);
    switch (t.value) {
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
        if (isPunct(lex.peek(), '{')) this.chainBody(chain, table.family);
        return;
      }
      case 'set':
      case 'map': {
        const name = expectName(lex);
        this.noteItemRedeclared(t, 'set', table, name);
        this.setBody(this.builder.set(table, name, t.value));
        return;
      }
      case 'counter':
        this.counterDecl(table);
        return;
      case 'ct':
        this.rawObject(table, t, `ct ${expectWord(lex)}`);
        return;
      default:
        if (RAW_OBJECTS.has(t.value)) {
          this.rawObject(table, t, t.value);
          return;
        }
        throw new Unparsed(`unknown table item "${t.value}"`, t);
    }
  }

  /** `a,b,c` after `flags`. */
  private wordList(): string[] {
    const out = [expectWord(this.lex)];
    while (isPunct(this.lex.peek(), ',')) {
      this.lex.next();
      out.push(expectWord(this.lex));
    }
    return out;
  }

  private ruleContext(family: NftFamily): RuleContext {
    return { family, origin: this.origin, diagnostics: this.diagnostics };
  }

  private chainBody(chain: ChainDraft, family: NftFamily): void {
    const lex = this.lex;
    let first = true;
    this.block((t) => {
      const atStart = first;
      first = false;
      if (t.type === 'handle') {
        lex.next();
        if (atStart) chain.handle = Number(t.value);
        return;
      }
      if (isWord(t, 'type')) return this.baseChainDecl(chain, family);
      if (isWord(t, 'policy')) {
        lex.next();
        const policy = expectWord(lex);
        if (!chain.base || (policy !== 'accept' && policy !== 'drop')) throw new Unparsed(`bad policy "${policy}"`, t);
        chain.base = { ...chain.base, policy };
        return;
      }
      if (isWord(t, 'comment')) {
        lex.next();
        chain.comment = expectString(lex);
        return;
      }
      if (isWord(t, 'flags')) {
        lex.next();
        this.report('info', t, 'not-modelled', 'chain flags are not modelled');
        this.wordList();
        return;
      }
      const rule = readRule(lex, this.ruleContext(family));
      if (rule) chain.rules.push(this.builder.rule(rule));
    });
  }

  /** `type T hook H [device D | devices = { … }] priority P` */
  private baseChainDecl(chain: ChainDraft, family: NftFamily): void {
    const lex = this.lex;
    const start = lex.next();
    const type = expectWord(lex);
    expectWord(lex, 'hook');
    const hook = expectWord(lex);
    if (!isNftChainType(type)) throw new Unparsed(`unknown chain type "${type}"`, start);
    if (!isNftHook(hook)) throw new Unparsed(`unknown hook "${hook}"`, start);
    let devices: string[] | undefined;
    if (isWord(lex.peek(), 'device')) {
      lex.next();
      devices = [expectName(lex)];
    } else if (isWord(lex.peek(), 'devices')) {
      lex.next();
      expectWord(lex, '=');
      devices = parseElementList(lex).map((e) => (e.key.kind === 'value' ? String(e.key.value) : ''));
    }
    expectWord(lex, 'priority');
    const words: string[] = [];
    while (!endsRule(lex.peek()) && lex.peek().type === 'word') words.push(lex.next().value);
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
    let first = true;
    this.block((t) => {
      const atStart = first;
      first = false;
      lex.next();
      if (t.type === 'handle') {
        if (atStart) set.handle = Number(t.value);
        return;
      }
      if (t.type !== 'word') throw new Unparsed(`unexpected "${t.value}" in set`, t);
      switch (t.value) {
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
          if (t.value === 'timeout') {
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
          if (p !== 'performance' && p !== 'memory') throw new Unparsed(`unknown set policy "${p}"`, t);
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
          throw new Unparsed(`unknown set property "${t.value}"`, t);
      }
    });
  }

  private duration(): number {
    const t = this.lex.next();
    const d = t.type === 'word' ? parseDuration(t.value) : undefined;
    if (d === undefined) throw new Unparsed('expected a time', t);
    return d;
  }

  /** `type K1 . K2 [: V]` */
  private setType(set: SetDraft, start: NftToken): void {
    const words: string[] = [];
    while (!endsRule(this.lex.peek())) words.push(expectWord(this.lex));
    const colon = words.indexOf(':');
    const keyText = (colon < 0 ? words : words.slice(0, colon)).join(' ');
    set.keyTypes = splitConcatType(keyText);
    set.type = set.keyTypes.join(' . ');
    if (set.keyTypes.length === 0) throw new Unparsed('set type missing', start);
    if (colon >= 0) set.mapType = splitConcatType(words.slice(colon + 1).join(' ')).join(' . ');
  }

  /** `typeof EXPR [: EXPR]`: key types derived from the expressions where known. */
  private setTypeof(set: SetDraft, start: NftToken): void {
    const lex = this.lex;
    const from = lex.peek().start;
    while (!endsRule(lex.peek())) lex.next();
    const text = collapseSpaces(lex.text.slice(from, lex.lastEnd));
    const [keyText = '', valueText] = text.split(' : ');
    const keyExprs = typeofExprs(keyText);
    if (!keyExprs) throw new Unparsed(`typeof expression not understood: ${keyText}`, start);
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
    if (isPunct(lex.peek(), '{')) {
      let first = true;
      this.block((t) => {
        const atStart = first;
        first = false;
        lex.next();
        if (t.type === 'handle') {
          if (atStart) counter.handle = Number(t.value);
        } else if (isWord(t, 'comment')) counter.comment = expectString(lex);
        else if (isWord(t, 'packets')) {
          counter.packets = this.bigint();
          expectWord(lex, 'bytes');
          counter.bytes = this.bigint();
        } else throw new Unparsed(`unknown counter property "${t.value}"`, t);
      });
    }
    table.counters.set(name, counter);
  }

  private bigint(): bigint {
    const t = this.lex.next();
    const v = t.type === 'word' ? parseBigint(t.value) : undefined;
    if (v === undefined) throw new Unparsed('expected a number', t);
    return v;
  }

  /** An object kept as text: `flowtable NAME { … }`, `quota NAME { … }`, `ct helper NAME { … }`. */
  private rawObject(table: TableDraft, start: NftToken, kind: string): void {
    const lex = this.lex;
    const name = expectName(lex);
    let handle: number | undefined;
    if (isPunct(lex.peek(), '{')) {
      let depth = 0;
      do {
        const t = lex.next();
        if (t.type === 'eof') throw new Unparsed('unterminated "{"', start);
        if (t.type === 'handle' && depth === 1 && handle === undefined) handle = Number(t.value);
        if (isPunct(t, '{')) depth++;
        if (isPunct(t, '}')) depth--;
      } while (depth > 0);
    }
    const raw = collapseSpaces(lex.text.slice(start.start, lex.lastEnd).replace(/#\s*handle\s+\d+/g, ''));
    table.objects.push({ kind, name, raw, ...(handle !== undefined && { handle }) });
    if (kind !== 'flowtable') this.report('info', start, 'not-modelled', `${kind} ${name} kept as text`);
  }

  // -------------------------------------------------------------------------------------------
  // nft -f commands

  private command(t: NftToken): void {
    const lex = this.lex;
    const verb = lex.next().value;
    const objToken = lex.peek();
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
        this.skipItem(t);
        return;
      default:
        throw new Unparsed(`unknown statement "${verb}"`, t);
    }
    const end = lex.peek();
    if (!endsRule(end) && end.type !== 'handle') throw new Unparsed(`unexpected "${end.value}" after command`, end);
  }

  private addCommand(verb: string, obj: string, at: NftToken): void {
    const lex = this.lex;
    if (obj === 'table') {
      const table = this.tableRef(false);
      if (isPunct(lex.peek(), '{')) this.tableBody(table);
      return;
    }
    if (obj === 'rule') return this.addRule(verb, at);
    if (verb !== 'add' && verb !== 'create') throw new Unparsed(`"${verb} ${obj}" is not a command`, at);
    const table = this.tableRef(true, at);
    switch (obj) {
      case 'chain': {
        const chain = this.builder.chain(table, expectName(lex));
        if (isPunct(lex.peek(), '{')) this.chainBody(chain, table.family);
        return;
      }
      case 'set':
      case 'map':
        this.setBody(this.builder.set(table, expectName(lex), obj));
        return;
      case 'element': {
        const nameToken = lex.peek();
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
        throw new Unparsed(`unknown object "${obj}"`, at);
    }
  }

  private existingSet(table: TableDraft, name: string, at: NftToken): SetDraft {
    const set = table.sets.get(name);
    if (set) return set;
    this.report('warning', at, 'implicit-set', `set ${name} used before it was added`);
    return this.builder.set(table, name, 'set');
  }

  /** `add|insert|create rule [family] TABLE CHAIN [handle N|index N|position N] STATEMENTS`, `replace rule … handle N …`. */
  private addRule(verb: string, at: NftToken): void {
    const lex = this.lex;
    const table = this.tableRef(true, at);
    const chainToken = lex.peek();
    const chainName = expectName(lex);
    if (!table.chains.has(chainName)) {
      this.report('warning', chainToken, 'implicit-chain', `chain ${chainName} used before it was added`);
    }
    const chain = this.builder.chain(table, chainName);
    let anchor: { by: 'handle' | 'index'; value: number } | undefined;
    const p = lex.peek();
    if (isWord(p, 'handle') || isWord(p, 'position') || isWord(p, 'index')) {
      lex.next();
      anchor = { by: p.value === 'index' ? 'index' : 'handle', value: expectNumber(lex) };
    }
    const read = readRule(lex, this.ruleContext(table.family));
    if (!read) throw new Unparsed('rule without statements', chainToken);
    this.placeRule(chain, read, verb, anchor, at);
  }

  private placeRule(
    chain: ChainDraft,
    rule: NftRule,
    verb: string,
    anchor: { by: 'handle' | 'index'; value: number } | undefined,
    at: NftToken,
  ): void {
    const rules = chain.rules;
    if (verb === 'replace' && anchor) {
      // The replaced rule's handle stays (`replace rule … handle N` keeps N).
      const old = anchor.by === 'index' ? rules[anchor.value] : rules.find((r) => r.handle === anchor.value);
      if (old?.handle !== undefined) rule = { ...rule, handle: old.handle };
    }
    rule = this.builder.rule(rule);
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
  private removeCommand(verb: string, obj: string, at: NftToken): void {
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
        throw new Unparsed(`unknown object "${obj}"`, at);
    }
  }
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
    const expr = lex.peek().type === 'word' && /^[a-z]/.test(lex.peek().value) ? parseExpr(lex) : parseAtom(lex);
    if (lex.peek().type !== 'eof') return undefined;
    return expr.kind === 'concat' ? [...expr.items] : [expr];
  } catch (e) {
    if (e instanceof Unparsed) return undefined;
    throw e;
  }
}
