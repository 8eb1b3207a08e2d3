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
import { freshnessText } from '../analysis/proxy-freshness.js';
import type { FleetDiagnosis, FleetServiceRow } from '../fleet/diagnose.js';
import { fitCell } from '../text/cells.js';
import { toDocument } from '../text/document.js';

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

/** `3 nodes: 1 ok, 1 degraded, 1 broken, 0 failed` (unknown only when there are some). */
export function countsText(d: FleetDiagnosis): string {
  const c = d.counts;
  return `${d.nodes.length} node${d.nodes.length === 1 ? '' : 's'}: ${c.ok} ok, ${c.degraded} degraded, ${c.broken} broken, ${c.failed} failed${c.unknown ? `, ${c.unknown} unknown` : ''}`;
}

function serviceDetail(row: FleetServiceRow): string[] {
  const out = [`${row.namespace}/${row.name} (${row.verdict}):`];
  for (const [node, cell] of Object.entries(row.nodes)) {
    if (!cell.ownFault) continue;
    out.push(`  ${node} ${cell.verdict}:`);
    for (const f of cell.findings) out.push(`    ${f.message}`);
  }
  for (const d of row.divergent) {
    const against = [d.differsFromApi ? 'the API' : null, d.differsFromMajority ? 'the majority' : null].filter(Boolean).join(' and ');
    const detail = [d.stale.length ? `stale ${d.stale.join(', ')}` : null, d.missing.length ? `missing ${d.missing.join(', ')}` : null].filter(Boolean).join('; ');
    out.push(`  ${d.node}: backend set differs from ${against}${detail ? ` (${detail})` : ''}`);
  }
  if (row.majority) out.push(`  majority programs: ${row.majority.join(', ') || '(no endpoint)'}`);
  return out;
}

/** The text document. */
export function fleetText(d: FleetDiagnosis): string {
  const lines = [`fleet captured ${d.capturedAt}${d.cluster ? ` from ${d.cluster}` : ''} — ${countsText(d)}`, ''];
  const nameW = Math.min(40, Math.max(4, ...d.nodes.map((n) => n.name.length)));
  lines.push(`${fitCell('NODE', nameW)}  ${fitCell('STATUS', 8)}  ${fitCell('MODE', 16)}  FRESHNESS / REASON`);
  for (const n of d.nodes) {
    const tail = n.status === 'failed' || !n.freshness ? (n.reason ?? '') : freshnessText(n.freshness);
    lines.push(`${fitCell(n.name, nameW)}  ${fitCell(n.status, 8)}  ${fitCell(n.mode ?? '-', 16)}  ${tail}`);
  }
  lines.push('');
  if (d.services.length === 0) {
    lines.push('every Service is ok on every captured node, and every node programs the same backends');
    return lines.join('\n') + '\n';
  }
  const bad = d.nodes.filter((n) => d.services.some((s) => s.nodes[n.name]?.ownFault === true || s.divergent.some((x) => x.node === n.name))).map((n) => n.name);
  const others = d.nodes.filter((n) => n.status !== 'failed').length - bad.length;
  const svcW = Math.min(50, Math.max(7, ...d.services.map((s) => s.namespace.length + s.name.length + 1)));
  const colW = (n: string) => Math.max(8, Math.min(24, n.length));
  lines.push(`${fitCell('SERVICE', svcW)}  ${bad.map((n) => fitCell(n, colW(n))).join('  ')}${others ? `  (${others} other node${others === 1 ? '' : 's'}: all ok)` : ''}`);
  for (const s of d.services) lines.push(`${fitCell(`${s.namespace}/${s.name}`, svcW)}  ${bad.map((n) => fitCell(s.nodes[n]?.verdict ?? 'ok', colW(n))).join('  ')}`.trimEnd());
  lines.push('');
  for (const s of d.services.filter((x) => x.scope === 'nodes')) lines.push(...serviceDetail(s), '');
  const shared = d.services.filter((x) => x.scope === 'api');
  if (shared.length) {
    lines.push('the same on every node (the API objects, not a node):');
    for (const s of shared) lines.push(`  ${s.namespace}/${s.name} ${s.verdict}: ${[...new Set(Object.values(s.nodes).flatMap((c) => c.findings.map((f) => f.message)))].join('; ')}`);
    lines.push('');
  }
  return lines.join('\n');
}

/** The JSON document. */
export function fleetJson(d: FleetDiagnosis): string {
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
  });
}
