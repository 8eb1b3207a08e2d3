/**
 * The kernel's own stops on a hook, between the chains: the conntrack lookup
 * (`nf_conntrack_in`), the NAT station (`nf_nat_inet_fn`: runs the nat chains of a NEW
 * flow in priority order until one sets up a binding, then rewrites the packet; a known
 * flow skips the nat chains and gets its stored NAT), and the confirmation of a new
 * flow (`nf_conntrack_confirm`). Each records a kernel step that says what happened.
 */
import type { ConntrackEntry } from '../model/conntrack.js';
import { endpointText, type ChainOutcome, type NatBinding, type WalkContext } from './context.js';
import { findFlow, flowNat, knownFlowState, storedNat, tupleOf, type FlowMatch, type Rewrite } from './conntrack.js';
import type { HookedChainItem } from './hooks.js';
import { runIptablesChain } from './iptables-eval.js';
import { runNftChain } from './nft-eval.js';
import { routeDecision, selectSourceAddress } from './routing.js';
import type { TraceTuple } from './types.js';
import { phrase, stepSaid, type StepSaid } from '../text/step-said.js';

/** What the stations learned about the flow, for the result. */
export interface FlowRecord {
  match: FlowMatch | null;
  /** The tuple conntrack saw first (before any NAT), for a new flow. */
  original: TraceTuple | null;
  /** The flow was confirmed (entered the table) during this walk. */
  confirmed: boolean;
}

/** Runs one chain of either backend. */
export function runChain(ctx: WalkContext, item: HookedChainItem): ChainOutcome {
  return item.kind === 'iptables' ? runIptablesChain(ctx, item) : runNftChain(ctx, item);
}

/** `nf_conntrack_in`: finds the packet's flow in the captured table, or starts a NEW one. */
export function conntrackIn(ctx: WalkContext, rec: FlowRecord, priority: number): void {
  const flow = ctx.flow;
  const common = { kind: 'conntrack' as const, backend: 'kernel' as const, priority };
  if (flow.tracked === 'untracked') {
    ctx.pkt.ct = 'untracked';
    ctx.record({ ...common, said: stepSaid('ct-untracked') });
    return;
  }
  if (flow.tracked !== 'not-yet') return; // looped-back packet: it keeps its conntrack entry
  const entries: readonly ConntrackEntry[] = ctx.input.conntrack ?? [];
  if (ctx.input.conntrack === undefined) ctx.note('the conntrack table was not captured: the packet is taken as the first of a new flow');
  const found = findFlow(entries, ctx.pkt.header(), ctx.indexed);
  const reopened = found !== null && reopensClosedFlow(ctx, found);
  const m = reopened ? null : found;
  if (m) {
    const nat = flowNat(m.entry);
    flow.tracked = 'known';
    flow.direction = m.direction;
    flow.seenReply = !m.entry.flags.includes('UNREPLIED');
    flow.assured = m.entry.flags.includes('ASSURED');
    flow.confirmed = true;
    flow.dnat = nat.dnat;
    flow.snat = nat.snat;
    flow.ctMark = m.entry.mark ?? 0;
    ctx.pkt.ct = knownFlowState(m);
    rec.match = m;
    const natWords = nat.dnat || nat.snat ? stepSaid('ct-carries-nat', { nat: { list: [nat.dnat ? 'DNAT' : '', nat.snat ? 'SNAT' : ''].filter(Boolean), sep: ' and ', sepJa: ' と ' } }) : '';
    ctx.record({
      ...common,
      said: stepSaid('ct-known-flow', { dir: stepSaid(m.direction === 'original' ? 'word-original' : 'word-reply'), state: ctx.pkt.ct, entry: m.entry.raw.trim(), nat: natWords }),
    });
    return;
  }
  flow.tracked = 'new';
  flow.direction = 'original';
  ctx.pkt.ct = 'new';
  rec.original = tupleOf(ctx.pkt.header());
  const pickup = ctx.pkt.proto === 'tcp' && !ctx.pkt.tcpFlags.includes('syn') ? stepSaid('ct-tcp-loose') : '';
  const why = reopened ? stepSaid('ct-reopen', { state: found.entry.state ?? '?' }) : stepSaid('ct-new-flow', { pickup });
  ctx.record({ ...common, said: why });
}

/**
 * True when a TCP SYN (without ACK) in the original direction meets an entry in TIME_WAIT
 * or CLOSE: the kernel kills the old entry and looks the packet up again as NEW
 * (net/netfilter/nf_conntrack_proto_tcp.c `nf_conntrack_tcp_packet`, "Attempt to reopen a
 * closed/aborted connection"; RFC 1122 4.2.2.13 lets a SYN reopen a TIME-WAIT connection).
 */
function reopensClosedFlow(ctx: WalkContext, m: FlowMatch): boolean {
  const flags = ctx.pkt.tcpFlags;
  return ctx.pkt.proto === 'tcp' && flags.includes('syn') && !flags.includes('ack') && m.direction === 'original' && (m.entry.state === 'TIME_WAIT' || m.entry.state === 'CLOSE');
}

function rewriteText(before: string, after: string): string {
  return `${before} → ${after}`;
}

/** Applies a rewrite of the destination (`dst`) or source (`src`) of the packet; returns the words. */
function applyRewrite(ctx: WalkContext, side: 'dst' | 'src', r: Rewrite, randomPort = false): string {
  const p = ctx.pkt;
  if (side === 'dst') {
    const before = endpointText(p.dst, p.dport);
    p.dst = r.addr;
    if (r.port !== null && p.dport !== null) p.dport = r.port;
    return rewriteText(before, endpointText(p.dst, p.dport));
  }
  const before = endpointText(p.src, p.sport);
  p.src = r.addr;
  if (randomPort && p.sport !== null) {
    p.sport = null;
    p.randomSport = true;
  } else if (r.port !== null && p.sport !== null) p.sport = r.port;
  return rewriteText(before, endpointText(p.src, p.sport === null && p.randomSport ? '<random port>' : p.sport));
}

/** The rewrite a NAT binding asks for, resolved against the packet (MASQUERADE, REDIRECT). */
function resolveBinding(ctx: WalkContext, b: NatBinding): Rewrite | { error: StepSaid } {
  const p = ctx.pkt;
  switch (b.type) {
    case 'dnat':
      return { addr: b.addr ?? p.dst, port: b.port };
    case 'snat':
      return { addr: b.addr ?? p.src, port: b.port };
    case 'masquerade': {
      const rd = routeDecision(ctx.net, p.dst);
      const addr = selectSourceAddress(ctx.net, p.oif, rd.nexthop, p.family);
      if (addr === null) return { error: stepSaid('masquerade-no-address', { oif: p.oif ?? stepSaid('word-output-interface') }) };
      return { addr, port: b.port };
    }
    case 'redirect': {
      if (ctx.hook === 'output') return { addr: p.family === 'ipv4' ? '127.0.0.1' : '::1', port: b.port };
      const iface = ctx.net.interfaces.find((i) => i.ifname === p.iif);
      const fam = p.family === 'ipv4' ? 'inet' : 'inet6';
      const addr = iface?.addresses.find((a) => a.family === fam)?.local;
      if (addr === undefined) return { error: stepSaid('redirect-no-address', { iif: p.iif ?? stepSaid('word-input-interface') }) };
      return { addr, port: b.port };
    }
  }
}

/** Re-routes a locally generated packet whose destination changed (`ip_route_me_harder`). */
export function rerouteOutput(ctx: WalkContext, why: StepSaid): void {
  const rd = routeDecision(ctx.net, ctx.pkt.dst);
  const before = ctx.pkt.oif;
  ctx.pkt.oif = rd.kind === 'local' ? 'lo' : rd.dev;
  ctx.record({ kind: 'routing', backend: 'kernel', said: stepSaid('re-route', { why, route: rd.text, oif: before !== ctx.pkt.oif ? stepSaid('oif-changed', { from: before ?? '-', to: ctx.pkt.oif ?? '-' }) : '' }) });
}

/**
 * The NAT station of the current hook. Returns a chain outcome when a nat chain stopped
 * the packet (drop, reject, unsupported), else null.
 */
export function natStation(ctx: WalkContext, rec: FlowRecord, natChains: readonly HookedChainItem[], priority: number): ChainOutcome | null {
  const hook = ctx.hook;
  const side: 'dst' | 'src' = hook === 'prerouting' || hook === 'output' ? 'dst' : 'src';
  const flow = ctx.flow;
  const common = { kind: 'nat' as const, backend: 'kernel' as const, priority };
  const manip = stepSaid(side === 'dst' ? 'word-destination' : 'word-source');
  if (flow.tracked === 'untracked') {
    if (natChains.length > 0) ctx.record({ ...common, said: stepSaid('nat-skipped-untracked') });
    return null;
  }
  if (flow.tracked === 'known' && rec.match) {
    const stored = storedNat(rec.match)[side];
    const skipped = natChains.length > 0 ? stepSaid('nat-chains-skipped', { chains: natChains.map((c) => c.chain.name).join(', ') }) : '';
    if (stored) {
      const words = applyRewrite(ctx, side, stored);
      ctx.record({ ...common, said: stepSaid('nat-stored', { skipped, manip, words: phrase(words) }) });
      if (hook === 'output') rerouteOutput(ctx, stepSaid('word-stored-dnat'));
    } else if (natChains.length > 0) {
      ctx.record({ ...common, said: stepSaid('nat-none-stored', { skipped, manip }) });
    }
    return null;
  }
  const done = side === 'dst' ? flow.dstNatDone : flow.srcNatDone;
  if (done) {
    if (natChains.length > 0) ctx.record({ ...common, said: stepSaid('nat-done-earlier', { manip }) });
    return null;
  }
  for (const [i, item] of natChains.entries()) {
    const outcome = runChain(ctx, item);
    if (outcome.kind !== 'accept') return outcome;
    const binding = side === 'dst' ? flow.dstBinding : flow.srcBinding;
    if (binding === null) continue;
    const r = resolveBinding(ctx, binding);
    if ('error' in r) {
      ctx.record({ ...common, said: r.error });
      return { kind: 'drop', said: r.error };
    }
    const words = applyRewrite(ctx, side, r, binding.randomFully);
    if (side === 'dst') flow.dnat = true;
    else flow.snat = true;
    const rest = natChains.slice(i + 1);
    const random = binding.randomFully && side === 'src' ? stepSaid('nat-fully-random') : '';
    const others = rest.length ? stepSaid('nat-rest-skipped', { chains: rest.map((c) => c.chain.name).join(', ') }) : '';
    ctx.record({ ...common, said: stepSaid('nat-rewrite', { binding: binding.text, manip, words: phrase(words), random, rest: others }) });
    if (hook === 'output' && side === 'dst') rerouteOutput(ctx, stepSaid('word-dnat'));
    break;
  }
  if (side === 'dst') flow.dstNatDone = true;
  else flow.srcNatDone = true;
  return null;
}

/** `nf_conntrack_confirm`: a NEW flow enters the table as the packet leaves the last hook. */
export function confirmStation(ctx: WalkContext, rec: FlowRecord, priority: number): void {
  const flow = ctx.flow;
  if (flow.tracked !== 'new' || flow.confirmed) return;
  flow.confirmed = true;
  rec.confirmed = true;
  ctx.record({ kind: 'conntrack', backend: 'kernel', priority, said: stepSaid('ct-confirm') });
}
