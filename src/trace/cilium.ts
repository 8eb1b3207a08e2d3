/**
 * Step mode on a Cilium kube-proxy-replacement node: the packet never meets a KUBE- rule;
 * Cilium's eBPF programs rewrite it, reading the LB maps nodescope decodes. The walk, per
 * entry point (cilium/cilium `bpf/bpf_sock.c`, `bpf/bpf_lxc.c`, `bpf/bpf_host.c`, `bpf/lib/lb.h`):
 *
 * - `host`: the process's `connect()`/`sendmsg()` runs `cil_sock4_connect` (cgroup
 *   connect4, socket LB): service lookup, backend choice, and the socket is connected to
 *   the backend — no per-packet DNAT. A local address without its own frontend is looked
 *   up again as the NodePort wildcard `0.0.0.0:<port>` (`sock4_wildcard_lookup`);
 * - `pod`: the same at the pod's socket unless socket LB is host-namespace only
 *   (`socketLB.hostNamespaceOnly`, default false), then `bpf_lxc` (`cil_from_container`,
 *   tc ingress of the pod's host-side device) looks the destination up and DNATs per packet;
 * - `external`: `bpf_host` (`cil_from_netdev`, tc ingress of the node's device; XDP when
 *   acceleration is on) looks up the NodePort / external frontend and DNATs.
 *
 * Backend choice (`lb4_select_backend_id_random`): slot `1 + random % count`, so only the
 * `count` slots (active backends) take new connections; the `qcount` slots after them
 * (terminating, quarantined, maintenance) are skipped. Maglev is unsupported (the maglev
 * map is not decoded). `count == 0` drops with `DROP_NO_SERVICE` (per packet) or fails
 * `connect()` with EHOSTUNREACH (socket LB). Pure; throws only {@link UserError} for an
 * entry or branch option that cannot be resolved.
 */
import type { CiliumStatus, LbBackend, LbService, LbTable } from '../model/cilium.js';
import { formatFrontend, protocolFromNumber, SVC_FLAG } from '../model/cilium.js';
import type { NetInterface, Route } from '../model/iproute.js';
import { routeLookup } from '../model/iproute.js';
import {
  backendEntryHex,
  backendValueText,
  lbMapNames,
  lookupBackend,
  lookupRevNat,
  lookupService,
  revNatEntryHex,
  serviceEntryHex,
  serviceKeyHex,
  serviceKeyText,
  serviceValueText,
  type ServiceKey,
} from './cilium-maps.js';
import { chooseBranch, endpointText, type BranchChoice } from './context.js';
import { newFlowEntry, replyTupleOf, tupleOf } from './conntrack.js';
import { isOwnAddress, type NetView } from './routing.js';
import { PROTOCOL_NUMBERS, resolveEntry, type PacketSpec } from './packet.js';
import type { PacketHeader, StepKind, TraceBranch, TraceConntrack, TraceReply, TraceResult, TraceStep, TraceVerdict, VerdictKind } from './types.js';
import { joinHostPort } from '../net/address.js';
import { phrase, stepSaid, stepSaidEn, type StepSaid } from '../text/step-said.js';

/** Cilium's drop reason for a service without backends (`bpf/lib/common.h`, `pkg/monitor/api/drop.go`: "Service backend not found"). */
export const DROP_NO_SERVICE = { name: 'DROP_NO_SERVICE', code: -158 } as const;

/** Socket LB as the walk applies it: read from `cilium-dbg status`, or Cilium's documented defaults. */
export interface SocketLbSetting {
  readonly enabled: boolean;
  readonly hostNamespaceOnly: boolean;
  /** True when the values come from the agent's status; false: Cilium's defaults, assumed. */
  readonly read: boolean;
}

/**
 * What the Cilium walk reads: the LB table, the node's addresses and routes, the agent
 * status when captured, and the names of the maps that answered (`lbMapsRead`).
 */
export interface CiliumTraceInput {
  readonly lb: LbTable;
  readonly addrs: readonly NetInterface[];
  readonly routes: readonly Route[];
  readonly status: CiliumStatus | null;
  readonly mapsRead: readonly string[];
}

/** Options: which random branch to follow (default the first). */
export interface CiliumWalkOptions {
  readonly branch?: BranchChoice;
}

/**
 * Socket LB settings: `status.socketLB` when the agent said (`Socket LB: Enabled`, `Socket
 * LB Coverage: Hostns-only`), else Cilium's defaults with kube-proxy replacement:
 * enabled, `socketLB.hostNamespaceOnly=false` (docs: kubeproxy-free, "Socket LoadBalancer Bypass in Pod Namespace").
 */
export function socketLbSetting(status: CiliumStatus | null): SocketLbSetting {
  const s = status?.socketLB;
  if (s && s.enabled !== null) return { enabled: s.enabled, hostNamespaceOnly: s.hostNamespaceOnly ?? false, read: true };
  return { enabled: true, hostNamespaceOnly: false, read: false };
}

/**
 * An attach point as bpftool names its attach type: `cgroup/connect4` → `connect4`
 * (BPF_CGROUP_INET4_CONNECT), `tc ingress lxc12ab` → `tc ingress` (the device is in the step's chain).
 */
export function attachWords(chain: string): string {
  const tc = /^(tc (?:ingress|egress))\b/.exec(chain);
  if (tc) return tc[1]!;
  return chain.replace(/^cgroup\//, '').split(' ')[0]!;
}

/** The verdict of a map lookup that found no entry (the Step pane and `trace` print it beside ✗). */
export const NO_ENTRY = 'no entry';

type StepInit = Partial<Omit<TraceStep, 'index' | 'header' | 'kind' | 'reason' | 'said'>> & { kind: StepKind; said: StepSaid };

/** The walk's mutable state: the header as it is now, the steps and the notes. */
class CiliumWalk {
  readonly steps: TraceStep[] = [];
  readonly notes: string[] = [];
  /** The attach point of the program running now (the last `bpf-prog` step's), in bpftool's words. */
  attach: string | null = null;
  constructor(public h: PacketHeader) {}
  record(s: StepInit): TraceStep {
    if (s.kind === 'bpf-prog' && s.chain) this.attach = attachWords(s.chain);
    const step: TraceStep = {
      index: this.steps.length,
      backend: 'ebpf',
      hook: null,
      family: this.h.family === 'ipv4' ? 'ip' : 'ip6',
      table: null,
      chain: null,
      priority: null,
      ruleIndex: null,
      handle: null,
      ruleText: null,
      matched: null,
      verdict: null,
      counters: null,
      branches: null,
      ...(this.attach ? { attach: this.attach } : {}),
      ...s,
      reason: stepSaidEn(s.said),
      header: this.h,
    };
    this.steps.push(step);
    return step;
  }
  note(n: string): void {
    if (!this.notes.includes(n)) this.notes.push(n);
  }
}

/** What the LB station decided: translated to a backend, no frontend, dropped, or unsupported. */
type LbOutcome =
  | { kind: 'translated'; svc: LbService; backend: LbBackend }
  | { kind: 'miss' }
  | { kind: 'stop'; verdict: VerdictKind; said: StepSaid };

/** Where the LB station runs: program object and attach point, and whether it is the socket. */
interface LbPlace {
  readonly prog: string;
  readonly attach: string;
  readonly socket: boolean;
  readonly scopeSwitch: boolean;
}

function protoNumber(h: PacketHeader): number {
  return PROTOCOL_NUMBERS[h.proto];
}

function protoName(n: number): string {
  return protocolFromNumber(n) ?? String(n);
}

/** One service-map lookup step per key tried; returns the lookup. */
function serviceLookupSteps(w: CiliumWalk, input: CiliumTraceInput, place: LbPlace, ip: string, port: number, what: StepSaid) {
  const maps = lbMapNames(w.h.family);
  const look = lookupService(input.lb, ip, port, protoNumber(w.h), place.scopeSwitch);
  for (const k of look.tried) {
    const hit = look.service !== null && k === look.key ? look.service : null;
    const keyHex = serviceKeyHex(k);
    const entry = hit ? serviceEntryHex(hit, k) : null;
    const key = serviceKeyText(k, protoName(k.proto));
    const said = hit
      ? hit.id !== null
        ? stepSaid('svc-lookup-hit-fe', { what, key, value: serviceValueText(hit), frontend: formatFrontend(hit.frontend) })
        : stepSaid('svc-lookup-hit', { what, key, value: serviceValueText(hit) })
      : stepSaid('svc-lookup-miss', { what, key });
    // A miss says so beside its ✗, as a hit names its service.
    w.record({ kind: 'map-lookup', table: place.prog, chain: maps.services, ruleText: entry ?? (keyHex ? `key ${keyHex} (no entry)` : null), matched: hit !== null, verdict: hit ? `service ${hit.id ?? '?'}` : NO_ENTRY, said });
  }
  if (look.anyProto) w.note(`the frontend was found under protocol 0 (ANY): the map was written without L4 protocol differentiation`);
  return look;
}

/** Probability and endpoint of every slot of `svc`; the slots after `count` are skipped for new connections. */
function slotBranches(svc: LbService): { branches: { slot: number; backend: LbBackend | null; backendId: number | null; endpoint: string | null }[]; skipped: StepSaid[] } {
  const count = svc.count ?? svc.slots.length;
  const branches: { slot: number; backend: LbBackend | null; backendId: number | null; endpoint: string | null }[] = [];
  const skipped: StepSaid[] = [];
  for (const s of svc.slots) {
    const n = s.slot ?? 0;
    const b = s.backend;
    const ep = b ? joinHostPort(b.ip, b.port) : null;
    const eligible = s.slot === null ? b?.state === 'active' : n >= 1 && n <= count;
    if (eligible) branches.push({ slot: n, backend: b, backendId: s.backendId ?? b?.id ?? null, endpoint: ep });
    else skipped.push(stepSaid('lb-skipped-slot', { slot: s.slot ?? '-', id: s.backendId ?? '?', ep: ep ? ` ${ep}` : '', state: b?.state ?? stepSaid('word-unknown-state'), count }));
  }
  return { branches, skipped };
}

/**
 * A listing that prints no `count` (`cilium-dbg bpf lb list`) and no backend states: which of
 * the listed slots take new flows is not in the capture (all of them, or none when every backend
 * is terminating). The candidates are shown; the verdict is `unknown`, naming what would decide it.
 */
function countUnknown(w: CiliumWalk, svc: LbService, place: LbPlace, mapName: string, lb: LbTable): LbOutcome {
  const listed = svc.slots.map((s) =>
    s.backend
      ? stepSaid('lb-listed-slot', { slot: s.slot ?? '?', ep: joinHostPort(s.backend.ip, s.backend.port), state: s.backend.state ? ` (${s.backend.state})` : '' })
      : stepSaid('lb-listed-missing', { slot: s.slot ?? '?', id: s.backendId ?? '?' }),
  );
  const from = stepSaid(lb.source === 'service-list' || lb.source === 'service-list-json' ? 'lb-from-service-list' : 'lb-from-bpf-lb-list');
  const said = stepSaid('lb-count-unknown', { id: svc.id ?? '?', frontend: formatFrontend(svc.frontend), from, n: svc.slots.length, listed: { list: listed, sep: '; ', sepJa: '、' } });
  w.record({ kind: 'final', table: place.prog, chain: mapName, matched: true, verdict: 'unknown', said });
  return { kind: 'stop', verdict: 'unknown', said: stepSaid('lb-count-unknown-verdict', { frontend: formatFrontend(svc.frontend), from }) };
}

/** The LB station: service lookup, backend choice, backend lookup, rev-NAT entry. */
function lbStation(w: CiliumWalk, input: CiliumTraceInput, place: LbPlace, branch: BranchChoice, wildcard: boolean): LbOutcome {
  const h = w.h;
  const maps = lbMapNames(h.family);
  // ICMP has no port: the key's dport is 0, and no frontend has protocol ICMP.
  const v = h.family === 'ipv4' ? '4' : '6';
  const what = h.dport === null ? stepSaid('svc-lookup-noport', { v, proto: h.proto }) : stepSaid('svc-lookup', { v });
  let look = serviceLookupSteps(w, input, place, h.dst, h.dport ?? 0, what);
  if (look.service === null && wildcard && isOwnAddress({ interfaces: input.addrs, routes: input.routes }, h.dst)) {
    const any = h.family === 'ipv4' ? '0.0.0.0' : '::';
    look = serviceLookupSteps(w, input, place, any, h.dport ?? 0, stepSaid('svc-lookup-wildcard', { dst: h.dst }));
  }
  const svc = look.service;
  const servicesUnreadable = input.lb.unreadable?.find((u) => u.map.startsWith(`cilium_lb${h.family === 'ipv4' ? '4' : '6'}_services`));
  if (svc === null && servicesUnreadable) {
    const why = stepSaid('lb-map-undecoded', { map: servicesUnreadable.map, n: servicesUnreadable.entries, why: phrase(servicesUnreadable.reason) });
    w.record({ kind: 'final', table: place.prog, chain: maps.services, matched: null, verdict: 'unknown', said: stepSaid('lb-svc-unknown', { endpoint: endpointText(h.dst, h.dport), why }) });
    return { kind: 'stop', verdict: 'unknown', said: stepSaid('lb-svc-unknown-verdict', { why }) };
  }
  if (svc === null) return { kind: 'miss' };
  if (svc.algorithm === 'maglev' && !place.socket) {
    w.record({ kind: 'unsupported', table: place.prog, chain: 'cilium_lb4_maglev', said: stepSaid('lb-maglev', { id: svc.id ?? '?', read: stepSaid(input.mapsRead.some((m) => m.includes('maglev')) ? 'word-read-not-decoded' : 'word-not-read') }) });
    return { kind: 'stop', verdict: 'unsupported', said: stepSaid('lb-maglev-verdict') };
  }
  const disagree = input.lb.disagreements?.filter((d) => d.frontend === formatFrontend(svc.frontend)) ?? [];
  for (const d of disagree) w.note(`the sources disagree on ${d.frontend}: ${d.message}`);
  if (svc.l7ProxyPort !== null || (svc.flags !== null && (svc.flags & SVC_FLAG.l7LoadBalancer) !== 0)) {
    const port = svc.l7ProxyPort !== null ? stepSaid('lb-proxy-port', { port: svc.l7ProxyPort }) : stepSaid('lb-proxy-port-unknown');
    const why = stepSaid('lb-l7-proxy', { id: svc.id ?? '?', frontend: formatFrontend(svc.frontend), port });
    w.record({ kind: 'final', table: place.prog, chain: maps.services, matched: true, verdict: svc.l7ProxyPort !== null ? `proxy port ${svc.l7ProxyPort}` : 'L7 proxy', said: why });
    return { kind: 'stop', verdict: 'local', said: stepSaid('lb-l7-verdict', { port }) };
  }
  if (svc.count === null && svc.slots.length > 0) return countUnknown(w, svc, place, maps.services, input.lb);
  const count = svc.count ?? 0;
  if (count === 0) {
    const why = stepSaid(svc.count === null ? 'lb-no-slot' : 'lb-count-zero', { id: svc.id ?? '?', frontend: formatFrontend(svc.frontend) });
    const held = svc.slots.length > 0 ? stepSaid(svc.slots.length === 1 ? 'lb-held-terminating-one' : 'lb-held-terminating', { n: svc.slots.length }) : '';
    if (svc.slots.length > 0) w.note('a frontend whose backends are all terminating drops new flows while established ones continue to the terminating backends (graceful termination: cilium PRs 18814, 31840)');
    if (place.socket) {
      w.record({ kind: 'final', table: place.prog, chain: place.attach, verdict: 'rejected', said: stepSaid('no-backend-ehostunreach-step', { why, held, drop: DROP_NO_SERVICE.name, code: DROP_NO_SERVICE.code }) });
      return { kind: 'stop', verdict: 'rejected', said: stepSaid('no-backend-ehostunreach', { why }) };
    }
    w.record({ kind: 'final', table: place.prog, chain: place.attach, verdict: 'dropped', said: stepSaid('no-backend-drop-step', { why, held, drop: DROP_NO_SERVICE.name, code: DROP_NO_SERVICE.code }) });
    return { kind: 'stop', verdict: 'dropped', said: stepSaid('no-backend-drop', { why, drop: DROP_NO_SERVICE.name }) };
  }
  const { branches, skipped } = slotBranches(svc);
  if (branches.length === 0) {
    w.record({ kind: 'unsupported', table: place.prog, chain: maps.services, said: stepSaid('lb-slots-missing', { id: svc.id ?? '?', count: svc.count ?? '?' }) });
    return { kind: 'stop', verdict: 'unsupported', said: stepSaid('lb-slots-missing-verdict') };
  }
  const chosen = chooseBranch(branch, branches.map((b) => ({ endpoint: b.endpoint, target: `slot ${b.slot}` })));
  const pick = branches[chosen]!;
  const traceBranches: TraceBranch[] = branches.map((b, i) => ({ index: i, probability: 1 / branches.length, target: `slot ${b.slot} → backend ${b.backendId ?? '?'}`, endpoint: b.endpoint, ruleIndex: null, chosen: i === chosen }));
  const slotKey: ServiceKey = { ...look.key, slot: pick.slot };
  const skippedText = skipped.length ? stepSaid('lb-skipped', { slots: { list: skipped, sep: '; ', sepJa: '、' } }) : '';
  w.record({
    kind: 'map-lookup',
    table: place.prog,
    chain: maps.services,
    ruleText: serviceEntryHex(svc, slotKey),
    matched: true,
    verdict: `backend ${pick.backendId ?? '?'}`,
    said: stepSaid('lb-random-select', { count: svc.count ?? '?', slot: pick.slot, n: branches.length, key: serviceKeyText(slotKey, protoName(slotKey.proto)), id: pick.backendId ?? '?', skipped: skippedText }),
    branches: traceBranches,
  });
  if (skipped.length) w.note('only slots 1..count take new connections; terminating, quarantined and maintenance backends sit after count (qcount) and serve only flows already in Cilium\'s conntrack (graceful termination, Cilium 1.11+; quarantine 1.14+; maintenance 1.16+). Before graceful termination, a terminating backend was removed from the maps at once');
  // A listing names the backend in the slot itself; the maps name an id to look up.
  const backend = pick.backend ?? (pick.backendId !== null ? lookupBackend(input.lb, pick.backendId) : null);
  const unreadable = input.lb.unreadable?.find((u) => u.map.startsWith(`cilium_lb${h.family === 'ipv4' ? '4' : '6'}_backends`));
  if (backend === null && (unreadable || (input.lb.source === 'bpf-maps' && !input.mapsRead.some((m) => m.startsWith(`cilium_lb${h.family === 'ipv4' ? '4' : '6'}_backends`))))) {
    const why = unreadable ? stepSaid('lb-map-undecoded', { map: unreadable.map, n: unreadable.entries, why: phrase(unreadable.reason) }) : stepSaid('lb-backends-not-read', { map: maps.backends });
    w.record({ kind: 'final', table: place.prog, chain: maps.backends, matched: null, verdict: 'unknown', said: stepSaid('lb-backend-unknown', { id: pick.backendId ?? '?', why }) });
    return { kind: 'stop', verdict: 'unknown', said: stepSaid('lb-backend-unknown-verdict', { id: pick.backendId ?? '?', why }) };
  }
  if (backend === null) {
    w.record({ kind: 'final', table: place.prog, chain: maps.backends, matched: false, verdict: 'dropped', said: stepSaid('lb-backend-missing', { id: pick.backendId ?? '?', map: maps.backends, code: DROP_NO_SERVICE.code }) });
    return { kind: 'stop', verdict: 'dropped', said: stepSaid('lb-backend-missing-verdict', { drop: DROP_NO_SERVICE.name, id: pick.backendId ?? '?' }) };
  }
  w.record({ kind: 'map-lookup', table: place.prog, chain: maps.backends, ruleText: backendEntryHex(backend), matched: true, verdict: joinHostPort(backend.ip, backend.port), said: stepSaid('lb-backend-lookup', { id: String(backend.id), value: backendValueText(backend) }) });
  return { kind: 'translated', svc, backend };
}

function rewrite(w: CiliumWalk, place: LbPlace, svc: LbService, b: LbBackend): void {
  const from = endpointText(w.h.dst, w.h.dport);
  w.h = { ...w.h, dst: b.ip, dport: w.h.dport === null ? null : b.port };
  const to = endpointText(b.ip, b.port);
  const udp = w.h.proto === 'udp';
  const said = place.socket
    ? stepSaid(udp ? 'socket-lb-sendmsg' : 'socket-lb-connect', { to, from, map: `cilium_lb${w.h.family === 'ipv4' ? '4' : '6'}_reverse_sk`, id: svc.id ?? '?' })
    : stepSaid('dnat-to-endpoint', { from, to, id: svc.id ?? '?' });
  // Socket LB rewrites the address the application gave connect()/sendmsg(): no packet is DNATed.
  const verdict = place.socket ? `${udp ? 'send' : 'connect'} to ${to}` : `dnat to ${to}`;
  w.record({ kind: 'nat', table: place.prog, chain: place.attach, verdict, said });
}

/**
 * The reply's reverse translation, recorded after the forward walk (it happens on the reply).
 * Socket LB (`bpf/bpf_sock.c` `__sock4_xlate_rev`, run by `cil_sock4_getpeername` and
 * `cil_sock4_recvmsg`): the application reads the peer — TCP through getpeername(), UDP through
 * recvmsg() — and the program answers the frontend from `cilium_lb4_reverse_sk`, keyed by the
 * socket's cookie and the backend, written at connect()/sendmsg(); it keeps the answer only while
 * the frontend still has that rev_nat_index. That map is not read (its key holds the cookie), so
 * the step shows the entry the walk's own connect step writes. Per packet: `lb4_rev_nat` rewrites
 * the reply's source from `cilium_lb4_reverse_nat` (key rev_nat_index).
 */
function revNatStep(w: CiliumWalk, input: CiliumTraceInput, svc: LbService, socket: boolean, frontend: { ip: string; port: number | null }): void {
  const maps = lbMapNames(w.h.family);
  if (svc.id === null) return;
  const fam = w.h.family === 'ipv4' ? '4' : '6';
  if (socket) {
    const tcp = w.h.proto === 'tcp';
    const hook = `${tcp ? 'getpeername' : 'recvmsg'}${fam}`;
    const front = endpointText(frontend.ip, frontend.port);
    w.record({
      kind: 'map-lookup',
      table: 'bpf_sock',
      chain: `cilium_lb${fam}_reverse_sk`,
      attach: hook,
      ruleText: null,
      matched: true,
      verdict: front,
      said: stepSaid('rev-sk-reply', { call: tcp ? 'getpeername()' : 'recvmsg()', wrote: tcp ? 'connect()' : 'sendmsg()', prog: `cil_sock${fam}_${tcp ? 'getpeername' : 'recvmsg'}`, map: `cilium_lb${fam}_reverse_sk`, backend: endpointText(w.h.dst, w.h.dport), frontend: front, id: svc.id }),
    });
    return;
  }
  const r = lookupRevNat(input.lb, svc.id);
  w.record({
    kind: 'map-lookup',
    table: 'bpf_lxc',
    chain: maps.revNat,
    ruleText: r ? revNatEntryHex(r) : null,
    matched: r !== null,
    verdict: r ? joinHostPort(r.ip, r.port) : NO_ENTRY,
    said: r ? stepSaid('rev-nat-entry', { id: r.id, ip: r.ip, port: r.port, use: stepSaid('rev-nat-use-packet') }) : stepSaid('rev-nat-missing', { id: svc.id }),
  });
}

function headerOf(spec: PacketSpec, src: string, iif: string | null): PacketHeader {
  return { family: spec.family, proto: spec.proto, src, dst: spec.dst, sport: spec.sport, dport: spec.dport, icmpType: spec.icmpType, icmpCode: spec.icmpCode, icmpId: spec.icmpId, tcpFlags: spec.tcpFlags, mark: spec.mark, iif, oif: null, ct: 'new', randomSport: false };
}

/** The routing decision for the packet as it is now; sets `oif` and returns the ending. */
function route(w: CiliumWalk, input: CiliumTraceInput, entry: 'pod' | 'host' | 'external', translated: boolean): { kind: VerdictKind; said: StepSaid; nexthop: string | null } {
  const r = routeLookup(input.routes, w.h.dst);
  const ep = endpointText(w.h.dst, w.h.dport);
  if (r === null) {
    w.record({ kind: 'routing', backend: 'kernel', said: stepSaid('no-route', { dst: w.h.dst }) });
    return { kind: 'rejected', said: stepSaid('no-route-unreachable', { dst: w.h.dst }), nexthop: null };
  }
  const rt = r.route;
  const nexthop = rt.gateway ?? w.h.dst;
  w.h = { ...w.h, oif: rt.type === 'local' ? 'lo' : rt.dev };
  const where = { dst: w.h.dst, route: `${rt.dst}${rt.gateway ? ` via ${rt.gateway}` : ''} dev ${rt.dev ?? '?'}` };
  w.record({ kind: 'routing', backend: 'kernel', said: stepSaid(rt.type === 'local' ? 'route-to-local' : 'route-to', where) });
  if (rt.type === 'local') return { kind: 'local', said: stepSaid('delivered-local', { endpoint: ep }), nexthop: null };
  const kind: VerdictKind = entry === 'host' ? 'sent' : 'forwarded';
  const key = kind === 'sent' ? (rt.gateway ? 'sent-out-via' : 'sent-out') : rt.gateway ? 'forwarded-out-via' : 'forwarded-out';
  const out = stepSaid(key, { dev: rt.dev ?? '?', endpoint: ep, gw: rt.gateway ?? '' });
  return { kind, said: translated ? out : stepSaid('out-unanswered', { out }), nexthop };
}

function conntrackAndReply(spec: PacketSpec, entryHeader: PacketHeader, final: PacketHeader, translated: LbService | null, socket: boolean): { ct: TraceConntrack; reply: TraceReply } {
  // What the kernel's conntrack sees: the packet as it leaves the LB (socket LB: the backend from the start).
  const original = tupleOf(socket ? { ...entryHeader, dst: final.dst, dport: final.dport } : final);
  const replyTuple = replyTupleOf(tupleOf(final));
  const ct = newFlowEntry(spec.proto, original, replyTuple, spec.tcpFlags.includes('syn'));
  const received = replyTupleOf(tupleOf(entryHeader));
  const reason = translated === null
    ? 'no translation: the reply comes back as sent'
    : socket
      ? `the reply arrives from ${endpointText(final.dst, final.dport)} unchanged on the wire; the application sees ${endpointText(entryHeader.dst, entryHeader.dport)} through the socket (socket LB reverse translation)`
      : `Cilium rewrites the reply's source back to ${endpointText(entryHeader.dst, entryHeader.dport)} (rev_nat_index ${translated.id ?? '?'}, cilium_lb${final.family === 'ipv4' ? '4' : '6'}_reverse_nat)`;
  return { ct, reply: { sent: replyTuple, received: socket ? replyTuple : { ...received, icmpType: replyTuple.icmpType }, reason } };
}

/**
 * Walks `spec` through Cilium's datapath on the node of `input` (see the module comment)
 * and returns the same {@link TraceResult} shape as the netfilter walk: steps of kind
 * `bpf-prog`, `map-lookup` (key/value bytes in `ruleText`), `nat`, `routing`, `final`.
 * Throws {@link UserError} when the entry cannot be resolved or the branch option names
 * no backend of the random choice.
 */
export function walkCilium(input: CiliumTraceInput, spec: PacketSpec, options: CiliumWalkOptions = {}): TraceResult {
  const net: NetView = { interfaces: input.addrs, routes: input.routes };
  const branch = options.branch ?? { kind: 'first' };
  const entry = resolveEntry(spec, net);
  const entryHeader = headerOf(spec, entry.src, entry.iif);
  const w = new CiliumWalk(entryHeader);
  const sock = socketLbSetting(input.status);
  const fam = spec.family === 'ipv4' ? '4' : '6';
  w.note('no KUBE- chains: kube-proxy replacement rewrites Service addresses in eBPF, so nft/iptables show no Service rules; the LB map steps above are the rewrite table (`nodescope show lb` lists the maps)');
  if (!sock.read) w.note('socket LB settings assumed, not read (no cilium-dbg status in this source): enabled with socketLB.hostNamespaceOnly=false, Cilium\'s default with kube-proxy replacement');
  w.note('Cilium\'s own conntrack (cilium_ct4_global) is not read: the packet is taken as the first of a new flow');

  const l4Socket = spec.proto === 'tcp' || spec.proto === 'udp';
  const socketApplies = sock.enabled && l4Socket && (entry.entry === 'host' || (entry.entry === 'pod' && !sock.hostNamespaceOnly));
  let outcome: LbOutcome = { kind: 'miss' };
  let socket = false;
  if (entry.entry !== 'external') {
    const who = entry.entry === 'host' ? stepSaid('who-node-process') : stepSaid('who-pod', { ip: entry.src });
    if (socketApplies) {
      const place: LbPlace = { prog: 'bpf_sock', attach: spec.proto === 'udp' ? `cgroup/sendmsg${fam}` : `cgroup/connect${fam}`, socket: true, scopeSwitch: entry.entry === 'pod' };
      const how = stepSaid(entry.entry === 'pod' ? (sock.read ? 'sock-pods-included' : 'sock-pods-included-assumed') : 'sock-host-namespace');
      w.record({ kind: 'bpf-prog', table: place.prog, chain: place.attach, said: stepSaid('sock-lb-call', { who, call: spec.proto === 'udp' ? 'sendmsg()' : 'connect()', prog: `cil_sock${fam}_${spec.proto === 'udp' ? 'sendmsg' : 'connect'}`, how }) });
      outcome = lbStation(w, input, place, branch, true);
      socket = outcome.kind === 'translated';
      if (outcome.kind === 'translated') rewrite(w, place, outcome.svc, outcome.backend);
    } else if (entry.entry === 'host') {
      w.record({ kind: 'bpf-prog', table: 'bpf_sock', chain: `cgroup/connect${fam}`, matched: false, said: l4Socket ? stepSaid('sock-lb-disabled') : stepSaid('sock-lb-l4-only', { proto: spec.proto }) });
    }
    if (entry.entry === 'pod' && outcome.kind !== 'stop') {
      const dev = entry.iif ?? 'lxc?';
      const place: LbPlace = { prog: 'bpf_lxc', attach: `tc ingress ${dev}`, socket: false, scopeSwitch: true };
      const already = outcome.kind === 'translated' ? stepSaid('already-backend', { endpoint: endpointText(w.h.dst, w.h.dport) }) : '';
      w.record({ kind: 'bpf-prog', table: place.prog, chain: place.attach, said: stepSaid('from-container', { dev, already, l4: l4Socket ? '' : stepSaid('sock-lb-not-proto', { proto: spec.proto }) }) });
      if (outcome.kind === 'translated') {
        serviceLookupSteps(w, input, place, w.h.dst, w.h.dport ?? 0, stepSaid('svc-lookup-per-packet'));
      } else {
        outcome = lbStation(w, input, place, branch, false);
        if (outcome.kind === 'translated') rewrite(w, place, outcome.svc, outcome.backend);
      }
    }
  } else {
    const dev = entry.iif ?? '?';
    const place: LbPlace = { prog: 'bpf_host', attach: `tc ingress ${dev}`, socket: false, scopeSwitch: false };
    w.record({ kind: 'bpf-prog', table: place.prog, chain: place.attach, said: stepSaid('from-netdev', { dev, fam }) });
    w.note('XDP acceleration (loadBalancer.acceleration) is not read; assumed disabled, Cilium\'s default: with it, the same lookup runs in cil_xdp_entry before the packet reaches tc');
    outcome = lbStation(w, input, place, branch, false);
    if (outcome.kind === 'translated') rewrite(w, place, outcome.svc, outcome.backend);
  }

  let ending: { kind: VerdictKind; said: StepSaid; nexthop: string | null };
  if (outcome.kind === 'stop') {
    ending = { kind: outcome.verdict, said: outcome.said, nexthop: null };
  } else {
    const svcIp = input.lb.services.some((s) => s.frontend.ip === spec.dst);
    if (outcome.kind === 'miss' && svcIp) w.note(`${spec.dst} is a Service frontend, but no entry has protocol ${spec.proto.toUpperCase()}${spec.dport !== null ? ` and port ${spec.dport}` : ''}: Cilium does not translate it${spec.proto.startsWith('icmp') ? ' — a ClusterIP does not answer ping' : ''}`);
    ending = route(w, input, entry.entry, outcome.kind === 'translated' || !svcIp);
    if (outcome.kind === 'translated' && entry.entry === 'external' && ending.kind === 'forwarded' && ending.nexthop !== w.h.dst) {
      w.note('a NodePort backend on another node is reached with SNAT to the node address by bpf_host (nodeport_nat_fwd) unless DSR is on; not modelled');
    }
    w.record({ kind: 'final', backend: 'kernel', verdict: ending.kind, said: ending.said });
  }
  const last = w.steps[w.steps.length - 1]!;
  // The reverse translation happens on the reply: after the forward walk's final step.
  if (outcome.kind === 'translated' && (ending.kind === 'local' || ending.kind === 'forwarded' || ending.kind === 'sent')) revNatStep(w, input, outcome.svc, socket, { ip: spec.dst, port: spec.dport });
  const delivered = ending.kind === 'local' || ending.kind === 'forwarded' || ending.kind === 'sent';
  const verdict: TraceVerdict = { kind: ending.kind, reason: stepSaidEn(ending.said), said: ending.said, step: last.index, oif: delivered ? w.h.oif : null, nexthop: ending.nexthop, endpoint: delivered ? endpointText(w.h.dst, w.h.dport) : null };
  const translated = outcome.kind === 'translated' ? outcome.svc : null;
  const cr = delivered ? conntrackAndReply(spec, entryHeader, w.h, translated, socket) : null;
  return {
    request: { entry: entry.entry, entryInferred: entry.inferred, entryReason: entry.reason, packet: entryHeader, branch: branch.kind === 'first' ? null : branch.kind === 'index' ? `index ${branch.index}` : `endpoint ${branch.endpoint}` },
    steps: w.steps,
    verdict,
    final: w.h,
    conntrack: cr?.ct ?? null,
    reply: cr?.reply ?? null,
    notes: w.notes,
  };
}
