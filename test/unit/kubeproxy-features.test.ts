/**
 * The rule generators per Kubernetes feature (issue 21), each against kube-proxy's own
 * unit-test expectation for the same Services and EndpointSlices, named per test:
 * - iptables, whole-text: pkg/proxy/iptables/proxier_test.go `TestInternalTrafficPolicyE2E`
 *   and `TestTerminatingEndpointsTrafficPolicyLocal` (the stored upstream version, 1.28-era:
 *   its fake proxier has no nfacct counters, hence `nfacct: false`; compared after
 *   kube-proxy's own `sortIPTablesRules` order, which the generator writes);
 * - lines of `TestOverallIPTablesRules` / `TestOverallNFTablesRules` (shared/corpus) that
 *   carry one feature: eTP=Local with health-check NodePort, loadBalancerSourceRanges,
 *   externalIPs;
 * - facts of release-1.35 sources where upstream asserts by packet flow only: the
 *   `ipMode: Proxy` case of `TestLoadBalancerIngressRouteTypeProxy` (no rule for the LB IP),
 *   `TestInternalTrafficPolicy` in nftables (flow "no endpoints" → DROP), topology hints
 *   (pkg/proxy/topology.go), the service-proxy-name label selector (cmd/kube-proxy/app/server.go),
 *   and IPv6 chain names from knftables' kube-proxy fixture (`endpoint-ZVRFLKHO-…`).
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { generateIptablesRestore } from '../../src/analysis/kubeproxy-iptables.js';
import { generateNftablesRules } from '../../src/analysis/kubeproxy-nftables.js';
import type { KubeProxyInput, ScenarioEndpoint, ScenarioService } from '../../src/analysis/lab-scenario-types.js';
import { makeEndpoint, makeService } from '../lab/upstream-overall-scenario.js';

const NODE = 'test-node';
const OLD_FAKE = { nfacct: false, randomFully: false } as const;
const corpus = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../shared/corpus');
const overallIpt = path.join(corpus, 'iptables/k8s-iptables-proxier-test-overall.txt');
const overallNft = path.join(corpus, 'nft/k8s-nftables-proxier-test-overall.txt');
const haveCorpus = existsSync(overallIpt) && existsSync(overallNft);

function input(services: ScenarioService[], more: Partial<KubeProxyInput> = {}): KubeProxyInput {
  return { nodeName: NODE, nodeIPs: ['192.168.0.2'], clusterCIDR: '10.0.0.0/8', serviceCIDRs: ['172.30.0.0/16'], services, ...more };
}

/** `ns1/svc1`: ClusterIP 172.30.1.1, one unnamed TCP port 80 (the upstream E2E tests' Service). */
function svc1(overrides: Partial<ScenarioService>): ScenarioService {
  return makeService('ns1', 'svc1', { clusterIP: '172.30.1.1', ports: [{ name: '', protocol: 'TCP', port: 80, targetPort: 80 }], ...overrides });
}

const lines = (t: string) => t.trimEnd().split('\n').map((l) => l.trim()).filter((l) => l !== '');
const ep = (ip: string, nodeName: string, more: Partial<ScenarioEndpoint> = {}) => makeEndpoint(ip, { nodeName, ...more });

const FILTER_BASE = `*filter
:KUBE-NODEPORTS - [0:0]
:KUBE-SERVICES - [0:0]
:KUBE-EXTERNAL-SERVICES - [0:0]
:KUBE-FIREWALL - [0:0]
:KUBE-FORWARD - [0:0]
:KUBE-PROXY-FIREWALL - [0:0]`;
const FILTER_TAIL = `-A KUBE-FIREWALL -m comment --comment "block incoming localnet connections" -d 127.0.0.0/8 ! -s 127.0.0.0/8 -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP
-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP
-A KUBE-FORWARD -m comment --comment "kubernetes forwarding rules" -m mark --mark 0x4000/0x4000 -j ACCEPT
-A KUBE-FORWARD -m comment --comment "kubernetes forwarding conntrack rule" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT
COMMIT`;
const NAT_FIXED = `-A KUBE-MARK-MASQ -j MARK --or-mark 0x4000
-A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN
-A KUBE-POSTROUTING -j MARK --xor-mark 0x4000
-A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE`;
const NODEPORTS_LAST = '-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS';

describe('internalTrafficPolicy (kube-proxy TestInternalTrafficPolicyE2E, iptables)', () => {
  const endpoints = (nodes: string[]) => ['10.0.1.1', '10.0.1.2', '10.0.1.3'].map((ip, i) => ep(ip, nodes[i]!));

  it('"internalTrafficPolicy is local and there are local endpoints": KUBE-SVL with the local endpoint only', () => {
    const text = generateIptablesRestore(input([svc1({ internalTrafficPolicy: 'Local', endpoints: endpoints([NODE, 'host1', 'host2']) })]), OLD_FAKE);
    expect(lines(text)).toEqual(lines(`${FILTER_BASE}
${FILTER_TAIL}
*nat
:KUBE-NODEPORTS - [0:0]
:KUBE-SERVICES - [0:0]
:KUBE-MARK-MASQ - [0:0]
:KUBE-POSTROUTING - [0:0]
:KUBE-SEP-3JOIVZTXZZRGORX4 - [0:0]
:KUBE-SVL-AQI2S6QIMU7PVVRP - [0:0]
-A KUBE-SERVICES -m comment --comment "ns1/svc1 cluster IP" -m tcp -p tcp -d 172.30.1.1 --dport 80 -j KUBE-SVL-AQI2S6QIMU7PVVRP
${NODEPORTS_LAST}
${NAT_FIXED}
-A KUBE-SEP-3JOIVZTXZZRGORX4 -m comment --comment ns1/svc1 -s 10.0.1.1 -j KUBE-MARK-MASQ
-A KUBE-SEP-3JOIVZTXZZRGORX4 -m comment --comment ns1/svc1 -m tcp -p tcp -j DNAT --to-destination 10.0.1.1:80
-A KUBE-SVL-AQI2S6QIMU7PVVRP -m comment --comment "ns1/svc1 cluster IP" -m tcp -p tcp -d 172.30.1.1 --dport 80 ! -s 10.0.0.0/8 -j KUBE-MARK-MASQ
-A KUBE-SVL-AQI2S6QIMU7PVVRP -m comment --comment "ns1/svc1 -> 10.0.1.1:80" -j KUBE-SEP-3JOIVZTXZZRGORX4
COMMIT`));
  });

  it('"internalTrafficPolicy is local and there are no local endpoints": DROP in filter KUBE-SERVICES, no nat chain', () => {
    const text = generateIptablesRestore(input([svc1({ internalTrafficPolicy: 'Local', endpoints: endpoints(['host0', 'host1', 'host2']) })]), OLD_FAKE);
    expect(lines(text)).toEqual(lines(`${FILTER_BASE}
-A KUBE-SERVICES -m comment --comment "ns1/svc1 has no local endpoints" -m tcp -p tcp -d 172.30.1.1 --dport 80 -j DROP
${FILTER_TAIL}
*nat
:KUBE-NODEPORTS - [0:0]
:KUBE-SERVICES - [0:0]
:KUBE-MARK-MASQ - [0:0]
:KUBE-POSTROUTING - [0:0]
${NODEPORTS_LAST}
${NAT_FIXED}
COMMIT`));
  });

  it('nftables TestInternalTrafficPolicy flow "no endpoints" is DROP: a no-endpoint-services drop element, no service chain', () => {
    const text = generateNftablesRules(input([svc1({ internalTrafficPolicy: 'Local', endpoints: endpoints(['node0', 'node1', 'node2']) })]));
    expect(text).toContain('add element ip kube-proxy no-endpoint-services { 172.30.1.1 . tcp . 80 comment "ns1/svc1" : drop }');
    expect(text).not.toMatch(/add chain ip kube-proxy (service|local|endpoint)-[A-Z2-7]{8}-/);
    const local = generateNftablesRules(input([svc1({ internalTrafficPolicy: 'Local', endpoints: endpoints([NODE, NODE, 'node2']) })]));
    expect(local).toMatch(/add rule ip kube-proxy local-\S+ numgen random mod 2 vmap \{ 0 : goto \S+__10\.0\.1\.1\/80 , 1 : goto \S+__10\.0\.1\.2\/80 \}/);
  });
});

describe('externalTrafficPolicy Local with terminating endpoints (kube-proxy TestTerminatingEndpointsTrafficPolicyLocal, iptables)', () => {
  const lb = (endpoints: ScenarioEndpoint[]) => svc1({
    type: 'LoadBalancer', externalTrafficPolicy: 'Local', healthCheckNodePort: 30000, sessionAffinity: { timeoutSeconds: 10800 },
    loadBalancerIPs: ['1.2.3.4'], endpoints,
  });
  const term = { ready: false, serving: true, terminating: true };

  it('"only terminating endpoints exist": local serving-terminating endpoints for external traffic, the ready remote one for cluster traffic', () => {
    const text = generateIptablesRestore(input([lb([
      ep('10.0.1.2', NODE, term), ep('10.0.1.3', NODE, term),
      ep('10.0.1.4', NODE, { ready: false, serving: false, terminating: true }), ep('10.0.1.5', 'host-1'),
    ])]), OLD_FAKE);
    expect(lines(text)).toEqual(lines(`${FILTER_BASE}
-A KUBE-NODEPORTS -m comment --comment "ns1/svc1 health check node port" -m tcp -p tcp --dport 30000 -j ACCEPT
${FILTER_TAIL}
*nat
:KUBE-NODEPORTS - [0:0]
:KUBE-SERVICES - [0:0]
:KUBE-EXT-AQI2S6QIMU7PVVRP - [0:0]
:KUBE-MARK-MASQ - [0:0]
:KUBE-POSTROUTING - [0:0]
:KUBE-SEP-EQCHZ7S2PJ72OHAY - [0:0]
:KUBE-SEP-IO5XOSKPAXIFQXAJ - [0:0]
:KUBE-SEP-XGJFVO3L2O5SRFNT - [0:0]
:KUBE-SVC-AQI2S6QIMU7PVVRP - [0:0]
:KUBE-SVL-AQI2S6QIMU7PVVRP - [0:0]
-A KUBE-SERVICES -m comment --comment "ns1/svc1 cluster IP" -m tcp -p tcp -d 172.30.1.1 --dport 80 -j KUBE-SVC-AQI2S6QIMU7PVVRP
-A KUBE-SERVICES -m comment --comment "ns1/svc1 loadbalancer IP" -m tcp -p tcp -d 1.2.3.4 --dport 80 -j KUBE-EXT-AQI2S6QIMU7PVVRP
${NODEPORTS_LAST}
-A KUBE-EXT-AQI2S6QIMU7PVVRP -m comment --comment "pod traffic for ns1/svc1 external destinations" -s 10.0.0.0/8 -j KUBE-SVC-AQI2S6QIMU7PVVRP
-A KUBE-EXT-AQI2S6QIMU7PVVRP -m comment --comment "masquerade LOCAL traffic for ns1/svc1 external destinations" -m addrtype --src-type LOCAL -j KUBE-MARK-MASQ
-A KUBE-EXT-AQI2S6QIMU7PVVRP -m comment --comment "route LOCAL traffic for ns1/svc1 external destinations" -m addrtype --src-type LOCAL -j KUBE-SVC-AQI2S6QIMU7PVVRP
-A KUBE-EXT-AQI2S6QIMU7PVVRP -j KUBE-SVL-AQI2S6QIMU7PVVRP
${NAT_FIXED}
-A KUBE-SEP-EQCHZ7S2PJ72OHAY -m comment --comment ns1/svc1 -s 10.0.1.5 -j KUBE-MARK-MASQ
-A KUBE-SEP-EQCHZ7S2PJ72OHAY -m comment --comment ns1/svc1 -m recent --name KUBE-SEP-EQCHZ7S2PJ72OHAY --set -m tcp -p tcp -j DNAT --to-destination 10.0.1.5:80
-A KUBE-SEP-IO5XOSKPAXIFQXAJ -m comment --comment ns1/svc1 -s 10.0.1.2 -j KUBE-MARK-MASQ
-A KUBE-SEP-IO5XOSKPAXIFQXAJ -m comment --comment ns1/svc1 -m recent --name KUBE-SEP-IO5XOSKPAXIFQXAJ --set -m tcp -p tcp -j DNAT --to-destination 10.0.1.2:80
-A KUBE-SEP-XGJFVO3L2O5SRFNT -m comment --comment ns1/svc1 -s 10.0.1.3 -j KUBE-MARK-MASQ
-A KUBE-SEP-XGJFVO3L2O5SRFNT -m comment --comment ns1/svc1 -m recent --name KUBE-SEP-XGJFVO3L2O5SRFNT --set -m tcp -p tcp -j DNAT --to-destination 10.0.1.3:80
-A KUBE-SVC-AQI2S6QIMU7PVVRP -m comment --comment "ns1/svc1 cluster IP" -m tcp -p tcp -d 172.30.1.1 --dport 80 ! -s 10.0.0.0/8 -j KUBE-MARK-MASQ
-A KUBE-SVC-AQI2S6QIMU7PVVRP -m comment --comment "ns1/svc1 -> 10.0.1.5:80" -m recent --name KUBE-SEP-EQCHZ7S2PJ72OHAY --rcheck --seconds 10800 --reap -j KUBE-SEP-EQCHZ7S2PJ72OHAY
-A KUBE-SVC-AQI2S6QIMU7PVVRP -m comment --comment "ns1/svc1 -> 10.0.1.5:80" -j KUBE-SEP-EQCHZ7S2PJ72OHAY
-A KUBE-SVL-AQI2S6QIMU7PVVRP -m comment --comment "ns1/svc1 -> 10.0.1.2:80" -m recent --name KUBE-SEP-IO5XOSKPAXIFQXAJ --rcheck --seconds 10800 --reap -j KUBE-SEP-IO5XOSKPAXIFQXAJ
-A KUBE-SVL-AQI2S6QIMU7PVVRP -m comment --comment "ns1/svc1 -> 10.0.1.3:80" -m recent --name KUBE-SEP-XGJFVO3L2O5SRFNT --rcheck --seconds 10800 --reap -j KUBE-SEP-XGJFVO3L2O5SRFNT
-A KUBE-SVL-AQI2S6QIMU7PVVRP -m comment --comment "ns1/svc1 -> 10.0.1.2:80" -m statistic --mode random --probability 0.5000000000 -j KUBE-SEP-IO5XOSKPAXIFQXAJ
-A KUBE-SVL-AQI2S6QIMU7PVVRP -m comment --comment "ns1/svc1 -> 10.0.1.3:80" -j KUBE-SEP-XGJFVO3L2O5SRFNT
COMMIT`));
  });

  it('"terminating endpoints on remote node": external traffic DROPs (no local endpoint), the LB IP still captured', () => {
    const text = generateIptablesRestore(input([lb([ep('10.0.1.5', 'host-1', term)])]), OLD_FAKE);
    const l = lines(text);
    expect(l).toContain('-A KUBE-EXTERNAL-SERVICES -m comment --comment "ns1/svc1 has no local endpoints" -m tcp -p tcp -d 1.2.3.4 --dport 80 -j DROP');
    expect(l).toContain('-A KUBE-SVC-AQI2S6QIMU7PVVRP -m comment --comment "ns1/svc1 -> 10.0.1.5:80" -j KUBE-SEP-EQCHZ7S2PJ72OHAY');
    expect(l.filter((x) => x.startsWith('-A KUBE-EXT-AQI2S6QIMU7PVVRP'))).toHaveLength(3);
    expect(l.some((x) => x.includes('KUBE-SVL-'))).toBe(false);
  });
});

describe.skipIf(!haveCorpus)('features inside kube-proxy TestOverall{IPTables,NFTables}Rules', () => {
  it('eTP=Local with health-check NodePort, externalIPs and source ranges: the overall expectation lines of svc2, svc4, svc5', async () => {
    const { upstreamOverallInput } = await import('../lab/upstream-overall-scenario.js');
    const ipt = lines(generateIptablesRestore(upstreamOverallInput(), { nfacct: true, randomFully: false }));
    const expected = lines(readFileSync(overallIpt, 'utf8'));
    const pick = (re: RegExp) => expected.filter((l) => re.test(l));
    // health check NodePort, and DROP of external traffic with no local endpoint (svc2: eTP=Local, endpoint not local)
    for (const l of pick(/ns2\/svc2:p80 (health check|has no local)/)) expect(ipt).toContain(l);
    // externalIPs (svc4)
    for (const l of pick(/ns4\/svc4:p80 external IP|KUBE-EXT-4SW47YFZTEDKD3PK/)) expect(ipt).toContain(l);
    // loadBalancerSourceRanges → KUBE-FW-* and KUBE-PROXY-FIREWALL (svc5)
    const fw = pick(/KUBE-FW-NUKIZ6OKUXPJNT4C/);
    expect(fw.length).toBeGreaterThan(2);
    for (const l of fw) expect(ipt).toContain(l);
    const nft = lines(generateNftablesRules(upstreamOverallInput()));
    const nftExpected = lines(readFileSync(overallNft, 'utf8'));
    const firewall = nftExpected.filter((l) => /firewall-HVFWP5L3-ns5\/svc5|firewall-ips \{/.test(l));
    expect(firewall.length).toBeGreaterThan(1);
    for (const l of firewall) expect(nft).toContain(l);
  });
});

describe('LoadBalancer ipMode (kube-proxy TestLoadBalancerIngressRouteTypeProxy, KEP-1860 GA in 1.32)', () => {
  const withMode = (proxy: boolean) => input([makeService('ns1', 'svc1', {
    type: 'LoadBalancer', clusterIP: '10.20.30.41', loadBalancerIPs: ['1.2.3.4'], ...(proxy ? { ipModeProxyIPs: ['1.2.3.4'] } : {}),
    ports: [{ name: 'p80', protocol: 'TCP', port: 80, targetPort: 80, nodePort: 3001 }], endpoints: [makeEndpoint('10.180.0.1')],
  })]);

  it('ipMode VIP (or unset): a KUBE-SERVICES rule and a service-ips element for the LB IP', () => {
    expect(generateIptablesRestore(withMode(false))).toMatch(/-A KUBE-SERVICES .* -d 1\.2\.3\.4 --dport 80 -j KUBE-EXT-/);
    expect(generateNftablesRules(withMode(false))).toContain('add element ip kube-proxy service-ips { 1.2.3.4 . tcp . 80 : goto external-');
  });

  it('ipMode Proxy: no rule for the LB IP at all (the ClusterIP and NodePort stay)', () => {
    const ipt = generateIptablesRestore(withMode(true));
    const nft = generateNftablesRules(withMode(true));
    expect(ipt).not.toContain('1.2.3.4');
    expect(nft).not.toContain('1.2.3.4');
    expect(ipt).toMatch(/-A KUBE-NODEPORTS .* --dport 3001 -j KUBE-EXT-/);
    expect(nft).toContain('add element ip kube-proxy service-ips { 10.20.30.41 . tcp . 80 : goto service-');
  });
});

describe('service.kubernetes.io/service-proxy-name (KEP-2447; kube-proxy lists Services without it)', () => {
  it('a Service another proxy owns gets no rule in either mode; the same Service without the label does', () => {
    const owned = input([makeService('ns1', 'svc1', { clusterIP: '172.30.0.41', serviceProxyName: 'my-proxy', endpoints: [makeEndpoint('10.180.0.1')] })]);
    const plain = input([makeService('ns1', 'svc1', { clusterIP: '172.30.0.41', endpoints: [makeEndpoint('10.180.0.1')] })]);
    expect(generateIptablesRestore(owned)).not.toContain('172.30.0.41');
    expect(generateNftablesRules(owned)).not.toContain('172.30.0.41');
    expect(generateIptablesRestore(plain)).toContain('172.30.0.41');
  });
});

describe('topology (release-1.35 pkg/proxy/topology.go through the generators)', () => {
  const zonal = (hints: boolean, zone = 'zone-a') => input([makeService('ns1', 'svc1', {
    clusterIP: '172.30.0.41',
    endpoints: [
      makeEndpoint('10.180.0.1', hints ? { zoneHints: ['zone-a'] } : {}),
      makeEndpoint('10.180.0.2', hints ? { zoneHints: ['zone-b'] } : {}),
    ],
  })], { nodeZone: zone });
  const only = (ips: string[]) => input([makeService('ns1', 'svc1', { clusterIP: '172.30.0.41', endpoints: ips.map((ip) => makeEndpoint(ip)) })]);

  it('hints on: the rules are those of the Service with only its zone\'s endpoints; hints off: all endpoints', () => {
    expect(generateIptablesRestore(zonal(true))).toBe(generateIptablesRestore(only(['10.180.0.1'])));
    expect(generateNftablesRules(zonal(true))).toBe(generateNftablesRules(only(['10.180.0.1'])));
    expect(generateIptablesRestore(zonal(false))).toBe(generateIptablesRestore(only(['10.180.0.1', '10.180.0.2'])));
    // hints for no zone of this node: kube-proxy ignores them
    expect(generateNftablesRules(zonal(true, 'zone-c'))).toBe(generateNftablesRules(only(['10.180.0.1', '10.180.0.2'])));
  });

  const sameNode = (local: boolean) => input([makeService('ns1', 'svc1', {
    clusterIP: '172.30.0.41',
    endpoints: [
      makeEndpoint('10.180.0.1', { nodeName: local ? NODE : 'other', nodeHints: [local ? NODE : 'other'], zoneHints: ['zone-a'] }),
      makeEndpoint('10.180.0.2', { nodeName: 'far', nodeHints: ['far'], zoneHints: ['zone-b'] }),
    ],
  })], { nodeZone: 'zone-a' });

  it('PreferSameNode with a local endpoint: only it; without one: the zone\'s endpoints (fallback to zone hints)', () => {
    expect(generateIptablesRestore(sameNode(true))).toBe(generateIptablesRestore(only(['10.180.0.1'])));
    expect(generateNftablesRules(sameNode(false))).toBe(generateNftablesRules(only(['10.180.0.1'])));
    const noZone = { ...sameNode(false), nodeZone: 'zone-z' };
    expect(generateNftablesRules(noZone)).toBe(generateNftablesRules(only(['10.180.0.1', '10.180.0.2'])));
  });
});

describe('IPv6 and dual-stack (one proxier per family: ip6tables, table ip6 kube-proxy)', () => {
  const dual = makeService('ns1', 'svc1', {
    type: 'NodePort', clusterIP: 'fd00:172:30::41',
    ports: [{ name: 'p80', protocol: 'TCP', port: 80, targetPort: 80, nodePort: 3001 }],
    externalIPs: ['192.168.99.11', 'fd00:99::11'], loadBalancerSourceRanges: ['203.0.113.0/25', 'fd00:203::/64'],
    endpoints: [makeEndpoint('fd00:10:180::1'), makeEndpoint('fd00:10:180::2:1'), makeEndpoint('10.180.0.9')],
  });
  const v6 = input([dual], { family: 'IPv6', nodeIPs: ['2001:db8::1'], clusterCIDR: 'fd00:10::/64', serviceCIDRs: ['fd00:172:30::/112'] });

  it('nftables: ip6 table, ipv6_addr sets, ip6 matches, bracketed DNAT, and kube-proxy\'s IPv6 chain names', () => {
    const text = generateNftablesRules(v6);
    expect(text).toContain('add table ip6 kube-proxy { comment "rules for kube-proxy" ; }');
    expect(text).toContain('add set ip6 kube-proxy cluster-ips { type ipv6_addr ; comment "Active ClusterIPs" ; }');
    expect(text).toContain('add rule ip6 kube-proxy services ip6 daddr . meta l4proto . th dport vmap @service-ips');
    expect(text).toContain('add rule ip6 kube-proxy cluster-ips-check ip6 daddr { fd00:172:30::/112 } drop comment "Drop traffic to unallocated ClusterIPs"');
    expect(text).toContain('add element ip6 kube-proxy nodeport-ips { 2001:db8::1 }');
    // knftables' kube-proxy fixture: the same Service and endpoints give these names
    expect(text).toContain('add rule ip6 kube-proxy service-ULMVA6XW-ns1/svc1/tcp/p80 numgen random mod 2 vmap { 0 : goto endpoint-ZVRFLKHO-ns1/svc1/tcp/p80__fd00.10.180..1/80 , 1 : goto endpoint-2CRNCTTE-ns1/svc1/tcp/p80__fd00.10.180..2.1/80 }');
    expect(text).toContain('add rule ip6 kube-proxy endpoint-ZVRFLKHO-ns1/svc1/tcp/p80__fd00.10.180..1/80 meta l4proto tcp dnat to [fd00:10:180::1]:80');
    expect(text).toContain('add element ip6 kube-proxy service-ips { fd00:99::11 . tcp . 80 : goto external-ULMVA6XW-ns1/svc1/tcp/p80 }');
    // the IPv4 externalIP and endpoint belong to the other proxier
    expect(text).not.toMatch(/192\.168\.99\.11|10\.180\.0\.9|203\.0\.113/);
  });

  it('iptables: ip6tables-restore text without the IPv4 localhost guard, NodePorts not on ::1', () => {
    const text = generateIptablesRestore(v6, { nfacct: true });
    expect(text).not.toContain('127.0.0.0/8');
    expect(text).toContain('-m addrtype --dst-type LOCAL ! -d ::1/128 -j KUBE-NODEPORTS');
    expect(text).toMatch(/-A KUBE-SERVICES -m comment --comment "ns1\/svc1:p80 cluster IP" -m tcp -p tcp -d fd00:172:30::41 --dport 80 -j KUBE-SVC-/);
    expect(text).toContain('-j DNAT --to-destination [fd00:10:180::1]:80');
    expect(text).not.toContain('10.180.0.9');
  });

  it('the IPv4 proxier of a dual-stack Service takes its IPv4 ClusterIP and endpoints only', () => {
    const v4svc = { ...dual, clusterIP: '172.30.0.41' };
    const text = generateNftablesRules(input([v4svc]));
    expect(text).toContain('dnat to 10.180.0.9:80');
    expect(text).toContain('192.168.99.11 . tcp . 80');
    expect(text).not.toMatch(/fd00/);
    // a Service with no ClusterIP of the proxier's family is not programmed by it
    expect(generateNftablesRules(input([dual]))).not.toContain('fd00');
  });
});
