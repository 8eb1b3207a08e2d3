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

type StepInit = Partial<Omit<TraceStep, 'index' | 'header' | 'kind' | 'reason'>> & { kind: StepKind; reason: string };

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
  | { kind: 'stop'; verdict: VerdictKind; reason: string };

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
function serviceLookupSteps(w: CiliumWalk, input: CiliumTraceInput, place: LbPlace, ip: string, port: number, what: string) {
  const maps = lbMapNames(w.h.family);
  const look = lookupService(input.lb, ip, port, protoNumber(w.h), place.scopeSwitch);
  for (const k of look.tried) {
    const hit = look.service !== null && k === look.key ? look.service : null;
    const keyHex = serviceKeyHex(k);
    const entry = hit ? serviceEntryHex(hit, k) : null;
    const reason = hit
      ? `${what}: ${serviceKeyText(k, protoName(k.proto))} → ${serviceValueText(hit)}${hit.id !== null ? ` (${formatFrontend(hit.frontend)})` : ''}`
      : `${what}: ${serviceKeyText(k, protoName(k.proto))} → no entry`;
    w.record({ kind: 'map-lookup', table: place.prog, chain: maps.services, ruleText: entry ?? (keyHex ? `key ${keyHex} (no entry)` : null), matched: hit !== null, verdict: hit ? `service ${hit.id ?? '?'}` : null, reason });
  }
  if (look.anyProto) w.note(`the frontend was found under protocol 0 (ANY): the map was written without L4 protocol differentiation`);
  return look;
}

/** Probability and endpoint of every slot of `svc`; the slots after `count` are skipped for new connections. */
function slotBranches(svc: LbService): { branches: { slot: number; backend: LbBackend | null; backendId: number | null; endpoint: string | null }[]; skipped: string[] } {
  const count = svc.count ?? svc.slots.length;
  const branches: { slot: number; backend: LbBackend | null; backendId: number | null; endpoint: string | null }[] = [];
  const skipped: string[] = [];
  for (const s of svc.slots) {
    const n = s.slot ?? 0;
    const b = s.backend;
    const ep = b ? joinHostPort(b.ip, b.port) : null;
    const eligible = s.slot === null ? b?.state === 'active' : n >= 1 && n <= count;
    if (eligible) branches.push({ slot: n, backend: b, backendId: s.backendId ?? b?.id ?? null, endpoint: ep });
    else skipped.push(`slot ${s.slot ?? '-'} → backend ${s.backendId ?? '?'}${ep ? ` ${ep}` : ''} ${b?.state ?? 'unknown state'} (after count ${count}, in qcount: kept for existing connections only)`);
  }
  return { branches, skipped };
}

/**
 * A listing that prints no `count` (`cilium-dbg bpf lb list`) and no backend states: which of
 * the listed slots take new flows is not in the capture (all of them, or none when every backend
 * is terminating). The candidates are shown; the verdict is `unknown`, naming what would decide it.
 */
function countUnknown(w: CiliumWalk, svc: LbService, place: LbPlace, mapName: string, lb: LbTable): LbOutcome {
  const listed = svc.slots.map((s) => `slot ${s.slot ?? '?'} → ${s.backend ? joinHostPort(s.backend.ip, s.backend.port) : `backend ${s.backendId ?? '?'} not found`}${s.backend?.state ? ` (${s.backend.state})` : ''}`);
  const from = lb.source === 'service-list' || lb.source === 'service-list-json' ? 'cilium-dbg service list printed no backend states' : 'cilium-dbg bpf lb list prints no count';
  const reason = `service ${svc.id ?? '?'} ${formatFrontend(svc.frontend)}: the backend count is unknown, not zero (${from}): which of its ${svc.slots.length} listed slots take new flows cannot be told — all of them when every backend is active, none when all are terminating. Listed: ${listed.join('; ')}. Capture \`cilium-dbg service list\` (backend states) or the raw maps (bpftool) to decide`;
  w.record({ kind: 'final', table: place.prog, chain: mapName, matched: true, verdict: 'unknown', reason });
  return { kind: 'stop', verdict: 'unknown', reason: `backend count of ${formatFrontend(svc.frontend)} unknown (${from})` };
}

/** The LB station: service lookup, backend choice, backend lookup, rev-NAT entry. */
function lbStation(w: CiliumWalk, input: CiliumTraceInput, place: LbPlace, branch: BranchChoice, wildcard: boolean): LbOutcome {
  const h = w.h;
  const maps = lbMapNames(h.family);
  // ICMP has no port: the key's dport is 0, and no frontend has protocol ICMP.
  const what = h.dport === null ? `service lookup (lb${h.family === 'ipv4' ? '4' : '6'}_lookup_service; ${h.proto} has no port: dport 0)` : `service lookup (lb${h.family === 'ipv4' ? '4' : '6'}_lookup_service)`;
  let look = serviceLookupSteps(w, input, place, h.dst, h.dport ?? 0, what);
  if (look.service === null && wildcard && isOwnAddress({ interfaces: input.addrs, routes: input.routes }, h.dst)) {
    const any = h.family === 'ipv4' ? '0.0.0.0' : '::';
    look = serviceLookupSteps(w, input, place, any, h.dport ?? 0, `${h.dst} is an address of this node without its own frontend: NodePort wildcard lookup (sock4_wildcard_lookup)`);
  }
  const svc = look.service;
  const servicesUnreadable = input.lb.unreadable?.find((u) => u.map.startsWith(`cilium_lb${h.family === 'ipv4' ? '4' : '6'}_services`));
  if (svc === null && servicesUnreadable) {
    const why = `${servicesUnreadable.map} holds ${servicesUnreadable.entries} entries no known layout decodes (${servicesUnreadable.reason})`;
    w.record({ kind: 'final', table: place.prog, chain: maps.services, matched: null, verdict: 'unknown', reason: `no decoded entry for ${endpointText(h.dst, h.dport)}, but ${why}: whether it is a frontend is unknown` });
    return { kind: 'stop', verdict: 'unknown', reason: `service lookup unknown: ${why}` };
  }
  if (svc === null) return { kind: 'miss' };
  if (svc.algorithm === 'maglev' && !place.socket) {
    w.record({ kind: 'unsupported', table: place.prog, chain: 'cilium_lb4_maglev', reason: `unsupported: service ${svc.id ?? '?'} uses Maglev; nodescope does not decode the maglev map (${input.mapsRead.some((m) => m.includes('maglev')) ? 'read but not decoded' : 'not read'}), so the backend cannot be told` });
    return { kind: 'stop', verdict: 'unsupported', reason: 'Maglev backend selection is not decoded' };
  }
  const disagree = input.lb.disagreements?.filter((d) => d.frontend === formatFrontend(svc.frontend)) ?? [];
  for (const d of disagree) w.note(`the sources disagree on ${d.frontend}: ${d.message}`);
  if (svc.l7ProxyPort !== null || (svc.flags !== null && (svc.flags & SVC_FLAG.l7LoadBalancer) !== 0)) {
    const port = svc.l7ProxyPort !== null ? `proxy port ${svc.l7ProxyPort}` : 'a proxy port this source does not show (listings before Cilium 1.16 omit it: cilium PR 31503)';
    const why = `service ${svc.id ?? '?'} ${formatFrontend(svc.frontend)} is an L7 load-balancer frontend (flag l7-load-balancer): the flow is redirected to Cilium's L7 proxy (Envoy) on this node, ${port}; the proxy, not the LB map, chooses the backend`;
    w.record({ kind: 'final', table: place.prog, chain: maps.services, matched: true, verdict: svc.l7ProxyPort !== null ? `proxy port ${svc.l7ProxyPort}` : 'L7 proxy', reason: why });
    return { kind: 'stop', verdict: 'local', reason: `redirected to the L7 proxy (${port})` };
  }
  if (svc.count === null && svc.slots.length > 0) return countUnknown(w, svc, place, maps.services, input.lb);
  const count = svc.count ?? 0;
  if (count === 0) {
    const why =
      svc.count === null
        ? `service ${svc.id ?? '?'} ${formatFrontend(svc.frontend)} has no backend slot in the listing: no backend to choose`
        : `service ${svc.id ?? '?'} ${formatFrontend(svc.frontend)} has count 0: no backend to choose`;
    const held = svc.slots.length > 0 ? ` (its ${svc.slots.length} slot${svc.slots.length === 1 ? '' : 's'} after count hold terminating/quarantined backends: flows already in Cilium's conntrack continue to them, new flows do not — cilium PRs 25863, 31840)` : '';
    if (svc.slots.length > 0) w.note('a frontend whose backends are all terminating drops new flows while established ones continue to the terminating backends (graceful termination: cilium PRs 18814, 31840)');
    if (place.socket) {
      w.record({ kind: 'final', table: place.prog, chain: place.attach, verdict: 'rejected', reason: `${why}${held}: connect() fails with EHOSTUNREACH (socket LB, REASON_LB_NO_BACKEND); a packet reaching bpf_lxc/bpf_host instead is dropped with ${DROP_NO_SERVICE.name} (${DROP_NO_SERVICE.code})` });
      return { kind: 'stop', verdict: 'rejected', reason: `${why}: connect() fails with EHOSTUNREACH` };
    }
    w.record({ kind: 'final', table: place.prog, chain: place.attach, verdict: 'dropped', reason: `${why}${held}: dropped with ${DROP_NO_SERVICE.name} (${DROP_NO_SERVICE.code}, "Service backend not found")` });
    return { kind: 'stop', verdict: 'dropped', reason: `${DROP_NO_SERVICE.name}: ${why}` };
  }
  const { branches, skipped } = slotBranches(svc);
  if (branches.length === 0) {
    w.record({ kind: 'unsupported', table: place.prog, chain: maps.services, reason: `unsupported: service ${svc.id ?? '?'} says count ${svc.count} but the capture has none of its slots 1..${svc.count}` });
    return { kind: 'stop', verdict: 'unsupported', reason: 'backend slots missing from the capture' };
  }
  const chosen = chooseBranch(branch, branches.map((b) => ({ endpoint: b.endpoint, target: `slot ${b.slot}` })));
  const pick = branches[chosen]!;
  const traceBranches: TraceBranch[] = branches.map((b, i) => ({ index: i, probability: 1 / branches.length, target: `slot ${b.slot} → backend ${b.backendId ?? '?'}`, endpoint: b.endpoint, ruleIndex: null, chosen: i === chosen }));
  const slotKey: ServiceKey = { ...look.key, slot: pick.slot };
  const skippedText = skipped.length ? `; skipped: ${skipped.join('; ')}` : '';
  w.record({
    kind: 'map-lookup',
    table: place.prog,
    chain: maps.services,
    ruleText: serviceEntryHex(svc, slotKey),
    matched: true,
    verdict: `backend ${pick.backendId ?? '?'}`,
    reason: `random selection (lb4_select_backend_id_random): slot = 1 + random % count ${svc.count} → slot ${pick.slot}, each of the ${branches.length} active slots with probability 1/${branches.length}: ${serviceKeyText(slotKey, protoName(slotKey.proto))} → backend_id ${pick.backendId ?? '?'}${skippedText}`,
    branches: traceBranches,
  });
  if (skipped.length) w.note('only slots 1..count take new connections; terminating, quarantined and maintenance backends sit after count (qcount) and serve only flows already in Cilium\'s conntrack (graceful termination, Cilium 1.11+; quarantine 1.14+; maintenance 1.16+). Before graceful termination, a terminating backend was removed from the maps at once');
  // A listing names the backend in the slot itself; the maps name an id to look up.
  const backend = pick.backend ?? (pick.backendId !== null ? lookupBackend(input.lb, pick.backendId) : null);
  const unreadable = input.lb.unreadable?.find((u) => u.map.startsWith(`cilium_lb${h.family === 'ipv4' ? '4' : '6'}_backends`));
  if (backend === null && (unreadable || (input.lb.source === 'bpf-maps' && !input.mapsRead.some((m) => m.startsWith(`cilium_lb${h.family === 'ipv4' ? '4' : '6'}_backends`))))) {
    const why = unreadable ? `${unreadable.map} holds ${unreadable.entries} entries no known layout decodes (${unreadable.reason})` : `no ${maps.backends} (or older backend map) was read`;
    w.record({ kind: 'final', table: place.prog, chain: maps.backends, matched: null, verdict: 'unknown', reason: `backend ${pick.backendId ?? '?'} cannot be looked up: ${why}; whether it exists is unknown` });
    return { kind: 'stop', verdict: 'unknown', reason: `backend ${pick.backendId ?? '?'} unknown: ${why}` };
  }
  if (backend === null) {
    w.record({ kind: 'final', table: place.prog, chain: maps.backends, matched: false, verdict: 'dropped', reason: `backend ${pick.backendId ?? '?'} is not in ${maps.backends}: dropped with DROP_NO_SERVICE (${DROP_NO_SERVICE.code})` });
    return { kind: 'stop', verdict: 'dropped', reason: `${DROP_NO_SERVICE.name}: backend ${pick.backendId ?? '?'} not found` };
  }
  w.record({ kind: 'map-lookup', table: place.prog, chain: maps.backends, ruleText: backendEntryHex(backend), matched: true, verdict: joinHostPort(backend.ip, backend.port), reason: `backend lookup (lb4_lookup_backend): key {backend_id ${backend.id}} → ${backendValueText(backend)}` });
  return { kind: 'translated', svc, backend };
}

function rewrite(w: CiliumWalk, place: LbPlace, svc: LbService, b: LbBackend): void {
  const from = endpointText(w.h.dst, w.h.dport);
  w.h = { ...w.h, dst: b.ip, dport: w.h.dport === null ? null : b.port };
  const to = endpointText(b.ip, b.port);
  const reason = place.socket
    ? `socket LB: the socket is connected to ${to} instead of ${from} at connect(); every packet is sent to the backend from the start (no per-packet DNAT, conntrack shows ${to}); recvmsg()/getpeername() show ${from} to the application (cilium_lb${w.h.family === 'ipv4' ? '4' : '6'}_reverse_sk, rev_nat_index ${svc.id ?? '?'})`
    : `DNAT ${from} → ${to} (lb4_local → lb4_xlate); Cilium's conntrack (cilium_ct4_global) records rev_nat_index ${svc.id ?? '?'} for the reply`;
  w.record({ kind: 'nat', table: place.prog, chain: place.attach, verdict: `dnat to ${to}`, reason });
}

function revNatStep(w: CiliumWalk, input: CiliumTraceInput, svc: LbService, socket: boolean): void {
  const maps = lbMapNames(w.h.family);
  if (svc.id === null) return;
  const r = lookupRevNat(input.lb, svc.id);
  const use = socket ? 'on the way back the socket layer answers the frontend; the per-packet path (lb4_rev_nat) would rewrite the reply\'s source with this entry' : 'on the way back lb4_rev_nat rewrites the reply\'s source with this entry';
  w.record({
    kind: 'map-lookup',
    table: socket ? 'bpf_sock' : 'bpf_lxc',
    chain: maps.revNat,
    ruleText: r ? revNatEntryHex(r) : null,
    matched: r !== null,
    verdict: r ? joinHostPort(r.ip, r.port) : null,
    reason: r ? `reverse NAT: key {rev_nat_index ${r.id}} → {address ${r.ip}, port ${r.port}}: ${use}` : `reverse NAT: no entry for rev_nat_index ${svc.id}: the reply would not be rewritten`,
  });
}

function headerOf(spec: PacketSpec, src: string, iif: string | null): PacketHeader {
  return { family: spec.family, proto: spec.proto, src, dst: spec.dst, sport: spec.sport, dport: spec.dport, icmpType: spec.icmpType, icmpCode: spec.icmpCode, icmpId: spec.icmpId, tcpFlags: spec.tcpFlags, mark: spec.mark, iif, oif: null, ct: 'new', randomSport: false };
}

/** The routing decision for the packet as it is now; sets `oif` and returns the ending. */
function route(w: CiliumWalk, input: CiliumTraceInput, entry: 'pod' | 'host' | 'external', translated: boolean): { kind: VerdictKind; reason: string; nexthop: string | null } {
  const r = routeLookup(input.routes, w.h.dst);
  const ep = endpointText(w.h.dst, w.h.dport);
  if (r === null) {
    w.record({ kind: 'routing', backend: 'kernel', reason: `no route to ${w.h.dst}` });
    return { kind: 'rejected', reason: `no route to ${w.h.dst}: network unreachable`, nexthop: null };
  }
  const rt = r.route;
  const nexthop = rt.gateway ?? w.h.dst;
  w.h = { ...w.h, oif: rt.type === 'local' ? 'lo' : rt.dev };
  w.record({ kind: 'routing', backend: 'kernel', reason: `route to ${w.h.dst}: ${rt.dst}${rt.gateway ? ` via ${rt.gateway}` : ''} dev ${rt.dev ?? '?'}${rt.type === 'local' ? ' (local)' : ''}` });
  const unanswered = translated ? '' : ': not translated (no LB entry), so nothing on the way answers for a Service address: unanswered';
  if (rt.type === 'local') return { kind: 'local', reason: `delivered to a local process on ${ep}`, nexthop: null };
  const kind: VerdictKind = entry === 'host' ? 'sent' : 'forwarded';
  return { kind, reason: `${kind === 'sent' ? 'sent' : 'forwarded'} out ${rt.dev ?? '?'} to ${rt.gateway ? `${ep} via ${rt.gateway}` : ep}${unanswered}`, nexthop };
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
  w.note('no KUBE- chains: kube-proxy replacement rewrites Service addresses in eBPF, so nft/iptables show no Service rules; the LB maps below are the rewrite table');
  if (!sock.read) w.note('socket LB settings assumed, not read (no cilium-dbg status in this source): enabled with socketLB.hostNamespaceOnly=false, Cilium\'s default with kube-proxy replacement');
  w.note('Cilium\'s own conntrack (cilium_ct4_global) is not read: the packet is taken as the first of a new flow');

  const l4Socket = spec.proto === 'tcp' || spec.proto === 'udp';
  const socketApplies = sock.enabled && l4Socket && (entry.entry === 'host' || (entry.entry === 'pod' && !sock.hostNamespaceOnly));
  let outcome: LbOutcome = { kind: 'miss' };
  let socket = false;
  if (entry.entry !== 'external') {
    const who = entry.entry === 'host' ? 'a process on the node' : `the pod ${entry.src}`;
    if (socketApplies) {
      const place: LbPlace = { prog: 'bpf_sock', attach: spec.proto === 'udp' ? `cgroup/sendmsg${fam}` : `cgroup/connect${fam}`, socket: true, scopeSwitch: entry.entry === 'pod' };
      w.record({ kind: 'bpf-prog', table: place.prog, chain: place.attach, reason: `${who} calls ${spec.proto === 'udp' ? 'sendmsg()' : 'connect()'}: cil_sock${fam}_${spec.proto === 'udp' ? 'sendmsg' : 'connect'} runs socket LB (${entry.entry === 'pod' ? `pods included: socketLB.hostNamespaceOnly=false${sock.read ? '' : ', assumed'}` : 'host namespace'})` });
      outcome = lbStation(w, input, place, branch, true);
      socket = outcome.kind === 'translated';
      if (outcome.kind === 'translated') rewrite(w, place, outcome.svc, outcome.backend);
    } else if (entry.entry === 'host') {
      w.record({ kind: 'bpf-prog', table: 'bpf_sock', chain: `cgroup/connect${fam}`, matched: false, reason: l4Socket ? 'socket LB is disabled (cilium-dbg status): host traffic to a Service is not translated at the socket' : `socket LB handles TCP and UDP sockets only: a ${spec.proto} packet is not translated at the socket` });
    }
    if (entry.entry === 'pod' && outcome.kind !== 'stop') {
      const dev = entry.iif ?? 'lxc?';
      const place: LbPlace = { prog: 'bpf_lxc', attach: `tc ingress ${dev}`, socket: false, scopeSwitch: true };
      const already = outcome.kind === 'translated' ? `; the destination is already the backend ${endpointText(w.h.dst, w.h.dport)}` : '';
      w.record({ kind: 'bpf-prog', table: place.prog, chain: place.attach, reason: `the packet leaves the pod on ${dev}: cil_from_container (bpf_lxc, tc ingress) looks up its destination${already}${!l4Socket ? `; socket LB does not handle ${spec.proto}` : ''}` });
      if (outcome.kind === 'translated') {
        serviceLookupSteps(w, input, place, w.h.dst, w.h.dport ?? 0, 'per-packet service lookup');
      } else {
        outcome = lbStation(w, input, place, branch, false);
        if (outcome.kind === 'translated') rewrite(w, place, outcome.svc, outcome.backend);
      }
    }
  } else {
    const dev = entry.iif ?? '?';
    const place: LbPlace = { prog: 'bpf_host', attach: `tc ingress ${dev}`, socket: false, scopeSwitch: false };
    w.record({ kind: 'bpf-prog', table: place.prog, chain: place.attach, reason: `the packet arrives from outside on ${dev}: cil_from_netdev (bpf_host, NodePort/external frontends: nodeport_lb${fam})` });
    w.note('XDP acceleration (loadBalancer.acceleration) is not read; assumed disabled, Cilium\'s default: with it, the same lookup runs in cil_xdp_entry before the packet reaches tc');
    outcome = lbStation(w, input, place, branch, false);
    if (outcome.kind === 'translated') rewrite(w, place, outcome.svc, outcome.backend);
  }

  let ending: { kind: VerdictKind; reason: string; nexthop: string | null };
  if (outcome.kind === 'stop') {
    ending = { kind: outcome.verdict, reason: outcome.reason, nexthop: null };
  } else {
    const svcIp = input.lb.services.some((s) => s.frontend.ip === spec.dst);
    if (outcome.kind === 'miss' && svcIp) w.note(`${spec.dst} is a Service frontend, but no entry has protocol ${spec.proto.toUpperCase()}${spec.dport !== null ? ` and port ${spec.dport}` : ''}: Cilium does not translate it${spec.proto.startsWith('icmp') ? ' — a ClusterIP does not answer ping' : ''}`);
    if (outcome.kind === 'translated') revNatStep(w, input, outcome.svc, socket);
    ending = route(w, input, entry.entry, outcome.kind === 'translated' || !svcIp);
    if (outcome.kind === 'translated' && entry.entry === 'external' && ending.kind === 'forwarded' && ending.nexthop !== w.h.dst) {
      w.note('a NodePort backend on another node is reached with SNAT to the node address by bpf_host (nodeport_nat_fwd) unless DSR is on; not modelled');
    }
    w.record({ kind: 'final', backend: 'kernel', verdict: ending.kind, reason: ending.reason });
  }
  const last = w.steps[w.steps.length - 1]!;
  const delivered = ending.kind === 'local' || ending.kind === 'forwarded' || ending.kind === 'sent';
  const verdict: TraceVerdict = { kind: ending.kind, reason: ending.reason, step: last.index, oif: delivered ? w.h.oif : null, nexthop: ending.nexthop, endpoint: delivered ? endpointText(w.h.dst, w.h.dport) : null };
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
