/**
 * Where Enter on a Services row goes: the Service's entry chain in whichever rewrite table
 * handles it on this node (src/analysis/service-dataplane.ts), with the cursor on the first
 * endpoint branch so a second Enter follows it to the DNAT; its frontend on the LB pane on
 * a Cilium node; or a notice saying why there is nowhere to go.
 */
import { nftChainRows } from '../analysis/nft-view.js';
import { chainRows } from '../analysis/rules-view.js';
import { serviceDataplane } from '../analysis/service-dataplane.js';
import type { ServiceRow } from '../analysis/service-view.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import type { UiAction } from './state.js';

/** The actions Enter on Services row `row` dispatches (after selecting its Service). */
export function openServiceActions(snapshot: NodeSnapshot, row: ServiceRow): UiAction[] {
  // A headless Service has no ClusterIP, so kube-proxy and Cilium write nothing for it.
  if (row.headless) return [{ type: 'notice', notice: 'headless' }];
  const where = serviceDataplane(snapshot, row, { ports: row.ports });
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
  if (where.kind === 'cilium') {
    return [
      { type: 'switchPane', pane: 'lb' },
      { type: 'jumpTo', index: where.frontend, count: where.lb.frontends.length },
    ];
  }
  return [{ type: 'notice', notice: 'noDataplane' }];
}
