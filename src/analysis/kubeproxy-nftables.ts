/**
 * The `nft -f` transaction kube-proxy's nftables proxier writes for a set of Services,
 * as a pure function of its input: `table ip kube-proxy` (`table ip6 kube-proxy` for an
 * IPv6 input: `ip6 daddr`, `ipv6_addr` sets, bracketed `dnat to [addr]:port`) with its base chains, the
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
  ipInCidr,
  planServicePort,
  serviceToPorts,
  type ProxyEndpoint,
  type ProxyServicePort,
  type ServicePortPlan,
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

/** The nft words of one IP family: table family (`ip`/`ip6`), address match (`ip`/`ip6`) and set type. */
interface NftFamily {
  readonly table: string;
  readonly match: 'ip' | 'ip6';
  readonly addrType: 'ipv4_addr' | 'ipv6_addr';
}

function nftFamily(input: KubeProxyInput): NftFamily {
  return input.family === 'IPv6'
    ? { table: `ip6 ${N.table}`, match: 'ip6', addrType: 'ipv6_addr' }
    : { table: `ip ${N.table}`, match: 'ip', addrType: 'ipv4_addr' };
}

/** Lines of one transaction; `add(kind, rest)` writes `add KIND ip kube-proxy REST` (`ip6` for IPv6). */
class Tx {
  readonly lines: string[] = [];
  constructor(readonly fam: NftFamily) {}
  add(kind: 'table' | 'chain' | 'rule' | 'set' | 'map' | 'element', rest: string): void {
    this.lines.push(`add ${kind} ${this.fam.table} ${rest}`);
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
  const tx = new Tx(nftFamily(input));
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
  const { match, addrType } = tx.fam;
  tx.add('table', '{ comment "rules for kube-proxy" ; }');
  tx.blank();
  tx.add('set', `${N.clusterIPs} { type ${addrType} ; comment "Active ClusterIPs" ; }`);
  tx.add('set', `${N.nodePortIPs} { type ${addrType} ; comment "IPs that accept NodePort traffic" ; }`);
  tx.blank();
  const vmap3 = `type ${addrType} . inet_proto . inet_service : verdict`;
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

  tx.add('rule', `${N.clusterIPsCheck} ${match} daddr @${N.clusterIPs} reject comment "Reject traffic to invalid ports of ClusterIPs"`);
  if ((input.serviceCIDRs ?? []).length > 0) {
    tx.add('rule', `${N.clusterIPsCheck} ${match} daddr { ${(input.serviceCIDRs ?? []).join(' , ')} } drop comment "Drop traffic to unallocated ClusterIPs"`);
  }
  tx.add('rule', `filter-prerouting-pre-dnat ct state new jump ${N.firewallCheck}`);
  tx.add('rule', `filter-forward ct state new jump ${N.serviceEndpointsCheck}`);
  tx.add('rule', `filter-forward ct state new jump ${N.clusterIPsCheck}`);
  tx.add('rule', `filter-input ct state new jump ${N.nodePortEndpointsCheck}`);
  tx.add('rule', `filter-input ct state new jump ${N.serviceEndpointsCheck}`);
  tx.add('rule', `filter-output ct state new jump ${N.serviceEndpointsCheck}`);
  tx.add('rule', `filter-output-pre-dnat ct state new jump ${N.firewallCheck}`);
  tx.add('rule', `filter-output ct state new jump ${N.clusterIPsCheck}`);
  tx.add('rule', `${N.firewallCheck} ${match} daddr . meta l4proto . th dport vmap @${N.firewallIPs}`);
  tx.add('rule', `${N.markMasq} mark set mark or ${mark}`);
  tx.add('rule', `${N.masquerading} mark and ${mark} == 0 return`);
  tx.add('rule', `${N.masquerading} mark set mark xor ${mark}`);
  tx.add('rule', `${N.masquerading} masquerade fully-random`);
  tx.add('rule', `nat-output jump ${N.services}`);
  tx.add('rule', `nat-postrouting jump ${N.masquerading}`);
  tx.add('rule', `nat-prerouting jump ${N.services}`);
  tx.add('rule', `${N.nodePortEndpointsCheck} ${match} daddr @${N.nodePortIPs} meta l4proto . th dport vmap @${N.noEndpointNodePorts}`);
  tx.add('rule', `${N.rejectChain} reject`);
  tx.add('rule', `${N.services} ${match} daddr . meta l4proto . th dport vmap @${N.serviceIPs}`);
  tx.add('rule', `${N.services} ${match} daddr @${N.nodePortIPs} meta l4proto . th dport vmap @${N.serviceNodePorts}`);
  tx.blank();
  for (const ip of nodePortIPs) tx.add('element', `${N.nodePortIPs} { ${ip} }`);
  tx.add('rule', `${N.serviceEndpointsCheck} ${match} daddr . meta l4proto . th dport vmap @${N.noEndpointServices}`);
}

/** One Service port being written: its facts, kube-proxy's plan, chain names and helpers for per-endpoint names. */
interface SvcWrite {
  readonly svc: ProxyServicePort;
  readonly plan: ServicePortPlan;
  readonly match: 'ip' | 'ip6';
  readonly clusterPolicyChain: string;
  readonly localPolicyChain: string;
  readonly externalTrafficChain: string;
  readonly fwChain: string;
  readonly internalTrafficChain: string;
  readonly externalPolicyChain: string;
  readonly usesFWChain: boolean;
  readonly epChain: (ep: ProxyEndpoint) => string;
  readonly affinitySet: (ep: ProxyEndpoint) => string;
}

/** The per-Service-port body of kube-proxy's nftables `syncProxyRules` loop. */
function writeServicePort(tx: Tx, input: KubeProxyInput, svc: ProxyServicePort, masqueradeAll: boolean): void {
  const { service, protocol: proto } = svc;
  const base = nftServiceChainBase(service.namespace, service.name, proto, svc.port.name);
  const epBase = (ep: ProxyEndpoint): string => nftEndpointChainBase(service.namespace, service.name, proto, svc.port.name, ep.hostPort);
  const clusterPolicyChain = nftChain('service-', base);
  const localPolicyChain = nftChain('local-', base);
  const w: SvcWrite = {
    svc, plan: planServicePort(svc), match: tx.fam.match, clusterPolicyChain, localPolicyChain,
    externalTrafficChain: nftChain('external-', base),
    fwChain: nftChain('firewall-', base),
    internalTrafficChain: svc.internalPolicyLocal ? localPolicyChain : clusterPolicyChain,
    externalPolicyChain: svc.externalPolicyLocal ? localPolicyChain : clusterPolicyChain,
    usesFWChain: svc.loadBalancerVIPs.length > 0 && svc.loadBalancerSourceRanges.length > 0,
    epChain: (ep) => nftChain('endpoint-', epBase(ep)),
    affinitySet: (ep) => nftChain('affinity-', epBase(ep)),
  };
  declareChains(tx, w);
  writeTrafficRules(tx, input, w, masqueradeAll);
  if (w.usesFWChain) writeFirewallRule(tx, input, w);
  writeEndpointRules(tx, w);
  writeElements(tx, w);
}

/** Chains first, so that every rule and map element after refers to an existing chain; affinity sets too. */
function declareChains(tx: Tx, w: SvcWrite): void {
  const { svc, plan } = w;
  const reachable = plan.cat.allLocallyReachableEndpoints;
  for (const ep of reachable) tx.add('chain', w.epChain(ep));
  if (plan.usesClusterPolicyChain) tx.add('chain', w.clusterPolicyChain);
  if (plan.usesLocalPolicyChain) tx.add('chain', w.localPolicyChain);
  if (plan.usesExternalTrafficChain) tx.add('chain', w.externalTrafficChain);
  if (w.usesFWChain) tx.add('chain', w.fwChain);
  if (svc.stickyMaxAgeSeconds > 0) {
    for (const ep of reachable) {
      tx.add('set', `${w.affinitySet(ep)} { type ${tx.fam.addrType} ; flags dynamic,timeout ; timeout ${svc.stickyMaxAgeSeconds}s ; }`);
    }
  }
}

/** The masquerade rule of the internal chain, and the `external-…` chain with eTP=Local's short-circuits. */
function writeTrafficRules(tx: Tx, input: KubeProxyInput, w: SvcWrite, masqueradeAll: boolean): void {
  const { svc, plan, match } = w;
  if (plan.hasInternalEndpoints) {
    if (masqueradeAll) {
      tx.add('rule', `${w.internalTrafficChain} ${match} daddr ${svc.clusterIP} jump ${N.markMasq}`);
    } else if (input.clusterCIDR !== undefined) {
      tx.add('rule', `${w.internalTrafficChain} ${match} daddr ${svc.clusterIP} ${match} saddr != ${input.clusterCIDR} jump ${N.markMasq}`);
    }
  }
  if (!plan.usesExternalTrafficChain) return;
  const ext = w.externalTrafficChain;
  if (!svc.externalPolicyLocal) {
    tx.add('rule', `${ext} jump ${N.markMasq}`);
  } else {
    if (input.clusterCIDR !== undefined) {
      tx.add('rule', `${ext} ${match} saddr ${input.clusterCIDR} goto ${w.clusterPolicyChain} comment "short-circuit pod traffic"`);
    }
    tx.add('rule', `${ext} fib saddr type local jump ${N.markMasq} comment "masquerade local traffic"`);
    tx.add('rule', `${ext} fib saddr type local goto ${w.clusterPolicyChain} comment "short-circuit local traffic"`);
  }
  if (plan.hasExternalEndpoints) tx.add('rule', `${ext} goto ${w.externalPolicyChain}`);
}

/** `firewall-…`: drop what does not come from the source ranges (nor the LB IPs when a node IP is in a range). */
function writeFirewallRule(tx: Tx, input: KubeProxyInput, w: SvcWrite): void {
  const { svc } = w;
  const sources = [...svc.loadBalancerSourceRanges];
  if (input.nodeIPs.some((ip) => svc.loadBalancerSourceRanges.some((cidr) => ipInCidr(ip, cidr)))) sources.push(...svc.loadBalancerVIPs);
  tx.add('rule', `${w.fwChain} ${w.match} saddr != { ${sources.join(' , ')} } drop`);
}

/** Service → endpoints (affinity checks, then `numgen random mod N vmap`), then the per-endpoint chains. */
function writeEndpointRules(tx: Tx, w: SvcWrite): void {
  const { svc, plan, match } = w;
  const toEndpoints = (chain: string, eps: readonly ProxyEndpoint[]): void => {
    if (svc.stickyMaxAgeSeconds > 0) {
      for (const ep of eps) tx.add('rule', `${chain} ${match} saddr @${w.affinitySet(ep)} goto ${w.epChain(ep)}`);
    }
    const entries = eps.map((ep, i) => `${i} : goto ${w.epChain(ep)}`).join(' , ');
    tx.add('rule', `${chain} numgen random mod ${eps.length} vmap { ${entries} }`);
  };
  if (plan.usesClusterPolicyChain) toEndpoints(w.clusterPolicyChain, plan.cat.clusterEndpoints);
  if (plan.usesLocalPolicyChain) toEndpoints(w.localPolicyChain, plan.cat.localEndpoints);
  for (const ep of plan.cat.allLocallyReachableEndpoints) {
    tx.add('rule', `${w.epChain(ep)} ${match} saddr ${ep.ip} jump ${N.markMasq}`);
    if (svc.stickyMaxAgeSeconds > 0) tx.add('rule', `${w.epChain(ep)} update @${w.affinitySet(ep)} { ${match} saddr }`);
    tx.add('rule', `${w.epChain(ep)} meta l4proto ${svc.protocol} dnat to ${ep.hostPort}`);
  }
}

/** The map and set elements: cluster-ips, service-ips / no-endpoint-services, firewall-ips, service-nodeports / no-endpoint-nodeports. */
function writeElements(tx: Tx, w: SvcWrite): void {
  const { svc, plan } = w;
  const key = (ip: string): string => `${ip} . ${svc.protocol} . ${svc.port.port}`;
  const nftVerdict = (v: '' | 'reject' | 'drop'): string => (v === 'reject' ? `goto ${N.rejectChain}` : 'drop');
  const commented = (k: string, verdict: string): string => `{ ${k} comment "${svc.svcPortName}" : ${verdict} }`;
  const any = plan.cat.hasAnyEndpoints;
  tx.add('element', `${N.clusterIPs} { ${svc.clusterIP} }`);
  if (plan.hasInternalEndpoints) {
    tx.add('element', `${N.serviceIPs} { ${key(svc.clusterIP)} : goto ${w.internalTrafficChain} }`);
  } else {
    tx.add('element', `${N.noEndpointServices} ${commented(key(svc.clusterIP), nftVerdict(plan.internalVerdict))}`);
  }
  for (const ip of svc.externalIPs) {
    if (any) tx.add('element', `${N.serviceIPs} { ${key(ip)} : goto ${w.externalTrafficChain} }`);
    if (!plan.hasExternalEndpoints) tx.add('element', `${N.noEndpointServices} ${commented(key(ip), nftVerdict(plan.externalVerdict))}`);
  }
  for (const ip of svc.loadBalancerVIPs) {
    if (any) tx.add('element', `${N.serviceIPs} { ${key(ip)} : goto ${w.externalTrafficChain} }`);
    if (w.usesFWChain) tx.add('element', `${N.firewallIPs} { ${key(ip)} : goto ${w.fwChain} }`);
  }
  if (!plan.hasExternalEndpoints) {
    for (const ip of svc.loadBalancerVIPs) tx.add('element', `${N.noEndpointServices} ${commented(key(ip), nftVerdict(plan.externalVerdict))}`);
  }
  if (svc.nodePort !== 0) {
    const npKey = `${svc.protocol} . ${svc.nodePort}`;
    if (any) tx.add('element', `${N.serviceNodePorts} { ${npKey} : goto ${w.externalTrafficChain} }`);
    if (!plan.hasExternalEndpoints) tx.add('element', `${N.noEndpointNodePorts} ${commented(npKey, nftVerdict(plan.externalVerdict))}`);
  }
}
