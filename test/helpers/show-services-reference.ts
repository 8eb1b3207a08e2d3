/**
 * The reference of test/unit/show-services-equal.test.ts: `showServices` as it was before
 * session 11 (src/report/services.ts at 6cfc6d2, verbatim but for imports): every row's
 * expectation first (`expectServiceRow`, the node's zone looked up per row), then the output,
 * JSON through `toDocument` (JSON.stringify with the bigint replacer). The faster path must
 * print exactly this.
 */
import { buildServiceView, type ServiceRow } from '../../src/analysis/service-view.js';
import { expectServiceRow, type ServiceExpectation, type TrafficExpectation } from '../../src/analysis/node-expectation.js';
import type { NodeSnapshot } from '../../src/model/snapshot.js';
import { said, UserError } from '../../src/errors.js';
import { formatServiceRef, serviceNotFound } from '../../src/model/service-ref.js';
import { headText, showHead } from '../../src/report/header.js';
import { apiWarnings, expectationText } from '../../src/report/services.js';
import { terminalSafe } from '../../src/text/terminal-safe.js';
import { isDocumentFormat, toDocument, type OutputFormat } from '../../src/text/document.js';
import { plainTable } from '../../src/text/plain-table.js';
import { t, tf, type Lang, type MessageKey } from '../../src/text/i18n.js';

function trafficJson(tr: TrafficExpectation | null) {
  if (tr === null) return null;
  const ep = (e: TrafficExpectation['endpoints'][number]) => ({ endpoint: e.hostPort, nodeName: e.nodeName ?? null, reasons: e.reasons.map((r) => r.text) });
  return { policy: tr.policy, verdict: tr.verdict, endpoints: tr.endpoints.map(ep), excluded: tr.excluded.map(ep), reasons: tr.reasons.map((r) => r.text) };
}
function expectationJson(e: ServiceExpectation) {
  return {
    distribution: e.distribution ?? null,
    internalTrafficPolicy: e.internalTrafficPolicy,
    externalTrafficPolicy: e.externalTrafficPolicy,
    sessionAffinity: e.sessionAffinity,
    ipFamilies: e.ipFamilies,
    ipFamilyPolicy: e.ipFamilyPolicy ?? null,
    skipped: e.skipped?.text ?? null,
    ports: e.ports.map((p) => ({
      family: p.family, svcPortName: p.svcPortName, protocol: p.protocol, port: p.port, clusterIP: p.clusterIP,
      nodePort: p.nodePort, healthCheckNodePort: p.healthCheckNodePort, affinitySeconds: p.affinitySeconds,
      loadBalancerIPs: p.loadBalancerIPs.map((l) => ({ ip: l.ip, ipMode: l.ipMode, programmed: l.programmed })),
      topologyMode: p.topologyMode || null, cluster: trafficJson(p.cluster), external: trafficJson(p.external),
    })),
  };
}
function serviceJson(r: ServiceRow, e: ServiceExpectation) {
  return {
    namespace: r.namespace,
    name: r.name,
    type: r.type,
    clusterIPs: r.headless ? ['None'] : r.clusterIPs,
    externalName: r.externalName ?? null,
    ports: r.ports.map((p) => ({ name: p.name, protocol: p.protocol, port: p.port, targetPort: p.targetPort, nodePort: p.nodePort ?? null, endpointPorts: p.endpointPorts })),
    endpoints: r.endpoints.map((e) => ({
      address: e.address,
      ports: e.ports.map((p) => ({ name: p.name, protocol: p.protocol, port: p.port })),
      ready: e.ready,
      serving: e.serving,
      terminating: e.terminating,
      nodeName: e.nodeName ?? null,
      zone: e.zone ?? null,
      onNode: e.onNode,
    })),
    expectation: expectationJson(e),
  };
}

function serviceRows(snapshot: NodeSnapshot): readonly ServiceRow[] {
  if (!snapshot.api?.value) throw new UserError(said('err.noApi'), said('ue.passApiFileKubectl'));
  return buildServiceView(snapshot.api.value, { nodeName: snapshot.meta.node }).rows;
}

/** `show services` as printed before session 11 (see the module comment). */
export function showServicesBefore(snapshot: NodeSnapshot, format: OutputFormat, service?: string, lang: Lang = 'en'): string {
  let rows = serviceRows(snapshot);
  if (service !== undefined) {
    const all = rows.map((r) => formatServiceRef(r));
    rows = rows.filter((_, i) => all[i] === service);
    if (rows.length === 0) throw serviceNotFound(service, all);
  }
  const objects = snapshot.api!.value!;
  const node = { name: snapshot.meta.node };
  const expectations = rows.map((r) => expectServiceRow(objects, node, r));
  if (isDocumentFormat(format)) return toDocument('ServiceList', { ...showHead(snapshot), services: rows.map((r, i) => serviceJson(r, expectations[i]!)) }, format);
  if (format === 'name') return rows.map((r) => `${terminalSafe(`service/${formatServiceRef(r)}`)}\n`).join('');
  const wide = format === 'wide';
  const columns: MessageKey[] = ['cli.col.namespace', 'cli.col.name', 'cli.col.type', 'cli.col.clusterIP', 'cli.col.ports', 'cli.col.endpoints', ...(wide ? (['cli.col.nodes', 'cli.col.itp', 'cli.col.etp', 'cli.col.affinity'] as const) : [])];
  const head = columns.map((c) => t(lang, c));
  const table = rows.map((r, i) => {
    const e = expectations[i]!;
    return [
      r.namespace,
      r.name,
      r.type,
      r.headless ? 'None' : r.externalName ?? r.clusterIPs.join(','),
      r.ports.map((p) => `${p.port}${p.nodePort ? ':' + p.nodePort : ''}/${p.protocol}→${p.targetPort}`),
      r.endpoints.map((ep) => `${ep.address}${endpointState(ep)}`),
      ...(wide ? [r.endpoints.map((ep) => ep.nodeName ?? '?'), e.internalTrafficPolicy, e.externalTrafficPolicy, e.sessionAffinity] : []),
    ];
  });
  const expected = expectations.flatMap((e) => expectationText(e, lang)).map((l) => terminalSafe(l)).join('\n');
  return `${headText(showHead(snapshot), lang)}${plainTable(head, table)}\n${tf(lang, 'cli.services.expected', { node: terminalSafe(node.name) })}\n${expected}\n${apiWarnings(snapshot)}`;
}

function endpointState(ep: ServiceRow['endpoints'][number]): string {
  const states = [...(ep.ready === false ? ['not-ready'] : []), ...(ep.terminating ? ['terminating'] : [])];
  return states.length ? `(${states.join(',')})` : '';
}
