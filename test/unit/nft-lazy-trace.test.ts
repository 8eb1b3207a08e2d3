/**
 * `trace` on a snapshot whose nft -j ruleset is read with rules built on first read
 * (SnapshotInput `lazyRules`, src/collect/parts.ts `lazy`: what `trace` loads)
 * against the eager snapshot: the same trace, step by step (its JSON), for Services of a
 * generated kube-proxy capture and the lab capture; and the walk builds only the chains it
 * enters (counted), not the ruleset.
 */
import { describe, expect, it } from 'vitest';
import { generateWorld, modeOutputs } from '../../bench/gen/capture.js';
import { buildSnapshot } from '../../src/collect/build-snapshot.js';
import type { NftRuleset } from '../../src/model/nftables.js';
import type { NodeSnapshot } from '../../src/model/snapshot.js';
import { catalog, fillArgv, probe } from '../../src/sources/catalog.js';
import { runProbes, type ProbeRun } from '../../src/sources/probe-runner.js';
import { ReplayTransport } from '../../src/sources/replay.js';
import { traceFromSnapshot } from '../../src/trace/choose-engine.js';
import { fixtureDir } from '../helpers/fixtures.js';

const json = (x: unknown) => JSON.stringify(x, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v));
const chains = (r: NftRuleset) => r.tables.flatMap((t) => t.chains);
const built = (r: NftRuleset) => chains(r).filter((c) => Object.getOwnPropertyDescriptor(c, 'rules')?.get === undefined).length;

/** The trace's JSON, or its error's message (a trace that cannot run says why, the same either way). */
function traceText(snapshot: NodeSnapshot, to: string, from: string): string {
  try {
    return json(traceFromSnapshot(snapshot, { from, to }));
  } catch (e) {
    return `error: ${(e as Error).message}`;
  }
}

describe('trace on an nft ruleset built on first read equals trace on the eager one', () => {
  it('a generated kube-proxy capture of 300 Services: every traced Service the same, and only the chains walked are built', () => {
    const world = generateWorld({ services: 300, endpoints: 3, seed: 'lazy-trace', modes: ['nftables'], conntrack: 10 });
    const runs: ProbeRun[] = [...modeOutputs(world, 'nftables')].map(([id, stdout]) => {
      const argv = fillArgv(probe(id).argv, catalog().params, {});
      return { id, argv, status: 'ok', result: { argv, stdout, stderr: '', exitCode: 0, startedAt: '2026-02-02T11:00:00.000Z', durationMs: 1 } };
    });
    const input = { runs, apiText: world.apiText, source: { kind: 'replay' as const, label: 'gen', live: false }, capturedAt: '2026-02-02T11:00:00.000Z' };
    const eager = buildSnapshot(input);
    const lazy = buildSnapshot({ ...input, lazyRules: true });
    const ruleset = lazy.nft!.value!;
    const total = chains(ruleset).length;
    expect(built(ruleset)).toBeLessThan(total / 10);
    const from = '10.128.0.200';
    const services = world.scenario.services.filter((s) => s.endpoints.length > 0).slice(0, 12);
    const first = services[0]!;
    const before = built(ruleset);
    const one = traceText(lazy, `${first.clusterIP}:${first.ports[0]!.port}/${first.ports[0]!.protocol.toLowerCase()}`, from);
    expect(one).not.toMatch(/^error/);
    const walked = built(ruleset) - before;
    expect(walked).toBeGreaterThan(0);
    expect(walked).toBeLessThan(50);
    for (const s of services) {
      const to = `${s.clusterIP}:${s.ports[0]!.port}/${s.ports[0]!.protocol.toLowerCase()}`;
      expect(traceText(lazy, to, from), to).toBe(traceText(eager, to, from));
    }
    expect(built(ruleset)).toBeLessThan(total / 2);
    expect(lazy.nft!.diagnostics).toEqual(eager.nft!.diagnostics);
    expect(built(ruleset)).toBe(total);
    expect(json(lazy.nft!.value)).toBe(json(eager.nft!.value));
  });

  it('the lab-nftables capture: the same trace to kube-dns and the API server', async () => {
    const transport = new ReplayTransport(fixtureDir('lab-nftables'));
    const runs = await runProbes(transport, {});
    const input = { runs, apiText: transport.apiText()!, source: { kind: 'replay' as const, label: 'lab-nftables', live: false }, capturedAt: runs[0]!.result.startedAt };
    const eager = buildSnapshot(input);
    const lazy = buildSnapshot({ ...input, lazyRules: true });
    expect(built(lazy.nft!.value!)).toBeLessThan(chains(lazy.nft!.value!).length);
    for (const to of ['10.96.0.10:53/udp', '10.96.0.1:443/tcp', '10.96.0.10:53/tcp']) {
      expect(traceText(lazy, to, '10.244.0.5'), to).toBe(traceText(eager, to, '10.244.0.5'));
    }
  });
});
