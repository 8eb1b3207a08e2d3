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
 * flags, elements: [{key, value, comment}]}], objects: [{kind, name, raw}]}], metainfo: {version,
 * releaseName, jsonSchemaVersion} | null} | null` (`objects`: kinds not modelled, kept as their
 * JSON; `metainfo`: what `nft -j` said of itself, null from the text listing) (nftables tables iptables-nft manages are
 * left out: they are in `rulesets`); `diagnostics: [{severity, origin, line, text, message, code}]`.
 */
import { chainRows, iptablesRulesets, type RuleRow } from '../analysis/rules-view.js';
import { allDiagnostics } from '../collect/build-snapshot.js';
import { said, UserError } from '../errors.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import { formatExpr, formatRuleText } from '../parsers/nft-format-expr.js';
import type { NftRuleset } from '../model/nftables.js';
import { nftMetainfoOf } from '../parsers/nft-json.js';
import { iptablesNftTables } from '../analysis/nft-view.js';
import { headText, showHead } from './header.js';
import { tf, type Lang, type MessageKey } from '../text/i18n.js';
import { isDocumentFormat, toDocument, type OutputFormat } from '../text/document.js';
import { terminalSafe } from '../text/terminal-safe.js';

/**
 * Options of {@link showRules}: only chains named `chain` (in `table` when given); with
 * `service` (`namespace/name`), only what names that Service (see {@link namesService}).
 */
export interface ShowRulesOptions {
  readonly chain?: string;
  readonly table?: string;
  readonly service?: string;
}

/**
 * A predicate: does a text name Service `ref` (`namespace/name`)? kube-proxy writes the name
 * into rule comments (`default/web:http`, `"default/web:http cluster IP"`) and nftables
 * chain and element names (`service-ULMVA6XW-default/web/tcp/http`); the name must stand
 * whole there (`default/web` does not name `default/web2`). Throws `UserError` for a ref
 * that is not `namespace/name`.
 */
export function namesService(ref: string): (text: string | null | undefined) => boolean {
  if (!/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?\/[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(ref)) throw new UserError(said('ue.rules.notNsName', { ref: JSON.stringify(ref) }), said('ue.rules.notNsNameHint'));
  const escaped = ref.replace(/[.]/g, '\\.');
  const re = new RegExp(`(^|[\\s"'-])${escaped}($|[:/\\s"'])`);
  return (text) => text != null && re.test(text);
}

function ruleJson(r: RuleRow) {
  return { index: r.index, packets: r.packets, bytes: r.bytes, comment: r.label || null, matches: r.matches, target: r.target || null, jumpTo: r.jumpTo, probability: r.probability, line: r.line, raw: r.raw };
}

/** One line of the text document: names, comments and rule text from the node stay on it. */
const line = (text: string): string => terminalSafe(text);

/** Renders `show rules`. Throws `UserError` when `--chain` names a chain no ruleset has. */
export function showRules(snapshot: NodeSnapshot, format: OutputFormat, options: ShowRulesOptions = {}, lang: Lang = 'en'): string {
  const names = options.service ? namesService(options.service) : null;
  const keepRule = (r: RuleRow) => names === null || names(r.label) || names(r.raw);
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
            const rows = (chainRows(ruleset, t.name, c.name) ?? []).filter(keepRule);
            return { name: c.name, policy: c.policy, packets: c.counters?.packets ?? null, bytes: c.counters?.bytes ?? null, rules: rows.map(ruleJson) };
          })
          // With --service, a chain stays only when some rule of it names the Service.
          .filter((c) => names === null || c.rules.length > 0),
      }))
      .filter((t) => t.chains.length > 0),
  }));
  const nft = snapshot.nft?.value ? nftJson(snapshot.nft.value, iptablesNftTables(snapshot), options, names) : null;
  if (names && rulesets.every((r) => r.tables.length === 0) && !nft?.tables.length) {
    // On an eBPF node no Service has a kube-proxy rule, whatever its name: point at the LB maps.
    // (show rules reads only ClientIP Services of the API, src/parsers/k8s-rules-api.ts: the name is not checked here.)
    if (snapshot.lb?.value) throw new UserError(said('ue.rules.ebpfService', { service: options.service ?? '' }), said('ue.rules.seeLb', { service: options.service ?? '' }));
    throw new UserError(said('ue.rules.noneNames', { service: options.service ?? '' }), said('ue.rules.checkName'));
  }
  if (options.chain && rulesets.every((r) => r.tables.length === 0) && !nft?.tables.length) {
    throw new UserError(said('ue.rules.noChain', { chain: options.chain, table: options.table ? said('ue.rules.inTable', { table: options.table }) : '' }), said('ue.rules.listChains'));
  }
  if (format === 'name') {
    const ipt = rulesets.flatMap((rs) => rs.tables.flatMap((t) => t.chains.map((c) => `chain/${rs.id}/${t.name}/${c.name}`)));
    const nftNames = (nft?.tables ?? []).flatMap((t) => t.chains.map((c) => `chain/nft/${t.family}/${t.name}/${c.name}`));
    return [...ipt, ...nftNames].map((n) => `${line(n)}\n`).join('');
  }
  if (isDocumentFormat(format)) return toDocument('RuleList', { ...showHead(snapshot), rulesets, nft, diagnostics: allDiagnostics(snapshot) }, format);
  let out = headText(showHead(snapshot), lang);
  const meta = nft?.metainfo;
  const say = (key: MessageKey, params: Readonly<Record<string, string | number>> = {}) => tf(lang, key, params);
  if (nft && meta) {
    const version = meta.version ? say('cli.rules.nftVersion', { version: meta.version }) : say('cli.rules.nftNoVersion');
    const release = meta.releaseName ? say('cli.rules.release', { name: meta.releaseName }) : '';
    out += `${line(say('cli.rules.nftMeta', { version, release, schema: meta.jsonSchemaVersion ?? say('cli.rules.noSchema') }))}\n`;
  } else if (nft) out += `${say('cli.rules.nftText')}\n`;
  for (const rs of rulesets) {
    for (const t of rs.tables) {
      for (const c of t.chains) {
        out += `\n${line(`${rs.id} *${t.name} :${c.name}${c.policy ? ` policy ${c.policy}` : ''}`)}\n`;
        for (const r of c.rules) {
          const counters = r.packets === null ? '' : `[${r.packets}:${r.bytes}] `;
          const prob = r.probability === null ? '' : ` (p=${(r.probability * 100).toFixed(1)}%)`;
          out += `${line(`  ${String(r.index).padStart(3)} ${counters}${r.comment ? `"${r.comment}" ` : ''}${r.matches}${r.matches ? ' ' : ''}-> ${r.target ?? say('cli.rules.noTarget')}${prob}`)}\n`;
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
    for (const o of t.objects) out += `\n${line(say('cli.rules.object', { family: t.family, table: t.name, kind: o.kind, name: o.name, raw: o.raw }))}\n`;
    for (const set of t.sets) {
      out += `\n${line(`nft table ${t.family} ${t.name} ${set.kind} ${set.name} { type ${set.type}${set.mapType ? ` : ${set.mapType}` : ''} }`)}\n`;
      for (const e of set.elements) out += `${line(`      ${e.key}${e.comment ? ` comment "${e.comment}"` : ''}${e.value ? ` : ${e.value}` : ''}`)}\n`;
    }
  }
  for (const d of allDiagnostics(snapshot).filter((d) => d.severity !== 'info')) out += `${line(`! ${d.origin}:${d.line}: ${d.message}: ${d.text}`)}\n`;
  return out;
}


function nftJson(ruleset: NftRuleset, skip: ReadonlySet<string>, options: ShowRulesOptions, names: ((text: string | null | undefined) => boolean) | null) {
  const wanted = (family: string, name: string) => !options.table || options.table === name || options.table === `${family} ${name}`;
  return {
    metainfo: nftMetainfoOf(ruleset),
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
            rules: c.rules
              .map((r) => ({ handle: r.handle ?? null, comment: r.comment ?? null, packets: r.counters?.packets ?? null, bytes: r.counters?.bytes ?? null, text: formatRuleText(r) }))
              // A chain named after the Service is kept whole; elsewhere only the rules that name it.
              .filter((r) => names === null || names(c.name) || names(r.comment) || names(r.text)),
          }))
          .filter((c) => names === null || c.rules.length > 0 || names(c.name)),
        sets: options.chain
          ? []
          : t.sets.map((set) => ({
              name: set.name,
              kind: set.kind,
              type: set.type,
              mapType: set.mapType ?? null,
              flags: set.flags,
              elements: set.elements
                .map((e) => ({ key: formatExpr(e.key), value: e.value ? formatExpr(e.value) : null, comment: e.comment ?? null }))
                .filter((e) => names === null || names(e.comment) || names(e.value)),
            }))
            .filter((set) => names === null || set.elements.length > 0),
        objects: options.chain || names ? [] : t.objects.map((o) => ({ kind: o.kind, name: o.name, raw: o.raw })),
      }))
      .filter((t) => t.chains.length > 0 || t.sets.length > 0 || t.objects.length > 0),
  };
}
