import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { generateIptablesRestore, iptablesProbability } from '../../src/analysis/kubeproxy-iptables.js';
import type { KubeProxyInput } from '../../src/analysis/lab-scenario-types.js';
import { LAB_SCENARIO } from '../lab/scenario.js';
import { makeEndpoint, makeService, upstreamOverallInput } from '../lab/upstream-overall-scenario.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const corpus = path.resolve(repoRoot, '../shared/corpus');
const overallFile = path.join(corpus, 'iptables/k8s-iptables-proxier-test-overall.txt');
const haveCorpus = existsSync(overallFile);
if (!haveCorpus) console.log(`skipping corpus comparison: ${overallFile} not found`);

/** Options matching kube-proxy's fake proxier in proxier_test.go. */
const FAKE_PROXIER = { nfacct: true, randomFully: false } as const;

function rulesOf(text: string, chain: string): string[] {
  return text.split('\n').filter((l) => l.startsWith(`-A ${chain} `));
}

function oneServiceInput(overrides: Parameters<typeof makeService>[2] = {}): KubeProxyInput {
  return {
    nodeName: 'node-a',
    nodeIPs: ['192.168.0.2'],
    clusterCIDR: '10.0.0.0/8',
    services: [makeService('ns', 'svc', { clusterIP: '172.30.0.10', ...overrides })],
  };
}

describe('generateIptablesRestore', () => {
  it.skipIf(!haveCorpus)('equals kube-proxy TestOverallIPTablesRules expectation line for line', () => {
    const expected = readFileSync(overallFile, 'utf8').trimEnd().split('\n');
    const actual = generateIptablesRestore(upstreamOverallInput(), FAKE_PROXIER).trimEnd().split('\n');
    expect(actual).toEqual(expected);
  });

  it('writes 1/N, 1/(N-1)… probabilities with 10 decimals and no statistic on the last endpoint', () => {
    const input = oneServiceInput({ endpoints: ['10.0.0.1', '10.0.0.2', '10.0.0.3', '10.0.0.4'].map((ip) => makeEndpoint(ip)) });
    const text = generateIptablesRestore(input);
    const svcChain = /-j (KUBE-SVC-\w+)/.exec(text)?.[1] ?? '';
    const probs = rulesOf(text, svcChain).map((r) => /--probability (\S+)/.exec(r)?.[1] ?? null);
    // first rule is the masquerade rule for off-cluster sources
    expect(probs).toEqual([null, '0.2500000000', '0.3333333333', '0.5000000000', null]);
    expect(iptablesProbability(3)).toBe('0.3333333333');
  });

  it('sorts endpoints by ip:port string, as kube-proxy does', () => {
    const input = oneServiceInput({ endpoints: ['10.0.0.9', '10.0.0.10'].map((ip) => makeEndpoint(ip)) });
    const text = generateIptablesRestore(input);
    const dnats = text.split('\n').filter((l) => l.includes('--to-destination')).map((l) => l.split(' ').pop());
    expect(dnats).toEqual(['10.0.0.10:80', '10.0.0.9:80']);
  });

  it('rejects a Service without endpoints in filter KUBE-SERVICES and writes no nat chain for it', () => {
    const text = generateIptablesRestore(oneServiceInput());
    expect(rulesOf(text, 'KUBE-SERVICES')).toContain(
      '-A KUBE-SERVICES -m comment --comment "ns/svc:p80 has no endpoints" -m tcp -p tcp -d 172.30.0.10 --dport 80 -j REJECT',
    );
    expect(text).not.toMatch(/KUBE-SVC-/);
  });

  it('skips headless Services entirely', () => {
    const text = generateIptablesRestore(oneServiceInput({ clusterIP: 'None', endpoints: [makeEndpoint('10.0.0.1')] }));
    expect(text).not.toMatch(/ns\/svc/);
  });

  it('uses terminating-but-serving endpoints when no endpoint is ready', () => {
    const input = oneServiceInput({
      endpoints: [
        makeEndpoint('10.0.0.1', { ready: false, serving: true, terminating: true }),
        makeEndpoint('10.0.0.2', { ready: false, serving: false, terminating: true }),
      ],
    });
    const dnats = generateIptablesRestore(input).split('\n').filter((l) => l.includes('-j DNAT'));
    expect(dnats).toHaveLength(1);
    expect(dnats[0]).toMatch(/10\.0\.0\.1:80$/);
  });

  it('routes Local external traffic through KUBE-SVL to local endpoints only', () => {
    const input = oneServiceInput({
      type: 'NodePort',
      externalTrafficPolicy: 'Local',
      ports: [{ name: 'p80', protocol: 'TCP', port: 80, targetPort: 8080, nodePort: 30080 }],
      endpoints: [makeEndpoint('10.0.0.1', { nodeName: 'node-a' }), makeEndpoint('10.0.1.1', { nodeName: 'node-b' })],
    });
    const text = generateIptablesRestore(input);
    const svl = /:(KUBE-SVL-\w+)/.exec(text)?.[1] ?? 'missing';
    expect(rulesOf(text, svl)).toHaveLength(1);
    expect(rulesOf(text, svl)[0]).toMatch(/-> 10\.0\.0\.1:8080/);
    expect(rulesOf(text, svl.replace('SVL', 'EXT')).at(-1)).toBe(`-A ${svl.replace('SVL', 'EXT')} -j ${svl}`);
  });

  it('adds MASQUERADE --random-fully and the built-in jumps for loading into an empty namespace', () => {
    const text = generateIptablesRestore(LAB_SCENARIO, { includeJumpRules: true });
    expect(text).toContain('-j MASQUERADE --random-fully');
    expect(rulesOf(text, 'PREROUTING')).toEqual(['-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES']);
    expect(rulesOf(text, 'POSTROUTING')).toEqual([
      '-A POSTROUTING -m comment --comment "kubernetes postrouting rules" -j KUBE-POSTROUTING',
    ]);
    // iptables -I leaves the last ensured jump first
    expect(rulesOf(text, 'INPUT').map((r) => r.split(' ').pop())).toEqual([
      'KUBE-FIREWALL',
      'KUBE-PROXY-FIREWALL',
      'KUBE-NODEPORTS',
      'KUBE-EXTERNAL-SERVICES',
    ]);
  });

  it('drops per-endpoint comments above 1000 endpoints (large cluster mode)', () => {
    const eps = Array.from({ length: 1001 }, (_, i) => makeEndpoint(`10.1.${Math.floor(i / 250)}.${(i % 250) + 1}`));
    const text = generateIptablesRestore(oneServiceInput({ endpoints: eps }));
    const sepRules = text.split('\n').filter((l) => l.startsWith('-A KUBE-SEP-'));
    expect(sepRules).toHaveLength(2002);
    expect(sepRules.every((l) => !l.includes('--comment'))).toBe(true);
  });

  it('writes the lab scenario with one KUBE-SERVICES rule per proxied service port, nodeports last', () => {
    const text = generateIptablesRestore(LAB_SCENARIO);
    const natServices = text.split('*nat')[1]?.split('\n').filter((l) => l.startsWith('-A KUBE-SERVICES')) ?? [];
    expect(natServices.map((l) => /--comment "([^"]+)"/.exec(l)?.[1])).toEqual([
      'default/web:http cluster IP',
      'kube-system/kube-dns:dns cluster IP',
      'kube-system/kube-dns:dns-tcp cluster IP',
      'kubernetes service nodeports; NOTE: this must be the last rule in this chain',
    ]);
  });

  it('masquerades all ClusterIP traffic with masqueradeAll and no local detector', () => {
    const input = { ...oneServiceInput({ endpoints: [makeEndpoint('10.0.0.1')] }), clusterCIDR: undefined };
    const text = generateIptablesRestore(input, { masqueradeAll: true });
    const masq = text.split('\n').filter((l) => l.startsWith('-A KUBE-SVC-') && l.endsWith('-j KUBE-MARK-MASQ'));
    expect(masq).toHaveLength(1);
    expect(masq[0]).not.toContain('! -s');
  });

  it('jumps to KUBE-NODEPORTS per node IP when nodePortIPs is set', () => {
    const text = generateIptablesRestore(oneServiceInput(), { nodePortIPs: ['192.168.0.2', '10.1.1.1'] });
    expect(rulesOf(text, 'KUBE-SERVICES').filter((l) => l.endsWith('-j KUBE-NODEPORTS')).map((l) => /-d (\S+)/.exec(l)?.[1])).toEqual([
      '192.168.0.2',
      '10.1.1.1',
    ]);
  });
});
