/**
 * The nftables ruleset model: one shape for what `nft -j list ruleset` (libnftables JSON,
 * libnftables-json(5)) and `nft list ruleset` / `nft -f` text (nft(8)) describe.
 *
 * Both parsers (`src/parsers/nft-json.ts`, `src/parsers/nft-text.ts`) produce this model and
 * `src/parsers/nft-format.ts` prints it back as `nft list ruleset` text. Values are normalised
 * so that the JSON and the text of one ruleset give equal models: integers (ports, marks,
 * `0x00004000`) are numbers, everything symbolic (addresses, `tcp`, `established`, interface
 * names) is a string without quotes, `meta mark` and the bare `mark` of `nft -f` input are the
 * same `meta` expression. Holds for nft 0.9.x–1.1.x output.
 *
 * Provenance fields: `raw` (rule text as read, or as printed for JSON input) and `handle`
 * (present only when the source printed it: JSON always, text with `nft -a`).
 */

/** Address family of a table (nft(8) "ADDRESS FAMILIES"). */
export type NftFamily = 'ip' | 'ip6' | 'inet' | 'arp' | 'bridge' | 'netdev';

/** Netfilter hook a base chain is attached to (nft(8) "BASE CHAINS"). */
export type NftHook = 'prerouting' | 'input' | 'forward' | 'output' | 'postrouting' | 'ingress' | 'egress';

/** Base chain type (nft(8) "CHAINS", table "Supported chain types"). */
export type NftChainType = 'filter' | 'nat' | 'route';

/** Base chain default verdict. */
export type NftPolicy = 'accept' | 'drop';

/** All families, in nft's own order of `list ruleset`. */
export const NFT_FAMILIES: readonly NftFamily[] = ['ip', 'ip6', 'inet', 'arp', 'bridge', 'netdev'];

/**
 * Hooks in the order a packet meets them: ingress first, then the IP hooks along the
 * forward and local paths, egress last. Used by {@link chainsByHook}.
 */
export const NFT_HOOK_ORDER: readonly NftHook[] = [
  'ingress',
  'prerouting',
  'input',
  'forward',
  'output',
  'postrouting',
  'egress',
];

/** Packet and byte counters, as the kernel counts them (packets, bytes). */
export interface NftCounters {
  readonly packets: bigint;
  readonly bytes: bigint;
}

// ---------------------------------------------------------------------------------------------
// Expressions

/** A constant: integers as numbers, symbols/addresses/names as unquoted strings. */
export interface NftValueExpr {
  readonly kind: 'value';
  readonly value: string | number | boolean;
}

/** Packet header field by name: `ip saddr`, `tcp dport`, `th dport`, `ether type`. */
export interface NftPayloadExpr {
  readonly kind: 'payload';
  /** Header name: `ip`, `ip6`, `tcp`, `udp`, `th`, `ether`, `icmp`, … */
  readonly protocol: string;
  /** Field name: `saddr`, `daddr`, `dport`, `protocol`, … */
  readonly field: string;
}

/** Packet meta data: `meta l4proto`, `meta mark`, `iifname`, `meta nfproto`. */
export interface NftMetaExpr {
  readonly kind: 'meta';
  readonly key: string;
}

/** Conntrack data: `ct state`, `ct status`, `ct mark`, `ct original ip saddr`. */
export interface NftCtExpr {
  readonly kind: 'ct';
  /** `state`, `status`, `mark`, `direction`, `ip saddr`, `proto-dst`, … */
  readonly key: string;
  readonly dir?: 'original' | 'reply';
}

/** FIB lookup: `fib daddr type` → `{flags: ['daddr'], result: 'type'}`. */
export interface NftFibExpr {
  readonly kind: 'fib';
  readonly result: string;
  readonly flags: readonly string[];
}

/** Number generator: `numgen random mod N offset K` yields K … K+N-1. */
export interface NftNumgenExpr {
  readonly kind: 'numgen';
  readonly mode: 'random' | 'inc';
  readonly mod: number;
  readonly offset: number;
}

/** Concatenation `a . b . c` (keys of `service-ips`). */
export interface NftConcatExpr {
  readonly kind: 'concat';
  readonly items: readonly NftExpr[];
}

/** Bitwise operation `left & right` (e.g. `meta mark & 0x00004000`). */
export interface NftBinopExpr {
  readonly kind: 'binop';
  readonly op: '&' | '|' | '^' | '<<' | '>>';
  readonly left: NftExpr;
  readonly right: NftExpr;
}

/** Address prefix `10.0.0.0/8`. */
export interface NftPrefixExpr {
  readonly kind: 'prefix';
  readonly addr: string;
  readonly len: number;
}

/** Inclusive range `1000-2000`, `192.168.1.1-192.168.1.9`. */
export interface NftRangeExpr {
  readonly kind: 'range';
  readonly from: NftExpr;
  readonly to: NftExpr;
}

/** Comma list without braces: `ct state established,related` (JSON: a plain array). */
export interface NftListExpr {
  readonly kind: 'list';
  readonly items: readonly NftExpr[];
}

/** Anonymous set literal `{ a, b }`; for inline maps/vmaps the elements carry values. */
export interface NftSetLiteralExpr {
  readonly kind: 'set';
  readonly elements: readonly NftElement[];
}

/** Reference to a named set or map: `@service-ips`. */
export interface NftSetRefExpr {
  readonly kind: 'setref';
  readonly name: string;
}

/** Map lookup yielding data: `numgen random mod 2 map { 0 : 10.0.0.1, 1 : 10.0.0.2 }`. */
export interface NftMapExpr {
  readonly kind: 'map';
  readonly key: NftExpr;
  /** A {@link NftSetLiteralExpr} with valued elements, or a {@link NftSetRefExpr}. */
  readonly data: NftExpr;
}

/** Verdict kinds; `jump`/`goto` carry a target chain. */
export type NftVerdictKind = 'accept' | 'drop' | 'continue' | 'return' | 'jump' | 'goto';

/** A verdict, as statement or as the value of a verdict-map element. */
export interface NftVerdict {
  readonly kind: 'verdict';
  readonly verdict: NftVerdictKind;
  /** Target chain of `jump`/`goto`. */
  readonly target?: string;
}

/** An expression this model does not understand; `raw` is its text (or JSON). */
export interface NftUnknownExpr {
  readonly kind: 'unknown';
  readonly raw: string;
}

/** Any expression (left or right side of a match, map keys and data, NAT targets). */
export type NftExpr =
  | NftValueExpr
  | NftPayloadExpr
  | NftMetaExpr
  | NftCtExpr
  | NftFibExpr
  | NftNumgenExpr
  | NftConcatExpr
  | NftBinopExpr
  | NftPrefixExpr
  | NftRangeExpr
  | NftListExpr
  | NftSetLiteralExpr
  | NftSetRefExpr
  | NftMapExpr
  | NftVerdict
  | NftUnknownExpr;

// ---------------------------------------------------------------------------------------------
// Statements

/**
 * Relational operators. `in` is nft's flag test (`ct state new`, `tcp flags syn`: LHS has
 * any of the RHS bits); set membership (`ip daddr @cluster-ips`) is `==` with a set RHS.
 */
export type NftMatchOp = '==' | '!=' | '<' | '>' | '<=' | '>=' | 'in';

/** `left op right`; e.g. `ip daddr != 10.0.0.0/8`, `meta mark & 0x4000 == 0`. */
export interface NftMatchStmt {
  readonly kind: 'match';
  readonly left: NftExpr;
  readonly op: NftMatchOp;
  readonly right: NftExpr;
}

/** Verdict map lookup `key vmap @name` or `key vmap { k : verdict, … }`. */
export interface NftVmapStmt {
  readonly kind: 'vmap';
  readonly key: NftExpr;
  /** {@link NftSetRefExpr} or {@link NftSetLiteralExpr} whose elements carry verdicts. */
  readonly data: NftExpr;
}

/** `reject [with tcp reset | with icmp|icmpv6|icmpx [type] CODE]`. */
export interface NftRejectStmt {
  readonly kind: 'reject';
  readonly type?: 'tcp reset' | 'icmp' | 'icmpv6' | 'icmpx';
  /** ICMP code name, e.g. `port-unreachable`, `admin-prohibited`. */
  readonly code?: string;
}

/** NAT: `dnat [ip|ip6] to ADDR[:PORT]`, `snat to …`, `masquerade`, `redirect [to :PORT]`. */
export interface NftNatStmt {
  readonly kind: 'nat';
  readonly type: 'dnat' | 'snat' | 'masquerade' | 'redirect';
  /** Address family of `addr` in inet tables (`dnat ip to …`). */
  readonly family?: 'ip' | 'ip6';
  readonly addr?: NftExpr;
  readonly port?: NftExpr;
  /** `random`, `fully-random`, `persistent`. */
  readonly flags: readonly string[];
}

/** `KEY set VALUE`: `meta mark set meta mark | 0x4000`, `ct mark set 0x10`. */
export interface NftMangleStmt {
  readonly kind: 'mangle';
  readonly key: NftExpr;
  readonly value: NftExpr;
}

/** Anonymous counter (`counter packets N bytes M`) or named-counter reference (`counter name X`). */
export interface NftCounterStmt {
  readonly kind: 'counter';
  readonly packets?: bigint;
  readonly bytes?: bigint;
  readonly name?: string;
}

/** `log [prefix "…"] [level L] [group N] …`. */
export interface NftLogStmt {
  readonly kind: 'log';
  readonly prefix?: string;
  readonly level?: string;
  readonly group?: number;
  readonly snaplen?: number;
  readonly queueThreshold?: number;
  readonly flags?: readonly string[];
}

/** `notrack`: skip conntrack for this packet. */
export interface NftNotrackStmt {
  readonly kind: 'notrack';
}

/** `limit rate [over] RATE[ UNIT]/PER [burst N UNIT]`; `unit` is `packets` or a byte unit. */
export interface NftLimitStmt {
  readonly kind: 'limit';
  readonly rate: number;
  /** `packets` or `bytes`/`kbytes`/`mbytes`. */
  readonly unit: string;
  /** `second`, `minute`, `hour`, `day`, `week`. */
  readonly per: string;
  readonly burst?: number;
  readonly burstUnit?: string;
  readonly over: boolean;
}

/** Dynamic set update `update @aff { ip saddr [timeout 5s] }`. */
export interface NftSetUpdateStmt {
  readonly kind: 'set-update';
  readonly op: 'add' | 'update' | 'delete';
  readonly set: string;
  readonly elem: NftExpr;
  /** Element timeout in seconds. */
  readonly timeout?: number;
}

/** An iptables-nft compat expression (`xt match recent`, JSON `{"xt":{…}}`, old `# xt_recent`). */
export interface NftXtStmt {
  readonly kind: 'xt';
  readonly xtType?: 'match' | 'target' | 'watcher';
  readonly name: string;
  readonly raw: string;
}

/** A statement this model does not understand; the rule is kept, `raw` holds its text. */
export interface NftUnknownStmt {
  readonly kind: 'unknown';
  readonly raw: string;
}

/** One statement of a rule, evaluated left to right by the kernel. */
export type NftStatement =
  | NftMatchStmt
  | NftVerdict
  | NftVmapStmt
  | NftRejectStmt
  | NftNatStmt
  | NftMangleStmt
  | NftCounterStmt
  | NftLogStmt
  | NftNotrackStmt
  | NftLimitStmt
  | NftSetUpdateStmt
  | NftXtStmt
  | NftUnknownStmt;

// ---------------------------------------------------------------------------------------------
// Objects

/**
 * One rule. `counters` is set when the rule has an anonymous `counter` statement (0/0 when
 * the input gave no values, as `nft -f` input does). `raw` is the rule as read from text
 * (whitespace runs collapsed, `# handle` dropped), or as the formatter prints it for JSON.
 *
 * Memory (issue 10, `src/parsers/nft-share.ts`): when `raw` is exactly the formatter's text
 * (every JSON rule, text rules as nft prints them) it is an own enumerable getter that
 * prints it on each read (spread, `Object.keys`, `JSON.stringify` and deep equality see it
 * as before); equal statements and expressions of different rules are one frozen object.
 * The model is immutable: never write into a rule, statement or expression.
 */
export interface NftRule {
  readonly handle?: number;
  readonly comment?: string;
  readonly counters?: NftCounters;
  readonly statements: readonly NftStatement[];
  readonly raw: string;
}

/** Base-chain attachment: `type nat hook prerouting priority dstnat; policy accept;`. */
export interface NftBaseChain {
  readonly type: NftChainType;
  readonly hook: NftHook;
  /** Numeric priority; lower runs first. */
  readonly priority: number;
  /** Priority as printed: `dstnat`, `dstnat - 10`, `-110` (derived from the number for JSON). */
  readonly priorityText: string;
  readonly policy: NftPolicy;
  /** Bound interface(s) of netdev/ingress chains. */
  readonly devices?: readonly string[];
}

/** A chain; `base` is present for base chains. */
export interface NftChain {
  readonly name: string;
  readonly handle?: number;
  readonly comment?: string;
  readonly base?: NftBaseChain;
  readonly rules: readonly NftRule[];
}

/** Set flags (nft(8) "SETS"); nft 1.0.6 JSON omits `dynamic`. */
export type NftSetFlag = 'constant' | 'interval' | 'timeout' | 'dynamic';

/** A set/map element: key, optional map value, and per-element extras. */
export interface NftElement {
  /** A value, concatenation, prefix or range. */
  readonly key: NftExpr;
  /** Map data: a verdict for vmaps, a value for data maps. */
  readonly value?: NftExpr;
  readonly comment?: string;
  /** Element timeout, seconds. */
  readonly timeout?: number;
  /** Time left, seconds (JSON prints whole seconds, text milliseconds). */
  readonly expires?: number;
  readonly counters?: NftCounters;
}

/** A named set (`kind: 'set'`) or map (`kind: 'map'`, with `mapType`). */
export interface NftSet {
  readonly kind: 'set' | 'map';
  readonly name: string;
  readonly handle?: number;
  readonly comment?: string;
  /** Key type as nft prints it: `ipv4_addr . inet_proto . inet_service`. */
  readonly type: string;
  /** Key type per concatenated field: `['ipv4_addr', 'inet_proto', 'inet_service']`. */
  readonly keyTypes: readonly string[];
  /** The `typeof` expression text when the set was declared by `typeof` (text only). */
  readonly typeof?: string;
  /** Value type of a map: `verdict`, `ipv4_addr`, `mark`, `ipv4_addr . inet_service`. */
  readonly mapType?: string;
  readonly flags: readonly NftSetFlag[];
  /** Default element timeout, seconds. */
  readonly timeout?: number;
  /** Garbage-collection interval, seconds. */
  readonly gcInterval?: number;
  readonly size?: number;
  readonly policy?: 'performance' | 'memory';
  /** Elements carry counters (`counter` line; JSON `"stmt": [{"counter": null}]`). */
  readonly counter?: boolean;
  readonly elements: readonly NftElement[];
}

/** A named counter object `counter NAME { packets N bytes M }`. */
export interface NftNamedCounter {
  readonly name: string;
  readonly handle?: number;
  readonly comment?: string;
  readonly packets: bigint;
  readonly bytes: bigint;
}

/** A stateful object kept as text (flowtable, quota, limit, ct helper, …). */
export interface NftRawObject {
  /** `flowtable`, `quota`, `limit`, `ct helper`, … */
  readonly kind: string;
  readonly name: string;
  readonly handle?: number;
  /** The object's text block, or its JSON for JSON input. */
  readonly raw: string;
}

/**
 * A table. A table with an empty `name` holds chains read outside any `table` block (a
 * `nft list` fragment); the formatter prints those at top level again.
 */
export interface NftTable {
  readonly family: NftFamily;
  readonly name: string;
  readonly handle?: number;
  readonly comment?: string;
  /** `dormant`, `owner`, `persist`. */
  readonly flags?: readonly string[];
  readonly chains: readonly NftChain[];
  readonly sets: readonly NftSet[];
  readonly counters: readonly NftNamedCounter[];
  readonly objects: readonly NftRawObject[];
}

/**
 * What `nft -j` says about itself in its leading `metainfo` object (nft 0.9.1+): the nft
 * `version`, its `releaseName`, and `jsonSchemaVersion` (1 so far; libnftables-json(5)).
 */
export interface NftMetainfo {
  readonly version?: string;
  readonly releaseName?: string;
  readonly jsonSchemaVersion?: number;
}

/** A whole ruleset, tables in input order. */
export interface NftRuleset {
  readonly tables: readonly NftTable[];
}

/** Whether `s` is a {@link NftFamily}. */
export function isNftFamily(s: string): s is NftFamily {
  return (NFT_FAMILIES as readonly string[]).includes(s);
}

/** Whether `s` is a {@link NftHook}. */
export function isNftHook(s: string): s is NftHook {
  return (NFT_HOOK_ORDER as readonly string[]).includes(s);
}

/** Whether `s` is a {@link NftChainType}. */
export function isNftChainType(s: string): s is NftChainType {
  return s === 'filter' || s === 'nat' || s === 'route';
}

/**
 * A rule's counters: those of its first anonymous `counter` statement (0/0 when the
 * statement carries no values, as in `nft -f` input); undefined without one. Named-counter
 * references (`counter name "x"`) are not the rule's own.
 */
export function ruleCounters(statements: readonly NftStatement[]): NftCounters | undefined {
  for (const s of statements) {
    if (s.kind === 'counter' && s.name === undefined) return { packets: s.packets ?? 0n, bytes: s.bytes ?? 0n };
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Lookups

interface TableIndex {
  readonly chains: Map<string, NftChain>;
  readonly sets: Map<string, NftSet>;
}

// Built on first lookup; the model is treated as immutable once parsed.
const tableIndexes = new WeakMap<NftTable, TableIndex>();

function indexOf(table: NftTable): TableIndex {
  let index = tableIndexes.get(table);
  if (!index) {
    index = {
      chains: new Map(table.chains.map((c) => [c.name, c])),
      sets: new Map(table.sets.map((s) => [s.name, s])),
    };
    tableIndexes.set(table, index);
  }
  return index;
}

/** The table `family name`, or undefined. */
export function findTable(ruleset: NftRuleset, family: NftFamily, name: string): NftTable | undefined {
  return ruleset.tables.find((t) => t.family === family && t.name === name);
}

/** The chain named `name` in `table` (O(1) after the first call), or undefined. */
export function findChain(table: NftTable, name: string): NftChain | undefined {
  return indexOf(table).chains.get(name);
}

/** The set or map named `name` (a leading `@` is accepted), or undefined. */
export function findSet(table: NftTable, name: string): NftSet | undefined {
  return indexOf(table).sets.get(name.startsWith('@') ? name.slice(1) : name);
}

/** The map named `name` (a leading `@` is accepted); undefined when absent or a plain set. */
export function findMap(table: NftTable, name: string): NftSet | undefined {
  const set = findSet(table, name);
  return set?.kind === 'map' ? set : undefined;
}

/** A base chain with the table it lives in, as listed by {@link chainsByHook}. */
export interface NftHookedChain {
  readonly table: NftTable;
  readonly chain: NftChain;
  readonly base: NftBaseChain;
}

/**
 * Base chains ordered by hook ({@link NFT_HOOK_ORDER}) then priority (lower first); ties
 * keep ruleset order, as the kernel does for equal priorities registered in that order.
 * `filter` narrows to one hook and/or some families (the step engine asks e.g. for the
 * `prerouting` chains of `ip` and `inet` tables).
 */
export function chainsByHook(
  ruleset: NftRuleset,
  filter: { hook?: NftHook; families?: readonly NftFamily[] } = {},
): NftHookedChain[] {
  const out: NftHookedChain[] = [];
  for (const table of ruleset.tables) {
    if (filter.families && !filter.families.includes(table.family)) continue;
    for (const chain of table.chains) {
      const base = chain.base;
      if (!base || (filter.hook && base.hook !== filter.hook)) continue;
      out.push({ table, chain, base });
    }
  }
  // Array.prototype.sort is stable, so equal priorities keep ruleset order.
  return out.sort(
    (a, b) =>
      NFT_HOOK_ORDER.indexOf(a.base.hook) - NFT_HOOK_ORDER.indexOf(b.base.hook) ||
      a.base.priority - b.base.priority,
  );
}

/** Number of rules in the ruleset (all tables and chains). */
export function countRules(ruleset: NftRuleset): number {
  let n = 0;
  for (const t of ruleset.tables) for (const c of t.chains) n += c.rules.length;
  return n;
}
