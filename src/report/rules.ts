/**
 * `nodescope show rules [--chain NAME] [--table T]`: the node's iptables rulesets
 * as JSON or text.
 *
 * JSON document (stable; README documents it): the head fields, then
 * `rulesets: [{id: 'iptables'|'ip6tables'|'iptables-legacy', backend, tables: [{name, chains:
 * [{name, policy, packets, bytes, rules: [{index, packets, bytes, comment, matches, target,
 * jumpTo, probability, line, raw}]}]}]}]` — packets/bytes are decimal strings (64-bit exact),
 * null when the capture had no counters; probability is the chance (0..1) a KUBE-SVC branch
 * is taken; `diagnostics: [{severity, origin, line, text, message, code}]`.
 */
import { chainRows, iptablesRulesets, type RuleRow } from '../analysis/rules-view.js';
import { allDiagnostics } from '../analysis/build-snapshot.js';
import { UserError } from '../errors.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import { headText, showHead } from './header.js';
import { toJson } from './json.js';

/** Options of {@link showRules}: only chains named `chain` (in `table` when given). */
export interface ShowRulesOptions {
  readonly chain?: string;
  readonly table?: string;
}

function ruleJson(r: RuleRow) {
  return { index: r.index, packets: r.packets, bytes: r.bytes, comment: r.label || null, matches: r.matches, target: r.target || null, jumpTo: r.jumpTo, probability: r.probability, line: r.line, raw: r.raw };
}

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
  if (options.chain && rulesets.every((r) => r.tables.length === 0)) {
    throw new UserError(`no chain named ${options.chain}${options.table ? ` in table ${options.table}` : ''}`, 'list chains with `nodescope show rules`');
  }
  if (format === 'json') return toJson({ ...showHead(snapshot), rulesets, diagnostics: allDiagnostics(snapshot) });
  let out = headText(showHead(snapshot));
  for (const rs of rulesets) {
    for (const t of rs.tables) {
      for (const c of t.chains) {
        out += `\n${rs.id} *${t.name} :${c.name}${c.policy ? ` policy ${c.policy}` : ''}\n`;
        for (const r of c.rules) {
          const counters = r.packets === null ? '' : `[${r.packets}:${r.bytes}] `;
          const prob = r.probability === null ? '' : ` (p=${(r.probability * 100).toFixed(1)}%)`;
          out += `  ${String(r.index).padStart(3)} ${counters}${r.comment ? `"${r.comment}" ` : ''}${r.matches}${r.matches ? ' ' : ''}-> ${r.target ?? '(no target)'}${prob}\n`;
        }
      }
    }
  }
  for (const d of allDiagnostics(snapshot).filter((d) => d.severity !== 'info')) out += `! ${d.origin}:${d.line}: ${d.message}: ${d.text}\n`;
  return out;
}

