import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { generateNftablesRules } from '../../src/analysis/kubeproxy-nftables.js';
import type { KubeProxyInput } from '../../src/analysis/lab-scenario-types.js';
import { LAB_SCENARIO } from '../lab/scenario.js';
import { makeEndpoint, makeService, upstreamOverallInput } from '../lab/upstream-overall-scenario.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const corpus = path.resolve(repoRoot, '../shared/corpus');
const overallFile = path.join(corpus, 'nft/k8s-nftables-proxier-test-overall.txt');
const haveCorpus = existsSync(overallFile);
if (!haveCorpus) console.log(`skipping corpus comparison: ${overallFile} not found`);

const OBJECT_ORDER: Readonly<Record<string, number>> = { table: 10, chain: 9, rule: 8, set: 7, map: 6, element: 5 };

/**
 * kube-proxy's `sortNFTablesTransaction` (pkg/proxy/nftables/helpers_test.go): drop blank
 * and `#` lines, then stable-sort by object kind, object name, and (except rules) the line.
 */
function sortTransaction(tx: string): string[] {
  const lines = tx.split('\n').filter((l) => l !== '' && !l.startsWith('#'));
  return lines
    .map((line, index) => ({ line, index, w: line.split(' ') }))
    .sort((a, b) => {
      if (a.w.length < 5 || b.w.length < 5) return a.index - b.index;
      const [ka, kb] = [a.w[1] ?? '', b.w[1] ?? ''];
      if (ka !== kb) return (OBJECT_ORDER[kb] ?? 0) - (OBJECT_ORDER[ka] ?? 0);
      const [na, nb] = [a.w[4] ?? '', b.w[4] ?? ''];
      if (na !== nb) return na < nb ? -1 : 1;
      if (ka === 'rule' || a.line === b.line) return a.index - b.index;
      return a.line < b.line ? -1 : 1;
    })
    .map((x) => x.line);
}

function rulesOf(text: string, chain: string): string[] {
  const prefix = `add rule ip kube-proxy ${chain} `;
  return text.split('\n').filter((l) => l.startsWith(prefix)).map((l) => l.slice(prefix.length));
}

function oneService(overrides: Parameters<typeof makeService>[2] = {}): KubeProxyInput {
  return {
    nodeName: 'node-a',
    nodeIPs: ['192.168.0.2'],
    clusterCIDR: '10.0.0.0/8',
    services: [makeService('ns', 'svc', { clusterIP: '172.30.0.10', ...overrides })],
  };
}

describe('generateNftablesRules', () => {
  it.skipIf(!haveCorpus)('equals kube-proxy TestOverallNFTablesRules expectation (sorted as kube-proxy compares)', () => {
    const expected = sortTransaction(readFileSync(overallFile, 'utf8'));
    const actual = sortTransaction(generateNftablesRules(upstreamOverallInput()));
    expect(actual).toEqual(expected);
  });

  it('declares every chain before a rule or map element refers to it', () => {
    const lines = generateNftablesRules(LAB_SCENARIO).split('\n');
    const declared = new Set<string>();
    for (const line of lines) {
      const decl = /^add chain ip kube-proxy (\S+)/.exec(line);
      if (decl?.[1] !== undefined) declared.add(decl[1]);
      const rule = /^add rule ip kube-proxy (\S+)/.exec(line);
      if (rule?.[1] !== undefined) expect(declared, line).toContain(rule[1]);
      for (const ref of line.matchAll(/(?:goto|jump) ([^\s,}]+)/g)) expect(declared, line).toContain(ref[1]);
    }
  });

  it('spreads over endpoints with numgen random mod N in ip:port order', () => {
    const text = generateNftablesRules(oneService({ endpoints: ['10.0.0.9', '10.0.0.10', '10.0.0.2'].map((ip) => makeEndpoint(ip)) }));
    const svcChain = /add chain ip kube-proxy (service-[A-Z2-7]{8}-\S+)/.exec(text)?.[1] ?? 'missing';
    const vmap = rulesOf(text, svcChain).find((r) => r.startsWith('numgen')) ?? '';
    expect(vmap).toMatch(/^numgen random mod 3 vmap \{ 0 : goto endpoint-\S+__10\.0\.0\.10\/80 , 1 : goto \S+__10\.0\.0\.2\/80 , 2 : goto \S+__10\.0\.0\.9\/80 \}$/);
  });

  it('sends a Service without endpoints to reject-chain via no-endpoint-services', () => {
    const text = generateNftablesRules(oneService());
    expect(text).toContain('add element ip kube-proxy no-endpoint-services { 172.30.0.10 . tcp . 80 comment "ns/svc:p80" : goto reject-chain }');
    expect(text).not.toMatch(/add chain ip kube-proxy service-[A-Z2-7]{8}-/);
  });

  it('writes UDP and TCP ports of one Service as separate chains and map keys', () => {
    const text = generateNftablesRules(LAB_SCENARIO);
    expect(text).toMatch(/service-ips \{ 10\.96\.0\.10 \. udp \. 53 : goto service-\w{8}-kube-system\/kube-dns\/udp\/dns \}/);
    expect(text).toMatch(/service-ips \{ 10\.96\.0\.10 \. tcp \. 53 : goto service-\w{8}-kube-system\/kube-dns\/tcp\/dns-tcp \}/);
    expect(text).toMatch(/meta l4proto udp dnat to 10\.244\.0\.2:53/);
  });

  it('uses the node IPs for nodeport-ips and the NodePort map', () => {
    const text = generateNftablesRules(LAB_SCENARIO);
    expect(text).toContain('add element ip kube-proxy nodeport-ips { 192.168.49.2 }');
    expect(text).toMatch(/service-nodeports \{ tcp \. 30080 : goto external-\w{8}-default\/web\/tcp\/http \}/);
  });

  it('writes nothing for a headless Service', () => {
    expect(generateNftablesRules(LAB_SCENARIO)).not.toContain('web-headless');
  });
});
