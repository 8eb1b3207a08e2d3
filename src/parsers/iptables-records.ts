/**
 * The objects the iptables-save parser hands out for rules and chains, built to be
 * small: a kube-proxy dump of 25,000 Services has about 800,000 rules and 270,000
 * chains, and each byte per rule is most of a megabyte.
 *
 * - A field whose value is the usual one (`null`, no matches; for chains `builtin:
 *   false`, `policy: null`, `inferred: false`) is not stored in the object: the object
 *   inherits it from a shared prototype. Reading `rule.source` gives the same value
 *   either way; object spread, `Object.keys`, `JSON.stringify` and deep-equality helpers
 *   see only the stored fields — {@link plainIptablesRule} / {@link plainIptablesChain}
 *   (model) give plain copies with every field.
 * - `raw`: nearly every line of a dump is exactly what formatRule() writes for the
 *   parsed rule (iptables-save prints rules in one canonical form), so the rule keeps no
 *   copy of such a line: `raw` is a prototype getter that writes it again. A line the
 *   formatter would write differently is kept as an own flat copy. No rule holds a view
 *   into the dump's text, which would keep all of it alive.
 * - A target whose one option has a value of its own (`-j DNAT --to-destination
 *   10.244.1.5:8080`, one per endpoint) keeps that value in a private slot and builds its
 *   `options` list (an own accessor, so spread and deep equality see it) when first read.
 *
 * Objects are made by constructors, one per prototype and number of stored fields, so V8
 * gives every object exactly the slots it uses. The model is read-only; assigning a
 * field still works (it becomes an own property).
 */

import { plainIptablesChain, plainIptablesRule, type IptablesChain, type IptablesCounters, type IptablesOption, type IptablesPolicy, type IptablesRule } from '../model/iptables.js';
import { PLAIN_FORM } from '../model/plain.js';
import { CHAIN_LINE_FACTS, type ChainLineFacts } from '../model/iptables-facts.js';
import { formatRule, formatsAs } from './iptables-format.js';
import { flatCopy } from '../flat-string.js';
import {
  isCanonicalBracketCounters,
  UNSHARED_OPTIONS,
  type ParsedRuleBody,
  type ParsedTarget,
  type TokenBuffer,
} from './iptables-rule.js';

/** A rule while its table is being parsed: `index` and the target are settled at the end. */
export type MutableRule = { -readonly [K in keyof IptablesRule]: IptablesRule[K] } & { target: ParsedTarget | null };

/** A chain as handed out: `rules` is filled by the parser. */
export type MutableChain = { -readonly [K in keyof IptablesChain]: IptablesChain[K] };

const NO_MATCHES: IptablesRule['matches'] = [];

/** The values a rule has when its text gives no such part. Writable: see the module comment. */
const RULE_DEFAULTS = {
  counters: null,
  source: null,
  destination: null,
  inInterface: null,
  outInterface: null,
  protocol: null,
  fragment: null,
  matches: NO_MATCHES,
  target: null,
  comment: null,
};

/**
 * Methods every rule record inherits, not enumerable (spread and `Object.keys` do not
 * list them): its plain copy for `toPlain` (src/model/plain.ts) and for `JSON.stringify`,
 * which would otherwise see only the stored fields.
 */
function plainFormMethods(plain: (this: never) => object): PropertyDescriptorMap {
  return { [PLAIN_FORM]: { value: plain }, toJSON: { value: plain } };
}
Object.defineProperties(RULE_DEFAULTS, plainFormMethods(function (this: IptablesRule) {
  return plainIptablesRule(this);
} as (this: never) => object));

function rawAccessor(get: (this: IptablesRule) => string): PropertyDescriptor {
  return {
    get,
    // Assigning gives the rule its own `raw`, as for a plain object.
    set(this: IptablesRule, value: string): void {
      Object.defineProperty(this, 'raw', { value, writable: true, enumerable: true, configurable: true });
    },
    enumerable: true, // `for…in` lists it, as it lists the inherited defaults
    configurable: true,
  };
}

/** Rules whose line is `formatRule(rule)`. */
const PLAIN_LINE = Object.create(RULE_DEFAULTS, {
  raw: rawAccessor(function (this: IptablesRule): string {
    return formatRule(this);
  }),
}) as object;

/** Rules whose line is `[packets:bytes] ` + `formatRule(rule)`. */
const COUNTED_LINE = Object.create(RULE_DEFAULTS, {
  raw: rawAccessor(function (this: IptablesRule): string {
    const c = this.counters!;
    return `[${c.packets}:${c.bytes}] ${formatRule(this)}`;
  }),
}) as object;

/** Rules whose line is `formatRule(rule)` with `-c packets bytes` (`iptables -S -v`). */
const INLINE_COUNTED_LINE = Object.create(RULE_DEFAULTS, {
  raw: rawAccessor(function (this: IptablesRule): string {
    return formatRule(this, this.chain, this.counters);
  }),
}) as object;

/** Rules that keep their line as an own `raw`. */
const OWN_LINE = Object.create(RULE_DEFAULTS) as object;

type RuleConstructor = new (chain: string, line: number, raw: string | null, body: ParsedRuleBody) => MutableRule;

/** The constructors of each prototype, by number of stored fields. */
const PLAIN_LINE_RULES: RuleConstructor[] = [];
const COUNTED_LINE_RULES: RuleConstructor[] = [];
const INLINE_COUNTED_LINE_RULES: RuleConstructor[] = [];
const OWN_LINE_RULES: RuleConstructor[] = [];

/** A constructor for rules of prototype `proto` (each constructor learns one object size). */
function newRuleConstructor(proto: object): RuleConstructor {
  const RuleRecord = function (this: MutableRule, chain: string, line: number, raw: string | null, b: ParsedRuleBody): void {
    this.chain = chain;
    this.index = 0;
    this.line = line;
    if (raw !== null) this.raw = raw;
    if (b.counters !== null) this.counters = b.counters;
    if (b.source !== null) this.source = b.source;
    if (b.destination !== null) this.destination = b.destination;
    if (b.inInterface !== null) this.inInterface = b.inInterface;
    if (b.outInterface !== null) this.outInterface = b.outInterface;
    if (b.protocol !== null) this.protocol = b.protocol;
    if (b.fragment !== null) this.fragment = b.fragment;
    if (b.matches.length > 0) this.matches = b.matches;
    if (b.target !== null) this.target = b.target;
    if (b.comment !== null) this.comment = b.comment;
  };
  RuleRecord.prototype = proto;
  return RuleRecord as unknown as RuleConstructor;
}

/** How many fields of `b` differ from {@link RULE_DEFAULTS}. */
function storedFields(b: ParsedRuleBody): number {
  let n = 0;
  if (b.counters !== null) n++;
  if (b.source !== null) n++;
  if (b.destination !== null) n++;
  if (b.inInterface !== null) n++;
  if (b.outInterface !== null) n++;
  if (b.protocol !== null) n++;
  if (b.fragment !== null) n++;
  if (b.matches.length > 0) n++;
  if (b.target !== null) n++;
  if (b.comment !== null) n++;
  return n;
}

/**
 * A rule of chain `chain` read from source line `lineNo` whose text is `line` (without
 * a line break) and words `words`, with the fields of `body` (copied; `body` may be
 * reused). `counterText` is the `[p:b]` word the line starts with, or null. `index` is 0
 * until set.
 */
export function makeRule(
  chain: string,
  lineNo: number,
  line: string,
  counterText: string | null,
  body: ParsedRuleBody,
  words: TokenBuffer,
): MutableRule {
  let proto: object = OWN_LINE;
  let constructors = OWN_LINE_RULES;
  if (counterText !== null) {
    // iptables-save writes the counters without leading zeros.
    if (isCanonicalBracketCounters(counterText) && formatsAs(body, chain, null, words, 1)) {
      proto = COUNTED_LINE;
      constructors = COUNTED_LINE_RULES;
    }
  } else if (body.counters === null) {
    if (formatsAs(body, chain, null, words, 0)) {
      proto = PLAIN_LINE;
      constructors = PLAIN_LINE_RULES;
    }
  } else if (formatsAs(body, chain, body.counters, words, 0)) {
    proto = INLINE_COUNTED_LINE;
    constructors = INLINE_COUNTED_LINE_RULES;
  }
  const own = proto === OWN_LINE;
  const target = body.target;
  if (target !== null && target.options.length === 1) body.target = lazyTarget(target);
  const fields = storedFields(body) + (own ? 1 : 0);
  const Rule = (constructors[fields] ??= newRuleConstructor(proto));
  return new Rule(chain, lineNo, own ? flatCopy(line) : null, body);
}

/** Lets a constructor of a subclass add private fields to any object (`return o`). */
class Stamp {
  constructor(o: object) {
    return o;
  }
}

/** The private slots of a target made by {@link lazyTarget}. */
class LazyOption extends Stamp {
  #name: string;
  #value: string | readonly IptablesOption[];

  private constructor(o: object, name: string, value: string) {
    super(o);
    this.#name = name;
    this.#value = value;
  }

  static stamp(o: object, name: string, value: string): void {
    new LazyOption(o, name, value);
  }

  static has(o: object): boolean {
    return #value in o;
  }

  /** The options list, built on first use. */
  static options(o: object): readonly IptablesOption[] {
    const self = o as LazyOption;
    const v = self.#value;
    if (typeof v !== 'string') return v;
    const list = [{ name: self.#name, negated: false, values: [v] }];
    self.#value = list;
    return list;
  }
}

const LAZY_OPTIONS: PropertyDescriptor = {
  get(this: object): readonly IptablesOption[] {
    return LazyOption.options(this);
  },
  set(this: object, value: readonly IptablesOption[]): void {
    Object.defineProperty(this, 'options', { value, writable: true, enumerable: true, configurable: true });
  },
  enumerable: true,
  configurable: true,
};

type LazyTargetConstructor = new (name: string, kind: ParsedTarget['kind']) => ParsedTarget;

const LazyTarget = function (this: ParsedTarget, name: string, kind: ParsedTarget['kind']): void {
  this.name = name;
  this.kind = kind;
  Object.defineProperty(this, 'options', LAZY_OPTIONS);
} as unknown as LazyTargetConstructor;
(LazyTarget as unknown as { prototype: object }).prototype = Object.prototype;

/**
 * `t` itself, or, when its one option is `--to-destination`/`--to-source`/`--to` with one
 * value (unique to the rule in practice), an equal target that keeps just that value.
 */
function lazyTarget(t: ParsedTarget): ParsedTarget {
  const o = t.options[0]!;
  if (o.negated || o.values.length !== 1 || !UNSHARED_OPTIONS.has(o.name)) return t;
  const lazy = new LazyTarget(t.name, t.kind);
  LazyOption.stamp(lazy, o.name, o.values[0]!);
  return lazy;
}

/** How many options `t` has, without building a lazy target's list. */
export function targetOptionCount(t: ParsedTarget): number {
  return LazyOption.has(t) ? 1 : t.options.length;
}

/** The values a chain has unless its declaration says otherwise. */
const CHAIN_DEFAULTS = { builtin: false, policy: null, counters: null, inferred: false };
Object.defineProperties(CHAIN_DEFAULTS, plainFormMethods(function (this: IptablesChain) {
  return plainIptablesChain(this);
} as (this: never) => object));

interface ChainFields {
  readonly name: string;
  readonly builtin: boolean;
  readonly policy: IptablesPolicy | null;
  readonly counters: IptablesCounters | null;
  readonly line: number;
  readonly inferred: boolean;
}

type ChainConstructor = new (c: ChainFields, rules: readonly IptablesRule[]) => MutableChain;

const chainConstructors: ChainConstructor[] = [];

/** `prototype`: CHAIN_DEFAULTS, or a deferred table's (then `rules` is not stored: the prototype reads it). */
function newChainConstructor(prototype: object = CHAIN_DEFAULTS): ChainConstructor {
  const stored = prototype === CHAIN_DEFAULTS;
  const ChainRecord = function (this: MutableChain, c: ChainFields, rules: readonly IptablesRule[]): void {
    this.name = c.name;
    if (c.builtin) this.builtin = true;
    if (c.policy !== null) this.policy = c.policy;
    if (c.counters !== null) this.counters = c.counters;
    if (stored) this.rules = rules;
    this.line = c.line;
    if (c.inferred) this.inferred = true;
  };
  ChainRecord.prototype = prototype;
  return ChainRecord as unknown as ChainConstructor;
}

function storedChainFields(c: ChainFields): number {
  return (c.builtin ? 1 : 0) + (c.policy !== null ? 1 : 0) + (c.counters !== null ? 1 : 0) + (c.inferred ? 1 : 0);
}

/** A chain with the fields of `c` and the given rules (the list is kept, not copied). */
export function makeChain(c: ChainFields, rules: readonly IptablesRule[]): IptablesChain {
  const Chain = (chainConstructors[storedChainFields(c)] ??= newChainConstructor());
  return new Chain(c, rules);
}

/**
 * What a chain parsed on first read (src/parsers/iptables-save.ts, deferred mode) holds until
 * its rules are built: its line facts (src/model/iptables-facts.ts), answered by this object
 * itself, and `build()`, which parses the chain's lines (called once, on first read of `rules`).
 */
export interface DeferredChainSource extends ChainLineFacts {
  build(): readonly IptablesRule[];
}

/**
 * The slot a deferred chain keeps its {@link DeferredChainSource} in: set at construction (not
 * enumerable: spread and deep equality do not see it), undefined once the chain has its rules
 * (then the source, and the parser state it reaches, is not kept by the chain).
 */
const SOURCE: unique symbol = Symbol('deferred iptables chain source');

type DeferredChain = MutableChain & { [SOURCE]: DeferredChainSource | undefined };

function ownRules(chain: object, value: readonly IptablesRule[]): void {
  Object.defineProperty(chain, 'rules', { value, writable: true, enumerable: true, configurable: true });
  (chain as DeferredChain)[SOURCE] = undefined;
}

/** The prototype of every deferred chain: `rules` built on first read, the line facts till then. */
const DEFERRED_CHAIN_PROTOTYPE = Object.create(CHAIN_DEFAULTS, {
  rules: {
    get(this: DeferredChain): readonly IptablesRule[] {
      const rules = this[SOURCE]!.build();
      ownRules(this, rules);
      return rules;
    },
    set(this: DeferredChain, value: readonly IptablesRule[]): void {
      ownRules(this, value);
    },
    enumerable: true,
    configurable: true,
  },
  [CHAIN_LINE_FACTS]: {
    value(this: DeferredChain): ChainLineFacts | undefined {
      return this[SOURCE];
    },
  },
}) as object;

const deferredConstructors: ChainConstructor[] = [];

/**
 * A chain with the fields of `c` whose `rules` is built by `source` on first read; the chain
 * then keeps them as its own field, as {@link makeChain}'s chains hold them, and lets `source`
 * go. Until then `rules` is not an own field: spread and deep-equality helpers do not see it
 * (plain copies and JSON read it: see the module comment), and the chain's line facts are
 * `source` itself (no look-up, no object made per question).
 */
export function makeDeferredChain(c: ChainFields, source: DeferredChainSource): IptablesChain {
  const Chain = (deferredConstructors[storedChainFields(c)] ??= newChainConstructor(DEFERRED_CHAIN_PROTOTYPE));
  const chain = new Chain(c, []);
  Object.defineProperty(chain, SOURCE, { value: source, writable: true, enumerable: false, configurable: true });
  return chain;
}
