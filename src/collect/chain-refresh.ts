/**
 * Refreshing the chain on screen alone. A live refresh of a 10,000-Service node re-read
 * and re-parsed the whole ruleset every 2 s (seconds of the node's CPU each time); the
 * Rules pane shows one chain, whose counters one probe re-reads: `iptables -t T -S CHAIN -v`
 * (iptables-nft fetches that chain's rules only) or `nft -j list chain FAMILY TABLE CHAIN`.
 * The re-read chain replaces its old self in the snapshot's ruleset; the rest stays as
 * last read whole. Whether the whole needs reading again is a cheap check: the names of
 * the nftables tables (`nft list flowtables`, which names every table) and the open chain's rules themselves (a rewritten
 * chain means kube-proxy wrote; a new Service adds a rule to KUBE-SERVICES); the rest is
 * read whole every so many refreshes (src/collect/session.ts `FULL_READ_EVERY`).
 * Pure: runs in, models out.
 */
import { createHash } from 'node:crypto';
import type { IptablesChain, IptablesRule, IptablesRuleset, IptablesTable } from '../model/iptables.js';
import type { NftChain, NftRuleset, NftTable } from '../model/nftables.js';
import { parseIptablesSave } from '../parsers/iptables-save.js';
import { ruleKey } from '../analysis/rules-view.js';
import { parseNftJson } from '../parsers/nft-json.js';
import type { ProbeRun } from '../sources/probe-runner.js';

/**
 * The chain a refresh re-reads: the Rules pane's open chain. `ruleset`: `iptables` (IPv4)
 * or `ip6tables` with an iptables `table`; or `nft` with `table` as `family name`
 * (`ip kube-proxy`). The legacy backend has no per-chain read here (`iptables-legacy`): full reads only.
 */
export interface ChainFocus {
  readonly ruleset: string;
  readonly table: string;
  readonly chain: string;
  /**
   * With the LB pane's focus (src/collect/map-refresh.ts `LB_MAPS_FOCUS`): the frontends it may
   * show (`formatFrontend` text, `10.96.0.1:443/TCP`), whose map entries a refresh looks up by key.
   */
  readonly frontends?: readonly string[];
}

/** The on-demand probe and its parameters that re-read `focus`; null when no probe can (legacy, unknown ruleset). */
export function chainProbe(focus: ChainFocus): { id: string; params: Record<string, string> } | null {
  if (focus.ruleset === 'iptables' || focus.ruleset === 'ip6tables') {
    return { id: focus.ruleset === 'iptables' ? 'iptables-chain' : 'ip6tables-chain', params: { table: focus.table, chain: focus.chain } };
  }
  if (focus.ruleset === 'nft') {
    const [family, name] = focus.table.split(' ');
    if (!family || !name) return null;
    return { id: 'nft-chain', params: { nftFamily: family, nftTable: name, nftChain: focus.chain } };
  }
  return null;
}

/**
 * A fingerprint of what the cheap check read (the table names, `nft list flowtables`): equal fingerprints mean
 * no table came or went. Null when a check probe did not
 * answer (then only the periodic full read notices changes).
 */
export function rulesetCheckFingerprint(runs: readonly (ProbeRun | undefined)[]): string | null {
  if (runs.length === 0 || runs.some((r) => !r || r.status !== 'ok')) return null;
  const hash = createHash('sha1');
  for (const r of runs) hash.update(r!.result.stdout).update('\0');
  return hash.digest('base64');
}

/** Each rule's {@link ruleIdentity}, made once: a refresh's fresh rules are the next one's old ones. */
const identities = new WeakMap<IptablesRule, string>();

/** A rule's text without its counters (`[p:b] ` prefix or ` -c P B` of `iptables -S -v`). */
function ruleIdentity(rule: IptablesRule): string {
  let id = identities.get(rule);
  if (id === undefined) identities.set(rule, (id = rule.raw.replace(/^\[\d+:\d+\]\s*/, '').replace(/ -c \d+ \d+(?= |$)/, '')));
  return id;
}

/** Whether two chains hold the same rules in the same order, counters aside. */
export function sameIptablesRules(a: IptablesChain, b: IptablesChain): boolean {
  return a.rules.length === b.rules.length && a.rules.every((r, i) => ruleIdentity(r) === ruleIdentity(b.rules[i]!));
}

/**
 * `ruleset` with chain `chain` of `table` replaced by the one `iptables -t T -S CHAIN -v`
 * printed (`text`); the chain's rules keep the raw text of that listing. Null when the
 * listing holds no such chain or the ruleset no such table/chain (the caller reads the
 * whole instead). `changed`: the chain's rules differ from the ones shown (not only counters).
 *
 * The listing of an unchanged user chain (`-N CHAIN`, then the same rules but for their
 * ` -c P B`) is read line by line without parsing a rule ({@link spliceUnchangedListing}):
 * each rule is the one shown with the listing's text, line and counters. Anything else — a
 * rule changed, added or gone, a builtin chain's `-P` header, a line with no or two `-c`
 * words — goes to {@link spliceIptablesChainWhole}, the reference the fast path equals.
 */
export function spliceIptablesChain(ruleset: IptablesRuleset, table: string, chain: string, text: string, origin: string): { ruleset: IptablesRuleset; chain: IptablesChain; changed: boolean } | null {
  const t = ruleset.tables.find((x) => x.name === table);
  const at = t?.chains.findIndex((c) => c.name === chain) ?? -1;
  const rules = t && at >= 0 ? spliceUnchangedListing(t.chains[at]!, text) : null;
  if (!t || !rules) return spliceIptablesChainWhole(ruleset, table, chain, text, origin);
  return withChain(ruleset, t, at, rules, null, false);
}

/** The reference splice: the listing parsed whole (`parseIptablesSave`), its rules compared with the ones shown. */
export function spliceIptablesChainWhole(ruleset: IptablesRuleset, table: string, chain: string, text: string, origin: string): { ruleset: IptablesRuleset; chain: IptablesChain; changed: boolean } | null {
  const parsed = parseIptablesSave(text, origin, { family: ruleset.family === 'ipv6' ? 'ipv6' : 'ipv4' }).value;
  const fresh = parsed?.tables.flatMap((t) => t.chains).find((c) => c.name === chain);
  const t = ruleset.tables.find((x) => x.name === table);
  const at = t?.chains.findIndex((c) => c.name === chain) ?? -1;
  if (!fresh || !t || at < 0) return null;
  return withChain(ruleset, t, at, fresh.rules, fresh.counters, null);
}

/** `ruleset` with chain `at` of table `t` given `rules` (and header counters, null: the old ones); `changed` null: compared here. */
function withChain(ruleset: IptablesRuleset, t: IptablesTable, at: number, rules: readonly IptablesRule[], counters: IptablesChain['counters'], changed: boolean | null): { ruleset: IptablesRuleset; chain: IptablesChain; changed: boolean } {
  const old = t.chains[at]!;
  // The listing reads one chain in the unknown table: give it back its place and policy.
  const replaced = Object.assign(Object.create(Object.getPrototypeOf(old) as object) as IptablesChain, old, { rules, counters: counters ?? old.counters }) as IptablesChain;
  const chains = [...t.chains];
  chains[at] = replaced;
  const newTable: IptablesTable = { ...t, chains };
  return { ruleset: { ...ruleset, tables: ruleset.tables.map((x) => (x === t ? newTable : x)) }, chain: replaced, changed: changed ?? !sameIptablesRules(old, replaced) };
}

/** Whether position `at` of `line` is inside a double-quoted word (`--comment "…"`; `\\"` escapes a quote, as iptables prints it). */
function insideQuotes(line: string, at: number): boolean {
  let inside = false;
  for (let i = line.indexOf('"'); i >= 0 && i < at; i = line.indexOf('"', i + 1)) if (line[i - 1] !== '\\') inside = !inside;
  return inside;
}

/** ` -c PACKETS BYTES` of `iptables -S -v` (iptables 1.8: before the target, or last). */
const COUNTERS_WORDS = / -c (\d+) (\d+)(?= |$)/g;

/**
 * The rules of `old` as the listing `text` of an unchanged user chain gives them, or null
 * when the listing is anything else (see {@link spliceIptablesChain}). A rule is the shown
 * one's plain copy with the listing's line (1-based), text and counters, as the parser
 * makes them from that line: the rest of a rule is read from its text without counters,
 * which is the shown rule's ({@link ruleIdentity}).
 */
export function spliceUnchangedListing(old: IptablesChain, text: string): IptablesRule[] | null {
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  if (lines[0] !== `-N ${old.name}` || lines.length - 1 !== old.rules.length) return null;
  const head = `-A ${old.name} `;
  const rules = new Array<IptablesRule>(old.rules.length);
  for (let i = 0; i < rules.length; i++) {
    const line = lines[i + 1]!;
    if (!line.startsWith(head) || line.includes('\r')) return null;
    COUNTERS_WORDS.lastIndex = 0;
    const m = COUNTERS_WORDS.exec(line);
    if (!m || COUNTERS_WORDS.exec(line) !== null || insideQuotes(line, m.index)) return null;
    const was = old.rules[i]!;
    // The line without its counter words is the shown rule's identity (compared in place, not built).
    const id = ruleIdentity(was);
    const end = m.index + m[0].length;
    if (id.length !== line.length - m[0].length || !id.startsWith(line.slice(0, m.index)) || !id.endsWith(line.slice(end))) return null;
    // Plain, in the interface's field order (src/model/iptables.ts plainIptablesRule), the shown rule's fields but for these three.
    const rule: IptablesRule = {
      chain: was.chain,
      index: was.index,
      line: i + 2,
      raw: line,
      counters: { packets: BigInt(m[1]!), bytes: BigInt(m[2]!) },
      source: was.source,
      destination: was.destination,
      inInterface: was.inInterface,
      outInterface: was.outInterface,
      protocol: was.protocol,
      fragment: was.fragment,
      matches: was.matches,
      target: was.target,
      comment: was.comment,
    };
    identities.set(rule, id);
    rules[i] = rule;
  }
  return rules;
}

/**
 * `nft` with chain `chain` of table `family name` replaced by the one `nft -j list chain`
 * printed (`text`). Null when either side lacks it. `changed`: its rules differ (by their
 * handles and count: kube-proxy replaces a rewritten rule, which gets a new handle).
 */
export function spliceNftChain(nft: NftRuleset, tableLabel: string, chain: string, text: string, origin: string): { ruleset: NftRuleset; chain: NftChain; changed: boolean } | null {
  const [family, name] = tableLabel.split(' ');
  const parsed = parseNftJson(text, origin).value;
  const fresh = parsed?.tables.find((t) => t.family === family && t.name === name)?.chains.find((c) => c.name === chain);
  const t = nft.tables.find((x) => x.family === family && x.name === name);
  const at = t?.chains.findIndex((c) => c.name === chain) ?? -1;
  if (!fresh || !t || at < 0) return null;
  const old = t.chains[at]!;
  const chains = [...t.chains];
  chains[at] = fresh;
  const newTable: NftTable = { ...t, chains };
  const changed = old.rules.length !== fresh.rules.length || old.rules.some((r, i) => r.handle !== fresh.rules[i]!.handle);
  return { ruleset: { ...nft, tables: nft.tables.map((x) => (x === t ? newTable : x)) }, chain: fresh, changed };
}

/**
 * Packets per second of the re-read chain's rules, keyed as {@link ruleKey} (the other
 * chains were not read again: they get no rate, not zero). Rules are matched by position
 * and their text without counters (the full read's `[p:b]` and the listing's `-c P B` forms
 * alike); a counter that went down gives none. `elapsedSeconds` ≤ 0: empty.
 */
export function oneChainRates(table: string, old: IptablesChain, fresh: IptablesChain, elapsedSeconds: number): Map<string, number> {
  const rates = new Map<string, number>();
  if (!(elapsedSeconds > 0)) return rates;
  fresh.rules.forEach((rule, i) => {
    const was = old.rules[i];
    if (!was?.counters || !rule.counters || ruleIdentity(was) !== ruleIdentity(rule)) return;
    const delta = rule.counters.packets - was.counters.packets;
    if (delta >= 0n) rates.set(ruleKey(table, fresh.name, rule.index), Number(delta) / elapsedSeconds);
  });
  return rates;
}
