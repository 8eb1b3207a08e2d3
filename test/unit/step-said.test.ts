/**
 * Every step the walkers produce says why as a key (issue 22 item 5): on the shipped captures
 * (iptables, nftables, Cilium) every Service frontend walked from the node, from a pod and from
 * outside has a key on each step and on the verdict (only a rule miss of the iptables prefilter
 * goes without: its reason is the matcher's condition list), the English rendered from the key
 * is the step's reason, and the Japanese leaves no `{param}` and no key sentence untranslated.
 * The step tables have the same keys and params in both languages.
 */
import { describe, expect, it } from 'vitest';
import { en, ja } from '../../src/text/messages/steps.js';
import { stepSaidEn, stepSaidText, type StepSaid } from '../../src/text/step-said.js';
import { saidText } from '../../src/text/why.js';
import { traceFromSnapshot } from '../../src/trace/choose-engine.js';
import type { TraceResult } from '../../src/trace/types.js';
import type { NodeSnapshot } from '../../src/model/snapshot.js';
import { snapshotOf } from '../helpers/fixtures.js';
import { englishLeft, latinWords } from '../helpers/english.js';

const CAPTURES = ['lab-iptables', 'lab-nftables', 'lab-cilium'] as const;

/** The walks of every Service frontend of `snapshot`: node → ClusterIP, pod → ClusterIP, outside → node:NodePort. */
function walks(snapshot: NodeSnapshot): TraceResult[] {
  const api = snapshot.api!.value!;
  const podIp = api.pods.flatMap((p) => p.podIPs).find((ip) => !ip.includes(':'));
  const nodeIp = (snapshot.addrs?.value ?? []).flatMap((i) => i.addresses).find((a) => a.family === 'inet' && !a.local.startsWith('127.'))?.local;
  const out: TraceResult[] = [];
  for (const svc of api.services) {
    for (const port of svc.ports) {
      const proto = port.protocol.toLowerCase();
      for (const ip of svc.clusterIPs.filter((x) => !x.includes(':'))) {
        out.push(traceFromSnapshot(snapshot, { entry: 'host', to: `${ip}:${port.port}/${proto}` }));
        out.push(traceFromSnapshot(snapshot, { entry: 'host', to: `${ip}:${port.port}/${proto}`, ...(proto === 'tcp' ? { flags: 'ack' } : {}) }));
        if (podIp) out.push(traceFromSnapshot(snapshot, { from: podIp, entry: 'pod', to: `${ip}:${port.port}/${proto}` }));
      }
      if (port.nodePort !== undefined && nodeIp) out.push(traceFromSnapshot(snapshot, { from: '203.0.113.10', entry: 'external', to: `${nodeIp}:${port.nodePort}/${proto}` }));
    }
  }
  return out;
}

function keysOf(s: StepSaid, into: Set<string>): Set<string> {
  into.add(s.key);
  for (const v of Object.values(s.params)) {
    if (typeof v === 'object' && 'key' in v) keysOf(v, into);
    if (typeof v === 'object' && 'list' in v) for (const x of v.list) if (typeof x === 'object' && 'key' in x) keysOf(x, into);
  }
  return into;
}

describe('the step tables', () => {
  it('have the same keys and the same params in English and Japanese', () => {
    const params = (s: string) => [...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
    expect(Object.keys(ja).sort()).toEqual(Object.keys(en).sort());
    for (const key of Object.keys(en) as (keyof typeof en)[]) expect(params(ja[key]), key).toEqual(params(en[key]));
  });
});

describe.each(CAPTURES)('the walks of the %s capture', (capture) => {
  it('carry a key on every step and verdict; English from the key is the reason; Japanese fills every param', async () => {
    const snapshot = await snapshotOf(capture);
    const results = walks(snapshot);
    expect(results.length).toBeGreaterThan(5);
    const unkeyed: string[] = [];
    const used = new Set<string>();
    for (const r of results) {
      for (const s of r.steps) {
        if (!s.said) {
          unkeyed.push(`${s.kind} ${s.chain ?? ''}: ${s.reason}`);
          continue;
        }
        keysOf(s.said, used);
        expect(stepSaidEn(s.said)).toBe(s.reason);
        const jaText = saidText('ja', s.said, s.reason);
        expect(jaText, s.reason).not.toMatch(/\{[a-z]\w*\}/);
        // Japanese, or only data, symbols and proper terms (a condition list such as `mark 0x0 ≠ 0x4000`).
        if (!/[\u3040-\u30ff\u4e00-\u9fff]/.test(jaText)) expect(englishLeft(jaText, new Set(latinWords(`${s.ruleText ?? ''} ${s.chain ?? ''}`))), jaText).toEqual([]);
      }
      if (r.verdict.kind !== 'ambiguous') {
        expect(r.verdict.said, r.verdict.reason).toBeDefined();
        expect(stepSaidEn(r.verdict.said!)).toBe(r.verdict.reason);
      }
    }
    expect(unkeyed).toEqual([]);
    // What a key adds over the phrase table: the Japanese of a keyed sentence comes from the key's own row.
    const dnat = results.flatMap((r) => r.steps).find((s) => s.said && (s.said.key === 'nat-rewrite' || s.said.key === 'dnat-to-endpoint'));
    expect(dnat, 'a walk that rewrites the destination').toBeDefined();
    expect(stepSaidText('ja', dnat!.said!)).not.toContain('rewrites');
    expect(used.size).toBeGreaterThan(8);
  }, 120_000);
});
