/**
 * Issue 19 item 8 in nftables mode (kubernetes#66354): kube-proxy's nftables backend keeps
 * the "no local endpoints" drop as an element of its `no-endpoint-nodeports` /
 * `no-endpoint-services` verdict maps, commented with the Service port's name
 * (pkg/proxy/nftables/proxier.go); the walk and `trace` quote it as the iptables walk
 * quotes the DROP rule's comment. From nft text (nodescope's kube-proxy generator) and from
 * `nft -j` (the real-kernel capture of fixtures/lab-nftables with one element added);
 * the kernel-made version is in test/lab/nft-kernel.test.ts.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseNftJson } from '../../src/parsers/nft-json.js';
import { parseNftText } from '../../src/parsers/nft-text.js';
import { traceText } from '../../src/report/trace.js';
import { walkPacket } from '../../src/trace/engine.js';
import type { TraceInput } from '../../src/trace/input.js';
import { fixtureDir } from '../helpers/fixtures.js';
import { LAB_SCENARIO } from '../lab/scenario.js';
import { labInput, labPod, labRules, packet } from './trace-builders.js';

// web with externalTrafficPolicy Local and only its endpoint on lab-node2.
const scenario = {
  ...LAB_SCENARIO,
  services: LAB_SCENARIO.services.map((s) =>
    s.name === 'web' ? { ...s, externalTrafficPolicy: 'Local' as const, endpoints: s.endpoints.filter((e) => e.nodeName !== LAB_SCENARIO.nodeName) } : s,
  ),
};
const web = scenario.services.find((s) => s.name === 'web')!;
const empty = scenario.services.find((s) => s.name === 'empty')!;
const fromOutside = () => packet({ from: `${LAB_SCENARIO.outsideIP}:40000`, to: `${LAB_SCENARIO.nodeIPs[0]}:${web.ports[0]!.nodePort}/tcp` });

/** The lab node's walk input with `nft` read from `text` by the real parser (no errors allowed). */
function withNft(base: TraceInput, rules: ReturnType<typeof parseNftText>): TraceInput {
  expect(rules.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
  return { ...base, nft: rules.value };
}

/** The real kernel's `nft -j list ruleset` of the lab (fixtures/lab-nftables) with `edit` applied to its maps. */
function labJson(edit: (map: { name: string; elem?: unknown[] }) => void): string {
  const doc = JSON.parse(readFileSync(path.join(fixtureDir('lab-nftables'), 'probes', 'nft-json.stdout'), 'utf8')) as { nftables: { map?: { name: string; elem?: unknown[] } }[] };
  for (const o of doc.nftables) if (o.map) edit(o.map);
  return JSON.stringify(doc);
}

describe('kubernetes#66354 in nftables mode: the eTP=Local drop quotes its map element', () => {
  it('nft text: the NodePort without a local endpoint is dropped, the verdict names the element and what it means', () => {
    expect(web.endpoints.length).toBeGreaterThan(0);
    const input = withNft(labInput('nftables', { scenario }), parseNftText(labRules('nftables', scenario), 'nft'));
    const r = walkPacket(input, fromOutside());
    expect(r.verdict.kind).toBe('dropped');
    expect(r.verdict.reason).toContain('drop ("default/web:http" in @no-endpoint-nodeports: has no local endpoints (traffic policy Local))');
    // The step that dropped it says which element matched, with its comment.
    const step = r.steps.find((s) => s.kind === 'rule' && s.matched && s.verdict === 'drop');
    expect(step?.reason).toContain('is in @no-endpoint-nodeports ("default/web:http")');
    expect(traceText(r)).toContain('"default/web:http" in @no-endpoint-nodeports: has no local endpoints');
  });

  it('nft text: a Service without any endpoint is rejected, and the reject names the element it came by', () => {
    const input = withNft(labInput('nftables', { scenario }), parseNftText(labRules('nftables', scenario), 'nft'));
    const r = walkPacket(input, packet({ from: labPod('client').ip, to: `${empty.clusterIP}:80/tcp` }));
    expect(r.verdict.kind).toBe('rejected');
    expect(r.verdict.reason).toContain('reject-chain ("default/empty" in @no-endpoint-services: has no endpoints)');
  });

  it('nft -j: the same drop, from the JSON listing of the kernel-made ruleset', () => {
    const port = web.ports[0]!.nodePort;
    // What kube-proxy writes for web with eTP=Local and no local endpoint: the drop element, and
    // no DNAT of outside traffic on the NodePort (its external chain has no goto to a policy
    // chain then; here the NodePort's service-nodeports element is taken out, the same for this packet).
    const json = labJson((m) => {
      if (m.name === 'no-endpoint-nodeports') m.elem = [[{ elem: { val: { concat: ['tcp', port] }, comment: 'default/web:http' } }, { drop: null }]];
      if (m.name === 'service-nodeports') m.elem = [];
    });
    const input = withNft(labInput('nftables'), parseNftJson(json, 'nft -j'));
    const r = walkPacket(input, fromOutside());
    expect(r.verdict.kind).toBe('dropped');
    expect(r.verdict.reason).toContain('drop ("default/web:http" in @no-endpoint-nodeports: has no local endpoints (traffic policy Local))');
  });

  it('nft -j: the kernel-made reject of a Service without endpoints names its element too', () => {
    const input = withNft(labInput('nftables'), parseNftJson(labJson(() => {}), 'nft -j'));
    const r = walkPacket(input, packet({ from: labPod('client').ip, to: `${empty.clusterIP}:80/tcp` }));
    expect(r.verdict.kind).toBe('rejected');
    expect(r.verdict.reason).toContain('("default/empty" in @no-endpoint-services: has no endpoints)');
  });

  it('an element of any other map is quoted without a kube-proxy meaning', () => {
    const json = labJson(() => {}).replaceAll('no-endpoint-services', 'my-drops');
    const input = withNft(labInput('nftables'), parseNftJson(json, 'nft -j'));
    const r = walkPacket(input, packet({ from: labPod('client').ip, to: `${empty.clusterIP}:80/tcp` }));
    expect(r.verdict.reason).toContain('reject-chain ("default/empty" in @my-drops):');
    expect(r.verdict.reason).not.toContain('has no');
  });
});
