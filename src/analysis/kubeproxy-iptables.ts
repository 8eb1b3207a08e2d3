/**
 * The `iptables-restore` input kube-proxy's iptables proxier writes for a set of
 * Services, as a pure function of its input.
 *
 * Source: k8s.io/kubernetes pkg/proxy/iptables/proxier.go (`syncProxyRules`,
 * `writeServiceToEndpointRules`, `iptablesJumpChains`), v1.29+ (KUBE-EXT/SVL/FW,
 * KUBE-PROXY-FIREWALL, nfacct). kube-proxy iterates a Go map, so its real output order
 * varies between syncs; this generator emits the canonical order of kube-proxy's own
 * test helper `sortIPTablesRules` (pkg/proxy/iptables/proxier_test.go): tables
 * filter then nat; chains KUBE-NODEPORTS, KUBE-SERVICES, then other KUBE-* chains
 * alphabetically, then built-in chains; rules grouped per chain, KUBE-SERVICES and
 * KUBE-NODEPORTS ordered by service name with the nodeports jump last.
 * With default options for the test's fake proxier (`nfacct: true`,
 * `randomFully: false`, `clusterCIDR` 10.0.0.0/8) the text equals kube-proxy's
 * `TestOverallIPTablesRules` expectation line for line.
 */
import type { KubeProxyInput } from './lab-scenario-types.js';
import { IPTABLES_CHAINS as C, iptablesEndpointChain, iptablesServiceChain } from './kubeproxy-names.js';
import {
  cmp,
  ipInCidr,
  planServicePort,
  serviceToPorts,
  type ProxyEndpoint,
  type ProxyServicePort,
  type ServicePortPlan,
} from './kubeproxy-serviceports.js';

/**
 * Proxier settings that change the rules (kube-proxy flags and host capabilities).
 *
 * - `masqueradeMark`: the mark `KUBE-MARK-MASQ` sets, `--iptables-masquerade-bit` 14 → `0x4000`.
 * - `masqueradeAll`: `--masquerade-all`.
 * - `localhostNodePorts`: `--iptables-localhost-nodeports` (default true): adds KUBE-FIREWALL.
 * - `nfacct`: whether the nfacct counters exist (kernel `xt_nfacct`); adds `-m nfacct` rules.
 * - `randomFully`: whether iptables supports `MASQUERADE --random-fully` (1.6.2+).
 * - `conntrackTCPLiberal`: `nf_conntrack_tcp_be_liberal` set → no INVALID drop rule.
 * - `nodePortIPs`: `--nodeport-addresses` resolved to node IPs; absent → all local addresses.
 * - `includeJumpRules`: also write the jumps from the built-in chains (INPUT, FORWARD,
 *   OUTPUT, PREROUTING, POSTROUTING) that kube-proxy installs separately with
 *   `iptables -I` (so their order is the reverse of `iptablesJumpChains`). Needed to load
 *   the text into an empty network namespace.
 */
export interface IptablesProxierOptions {
  readonly masqueradeMark?: string;
  readonly masqueradeAll?: boolean;
  readonly localhostNodePorts?: boolean;
  readonly nfacct?: boolean;
  readonly randomFully?: boolean;
  readonly conntrackTCPLiberal?: boolean;
  readonly nodePortIPs?: readonly string[];
  readonly includeJumpRules?: boolean;
}

/** kube-proxy's "large cluster mode" threshold: above it, per-endpoint comments are dropped. */
const LARGE_CLUSTER_ENDPOINTS = 1000;
const NFACCT_INVALID = 'ct_state_invalid_dropped_pkts';
const NFACCT_LOCALHOST_NP = 'localhost_nps_accepted_pkts';

/** One jump from a built-in chain: kube-proxy's `iptablesJumpChain` (+ the kubelet duplicates). */
interface JumpChain {
  readonly table: 'filter' | 'nat';
  readonly dst: string;
  readonly src: string;
  readonly comment: string;
  readonly extra: readonly string[];
}

const CT_NEW = ['-m', 'conntrack', '--ctstate', 'NEW'];
const JUMP_CHAINS: readonly JumpChain[] = [
  { table: 'filter', dst: C.externalServices, src: 'INPUT', comment: 'kubernetes externally-visible service portals', extra: CT_NEW },
  { table: 'filter', dst: C.externalServices, src: 'FORWARD', comment: 'kubernetes externally-visible service portals', extra: CT_NEW },
  { table: 'filter', dst: C.nodePorts, src: 'INPUT', comment: 'kubernetes health check service ports', extra: [] },
  { table: 'filter', dst: C.services, src: 'FORWARD', comment: 'kubernetes service portals', extra: CT_NEW },
  { table: 'filter', dst: C.services, src: 'OUTPUT', comment: 'kubernetes service portals', extra: CT_NEW },
  { table: 'filter', dst: C.forward, src: 'FORWARD', comment: 'kubernetes forwarding rules', extra: [] },
  { table: 'filter', dst: C.proxyFirewall, src: 'INPUT', comment: 'kubernetes load balancer firewall', extra: CT_NEW },
  { table: 'filter', dst: C.proxyFirewall, src: 'OUTPUT', comment: 'kubernetes load balancer firewall', extra: CT_NEW },
  { table: 'filter', dst: C.proxyFirewall, src: 'FORWARD', comment: 'kubernetes load balancer firewall', extra: CT_NEW },
  { table: 'nat', dst: C.services, src: 'OUTPUT', comment: 'kubernetes service portals', extra: [] },
  { table: 'nat', dst: C.services, src: 'PREROUTING', comment: 'kubernetes service portals', extra: [] },
  { table: 'nat', dst: C.postrouting, src: 'POSTROUTING', comment: 'kubernetes postrouting rules', extra: [] },
  // iptablesKubeletJumpChains: kube-proxy creates kubelet's KUBE-FIREWALL jumps too.
  { table: 'filter', dst: C.kubeletFirewall, src: 'INPUT', comment: '', extra: [] },
  { table: 'filter', dst: C.kubeletFirewall, src: 'OUTPUT', comment: '', extra: [] },
];

const BUILTIN_POLICY: Readonly<Record<string, string>> = {
  INPUT: 'ACCEPT',
  FORWARD: 'ACCEPT',
  OUTPUT: 'ACCEPT',
  PREROUTING: 'ACCEPT',
  POSTROUTING: 'ACCEPT',
};

/** A table under construction: chains in creation order, rules per chain. */
class TableText {
  private readonly chains: string[] = [];
  private readonly rules = new Map<string, string[]>();

  constructor(readonly name: 'filter' | 'nat') {}

  chain(name: string): void {
    if (!this.rules.has(name)) {
      this.chains.push(name);
      this.rules.set(name, []);
    }
  }

  /** Appends `-A chain args…`; the chain must have been declared. */
  rule(chain: string, ...args: string[]): void {
    const list = this.rules.get(chain);
    if (list === undefined) throw new Error(`BUG: rule for undeclared chain ${chain}`);
    list.push(['-A', chain, ...args].join(' '));
  }

  /** The table in `sortIPTablesRules` order. */
  render(): string {
    const chains = [...this.chains].sort(chainOrder);
    const lines = [`*${this.name}`];
    for (const c of chains) lines.push(`:${c} ${BUILTIN_POLICY[c] ?? '-'} [0:0]`);
    for (const c of chains) lines.push(...sortedRules(c, this.rules.get(c) ?? []));
    lines.push('COMMIT');
    return lines.join('\n');
  }
}

function chainOrder(a: string, b: string): number {
  const rank = (c: string): number => (c === C.nodePorts ? 0 : c === C.services ? 1 : c.startsWith('KUBE-') ? 2 : 3);
  return rank(a) - rank(b) || cmp(a, b);
}

/** `orderByCommentServiceName`: the comment's text up to the first space or colon. */
function commentServiceName(rule: string): string | null {
  const m = /--comment ("[^"]*"|\S+)/.exec(rule);
  if (m?.[1] === undefined) return null;
  const text = m[1].replace(/^"|"$/g, '');
  const cut = text.search(/[ :]/);
  return cut === -1 ? text : text.slice(0, cut);
}

function sortedRules(chain: string, rules: readonly string[]): string[] {
  if (chain !== C.services && chain !== C.nodePorts) return [...rules];
  const isLast = (r: string): boolean => r.includes('must be the last rule');
  // Stable sort, as Go's sort.SliceStable in the upstream helper.
  return rules
    .map((rule, index) => ({ rule, index }))
    .sort((x, y) => {
      if (isLast(x.rule) !== isLast(y.rule)) return isLast(x.rule) ? 1 : -1;
      const nx = commentServiceName(x.rule);
      const ny = commentServiceName(y.rule);
      if (nx !== null && ny !== null && nx !== ny) return nx < ny ? -1 : 1;
      return x.index - y.index;
    })
    .map((x) => x.rule);
}

function quoted(text: string): string {
  return `"${text}"`;
}

/** `proxier.probability(n)`: `%0.10f` of 1/n. */
export function iptablesProbability(n: number): string {
  return (1 / n).toFixed(10);
}

/**
 * Generates the iptables-restore text (tables `filter` then `nat`, each ending in
 * `COMMIT`, newline-terminated) kube-proxy writes for `input`: `iptables-restore` input for
 * an IPv4 input, `ip6tables-restore` input for `family: 'IPv6'` (no localhost NodePorts,
 * `! -d ::1/128` on the NodePort jump). Pure; never throws for
 * valid input. Headless Services are skipped; a Service with no usable endpoints gets
 * only filter-table REJECT rules, as in kube-proxy.
 */
export function generateIptablesRestore(input: KubeProxyInput, options: IptablesProxierOptions = {}): string {
  const mark = options.masqueradeMark ?? '0x4000';
  const localhostNodePorts = options.localhostNodePorts ?? true;
  const nfacct = options.nfacct ?? false;
  const filter = new TableText('filter');
  const nat = new TableText('nat');

  for (const c of [C.services, C.externalServices, C.forward, C.nodePorts, C.proxyFirewall]) filter.chain(c);
  for (const c of [C.services, C.nodePorts, C.postrouting, C.markMasq]) nat.chain(c);

  nat.rule(C.postrouting, '-m', 'mark', '!', '--mark', `${mark}/${mark}`, '-j', 'RETURN');
  nat.rule(C.postrouting, '-j', 'MARK', '--xor-mark', mark);
  const masq = ['-m', 'comment', '--comment', quoted('kubernetes service traffic requiring SNAT'), '-j', 'MASQUERADE'];
  if (options.randomFully ?? true) masq.push('--random-fully');
  nat.rule(C.postrouting, ...masq);
  nat.rule(C.markMasq, '-j', 'MARK', '--or-mark', mark);

  const ipv6 = input.family === 'IPv6';
  // Localhost NodePorts (and so the guard against them) exist for IPv4 only.
  if (localhostNodePorts && !ipv6) {
    filter.chain(C.kubeletFirewall);
    filter.rule(C.kubeletFirewall, '-m', 'comment', '--comment', quoted('block incoming localnet connections'),
      '-d', '127.0.0.0/8', '!', '-s', '127.0.0.0/8', '-m', 'conntrack', '!', '--ctstate', 'RELATED,ESTABLISHED,DNAT', '-j', 'DROP');
  }

  const ports = serviceToPorts(input);
  const totalEndpoints = ports.reduce((n, p) => n + p.endpoints.length, 0);
  const ctx: SvcContext = {
    filter, nat, input, mark,
    masqueradeAll: options.masqueradeAll ?? false,
    largeCluster: totalEndpoints > LARGE_CLUSTER_ENDPOINTS,
    localhostNodePortsNfacct: localhostNodePorts && nfacct,
  };
  for (const svc of ports) writeServicePort(ctx, svc);

  const lastComment = quoted('kubernetes service nodeports; NOTE: this must be the last rule in this chain');
  if (options.nodePortIPs === undefined) {
    const dst = ['-m', 'addrtype', '--dst-type', 'LOCAL'];
    if (ipv6) dst.push('!', '-d', '::1/128');
    else if (!localhostNodePorts) dst.push('!', '-d', '127.0.0.0/8');
    nat.rule(C.services, '-m', 'comment', '--comment', lastComment, ...dst, '-j', C.nodePorts);
  } else {
    for (const ip of options.nodePortIPs) {
      if ((ip.startsWith('127.') && (!localhostNodePorts || ipv6)) || (ipv6 && ip === '::1')) continue;
      nat.rule(C.services, '-m', 'comment', '--comment', lastComment, '-d', ip, '-j', C.nodePorts);
    }
  }

  if (!(options.conntrackTCPLiberal ?? false)) {
    const invalid = ['-m', 'conntrack', '--ctstate', 'INVALID'];
    if (nfacct) invalid.push('-m', 'nfacct', '--nfacct-name', NFACCT_INVALID);
    filter.rule(C.forward, ...invalid, '-j', 'DROP');
  }
  filter.rule(C.forward, '-m', 'comment', '--comment', quoted('kubernetes forwarding rules'),
    '-m', 'mark', '--mark', `${mark}/${mark}`, '-j', 'ACCEPT');
  filter.rule(C.forward, '-m', 'comment', '--comment', quoted('kubernetes forwarding conntrack rule'),
    '-m', 'conntrack', '--ctstate', 'RELATED,ESTABLISHED', '-j', 'ACCEPT');

  if (options.includeJumpRules ?? false) writeJumpRules(filter, nat);
  return `${filter.render()}\n${nat.render()}\n`;
}

interface SvcContext {
  readonly filter: TableText;
  readonly nat: TableText;
  readonly input: KubeProxyInput;
  readonly mark: string;
  readonly masqueradeAll: boolean;
  readonly largeCluster: boolean;
  readonly localhostNodePortsNfacct: boolean;
}

/** One Service port being written: its facts, kube-proxy's plan for it, its chain names and the `-m proto -p proto` match. */
interface SvcWrite {
  readonly svc: ProxyServicePort;
  readonly plan: ServicePortPlan;
  readonly name: string;
  readonly port: string;
  readonly l4: readonly string[];
  readonly clusterPolicyChain: string;
  readonly localPolicyChain: string;
  readonly externalTrafficChain: string;
  readonly fwChain: string;
  readonly internalTrafficChain: string;
  readonly externalPolicyChain: string;
  readonly usesFWChain: boolean;
}

/** The per-Service-port body of kube-proxy's `syncProxyRules` loop. */
function writeServicePort(ctx: SvcContext, svc: ProxyServicePort): void {
  const name = svc.svcPortName;
  const proto = svc.protocol;
  const plan = planServicePort(svc);
  const clusterPolicyChain = iptablesServiceChain('KUBE-SVC-', name, proto);
  const localPolicyChain = iptablesServiceChain('KUBE-SVL-', name, proto);
  const w: SvcWrite = {
    svc, plan, name, port: String(svc.port.port), l4: ['-m', proto, '-p', proto],
    clusterPolicyChain, localPolicyChain,
    externalTrafficChain: iptablesServiceChain('KUBE-EXT-', name, proto),
    fwChain: iptablesServiceChain('KUBE-FW-', name, proto),
    internalTrafficChain: svc.internalPolicyLocal ? localPolicyChain : clusterPolicyChain,
    externalPolicyChain: svc.externalPolicyLocal ? localPolicyChain : clusterPolicyChain,
    usesFWChain: plan.cat.hasAnyEndpoints && svc.loadBalancerVIPs.length > 0 && svc.loadBalancerSourceRanges.length > 0,
  };
  writeCaptureRules(ctx, w);
  writeTrafficChains(ctx, w);
  if (w.usesFWChain) writeFirewallChain(ctx, w);
  if (plan.usesClusterPolicyChain) {
    ctx.nat.chain(clusterPolicyChain);
    writeServiceToEndpointRules(ctx, svc, clusterPolicyChain, plan.cat.clusterEndpoints);
  }
  if (plan.usesLocalPolicyChain) {
    ctx.nat.chain(localPolicyChain);
    writeServiceToEndpointRules(ctx, svc, localPolicyChain, plan.cat.localEndpoints);
  }
  writeEndpointChains(ctx, w);
}

/** The REJECT/DROP target and comment of traffic without endpoints (`''` when it has some). */
function filterVerdict(w: SvcWrite, verdict: '' | 'reject' | 'drop'): { target: string; comment: string } {
  if (verdict === 'reject') return { target: 'REJECT', comment: quoted(`${w.name} has no endpoints`) };
  if (verdict === 'drop') return { target: 'DROP', comment: quoted(`${w.name} has no local endpoints`) };
  return { target: '', comment: '' };
}

/** Captures of the ClusterIP, externalIPs, LB IPs, NodePort and health-check NodePort (KUBE-SERVICES, KUBE-NODEPORTS, KUBE-EXTERNAL-SERVICES, KUBE-PROXY-FIREWALL). */
function writeCaptureRules(ctx: SvcContext, w: SvcWrite): void {
  const { filter, nat } = ctx;
  const { svc, plan, name, port, l4 } = w;
  const internal = filterVerdict(w, plan.internalVerdict);
  const external = filterVerdict(w, plan.externalVerdict);
  if (plan.hasInternalEndpoints) {
    nat.rule(C.services, '-m', 'comment', '--comment', quoted(`${name} cluster IP`), ...l4, '-d', svc.clusterIP, '--dport', port, '-j', w.internalTrafficChain);
  } else {
    filter.rule(C.services, '-m', 'comment', '--comment', internal.comment, ...l4, '-d', svc.clusterIP, '--dport', port, '-j', internal.target);
  }
  for (const ip of svc.externalIPs) {
    if (plan.cat.hasAnyEndpoints) {
      nat.rule(C.services, '-m', 'comment', '--comment', quoted(`${name} external IP`), ...l4, '-d', ip, '--dport', port, '-j', w.externalTrafficChain);
    }
    if (!plan.hasExternalEndpoints) {
      filter.rule(C.externalServices, '-m', 'comment', '--comment', external.comment, ...l4, '-d', ip, '--dport', port, '-j', external.target);
    }
  }
  const loadBalancerTrafficChain = w.usesFWChain ? w.fwChain : w.externalTrafficChain;
  for (const ip of svc.loadBalancerVIPs) {
    if (plan.cat.hasAnyEndpoints) {
      nat.rule(C.services, '-m', 'comment', '--comment', quoted(`${name} loadbalancer IP`), ...l4, '-d', ip, '--dport', port, '-j', loadBalancerTrafficChain);
    }
    if (w.usesFWChain) {
      filter.rule(C.proxyFirewall, '-m', 'comment', '--comment', quoted(`${name} traffic not accepted by ${w.fwChain}`), ...l4, '-d', ip, '--dport', port, '-j', 'DROP');
    }
  }
  if (!plan.hasExternalEndpoints) {
    for (const ip of svc.loadBalancerVIPs) {
      filter.rule(C.externalServices, '-m', 'comment', '--comment', external.comment, ...l4, '-d', ip, '--dport', port, '-j', external.target);
    }
  }
  if (svc.nodePort !== 0) {
    const np = String(svc.nodePort);
    if (plan.cat.hasAnyEndpoints) {
      // kube-proxy accepts NodePorts on localhost for IPv4 only (route_localnet).
      if (ctx.localhostNodePortsNfacct && svc.family === 'IPv4') {
        nat.rule(C.nodePorts, '-m', 'comment', '--comment', name, ...l4, '-d', '127.0.0.0/8', '--dport', np,
          '-m', 'nfacct', '--nfacct-name', NFACCT_LOCALHOST_NP, '-j', w.externalTrafficChain);
      }
      nat.rule(C.nodePorts, '-m', 'comment', '--comment', name, ...l4, '--dport', np, '-j', w.externalTrafficChain);
    }
    if (!plan.hasExternalEndpoints) {
      filter.rule(C.externalServices, '-m', 'comment', '--comment', external.comment, '-m', 'addrtype', '--dst-type', 'LOCAL', ...l4, '--dport', np, '-j', external.target);
    }
  }
  if (svc.healthCheckNodePort !== 0) {
    filter.rule(C.nodePorts, '-m', 'comment', '--comment', quoted(`${name} health check node port`),
      '-m', 'tcp', '-p', 'tcp', '--dport', String(svc.healthCheckNodePort), '-j', 'ACCEPT');
  }
}

/** The masquerade rule of the internal chain and the KUBE-EXT chain (with eTP=Local's short-circuits). */
function writeTrafficChains(ctx: SvcContext, w: SvcWrite): void {
  const { nat, input } = ctx;
  const { svc, plan, name } = w;
  if (plan.hasInternalEndpoints) {
    const args = ['-m', 'comment', '--comment', quoted(`${name} cluster IP`), ...w.l4, '-d', svc.clusterIP, '--dport', w.port];
    if (ctx.masqueradeAll) {
      nat.chain(w.internalTrafficChain);
      nat.rule(w.internalTrafficChain, ...args, '-j', C.markMasq);
    } else if (input.clusterCIDR !== undefined) {
      nat.chain(w.internalTrafficChain);
      nat.rule(w.internalTrafficChain, ...args, '!', '-s', input.clusterCIDR, '-j', C.markMasq);
    }
  }
  if (!plan.usesExternalTrafficChain) return;
  const ext = w.externalTrafficChain;
  nat.chain(ext);
  if (!svc.externalPolicyLocal) {
    nat.rule(ext, '-m', 'comment', '--comment', quoted(`masquerade traffic for ${name} external destinations`), '-j', C.markMasq);
  } else {
    if (input.clusterCIDR !== undefined) {
      nat.rule(ext, '-m', 'comment', '--comment', quoted(`pod traffic for ${name} external destinations`), '-s', input.clusterCIDR, '-j', w.clusterPolicyChain);
    }
    nat.rule(ext, '-m', 'comment', '--comment', quoted(`masquerade LOCAL traffic for ${name} external destinations`),
      '-m', 'addrtype', '--src-type', 'LOCAL', '-j', C.markMasq);
    nat.rule(ext, '-m', 'comment', '--comment', quoted(`route LOCAL traffic for ${name} external destinations`),
      '-m', 'addrtype', '--src-type', 'LOCAL', '-j', w.clusterPolicyChain);
  }
  if (plan.hasExternalEndpoints) nat.rule(ext, '-j', w.externalPolicyChain);
}

/** KUBE-FW-*: the loadBalancerSourceRanges (plus the LB IPs when a node IP is in a range), then the drop comment. */
function writeFirewallChain(ctx: SvcContext, w: SvcWrite): void {
  const { nat, input } = ctx;
  const { svc } = w;
  nat.chain(w.fwChain);
  const args = ['-m', 'comment', '--comment', quoted(`${w.name} loadbalancer IP`)];
  let allowFromNode = false;
  for (const cidr of svc.loadBalancerSourceRanges) {
    nat.rule(w.fwChain, ...args, '-s', cidr, '-j', w.externalTrafficChain);
    if (input.nodeIPs.some((ip) => ipInCidr(ip, cidr))) allowFromNode = true;
  }
  if (allowFromNode) {
    for (const ip of svc.loadBalancerVIPs) nat.rule(w.fwChain, ...args, '-s', ip, '-j', w.externalTrafficChain);
  }
  nat.rule(w.fwChain, '-m', 'comment', '--comment', quoted(`other traffic to ${w.name} will be dropped by KUBE-PROXY-FIREWALL`));
}

/** One KUBE-SEP-* chain per reachable endpoint: hairpin masquerade, then DNAT (with `recent --set` for affinity). */
function writeEndpointChains(ctx: SvcContext, w: SvcWrite): void {
  const { svc } = w;
  for (const ep of w.plan.cat.allLocallyReachableEndpoints) {
    const sep = iptablesEndpointChain(w.name, svc.protocol, ep.hostPort);
    ctx.nat.chain(sep);
    const comment = ctx.largeCluster ? [] : ['-m', 'comment', '--comment', w.name];
    ctx.nat.rule(sep, ...comment, '-s', ep.ip, '-j', C.markMasq);
    const affinity = svc.stickyMaxAgeSeconds > 0 ? ['-m', 'recent', '--name', sep, '--set'] : [];
    ctx.nat.rule(sep, ...comment, ...affinity, ...w.l4, '-j', 'DNAT', '--to-destination', ep.hostPort);
  }
}

/** kube-proxy's `writeServiceToEndpointRules`: affinity checks, then 1/N, 1/(N-1)… rules. */
function writeServiceToEndpointRules(
  ctx: SvcContext,
  svc: ProxyServicePort,
  chain: string,
  endpoints: readonly ProxyEndpoint[],
): void {
  const commentFor = (ep: ProxyEndpoint): string[] =>
    ctx.largeCluster ? [] : ['-m', 'comment', '--comment', quoted(`${svc.svcPortName} -> ${ep.hostPort}`)];
  const sepOf = (ep: ProxyEndpoint): string => iptablesEndpointChain(svc.svcPortName, svc.protocol, ep.hostPort);
  if (svc.stickyMaxAgeSeconds > 0) {
    for (const ep of endpoints) {
      ctx.nat.rule(chain, ...commentFor(ep), '-m', 'recent', '--name', sepOf(ep), '--rcheck',
        '--seconds', String(svc.stickyMaxAgeSeconds), '--reap', '-j', sepOf(ep));
    }
  }
  endpoints.forEach((ep, i) => {
    const stat = i < endpoints.length - 1
      ? ['-m', 'statistic', '--mode', 'random', '--probability', iptablesProbability(endpoints.length - i)]
      : [];
    ctx.nat.rule(chain, ...commentFor(ep), ...stat, '-j', sepOf(ep));
  });
}

/** Writes the built-in chain jumps in the order repeated `iptables -I` leaves them. */
function writeJumpRules(filter: TableText, nat: TableText): void {
  for (const table of [filter, nat]) {
    const jumps = JUMP_CHAINS.filter((j) => j.table === table.name);
    const sources = [...new Set(jumps.map((j) => j.src))];
    // kube-proxy's EnsureChain creates every jump target, even ones no rule fills.
    for (const j of jumps) table.chain(j.dst);
    for (const src of sources) {
      table.chain(src);
      // Prepend semantics: the last ensured jump ends up first.
      for (const j of jumps.filter((x) => x.src === src).reverse()) {
        const comment = j.comment === '' ? [] : ['-m', 'comment', '--comment', quoted(j.comment)];
        table.rule(src, ...j.extra, ...comment, '-j', j.dst);
      }
    }
  }
}
