/**
 * libnftables JSON statements and expressions (libnftables-json(5) "STATEMENTS",
 * "EXPRESSIONS") converted to the model. Values are normalised the way the text parser
 * normalises them (see `src/model/nftables.ts`), so both give equal models.
 *
 * A well-formed object of a kind the model does not know becomes `unknown` (raw JSON); a
 * malformed one (wrong property type, missing property) throws {@link JsonShapeError},
 * which the caller turns into an error diagnostic.
 */
import type {
  NftCounters,
  NftElement,
  NftExpr,
  NftFamily,
  NftMatchOp,
  NftStatement,
  NftVerdictKind,
} from '../model/nftables.js';
import { isDefaultBurst, normalizeReject } from './nft-types.js';

/** A JSON value that does not have the shape libnftables-json(5) gives it. */
export class JsonShapeError extends Error {}

type Json = unknown;
type JsonObject = Record<string, Json>;

/** Whether `v` is a plain JSON object. */
export function isObject(v: Json): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The single key of `{ "kind": … }` objects, or undefined. */
export function singleKey(v: Json): string | undefined {
  if (!isObject(v)) return undefined;
  const keys = Object.keys(v);
  return keys.length === 1 ? keys[0] : undefined;
}

/** `v[key]` as a string, or throws. */
export function str(v: JsonObject, key: string): string {
  const x = v[key];
  if (typeof x !== 'string') throw new JsonShapeError(`"${key}" must be a string`);
  return x;
}

/** `v[key]` as a number, or throws. */
export function num(v: JsonObject, key: string): number {
  const x = v[key];
  if (typeof x !== 'number') throw new JsonShapeError(`"${key}" must be a number`);
  return x;
}

/** `v[key]` as a string when present, else undefined; throws on another type. */
export function optStr(v: JsonObject, key: string): string | undefined {
  return v[key] === undefined ? undefined : str(v, key);
}

/** `v[key]` as a number when present, else undefined; throws on another type. */
export function optNum(v: JsonObject, key: string): number | undefined {
  return v[key] === undefined ? undefined : num(v, key);
}

/** A counter value: number, or digit string (large values are quoted before parsing). */
export function bigintOf(x: Json): bigint {
  if (typeof x === 'number' && Number.isInteger(x) && x >= 0) return BigInt(x);
  if (typeof x === 'string' && /^\d+$/.test(x)) return BigInt(x);
  throw new JsonShapeError('counter value must be a non-negative integer');
}

/** `{packets, bytes}` object → counters. */
export function countersOf(x: Json): NftCounters {
  if (!isObject(x)) throw new JsonShapeError('counter must be an object');
  return { packets: bigintOf(x['packets'] ?? 0), bytes: bigintOf(x['bytes'] ?? 0) };
}

/** A string or array of strings (`"flags": "fully-random"` or `["random", "persistent"]`). */
export function stringList(x: Json, what: string): string[] {
  if (x === undefined || x === null) return [];
  if (typeof x === 'string') return [x];
  if (Array.isArray(x) && x.every((s) => typeof s === 'string')) return x as string[];
  throw new JsonShapeError(`${what} must be a string or a list of strings`);
}

const VERDICTS: ReadonlySet<string> = new Set(['accept', 'drop', 'continue', 'return', 'jump', 'goto']);
const BINOPS: ReadonlySet<string> = new Set(['&', '|', '^', '<<', '>>']);
const MATCH_OPS: ReadonlySet<string> = new Set(['==', '!=', '<', '>', '<=', '>=', 'in']);

let unknownsMade = 0;

/**
 * How many `unknown` expressions or statements this module has made so far (a running
 * count): a caller compares it before and after {@link statementOf} to learn whether the
 * statement holds one, without walking the statement.
 */
export function unknownsMadeCount(): number {
  return unknownsMade;
}

function unknown(v: Json): { kind: 'unknown'; raw: string } {
  unknownsMade++;
  return { kind: 'unknown', raw: JSON.stringify(v) };
}

/** Converts an expression. */
export function exprOf(v: Json): NftExpr {
  if (typeof v === 'string') return v.startsWith('@') && v.length > 1 ? { kind: 'setref', name: v.slice(1) } : { kind: 'value', value: v };
  if (typeof v === 'number' || typeof v === 'boolean') return { kind: 'value', value: v };
  if (Array.isArray(v)) return { kind: 'list', items: v.map(exprOf) };
  const key = singleKey(v);
  if (!isObject(v) || key === undefined) throw new JsonShapeError('expression must be a value or an object with one key');
  const body = v[key];
  if (VERDICTS.has(key)) return verdictOf(key, body);
  if (BINOPS.has(key)) {
    if (!Array.isArray(body) || body.length < 2) throw new JsonShapeError(`"${key}" needs two operands or more`);
    // nft 1.1 prints `a | b | c` as one list (`{"|": ["fin", "syn", "rst"]}`, netavark#1303):
    // the same left-to-right chain of two-operand operations nft's own parser builds.
    let expr: NftExpr = { kind: 'binop', op: key as '&', left: exprOf(body[0]), right: exprOf(body[1]) };
    for (const operand of body.slice(2)) expr = { kind: 'binop', op: key as '&', left: expr, right: exprOf(operand) };
    return expr;
  }
  switch (key) {
    case 'payload': {
      const p = objectOf(body, key);
      if (p['protocol'] === undefined) return unknown(v); // raw `@base,offset,len` payload
      return { kind: 'payload', protocol: str(p, 'protocol'), field: str(p, 'field') };
    }
    case 'meta':
      return { kind: 'meta', key: str(objectOf(body, key), 'key') };
    case 'ct': {
      const c = objectOf(body, key);
      const dir = optStr(c, 'dir');
      if (dir !== undefined && dir !== 'original' && dir !== 'reply') throw new JsonShapeError(`bad ct dir "${dir}"`);
      return dir ? { kind: 'ct', key: str(c, 'key'), dir } : { kind: 'ct', key: str(c, 'key') };
    }
    case 'fib': {
      const f = objectOf(body, key);
      return { kind: 'fib', result: str(f, 'result'), flags: stringList(f['flags'], 'fib flags') };
    }
    case 'numgen': {
      const n = objectOf(body, key);
      const mode = str(n, 'mode');
      if (mode !== 'random' && mode !== 'inc') throw new JsonShapeError(`bad numgen mode "${mode}"`);
      return { kind: 'numgen', mode, mod: num(n, 'mod'), offset: optNum(n, 'offset') ?? 0 };
    }
    case 'concat':
      if (!Array.isArray(body)) throw new JsonShapeError('concat must be a list');
      return { kind: 'concat', items: body.map(exprOf) };
    case 'prefix': {
      const p = objectOf(body, key);
      return { kind: 'prefix', addr: str(p, 'addr'), len: num(p, 'len') };
    }
    case 'range':
      if (!Array.isArray(body) || body.length !== 2) throw new JsonShapeError('range needs two values');
      return { kind: 'range', from: exprOf(body[0]), to: exprOf(body[1]) };
    case 'set':
      return { kind: 'set', elements: (Array.isArray(body) ? body : [body]).map((e) => elementOf(e, Array.isArray(e))) };
    case 'map': {
      const m = objectOf(body, key);
      return { kind: 'map', key: exprOf(m['key']), data: exprOf(m['data']) };
    }
    case 'elem':
      return exprOf(objectOf(body, key)['val']);
    default:
      return unknown(v);
  }
}

function objectOf(v: Json, what: string): JsonObject {
  if (!isObject(v)) throw new JsonShapeError(`"${what}" must be an object`);
  return v;
}

function verdictOf(kind: string, body: Json): NftExpr & NftStatement {
  if (kind === 'jump' || kind === 'goto') {
    return { kind: 'verdict', verdict: kind, target: str(objectOf(body, kind), 'target') };
  }
  return { kind: 'verdict', verdict: kind as NftVerdictKind };
}

/**
 * A set element: plain expression, `{"elem": {val, timeout, expires, comment, counter}}`,
 * or for maps a `[key, value]` pair (the `elem` wrapper sits on the key).
 */
export function elementOf(v: Json, isMapping: boolean): NftElement {
  let value: NftExpr | undefined;
  let keyJson = v;
  if (isMapping) {
    if (!Array.isArray(v) || v.length !== 2) throw new JsonShapeError('map element must be a [key, value] pair');
    keyJson = v[0];
    value = exprOf(v[1]);
  }
  const wrapper = singleKey(keyJson) === 'elem' && isObject(keyJson) ? objectOf(keyJson['elem'], 'elem') : undefined;
  const key = exprOf(wrapper ? wrapper['val'] : keyJson);
  if (!wrapper) return value ? { key, value } : { key };
  const comment = optStr(wrapper, 'comment');
  const timeout = optNum(wrapper, 'timeout');
  const expires = optNum(wrapper, 'expires');
  const counters = wrapper['counter'] !== undefined ? countersOf(wrapper['counter']) : undefined;
  return {
    key,
    ...(value && { value }),
    ...(comment !== undefined && { comment }),
    ...(timeout !== undefined && { timeout }),
    ...(expires !== undefined && { expires }),
    ...(counters && { counters }),
  };
}

/** Converts a statement of a rule's `expr` list; `family` is the table's (for `reject` defaults). */
export function statementOf(v: Json, family: NftFamily): NftStatement {
  const key = singleKey(v);
  if (!isObject(v) || key === undefined) throw new JsonShapeError('statement must be an object with one key');
  const body = v[key];
  if (VERDICTS.has(key)) return verdictOf(key, body);
  switch (key) {
    case 'match': {
      const m = objectOf(body, key);
      const op = str(m, 'op');
      if (!MATCH_OPS.has(op)) return unknown(v);
      return { kind: 'match', left: exprOf(m['left']), op: op as NftMatchOp, right: exprOf(m['right']) };
    }
    case 'vmap': {
      const m = objectOf(body, key);
      return { kind: 'vmap', key: exprOf(m['key']), data: exprOf(m['data']) };
    }
    case 'counter':
      if (body === null || body === undefined) return { kind: 'counter' };
      if (typeof body === 'string') return { kind: 'counter', name: body };
      return { kind: 'counter', ...countersOf(body) };
    case 'mangle': {
      // nft < 0.9.3 wrote "left"/"right" here.
      const m = objectOf(body, key);
      return { kind: 'mangle', key: exprOf(m['key'] ?? m['left']), value: exprOf(m['value'] ?? m['right']) };
    }
    case 'dnat':
    case 'snat':
    case 'masquerade':
    case 'redirect':
      return natOf(key, body);
    case 'reject': {
      if (body === null || body === undefined) return normalizeReject({ kind: 'reject' }, family);
      const r = objectOf(body, key);
      const type = optStr(r, 'type');
      const code = r['expr'] === undefined ? undefined : String(r['expr']);
      if (type !== undefined && type !== 'tcp reset' && type !== 'icmp' && type !== 'icmpv6' && type !== 'icmpx') {
        throw new JsonShapeError(`bad reject type "${type}"`);
      }
      return normalizeReject({ kind: 'reject', ...(type && { type }), ...(code !== undefined && { code }) }, family);
    }
    case 'log':
      return logOf(body);
    case 'notrack':
      return { kind: 'notrack' };
    case 'limit':
      return limitOf(body, v);
    case 'set': {
      const s = objectOf(body, key);
      const op = str(s, 'op');
      if (op !== 'add' && op !== 'update' && op !== 'delete') return unknown(v);
      const elem = s['elem'];
      const wrapper = singleKey(elem) === 'elem' && isObject(elem) ? objectOf(elem['elem'], 'elem') : undefined;
      const timeout = wrapper ? optNum(wrapper, 'timeout') : undefined;
      return {
        kind: 'set-update',
        op,
        set: str(s, 'set').replace(/^@/, ''),
        elem: exprOf(wrapper ? wrapper['val'] : elem),
        ...(timeout !== undefined && { timeout }),
      };
    }
    case 'xt': {
      const x = objectOf(body, key);
      const type = optStr(x, 'type');
      const name = str(x, 'name');
      if (type !== undefined && type !== 'match' && type !== 'target' && type !== 'watcher') {
        throw new JsonShapeError(`bad xt type "${type}"`);
      }
      return type
        ? { kind: 'xt', xtType: type, name, raw: `xt ${type} ${name}` }
        : { kind: 'xt', name, raw: `# xt_${name}` };
    }
    default:
      return unknown(v);
  }
}

function natOf(type: 'dnat' | 'snat' | 'masquerade' | 'redirect', body: Json): NftStatement {
  if (body === null || body === undefined) return { kind: 'nat', type, flags: [] };
  const n = objectOf(body, type);
  const family = optStr(n, 'family');
  if (family !== undefined && family !== 'ip' && family !== 'ip6') throw new JsonShapeError(`bad nat family "${family}"`);
  return {
    kind: 'nat',
    type,
    flags: stringList(n['flags'], 'nat flags'),
    ...(family && { family }),
    ...(n['addr'] !== undefined && { addr: exprOf(n['addr']) }),
    ...(n['port'] !== undefined && { port: exprOf(n['port']) }),
  };
}

function logOf(body: Json): NftStatement {
  if (body === null || body === undefined) return { kind: 'log' };
  const l = objectOf(body, 'log');
  const prefix = optStr(l, 'prefix');
  const level = optStr(l, 'level');
  const group = optNum(l, 'group');
  const snaplen = optNum(l, 'snaplen');
  const queueThreshold = optNum(l, 'queue-threshold');
  const flags = l['flags'] === undefined ? undefined : stringList(l['flags'], 'log flags');
  return {
    kind: 'log',
    ...(prefix !== undefined && { prefix }),
    ...(level !== undefined && { level }),
    ...(group !== undefined && { group }),
    ...(snaplen !== undefined && { snaplen }),
    ...(queueThreshold !== undefined && { queueThreshold }),
    ...(flags && { flags }),
  };
}

function limitOf(body: Json, whole: Json): NftStatement {
  if (typeof body === 'string') return unknown(whole); // reference to a named limit
  const l = objectOf(body, 'limit');
  const unit = optStr(l, 'rate_unit') ?? 'packets';
  const burst = optNum(l, 'burst');
  const burstUnit = optStr(l, 'burst_unit');
  const over = l['inv'] === true;
  return {
    kind: 'limit',
    rate: num(l, 'rate'),
    unit,
    per: optStr(l, 'per') ?? 'second',
    over,
    // nft's text leaves the default burst out; drop it here too so both sources agree.
    ...(burst !== undefined && !isDefaultBurst(unit, burst) && { burst }),
    ...(burstUnit !== undefined && unit !== 'packets' && { burstUnit }),
  };
}
