/**
 * The walk of parsed `nft -j` items (libnftables-json(5) "RULESET ELEMENTS") into the
 * ruleset builder, with the diagnostics of {@link parseNftJsonDocument}: used on the
 * one-shot `JSON.parse` tree, on parsed batches of items, and by the direct reader
 * (nft-json-fast.ts) for every item its fast path does not read.
 */
import { counterAboveMax, counterAboveMaxMessage } from './nft-types.js';
import { diagnostic, type Diagnostic } from '../model/diagnostics.js';
import {
  isNftChainType,
  isNftFamily,
  isNftHook,
  type NftElement,
  type NftFamily,
  type NftMetainfo,
  type NftStatement,
} from '../model/nftables.js';
import { normalizeSetFlags, RulesetBuilder, type TableDraft } from './nft-builder.js';
import {
  bigintOf,
  elementOf,
  isObject,
  JsonShapeError,
  num,
  optNum,
  optStr,
  singleKey,
  statementOf,
  str,
  stringList,
  unknownsMadeCount,
} from './nft-json-expr.js';
import { priorityText } from './nft-priority.js';

type JsonObject = Record<string, unknown>;

const RAW_OBJECTS: ReadonlySet<string> = new Set([
  'flowtable', 'quota', 'limit', 'ct helper', 'ct timeout', 'ct expectation', 'synproxy', 'secmark', 'tunnel',
]);
const COMMANDS: ReadonlySet<string> = new Set(['delete', 'destroy', 'flush', 'replace', 'list', 'reset', 'rename']);
const TABLE_FLAGS: ReadonlySet<string> = new Set(['dormant', 'owner', 'persist']);

/**
 * Reads parsed items into {@link RulesetBuilder} (`builder`), noting what it skipped or
 * could not read in `diagnostics` (codes: see {@link parseNftJsonDocument}). Never throws
 * on bad input: a malformed item is an error diagnostic and is skipped.
 */
export class JsonWalker {
  readonly builder = new RulesetBuilder();
  readonly diagnostics: Diagnostic[] = [];
  metainfo: NftMetainfo | undefined;

  constructor(private readonly origin: string) {}

  private report(severity: 'error' | 'warning' | 'info', item: unknown, code: string, message: string): void {
    this.diagnostics.push(diagnostic(severity, this.origin, 0, excerpt(item), code, message));
  }

  /** Reads a whole parsed document `{"nftables": [ … ]}` (its metainfo first, wherever it is). */
  walk(doc: unknown): void {
    const items = isObject(doc) ? doc['nftables'] : undefined;
    if (!Array.isArray(items)) {
      this.report('error', doc, 'not-nftables', 'JSON without an "nftables" array: not nft -j output');
      return;
    }
    this.checkMetainfo(items);
    items.forEach((item, i) => this.itemAt(item, i));
  }

  /** Reads item `i` of the `nftables` array. */
  itemAt(item: unknown, i: number): void {
    try {
      this.item(item, `nftables[${i}]`);
    } catch (e) {
      // RangeError: an expression nested deeper than the stack allows.
      if (!(e instanceof JsonShapeError) && !(e instanceof RangeError)) throw e;
      const why = e instanceof RangeError ? 'nested too deep' : (e as Error).message;
      this.report('error', item, 'bad-object', `nftables[${i}]: ${why}`);
    }
  }

  /** Takes `metainfo` from the first such item of `items`; a schema other than 1 is an error diagnostic. */
  checkMetainfo(items: unknown[]): void {
    const meta = items.find((x) => singleKey(x) === 'metainfo') as JsonObject | undefined;
    const m = meta?.['metainfo'];
    if (isObject(m)) {
      const version = typeof m['version'] === 'string' ? m['version'] : undefined;
      const releaseName = typeof m['release_name'] === 'string' ? m['release_name'] : undefined;
      const jsonSchemaVersion = typeof m['json_schema_version'] === 'number' ? m['json_schema_version'] : undefined;
      this.metainfo = {
        ...(version !== undefined && { version }),
        ...(releaseName !== undefined && { releaseName }),
        ...(jsonSchemaVersion !== undefined && { jsonSchemaVersion }),
      };
    }
    const schema = this.metainfo?.jsonSchemaVersion;
    if (schema !== 1) {
      const what = schema === undefined ? 'no metainfo json_schema_version' : `json_schema_version ${schema}`;
      this.report('error', meta ?? items[0], 'schema-version', `${what}: only schema 1 is understood (knftables refuses this output)`);
    }
  }

  private item(item: unknown, path: string): void {
    const key = singleKey(item);
    if (key === undefined || !isObject(item)) {
      this.report('warning', item, 'unknown-object', `${path}: not an object with one key`);
      return;
    }
    const body = item[key];
    if (key === 'metainfo') return;
    if (key === 'add' || key === 'create' || key === 'insert') return this.item(body, `${path}.${key}`);
    if (COMMANDS.has(key)) {
      this.report('info', item, 'not-modelled', `${path}: "${key}" command ignored`);
      return;
    }
    if (!isObject(body)) throw new JsonShapeError(`"${key}" must be an object`);
    switch (key) {
      case 'table':
        return this.table(body);
      case 'chain':
        return this.chain(body, item);
      case 'rule':
        return this.rule(body, item);
      case 'set':
      case 'map':
        return this.set(key, body, item);
      case 'element':
        return this.element(body, item);
      case 'counter':
        return this.counter(body, item);
      default:
        if (RAW_OBJECTS.has(key)) return this.rawObject(key, body, item);
        // A kind newer than nodescope (netavark#1315): kept as JSON on its table when it names one.
        if (typeof body['family'] === 'string' && typeof body['table'] === 'string' && isNftFamily(body['family'])) {
          const table = this.tableOf(body, item);
          const handle = optNum(body, 'handle');
          table.objects.push({ kind: key, name: typeof body['name'] === 'string' ? body['name'] : '', raw: JSON.stringify(body), ...(handle !== undefined && { handle }) });
          this.report('warning', item, 'unknown-object', `${path}: "${key}" objects are not modelled; kept as JSON in table ${body['family']} ${body['table']}`);
          return;
        }
        this.report('warning', item, 'unknown-object', `${path}: "${key}" objects are not modelled; skipped`);
    }
  }

  private family(body: JsonObject): NftFamily {
    const family = str(body, 'family');
    if (!isNftFamily(family)) throw new JsonShapeError(`unknown family "${family}"`);
    return family;
  }

  /** The table an object belongs to; created (and noted) when the listing did not include it. */
  private tableOf(body: JsonObject, item: unknown): TableDraft {
    const family = this.family(body);
    const name = str(body, 'table');
    if (!this.builder.findTable(family, name)) {
      this.report('info', item, 'implicit-table', `table ${family} ${name} not listed; created for its objects`);
    }
    return this.builder.table(family, name);
  }

  private table(body: JsonObject): void {
    const t = this.builder.table(this.family(body), str(body, 'name'));
    const handle = optNum(body, 'handle');
    if (handle !== undefined) t.handle = handle;
    const comment = optStr(body, 'comment');
    if (comment !== undefined) t.comment = comment;
    if (body['flags'] !== undefined) {
      // nft 1.0.6 prints garbage here for some tables (e.g. an object name); keep known flags only.
      const flags = Array.isArray(body['flags']) || typeof body['flags'] === 'string' ? stringList(body['flags'], 'flags') : [];
      const known = flags.filter((f) => TABLE_FLAGS.has(f));
      if (known.length) t.flags = known;
      if (known.length !== flags.length) {
        this.report('info', body, 'not-modelled', `table ${t.name}: unknown table flags ${JSON.stringify(body['flags'])} ignored`);
      }
    }
  }

  private chain(body: JsonObject, item: unknown): void {
    const table = this.tableOf(body, item);
    const chain = this.builder.chain(table, str(body, 'name'));
    const handle = optNum(body, 'handle');
    if (handle !== undefined) chain.handle = handle;
    const comment = optStr(body, 'comment');
    if (comment !== undefined) chain.comment = comment;
    if (body['hook'] === undefined) return;
    const type = str(body, 'type');
    const hook = str(body, 'hook');
    if (!isNftChainType(type)) throw new JsonShapeError(`unknown chain type "${type}"`);
    if (!isNftHook(hook)) throw new JsonShapeError(`unknown hook "${hook}"`);
    const priority = num(body, 'prio');
    const policy = optStr(body, 'policy') ?? 'accept';
    if (policy !== 'accept' && policy !== 'drop') throw new JsonShapeError(`unknown policy "${policy}"`);
    const devices = body['dev'] === undefined ? undefined : stringList(body['dev'], 'dev');
    chain.base = {
      type,
      hook,
      priority,
      priorityText: priorityText(priority, table.family, hook, this.metainfo?.version),
      policy,
      ...(devices && { devices }),
    };
  }

  private rule(body: JsonObject, item: unknown): void {
    const table = this.tableOf(body, item);
    const chainName = str(body, 'chain');
    if (!table.chains.has(chainName)) {
      this.report('warning', item, 'implicit-chain', `rule of chain ${chainName}, which is not listed`);
    }
    const chain = this.builder.chain(table, chainName);
    const exprs = body['expr'];
    if (!Array.isArray(exprs)) throw new JsonShapeError('rule "expr" must be a list');
    const statements = exprs.map((e, i) => this.statement(e, table.family, item, i));
    const big = counterAboveMax(statements);
    if (big) this.report('warning', item, 'counter-overflow', counterAboveMaxMessage(big));
    const handle = optNum(body, 'handle');
    const comment = optStr(body, 'comment');
    // `raw` is what the formatter prints: the builder's rule prints it when read.
    chain.rules.push(this.builder.rule({ statements, ...(handle !== undefined && { handle }), ...(comment !== undefined && { comment }) }));
  }

  private statement(e: unknown, family: NftFamily, item: unknown, i: number): NftStatement {
    try {
      const before = unknownsMadeCount();
      const stmt = statementOf(e, family);
      if (stmt.kind === 'unknown') {
        this.report('warning', item, 'unknown-statement', `expr[${i}] not modelled: ${stmt.raw}`);
      } else if (unknownsMadeCount() !== before) {
        // An unknown expression somewhere inside (every one is made by nft-json-expr's `unknown`).
        this.report('warning', item, 'unknown-statement', `expr[${i}] has an expression not modelled: ${JSON.stringify(e)}`);
      }
      return stmt;
    } catch (err) {
      if (!(err instanceof JsonShapeError)) throw err;
      this.report('error', item, 'bad-object', `expr[${i}]: ${err.message}`);
      return { kind: 'unknown', raw: excerpt(e) };
    }
  }

  private set(kind: 'set' | 'map', body: JsonObject, item: unknown): void {
    const table = this.tableOf(body, item);
    const set = this.builder.set(table, str(body, 'name'), kind);
    set.kind = kind;
    const handle = optNum(body, 'handle');
    if (handle !== undefined) set.handle = handle;
    const comment = optStr(body, 'comment');
    if (comment !== undefined) set.comment = comment;
    set.keyTypes = stringList(body['type'], 'set type');
    set.type = set.keyTypes.join(' . ');
    if (kind === 'map') set.mapType = stringList(body['map'], 'map type').join(' . ');
    const { flags, unknown } = normalizeSetFlags(stringList(body['flags'], 'set flags'));
    if (unknown.length) this.report('info', item, 'not-modelled', `set flags not modelled: ${unknown.join(',')}`);
    const timeout = optNum(body, 'timeout');
    // A default timeout implies the flag (the text parser infers it the same way).
    set.flags = normalizeSetFlags([...flags, ...(timeout !== undefined ? ['timeout'] : [])]).flags;
    if (timeout !== undefined) set.timeout = timeout;
    const gc = optNum(body, 'gc-interval');
    if (gc !== undefined) set.gcInterval = gc;
    const size = optNum(body, 'size');
    if (size !== undefined) set.size = size;
    const policy = optStr(body, 'policy');
    if (policy === 'performance' || policy === 'memory') set.policy = policy;
    const stmts = body['stmt'];
    if (Array.isArray(stmts) && stmts.some((s) => singleKey(s) === 'counter')) set.counter = true;
    this.elements(set.elements, body['elem'], kind === 'map', item);
  }

  private elements(into: NftElement[], elem: unknown, isMap: boolean, item: unknown): void {
    if (elem === undefined) return;
    const list = Array.isArray(elem) && !(isMap && elem.length === 2 && !Array.isArray(elem[0])) ? elem : [elem];
    list.forEach((e, i) => {
      try {
        into.push(elementOf(e, isMap));
      } catch (err) {
        if (!(err instanceof JsonShapeError)) throw err;
        this.report('error', item, 'bad-element', `elem[${i}] ${JSON.stringify(e)}: ${err.message}; element skipped`);
      }
    });
  }

  private element(body: JsonObject, item: unknown): void {
    const table = this.tableOf(body, item);
    const name = str(body, 'name');
    let set = table.sets.get(name);
    if (!set) {
      this.report('warning', item, 'implicit-set', `elements of set ${name}, which is not listed`);
      set = this.builder.set(table, name, 'set');
    }
    this.elements(set.elements, body['elem'], set.kind === 'map', item);
  }

  private counter(body: JsonObject, item: unknown): void {
    const table = this.tableOf(body, item);
    const name = str(body, 'name');
    const handle = optNum(body, 'handle');
    const comment = optStr(body, 'comment');
    table.counters.set(name, {
      name,
      packets: bigintOf(body['packets'] ?? 0),
      bytes: bigintOf(body['bytes'] ?? 0),
      ...(handle !== undefined && { handle }),
      ...(comment !== undefined && { comment }),
    });
  }

  private rawObject(kind: string, body: JsonObject, item: unknown): void {
    const table = this.tableOf(body, item);
    const handle = optNum(body, 'handle');
    table.objects.push({ kind, name: str(body, 'name'), raw: JSON.stringify(body), ...(handle !== undefined && { handle }) });
    if (kind !== 'flowtable') this.report('info', item, 'not-modelled', `${kind} ${str(body, 'name')} kept as JSON`);
  }
}

/** JSON text of a parsed value for a diagnostic; a value too deep to print says so. */
function excerpt(x: unknown): string {
  try {
    return JSON.stringify(x) ?? '';
  } catch {
    return '(nested too deep to print)';
  }
}
