/**
 * `cilium-dbg service list` (older binary name `cilium`): the agent's services, text or `-o json`.
 *
 * Format source: cilium/cilium `cilium-dbg/cmd/service_list.go` (`printServiceList`, Go
 * tabwriter minwidth 5 padding 3, every cell tab-terminated) and `api/v1/models`
 * (`Service`, `ServiceSpec`, `FrontendAddress`, `BackendAddress`). Column sets seen:
 *
 * - `ID  Frontend  Service Type  Backend` (1.7+); backends `1 => 10.0.0.1:80/TCP (active)`,
 *   one per row, later rows with empty ID/Frontend/Type; `(preferred)` with `--clustermesh-affinity`;
 *   the Backend cell is empty for a service without backends;
 * - `ID  Frontend  Backend` (≤1.6, no type, backends without state);
 * - `Frontend  Service Type  Backend` (a build that printed the frontend in place of the ID).
 *
 * JSON: `[{"spec": …, "status": {"realized": …}}]`; `realized` is preferred over `spec`.
 * Older agents omit `frontend-address.protocol`; newer backends add `protocol`, `state`,
 * `nodeName`, `preferred`, `weight`, `zone`.
 */
import type { Diagnostic, ParseResult } from '../model/diagnostics.js';
import { diagnostic } from '../model/diagnostics.js';
import type { LbBackend, LbService, LbSlot, LbTable } from '../model/cilium.js';
import { backendStateFromName, formatFrontend, protocolFromName, serviceTypeFromName } from '../model/cilium.js';
import { canonicalIp, formatAddrCluster, parseL3n4 } from './cilium-addr.js';
import type { HeaderColumn } from './cilium-columns.js';
import { headerColumns, isKubectlNotice, splitRow, textLines } from './cilium-columns.js';
import { jsonItems, looksLikeJson, num, obj, parseJsonDocument, str } from './cilium-json.js';
import { CILIUM_TABWRITER, tabwrite } from './cilium-tabwriter.js';
import { joinHostPort } from '../net/address.js';

const HEADERS: readonly (readonly string[])[] = [
  ['ID', 'Frontend', 'Service Type', 'Backend'],
  ['ID', 'Frontend', 'Backend'],
  ['Frontend', 'Service Type', 'Backend'],
];

const BACKEND_RE = /^(\d+) => (\S+)(?: \(([a-z]+)\))?( \(preferred\))?$/;

interface Building {
  id: number | null;
  frontend: LbService['frontend'];
  type: LbService['type'];
  slots: LbSlot[];
  raw: string[];
}

function finish(b: Building): LbService {
  return { frontend: b.frontend, id: b.id, type: b.type, flags: null, count: null, qcount: null, algorithm: null, affinityTimeout: null, l7ProxyPort: null, name: null, slots: b.slots, raw: b.raw.join('\n') };
}

function backendSlot(text: string): LbSlot | null {
  const m = BACKEND_RE.exec(text);
  const addr = m ? parseL3n4(m[2] ?? '') : null;
  if (!m || addr === null) return null;
  const state = m[3] === undefined ? null : backendStateFromName(m[3]);
  if (m[3] !== undefined && state === null) return null;
  const backend: LbBackend = { id: null, ip: addr.ip, port: addr.port, protocol: addr.protocol, state, weight: null, clusterId: addr.clusterId, zone: null, nodeName: null };
  return { slot: null, backendId: null, backend, flags: null };
}

/** One text row: whether it starts a service (and the service if readable) and its Backend cell. */
function readRow(line: string, cols: readonly HeaderColumn[]): { starts: boolean; service: Omit<Building, 'slots' | 'raw'> | null; backendText: string } {
  const cells = splitRow(line, cols);
  const cell = (name: string) => cells[cols.findIndex((c) => c.name === name)] ?? '';
  const hasId = cols.some((c) => c.name === 'ID');
  const backendText = cell('Backend');
  if ((hasId ? cell('ID') : cell('Frontend')) === '') return { starts: false, service: null, backendText };
  const fe = parseL3n4(cell('Frontend'));
  const typeText = cell('Service Type').replace(/ \(Remote\)$/, '');
  const type = cols.some((c) => c.name === 'Service Type') ? serviceTypeFromName(typeText) : null;
  if (fe === null || (hasId && !/^\d+$/.test(cell('ID'))) || (typeText !== '' && type === null)) return { starts: true, service: null, backendText };
  const service = { id: hasId ? Number(cell('ID')) : null, frontend: { ip: fe.ip, port: fe.port, protocol: fe.protocol, scope: fe.scope }, type };
  return { starts: true, service, backendText };
}

/** Parses `cilium-dbg service list` text or `-o json` into services (slots without numbers). Never throws. */
export function parseCiliumServiceList(text: string, origin: string): ParseResult<LbTable> {
  // `-o json` (list: an array; get: one object), perhaps after kubectl's notice line.
  if (looksLikeJson(text)) return parseJson(text, origin);
  const diags: Diagnostic[] = [];
  const services: LbService[] = [];
  let cols: HeaderColumn[] | null = null;
  let current: Building | null = null;
  const lines = textLines(text);
  for (const [i, line] of lines.entries()) {
    const report = (code: string, msg: string) => diags.push(diagnostic('error', origin, i + 1, line, code, msg));
    if (line.trim() === '' || isKubectlNotice(line)) continue;
    const header = HEADERS.map((h) => headerColumns(line, h)).find((c) => c !== null && c[0]?.start === 0);
    if (header || cols === null) {
      if (header) cols = header;
      else report('no-header', 'row before the ID/Frontend/Backend header');
      if (current) services.push(finish(current));
      current = null;
      continue;
    }
    const row = readRow(line, cols);
    if (row.starts) {
      if (current) services.push(finish(current));
      current = row.service && { ...row.service, slots: [], raw: [line] };
      if (current === null) {
        report('bad-row', 'service row not understood (ID, frontend address or type)');
        continue;
      }
    } else if (current === null) {
      report('orphan-row', 'backend row before any service row');
      continue;
    } else current.raw.push(line);
    if (row.backendText === '') continue;
    const slot = backendSlot(row.backendText);
    if (slot === null) report('bad-backend', `backend "${row.backendText}" not understood`);
    else current.slots.push(slot);
  }
  if (current) services.push(finish(current));
  return { value: { source: 'service-list', services, backends: [], revNats: [] }, diagnostics: diags };
}

function parseJson(text: string, origin: string): ParseResult<LbTable> {
  const diags: Diagnostic[] = [];
  const services: LbService[] = [];
  const doc = parseJsonDocument(text, origin, diags);
  const items = jsonItems(doc);
  (items ?? []).forEach((item, i) => {
    const raw = JSON.stringify(item);
    const spec = obj(obj(obj(item)?.status)?.realized) ?? obj(obj(item)?.spec);
    const fe = obj(spec?.['frontend-address']);
    const ip = canonicalIp(str(fe?.ip) ?? '');
    const port = num(fe?.port) ?? 0;
    if (spec === null || ip === null) {
      diags.push(diagnostic('error', origin, 0, raw, 'bad-service', `service #${i} has no usable frontend-address`));
      return;
    }
    const protoText = str(fe?.protocol);
    const flags = obj(spec.flags);
    const typeText = str(flags?.type);
    const type = typeText === null ? null : serviceTypeFromName(typeText);
    if (typeText !== null && type === null) diags.push(diagnostic('warning', origin, 0, raw, 'unknown-type', `service type "${typeText}" unknown`));
    const slots: LbSlot[] = [];
    for (const b of Array.isArray(spec['backend-addresses']) ? spec['backend-addresses'] : []) {
      const be = obj(b);
      const beIp = canonicalIp((str(be?.ip) ?? '').replace(/@\d+$/, ''));
      if (be === null || beIp === null) {
        diags.push(diagnostic('error', origin, 0, JSON.stringify(b), 'bad-backend', 'backend without a usable ip'));
        continue;
      }
      const cluster = /@(\d+)$/.exec(str(be.ip) ?? '');
      const zone = str(be.zone) ?? num(be.zone);
      const backend: LbBackend = {
        id: null,
        ip: beIp,
        port: num(be.port) ?? 0,
        protocol: str(be.protocol) === null ? null : protocolFromName(str(be.protocol) ?? ''),
        state: str(be.state) === null ? null : backendStateFromName(str(be.state) ?? ''),
        weight: num(be.weight),
        clusterId: cluster ? Number(cluster[1]) : 0,
        zone,
        nodeName: str(be.nodeName),
      };
      slots.push({ slot: null, backendId: null, backend, flags: null });
    }
    const ns = str(flags?.namespace);
    const name = str(flags?.name);
    services.push({
      frontend: { ip, port, protocol: protoText === null ? null : protocolFromName(protoText), scope: str(fe?.scope) === 'internal' ? 'internal' : 'external' },
      id: num(spec.id),
      type,
      flags: null,
      count: null,
      qcount: null,
      algorithm: null,
      affinityTimeout: null,
      l7ProxyPort: null,
      name: name === null ? null : ns === null ? name : `${ns}/${name}`,
      slots,
      raw,
    });
  });
  if (doc !== undefined && items === null) diags.push(diagnostic('error', origin, 0, text.slice(0, 200), 'unexpected-json', 'expected an array of services or one service object'));
  return { value: { source: 'service-list-json', services, backends: [], revNats: [] }, diagnostics: diags };
}

/**
 * Formats a table as `cilium-dbg service list` (1.7+ columns) prints it: sorted by ID,
 * backends `N => ip:port/PROTO (state)` numbered in slot order, Go tabwriter padding with
 * trailing spaces. A null state prints as `active`, a null protocol as `ANY`.
 */
export function formatCiliumServiceList(table: LbTable): string {
  let cells = 'ID\tFrontend\tService Type\tBackend\t\n';
  const services = [...table.services].sort((a, b) => (a.id ?? 0) - (b.id ?? 0));
  for (const svc of services) {
    const head = `${svc.id ?? 0}\t${formatFrontend({ ...svc.frontend, protocol: svc.frontend.protocol ?? 'ANY' })}\t${svc.type ?? 'ClusterIP'}\t`;
    const backends = svc.slots.flatMap((s) => (s.backend ? [s.backend] : []));
    if (backends.length === 0) cells += `${head}\t\n`;
    backends.forEach((be, i) => {
      const addr = `${joinHostPort(formatAddrCluster(be.ip, be.clusterId), be.port)}/${be.protocol ?? 'ANY'}`;
      cells += `${i === 0 ? head : '\t\t\t'}${i + 1} => ${addr} (${be.state ?? 'active'})\t\n`;
    });
  }
  return tabwrite(cells, CILIUM_TABWRITER);
}
