/**
 * `nodescope show compare`: what kube-proxy's iptables mode, its nftables mode and Cilium
 * would each program for the snapshot's Services (src/analysis/compare-modes.ts), next to
 * what the node has, as JSON or text.
 *
 * JSON document (stable): the `show` head plus
 * `{compare: {services, servicePorts, endpoints, base, predicted, actual: [{mode, family, count,
 * source}], perService: [{service, ports, endpoints, cost, names}], notes}}` where every
 * count is `{chains, rules, elements, maps}` keyed by mode (`iptables`, `nftables`,
 * `cilium`); `maps` holds Cilium map entry counts by map name. `actual[].family` is `ipv4` or
 * `ipv6`: `predicted` is IPv4 only, so only the `ipv4` counts compare with it.
 */
import { COMPARE_MODES, compareModes, modeTotal, type CompareMode, type ModeComparison, type ModeCount } from '../analysis/compare-modes.js';
import { said, UserError } from '../errors.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import { headText, showHead } from './header.js';
import { tf, type Lang, type MessageKey } from '../text/i18n.js';
import { isDocumentFormat, toDocument, type OutputFormat } from '../text/document.js';
import { apiWarnings } from './services.js';
import { plainTable, type PlainCell } from '../text/plain-table.js';
import { terminalSafe } from '../text/terminal-safe.js';

/** The comparison of a snapshot; throws `UserError` when it has no API objects. */
export function comparisonOf(snapshot: NodeSnapshot, service?: string): ModeComparison {
  const cmp = compareModes(snapshot, service ? { service } : {});
  if (!cmp) throw new UserError(said('ue.compare.noApi'), said('ue.passApiFileKubectl'));
  if (service && cmp.perService.length === 0) throw new UserError(said('ue.compare.noService', { service }), said('ue.compare.noServiceHint'));
  return cmp;
}

function cells(c: ModeCount, mode: CompareMode): PlainCell[] {
  const maps = Object.entries(c.maps).map(([m, n]) => `${m}=${n}`);
  return [String(c.chains), String(c.rules), mode === 'cilium' ? (maps.length ? maps : '0') : String(c.elements), String(modeTotal(c))];
}

/** Renders `show compare` in `format`; `service` (`ns/name`) limits the per-Service part. */
export function showCompare(snapshot: NodeSnapshot, format: OutputFormat, service?: string, lang: Lang = 'en'): string {
  const cmp = comparisonOf(snapshot, service);
  if (isDocumentFormat(format)) return toDocument('ModeComparison', { ...showHead(snapshot), compare: cmp }, format);
  const say = (key: MessageKey, params: Readonly<Record<string, string | number>> = {}) => tf(lang, key, params);
  const lines: string[] = [headText(showHead(snapshot), lang).trimEnd()];
  lines.push(say('cli.cmp.title', { services: cmp.services, ports: cmp.servicePorts, endpoints: cmp.endpoints }));
  const totals = COMPARE_MODES.map((m) => {
    const actual = cmp.actual.find((a) => a.mode === m && a.family === 'ipv4');
    const diff = actual ? modeTotal(actual.count) - modeTotal(cmp.predicted[m]) : 0;
    const node = actual ? `${modeTotal(actual.count)}${diff === 0 ? say('cli.cmp.equal') : say('cli.cmp.differs', { diff })}` : '-';
    return [m, ...cells(cmp.predicted[m], m), node, say(`cli.cmp.unit.${m}` as const)];
  });
  const col = (...keys: MessageKey[]) => keys.map((k) => say(k));
  lines.push(plainTable(col('cli.cmp.col.mode', 'cli.cmp.col.chains', 'cli.cmp.col.rules', 'cli.cmp.col.elements', 'cli.cmp.col.total', 'cli.cmp.col.node', 'cli.cmp.col.unit'), totals).trimEnd());
  // Per family: the node's IPv6 rules are never set against the IPv4 prediction.
  for (const a of cmp.actual.filter((x) => x.family === 'ipv6')) lines.push(say('cli.cmp.ipv6', { mode: a.mode, total: modeTotal(a.count), source: a.source }));
  const per = [[say('cli.cmp.base'), '-', '-', ...COMPARE_MODES.map((m) => String(modeTotal(cmp.base[m])))], ...cmp.perService.map((p) => [p.service, String(p.ports), String(p.endpoints), ...COMPARE_MODES.map((m) => String(modeTotal(p.cost[m])))])];
  lines.push(say('cli.cmp.perService'), plainTable([...col('cli.cmp.col.service', 'cli.cmp.col.ports', 'cli.cmp.col.endpoints'), ...COMPARE_MODES], per).trimEnd());
  if (service) {
    const p = cmp.perService[0]!;
    for (const m of COMPARE_MODES) {
      const grown = p.grown[m].length ? say('cli.cmp.grown', { list: p.grown[m].join(', ') }) : '';
      lines.push(terminalSafe(say('cli.cmp.names', { mode: m, names: p.names[m].join(', ') || say('cli.cmp.noChain'), grown })));
    }
  }
  // English keeps the engine's own sentence; another language says the note from its kind and values.
  const noteText = (n: ModeComparison['notes'][number]) => (lang === 'en' ? n.text : tf(lang, `compare.note.${n.kind}` as const, n.params));
  if (cmp.notes.length) lines.push(say('cli.cmp.inferred'), ...cmp.notes.map((n) => terminalSafe(`  ${noteText(n)}`)));
  return `${lines.join('\n')}\n${apiWarnings(snapshot)}`;
}
