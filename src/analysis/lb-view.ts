/**
 * The LB pane's data: Cilium's load-balancing table (`NodeSnapshot.lb`) as rows —
 * frontends (VIP:port/PROTO, flags, rev-NAT id, count/qcount), and for each its backend
 * slots (address, state, whether new connections may pick it, node) — joined to the API
 * objects: the Service a frontend belongs to (by ClusterIP/external/LB IP and port, or by
 * NodePort), and each backend's EndpointSlice endpoint (by address: node, conditions).
 * Also where the table came from (pinned BPF maps or cilium-dbg) and which map entries
 * could not be decoded, with the decoder's reason.
 *
 * Words follow Cilium (`bpf/lib/lb.h`, `pkg/loadbalancer`): `count` slots take new
 * connections, `qcount` slots after them only keep existing ones (terminating or
 * quarantined backends). Pure functions; rows keep the table's order (frontends by address).
 */
import type { Diagnostic } from '../model/diagnostics.js';
import type { LbBackendState, LbFrontend, LbProtocol, LbService, LbServiceType, LbSource, LbTable } from '../model/cilium.js';
import { formatFrontend, formatServiceFlags, SVC_FLAG } from '../model/cilium.js';
import type { TriState } from '../model/k8s.js';
import { isPending, type NodeSnapshot } from '../model/snapshot.js';
import { buildServiceView, type EndpointRow, type ServiceRow } from './service-view.js';
import { joinHostPort } from '../net/address.js';
import { formatServiceRef } from '../model/service-ref.js';
import { rowMatcher } from '../text/row-filter.js';

/**
 * Where the LB rows came from.
 * - `kind`: the table's source (`bpf-maps`, `bpf-lb-list`, …), null when nothing was read.
 * - `maps`: names of the pinned maps that answered (bpftool), in probe order.
 * - `probe`: the probe that produced the table (`bpf-lb4-services`, `cilium-bpf-lb-list`).
 * - `agent`: whether cilium-agent answered `cilium-dbg status` (`answered`), was asked and
 *   failed (`unreachable`, `agentDetail` says why), or was not asked by this source.
 */
export interface LbSourceInfo {
  readonly kind: LbSource | null;
  readonly maps: readonly string[];
  readonly probe: string | null;
  readonly agent: 'answered' | 'unreachable' | 'not-asked';
  readonly agentDetail: string | null;
}

/** The EndpointSlice conditions of a backend's endpoint (tri-state: null = unset). */
export interface LbEndpointConditions {
  readonly ready: TriState;
  readonly serving: TriState;
  readonly terminating: TriState;
}

/**
 * One backend slot of a frontend.
 * - `address`: `ip:port` (`[v6]:port`); null with `state: 'missing'` when the slot names a
 *   backend ID the backend map does not have.
 * - `state`: the backend's state; `quarantined` also when the slot entry carries the
 *   quarantine bit; null when the source does not say.
 * - `newConnections`: the slot is within `count` (true), after it in `qcount` (false), or the
 *   source has no slot numbers/count (null).
 * - `nodeName`: the source's node name, else the EndpointSlice endpoint's; `onNode`: it is
 *   the viewed node (null when unknown). `conditions`: that endpoint's, null when no
 *   endpoint of the API objects has this address.
 */
export interface LbBackendRow {
  readonly slot: number | null;
  readonly backendId: number | null;
  readonly address: string | null;
  readonly protocol: LbProtocol | null;
  readonly state: LbBackendState | 'missing' | null;
  readonly newConnections: boolean | null;
  readonly nodeName: string | null;
  readonly onNode: boolean | null;
  readonly zone: string | null;
  readonly conditions: LbEndpointConditions | null;
}

/** The Service a frontend serves: namespace, name and the Service port's name (`''` unnamed). */
export interface LbServiceRef {
  readonly namespace: string;
  readonly name: string;
  readonly portName: string;
}

/**
 * One frontend. `address` is `ip:port/PROTO[/i]`; `flags` is `ServiceFlags.String()` when
 * the source carries the bits (else the type alone, or `''`); `revNatId` is the service ID
 * (also its reverse-NAT index); `count`/`qcount` as the map holds them (null: not given);
 * `service` from the map source's own name or the API objects (null: no Service matches).
 * `raw`: the source's text of this frontend (map entries as hex, or listing lines).
 */
export interface LbFrontendRow {
  readonly key: string;
  readonly frontend: LbFrontend;
  readonly address: string;
  readonly type: LbServiceType | null;
  readonly flags: string;
  readonly revNatId: number | null;
  readonly count: number | null;
  readonly qcount: number | null;
  /** An L7 load-balancer frontend's proxy port (Envoy), null when not one or not shown. */
  readonly l7ProxyPort: number | null;
  readonly service: LbServiceRef | null;
  readonly backends: readonly LbBackendRow[];
  readonly raw: string;
}

/**
 * Map entries left undecoded, grouped by probe and reason: `origin` the probe id, `map` the
 * map's name (from the probe's pin path), `lines` the 1-based lines of the dump.
 */
export interface LbUndecoded {
  readonly origin: string;
  readonly map: string;
  readonly reason: string;
  readonly lines: readonly number[];
}

/**
 * The LB pane's data.
 * - `status`: `loading` (no snapshot yet, or its LB table still pending), `absent` (no LB table: `absentReason` says what
 *   was tried), `ready`.
 * - `total`: frontends in the table before the filter.
 * - `diagnostics`: the table's diagnostics other than undecoded entries (those are in `undecoded`).
 */
export interface LbView {
  readonly status: 'loading' | 'absent' | 'ready';
  readonly total: number;
  readonly absentReason: string | null;
  readonly source: LbSourceInfo;
  readonly frontends: readonly LbFrontendRow[];
  readonly undecoded: readonly LbUndecoded[];
  readonly diagnostics: readonly Diagnostic[];
}

const NO_SOURCE: LbSourceInfo = { kind: null, maps: [], probe: null, agent: 'not-asked', agentDetail: null };

/** Whether cilium-agent answered, from the `cilium-status` part. */
function agentOf(snapshot: NodeSnapshot): Pick<LbSourceInfo, 'agent' | 'agentDetail'> {
  const status = snapshot.ciliumStatus;
  if (!status) return { agent: 'not-asked', agentDetail: null };
  if (status.value && !status.error) return { agent: 'answered', agentDetail: status.value.version };
  return { agent: 'unreachable', agentDetail: status.error ?? 'no output' };
}

/** Why there is no table: the services-map probe's failure, else the agent listing's, else "not probed". */
function absentReasonOf(snapshot: NodeSnapshot): string {
  const tried = ['bpf-lb4-services', 'cilium-bpf-lb-list', 'cilium-service-list'].map((id) => snapshot.probes.find((p) => p.id === id)).filter((p) => p !== undefined);
  if (tried.length === 0) return 'no Cilium LB probe ran on this source';
  return tried
    .map((p) => {
      const why = p.notCaptured ? 'not in this capture' : p.status === 'missing' ? `${p.argv[0]} not found` : p.status === 'timeout' ? `timed out after ${p.durationMs} ms` : `exit code ${p.exitCode}`;
      const stderr = p.stderrTail.trim().split('\n').pop() ?? '';
      return `${p.argv.join(' ')}: ${why}${stderr ? ` (${stderr})` : ''}`;
    })
    .join('; ');
}

/** Index of Services by frontend: `ip|port|PROTO` for VIPs, `node|port|PROTO` for NodePorts. */
function serviceIndex(rows: readonly ServiceRow[]): Map<string, { row: ServiceRow; portName: string }> {
  const index = new Map<string, { row: ServiceRow; portName: string }>();
  const put = (key: string, row: ServiceRow, portName: string) => {
    if (!index.has(key)) index.set(key, { row, portName });
  };
  for (const row of rows) {
    if (row.headless || row.type === 'ExternalName') continue;
    for (const p of row.ports) {
      for (const ip of [...row.clusterIPs, ...row.externalIPs, ...row.loadBalancerIPs]) put(`${ip}|${p.port}|${p.protocol}`, row, p.name);
      if (p.nodePort !== undefined) put(`node|${p.nodePort}|${p.protocol}`, row, p.name);
    }
  }
  return index;
}

function isNodePort(svc: LbService): boolean {
  return svc.type === 'NodePort' || (svc.flags !== null && (svc.flags & SVC_FLAG.nodePort) !== 0);
}

/** Parses `namespace/name` as some listings carry it; null when it is not one. */
function refFromName(name: string | null): LbServiceRef | null {
  const m = name === null ? null : /^([^/\s]+)\/([^/\s:]+)(?::(\S+))?$/.exec(name);
  return m ? { namespace: m[1]!, name: m[2]!, portName: m[3] ?? '' } : null;
}

function frontendRow(
  svc: LbService,
  services: Map<string, { row: ServiceRow; portName: string }>,
  endpointsByAddress: Map<string, EndpointRow>,
  viewedNode: string,
): LbFrontendRow {
  const fe = svc.frontend;
  const viaApi = fe.protocol === null ? undefined : services.get(`${fe.ip}|${fe.port}|${fe.protocol}`) ?? (isNodePort(svc) ? services.get(`node|${fe.port}|${fe.protocol}`) : undefined);
  const service = refFromName(svc.name) ?? (viaApi ? { namespace: viaApi.row.namespace, name: viaApi.row.name, portName: viaApi.portName } : null);
  const own = new Map((viaApi?.row.endpoints ?? []).map((e) => [e.address, e]));
  const backends = svc.slots.map((slot): LbBackendRow => {
    const be = slot.backend;
    const endpoint = be ? own.get(be.ip) ?? endpointsByAddress.get(be.ip) : undefined;
    const quarantined = slot.flags !== null && (slot.flags & SVC_FLAG.quarantined) !== 0;
    const nodeName = be?.nodeName ?? endpoint?.nodeName ?? null;
    return {
      slot: slot.slot,
      backendId: slot.backendId ?? be?.id ?? null,
      address: be ? joinHostPort(be.ip, be.port) : null,
      protocol: be?.protocol ?? null,
      state: be === null ? 'missing' : quarantined && be.state !== 'maintenance' ? 'quarantined' : be.state,
      newConnections: slot.slot === null ? (svc.count === null || be?.state == null ? null : be.state === 'active') : svc.count === null ? null : slot.slot <= svc.count,
      nodeName,
      onNode: nodeName === null ? null : nodeName === viewedNode,
      zone: typeof be?.zone === 'string' ? be.zone : endpoint?.zone ?? null,
      conditions: endpoint ? { ready: endpoint.ready, serving: endpoint.serving, terminating: endpoint.terminating } : null,
    };
  });
  return {
    key: formatFrontend(fe),
    frontend: fe,
    address: formatFrontend(fe),
    type: svc.type,
    flags: svc.flags !== null ? formatServiceFlags(svc.flags) : svc.type ?? '',
    revNatId: svc.id,
    count: svc.count,
    qcount: svc.qcount,
    l7ProxyPort: svc.l7ProxyPort,
    service,
    backends,
    raw: svc.raw,
  };
}

/** Groups `undecoded` diagnostics by origin and reason. */
function undecodedOf(diagnostics: readonly Diagnostic[], snapshot: NodeSnapshot): LbUndecoded[] {
  const groups = new Map<string, { origin: string; map: string; reason: string; lines: number[] }>();
  for (const d of diagnostics) {
    if (d.code !== 'undecoded') continue;
    const key = `${d.origin}\n${d.message}`;
    const pin = snapshot.probes.find((p) => p.id === d.origin)?.argv.at(-1);
    const g = groups.get(key) ?? { origin: d.origin, map: pin?.split('/').pop() ?? d.origin, reason: d.message, lines: [] };
    g.lines.push(d.line);
    groups.set(key, g);
  }
  return [...groups.values()];
}

/** Map names with lb4/lb6 twins folded: `cilium_lb4_services_v2`, `cilium_lb6_services_v2` → `cilium_lb{4,6}_services_v2`. */
export function foldMapNames(maps: readonly string[]): string[] {
  const out: string[] = [];
  for (const m of maps) {
    const twin = m.includes('_lb4_') ? m.replace('_lb4_', '_lb6_') : m.includes('_lb6_') ? m.replace('_lb6_', '_lb4_') : null;
    const name = twin !== null && maps.includes(twin) ? m.replace(/_lb[46]_/, '_lb{4,6}_') : m;
    if (!out.includes(name)) out.push(name);
  }
  return out;
}

/** A backend's EndpointSlice conditions as the Services pane says them: `ready serving`, `!ready serving terminating` (unset: `ready?`); `''` without an endpoint. */
export function lbConditionsText(b: LbBackendRow): string {
  const c = b.conditions;
  if (!c) return '';
  const word = (name: string, v: TriState, showFalse: boolean) => (v === null ? `${name}?` : v ? name : showFalse ? `!${name}` : '');
  return [word('ready', c.ready, true), word('serving', c.serving, true), word('terminating', c.terminating, false)].filter(Boolean).join(' ');
}

/** The text a filter matches a frontend against: address, flags, Service, backend addresses. */
export function lbFilterText(row: LbFrontendRow): string {
  const svc = row.service ? formatServiceRef(row.service) : '';
  return `${row.address} ${row.flags} ${svc} ${row.backends.map((b) => b.address ?? '').join(' ')}`;
}

/**
 * Builds the LB pane's data from a snapshot (null: still loading). `filter` keeps the
 * frontends whose {@link lbFilterText} contains it (case-insensitive).
 */
export function buildLbView(snapshot: NodeSnapshot | null, filter = ''): LbView {
  if (!snapshot || isPending(snapshot, 'lb')) return { status: 'loading', total: 0, absentReason: null, source: NO_SOURCE, frontends: [], undecoded: [], diagnostics: [] };
  const part = snapshot.lb;
  const table: LbTable | null = part?.value ?? null;
  const source: LbSourceInfo = { kind: table?.source ?? null, maps: snapshot.lbMapsRead, probe: part?.probe?.id ?? null, ...agentOf(snapshot) };
  const diagnostics = (part?.diagnostics ?? []).filter((d) => d.code !== 'undecoded');
  const undecoded = undecodedOf(part?.diagnostics ?? [], snapshot);
  if (!table) {
    return { status: 'absent', total: 0, absentReason: part?.error ?? absentReasonOf(snapshot), source, frontends: [], undecoded, diagnostics };
  }
  const api = snapshot.api?.value;
  const rows = api ? buildServiceView(api, { nodeName: snapshot.meta.node }).rows : [];
  const endpointsByAddress = new Map<string, EndpointRow>();
  for (const r of rows) for (const e of r.endpoints) if (!endpointsByAddress.has(e.address)) endpointsByAddress.set(e.address, e);
  const index = serviceIndex(rows);
  const all = table.services.map((svc) => frontendRow(svc, index, endpointsByAddress, snapshot.meta.node));
  const { test } = rowMatcher(filter);
  const frontends = filter ? all.filter((r) => test(lbFilterText(r))) : all;
  return { status: 'ready', total: all.length, absentReason: null, source, frontends, undecoded, diagnostics };
}

/**
 * The row of `view` to open for Service `namespace/name` (Enter on the Services pane of a
 * Cilium node): its ClusterIP frontend, else its first frontend; -1 when none serves it.
 */
export function lbFrontendIndexForService(view: LbView, namespace: string, name: string): number {
  const mine = (r: LbFrontendRow) => r.service?.namespace === namespace && r.service.name === name;
  const clusterIp = view.frontends.findIndex((r) => mine(r) && r.type === 'ClusterIP');
  return clusterIp >= 0 ? clusterIp : view.frontends.findIndex(mine);
}
