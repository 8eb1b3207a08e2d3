/**
 * `nodescope show services`: Services with ports and endpoints (EndpointSlice
 * conditions ready/serving/terminating, node, zone), as JSON or a text table.
 *
 * JSON document (stable; README documents it):
 * `{apiVersion: nodescope.dev/v1, kind: ServiceList, node, kernel, source, live, capturedAt, mode,
 * evidence, services: [{namespace, name, type,
 * clusterIPs, externalName, ports: [{name, protocol, port, targetPort, nodePort, endpointPorts}],
 * endpoints: [{address, ports: [{name, protocol, port}], ready, serving, terminating, nodeName,
 * zone, onNode}], expectation}]}` — conditions are true/false/null (null: unset in the API object).
 * `expectation` is what kube-proxy on this node should do (src/analysis/node-expectation.ts):
 * `{distribution, internalTrafficPolicy, externalTrafficPolicy, sessionAffinity, ipFamilies,
 * ipFamilyPolicy, skipped, ports: [{family, svcPortName, protocol, port, clusterIP, nodePort,
 * healthCheckNodePort, loadBalancerIPs: [{ip, ipMode, programmed}], topologyMode, cluster,
 * external}]}` with `cluster`/`external` = `{policy, verdict, endpoints: [{endpoint, reasons}],
 * excluded: [{endpoint, reasons}], reasons}` (reasons as English text; `external` null when the
 * port takes no external traffic).
 */
import { buildServiceView, type ServiceRow } from '../analysis/service-view.js';
import { serviceRowExpecter, type Reason, type ServiceExpectation, type TrafficExpectation } from '../analysis/node-expectation.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import { said, UserError } from '../errors.js';
import { formatServiceRef, serviceNotFound } from '../model/service-ref.js';
import { headText, showHead } from './header.js';
import { jsonTerminalSafe, terminalSafe } from '../text/terminal-safe.js';
import { documentOf, isDocumentFormat, toDocument, type OutputFormat } from '../text/document.js';
import { toJsonNoBigint } from '../text/json.js';
import { plainTable, type PlainCell } from '../text/plain-table.js';
import { t, tf, type Lang, type MessageKey } from '../text/i18n.js';

function trafficJson(tr: TrafficExpectation | null) {
  if (tr === null) return null;
  return { policy: tr.policy, verdict: tr.verdict, endpoints: tr.endpoints.map(endpointUseJson), excluded: tr.excluded.map(endpointUseJson), reasons: tr.reasons.map((r) => r.text) };
}

/**
 * The texts of the last reason list seen, by identity: the lists of the common reasons are
 * shared by every endpoint that has them (src/analysis/node-expectation.ts `USED`), so the
 * endpoints of a traffic mostly share one array of texts (JSON prints a shared array as often
 * as it is referenced).
 */
let lastReasons: readonly Reason[] | undefined;
let lastReasonTexts: readonly string[] = [];

function endpointUseJson(e: TrafficExpectation['endpoints'][number]) {
  if (e.reasons !== lastReasons) {
    lastReasons = e.reasons;
    lastReasonTexts = e.reasons.map((r) => r.text);
  }
  return { endpoint: e.hostPort, nodeName: e.nodeName ?? null, reasons: lastReasonTexts };
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

/**
 * The text lines of one Service's expectation in `lang` (default `en`): its policies, then per
 * family and port what cluster and external traffic reach on this node and why (`→ ip:port
 * reason`, `✗ ip:port reason` for endpoints left out), or why kube-proxy skips it. API field
 * names and values (`iTP Cluster`, `PreferClose`) stay as the API spells them.
 */
export function expectationText(e: ServiceExpectation, lang: Lang = 'en'): string[] {
  // A reason's code and params pick its sentence in Japanese, as the Services pane does.
  const why = (r: Reason | undefined) => (r === undefined ? '' : lang === 'en' ? r.text : tf(lang, `reason.${r.code}`, r.params));
  const policy = [
    `trafficDistribution ${e.distribution ?? '-'}${e.distribution === 'PreferClose' ? ' (= PreferSameZone)' : ''}`,
    `iTP ${e.internalTrafficPolicy}`, `eTP ${e.externalTrafficPolicy}`,
    e.sessionAffinity === 'ClientIP' ? tf(lang, 'cli.exp.affinity', { seconds: e.ports[0]?.affinitySeconds ?? '' }) : t(lang, 'cli.exp.noAffinity'),
    `${e.ipFamilies.join(',') || t(lang, 'cli.exp.familiesUnset')}${e.ipFamilyPolicy ? ` ${e.ipFamilyPolicy}` : ''}`,
  ];
  const out = [`${formatServiceRef(e)}: ${policy.join(' · ')}`];
  if (e.skipped) return [...out, `  ${why(e.skipped)}`];
  // An endpoint's reasons: most have one (no list made for it).
  const whyAll = (rs: readonly Reason[]) => (rs.length === 1 ? why(rs[0]) : rs.map(why).join(', '));
  const traffic = (name: string, tr: TrafficExpectation | null) => {
    if (tr === null) return;
    const reasons = tr.reasons.map(why);
    out.push(`    ${name} (${tr.policy}): ${tr.verdict === 'endpoints' ? endpointCount(lang, tr.endpoints.length) : tr.verdict.toUpperCase()}${reasons.length ? ` — ${reasons.join('; ')}` : ''}`);
    for (const ep of tr.endpoints) out.push(`      → ${ep.hostPort} ${whyAll(ep.reasons)}`);
    for (const ep of tr.excluded) out.push(`      ✗ ${ep.hostPort} ${whyAll(ep.reasons)}`);
  };
  for (const p of e.ports) {
    const head = `  ${p.family} ${p.port}/${p.protocol}${p.topologyMode ? tf(lang, 'cli.exp.hints', { mode: p.topologyMode }) : ''}`;
    out.push(head);
    for (const l of p.loadBalancerIPs) if (!l.programmed) out.push(`    LB ${l.ip}: ${why(l.reason)}`);
    traffic('cluster', p.cluster);
    traffic('external', p.external);
  }
  return out;
}

/** `cli.exp.endpoints` of `n` in `lang`, each text made once (a line per traffic per port of every Service says it). */
const endpointCounts = new Map<string, string>();
function endpointCount(lang: Lang, n: number): string {
  const key = `${lang} ${n}`;
  let text = endpointCounts.get(key);
  if (text === undefined) endpointCounts.set(key, (text = tf(lang, 'cli.exp.endpoints', { n })));
  return text;
}

function serviceJson(r: ServiceRow, e: ServiceExpectation) {
  let portsOf: ServiceRow['endpoints'][number]['ports'] | undefined;
  let portsJson: { name: string; protocol: string; port: number | null }[] = [];
  return {
    namespace: r.namespace,
    name: r.name,
    type: r.type,
    clusterIPs: r.headless ? ['None'] : r.clusterIPs,
    externalName: r.externalName ?? null,
    ports: r.ports.map((p) => ({ name: p.name, protocol: p.protocol, port: p.port, targetPort: p.targetPort, nodePort: p.nodePort ?? null, endpointPorts: p.endpointPorts })),
    endpoints: r.endpoints.map((e) => {
      // A slice's endpoints share its port list (src/analysis/service-row.ts): its JSON objects are made once.
      if (e.ports !== portsOf) {
        portsOf = e.ports;
        portsJson = e.ports.map((p) => ({ name: p.name, protocol: p.protocol, port: p.port }));
      }
      return {
        address: e.address,
        ports: portsJson,
        ready: e.ready,
        serving: e.serving,
        terminating: e.terminating,
        nodeName: e.nodeName ?? null,
        zone: e.zone ?? null,
        onNode: e.onNode,
      };
    }),
    expectation: expectationJson(e),
  };
}

/** Services printed by one `JSON.stringify` in {@link servicesJsonText}: their objects die young, not all held to the end. */
const JSON_CHUNK = 64;
/** What `JSON.stringify({services: [...]}, null, 2)` prints around the items: they are then indented as in the document. */
const CHUNK_HEAD = '{\n  "services": [\n';
const CHUNK_TAIL = '\n  ]\n}';

/**
 * The `-o json` document in pieces whose concatenation is the text `toJsonNoBigint(documentOf(
 * 'ServiceList', {...head, services}))` prints: the services stringified a chunk at a time
 * inside a wrapper that puts them at the document's depth (`services` is the document's last
 * key), so no Service's JSON objects outlive its chunk (holding all of them made every
 * young-generation collection copy them), and never joined: the caller writes the pieces one
 * after another (a 44 MB document was copied once into the joined text and once more into the
 * write's buffer). Any failure of the pieces (a bigint) goes the whole way, as one piece.
 */
function servicesJsonPieces(snapshot: NodeSnapshot, rows: readonly ServiceRow[], expect: (row: ServiceRow) => ServiceExpectation): string[] {
  const head = showHead(snapshot);
  const marker = '\u0000services\u0000';
  let framed: string;
  const items: string[] = [];
  try {
    framed = JSON.stringify(documentOf('ServiceList', { ...head, services: marker }), null, 2);
    for (let i = 0; i < rows.length; i += JSON_CHUNK) {
      const chunk = JSON.stringify({ services: rows.slice(i, i + JSON_CHUNK).map((r) => serviceJson(r, expect(r))) }, null, 2);
      // Escaped chunk by chunk: the escapes are per code point and a chunk ends between two
      // Services (ASCII), so this is the whole text's escaping, without a pass over the joined text.
      if (items.length > 0) items.push(',\n');
      items.push(jsonTerminalSafe(chunk.slice(CHUNK_HEAD.length, chunk.length - CHUNK_TAIL.length)));
    }
  } catch (e) {
    if (!(e instanceof TypeError)) throw e;
    return [toJsonNoBigint(documentOf('ServiceList', { ...head, services: rows.map((r) => serviceJson(r, expect(r))) }))];
  }
  const at = framed.lastIndexOf(JSON.stringify(marker));
  const before = jsonTerminalSafe(framed.slice(0, at));
  const after = `${jsonTerminalSafe(framed.slice(at + JSON.stringify(marker).length))}\n`;
  if (items.length === 0) return [`${before}[]${after}`];
  return [`${before}[\n`, ...items, `\n  ]${after}`];
}

/** The Service rows of a snapshot; throws `UserError` when it has no API objects. */
export function serviceRows(snapshot: NodeSnapshot): readonly ServiceRow[] {
  if (!snapshot.api?.value) throw new UserError(said('err.noApi'), said('ue.passApiFileKubectl'));
  return buildServiceView(snapshot.api.value, { nodeName: snapshot.meta.node }).rows;
}

/**
 * Renders `show services` in `format` (text in `lang`, default `en`); `service` (`NAMESPACE/NAME`) shows that Service
 * alone. Throws `UserError` without API objects, or when `service` is not among them
 * (the hint lists the closest names).
 */
export function showServices(snapshot: NodeSnapshot, format: OutputFormat, service?: string, lang: Lang = 'en'): string {
  const pieces = showServicesPieces(snapshot, format, service, lang);
  return pieces.length === 1 ? pieces[0]! : pieces.join('');
}

/**
 * {@link showServices} as pieces to write one after another (their concatenation is its text):
 * `-o json` in pieces of at most {@link JSON_CHUNK} Services, the other formats in one piece.
 * Throws as {@link showServices} does.
 */
export function showServicesPieces(snapshot: NodeSnapshot, format: OutputFormat, service?: string, lang: Lang = 'en'): readonly string[] {
  let rows = serviceRows(snapshot);
  if (service !== undefined) {
    const all = rows.map((r) => formatServiceRef(r));
    rows = rows.filter((_, i) => all[i] === service);
    if (rows.length === 0) throw serviceNotFound(service, all);
  }
  // Names only: no expectation is printed, so none is computed (it is pure).
  if (format === 'name') return [rows.map((r) => `${terminalSafe(`service/${formatServiceRef(r)}`)}\n`).join('')];
  const node = { name: snapshot.meta.node };
  const expect = serviceRowExpecter(snapshot.api!.value!, node);
  // Each row's expectation and output are made together: its endpoint rows are derived once
  // (rows keep only the last few derived) and nothing of a row outlives its output.
  if (format === 'json') return servicesJsonPieces(snapshot, rows, expect);
  return [servicesText(snapshot, rows, expect, format, lang)];
}

/** The text, wide and document (YAML) formats of {@link showServicesPieces}. */
function servicesText(snapshot: NodeSnapshot, rows: readonly ServiceRow[], expect: (row: ServiceRow) => ServiceExpectation, format: OutputFormat, lang: Lang): string {
  const node = { name: snapshot.meta.node };
  if (isDocumentFormat(format)) {
    const body = { ...showHead(snapshot), services: rows.map((r) => serviceJson(r, expect(r))) };
    return toDocument('ServiceList', body, format);
  }
  const wide = format === 'wide';
  const columns: MessageKey[] = ['cli.col.namespace', 'cli.col.name', 'cli.col.type', 'cli.col.clusterIP', 'cli.col.ports', 'cli.col.endpoints', ...(wide ? (['cli.col.nodes', 'cli.col.itp', 'cli.col.etp', 'cli.col.affinity'] as const) : [])];
  const head = columns.map((c) => t(lang, c));
  const table: PlainCell[][] = [];
  const expected: string[] = [];
  for (const r of rows) {
    const e = expect(r);
    const endpoints = r.endpoints;
    table.push([
      r.namespace,
      r.name,
      r.type,
      r.headless ? 'None' : r.externalName ?? r.clusterIPs.join(','),
      r.ports.map((p) => `${p.port}${p.nodePort ? ':' + p.nodePort : ''}/${p.protocol}→${p.targetPort}`),
      endpoints.map((ep) => `${ep.address}${endpointState(ep)}`),
      ...(wide ? [endpoints.map((ep) => ep.nodeName ?? '?'), e.internalTrafficPolicy, e.externalTrafficPolicy, e.sessionAffinity] : []),
    ]);
    for (const line of expectationText(e, lang)) expected.push(terminalSafe(line));
  }
  return `${headText(showHead(snapshot), lang)}${plainTable(head, table)}\n${tf(lang, 'cli.services.expected', { node: terminalSafe(node.name) })}\n${expected.join('\n')}\n${apiWarnings(snapshot)}`;
}

/** An endpoint's conditions after its address when not plainly ready: `(not-ready)`, `(terminating)`, `(not-ready,terminating)`. */
function endpointState(ep: ServiceRow['endpoints'][number]): string {
  if (ep.ready === false) return ep.terminating ? '(not-ready,terminating)' : '(not-ready)';
  return ep.terminating ? '(terminating)' : '';
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
