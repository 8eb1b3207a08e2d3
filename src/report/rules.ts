/**
 * `nodescope show rules [--chain NAME] [--table T]`: the node's iptables rulesets
 * as JSON or text.
 *
 * JSON document (stable; README documents it): the head fields, then
 * `rulesets: [{id: 'iptables'|'ip6tables'|'iptables-legacy', backend, tables: [{name, chains:
 * [{name, policy, packets, bytes, rules: [{index, packets, bytes, comment, matches, target,
 * jumpTo, probability, line, raw}]}]}]}]` — packets/bytes are decimal strings (64-bit exact),
 * null when the capture had no counters; probability is the chance (0..1) a KUBE-SVC branch
 * is taken; `nft: {tables: [{family, name, chains: [{name, type, hook, priority, priorityText,
 * policy, rules: [{handle, comment, packets, bytes, text}]}], sets: [{name, kind, type, mapType,
 * flags, elements: [{key, value, comment}]}]}]} | null` (nftables tables iptables-nft manages are
 * left out: they are in `rulesets`); `diagnostics: [{severity, origin, line, text, message, code}]`.
 */
import { chainRows, iptablesRulesets, type RuleRow } from '../analysis/rules-view.js';
import { allDiagnostics } from '../analysis/build-snapshot.js';
import { UserError } from '../errors.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import { formatExpr, formatRuleText } from '../parsers/nft-format-expr.js';
import type { NftRuleset } from '../model/nftables.js';
import { iptablesNftTables } from '../analysis/nft-view.js';
import { headText, showHead } from './header.js';
import { toJson } from './json.js';
import { terminalSafe } from '../text/terminal-safe.js';

/** Options of {@link showRules}: only chains named `chain` (in `table` when given). */
export interface ShowRulesOptions {
  readonly chain?: string;
  readonly table?: string;
}

function ruleJson(r: RuleRow) {
  return { index: r.index, packets: r.packets, bytes: r.bytes, comment: r.label || null, matches: r.matches, target: r.target || null, jumpTo: r.jumpTo, probability: r.probability, line: r.line, raw: r.raw };
}

/** One line of the text document: names, comments and rule text from the node stay on it. */
const line = (text: string): string => terminalSafe(text);

/** Renders `show rules`. Throws `UserError` when `--chain` names a chain no ruleset has. */
export function showRules(snapshot: NodeSnapshot, format: 'json' | 'text', options: ShowRulesOptions = {}): string {
  const rulesets = iptablesRulesets(snapshot).map(({ id, ruleset }) => ({
    id,
    backend: ruleset.generator?.backend ?? null,
    tables: ruleset.tables
      .filter((t) => !options.table || t.name === options.table)
      .map((t) => ({
        name: t.name,
        chains: t.chains
          .filter((c) => !options.chain || c.name === options.chain)
          .map((c) => {
            const rows = chainRows(ruleset, t.name, c.name) ?? [];
            return { name: c.name, policy: c.policy, packets: c.counters?.packets ?? null, bytes: c.counters?.bytes ?? null, rules: rows.map(ruleJson) };
          }),
      }))
      .filter((t) => t.chains.length > 0),
  }));
  const nft = snapshot.nft?.value ? nftJson(snapshot.nft.value, iptablesNftTables(snapshot), options) : null;
  if (options.chain && rulesets.every((r) => r.tables.length === 0) && !nft?.tables.length) {
    throw new UserError(`no chain named ${options.chain}${options.table ? ` in table ${options.table}` : ''}`, 'list chains with `nodescope show rules`');
  }
  if (format === 'json') return toJson({ ...showHead(snapshot), rulesets, nft, diagnostics: allDiagnostics(snapshot) });
  let out = headText(showHead(snapshot));
  for (const rs of rulesets) {
    for (const t of rs.tables) {
      for (const c of t.chains) {
        out += `\n${line(`${rs.id} *${t.name} :${c.name}${c.policy ? ` policy ${c.policy}` : ''}`)}\n`;
        for (const r of c.rules) {
          const counters = r.packets === null ? '' : `[${r.packets}:${r.bytes}] `;
          const prob = r.probability === null ? '' : ` (p=${(r.probability * 100).toFixed(1)}%)`;
          out += `${line(`  ${String(r.index).padStart(3)} ${counters}${r.comment ? `"${r.comment}" ` : ''}${r.matches}${r.matches ? ' ' : ''}-> ${r.target ?? '(no target)'}${prob}`)}\n`;
        }
      }
    }
  }
  for (const t of nft?.tables ?? []) {
    for (const c of t.chains) {
      out += `\n${line(`nft table ${t.family} ${t.name} chain ${c.name}${c.hook ? ` (${c.type} ${c.hook} priority ${c.priorityText}; policy ${c.policy})` : ''}`)}\n`;
      c.rules.forEach((r, i) => {
        out += `${line(`  ${String(i + 1).padStart(3)} ${r.packets === null ? '' : `[${r.packets}:${r.bytes}] `}${r.text}`)}\n`;
      });
    }
    for (const set of t.sets) {
      out += `\n${line(`nft table ${t.family} ${t.name} ${set.kind} ${set.name} { type ${set.type}${set.mapType ? ` : ${set.mapType}` : ''} }`)}\n`;
      for (const e of set.elements) out += `${line(`      ${e.key}${e.comment ? ` comment "${e.comment}"` : ''}${e.value ? ` : ${e.value}` : ''}`)}\n`;
    }
  }
  for (const d of allDiagnostics(snapshot).filter((d) => d.severity !== 'info')) out += `${line(`! ${d.origin}:${d.line}: ${d.message}: ${d.text}`)}\n`;
  return out;
}


function nftJson(ruleset: NftRuleset, skip: ReadonlySet<string>, options: ShowRulesOptions) {
  const wanted = (family: string, name: string) => !options.table || options.table === name || options.table === `${family} ${name}`;
  return {
    tables: ruleset.tables
      .filter((t) => !skip.has(`${t.family} ${t.name}`) && wanted(t.family, t.name))
      .map((t) => ({
        family: t.family,
        name: t.name,
        chains: t.chains
          .filter((c) => !options.chain || c.name === options.chain)
          .map((c) => ({
            name: c.name,
            type: c.base?.type ?? null,
            hook: c.base?.hook ?? null,
            priority: c.base?.priority ?? null,
            priorityText: c.base?.priorityText ?? null,
            policy: c.base?.policy ?? null,
            rules: c.rules.map((r) => ({ handle: r.handle ?? null, comment: r.comment ?? null, packets: r.counters?.packets ?? null, bytes: r.counters?.bytes ?? null, text: formatRuleText(r) })),
          })),
        sets: options.chain
          ? []
          : t.sets.map((set) => ({
              name: set.name,
              kind: set.kind,
              type: set.type,
              mapType: set.mapType ?? null,
              flags: set.flags,
              elements: set.elements.map((e) => ({ key: formatExpr(e.key), value: e.value ? formatExpr(e.value) : null, comment: e.comment ?? null })),
            })),
      }))
      .filter((t) => t.chains.length > 0 || t.sets.length > 0),
  };
}
