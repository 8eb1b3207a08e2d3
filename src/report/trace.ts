/**
 * `nodescope trace --from IP[:PORT] --to IP:PORT/PROTO [--entry pod|host|external]
 * [--endpoint IP:PORT | --branch N] [--flags syn,ack] [--mark 0x4000] -o text|json`:
 * step mode for one packet over a snapshot.
 *
 * JSON document (stable): the head fields of `show` (`node, kernel, source, live,
 * capturedAt, mode, evidence`), then
 * `request: {entry, entryInferred, entryReason, branch, packet}`,
 * `steps: [{index, kind, backend, hook, family, table, chain, priority, ruleIndex, handle,
 * ruleText, matched, verdict, reason, header, counters: {packets, bytes} | null,
 * branches: [{index, probability, target, endpoint, ruleIndex, chosen}] | null}]`,
 * `verdict: {kind, reason, step, oif, nexthop, endpoint}`, `final` (the header as it
 * leaves), `conntrack: {proto, original, reply, state, dnat, snat, existing, text} | null`,
 * `reply: {sent, received, reason} | null`, `notes: [...]`. A header is `{family, proto,
 * src, dst, sport, dport, icmpType, icmpCode, icmpId, tcpFlags, mark, iif, oif, ct,
 * randomSport}`; counters are decimal strings (64-bit exact); probabilities 0–1.
 */
import type { NftRuleset } from '../model/nftables.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import { branchLines, formatHeader, stepLine, tupleText } from '../trace/describe.js';
import { walkPacket } from '../trace/engine.js';
import { walkCilium } from '../trace/cilium.js';
import { detectProxyMode } from '../analysis/proxy-mode.js';
import { traceInputFromSnapshot } from '../trace/input.js';
import { parsePacketArgs } from '../trace/packet.js';
import type { TraceResult } from '../trace/types.js';
import type { BranchChoice } from '../trace/context.js';
import { UserError } from '../errors.js';
import { headText, showHead } from './header.js';
import { toJson } from './json.js';
import { terminalSafe } from '../text/terminal-safe.js';

/**
 * The words of `nodescope trace` (strings as typed, except `nft`). `endpoint` follows the
 * random branch that leads to `IP[:PORT]`; `branch` the branch with that 0-based index;
 * `nft`: the parsed nft ruleset of the node, when the caller has it (iptables-nft tables
 * in it are evaluated once, from the iptables dump).
 */
export interface TraceCommandArgs {
  readonly from?: string;
  readonly to: string;
  readonly entry?: string;
  readonly endpoint?: string;
  readonly branch?: string;
  readonly flags?: string;
  readonly mark?: string;
  readonly output?: 'text' | 'json';
  readonly nft?: NftRuleset;
}

/** The branch option of the arguments; throws {@link UserError} for both given or a bad index. */
export function branchChoice(args: Pick<TraceCommandArgs, 'endpoint' | 'branch'>): BranchChoice {
  if (args.endpoint !== undefined && args.branch !== undefined) throw new UserError('--endpoint and --branch both given', 'choose the branch one way');
  if (args.endpoint !== undefined) return { kind: 'endpoint', endpoint: args.endpoint.trim() };
  if (args.branch !== undefined) {
    if (!/^[0-9]{1,4}$/.test(args.branch.trim())) throw new UserError(`--branch ${args.branch}: not a branch index`, 'give 0 for the first branch, 1 for the second, …');
    return { kind: 'index', index: Number(args.branch) };
  }
  return { kind: 'first' };
}

/**
 * True when `snapshot` is a Cilium kube-proxy-replacement node: the detected mode is
 * `cilium`, or the LB table has services and no kube-proxy KUBE- chain exists.
 */
export function isCiliumKpr(snapshot: NodeSnapshot): boolean {
  const lb = snapshot.lb?.value;
  if (!lb || lb.services.length === 0) return false;
  return detectProxyMode(snapshot).mode === 'cilium';
}

/**
 * The walk for the arguments over `snapshot` (throws {@link UserError} for bad arguments).
 * On a Cilium kube-proxy-replacement node ({@link isCiliumKpr}) the packet is walked
 * through Cilium's eBPF programs and LB maps (`src/trace/cilium.ts`), same result shape.
 */
export function traceFromSnapshot(snapshot: NodeSnapshot, args: TraceCommandArgs): TraceResult {
  const spec = parsePacketArgs(args);
  if (isCiliumKpr(snapshot)) {
    const addrs = snapshot.addrs?.value ?? [];
    const routes = snapshot.routes?.value ?? [];
    if (routes.length === 0 && addrs.length === 0) {
      throw new UserError('this source has no addresses and routes of the node (ip -j addr, ip -j route)', 'capture them (nodescope capture) or use a live source');
    }
    const input = { lb: snapshot.lb!.value!, addrs, routes, status: snapshot.ciliumStatus?.value ?? null, mapsRead: snapshot.lbMapsRead };
    return walkCilium(input, spec, { branch: branchChoice(args) });
  }
  const input = traceInputFromSnapshot(snapshot, args.nft);
  if (input.routes.length === 0 && input.addrs.length === 0) {
    throw new UserError('this source has no addresses and routes of the node (ip -j addr, ip -j route)', 'capture them (nodescope capture) or use a live source');
  }
  return walkPacket(input, spec, { branch: branchChoice(args) });
}

/** The walk as text: one line per step, then verdict, final packet, conntrack entry and reply. */
export function traceText(r: TraceResult): string {
  const lines: string[] = [];
  const req = r.request;
  lines.push(`packet ${formatHeader(req.packet)}`);
  lines.push(`entry ${req.entry}${req.entryInferred ? ' (inferred)' : ''}: ${req.entryReason}`);
  if (req.branch) lines.push(`branch: ${req.branch}`);
  lines.push('');
  for (const s of r.steps) {
    lines.push(`${String(s.index).padStart(3)} ${stepLine(s)}`);
    if (s.backend === 'ebpf' && s.ruleText) lines.push(`      ${s.ruleText}`);
    if (s.branches && s.matched !== false) for (const b of branchLines(s.branches)) lines.push(`      ${b}`);
  }
  lines.push('');
  lines.push(`verdict: ${r.verdict.kind}: ${r.verdict.reason}`);
  lines.push(`leaves as: ${formatHeader(r.final)}`);
  if (r.conntrack) lines.push(`conntrack${r.conntrack.existing ? ' (existing)' : ''}: ${r.conntrack.text}`);
  if (r.reply) lines.push(`reply: ${tupleText(r.reply.sent)} arrives as ${tupleText(r.reply.received)}: ${r.reply.reason}`);
  for (const n of r.notes) lines.push(`note: ${n}`);
  // Each entry is one line: a chain name or comment from the node stays on it.
  return `${lines.map((l) => terminalSafe(l)).join('\n')}\n`;
}

/** The walk as the stable JSON document described in the module comment. */
export function traceJson(r: TraceResult): unknown {
  return {
    request: r.request,
    steps: r.steps,
    verdict: r.verdict,
    final: r.final,
    conntrack: r.conntrack,
    reply: r.reply,
    notes: r.notes,
  };
}

/**
 * Runs `nodescope trace` over `snapshot` and returns the document (`args.output`, default
 * text). Throws {@link UserError} for arguments to fix (addresses, ports, protocol,
 * entry, branch) and when the snapshot lacks the node's addresses and routes.
 */
export function runTraceCommand(snapshot: NodeSnapshot, args: TraceCommandArgs): string {
  const result = traceFromSnapshot(snapshot, args);
  if (args.output === 'json') return toJson({ ...showHead(snapshot), ...(traceJson(result) as object) });
  return headText(showHead(snapshot)) + traceText(result);
}
