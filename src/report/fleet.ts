/**
 * `nodescope fleet diagnose -o text|json`: the fleet diagnosis (src/fleet/diagnose.ts).
 *
 * JSON document (stable): `{capturedAt, cluster, counts: {ok, unknown, degraded, broken,
 * failed}, nodes: [{name, status, mode, reason, freshness}], services: [{namespace, name,
 * verdict, scope: "nodes"|"api", nodes: {<node>: {verdict, ownFault, findings: [issue 17's Finding: {layer, code, severity,
 * message, port?, frontend?, endpoint?, evidence}]}},
 * majority, divergent: [{node, programmed, differsFromApi, differsFromMajority, stale,
 * missing}]}]}` — `services` holds only Services with a non-ok node or a node whose
 * programmed backend set differs; `freshness` is `{source: "kube-proxy-metrics", families:
 * [{family, lastSyncAt, lastQueuedAt, syncAgeSeconds, pendingSeconds}]}` or `{source:
 * "unknown", reason}`.
 *
 * Text: the node list, then the matrix (a column per node with a non-ok cell; the others
 * are counted), then per Service the nodes named with their findings.
 */
import { ciliumFreshnessText, freshnessText } from '../analysis/proxy-freshness.js';
import type { FleetDiagnosis, FleetServiceRow } from '../fleet/diagnose.js';
import { fitCell } from '../text/cells.js';
import { toDocument } from '../text/document.js';
import { t, tf, type Lang } from '../text/i18n.js';
import { whyText } from '../text/why.js';
import { findingMessage } from '../analysis/diagnose/say.js';
import type { ProxyFreshness } from '../analysis/proxy-freshness.js';
import { verdictWord } from './diagnose.js';

/**
 * The exit status of `fleet diagnose`, as `diagnose`'s: 1 any Service degraded or broken on
 * any node, else 2 when nothing could be diagnosed or some cell is unknown, else 0.
 */
export function fleetExitCode(d: FleetDiagnosis): number {
  const cells = d.services.flatMap((s) => Object.values(s.nodes));
  if (cells.some((c) => c.verdict === 'degraded' || c.verdict === 'broken')) return 1;
  if (d.nodes.length === 0 || d.nodes.every((n) => n.status === 'failed') || cells.some((c) => c.verdict === 'unknown')) return 2;
  return 0;
}

/** `3 nodes: 1 ok, 1 degraded, 1 broken, 0 failed` (unknown only when there are some), in `lang`. */
export function countsText(d: FleetDiagnosis, lang: Lang = 'en'): string {
  const c = d.counts;
  const counts = { nodes: d.nodes.length, ok: c.ok, degraded: c.degraded, broken: c.broken, failed: c.failed };
  return `${tf(lang, d.nodes.length === 1 ? 'cli.fleet.countsOne' : 'cli.fleet.counts', counts)}${c.unknown ? tf(lang, 'cli.fleet.countsUnknown', { unknown: c.unknown }) : ''}`;
}

/** A node's freshness in `lang` (English: src/analysis/proxy-freshness.ts's `freshnessText`). */
function freshnessIn(f: ProxyFreshness, lang: Lang): string {
  if (lang === 'en') return freshnessText(f);
  // A Cilium node's two reasons come joined by `; ` (src/analysis/proxy-freshness.ts): each its own sentence.
  if (f.source === 'unknown') return tf(lang, 'cli.fresh.unknown', { reason: f.reason.split('; ').map((r) => whyText(lang, r)).join('; ') });
  if (f.source === 'cilium') return ciliumFreshnessText(f, lang);
  return f.families
    .map((x) => `${x.family ? `${x.family}: ` : ''}${x.syncAgeSeconds === null ? t(lang, 'cli.fresh.never') : tf(lang, 'cli.fresh.synced', { seconds: x.syncAgeSeconds })}${x.pendingSeconds !== null ? tf(lang, 'cli.fresh.pending', { seconds: x.pendingSeconds }) : ''}`)
    .join('; ');
}

function serviceDetail(row: FleetServiceRow, lang: Lang): string[] {
  const out = [`${row.namespace}/${row.name} (${verdictWord(lang, row.verdict)}):`];
  for (const [node, cell] of Object.entries(row.nodes)) {
    if (!cell.ownFault) continue;
    out.push(`  ${node} ${verdictWord(lang, cell.verdict)}:`);
    for (const f of cell.findings) out.push(`    ${findingMessage(f, lang)}`);
  }
  for (const d of row.divergent) {
    const key = d.differsFromApi && d.differsFromMajority ? 'cli.fleet.differsBoth' : d.differsFromApi ? 'cli.fleet.differsApi' : 'cli.fleet.differsMajority';
    const detail = [d.stale.length ? tf(lang, 'cli.fleet.stale', { list: d.stale.join(', ') }) : null, d.missing.length ? tf(lang, 'cli.fleet.missing', { list: d.missing.join(', ') }) : null].filter(Boolean).join('; ');
    out.push(`  ${tf(lang, key, { node: d.node, detail: detail ? ` (${detail})` : '' })}`);
  }
  if (row.majority) out.push(`  ${tf(lang, 'cli.fleet.majority', { list: row.majority.join(', ') || t(lang, 'cli.fleet.noEndpoint') })}`);
  return out;
}

/** The text document, in `lang` (default `en`). */
export function fleetText(d: FleetDiagnosis, lang: Lang = 'en'): string {
  const title = { time: d.capturedAt, counts: countsText(d, lang), ...(d.cluster ? { cluster: d.cluster } : {}) };
  const lines = [tf(lang, d.cluster ? 'cli.fleet.titleFrom' : 'cli.fleet.title', title), ''];
  const nameW = Math.min(40, Math.max(4, ...d.nodes.map((n) => n.name.length)));
  const modeW = 16;
  lines.push(`${fitCell(t(lang, 'cli.col.node'), nameW)}  ${fitCell(t(lang, 'cli.col.status'), 8)}  ${fitCell(t(lang, 'cli.col.mode'), modeW)}  ${t(lang, 'cli.col.freshness')}`);
  for (const n of d.nodes) {
    const tail = n.status === 'failed' || !n.freshness ? whyText(lang, n.reason ?? '') : freshnessIn(n.freshness, lang);
    lines.push(`${fitCell(n.name, nameW)}  ${fitCell(verdictWord(lang, n.status), 8)}  ${fitCell(n.mode ?? '-', modeW)}  ${tail}`);
  }
  lines.push('');
  if (d.services.length === 0) {
    lines.push(t(lang, 'cli.fleet.allOk'));
    return lines.join('\n') + '\n';
  }
  const bad = d.nodes.filter((n) => d.services.some((s) => s.nodes[n.name]?.ownFault === true || s.divergent.some((x) => x.node === n.name))).map((n) => n.name);
  const others = d.nodes.filter((n) => n.status !== 'failed').length - bad.length;
  const svcW = Math.min(50, Math.max(7, ...d.services.map((s) => s.namespace.length + s.name.length + 1)));
  const colW = (n: string) => Math.max(8, Math.min(24, n.length));
  const othersText = others ? `  ${others === 1 ? t(lang, 'cli.fleet.otherOk') : tf(lang, 'cli.fleet.othersOk', { n: others })}` : '';
  lines.push(`${fitCell(t(lang, 'cli.col.service'), svcW)}  ${bad.map((n) => fitCell(n, colW(n))).join('  ')}${othersText}`);
  for (const s of d.services) lines.push(`${fitCell(`${s.namespace}/${s.name}`, svcW)}  ${bad.map((n) => fitCell(verdictWord(lang, s.nodes[n]?.verdict ?? 'ok'), colW(n))).join('  ')}`.trimEnd());
  lines.push('');
  for (const s of d.services.filter((x) => x.scope === 'nodes')) lines.push(...serviceDetail(s, lang), '');
  const shared = d.services.filter((x) => x.scope === 'api');
  if (shared.length) {
    lines.push(t(lang, 'cli.fleet.shared'));
    for (const s of shared) lines.push(`  ${s.namespace}/${s.name} ${verdictWord(lang, s.verdict)}: ${[...new Set(Object.values(s.nodes).flatMap((c) => c.findings.map((f) => findingMessage(f, lang))))].join('; ')}`);
    lines.push('');
  }
  return lines.join('\n');
}

/** The JSON document (`format` yaml: the same document as YAML). */
export function fleetJson(d: FleetDiagnosis, format: 'json' | 'yaml' = 'json'): string {
  return toDocument('FleetDiagnosis', {
    capturedAt: d.capturedAt,
    cluster: d.cluster ?? null,
    counts: d.counts,
    nodes: d.nodes.map((n) => ({ name: n.name, status: n.status, mode: n.mode, reason: n.reason ?? null, ...(n.freshness ? { freshness: n.freshness } : {}) })),
    services: d.services.map((s) => ({
      namespace: s.namespace,
      name: s.name,
      verdict: s.verdict,
      scope: s.scope,
      nodes: Object.fromEntries(Object.entries(s.nodes).map(([n, c]) => [n, { verdict: c.verdict, ownFault: c.ownFault, findings: c.findings }])),
      majority: s.majority,
      divergent: s.divergent,
    })),
  }, format);
}
