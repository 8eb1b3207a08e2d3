/**
 * Collects tables, chains, sets and rules while a parser walks its input (JSON objects or
 * text commands arrive in any order, and `nft -f` input adds to, flushes and deletes what
 * came before), then hands out the immutable {@link NftRuleset}.
 */
import type {
  NftBaseChain,
  NftChain,
  NftElement,
  NftFamily,
  NftNamedCounter,
  NftRawObject,
  NftRule,
  NftRuleset,
  NftSet,
  NftSetFlag,
  NftTable,
} from '../model/nftables.js';
import { flatCopy } from '../flat-string.js';
import { NftSharer, type RuleParts } from './nft-share.js';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** A chain under construction. */
export interface ChainDraft {
  name: string;
  handle?: number;
  comment?: string;
  base?: NftBaseChain;
  rules: NftRule[];
}

/** A set or map under construction. */
export type SetDraft = Mutable<Omit<NftSet, 'elements' | 'flags'>> & { flags: NftSetFlag[]; elements: NftElement[] };

/** A table under construction. */
export interface TableDraft {
  family: NftFamily;
  name: string;
  handle?: number;
  comment?: string;
  flags?: string[];
  chains: Map<string, ChainDraft>;
  sets: Map<string, SetDraft>;
  counters: Map<string, NftNamedCounter>;
  objects: NftRawObject[];
}

/** Canonical order of set flags, so JSON and text give the same array. */
const SET_FLAG_ORDER: readonly NftSetFlag[] = ['constant', 'interval', 'timeout', 'dynamic'];

/** Known set flags in canonical order; unknown names are returned separately. */
export function normalizeSetFlags(names: readonly string[]): { flags: NftSetFlag[]; unknown: string[] } {
  const known = new Set<string>(SET_FLAG_ORDER);
  return {
    flags: SET_FLAG_ORDER.filter((f) => names.includes(f)),
    unknown: names.filter((n) => !known.has(n)),
  };
}

/** Mutable ruleset under construction; tables keep first-seen order. */
export class RulesetBuilder {
  private readonly tables = new Map<string, TableDraft>();
  // The table and chain asked for last: objects of one table and rules of one chain come
  // in runs, so most lookups are answered without building a key or hashing a name.
  private lastTable: TableDraft | undefined;
  private lastChain: ChainDraft | undefined;
  private lastChainTable: TableDraft | undefined;
  /** Shares identical statements, values and names while the ruleset is read (nft-share.ts). */
  readonly sharer = new NftSharer();

  /**
   * A rule for the model: statements shared with equal ones of other rules, `raw` printed
   * on demand when it is the formatter's text (see `nft-share.ts`). Parsers push this, not
   * their own object.
   */
  rule(parts: RuleParts): NftRule {
    return this.sharer.rule(parts);
  }

  /** The table, or undefined. */
  findTable(family: NftFamily, name: string): TableDraft | undefined {
    const last = this.lastTable;
    if (last !== undefined && last.family === family && last.name === name) return last;
    return this.tables.get(`${family} ${name}`);
  }

  /** The table, created empty when absent. */
  table(family: NftFamily, name: string): TableDraft {
    const last = this.lastTable;
    if (last !== undefined && last.family === family && last.name === name) return last;
    const key = `${family} ${name}`;
    let t = this.tables.get(key);
    if (!t) {
      t = { family, name, chains: new Map(), sets: new Map(), counters: new Map(), objects: [] };
      this.tables.set(key, t);
    }
    this.lastTable = t;
    return t;
  }

  /** Removes a table; false when it was absent. */
  deleteTable(family: NftFamily, name: string): boolean {
    this.forget();
    return this.tables.delete(`${family} ${name}`);
  }

  /** Removes every table (`flush ruleset`). */
  clear(): void {
    this.forget();
    this.tables.clear();
  }

  /**
   * Drops the remembered table and chain; callers that delete or replace chains or
   * tables themselves call it too.
   */
  forget(): void {
    this.lastTable = undefined;
    this.lastChain = undefined;
    this.lastChainTable = undefined;
  }

  /** The chain, created empty when absent. */
  chain(table: TableDraft, name: string): ChainDraft {
    const last = this.lastChain;
    if (last !== undefined && this.lastChainTable === table && last.name === name) return last;
    let c = table.chains.get(name);
    if (!c) {
      // The name string is the one jump targets use (one copy, never a view into the input).
      c = { name: this.sharer.name(name), rules: [] };
      table.chains.set(c.name, c);
    }
    this.lastChain = c;
    this.lastChainTable = table;
    return c;
  }

  /**
   * The chain when `table` has it, else undefined (no draft made): for a reader that
   * hands a rule of an unlisted chain to a slower path (which says so in a diagnostic).
   * `name` may be a view into the input (a kept chain's name is its own copy).
   */
  knownChain(table: TableDraft, name: string): ChainDraft | undefined {
    const last = this.lastChain;
    if (last !== undefined && this.lastChainTable === table && last.name === name) return last;
    const c = table.chains.get(name);
    if (c !== undefined) {
      this.lastChain = c;
      this.lastChainTable = table;
    }
    return c;
  }

  /** The set or map, created empty (type unknown) when absent. */
  set(table: TableDraft, name: string, kind: 'set' | 'map'): SetDraft {
    let s = table.sets.get(name);
    if (!s) {
      s = { kind, name, type: '', keyTypes: [], flags: [], elements: [] };
      table.sets.set(name, s);
    }
    return s;
  }

  /**
   * The immutable ruleset: undefined fields are left out, so models compare cleanly;
   * arrays are exact-size copies, strings flat copies, set elements shared (nft-share.ts).
   * `onChain` is called with each chain's draft and the chain made of it, and gives the
   * chain to keep (a reader that builds some chains' rules later, nft-json-direct.ts, puts
   * a chain whose `rules` it builds on first read in its place). `chainsOf`, when given, is
   * called with each table's draft and its chains (made of its drafts, in order) and gives
   * the table's chains (a reader that keeps some chains outside the builder puts them in their
   * places).
   */
  finish(onChain?: (draft: ChainDraft, chain: NftChain) => NftChain, chainsOf?: (table: TableDraft, chains: NftChain[]) => NftChain[]): NftRuleset {
    const sharer = this.sharer;
    return { tables: [...this.tables.values()].map((t) => finishTable(t, sharer, onChain, chainsOf)) };
  }
}

// Strings of the text parser are views into the input: every kept one is copied flat.
const flatList = (xs: readonly string[]): string[] => xs.map(flatCopy);

function finishTable(
  t: TableDraft,
  sharer: NftSharer,
  onChain: ((draft: ChainDraft, chain: NftChain) => NftChain) | undefined,
  chainsOf: ((table: TableDraft, chains: NftChain[]) => NftChain[]) | undefined,
): NftTable {
  const chains = [...t.chains.values()].map(onChain === undefined ? finishChain : (c) => onChain(c, finishChain(c)));
  return {
    family: t.family,
    name: flatCopy(t.name),
    ...(t.handle !== undefined && { handle: t.handle }),
    ...(t.comment !== undefined && { comment: flatCopy(t.comment) }),
    ...(t.flags !== undefined && { flags: flatList(t.flags) }),
    chains: chainsOf === undefined ? chains : chainsOf(t, chains),
    sets: [...t.sets.values()].map((s) => finishSet(s, sharer)),
    counters: [...t.counters.values()].map((c) => ({
      ...c,
      name: flatCopy(c.name),
      ...(c.comment !== undefined && { comment: flatCopy(c.comment) }),
    })),
    objects: t.objects.map((o) => ({ ...o, kind: flatCopy(o.kind), name: flatCopy(o.name), raw: flatCopy(o.raw) })),
  };
}

function finishChain(c: ChainDraft): NftChain {
  const base = c.base;
  // Plain literals for the shapes of the many regular chains: a literal with spreads gets
  // spare in-object slots (24 bytes a chain, a quarter million chains on a big node).
  if (base === undefined && c.comment === undefined) {
    return c.handle === undefined ? { name: c.name, rules: c.rules.slice() } : { name: c.name, handle: c.handle, rules: c.rules.slice() };
  }
  return {
    name: c.name,
    ...(c.handle !== undefined && { handle: c.handle }),
    ...(c.comment !== undefined && { comment: flatCopy(c.comment) }),
    ...(base !== undefined && {
      base: { ...base, priorityText: flatCopy(base.priorityText), ...(base.devices && { devices: flatList(base.devices) }) },
    }),
    rules: c.rules.slice(),
  };
}

function finishSet(s: SetDraft, sharer: NftSharer): NftSet {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(s)) {
    if (v === undefined) continue;
    if (k === 'elements') out[k] = s.elements.map((e) => sharer.element(e));
    else if (typeof v === 'string') out[k] = flatCopy(v);
    else if (k === 'keyTypes' || k === 'flags') out[k] = flatList(v as string[]);
    else out[k] = v;
  }
  return out as unknown as NftSet;
}
