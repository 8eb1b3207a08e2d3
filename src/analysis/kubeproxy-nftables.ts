/**
 * The `nft -f` transaction kube-proxy's nftables proxier writes for a set of Services,
 * as a pure function of its input: `table ip kube-proxy` with its base chains, the
 * `services` dispatch through the `service-ips` / `service-nodeports` verdict maps,
 * per-service `service-…` chains with `numgen random mod N vmap { … }`, per-endpoint
 * `endpoint-…` chains with `dnat to`, `external-…` and `firewall-…` chains, and the
 * `no-endpoint-services` / `no-endpoint-nodeports` maps.
 *
 * Source: k8s.io/kubernetes pkg/proxy/nftables/proxier.go (`setupNFTables`,
 * `syncProxyRules`, `writeServiceToEndpointRules`) at the version whose test
 * expectation is shared/corpus/nft/k8s-nftables-proxier-test-overall.txt (commit
 * 030880a5…: `filter-prerouting-pre-dnat` / `filter-output-pre-dnat` at priority -110,
 * `filter-input` / `filter-forward` / `filter-output` at 0, NodePorts restricted to
 * `@nodeport-ips`). kube-proxy's test compares transactions after sorting lines by
 * object kind and name (`sortNFTablesTransaction`); this generator emits a loadable
 * order instead: declarations first, then one block per Service port (its chains, then
 * rules, then map elements), each block headed by a `# ns/name:port` comment.
 */
import type { KubeProxyInput } from './lab-scenario-types.js';
import { NFT_NAMES as N, nftChain, nftEndpointChainBase, nftServiceChainBase } from './kubeproxy-names.js';
import {
  categorizeEndpoints,
  ipv4InCidr,
  serviceToPorts,
  type ProxyEndpoint,
  type ProxyServicePort,
} from './kubeproxy-serviceports.js';

/**
 * Proxier settings that change the rules.
 *
 * - `masqueradeMark`: `--masquerade-bit` 14 → `0x4000`.
 * - `masqueradeAll`: `--masquerade-all`.
 * - `nodePortIPs`: the addresses accepting NodePort traffic (`nodeport-ips`); default
 *   the input's `nodeIPs` (kube-proxy's `--nodeport-addresses primary`).
 */
export interface NftablesProxierOptions {
  readonly masqueradeMark?: string;
  readonly masqueradeAll?: boolean;
  readonly nodePortIPs?: readonly string[];
}

const T = `ip ${N.table}`;

/** Lines of one transaction; `add(kind, rest)` writes `add KIND ip kube-proxy REST`. */
class Tx {
  readonly lines: string[] = [];
  add(kind: 'table' | 'chain' | 'rule' | 'set' | 'map' | 'element', rest: string): void {
    this.lines.push(kind === 'table' ? `add table ${T} ${rest}` : `add ${kind} ${T} ${rest}`);
  }
  blank(): void {
    this.lines.push('');
  }
  comment(text: string): void {
    this.lines.push(`# ${text}`);
  }
}

/**
 * Generates the nft transaction (newline-terminated) kube-proxy writes for `input`.
 * Loading it with `nft -f` into a namespace without a `kube-proxy` table gives the
 * state kube-proxy would leave. Pure; never throws for valid input.
 */
export function generateNftablesRules(input: KubeProxyInput, options: NftablesProxierOptions = {}): string {
  const mark = options.masqueradeMark ?? '0x4000';
  const tx = new Tx();
  writeBase(tx, input, mark, options.nodePortIPs ?? input.nodeIPs);
  for (const svc of serviceToPorts(input)) {
    tx.blank();
    tx.comment(svc.svcPortName);
    writeServicePort(tx, input, svc, options.masqueradeAll ?? false);
  }
  return `${tx.lines.join('\n')}\n`;
}

/** `setupNFTables`: the table, sets, maps, base and helper chains and their fixed rules. */
function writeBase(tx: Tx, input: KubeProxyInput, mark: string, nodePortIPs: readonly string[]): void {
  tx.add('table', '{ comment "rules for kube-proxy" ; }');
  tx.blank();
  tx.add('set', `${N.clusterIPs} { type ipv4_addr ; comment "Active ClusterIPs" ; }`);
  tx.add('set', `${N.nodePortIPs} { type ipv4_addr ; comment "IPs that accept NodePort traffic" ; }`);
  tx.blank();
  const vmap3 = 'type ipv4_addr . inet_proto . inet_service : verdict';
  const vmap2 = 'type inet_proto . inet_service : verdict';
  tx.add('map', `${N.firewallIPs} { ${vmap3} ; comment "destinations that are subject to LoadBalancerSourceRanges" ; }`);
  tx.add('map', `${N.noEndpointNodePorts} { ${vmap2} ; comment "vmap to drop or reject packets to service nodeports with no endpoints" ; }`);
  tx.add('map', `${N.noEndpointServices} { ${vmap3} ; comment "vmap to drop or reject packets to services with no endpoints" ; }`);
  tx.add('map', `${N.serviceIPs} { ${vmap3} ; comment "ClusterIP, ExternalIP and LoadBalancer IP traffic" ; }`);
  tx.add('map', `${N.serviceNodePorts} { ${vmap2} ; comment "NodePort traffic" ; }`);
  tx.blank();
  const base = (name: string, type: string, hook: string, prio: number): void =>
    tx.add('chain', `${name} { type ${type} hook ${hook} priority ${prio} ; }`);
  tx.add('chain', N.clusterIPsCheck);
  base('filter-prerouting-pre-dnat', 'filter', 'prerouting', -110);
  base('filter-output-pre-dnat', 'filter', 'output', -110);
  base('filter-forward', 'filter', 'forward', 0);
  base('filter-input', 'filter', 'input', 0);
  base('filter-output', 'filter', 'output', 0);
  tx.add('chain', N.firewallCheck);
  tx.add('chain', N.markMasq);
  tx.add('chain', N.masquerading);
  base('nat-output', 'nat', 'output', -100);
  base('nat-postrouting', 'nat', 'postrouting', 100);
  base('nat-prerouting', 'nat', 'prerouting', -100);
  tx.add('chain', N.nodePortEndpointsCheck);
  tx.add('chain', `${N.rejectChain} { comment "helper for @no-endpoint-services / @no-endpoint-nodeports" ; }`);
  tx.add('chain', N.services);
  tx.add('chain', N.serviceEndpointsCheck);
  tx.blank();

  tx.add('rule', `${N.clusterIPsCheck} ip daddr @${N.clusterIPs} reject comment "Reject traffic to invalid ports of ClusterIPs"`);
  if ((input.serviceCIDRs ?? []).length > 0) {
    tx.add('rule', `${N.clusterIPsCheck} ip daddr { ${(input.serviceCIDRs ?? []).join(' , ')} } drop comment "Drop traffic to unallocated ClusterIPs"`);
  }
  tx.add('rule', `filter-prerouting-pre-dnat ct state new jump ${N.firewallCheck}`);
  tx.add('rule', `filter-forward ct state new jump ${N.serviceEndpointsCheck}`);
  tx.add('rule', `filter-forward ct state new jump ${N.clusterIPsCheck}`);
  tx.add('rule', `filter-input ct state new jump ${N.nodePortEndpointsCheck}`);
  tx.add('rule', `filter-input ct state new jump ${N.serviceEndpointsCheck}`);
  tx.add('rule', `filter-output ct state new jump ${N.serviceEndpointsCheck}`);
  tx.add('rule', `filter-output-pre-dnat ct state new jump ${N.firewallCheck}`);
  tx.add('rule', `filter-output ct state new jump ${N.clusterIPsCheck}`);
  tx.add('rule', `${N.firewallCheck} ip daddr . meta l4proto . th dport vmap @${N.firewallIPs}`);
  tx.add('rule', `${N.markMasq} mark set mark or ${mark}`);
  tx.add('rule', `${N.masquerading} mark and ${mark} == 0 return`);
  tx.add('rule', `${N.masquerading} mark set mark xor ${mark}`);
  tx.add('rule', `${N.masquerading} masquerade fully-random`);
  tx.add('rule', `nat-output jump ${N.services}`);
  tx.add('rule', `nat-postrouting jump ${N.masquerading}`);
  tx.add('rule', `nat-prerouting jump ${N.services}`);
  tx.add('rule', `${N.nodePortEndpointsCheck} ip daddr @${N.nodePortIPs} meta l4proto . th dport vmap @${N.noEndpointNodePorts}`);
  tx.add('rule', `${N.rejectChain} reject`);
  tx.add('rule', `${N.services} ip daddr . meta l4proto . th dport vmap @${N.serviceIPs}`);
  tx.add('rule', `${N.services} ip daddr @${N.nodePortIPs} meta l4proto . th dport vmap @${N.serviceNodePorts}`);
  tx.blank();
  for (const ip of nodePortIPs) tx.add('element', `${N.nodePortIPs} { ${ip} }`);
  tx.add('rule', `${N.serviceEndpointsCheck} ip daddr . meta l4proto . th dport vmap @${N.noEndpointServices}`);
}

/** The per-Service-port body of kube-proxy's nftables `syncProxyRules` loop. */
function writeServicePort(tx: Tx, input: KubeProxyInput, svc: ProxyServicePort, masqueradeAll: boolean): void {
  const { service, protocol: proto } = svc;
  const port = svc.port.port;
  const base = nftServiceChainBase(service.namespace, service.name, proto, svc.port.name);
  const epBase = (ep: ProxyEndpoint): string =>
    nftEndpointChainBase(service.namespace, service.name, proto, svc.port.name, ep.hostPort);
  const epChain = (ep: ProxyEndpoint): string => nftChain('endpoint-', epBase(ep));
  const affinitySet = (ep: ProxyEndpoint): string => nftChain('affinity-', epBase(ep));
  const { clusterEndpoints, localEndpoints, allLocallyReachableEndpoints, hasAnyEndpoints } = categorizeEndpoints(svc);

  const clusterPolicyChain = nftChain('service-', base);
  const localPolicyChain = nftChain('local-', base);
  const externalTrafficChain = nftChain('external-', base);
  const fwChain = nftChain('firewall-', base);
  const usesClusterPolicyChain = clusterEndpoints.length > 0 && svc.usesClusterEndpoints;
  const usesLocalPolicyChain = localEndpoints.length > 0 && svc.usesLocalEndpoints;

  let internalTrafficChain = clusterPolicyChain;
  let hasInternalEndpoints = hasAnyEndpoints;
  if (svc.internalPolicyLocal) {
    internalTrafficChain = localPolicyChain;
    if (localEndpoints.length === 0) hasInternalEndpoints = false;
  }
  let externalPolicyChain = clusterPolicyChain;
  let hasExternalEndpoints = hasAnyEndpoints;
  if (svc.externalPolicyLocal) {
    externalPolicyChain = localPolicyChain;
    if (localEndpoints.length === 0) hasExternalEndpoints = false;
  }
  const usesExternalTrafficChain = hasAnyEndpoints && svc.externallyAccessible;
  const usesFWChain = svc.loadBalancerVIPs.length > 0 && svc.loadBalancerSourceRanges.length > 0;

  let internalVerdict = '';
  let externalVerdict = '';
  if (!hasAnyEndpoints) {
    internalVerdict = externalVerdict = `goto ${N.rejectChain}`;
  } else {
    if (!hasInternalEndpoints) internalVerdict = 'drop';
    if (!hasExternalEndpoints) externalVerdict = 'drop';
  }

  // Chains first, so that every rule and map element below refers to an existing chain.
  for (const ep of allLocallyReachableEndpoints) tx.add('chain', epChain(ep));
  if (usesClusterPolicyChain) tx.add('chain', clusterPolicyChain);
  if (usesLocalPolicyChain) tx.add('chain', localPolicyChain);
  if (usesExternalTrafficChain) tx.add('chain', externalTrafficChain);
  if (usesFWChain) tx.add('chain', fwChain);
  if (svc.stickyMaxAgeSeconds > 0) {
    for (const ep of allLocallyReachableEndpoints) {
      tx.add('set', `${affinitySet(ep)} { type ipv4_addr ; flags dynamic,timeout ; timeout ${svc.stickyMaxAgeSeconds}s ; }`);
    }
  }

  // Internal traffic handling.
  if (hasInternalEndpoints) {
    if (masqueradeAll) {
      tx.add('rule', `${internalTrafficChain} ip daddr ${svc.clusterIP} jump ${N.markMasq}`);
    } else if (input.clusterCIDR !== undefined) {
      tx.add('rule', `${internalTrafficChain} ip daddr ${svc.clusterIP} ip saddr != ${input.clusterCIDR} jump ${N.markMasq}`);
    }
  }
  // External traffic handling.
  if (usesExternalTrafficChain) {
    if (!svc.externalPolicyLocal) {
      tx.add('rule', `${externalTrafficChain} jump ${N.markMasq}`);
    } else {
      if (input.clusterCIDR !== undefined) {
        tx.add('rule', `${externalTrafficChain} ip saddr ${input.clusterCIDR} goto ${clusterPolicyChain} comment "short-circuit pod traffic"`);
      }
      tx.add('rule', `${externalTrafficChain} fib saddr type local jump ${N.markMasq} comment "masquerade local traffic"`);
      tx.add('rule', `${externalTrafficChain} fib saddr type local goto ${clusterPolicyChain} comment "short-circuit local traffic"`);
    }
    if (hasExternalEndpoints) tx.add('rule', `${externalTrafficChain} goto ${externalPolicyChain}`);
  }
  // Firewall (loadBalancerSourceRanges).
  if (usesFWChain) {
    const sources = [...svc.loadBalancerSourceRanges];
    if (input.nodeIPs.some((ip) => svc.loadBalancerSourceRanges.some((cidr) => ipv4InCidr(ip, cidr)))) {
      sources.push(...svc.loadBalancerVIPs);
    }
    tx.add('rule', `${fwChain} ip saddr != { ${sources.join(' , ')} } drop`);
  }
  // Service → endpoints.
  const toEndpoints = (chain: string, eps: readonly ProxyEndpoint[]): void => {
    if (svc.stickyMaxAgeSeconds > 0) {
      for (const ep of eps) tx.add('rule', `${chain} ip saddr @${affinitySet(ep)} goto ${epChain(ep)}`);
    }
    const entries = eps.map((ep, i) => `${i} : goto ${epChain(ep)}`).join(' , ');
    tx.add('rule', `${chain} numgen random mod ${eps.length} vmap { ${entries} }`);
  };
  if (usesClusterPolicyChain) toEndpoints(clusterPolicyChain, clusterEndpoints);
  if (usesLocalPolicyChain) toEndpoints(localPolicyChain, localEndpoints);
  // Per-endpoint chains.
  for (const ep of allLocallyReachableEndpoints) {
    tx.add('rule', `${epChain(ep)} ip saddr ${ep.ip} jump ${N.markMasq}`);
    if (svc.stickyMaxAgeSeconds > 0) tx.add('rule', `${epChain(ep)} update @${affinitySet(ep)} { ip saddr }`);
    tx.add('rule', `${epChain(ep)} meta l4proto ${proto} dnat to ${ep.hostPort}`);
  }

  // Map and set elements.
  const key = (ip: string): string => `${ip} . ${proto} . ${port}`;
  const commented = (k: string, verdict: string): string => `{ ${k} comment "${svc.svcPortName}" : ${verdict} }`;
  tx.add('element', `${N.clusterIPs} { ${svc.clusterIP} }`);
  if (hasInternalEndpoints) {
    tx.add('element', `${N.serviceIPs} { ${key(svc.clusterIP)} : goto ${internalTrafficChain} }`);
  } else {
    tx.add('element', `${N.noEndpointServices} ${commented(key(svc.clusterIP), internalVerdict)}`);
  }
  for (const ip of svc.externalIPs) {
    if (hasAnyEndpoints) tx.add('element', `${N.serviceIPs} { ${key(ip)} : goto ${externalTrafficChain} }`);
    if (!hasExternalEndpoints) tx.add('element', `${N.noEndpointServices} ${commented(key(ip), externalVerdict)}`);
  }
  for (const ip of svc.loadBalancerVIPs) {
    if (hasAnyEndpoints) tx.add('element', `${N.serviceIPs} { ${key(ip)} : goto ${externalTrafficChain} }`);
    if (usesFWChain) tx.add('element', `${N.firewallIPs} { ${key(ip)} : goto ${fwChain} }`);
  }
  if (!hasExternalEndpoints) {
    for (const ip of svc.loadBalancerVIPs) tx.add('element', `${N.noEndpointServices} ${commented(key(ip), externalVerdict)}`);
  }
  if (svc.nodePort !== 0) {
    const npKey = `${proto} . ${svc.nodePort}`;
    if (hasAnyEndpoints) tx.add('element', `${N.serviceNodePorts} { ${npKey} : goto ${externalTrafficChain} }`);
    if (!hasExternalEndpoints) tx.add('element', `${N.noEndpointNodePorts} ${commented(npKey, externalVerdict)}`);
  }
}
