/**
 * `nodescope show conntrack [--service NS/NAME] -o json|text`: the node's conntrack
 * entries with their NAT view, the Service each belongs to and whether it is stale (the
 * Conntrack pane's data, for scripts), in the order conntrack printed them.
 *
 * JSON document (stable; README documents it): the head fields (`node, kernel, source,
 * live, capturedAt, mode, evidence`), then
 * - `service`: the `--service` asked for, or null;
 * - `summary: {shown, total, nfConntrackCount, nfConntrackMax, percent, stale, staleShown, staleChecked}` —
 *   entries listed / in the table (`total` null when only events were captured: the table's
 *   size is unknown), the kernel's counters (null when not read), count/max × 100; `stale` and
 *   `staleShown` null and `staleChecked` false on a Cilium node (its own conntrack is not compared yet);
 * - `entries: [{line, family, proto, protoNum, state, timeout, flags, mark, zone, use, id,
 *   orig: {src, dst, sport, dport, icmpType, icmpCode, icmpId, zone, packets, bytes}, reply: {…},
 *   nat: {text, client: {ip, port}, destination, answeredBy, clientAsSeen, dnat, snat},
 *   service: {namespace, name, via: 'vip'|'nodePort'|'endpoint'} | null, status: 'ok'|'stale'|'no-service',
 *   staleReason: 'endpoint-gone'|'not-translated'|null, pointsAt: {ip, port} | null, raw}]` —
 *   field names are conntrack's own; `timeout` in seconds as read (no countdown); absent
 *   values are null; packets/bytes are decimal strings (64-bit exact), null without accounting;
 *   The entries also carry every other field conntrack printed, null when absent: `secmark`,
 *   `secctx`, `deltaTime` (seconds), `start`/`stop` (as printed), `helper`, `labels`,
 *   `userspace: {portid, progname}`, `extra: [{key, value}]`; tuples also `srcKey`/`dstKey` (GRE);
 * - `events: [{flow, type: 'NEW'|'UPDATE'|'DESTROY', time, line, entry: {…the entry fields
 *   above without nat/service/status…}}]` — `conntrack -E` events in time order (`time`:
 *   `-o timestamp` seconds as printed, null without it), never counted in `entries`;
 *   `eventFlows: [{flow, family, proto, orig, reply, ended, events}]` — the flows they are
 *   about (`ended`: the last event is DESTROY; `events`: how many), `reportedEvents`:
 *   conntrack's own count of events shown, null when not printed;
 * - `error`: why the conntrack probe failed after printing part of the table, or null;
 * - `diagnostics: [{severity, origin, line, text, message, code}]` of the conntrack output.
 *
 * Throws `UserError` when conntrack was not read, when `service` is not `ns/name`, and
 * when it names a Service the API objects do not have (or there are none).
 */
import { percentText } from '../text/percent.js';
import { formatEndpoint, type ConntrackEndpoint } from '../analysis/conntrack-nat.js';
import { conntrackIndex, conntrackRow, conntrackStaleChecked, type ConntrackRowView } from '../analysis/conntrack-view.js';
import { said, UserError } from '../errors.js';
import { conntrackEventFlows, type ConntrackEventFlow } from '../analysis/conntrack-events.js';
import type { ConntrackEntry, ConntrackTuple } from '../model/conntrack.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import { refFromKey, requireServiceRef, serviceNotFound } from '../model/service-ref.js';
import { headText, showHead } from './header.js';
import { t, tf, type Lang } from '../text/i18n.js';
import { whyText } from '../text/why.js';
import { isDocumentFormat, toDocument, type OutputFormat } from '../text/document.js';
import { terminalSafe } from '../text/terminal-safe.js';

/** Options of {@link showConntrack}: only the entries of Service `service` (`ns/name`). */
export interface ShowConntrackOptions {
  readonly service?: string;
}

function tupleJson(t: ConntrackTuple) {
  return {
    src: t.src,
    dst: t.dst,
    sport: t.sport ?? null,
    dport: t.dport ?? null,
    icmpType: t.icmpType ?? null,
    icmpCode: t.icmpCode ?? null,
    icmpId: t.icmpId ?? null,
    srcKey: t.srcKey ?? null,
    dstKey: t.dstKey ?? null,
    zone: t.zone ?? null,
    packets: t.packets ?? null,
    bytes: t.bytes ?? null,
  };
}

function endpointJson(e: ConntrackEndpoint) {
  return { ip: e.ip, port: e.port ?? null };
}

/** Every field conntrack printed for one entry or event, null when absent (see the module doc). */
function entryFieldsJson(e: ConntrackEntry) {
  return {
    line: e.line,
    family: e.family,
    proto: e.proto,
    protoNum: e.protoNum,
    state: e.state ?? null,
    timeout: e.timeout ?? null,
    flags: e.flags,
    mark: e.mark ?? null,
    secmark: e.secmark ?? null,
    secctx: e.secctx ?? null,
    zone: e.zone ?? null,
    use: e.use ?? null,
    id: e.id ?? null,
    deltaTime: e.deltaTime ?? null,
    start: e.start ?? null,
    stop: e.stop ?? null,
    helper: e.helper ?? null,
    labels: e.labels ?? null,
    userspace: e.userspace ? { portid: e.userspace.portid, progname: e.userspace.progname ?? null } : null,
    extra: e.extra ? e.extra.map((x) => ({ key: x.key, value: x.value ?? null })) : null,
    orig: tupleJson(e.orig),
    reply: tupleJson(e.reply),
  };
}

function entryJson(r: ConntrackRowView) {
  const e = r.entry;
  const { namespace, name } = r.service === null ? { namespace: undefined, name: undefined } : refFromKey(r.service);
  return {
    ...entryFieldsJson(e),
    nat: {
      text: r.nat.text,
      client: endpointJson(r.nat.client),
      destination: endpointJson(r.nat.destination),
      answeredBy: endpointJson(r.nat.answeredBy),
      clientAsSeen: endpointJson(r.nat.clientAsSeen),
      dnat: r.nat.dnat,
      snat: r.nat.snat,
    },
    service: r.service === null ? null : { namespace, name, via: r.via },
    status: r.status,
    staleReason: r.staleReason,
    pointsAt: r.pointsAt ? endpointJson(r.pointsAt) : null,
    raw: e.raw,
  };
}

/** Why an entry is stale, in the words the pane uses (in `lang`, default `en`). */
export function staleText(r: ConntrackRowView, lang: Lang = 'en'): string {
  if (r.staleReason === 'endpoint-gone' && r.pointsAt) return tf(lang, 'cli.ct.staleGone', { endpoint: formatEndpoint(r.pointsAt), service: r.service ?? '' });
  return tf(lang, 'cli.ct.staleUntranslated', { service: r.service ?? '' });
}

function entryText(r: ConntrackRowView, lang: Lang): string {
  const e = r.entry;
  const fields = [...e.flags.map((f) => `[${f}]`), ...(e.mark !== undefined ? [`mark=${e.mark}`] : []), ...(e.zone !== undefined ? [`zone=${e.zone}`] : [])];
  const head = terminalSafe([e.proto, e.state ?? '-', e.timeout ?? '-', r.service ?? '-', r.nat.text, ...fields].join(' '));
  return r.status === 'stale' ? `${head}\n  ! ${terminalSafe(staleText(r, lang))}\n` : `${head}\n`;
}

/** `tcp 10.1.5.10:51546 → 10.1.8.10:80` (IPv6 bracketed): a flow's original direction. */
function flowText(f: ConntrackEventFlow): string {
  const o = f.orig;
  const end = (ip: string, port: number | undefined) => formatEndpoint(port === undefined ? { ip } : { ip, port });
  return `${f.proto} ${end(o.src, o.sport)} → ${end(o.dst, o.dport)}`;
}

function eventsText(flows: readonly ConntrackEventFlow[], reported: number | undefined, lang: Lang): string {
  const n = flows.reduce((k, f) => k + f.events.length, 0);
  let out = `${tf(lang, 'cli.ct.events', { events: n, flows: flows.length, reported: reported !== undefined ? tf(lang, 'cli.ct.reported', { n: reported }) : '' })}\n`;
  for (const f of flows) {
    out += `${tf(lang, 'cli.ct.flow', { flow: f.flow, tuple: flowText(f), ended: f.ended ? t(lang, 'cli.ct.destroyed') : '' })}\n`;
    for (const ev of f.events) {
      const e = ev.entry;
      const fields = [ev.time ?? '-', ev.type, e.state ?? '-', e.timeout ?? '-', ...e.flags.map((x) => `[${x}]`)];
      out += `  ${fields.join(' ')}\n`;
    }
  }
  return out;
}

/** Renders `show conntrack` in `format` (see the module doc). */
export function showConntrack(snapshot: NodeSnapshot, format: OutputFormat, options: ShowConntrackOptions = {}, lang: Lang = 'en'): string {
  const ct = snapshot.conntrack;
  if (!ct?.value) {
    throw new UserError(said('ue.ct.notRead', { node: terminalSafe(snapshot.meta.node), error: ct?.error ? `: ${ct.error}` : '' }), said('ue.ct.notReadHint'));
  }
  const index = conntrackIndex(snapshot);
  const service = options.service ?? null;
  let selected = -1;
  if (service !== null) {
    requireServiceRef(service, '--service kube-system/kube-dns');
    if (!index.servicesKnown) throw new UserError(said('ue.ct.serviceNeedsApi'), said('ue.passApiFileKubectl'));
    selected = index.services.findIndex((s) => s.label === service);
    if (selected < 0) throw serviceNotFound(service, index.services.map((s) => s.label));
  }
  const rows: ConntrackRowView[] = [];
  for (let i = 0; i < index.rows.length; i++) if (service === null || index.serviceOf[i] === selected) rows.push(conntrackRow(index, i));
  const count = snapshot.conntrackCount;
  const max = snapshot.conntrackMax;
  // A capture of events only (`conntrack -E`) did not read the table: its size is unknown, not 0.
  const tableRead = index.rows.length > 0 || !(ct.value.events?.length ?? 0);
  const staleChecked = conntrackStaleChecked(snapshot);
  const summary = {
    shown: rows.length,
    total: tableRead ? index.rows.length : null,
    nfConntrackCount: count,
    nfConntrackMax: max,
    percent: count !== null && max !== null && max > 0 ? (count / max) * 100 : null,
    // Unknown, not 0, where stale flows are not checked (a Cilium node), as the pane and diagnose say.
    stale: staleChecked ? index.staleCount : null,
    staleShown: staleChecked ? rows.filter((r) => r.status === 'stale').length : null,
    staleChecked,
  };
  const flows = conntrackEventFlows(ct.value.events ?? []);
  if (isDocumentFormat(format)) {
    const events = flows
      .flatMap((f) => f.events.map((ev) => ({ flow: f.flow, type: ev.type, time: ev.time, line: ev.line, entry: entryFieldsJson(ev.entry) })))
      .sort((a, b) => (a.time !== null && b.time !== null ? Number(a.time) - Number(b.time) : 0) || a.line - b.line);
    const eventFlows = flows.map((f) => ({ flow: f.flow, family: f.family, proto: f.proto, orig: tupleJson(f.orig), reply: tupleJson(f.reply), ended: f.ended, events: f.events.length }));
    return toDocument('ConntrackList', { ...showHead(snapshot), service, summary, entries: rows.map(entryJson), events, eventFlows, reportedEvents: ct.value.reportedEvents ?? null, error: ct.error, diagnostics: ct.diagnostics }, format);
  }
  const usage = count !== null && max !== null ? tf(lang, 'cli.ct.usage', { count, max, percent: summary.percent !== null ? tf(lang, 'cli.ct.percent', { percent: percentText(summary.percent) }) : '' }) : '';
  let out = headText(showHead(snapshot), lang);
  out += tableRead
    ? `${tf(lang, 'cli.ct.summary', { scope: service ? tf(lang, 'cli.ct.scope', { service }) : '', shown: summary.shown, total: summary.total ?? 0, usage, stale: summary.stale === null ? t(lang, 'cli.ct.staleNotChecked') : tf(lang, 'cli.ct.staleCount', { stale: summary.stale }) })}\n`
    : `${tf(lang, 'cli.ct.tableNotRead', { usage })}\n`;
  if (ct.error) out += `${terminalSafe(tf(lang, 'cli.ct.incomplete', { error: whyText(lang, ct.error) }))}\n`;
  if (!index.servicesKnown) out += `${t(lang, 'cli.ct.noApi')}\n`;
  for (const r of rows) out += entryText(r, lang);
  if (flows.length > 0) out += eventsText(flows, ct.value.reportedEvents, lang);
  for (const d of ct.diagnostics.filter((d) => d.severity !== 'info')) out += `${terminalSafe(`! ${d.origin}:${d.line}: ${d.message}: ${d.text}`)}\n`;
  return out;
}
