/**
 * Step mode's engine: walks one packet through the node's netfilter hooks in the
 * kernel's order ({@link PACKET_PATHS}, {@link hookPlan}), rule by rule, with the routing
 * decisions between hooks, and returns every step, the verdict, the packet as it leaves,
 * the conntrack entry its flow has, and the reply's way back.
 *
 * Paths: a packet from a pod or from outside meets PREROUTING, then the routing decision
 * (on the destination after DNAT) sends it to INPUT (a local address) or FORWARD and
 * POSTROUTING; a packet the node sends meets the output route, OUTPUT (re-routed if NAT
 * changed it) and POSTROUTING, and loops back through PREROUTING and INPUT when its
 * destination is local.
 *
 * Not modelled (said in `notes`): policy routing (`ip rule`), rp_filter, the
 * `ip_forward` sysctl, bridge netfilter, ingress/egress hooks, IPVS, eBPF.
 */
import type { NetfilterHook } from '../model/iptables.js';
import { endpointText, WalkContext, WalkPacket, type BranchChoice, type ChainOutcome } from './context.js';
import { existingFlow, newFlowEntry, replyTupleOf, tupleOf } from './conntrack.js';
import { tupleText } from './describe.js';
import { hookPlan } from './hooks.js';
import type { TraceInput } from './input.js';
import { resolveEntry, type PacketFamily, type PacketSpec } from './packet.js';
import { routeDecision, type NetView } from './routing.js';
import { confirmStation, conntrackIn, natStation, runChain, type FlowRecord } from './stations.js';
import type { PacketHeader, TraceCandidate, TraceConntrack, TraceReply, TraceResult, TraceTuple, TraceVerdict, VerdictKind } from './types.js';
import type { IptablesRuleset } from '../model/iptables.js';
import { chainRuleCount } from '../model/iptables-facts.js';
import { UserError } from '../errors.js';
import { xtablesOf } from './iptables-eval.js';
import { stepSaid, stepSaidEn, type StepSaid } from '../text/step-said.js';

/** `forwarded out DEV to IP:PORT[ via GW]` / `sent out …`: where the packet leaves (`gw` null: on-link). */
function outVia(key: 'forwarded-out' | 'sent-out', dev: string, endpoint: string, gw: string | null): StepSaid {
  return gw === null ? stepSaid(key, { dev, endpoint }) : stepSaid(key === 'sent-out' ? 'sent-out-via' : 'forwarded-out-via', { dev, endpoint, gw });
}

/**
 * Options of a walk.
 * - `branch`: which outcome of a random rule to follow (default: the first);
 * - `indexed`: use the lookups built once per capture (iptables rule prefilters, the
 *   conntrack index by ports; default true). `false` evaluates every rule in full and
 *   scans every conntrack entry: slower, the same result (the reference tests compare).
 */
export interface WalkOptions {
  readonly branch?: BranchChoice;
  readonly indexed?: boolean;
}

/** A verdict under construction (the step index is filled in at the end). */
interface Ending {
  readonly kind: VerdictKind;
  readonly said: StepSaid;
  readonly nexthop?: string | null;
  /** For `rejected`: the ICMP error or TCP reset the sender gets (TraceVerdict.rejectWith). */
  readonly rejectWith?: string;
}

function branchText(b: BranchChoice): string | null {
  if (b.kind === 'first') return null;
  return b.kind === 'index' ? `index ${b.index}` : `endpoint ${b.endpoint}`;
}

/** Runs every chain and station of `hook`; returns an ending when the packet stops there. */
function runHook(ctx: WalkContext, rec: FlowRecord, hook: NetfilterHook): Ending | null {
  ctx.hook = hook;
  const plan = hookPlan(ctx.input, hook, ctx.pkt.family);
  for (const t of plan.skippedNftTables) ctx.note(`nft table ${t} is managed by iptables-nft: its rules are evaluated once, from the iptables dump`);
  for (const item of plan.items) {
    let outcome: ChainOutcome | null = null;
    if (item.kind === 'station') {
      if (item.station === 'conntrack-in') conntrackIn(ctx, rec, item.priority);
      else if (item.station === 'nat') outcome = natStation(ctx, rec, plan.natChains, item.priority);
      else confirmStation(ctx, rec, item.priority);
    } else {
      outcome = runChain(ctx, item);
    }
    if (outcome === null || outcome.kind === 'accept') continue;
    if (outcome.kind === 'drop') return { kind: 'dropped', said: outcome.said };
    if (outcome.kind === 'reject') return { kind: 'rejected', said: outcome.said, rejectWith: outcome.rejectWith };
    return { kind: 'unsupported', said: outcome.said };
  }
  return null;
}

function stopForRoute(ctx: WalkContext, rd: ReturnType<typeof routeDecision>, local: boolean): Ending | null {
  // A packet the node sends gets the route's errno from connect()/sendmsg(), no ICMP: no rejectWith then.
  const icmp = (code: string) => (local ? {} : { rejectWith: `icmp-${code}` });
  switch (rd.kind) {
    case 'local':
    case 'unicast':
      return null;
    case 'none':
      // ip_route_input/ip_route_output: no route is ENETUNREACH (an ICMP net unreachable to a forwarded packet's sender).
      return { kind: 'rejected', said: stepSaid('route-none-reject', { route: rd.text, local: local ? stepSaid('route-enetunreach') : '' }), ...icmp('net-unreachable') };
    case 'blackhole':
      return { kind: 'dropped', said: stepSaid('route-blackhole', { route: rd.text }) };
    case 'unreachable':
      return { kind: 'rejected', said: stepSaid('route-unreachable', { route: rd.text }), ...icmp('host-unreachable') };
    case 'prohibit':
      return { kind: 'rejected', said: stepSaid('route-prohibit', { route: rd.text }), ...icmp('admin-prohibited') };
    default:
      return { kind: 'unsupported', said: stepSaid('route-type-not-modelled', { type: rd.kind, route: rd.text }) };
  }
}

function routingStep(ctx: WalkContext, what: 'routing-decision' | 'output-route', rd: ReturnType<typeof routeDecision>): void {
  ctx.hook = null;
  const where =
    rd.kind === 'local'
      ? stepSaid('route-local-deliver')
      : rd.kind === 'unicast'
        ? rd.gateway
          ? stepSaid('route-send-out-via', { dev: rd.dev ?? '?', gw: rd.gateway })
          : stepSaid('route-send-out', { dev: rd.dev ?? '?' })
        : stepSaid('route-type', { type: rd.kind });
  ctx.record({ kind: 'routing', backend: 'kernel', said: stepSaid(what, { dst: ctx.pkt.dst, route: rd.text, where }) });
}

/** The path of a packet arriving from a pod or from outside. */
function walkIngress(ctx: WalkContext, rec: FlowRecord): Ending {
  const pre = runHook(ctx, rec, 'prerouting');
  if (pre) return pre;
  const rd = routeDecision(ctx.net, ctx.pkt.dst);
  routingStep(ctx, 'routing-decision', rd);
  const stop = stopForRoute(ctx, rd, false);
  if (stop) return stop;
  if (rd.kind === 'local') {
    const inp = runHook(ctx, rec, 'input');
    if (inp) return inp;
    return { kind: 'local', said: stepSaid('delivered-local-listening', { endpoint: ctx.pkt.dstEndpoint() }) };
  }
  ctx.pkt.oif = rd.dev;
  // IPv6 forwarding has its own switch and no rp_filter (net/ipv6/ip6_output.c ip6_forward).
  ctx.note(
    ctx.pkt.family === 'ipv6'
      ? 'forwarding assumes net.ipv6.conf.all.forwarding=1 (not captured)'
      : 'forwarding assumes net.ipv4.ip_forward=1 and that rp_filter accepts the source (neither is captured)',
  );
  const fwd = runHook(ctx, rec, 'forward');
  if (fwd) return fwd;
  const post = runHook(ctx, rec, 'postrouting');
  if (post) return post;
  return { kind: 'forwarded', said: outVia('forwarded-out', rd.dev ?? '?', ctx.pkt.dstEndpoint(), rd.nexthop === ctx.pkt.dst ? null : (rd.nexthop ?? '?')), nexthop: rd.nexthop };
}

/** The path of a packet the node sends itself (and its loop back when the destination is local). */
function walkOutput(ctx: WalkContext, rec: FlowRecord): Ending {
  const rd = routeDecision(ctx.net, ctx.pkt.dst);
  routingStep(ctx, 'output-route', rd);
  const stop = stopForRoute(ctx, rd, true);
  if (stop) return stop;
  ctx.pkt.oif = rd.kind === 'local' ? 'lo' : rd.dev;
  const out = runHook(ctx, rec, 'output');
  if (out) return out;
  const post = runHook(ctx, rec, 'postrouting');
  if (post) return post;
  const now = routeDecision(ctx.net, ctx.pkt.dst);
  if (now.kind !== 'local') {
    return { kind: 'sent', said: outVia('sent-out', ctx.pkt.oif ?? '?', ctx.pkt.dstEndpoint(), now.nexthop === ctx.pkt.dst ? null : (now.nexthop ?? '?')), nexthop: now.nexthop };
  }
  // Loopback: the packet re-enters through lo and meets PREROUTING and INPUT again.
  ctx.pkt.iif = 'lo';
  ctx.pkt.oif = null;
  ctx.hook = null;
  ctx.record({ kind: 'routing', backend: 'kernel', said: stepSaid('loop-back-lo', { dst: ctx.pkt.dst }) });
  const pre = runHook(ctx, rec, 'prerouting');
  if (pre) return pre;
  const inp = runHook(ctx, rec, 'input');
  if (inp) return inp;
  return { kind: 'local', said: stepSaid('delivered-local-listening', { endpoint: ctx.pkt.dstEndpoint() }) };
}

function conntrackOf(ctx: WalkContext, rec: FlowRecord, spec: PacketSpec): TraceConntrack | null {
  if (rec.match) return existingFlow(rec.match);
  if (!rec.confirmed || rec.original === null) return null;
  const out = tupleOf(ctx.pkt.header());
  return newFlowEntry(ctx.pkt.proto, rec.original, replyTupleOf(out), spec.tcpFlags.includes('syn'));
}

function swap(t: TraceTuple): TraceTuple {
  return { src: t.dst, dst: t.src, sport: t.dport, dport: t.sport, icmpType: t.icmpType, icmpCode: t.icmpCode, icmpId: t.icmpId };
}

function replyOf(ct: TraceConntrack | null, direction: 'original' | 'reply' | null): TraceReply | null {
  if (ct === null || direction === 'reply') return null;
  const sent = ct.reply;
  const received = { ...swap(ct.original), icmpType: ct.reply.icmpType };
  const parts: string[] = [];
  const ends = (t: TraceTuple) => tupleText(t).split(' → ') as [string, string];
  if (ct.dnat) parts.push(`its source ${ends(sent)[0]} becomes ${ends(received)[0]} again (reverse DNAT)`);
  if (ct.snat) parts.push(`its destination ${ends(sent)[1]} becomes ${ends(received)[1]} (reverse SNAT)`);
  const reason = parts.length
    ? `the reply ${tupleText(sent)} matches the flow's reply tuple; conntrack rewrites it: ${parts.join('; ')}`
    : `the reply ${tupleText(sent)} matches the flow's reply tuple and is not rewritten`;
  return { sent, received, reason };
}

/** The packet header as it enters the first hook. */
function entryHeader(spec: PacketSpec, src: string, iif: string | null): PacketHeader {
  return {
    family: spec.family,
    proto: spec.proto,
    src,
    dst: spec.dst,
    sport: spec.sport,
    dport: spec.dport,
    icmpType: spec.icmpType,
    icmpCode: spec.icmpCode,
    icmpId: spec.icmpId,
    tcpFlags: spec.tcpFlags,
    mark: spec.mark,
    iif,
    oif: null,
    ct: 'invalid',
    randomSport: false,
  };
}

/**
 * Walks `spec` through the node described by `input` and returns the full result.
 * This is also the function a benchmark times (one packet, start to end).
 *
 * Throws {@link UserError} (src/errors.ts) when the entry point cannot be resolved
 * (`--entry host` with a foreign source) or when the branch option names an endpoint or
 * index that no random choice on the way has. Everything nodescope cannot evaluate
 * becomes an `unsupported` step and verdict, never an exception.
 */
export function walkPacket(input: TraceInput, spec: PacketSpec, options: WalkOptions = {}): TraceResult {
  const orders = backendOrders(input, spec.family);
  if (orders === null) return walkOnce(input, spec, options, false);
  // Both backends hold rules: walk each registration order; keep those the branch option allows.
  const candidates: TraceCandidate[] = [];
  let refused: unknown = null;
  for (const o of orders) {
    try {
      candidates.push({ order: o.order, result: walkOnce(o.input, spec, options, true) });
    } catch (e) {
      if (!(e instanceof UserError)) throw e;
      refused ??= e;
    }
  }
  if (candidates.length === 0) throw refused;
  // An order without a random choice on the way cannot refuse the endpoint: keep the orders that reach it.
  const asked = options.branch?.kind === 'endpoint' ? options.branch.endpoint : null;
  if (asked !== null) {
    const reach = candidates.filter((c) => c.result.verdict.endpoint !== null && (c.result.verdict.endpoint === asked || c.result.verdict.endpoint.replace(/:\d+$/, '').replace(/^\[(.*)\]$/, '$1') === asked));
    if (reach.length === 0 && refused !== null) throw refused;
    if (reach.length > 0 && reach.length < candidates.length) candidates.splice(0, candidates.length, ...reach);
  }
  const first = candidates[0]!.result;
  const why = 'iptables-legacy and iptables-nft both hold rules (kubernetes#109811): the kernel runs both, their chains of equal priority in the order the tables were registered, which no capture records';
  if (candidates.length === 1) {
    return { ...first, notes: [...first.notes, `${why}; only with ${candidates[0]!.order} does the walk reach the asked branch`] };
  }
  const outcome = (r: TraceResult) => `${r.verdict.kind}${r.verdict.endpoint ? ` ${r.verdict.endpoint}` : ''}`;
  if (candidates.every((c) => outcome(c.result) === outcome(first))) {
    return { ...first, notes: [...first.notes, `${why}; both orders give the same verdict`] };
  }
  const reason = `${why}: ${candidates.map((c) => `${c.order} → ${outcome(c.result)}`).join('; ')}`;
  return {
    ...first,
    verdict: { kind: 'ambiguous', reason, step: first.verdict.step, oif: null, nexthop: null, endpoint: null },
    notes: [...first.notes, `the steps shown are those of ${candidates[0]!.order}`],
    candidates,
  };
}

/** One order of the two iptables backends' tables, as a walk input. */
interface BackendOrder {
  readonly order: string;
  readonly input: TraceInput;
}

const orderCache = new WeakMap<TraceInput, Map<string, readonly BackendOrder[] | null>>();

function holdsRules(r: IptablesRuleset): boolean {
  return r.tables.some((t) => t.chains.some((c) => chainRuleCount(c) > 0));
}

/**
 * Null unless iptables-legacy and iptables-nft rulesets of `family` both hold rules; then
 * the input twice, legacy's rulesets first and nft's first (hook plans keep input order
 * for chains of equal priority). Cached per input.
 */
function backendOrders(input: TraceInput, family: PacketFamily): readonly BackendOrder[] | null {
  let perInput = orderCache.get(input);
  if (!perInput) {
    perInput = new Map();
    orderCache.set(input, perInput);
  }
  if (perInput.has(family)) return perInput.get(family)!;
  const all = input.iptables ?? [];
  const mine = all.filter((r) => (r.family === 'ipv6' ? 'ipv6' : 'ipv4') === family && holdsRules(r));
  const legacy = mine.filter((r) => xtablesOf(r) === 'legacy');
  const nft = mine.filter((r) => xtablesOf(r) === 'nft');
  let orders: readonly BackendOrder[] | null = null;
  if (legacy.length > 0 && nft.length > 0) {
    const rest = all.filter((r) => !mine.includes(r));
    orders = [
      { order: 'iptables-legacy\'s tables first', input: { ...input, iptables: [...legacy, ...nft, ...rest] } },
      { order: 'iptables-nft\'s tables first', input: { ...input, iptables: [...nft, ...legacy, ...rest] } },
    ];
  }
  perInput.set(family, orders);
  return orders;
}

function walkOnce(input: TraceInput, spec: PacketSpec, options: WalkOptions, dual: boolean): TraceResult {
  const net: NetView = { interfaces: input.addrs, routes: input.routes };
  const branch = options.branch ?? { kind: 'first' };
  const entry = resolveEntry(spec, net);
  const header = entryHeader(spec, entry.src, entry.iif);
  const ctx = new WalkContext(input, net, new WalkPacket(header), branch, options.indexed ?? true, dual);
  const rec: FlowRecord = { match: null, original: null, confirmed: false };
  let ending: Ending;
  if (input.routes.length === 0) {
    ctx.record({ kind: 'unsupported', backend: 'kernel', said: stepSaid('routes-not-captured-step') });
    ending = { kind: 'unsupported', said: stepSaid('routes-not-captured') };
  } else {
    ending = entry.entry === 'host' ? walkOutput(ctx, rec) : walkIngress(ctx, rec);
  }
  if (ending.kind !== 'unsupported' || ctx.steps[ctx.steps.length - 1]?.kind !== 'unsupported') {
    ctx.hook = null;
    ctx.record({ kind: 'final', backend: 'kernel', verdict: ending.kind, said: ending.said });
  }
  const last = ctx.steps[ctx.steps.length - 1]!;
  const final = ctx.pkt.header();
  const delivered = ending.kind === 'local' || ending.kind === 'forwarded' || ending.kind === 'sent';
  const verdict: TraceVerdict = {
    kind: ending.kind,
    reason: stepSaidEn(ending.said),
    said: ending.said,
    step: last.index,
    oif: delivered ? final.oif : null,
    nexthop: ending.nexthop ?? null,
    endpoint: delivered ? endpointText(final.dst, final.dport) : null,
    ...(ending.kind === 'rejected' && ending.rejectWith !== undefined ? { rejectWith: ending.rejectWith } : {}),
  };
  const conntrack = conntrackOf(ctx, rec, spec);
  return {
    request: { entry: entry.entry, entryInferred: entry.inferred, entryReason: entry.reason, packet: header, branch: branchText(branch) },
    steps: ctx.steps,
    verdict,
    final,
    conntrack,
    reply: replyOf(conntrack, rec.match?.direction ?? null),
    notes: ctx.notes,
  };
}
