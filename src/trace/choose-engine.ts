/**
 * The engine choice for one packet over a snapshot: Cilium's eBPF walk on a kube-proxy
 * replacement node, else the netfilter walk (iptables / nftables). The CLI `trace`
 * report, the Step pane and tours all walk through {@link traceFromSnapshot}.
 */
import type { NftRuleset } from '../model/nftables.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import { walkPacket } from './engine.js';
import { walkCilium } from './cilium.js';
import { detectProxyMode } from '../analysis/proxy-mode.js';
import { traceInputFromSnapshot } from './input.js';
import { parsePacketArgs } from './packet.js';
import type { TraceResult } from './types.js';
import type { BranchChoice } from './context.js';
import { said, UserError } from '../errors.js';

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
  readonly output?: 'text' | 'json' | 'yaml';
  readonly nft?: NftRuleset;
}

/** The branch option of the arguments; throws {@link UserError} for both given or a bad index. */
export function branchChoice(args: Pick<TraceCommandArgs, 'endpoint' | 'branch'>): BranchChoice {
  if (args.endpoint !== undefined && args.branch !== undefined) throw new UserError(said('ue.endpointAndBranch'), said('ue.endpointAndBranch.hint'));
  if (args.endpoint !== undefined) return { kind: 'endpoint', endpoint: args.endpoint.trim() };
  if (args.branch !== undefined) {
    if (!/^[0-9]{1,4}$/.test(args.branch.trim())) throw new UserError(said('ue.branch.notIndex', { branch: args.branch }), said('ue.branch.notIndexHint'));
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
      throw new UserError(said('ue.noRoutes'), said('ue.noRoutes.hint'));
    }
    const input = { lb: snapshot.lb!.value!, addrs, routes, status: snapshot.ciliumStatus?.value ?? null, mapsRead: snapshot.lbMapsRead };
    return walkCilium(input, spec, { branch: branchChoice(args) });
  }
  const input = traceInputFromSnapshot(snapshot, args.nft);
  if (input.routes.length === 0 && input.addrs.length === 0) {
    throw new UserError(said('ue.noRoutes'), said('ue.noRoutes.hint'));
  }
  return walkPacket(input, spec, { branch: branchChoice(args) });
}
