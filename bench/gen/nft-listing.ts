/**
 * `nft list ruleset` and `nft -j list ruleset` output (nftables 1.0.6) for a node running
 * kube-proxy's nftables mode: the transaction `generateNftablesRules` writes, as the kernel
 * holds it and nft prints it back. Loading a 10,000-Service transaction with the real
 * `nft -f` takes minutes (kernel time), so large captures are emitted here; the lab test
 * `test/lab/gen-formats.test.ts` loads small ones with the real nft and compares.
 *
 * What nft does between the transaction and the listing (nftables 1.0.6 sources):
 * - handles: one counter per table, in transaction order, for every set, map, chain and
 *   rule, and for the anonymous map of a `numgen … vmap { … }` (allocated just before its
 *   rule); elements take none;
 * - listing order: sets and maps, then chains, each in creation order, rules in chain order;
 *   JSON: metainfo, table, sets/maps, chains, then every rule grouped by chain;
 * - elements are sorted (src/mergesort.c): plain values numerically, concatenations by the
 *   components' bytes read as one little-endian number (so by the last byte first);
 * - element lists wrap (src/expression.c `calculate_delim`): 2 addresses a line, a newline
 *   after every concatenation or commented element, one line for anonymous sets;
 * - `mark … or 0x4000` prints as `meta mark set meta mark | 0x00004000`; a one-element
 *   anonymous set `{ 10.96.0.0/12 }` becomes the prefix itself; `reject` is icmp
 *   port-unreachable; base chain priorities use the standard names where nft does;
 * - JSON: jansson compact with `", "`/`": "` separators; the table's and chains' comments
 *   are not printed (nft 1.0.6), rules' and sets' are.
 */
import { generateNftablesRules, type NftablesProxierOptions } from '../../src/analysis/kubeproxy-nftables.js';
import type { KubeProxyInput } from '../../src/analysis/lab-scenario-types.js';
import { ipToInt } from './scenario.js';

type J = null | boolean | number | string | J[] | { readonly [key: string]: J };

/** jansson's `json_dumps` without indent: `{"a": 1, "b": [1, 2]}` (keys in insertion order). */
export function janssonDump(v: J): string {
  if (v === null) return 'null';
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v !== 'object') return String(v);
  if (Array.isArray(v)) return `[${v.map(janssonDump).join(', ')}]`;
  return `{${Object.entries(v).map(([k, x]) => `${JSON.stringify(k)}: ${janssonDump(x)}`).join(', ')}}`;
}

/** One key component of an element: an address, an L4 protocol name, a port or integer. */
type KeyPart = { readonly t: 'ip'; readonly v: string } | { readonly t: 'proto'; readonly v: string } | { readonly t: 'int'; readonly v: number };

interface Elem {
  readonly key: readonly KeyPart[];
  readonly comment?: string;
  readonly verdict?: { readonly kind: string; readonly target: string | null };
}

interface LSet {
  readonly kind: 'set' | 'map';
  readonly name: string;
  readonly type: readonly string[];
  readonly handle: number;
  readonly comment: string | null;
  readonly elems: Elem[];
  readonly keys: Set<string>;
}

interface LRule {
  readonly handle: number;
  readonly text: string;
  readonly expr: J[];
  readonly comment: string | null;
}

interface LChain {
  readonly name: string;
  readonly handle: number;
  readonly base: { readonly type: string; readonly hook: string; readonly prio: number } | null;
  readonly comment: string | null;
  readonly rules: LRule[];
}

const PROTO_NUMBERS: Readonly<Record<string, number>> = { tcp: 6, udp: 17, sctp: 132 };

/** nft 1.0.6 prints these (hook, priority) pairs of kube-proxy's base chains by name. */
function priorityText(hook: string, prio: number): string {
  if (prio === 0) return 'filter';
  if (hook === 'prerouting' && prio === -100) return 'dstnat';
  if (hook === 'prerouting' && prio === -110) return 'dstnat - 10';
  if (hook === 'postrouting' && prio === 100) return 'srcnat';
  return String(prio);
}

// ----- expressions as nft prints them in JSON

const payload = (protocol: string, field: string): J => ({ payload: { protocol, field } });
const meta = (key: string): J => ({ meta: { key } });
const match = (op: string, left: J, right: J): J => ({ match: { op, left, right } });
const verdict = (kind: string, target: string): J => ({ [kind]: { target } });
const prefix = (cidr: string): J => {
  const [addr, len] = cidr.split('/');
  return { prefix: { addr: addr!, len: Number(len) } };
};
const REJECT: J = { reject: { type: 'icmp', expr: 'port-unreachable' } };
const DADDR_PROTO_PORT: J = { concat: [payload('ip', 'daddr'), meta('l4proto'), payload('th', 'dport')] };
const PROTO_PORT: J = { concat: [meta('l4proto'), payload('th', 'dport')] };
const hex8 = (n: number): string => `0x${n.toString(16).padStart(8, '0')}`;

/** A rule body of the transaction → listing text, JSON expressions, and whether nft adds an anonymous map. */
interface Converted {
  readonly text: string;
  readonly expr: J[];
  readonly comment: string | null;
  readonly anonymous: boolean;
}

/**
 * Converts one kube-proxy rule body (the forms `kubeproxy-nftables.ts` writes for
 * ClusterIP/NodePort Services without affinity, firewall or Local policy). Throws `Error`
 * for any other form: this emitter does not guess.
 */
export function convertRule(body: string): Converted {
  let comment: string | null = null;
  const cm = / comment "([^"]*)"$/.exec(body);
  let rest = body;
  if (cm) {
    comment = cm[1]!;
    rest = body.slice(0, cm.index);
  }
  const done = (text: string, expr: J[], anonymous = false): Converted => ({
    text: comment === null ? text : `${text} comment "${comment}"`,
    expr,
    comment,
    anonymous,
  });
  let m: RegExpExecArray | null;
  if ((m = /^ip daddr @(\S+) reject$/.exec(rest))) return done(rest, [match('==', payload('ip', 'daddr'), `@${m[1]}`), REJECT]);
  if ((m = /^ip daddr \{ (\S+\/\d+) \} drop$/.exec(rest))) return done(`ip daddr ${m[1]} drop`, [match('==', payload('ip', 'daddr'), prefix(m[1]!)), { drop: null }]);
  if ((m = /^ct state new (jump|goto) (\S+)$/.exec(rest))) return done(rest, [match('in', { ct: { key: 'state' } }, 'new'), verdict(m[1]!, m[2]!)]);
  if ((m = /^ip daddr \. meta l4proto \. th dport vmap @(\S+)$/.exec(rest))) return done(rest, [{ vmap: { key: DADDR_PROTO_PORT, data: `@${m[1]}` } }]);
  if ((m = /^ip daddr @(\S+) meta l4proto \. th dport vmap @(\S+)$/.exec(rest))) {
    return done(rest, [match('==', payload('ip', 'daddr'), `@${m[1]}`), { vmap: { key: PROTO_PORT, data: `@${m[2]}` } }]);
  }
  if ((m = /^mark set mark (or|xor) (0x[0-9a-f]+)$/.exec(rest))) {
    const n = Number(m[2]);
    const op = m[1] === 'or' ? '|' : '^';
    return done(`meta mark set meta mark ${op} ${hex8(n)}`, [{ mangle: { key: meta('mark'), value: { [op]: [meta('mark'), n] } } }]);
  }
  if ((m = /^mark and (0x[0-9a-f]+) == 0 return$/.exec(rest))) {
    const n = Number(m[1]);
    return done(`meta mark & ${hex8(n)} == ${hex8(0)} return`, [match('==', { '&': [meta('mark'), n] }, 0), { return: null }]);
  }
  if (rest === 'masquerade fully-random') return done(rest, [{ masquerade: { flags: 'fully-random' } }]);
  if (rest === 'reject') return done(rest, [REJECT]);
  if ((m = /^(jump|goto) (\S+)$/.exec(rest))) return done(rest, [verdict(m[1]!, m[2]!)]);
  if ((m = /^ip daddr (\S+) ip saddr != (\S+\/\d+) (jump|goto) (\S+)$/.exec(rest))) {
    return done(rest, [match('==', payload('ip', 'daddr'), m[1]!), match('!=', payload('ip', 'saddr'), prefix(m[2]!)), verdict(m[3]!, m[4]!)]);
  }
  if ((m = /^ip saddr (\d+\.\d+\.\d+\.\d+) (jump|goto) (\S+)$/.exec(rest))) return done(rest, [match('==', payload('ip', 'saddr'), m[1]!), verdict(m[2]!, m[3]!)]);
  if ((m = /^meta l4proto (\w+) dnat to (\d+\.\d+\.\d+\.\d+):(\d+)$/.exec(rest))) {
    return done(rest, [match('==', meta('l4proto'), m[1]!), { dnat: { addr: m[2]!, port: Number(m[3]) } }]);
  }
  if ((m = /^numgen random mod (\d+) vmap \{ (.*) \}$/.exec(rest))) {
    const entries = m[2]!.split(' , ').map((e) => {
      const x = /^(\d+) : (goto|jump) (\S+)$/.exec(e);
      if (!x) throw new Error(`nft emitter: numgen entry ${e}`);
      return { i: Number(x[1]), kind: x[2]!, target: x[3]! };
    });
    const text = `numgen random mod ${m[1]} vmap { ${entries.map((e) => `${e.i} : ${e.kind} ${e.target}`).join(', ')} }`;
    const set: J = { set: entries.map((e) => [e.i, verdict(e.kind, e.target)]) };
    return done(text, [{ vmap: { key: { numgen: { mode: 'random', mod: Number(m[1]), offset: 0 } }, data: set } }], true);
  }
  throw new Error(`nft emitter: unsupported rule form: ${body}`);
}

function parseKeyPart(word: string, type: string): KeyPart {
  if (type === 'ipv4_addr') return { t: 'ip', v: word };
  if (type === 'inet_proto') return { t: 'proto', v: word };
  return { t: 'int', v: Number(word) };
}

/** `{ K [comment "C"] [: VERDICT] , … }` of an `add element` line → elements. */
function parseElements(text: string, set: LSet): Elem[] {
  const inner = text.replace(/^\{ /, '').replace(/ \}$/, '');
  return inner.split(' , ').map((e) => {
    const m = /^(.*?)(?: comment "([^"]*)")?(?: : (goto|jump|drop|accept|return) ?(\S+)?)?$/.exec(e);
    if (!m) throw new Error(`nft emitter: element ${e}`);
    const words = m[1]!.split(' . ');
    if (words.length !== set.type.length) throw new Error(`nft emitter: element ${e} does not fit ${set.type.join(' . ')}`);
    return {
      key: words.map((w, i) => parseKeyPart(w, set.type[i]!)),
      ...(m[2] !== undefined ? { comment: m[2] } : {}),
      ...(m[3] !== undefined ? { verdict: { kind: m[3], target: m[4] ?? null } } : {}),
    };
  });
}

/** The bytes nft sorts by (host order of the concatenated key, little-endian → last byte first). */
function sortKey(key: readonly KeyPart[]): bigint | number {
  if (key.length === 1) {
    const k = key[0]!;
    return k.t === 'ip' ? ipToInt(k.v) : k.t === 'proto' ? PROTO_NUMBERS[k.v]! : k.v;
  }
  const bytes: number[] = [];
  for (const k of key) {
    if (k.t === 'ip') {
      const n = ipToInt(k.v);
      bytes.push(n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255);
    } else if (k.t === 'proto') bytes.push(PROTO_NUMBERS[k.v]!);
    else bytes.push((k.v >>> 8) & 255, k.v & 255);
  }
  let out = 0n;
  for (let i = bytes.length - 1; i >= 0; i--) out = (out << 8n) | BigInt(bytes[i]!);
  return out;
}

function sortElems(elems: readonly Elem[]): Elem[] {
  const keyed = elems.map((e) => ({ e, k: sortKey(e.key) }));
  keyed.sort((a, b) => (a.k < b.k ? -1 : a.k > b.k ? 1 : 0));
  return keyed.map((x) => x.e);
}

function keyText(key: readonly KeyPart[]): string {
  return key.map((k) => String(k.v)).join(' . ');
}

function keyJson(key: readonly KeyPart[]): J {
  const parts = key.map((k) => k.v);
  return parts.length === 1 ? parts[0]! : { concat: parts };
}

function elemText(e: Elem): string {
  const comment = e.comment !== undefined ? ` comment "${e.comment}"` : '';
  const v = e.verdict ? ` : ${e.verdict.kind}${e.verdict.target ? ` ${e.verdict.target}` : ''}` : '';
  return `${keyText(e.key)}${comment}${v}`;
}

function elemJson(e: Elem): J {
  const key = e.comment !== undefined ? { elem: { val: keyJson(e.key), comment: e.comment } } : keyJson(e.key);
  if (!e.verdict) return key;
  return [key, e.verdict.target ? verdict(e.verdict.kind, e.verdict.target) : { [e.verdict.kind]: null }];
}

/** `calculate_delim`: how many elements share a line. */
function perLine(set: LSet, sorted: readonly Elem[]): number {
  if (sorted.some((e) => e.comment !== undefined) || set.type.length > 1) return 1;
  const t = set.type[0];
  if (t === 'ipv4_addr') return 2;
  if (t === 'inet_proto' || t === 'inet_service' || t === 'integer' || t === 'mark') return 5;
  return 1;
}

/** The ruleset of one table as the kernel holds it. */
class Listing {
  private handle = 0;
  readonly sets: LSet[] = [];
  readonly chains: LChain[] = [];
  comment: string | null = null;
  private readonly setsByName = new Map<string, LSet>();
  private readonly chainsByName = new Map<string, LChain>();

  constructor(readonly family: string, readonly table: string) {}

  private next(): number {
    return ++this.handle;
  }

  apply(line: string): void {
    const prefix = `ip ${this.table} `;
    const m = /^add (table|set|map|chain|rule|element) (.*)$/.exec(line);
    if (!m) throw new Error(`nft emitter: line ${line}`);
    const [, kind, rest0] = m;
    if (kind === 'table') {
      const c = /comment "([^"]*)"/.exec(rest0!);
      this.comment = c ? c[1]! : null;
      return;
    }
    if (!rest0!.startsWith(prefix)) throw new Error(`nft emitter: other table in ${line}`);
    const rest = rest0!.slice(prefix.length);
    const sp = rest.indexOf(' ');
    const name = sp === -1 ? rest : rest.slice(0, sp);
    const body = sp === -1 ? '' : rest.slice(sp + 1);
    if (kind === 'set' || kind === 'map') {
      const t = /type ([^;:]+?)(?: : (\w+))? ;/.exec(body);
      const c = /comment "([^"]*)"/.exec(body);
      if (!t) throw new Error(`nft emitter: ${line}`);
      const set: LSet = { kind, name, type: t[1]!.split(' . '), handle: this.next(), comment: c ? c[1]! : null, elems: [], keys: new Set() };
      this.sets.push(set);
      this.setsByName.set(name, set);
    } else if (kind === 'chain') {
      const b = /type (\w+) hook (\w+) priority (-?\d+) ;/.exec(body);
      const c = /comment "([^"]*)"/.exec(body);
      const chain: LChain = { name, handle: this.next(), base: b ? { type: b[1]!, hook: b[2]!, prio: Number(b[3]) } : null, comment: c ? c[1]! : null, rules: [] };
      this.chains.push(chain);
      this.chainsByName.set(name, chain);
    } else if (kind === 'rule') {
      const chain = this.chainsByName.get(name);
      if (!chain) throw new Error(`nft emitter: rule for unknown chain ${name}`);
      const r = convertRule(body);
      if (r.anonymous) this.next();
      chain.rules.push({ handle: this.next(), text: r.text, expr: r.expr, comment: r.comment });
    } else {
      const set = this.setsByName.get(name);
      if (!set) throw new Error(`nft emitter: element of unknown set ${name}`);
      // `add element` of a key the set already holds is a no-op (kube-dns's 3 ports share one ClusterIP).
      for (const e of parseElements(body, set)) {
        const k = keyText(e.key);
        if (set.keys.has(k)) continue;
        set.keys.add(k);
        set.elems.push(e);
      }
    }
  }

  text(): string {
    const blocks: string[] = [];
    for (const s of this.sets) {
      const lines = [`\t${s.kind} ${s.name} {`, `\t\ttype ${s.type.join(' . ')}${s.kind === 'map' ? ' : verdict' : ''}`];
      if (s.comment !== null) lines.push(`\t\tcomment "${s.comment}"`);
      if (s.elems.length > 0) {
        const sorted = sortElems(s.elems);
        const n = perLine(s, sorted);
        const rows: string[] = [];
        for (let i = 0; i < sorted.length; i += n) rows.push(sorted.slice(i, i + n).map(elemText).join(', '));
        lines.push(`\t\telements = { ${rows.join(',\n\t\t\t     ')} }`);
      }
      lines.push('\t}');
      blocks.push(lines.join('\n'));
    }
    for (const c of this.chains) {
      const lines = [`\tchain ${c.name} {`];
      if (c.base) lines.push(`\t\ttype ${c.base.type} hook ${c.base.hook} priority ${priorityText(c.base.hook, c.base.prio)}; policy accept;`);
      if (c.comment !== null) lines.push(`\t\tcomment "${c.comment}"`);
      for (const r of c.rules) lines.push(`\t\t${r.text}`);
      lines.push('\t}');
      blocks.push(lines.join('\n'));
    }
    const head = [`table ${this.family} ${this.table} {`, ...(this.comment !== null ? [`\tcomment "${this.comment}"`] : [])];
    return `${head.join('\n')}\n${blocks.join('\n\n')}\n}\n`;
  }

  /** The JSON objects after metainfo, serialised one by one (a huge ruleset never becomes one JS tree). */
  jsonObjects(): string[] {
    const base = { family: this.family } as const;
    const out: string[] = [janssonDump({ table: { ...base, name: this.table, handle: 0 + 1 } })];
    for (const s of this.sets) {
      const o: Record<string, J> = { ...base, name: s.name, table: this.table, type: s.type.length === 1 ? s.type[0]! : [...s.type], handle: s.handle };
      if (s.comment !== null) o.comment = s.comment;
      if (s.kind === 'map') o.map = 'verdict';
      if (s.elems.length > 0) o.elem = sortElems(s.elems).map(elemJson);
      out.push(janssonDump({ [s.kind]: o }));
    }
    for (const c of this.chains) {
      const o: Record<string, J> = { ...base, table: this.table, name: c.name, handle: c.handle };
      if (c.base) Object.assign(o, { type: c.base.type, hook: c.base.hook, prio: c.base.prio, policy: 'accept' });
      out.push(janssonDump({ chain: o }));
    }
    for (const c of this.chains) {
      for (const r of c.rules) {
        const o: Record<string, J> = { ...base, table: this.table, chain: c.name, handle: r.handle };
        if (r.comment !== null) o.comment = r.comment;
        o.expr = r.expr;
        out.push(janssonDump({ rule: o }));
      }
    }
    return out;
  }
}

/** `nft list ruleset` and `nft -j list ruleset` stdout of one kube-proxy ruleset. */
export interface NftListing {
  readonly text: string;
  readonly json: string;
}

const METAINFO = janssonDump({ metainfo: { version: '1.0.6', release_name: 'Lester Gooch #5', json_schema_version: 1 } });

/**
 * Both listings of the ruleset kube-proxy's nftables mode writes for `input`, as nft 1.0.6
 * prints them (each newline-terminated). Throws `Error` if the generator writes a rule form
 * this emitter does not know (affinity, firewall, Local policy).
 */
export function generateNftListing(input: KubeProxyInput, options: NftablesProxierOptions = {}): NftListing {
  const listing = new Listing('ip', 'kube-proxy');
  for (const line of generateNftablesRules(input, options).split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    listing.apply(line);
  }
  return { text: listing.text(), json: `{"nftables": [${[METAINFO, ...listing.jsonObjects()].join(', ')}]}\n` };
}
