/**
 * `nodescope show services`: Services with ports and endpoints (EndpointSlice
 * conditions ready/serving/terminating, node, zone), as JSON or a text table.
 *
 * JSON document (stable; README documents it):
 * `{node, kernel, source, live, capturedAt, mode, evidence, services: [{namespace, name, type,
 * clusterIPs, externalName, ports: [{name, protocol, port, targetPort, nodePort, endpointPorts}],
 * endpoints: [{address, ports: [{name, protocol, port}], ready, serving, terminating, nodeName,
 * zone, onNode}]}]}` — conditions are true/false/null (null: unset in the API object).
 */
import Table from 'cli-table3';
import { buildServiceView, type ServiceRow } from '../analysis/service-view.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import { UserError } from '../errors.js';
import { formatServiceRef, serviceNotFound } from '../model/service-ref.js';
import { headText, showHead } from './header.js';
import { terminalSafe } from '../text/terminal-safe.js';
import { toJson } from '../text/json.js';
import { safeCells } from './safe-cells.js';

function serviceJson(r: ServiceRow) {
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
  };
}

/** The Service rows of a snapshot; throws `UserError` when it has no API objects. */
export function serviceRows(snapshot: NodeSnapshot): readonly ServiceRow[] {
  if (!snapshot.api?.value) throw new UserError('this source has no API objects', 'pass --api-file FILE (kubectl get services,endpointslices,pods,nodes -A -o json)');
  return buildServiceView(snapshot.api.value, { nodeName: snapshot.meta.node }).rows;
}

/**
 * Renders `show services` in `format`; `service` (`NAMESPACE/NAME`) shows that Service
 * alone. Throws `UserError` without API objects, or when `service` is not among them
 * (the hint lists the closest names).
 */
export function showServices(snapshot: NodeSnapshot, format: 'json' | 'text', service?: string): string {
  let rows = serviceRows(snapshot);
  if (service !== undefined) {
    const all = rows.map((r) => formatServiceRef(r));
    rows = rows.filter((_, i) => all[i] === service);
    if (rows.length === 0) throw serviceNotFound(service, all);
  }
  if (format === 'json') return toJson({ ...showHead(snapshot), services: rows.map(serviceJson) });
  const table = new Table({ head: ['NAMESPACE', 'NAME', 'TYPE', 'CLUSTER-IP', 'PORTS', 'ENDPOINTS'], style: { head: [], border: [] } });
  for (const r of rows) {
    table.push(safeCells([
      r.namespace,
      r.name,
      r.type,
      r.headless ? 'None' : r.externalName ?? r.clusterIPs.join(','),
      r.ports.map((p) => `${p.port}${p.nodePort ? ':' + p.nodePort : ''}/${p.protocol}→${p.targetPort}`).join(' '),
      r.endpoints.length ? r.endpoints.map((e) => `${e.address}${e.ready === false ? ' (not ready)' : ''}${e.terminating ? ' (terminating)' : ''}${e.nodeName ? ' @' + e.nodeName : ''}`) : '<none>',
    ]));
  }
  return headText(showHead(snapshot)) + table.toString() + '\n' + apiWarnings(snapshot);
}

/**
 * The API objects' warnings and errors as `! origin:line: message: text` lines (as
 * `show rules` prints its diagnostics), e.g. an endpoint address that is not an IP and
 * was left out; '' when there are none.
 */
export function apiWarnings(snapshot: NodeSnapshot): string {
  let out = '';
  for (const d of snapshot.api?.diagnostics ?? []) {
    if (d.severity !== 'info') out += `${terminalSafe(`! ${d.origin}:${d.line}: ${d.message}${d.text ? `: ${d.text}` : ''}`)}\n`;
  }
  return out;
}
