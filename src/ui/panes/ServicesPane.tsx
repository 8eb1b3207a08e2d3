/**
 * The Services pane: every Service with type, ClusterIP, ports (port→targetPort,
 * nodePort) and ready/total endpoints; below, the selected Service's policies as kube-proxy
 * reads them (trafficDistribution, iTP/eTP, affinity, families, LB ipMode) and its
 * endpoints with their EndpointSlice conditions (ready/serving/terminating), node, zone,
 * and whether this node uses each for cluster and external traffic and why
 * (src/analysis/node-expectation.ts).
 */
import { Box } from 'ink';
import { Text } from '../components/SafeText.js';
import React from 'react';
import type { EndpointRow, ServiceRow } from '../../analysis/service-view.js';
import type { Diagnostic } from '../../model/diagnostics.js';
import { Diagnostics, diagnosticsHeight } from '../components/Diagnostics.js';
import { Table, windowStart, type TableRow } from '../components/Table.js';
import { t, tf, type Lang } from '../../text/i18n.js';
import { fitCell, type ColumnSpec } from '../../text/cells.js';
import { theme } from '../theme.js';
import { formatServiceRef } from '../../model/service-ref.js';
import { addressUses, type Reason, type ServiceExpectation } from '../../analysis/node-expectation.js';
import type { Verdict } from '../../analysis/diagnose/index.js';
import { verdictText } from './FindingsView.js';

/** Props of {@link ServicesPane}. `rows` null: no API objects in this source. */
export interface ServicesPaneProps {
  readonly rows: readonly ServiceRow[] | null;
  readonly diagnostics: readonly Diagnostic[];
  readonly cursor: number;
  readonly width: number;
  readonly height: number;
  readonly focused: boolean;
  readonly lang: Lang;
  /** The Service pinned with Space (`ns/name`): its NAME reads `* name (pinned)` (the mark survives a cut cell). */
  readonly pinned?: string | null;
  /** Each Service's diagnosis verdict (`ns/name` → verdict), or null when not made (the column reads `…`). */
  readonly verdicts?: ReadonlyMap<string, Verdict> | null;
  /** What this node should do with the selected Service; absent or null: no policy line, no THIS NODE column. */
  readonly expectation?: ServiceExpectation | null;
}

/** A reason in `lang` (`reason.<code>` with the reason's params). */
export function reasonText(lang: Lang, r: Reason): string {
  return tf(lang, `reason.${r.code}`, r.params);
}

/** ` · ClusterIPs A, B` for a dual-stack Service (the CLUSTER-IP column has room for the first only), else ''. */
function dualStackIPs(clusterIPs: readonly string[]): string {
  return clusterIPs.length > 1 ? ` · ClusterIPs ${clusterIPs.join(', ')}` : '';
}

/**
 * The selected Service's policy line: why kube-proxy skips it, or traffic it DROPs or
 * REJECTs; then distribution (PreferClose shown as the PreferSameZone alias it is), iTP,
 * eTP, affinity, families (and policy), the hints kube-proxy follows and the LB IPs it
 * does not program.
 */
export function policyLine(lang: Lang, e: ServiceExpectation): string {
  const dist = e.distribution === undefined ? t(lang, 'services.distNone')
    : e.distribution === 'PreferClose' ? tf(lang, 'services.distAlias', { dist: e.distribution }) : e.distribution;
  const seconds = e.ports[0]?.affinitySeconds ?? 0;
  const affinity = e.sessionAffinity === 'ClientIP' ? tf(lang, 'services.affinity', { seconds: seconds || 10800 }) : t(lang, 'services.affinityNone');
  const families = `${e.ipFamilies.join(',') || '-'}${e.ipFamilyPolicy ? ` ${e.ipFamilyPolicy}` : ''}`;
  // What empties a traffic (REJECT, DROP) or skips the Service leads: it is what the node does.
  const parts: string[] = [];
  if (e.skipped) parts.push(tf(lang, 'services.skipped', { reason: reasonText(lang, e.skipped) }));
  const verdicts = new Map<string, string[]>();
  for (const p of e.ports) {
    for (const [key, tr] of [['use.cluster', p.cluster], ['use.external', p.external]] as const) {
      if (!tr || tr.verdict === 'endpoints') continue;
      const v = t(lang, tr.verdict === 'drop' ? 'services.drop' : 'services.reject');
      const who = t(lang, key);
      verdicts.set(v, [...new Set([...(verdicts.get(v) ?? []), who])]);
    }
  }
  for (const [v, who] of verdicts) parts.push(`${who.join('+')} ${v}`);
  parts.push(tf(lang, 'services.policy', { dist, itp: e.internalTrafficPolicy, etp: e.externalTrafficPolicy, affinity, families }));
  const modes = [...new Set(e.ports.map((p) => p.topologyMode).filter((m) => m !== ''))];
  for (const mode of modes) parts.push(tf(lang, 'services.follows', { mode }));
  for (const ip of e.ports.flatMap((p) => p.loadBalancerIPs.filter((l) => !l.programmed))) {
    parts.push(tf(lang, 'services.ipMode', { ip: ip.ip, mode: ip.ipMode }));
  }
  return [...new Set(parts)].join(' · ');
}

/**
 * The THIS NODE cell of one endpoint address: `✓ hinted for zone-a` (used) or `✗ on node-b,
 * not this node` (left out, with why); when external traffic (NodePort, externalIP, LB IP)
 * treats the address otherwise than cluster traffic, both: `cluster ✓ ready; external ✗ …`.
 */
export function useCell(lang: Lang, e: ServiceExpectation, address: string): string {
  const uses = addressUses(e, address);
  const of = (traffic: 'cluster' | 'external'): string =>
    [...new Set(uses.filter((u) => u.traffic === traffic).map((u) => `${u.used ? '✓' : '✗'} ${u.reasons.map((r) => reasonText(lang, r)).join(', ')}`))].join('; ');
  const cluster = of('cluster');
  const external = of('external');
  if (external === '' || external === cluster) return cluster;
  return `${t(lang, 'use.cluster')} ${cluster}; ${t(lang, 'use.external')} ${external}`;
}

/** `80/TCP→8080` or `dns:53/UDP→53` with `:30080` for a nodePort. */
export function formatPorts(row: ServiceRow): string {
  return row.ports
    .map((p) => {
      const target = p.endpointPorts.length ? p.endpointPorts.join('|') : String(p.targetPort);
      return `${p.port}${p.nodePort ? `:${p.nodePort}` : ''}/${p.protocol}→${target}`;
    })
    .join(', ');
}

/** `2/3` ready of total endpoint addresses (unique). */
export function endpointSummary(row: ServiceRow): string {
  const all = new Set(row.endpoints.map((e) => e.address));
  const ready = new Set(row.endpoints.filter((e) => e.ready !== false).map((e) => e.address));
  return `${ready.size}/${all.size}`;
}

/** The conditions as the API names them: `ready serving`, `!ready terminating`… (unset shown as `?`). */
export function formatConditions(e: EndpointRow): string {
  const word = (name: string, v: boolean | null, showFalse: boolean) => (v === null ? `${name}?` : v ? name : showFalse ? `!${name}` : '');
  return [word('ready', e.ready, true), word('serving', e.serving, true), word('terminating', e.terminating, false)].filter(Boolean).join(' ');
}

/** The Services columns; under 100 columns TYPE and ENDPOINTS narrow so the VERDICT column leaves the names whole. */
function serviceColumns(lang: Lang, width: number): ColumnSpec[] {
  const narrow = width < 100;
  return [
    { key: 'ns', title: t(lang, 'col.namespace'), flex: 1, minWidth: 8 },
    { key: 'name', title: t(lang, 'col.name'), flex: 1, minWidth: 8 },
    { key: 'type', title: t(lang, 'col.type'), width: narrow ? 10 : 12 },
    { key: 'ip', title: t(lang, 'col.clusterIP'), width: 15 },
    { key: 'ports', title: t(lang, 'col.ports'), flex: narrow ? 1 : 2 },
    { key: 'eps', title: t(lang, narrow ? 'col.endpointsShort' : 'col.endpoints'), width: narrow ? 5 : 9, align: 'right' },
    { key: 'verdict', title: t(lang, 'col.verdict'), width: 8 },
  ];
}

const VERDICT_COLOR = { ok: undefined, degraded: 'warn', unknown: 'warn', broken: 'error' } as const;

function endpointColumns(lang: Lang, withUse: boolean): ColumnSpec[] {
  const cols: ColumnSpec[] = [
    { key: 'addr', title: t(lang, 'col.address'), width: 16 },
    { key: 'port', title: t(lang, 'col.port'), width: withUse ? 9 : 12 },
    { key: 'cond', title: t(lang, 'col.conditions'), flex: 2, ...(withUse ? { minWidth: 13 } : {}) },
    { key: 'node', title: t(lang, 'col.nodeName'), flex: 2, ...(withUse ? { minWidth: 10 } : {}) },
    { key: 'zone', title: t(lang, 'col.zone'), width: withUse ? 8 : 10 },
  ];
  if (withUse) cols.push({ key: 'use', title: t(lang, 'col.use'), flex: 3 });
  return cols;
}

/** Renders the pane. */
export function ServicesPane({ rows, diagnostics, cursor, width, height, focused, lang, pinned = null, expectation = null, verdicts = null }: ServicesPaneProps): React.JSX.Element {
  if (rows === null) {
    return (
      <Box flexDirection="column">
        <Text color={theme.muted}>{fitCell(t(lang, 'status.noApi'), width)}</Text>
        <Diagnostics diagnostics={diagnostics} width={width} lang={lang} />
      </Box>
    );
  }
  const selected = rows[cursor];
  const endpoints = selected?.endpoints ?? [];
  const diag = diagnosticsHeight(diagnostics);
  const epHeight = Math.min(Math.max(endpoints.length, 1), Math.max(2, Math.floor((height - diag) / 3)));
  const exp = selected && expectation && expectation.namespace === selected.namespace && expectation.name === selected.name ? expectation : null;
  const svcHeight = Math.max(1, height - diag - epHeight - 3 - (exp ? 1 : 0));
  // Only the rows in view are formatted (25,000 Services: a cursor move formats ~30).
  const start = windowStart(rows.length, cursor, svcHeight);
  const svcRows: TableRow[] = rows.slice(start, start + svcHeight).map((r) => {
    const verdict = verdicts?.get(formatServiceRef(r));
    const color = verdict ? VERDICT_COLOR[verdict] : r.endpoints.length === 0 && !r.externalName ? ('warn' as const) : undefined;
    return {
      key: formatServiceRef(r),
      cells: [r.namespace, pinned === formatServiceRef(r) ? tf(lang, 'services.pinnedName', { service: r.name }) : r.name, r.type, r.headless ? 'None' : r.externalName ?? r.clusterIPs[0] ?? '', formatPorts(r), endpointSummary(r), verdict ? verdictText(lang, verdict) : '…'],
      ...(color ? { color } : {}),
    };
  });
  const epRows: TableRow[] = endpoints.map((e, i) => ({
    key: `${e.address}/${i}`,
    cells: [
      e.address,
      e.ports.map((p) => `${p.port ?? '*'}/${p.protocol}`).join(','),
      formatConditions(e),
      `${e.nodeName ?? ''}${e.onNode ? ` (${t(lang, 'services.onThisNode')})` : ''}`,
      e.zone ?? '',
      ...(exp ? [useCell(lang, exp, e.address)] : []),
    ],
    ...(e.terminating ? { color: 'warn' as const } : e.ready === false ? { color: 'error' as const } : {}),
  }));
  return (
    <Box flexDirection="column">
      <Table columns={serviceColumns(lang, width)} rows={svcRows} cursor={cursor - start} width={width} height={svcHeight} focused={focused} />
      <Text bold color={theme.accent}>
        {fitCell(selected ? tf(lang, 'services.endpointsOf', { name: formatServiceRef(selected) }) + dualStackIPs(selected.clusterIPs) : '', width)}
      </Text>
      {exp ? <Text color={theme.muted}>{fitCell(policyLine(lang, exp), width)}</Text> : null}
      {selected && endpoints.length === 0 ? (
        <Text color={theme.warn}>{fitCell(t(lang, 'services.noEndpoints'), width)}</Text>
      ) : (
        <Table columns={endpointColumns(lang, exp !== null)} rows={epRows} cursor={-1} width={width} height={epHeight} focused={false} sortable={false} />
      )}
      <Diagnostics diagnostics={diagnostics} width={width} lang={lang} />
    </Box>
  );
}
