/**
 * What kube-proxy (or Cilium) would read for a capture: the capture's API objects turned
 * into the generators' input ({@link KubeProxyInput}), and that input turned into the LB
 * table Cilium's agent would write (kube-proxy replacement). Used by `compare-modes.ts`.
 *
 * Settings kube-proxy takes from flags rather than the API are inferred from the capture
 * and said so in `notes`: the cluster CIDR (`--cluster-cidr`) from the node's own
 * masquerade rules, else the prefix covering every Node's podCIDR; the Service CIDRs from
 * the nftables `cluster-ips-check` rule, else the prefix covering every ClusterIP. Both only
 * change rule text, not rule counts, when inferred from the covering prefix.
 *
 * IPv4 only, like the generators (src/analysis/kubeproxy-*.ts). Pure.
 */
import type { LbTable } from '../model/cilium.js';
import { expectCiliumTable } from './cilium-expected.js';
import type { IptablesChain } from '../model/iptables.js';
import type { ApiObjects } from '../model/k8s.js';
import { parseIp } from '../model/iproute.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import type { KubeProxyInput, ProxyFamily, ScenarioEndpoint, ScenarioService, ScenarioServicePort } from './lab-scenario-types.js';
import { isProxied } from './kubeproxy-serviceports.js';
import { buildServiceView, type ServiceRow } from './service-view.js';
import { formatServiceRef } from '../model/service-ref.js';

/** What had to be inferred or left out to build the input. */
export type CompareNoteKind = 'ipv6-only' | 'named-port-split' | 'node-ips-from-addresses' | 'cluster-cidr-inferred' | 'cluster-cidr-unknown' | 'service-cidr-inferred';

/** One note: its kind, its values (`service`, `cidr`, `ports`, …) and the English sentence. */
export interface CompareNote {
  readonly kind: CompareNoteKind;
  readonly params: Readonly<Record<string, string>>;
  readonly text: string;
}

/** The generators' input for a capture, and what had to be inferred or left out. */
export interface CompareInput {
  readonly input: KubeProxyInput;
  readonly notes: readonly CompareNote[];
}

function note(kind: CompareNoteKind, params: Record<string, string>, text: string): CompareNote {
  return { kind, params, text };
}

const isV4 = (ip: string): boolean => parseIp(ip)?.family === 'inet';
// parseIp reads IPv6 only from text with a colon: an IPv4 ClusterIP is not parsed (BigInt) to say no.
const isV6 = (ip: string): boolean => ip.includes(':') && parseIp(ip)?.family === 'inet6';

const OCTET = '(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)';
const DOTTED_QUAD = new RegExp(`^${OCTET}(?:\\.${OCTET}){3}$`);

/** A ClusterIP in dotted-quad form (four 0–255 parts, no leading zero): read once per Service on every keypress of the Modes pane, where parseIp showed. */
export const isV4ClusterIP = (ip: string): boolean => DOTTED_QUAD.test(ip);

function v4ToInt(ip: string): number {
  return ip.split('.').reduce((acc, p) => acc * 256 + Number(p), 0);
}

function intToV4(n: number): string {
  return [24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256).join('.');
}

/** The smallest prefix holding every address or CIDR in `items` (IPv4), or undefined for none. */
export function coveringPrefix(items: readonly string[]): string | undefined {
  let lo = Infinity;
  let hi = -Infinity;
  // One pass, the dotted-quad test before parseIp: 10,000 ClusterIPs on a keypress of the Modes pane.
  for (const c of items) {
    const [ip = '', len = '32'] = c.split('/');
    if (!isV4ClusterIP(ip) && !isV4(ip)) continue;
    const size = 2 ** (32 - Number(len));
    const start = v4ToInt(ip) - (v4ToInt(ip) % size);
    if (start < lo) lo = start;
    if (start + size - 1 > hi) hi = start + size - 1;
  }
  if (lo === Infinity) return undefined;
  let len = 32;
  while (len > 0 && Math.floor(lo / 2 ** (32 - len)) !== Math.floor(hi / 2 ** (32 - len))) len--;
  return `${intToV4(lo - (lo % 2 ** (32 - len)))}/${len}`;
}

/** `--cluster-cidr` as the node's kube-proxy rules show it (`! -s CIDR -j KUBE-MARK-MASQ`, `ip saddr != CIDR jump mark-for-masquerade`). */
function clusterCidrFromRules(snapshot: NodeSnapshot): string | undefined {
  const masqFrom = (chain: IptablesChain): string | undefined => {
    for (const rule of chain.rules) if (rule.target?.name === 'KUBE-MARK-MASQ' && rule.source?.negated) return rule.source.value;
    return undefined;
  };
  const nat = snapshot.iptables?.value?.tables.find((t) => t.name === 'nat');
  // Service chains first (kube-proxy ≥ 1.2x puts the rule there): KUBE-SERVICES and the endpoint chains hold 6 rules per Service.
  for (const chain of nat?.chains ?? []) {
    const cidr = chain.name.startsWith('KUBE-SVC-') ? masqFrom(chain) : undefined;
    if (cidr !== undefined) return cidr;
  }
  for (const table of snapshot.iptables?.value?.tables ?? []) {
    for (const chain of table.chains) {
      const cidr = masqFrom(chain);
      if (cidr !== undefined) return cidr;
    }
  }
  for (const table of snapshot.nft?.value?.tables ?? []) {
    if (table.name !== 'kube-proxy') continue;
    for (const chain of table.chains) {
      for (const rule of chain.rules) {
        const m = /ip saddr != (\S+) jump mark-for-masquerade/.exec(rule.raw);
        if (m?.[1]) return m[1];
      }
    }
  }
  return undefined;
}

/** The Service CIDRs of nftables' `cluster-ips-check` drop rule. */
function serviceCidrsFromRules(snapshot: NodeSnapshot): string[] | undefined {
  for (const table of snapshot.nft?.value?.tables ?? []) {
    const chain = table.name === 'kube-proxy' ? table.chains.find((c) => c.name === 'cluster-ips-check') : undefined;
    for (const rule of chain?.rules ?? []) {
      const m = /ip daddr (?:\{ ([^}]+) \}|(\S+)) drop/.exec(rule.raw);
      const list = m?.[1] ?? m?.[2];
      if (list) return list.split(/\s*,\s*/).map((s) => s.trim()).filter(Boolean);
    }
  }
  return undefined;
}

/**
 * One Service row as kube-proxy's `family` proxier (default IPv4) reads it, or null for what
 * programs nothing in that family (ExternalName, no ClusterIP of the family); headless ones
 * come back with clusterIP `None`, Services of another proxy with their `serviceProxyName`.
 * Pushes onto `notes` what the generators' model cannot say (IPv6 only in the IPv4 count,
 * a named targetPort resolving to several ports).
 */
export function scenarioService(row: ServiceRow, notes: CompareNote[], family: ProxyFamily = 'IPv4'): ScenarioService | null {
  if (row.type === 'ExternalName') return null;
  const clusterIP = row.headless ? 'None' : row.clusterIPs.find(family === 'IPv4' ? isV4ClusterIP : isV6);
  if (clusterIP === undefined) {
    // The name is made for notes only: the expectation asks every IPv4 Service for its IPv6 part too.
    if (family === 'IPv4' && row.clusterIPs.length > 0) {
      const name = formatServiceRef(row);
      notes.push(note('ipv6-only', { service: name }, `${name}: IPv6 only, not counted (the generators write IPv4 rules)`));
    }
    return null;
  }
  const name = formatServiceRef(row);
  const ports: ScenarioServicePort[] = row.ports.map((p) => {
    if (p.endpointPorts.length > 1) {
      const params = { service: `${name}:${p.name || p.port}`, ports: p.endpointPorts.join(', '), port: String(p.endpointPorts[0]) };
      notes.push(note('named-port-split', params, `${params.service}: its named targetPort resolves to ${params.ports}; counted with ${params.port}`));
    }
    const targetPort = p.endpointPorts[0] ?? (typeof p.targetPort === 'number' ? p.targetPort : p.port);
    const out: Mutable<ScenarioServicePort> = { name: p.name, protocol: p.protocol, port: p.port, targetPort };
    if (p.nodePort) out.nodePort = p.nodePort;
    return out as ScenarioServicePort;
  });
  const svc = row.service;
  const ofFamily = family === 'IPv4' ? isV4 : isV6;
  // Optional keys set in place, in the order they always had (a spread per key made a throw-away object).
  const out: Mutable<ScenarioService> = {
    namespace: row.namespace,
    name: row.name,
    type: row.type === 'NodePort' || row.type === 'LoadBalancer' ? row.type : 'ClusterIP',
    clusterIP,
    ports,
  };
  if (row.selector) out.selector = row.selector;
  out.externalIPs = row.externalIPs.filter(ofFamily);
  out.loadBalancerIPs = row.loadBalancerIPs.filter(ofFamily);
  const proxyIPs = proxyIPsOf(row);
  if (proxyIPs.ipModeProxyIPs) out.ipModeProxyIPs = proxyIPs.ipModeProxyIPs;
  out.loadBalancerSourceRanges = svc.loadBalancerSourceRanges;
  if (row.externalTrafficPolicy) out.externalTrafficPolicy = row.externalTrafficPolicy;
  if (row.internalTrafficPolicy) out.internalTrafficPolicy = row.internalTrafficPolicy;
  if (row.sessionAffinity === 'ClientIP') out.sessionAffinity = { timeoutSeconds: row.sessionAffinityTimeoutSeconds ?? 10800 };
  if (svc.healthCheckNodePort !== undefined) out.healthCheckNodePort = svc.healthCheckNodePort;
  if (svc.serviceProxyName !== undefined) out.serviceProxyName = svc.serviceProxyName;
  if (row.trafficDistribution !== undefined) out.trafficDistribution = row.trafficDistribution;
  out.endpoints = scenarioEndpoints(row, family);
  return out as ScenarioService;
}

/** `ipModeProxyIPs` of a row: LB ingress IPs with `ipMode: Proxy` (none → no key). */
function proxyIPsOf(row: ServiceRow): { ipModeProxyIPs?: string[] } {
  const ips = row.service.loadBalancerIngress.filter((i) => i.ipMode === 'Proxy' && i.ip !== undefined).map((i) => i.ip!);
  return ips.length > 0 ? { ipModeProxyIPs: ips } : {};
}

/** `T` with its fields writable and optional, while one is filled in. */
type Mutable<T> = { -readonly [K in keyof T]?: T[K] };

/** The row's endpoints of one family, once per address (kube-proxy keys them by `ip:port`), with zone and hints. */
function scenarioEndpoints(row: ServiceRow, family: ProxyFamily): ScenarioEndpoint[] {
  const seen = new Map<string, ScenarioEndpoint>();
  for (const e of row.endpoints) {
    if (e.addressType !== family || seen.has(e.address)) continue;
    const ready = e.ready !== false;
    // Optional keys set in place, in the order the type lists them (a spread per key made a
    // throw-away object per endpoint).
    const ep: Mutable<ScenarioEndpoint> = { ip: e.address };
    if (e.nodeName) ep.nodeName = e.nodeName;
    ep.ready = ready;
    ep.serving = e.serving ?? ready;
    ep.terminating = e.terminating ?? false;
    if (e.zone !== undefined) ep.zone = e.zone;
    if (e.hintsForZones.length > 0) ep.zoneHints = e.hintsForZones;
    if (e.hintsForNodes.length > 0) ep.nodeHints = e.hintsForNodes;
    seen.set(e.address, ep as ScenarioEndpoint);
  }
  return [...seen.values()];
}

/** The generators' input without its Services: what every Service's rules share. */
export type CompareContext = Omit<KubeProxyInput, 'services'>;

/** The IPv4 ClusterIP kube-proxy programs for a row, or undefined (ExternalName, headless, another proxy's, IPv6 only): what {@link scenarioService} reads, without deriving ports or endpoints. */
export function programmedClusterIP(row: ServiceRow): string | undefined {
  if (row.type === 'ExternalName' || row.headless || row.service.serviceProxyName !== undefined) return undefined;
  return row.clusterIPs.find(isV4ClusterIP);
}

/**
 * The node's addresses of `family` kube-proxy and Cilium use for NodePorts: the Node object's
 * InternalIPs of that family, else the node's global addresses of it. IPv4 is what
 * {@link compareContextOf} puts in `nodeIPs`.
 */
export function nodeIPsOf(snapshot: NodeSnapshot, objects: ApiObjects, family: ProxyFamily): string[] {
  const ofFamily = family === 'IPv4' ? isV4 : isV6;
  const node = objects.nodes.find((n) => n.meta.name === snapshot.meta.node);
  const fromNode = (node?.addresses ?? []).filter((a) => a.type === 'InternalIP' && ofFamily(a.address)).map((a) => a.address);
  if (fromNode.length > 0) return fromNode;
  const inet = family === 'IPv4' ? 'inet' : 'inet6';
  return (snapshot.addrs?.value ?? []).flatMap((i) => i.addresses.filter((a) => a.family === inet && a.scope === 'global').map((a) => a.local));
}

/**
 * What every Service's rules share, as seen from the snapshot's node: `nodeIPs` (the Node
 * object's InternalIPs, else the node's global IPv4 addresses), the cluster CIDR and the
 * Service CIDRs (see the module comment), with the notes saying what was inferred.
 * `clusterIPs`: the programmed ClusterIPs (for the Service CIDR when no rule names it).
 */
export function compareContextOf(snapshot: NodeSnapshot, objects: ApiObjects, clusterIPs: readonly string[]): { context: CompareContext; notes: CompareNote[] } {
  const notes: CompareNote[] = [];
  const nodeName = snapshot.meta.node;
  const node = objects.nodes.find((n) => n.meta.name === nodeName);
  const { ips: nodeIPs, fromAddresses } = nodeAddressesOf(snapshot, objects);
  if (fromAddresses && nodeIPs.length > 0) notes.push(note('node-ips-from-addresses', { ips: nodeIPs.join(', '), node: nodeName }, `node IPs taken from the node's addresses (${nodeIPs.join(', ')}): no Node object names ${nodeName}`));
  let clusterCIDR = clusterCidrFromRules(snapshot);
  if (clusterCIDR === undefined) {
    clusterCIDR = coveringPrefix(objects.nodes.flatMap((n) => n.podCIDRs));
    if (clusterCIDR !== undefined) notes.push(note('cluster-cidr-inferred', { cidr: clusterCIDR }, `cluster CIDR inferred as ${clusterCIDR} (covers every Node's podCIDR; the node has no kube-proxy rule naming it)`));
    else notes.push(note('cluster-cidr-unknown', {}, 'cluster CIDR unknown: the per-Service "masquerade what is not from a pod" rules are not counted'));
  }
  let serviceCIDRs = serviceCidrsFromRules(snapshot);
  if (serviceCIDRs === undefined) {
    const covering = coveringPrefix(clusterIPs);
    serviceCIDRs = covering ? [covering] : [];
    if (covering) notes.push(note('service-cidr-inferred', { cidr: covering }, `Service CIDR inferred as ${covering} (covers every ClusterIP; nftables mode drops traffic to unallocated ones)`));
  }
  const nodeZone = node?.zone;
  return { context: { nodeName, ...(nodeZone ? { nodeZone } : {}), nodeIPs, ...(clusterCIDR ? { clusterCIDR } : {}), serviceCIDRs }, notes };
}

/**
 * The node's IPv4 addresses: its Node object's InternalIPs, else (`fromAddresses`) the global
 * inet addresses of its interfaces (`ip -j addr`). Pure.
 */
export function nodeAddressesOf(snapshot: NodeSnapshot, objects: ApiObjects): { ips: string[]; fromAddresses: boolean } {
  const node = objects.nodes.find((n) => n.meta.name === snapshot.meta.node);
  const ips = (node?.addresses ?? []).filter((a) => a.type === 'InternalIP' && isV4(a.address)).map((a) => a.address);
  if (ips.length > 0) return { ips, fromAddresses: false };
  return { ips: (snapshot.addrs?.value ?? []).flatMap((i) => i.addresses.filter((a) => a.family === 'inet' && a.scope === 'global').map((a) => a.local)), fromAddresses: true };
}

/**
 * The generators' input for the capture's API objects, as seen from the snapshot's node
 * (see {@link compareContextOf}); notes of the Services (view order) come first.
 */
export function kubeProxyInputOf(snapshot: NodeSnapshot, objects: ApiObjects): CompareInput {
  const notes: CompareNote[] = [];
  const view = buildServiceView(objects, { nodeName: snapshot.meta.node });
  const services = view.rows.map((r) => scenarioService(r, notes)).filter((s): s is ScenarioService => s !== null);
  const { context, notes: more } = compareContextOf(snapshot, objects, services.filter(isProxied).map((s) => s.clusterIP));
  return { input: { ...context, services }, notes: [...notes, ...more] };
}

/**
 * The LB table Cilium's agent (kube-proxy replacement) would write for `input`, with the
 * agent options nodescope cannot read taken at their defaults: see
 * src/analysis/cilium-expected.ts, which also says why and what is undecided.
 */
export function ciliumTableOf(input: KubeProxyInput): LbTable {
  return expectCiliumTable(input).table;
}
