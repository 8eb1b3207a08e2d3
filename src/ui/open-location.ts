/**
 * Where Enter on a Services row goes: the Service's entry chain in whichever rewrite table
 * handles it on this node (src/analysis/service-dataplane.ts), with the cursor on the first
 * endpoint branch so a second Enter follows it to the DNAT; without endpoints, kube-proxy's
 * REJECT/DROP rule or no-endpoint map element; its frontend on the LB pane on a Cilium
 * node; or a notice saying why there is nowhere to go.
 */
import { nftChainRows } from '../analysis/nft-view.js';
import { chainRows } from '../analysis/rules-view.js';
import { iptablesServiceFilterRules, nftServiceNoEndpointSets, serviceDataplane } from '../analysis/service-dataplane.js';
import type { ServiceRow } from '../analysis/service-view.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import type { UiAction } from './state.js';

/** The actions Enter on Services row `row` dispatches (after selecting its Service). */
export function openServiceActions(snapshot: NodeSnapshot, row: ServiceRow): UiAction[] {
  // A headless Service has no ClusterIP, so kube-proxy and Cilium write nothing for it.
  if (row.headless) return [{ type: 'notice', notice: 'headless' }];
  const where = serviceDataplane(snapshot, row, { ports: row.ports, lbMaps: false });
  if (where.kind === 'iptables') {
    const chain = where.chains[0]!.chain;
    const focus = Math.max(0, (chainRows(where.ruleset, 'nat', chain) ?? []).findIndex((r) => r.probability !== null));
    return [{ type: 'openRules', location: { kind: 'chain', ruleset: 'iptables', table: 'nat', chain, focusRule: focus, from: 'services' } }];
  }
  if (where.kind === 'nft') {
    const { table, chain } = where.chains[0]!;
    const focus = Math.max(0, (nftChainRows(where.ruleset, table, chain) ?? []).findIndex((r) => r.branch === true));
    return [{ type: 'openRules', location: { kind: 'chain', ruleset: 'nft', table, chain, focusRule: focus, from: 'services' } }];
  }
  // No endpoints (or none local): kube-proxy's REJECT/DROP rule in the filter table is what the Service has.
  const ipt = snapshot.iptables?.value;
  const stop = ipt ? iptablesServiceFilterRules(ipt, row.namespace, row.name)[0] : undefined;
  if (stop) return [{ type: 'openRules', location: { kind: 'chain', ruleset: 'iptables', table: 'filter', chain: stop.chain, focusRule: stop.ruleIndex, from: 'services' } }];
  const nft = snapshot.nft?.value;
  const nftStop = nft ? nftServiceNoEndpointSets(nft, row.namespace, row.name)[0] : undefined;
  if (nftStop) return [{ type: 'openRules', location: { kind: 'set', ruleset: 'nft', table: nftStop.table, set: nftStop.set } }];
  // A Cilium node: the Service's frontend in the LB maps.
  const lbWhere = serviceDataplane(snapshot, row, { ports: row.ports });
  if (lbWhere.kind === 'cilium') {
    return [
      { type: 'switchPane', pane: 'lb' },
      { type: 'jumpTo', index: lbWhere.frontend, count: lbWhere.lb.frontends.length },
    ];
  }
  return [{ type: 'notice', notice: 'noDataplane' }];
}
