/**
 * The walk with its indexes (iptables rule prefilters, the conntrack index by ports) gives
 * exactly the result of plain rule-by-rule evaluation and a scan of every flow
 * (`walkPacket(…, { indexed: false })`): on a generated capture (bench/gen, the capture
 * `npm run gen` writes), for every Service port from a pod and, for NodePorts, from
 * outside, for packets of captured flows in both directions, and for misses.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateWorld, writeModeBundle, type GenWorld } from '../../bench/gen/capture.js';
import type { NodeSnapshot } from '../../src/model/snapshot.js';
import { loadSnapshot } from '../../src/collect/session.js';
import { ReplayTransport } from '../../src/sources/replay.js';
import { walkPacket } from '../../src/trace/engine.js';
import { traceInputFromSnapshot, type TraceInput } from '../../src/trace/input.js';
import { parsePacketArgs, type PacketSpec } from '../../src/trace/packet.js';
import type { TraceResult } from '../../src/trace/types.js';

// 80 Services of seed s9 include Services without endpoints, UDP ports, NodePorts and terminating endpoints.
const world: GenWorld = generateWorld({ services: 80, endpoints: 3, seed: 's9', modes: ['iptables', 'nftables'], conntrack: 300 });
const dir = mkdtempSync(path.join(os.tmpdir(), 'nodescope-trace-indexed-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function snapshotOf(mode: 'iptables' | 'nftables'): Promise<NodeSnapshot> {
  const bundle = path.join(dir, mode);
  writeModeBundle(world, mode, bundle);
  const transport = new ReplayTransport(bundle);
  const { snapshot } = await loadSnapshot({ transport, live: false, apiText: transport.apiText()!, apiOrigin: 'api.json' });
  return snapshot;
}

const scenario = world.scenario;
const node = scenario.nodes.find((n) => n.name === scenario.nodeName)!;
/** A pod address on this node (the generator hands out addresses from .2 up). */
const podIP = node.podCIDR.replace(/\.0\/\d+$/, '.250');

/** Every Service port from a pod of the node, NodePorts also from outside, plus a port no rule has. */
function servicePackets(): PacketSpec[] {
  const out: PacketSpec[] = [];
  for (const s of scenario.services) {
    if (s.clusterIP === 'None') continue;
    for (const p of s.ports) {
      const proto = p.protocol.toLowerCase();
      out.push(parsePacketArgs({ from: `${podIP}:40001`, to: `${s.clusterIP}:${p.port}/${proto}` }));
      if (p.nodePort) out.push(parsePacketArgs({ from: `${scenario.outsideIP}:40002`, to: `${node.internalIP}:${p.nodePort}/${proto}` }));
    }
  }
  const first = scenario.services.find((s) => s.clusterIP !== 'None')!;
  out.push(parsePacketArgs({ from: `${podIP}:40003`, to: `${first.clusterIP}:1/tcp` }));
  return out;
}

/** Packets of captured flows: each flow's original tuple and its reply tuple (addresses and ports as captured). */
function flowPackets(input: TraceInput, count: number): PacketSpec[] {
  const out: PacketSpec[] = [];
  for (const e of (input.conntrack ?? []).slice(0, count)) {
    if (e.proto !== 'tcp' && e.proto !== 'udp') continue;
    for (const t of [e.orig, e.reply]) out.push(parsePacketArgs({ from: `${t.src}:${t.sport}`, to: `${t.dst}:${t.dport}/${e.proto}`, ...(e.proto === 'tcp' ? { flags: 'ack' } : {}) }));
  }
  return out;
}

function walkBoth(input: TraceInput, spec: PacketSpec): [TraceResult | string, TraceResult | string] {
  const run = (indexed: boolean) => {
    try {
      return walkPacket(input, spec, { indexed });
    } catch (e) {
      return `${(e as Error).name}: ${(e as Error).message}`;
    }
  };
  return [run(true), run(false)];
}

for (const mode of ['iptables', 'nftables'] as const) {
  describe(`indexed walk = plain walk (${mode} capture)`, () => {
    let input: TraceInput;
    beforeAll(async () => {
      input = traceInputFromSnapshot(await snapshotOf(mode));
    });

    it('is given the same input object for the same snapshot (and nft ruleset), a new one for another', async () => {
      const snapshot = await snapshotOf(mode);
      const first = traceInputFromSnapshot(snapshot);
      expect(traceInputFromSnapshot(snapshot)).toBe(first);
      expect(traceInputFromSnapshot({ ...snapshot })).not.toBe(first);
      expect(traceInputFromSnapshot({ ...snapshot })).toEqual(first);
      if (snapshot.nft?.value) {
        const nft = { ...snapshot.nft.value };
        expect(traceInputFromSnapshot(snapshot, nft)).toBe(traceInputFromSnapshot(snapshot, nft));
        expect(traceInputFromSnapshot(snapshot, nft).nft).toBe(nft);
      }
    });

    it('for every Service port (from a pod, NodePorts from outside) and a port without rules', () => {
      const packets = servicePackets();
      expect(packets.length).toBeGreaterThan(80);
      const verdicts = new Set<string>();
      for (const spec of packets) {
        const [fast, plain] = walkBoth(input, spec);
        expect(fast, `${spec.src} → ${spec.dst}:${spec.dport}/${spec.proto}`).toEqual(plain);
        if (typeof fast !== 'string') verdicts.add(fast.verdict.kind);
      }
      // The packets reach endpoints, get rejected (no endpoints), and are delivered locally or dropped.
      expect(verdicts.has('forwarded')).toBe(true);
      expect(verdicts.size).toBeGreaterThan(1);
    });

    it('for packets of captured flows in both directions (the conntrack index answers after a few lookups)', () => {
      const packets = flowPackets(input, 60);
      expect(packets.length).toBeGreaterThan(40);
      let known = 0;
      for (const spec of packets) {
        const [fast, plain] = walkBoth(input, spec);
        expect(fast).toEqual(plain);
        if (typeof fast !== 'string' && fast.conntrack?.existing) known++;
      }
      expect(known).toBe(packets.length);
    });
  });
}
