/**
 * Hook order: the data tables (every hook's stations, the iptables tables' priorities)
 * and the plan of a real node: the iptables lab capture, whose iptables-nft tables are
 * also in its nft JSON and must be planned once, from the iptables dump, with only the
 * built-in chains the kernel really registered.
 */
import { describe, expect, it } from 'vitest';
import { findChain } from '../../src/model/iptables.js';
import { IPTABLES_PLACEMENT, KERNEL_STATIONS, PACKET_PATHS, hookPlan, type HookItem } from '../../src/trace/hooks.js';
import { traceInputFromSnapshot } from '../../src/trace/input.js';
import { snapshotOf } from '../helpers/fixtures.js';

const name = (i: HookItem) => (i.kind === 'station' ? `[${i.station}]` : `${i.kind === 'nft' ? `${i.table.family} ${i.table.name}` : i.table}/${i.chain.name}@${i.priority}`);

describe('hook tables', () => {
  it('gives every station and table placement a reason, and every path hooks in kernel order', () => {
    for (const s of KERNEL_STATIONS) expect(s.reason.length).toBeGreaterThan(20);
    for (const p of Object.values(IPTABLES_PLACEMENT)) expect(p.reason).toMatch(/NF_IP_PRI_/);
    expect(PACKET_PATHS.map((p) => p.hooks.join('>'))).toEqual(['prerouting>input', 'prerouting>forward>postrouting', 'output>postrouting']);
    // raw before conntrack before mangle before the NAT station before filter.
    expect(IPTABLES_PLACEMENT.raw.priority.prerouting!).toBeLessThan(KERNEL_STATIONS.find((s) => s.hook === 'prerouting' && s.station === 'conntrack-in')!.priority);
    expect(IPTABLES_PLACEMENT.mangle.priority.prerouting!).toBeLessThan(IPTABLES_PLACEMENT.nat.priority.prerouting!);
    expect(IPTABLES_PLACEMENT.nat.priority.postrouting!).toBeGreaterThan(IPTABLES_PLACEMENT.filter.priority.forward!);
  });
});

describe('the plan of the iptables lab capture', async () => {
  const snapshot = await snapshotOf('lab-iptables');
  const input = traceInputFromSnapshot(snapshot);

  it('plans the iptables-nft tables once, from the iptables dump, and skips their nft copies', () => {
    const plan = hookPlan(input, 'prerouting', 'ipv4');
    expect(plan.items.map(name)).toEqual(['[conntrack-in]', '[nat]']);
    expect(plan.natChains.map(name)).toEqual(['nat/PREROUTING@-100']);
    expect([...plan.skippedNftTables].sort()).toEqual(['ip filter', 'ip nat']);
  });

  it('leaves out built-in chains iptables-nft-save prints but the kernel never registered', () => {
    const rs = snapshot.iptables!.value!;
    expect(findChain(rs, 'nat', 'INPUT')).toBeDefined();
    const plan = hookPlan(input, 'input', 'ipv4');
    expect(plan.natChains).toEqual([]);
    expect(plan.items.map(name)).toEqual(['filter/INPUT@0', '[nat]', '[confirm]']);
    // Without the nft JSON nothing tells, and the printed chain is planned.
    const blind = traceInputFromSnapshot({ ...snapshot, nft: null });
    expect(hookPlan(blind, 'input', 'ipv4').natChains.map(name)).toEqual(['nat/INPUT@100']);
  });

  it('has no IPv6 chains on this node', () => {
    expect(hookPlan(input, 'forward', 'ipv6').items.every((i) => i.kind === 'station')).toBe(true);
  });
});
