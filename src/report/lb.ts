/**
 * `nodescope show lb`: Cilium's load-balancing table (what the LB pane shows) as JSON or text.
 *
 * JSON document (stable; README documents it): the head fields (`node, kernel, source, live,
 * capturedAt, mode, evidence`), then
 * `lb: {status: 'ready'|'absent', absentReason: string|null,
 *   source: {kind: 'bpf-maps'|'bpf-lb-list'|'bpf-lb-list-json'|'service-list'|'service-list-json'|'maps-dump'|null,
 *            maps: string[], probe: string|null, agent: 'answered'|'unreachable'|'not-asked', agentDetail: string|null},
 *   frontends: [{address, ip, port, protocol, scope: 'external'|'internal', type, flags, id, count, qcount, l7ProxyPort,
 *                service: {namespace, name, portName}|null,
 *                backends: [{slot, backendId, address, protocol, state, newConnections, nodeName, onNode,
 *                            conditions: {ready, serving, terminating}|null}]}],
 *   undecoded: [{origin, map, reason, lines: number[]}],
 *   diagnostics: [{severity, origin, line, text, message, code}]}`.
 *
 * `address` is `ip:port/PROTO[/i]` (frontend) or `ip:port` (backend, null when the slot names a
 * backend ID missing from the backend map, `state: 'missing'`); `id` is the service ID, also the
 * rev-NAT index; `count` slots take new connections and `qcount` slots after them keep existing
 * ones (`newConnections` says which side a slot is on); conditions are the EndpointSlice's,
 * true/false/null (null: unset). Frontends are ordered by address, port, protocol. An absent
 * table is not an error: `status: 'absent'` with the reason (what was read and how it failed).
 */
import { buildLbView, foldMapNames, lbConditionsText, type LbFrontendRow, type LbView } from '../analysis/lb-view.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import { headText, showHead } from './header.js';
import stringWidth from 'string-width';
import { t, tf, type Lang } from '../text/i18n.js';
import { whyText } from '../text/why.js';
import { isDocumentFormat, toDocument, type OutputFormat } from '../text/document.js';
import { terminalSafe } from '../text/terminal-safe.js';

function frontendJson(f: LbFrontendRow) {
  return {
    address: f.address,
    ip: f.frontend.ip,
    port: f.frontend.port,
    protocol: f.frontend.protocol,
    scope: f.frontend.scope,
    type: f.type,
    flags: f.flags,
    id: f.revNatId,
    count: f.count,
    qcount: f.qcount,
    l7ProxyPort: f.l7ProxyPort,
    service: f.service,
    backends: f.backends.map((b) => ({
      slot: b.slot,
      backendId: b.backendId,
      address: b.address,
      protocol: b.protocol,
      state: b.state,
      newConnections: b.newConnections,
      nodeName: b.nodeName,
      onNode: b.onNode,
      conditions: b.conditions,
    })),
  };
}

/** The `lb` member of the JSON document (see the module comment). */
export function lbJson(view: LbView) {
  return {
    status: view.status,
    absentReason: view.absentReason,
    source: view.source,
    frontends: view.frontends.map(frontendJson),
    undecoded: view.undecoded,
    diagnostics: view.diagnostics,
  };
}

function sourceText(view: LbView, lang: Lang): string {
  const s = view.source;
  const from = s.kind === 'bpf-maps' ? tf(lang, 'cli.lb.fromMaps', { maps: foldMapNames(s.maps).join(', ') }) : s.kind ? tf(lang, 'cli.lb.fromDbg', { kind: s.kind }) : t(lang, 'cli.lb.fromNothing');
  const agent = s.agent === 'answered' ? tf(lang, 'cli.lb.agentAnswered', { version: s.agentDetail ?? '?' }) : s.agent === 'unreachable' ? tf(lang, 'cli.lb.agentUnreachable', { detail: s.agentDetail ?? '' }) : t(lang, 'cli.lb.agentNotReached');
  return `${tf(lang, 'cli.lb.source', { from, agent })}\n`;
}

/** `text` padded with spaces to `width` terminal cells (a Japanese word is two cells a character). */
const padCells = (text: string, width: number) => text + ' '.repeat(Math.max(0, width - stringWidth(text)));

/** Renders `show lb` in `format`. Never throws for a node without Cilium: the document says why there is no table. */
export function showLb(snapshot: NodeSnapshot, format: OutputFormat, lang: Lang = 'en'): string {
  const view = buildLbView(snapshot);
  if (isDocumentFormat(format)) return toDocument('LbMaps', { ...showHead(snapshot), lb: lbJson(view) }, format);
  if (format === 'name') return view.frontends.map((f) => `${terminalSafe(`frontend/${f.address}`)}\n`).join('');
  let out = headText(showHead(snapshot), lang);
  if (view.status !== 'ready') {
    // On a node whose mode is not Cilium the missing maps are expected, not a failure.
    const mode = showHead(snapshot).mode;
    const lead = mode === 'cilium' || mode === 'unknown' ? t(lang, 'cli.lb.noTable') : tf(lang, 'cli.lb.otherMode', { mode });
    return `${out}${terminalSafe(tf(lang, 'cli.lb.absent', { lead, reason: whyText(lang, view.absentReason ?? '') }))}\n`;
  }
  out += sourceText(view, lang);
  for (const f of view.frontends) {
    const svc = f.service ? `${f.service.namespace}/${f.service.name}${f.service.portName ? ` (${f.service.portName})` : ''}` : t(lang, 'cli.lb.noService');
    const l7 = f.l7ProxyPort !== null ? tf(lang, 'cli.lb.l7', { port: f.l7ProxyPort }) : '';
    out += `\n${terminalSafe(tf(lang, 'cli.lb.frontend', { address: f.address, flags: f.flags, id: f.revNatId ?? '?', count: f.count ?? '?', qcount: f.qcount ?? '?', l7, service: svc }))}\n`;
    if (f.backends.length === 0) out += `${t(lang, 'cli.lb.noBackends')}\n`;
    for (const b of f.backends) {
      const where = b.newConnections === null ? '' : t(lang, b.newConnections ? 'cli.lb.new' : 'cli.lb.held');
      const cells = [String(b.slot ?? '-').padStart(4), padCells(b.address ?? tf(lang, 'cli.lb.backendMissing', { id: b.backendId ?? '?' }), 22), (b.state ?? '?').padEnd(11), padCells(where, 4), (b.nodeName ?? '').padEnd(12), lbConditionsText(b)];
      out += `${terminalSafe(cells.join('  ').trimEnd())}\n`;
    }
  }
  for (const u of view.undecoded) out += `${terminalSafe(tf(lang, 'cli.lb.undecoded', { map: u.map, count: u.lines.length, lines: u.lines.join(', '), reason: whyText(lang, u.reason) }))}\n`;
  for (const d of view.diagnostics.filter((d) => d.severity !== 'info')) out += `${terminalSafe(`! ${d.origin}:${d.line}: ${d.message}: ${d.text}`)}\n`;
  return out;
}
