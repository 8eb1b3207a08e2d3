/**
 * The node lab in Cilium mode, loaded by a live staged session as the TUI loads it: the mode
 * is named from the light probes (the pinned LB maps, the rulesets parsed) before the first LB
 * map dump is even started, and the full detection of the dumps agrees (issue 23 item 1).
 * Counts an order of events, never a time.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { earlyProxyMode, type EarlyMode } from '../../src/analysis/early-mode.js';
import { detectProxyMode } from '../../src/analysis/proxy-mode.js';
import { Session } from '../../src/collect/session.js';
import type { NodeSnapshot } from '../../src/model/snapshot.js';
import { LocalTransport } from '../../src/sources/local.js';
import { labAvailable } from '../helpers/lab.js';
import { labDown, labUp, type LabHandle } from './lab.js';

const PREFIX = 'nscem-';
const available = labAvailable(['bpftool', 'ip', 'iptables-restore', 'nft', 'conntrack', 'dnsmasq', 'curl']);

describe.skipIf(!available)('Cilium mode of the node lab, loaded by a live staged session', () => {
  let lab: LabHandle;
  /** What the session showed when the first LB map dump was asked for. */
  let atFirstDump: { early: EarlyMode | null; lbPending: boolean } | null = null;
  let dumpsAsked = 0;
  let last: NodeSnapshot | null = null;

  beforeAll(async () => {
    lab = await labUp('cilium', { prefix: PREFIX });
    const transport = new LocalTransport({ netns: lab.names.node });
    const session = new Session({ transport, live: true, apiText: readFileSync(lab.apiObjectsPath, 'utf8'), params: { bpfRoot: lab.bpfRoot ?? undefined } as Record<string, string> });
    const exec = transport.exec.bind(transport);
    transport.exec = (argv, options) => {
      if (argv.some((a) => a.includes('/cilium_lb'))) {
        dumpsAsked++;
        if (atFirstDump === null) {
          const state = session.getState();
          atFirstDump = { early: earlyProxyMode(state.snapshot, state.pinnedLbMaps), lbPending: state.snapshot?.pending?.includes('lb') ?? true };
        }
      }
      return exec(argv, options);
    };
    try {
      await session.start();
      last = session.getState().snapshot;
    } finally {
      await session.stop();
    }
  }, 180_000);

  afterAll(async () => {
    await labDown({ prefix: PREFIX });
  }, 60_000);

  it('names cilium from the pinned maps before the first LB map dump starts', () => {
    expect(dumpsAsked).toBeGreaterThan(0);
    expect(atFirstDump?.lbPending).toBe(true);
    expect(atFirstDump?.early?.mode).toBe('cilium');
    expect(atFirstDump?.early?.pinned).toContain('cilium_lb4_services_v2');
  });

  it('and the full detection from the dumps agrees, with the early reading gone', () => {
    expect(last?.pending ?? []).toEqual([]);
    expect(detectProxyMode(last!).mode).toBe('cilium');
    expect(earlyProxyMode(last, ['cilium_lb4_services_v2'])).toBeNull();
  });
});
