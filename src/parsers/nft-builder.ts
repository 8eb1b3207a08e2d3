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
      c = { name, rules: [] };
      table.chains.set(name, c);
    }
    this.lastChain = c;
    this.lastChainTable = table;
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

  /** The immutable ruleset: undefined fields are left out, so models compare cleanly. */
  finish(): NftRuleset {
    return { tables: [...this.tables.values()].map(finishTable) };
  }
}

function finishTable(t: TableDraft): NftTable {
  return {
    family: t.family,
    name: t.name,
    ...(t.handle !== undefined && { handle: t.handle }),
    ...(t.comment !== undefined && { comment: t.comment }),
    ...(t.flags !== undefined && { flags: t.flags }),
    chains: [...t.chains.values()].map(finishChain),
    sets: [...t.sets.values()].map(finishSet),
    counters: [...t.counters.values()],
    objects: t.objects,
  };
}

function finishChain(c: ChainDraft): NftChain {
  return {
    name: c.name,
    ...(c.handle !== undefined && { handle: c.handle }),
    ...(c.comment !== undefined && { comment: c.comment }),
    ...(c.base !== undefined && { base: c.base }),
    rules: c.rules,
  };
}

function finishSet(s: SetDraft): NftSet {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(s)) if (v !== undefined) out[k] = v;
  return out as unknown as NftSet;
}
