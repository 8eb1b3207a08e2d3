/**
 * The NAT view of conntrack: for each entry, who sent it, where it was sent (a
 * Service VIP or NodePort) and who really answers.
 *
 * Conntrack stores NAT as the difference between the two tuples
 * (`nf_nat_core.c` rewrites the reply tuple): the original tuple is the packet as
 * the client sent it; the reply tuple is the packet the answering endpoint sends
 * back. So
 *
 * - reply `src:sport` ≠ original `dst:dport` → DNAT: the endpoint that answers is
 *   the reply source (kube-proxy's `KUBE-SEP-*` DNAT, IPVS, …);
 * - reply `dst:dport` ≠ original `src:sport` → SNAT / masquerade: the endpoint
 *   sees the client as the reply destination (`KUBE-MARK-MASQ` → `MASQUERADE`).
 *
 * Pure functions over the model; addresses compare as canonical text.
 */
import { canonicalIp, type ConntrackEntry, type ConntrackProto } from '../model/conntrack.js';

/** An address and, for port protocols (tcp, udp, udplite, sctp, dccp), a port. */
export interface ConntrackEndpoint {
  readonly ip: string;
  readonly port?: number;
}

/**
 * One entry seen as a NAT'd connection.
 *
 * - `client`: original `src:sport`; `destination`: original `dst:dport` (the VIP);
 * - `answeredBy`: reply `src:sport`, the endpoint that really answers;
 * - `clientAsSeen`: reply `dst:dport`, the source the endpoint sees;
 * - `dnat` / `snat`: whether each side was translated;
 * - `text`: `10.244.0.9:51286 → 10.96.12.34:80 ⇒ 10.244.0.31:8080`, with
 *   ` (SNAT as 10.224.0.4:53830)` appended when the source was translated.
 */
export interface ConntrackNatView {
  readonly entry: ConntrackEntry;
  readonly client: ConntrackEndpoint;
  readonly destination: ConntrackEndpoint;
  readonly answeredBy: ConntrackEndpoint;
  readonly clientAsSeen: ConntrackEndpoint;
  readonly dnat: boolean;
  readonly snat: boolean;
  readonly text: string;
}

/** Kubernetes `Protocol` of a Service port (core/v1). */
export type ServiceProtocol = 'TCP' | 'UDP' | 'SCTP';

/** A Service frontend address: ClusterIP, external IP or load-balancer IP with its port. */
export interface ServiceVip {
  readonly ip: string;
  readonly port: number;
  readonly protocol: ServiceProtocol;
}

/** A NodePort (open on every node address). */
export interface ServiceNodePort {
  readonly port: number;
  readonly protocol: ServiceProtocol;
}

/** A current endpoint (EndpointSlice address with its target port). */
export interface ServiceEndpoint {
  readonly ip: string;
  readonly port: number;
  readonly protocol: ServiceProtocol;
}

/** What the classifier needs to know about one Service. */
export interface ServiceFrontends {
  readonly namespace: string;
  readonly name: string;
  readonly vips: readonly ServiceVip[];
  readonly nodePorts: readonly ServiceNodePort[];
  readonly endpoints: readonly ServiceEndpoint[];
}

/**
 * How one entry relates to the Services.
 *
 * - `service`: the Service whose frontend the original destination is, with
 *   `via: 'vip'` (VIP:port) or `'nodePort'` (a node address and a NodePort);
 * - `status`:
 *   - `'ok'`: answered by one of the Service's current endpoints;
 *   - `'stale'`: answered by something that is not a current endpoint
 *     (`staleReason: 'endpoint-gone'`, `pointsAt` is it) or not translated at all
 *     (`'not-translated'`, reply source = original destination: the entry was made
 *     while the Service had no endpoints: the UDP blackhole kube-proxy clears with
 *     `conntrack -D`);
 *   - `'no-service'`: the original destination is no Service frontend.
 */
export interface ConntrackServiceMatch {
  readonly nat: ConntrackNatView;
  readonly service?: { readonly namespace: string; readonly name: string };
  /**
   * How the destination matched: a VIP, a NodePort on a node address, or (`endpoint`) a
   * current endpoint dialled as is, no NAT in the entry: Cilium's socket LB picks the
   * backend at connect(), so its flows look like this (so does a client dialling a Pod).
   */
  readonly via?: 'vip' | 'nodePort' | 'endpoint';
  readonly status: 'ok' | 'stale' | 'no-service';
  readonly staleReason?: 'endpoint-gone' | 'not-translated';
  readonly pointsAt?: ConntrackEndpoint;
}

/** Entries answered by one current endpoint of one Service ("derived from conntrack"). */
export interface ConntrackEndpointCount {
  readonly namespace: string;
  readonly name: string;
  readonly endpoint: ServiceEndpoint;
  /** Number of entries (flows) whose reply source is this endpoint, over its protocol. */
  readonly entries: number;
}

/** The result of {@link classifyConntrack}. */
export interface ConntrackClassification {
  readonly matches: readonly ConntrackServiceMatch[];
  readonly endpointCounts: readonly ConntrackEndpointCount[];
}

const PORTED: ReadonlySet<ConntrackProto> = new Set<ConntrackProto>(['tcp', 'udp', 'udplite', 'sctp', 'dccp']);

/** The Kubernetes protocol of a conntrack protocol, when it has one (tcp, udp, sctp). */
export function serviceProtocolOf(proto: ConntrackProto): ServiceProtocol | undefined {
  return proto === 'tcp' ? 'TCP' : proto === 'udp' ? 'UDP' : proto === 'sctp' ? 'SCTP' : undefined;
}

/** `ip:port`, `[v6]:port`, or the bare address when there is no port. */
export function formatEndpoint(e: ConntrackEndpoint): string {
  if (e.port === undefined) return e.ip;
  return e.ip.indexOf(':') >= 0 ? `[${e.ip}]:${e.port}` : `${e.ip}:${e.port}`;
}

function sameEndpoint(a: ConntrackEndpoint, b: ConntrackEndpoint): boolean {
  return a.ip === b.ip && a.port === b.port;
}

/** The NAT view of one entry (see {@link ConntrackNatView}). Never throws. */
export function conntrackNatView(entry: ConntrackEntry): ConntrackNatView {
  const ported = PORTED.has(entry.proto);
  const { orig, reply } = entry;
  const client: ConntrackEndpoint = { ip: orig.src, port: ported ? orig.sport : undefined };
  const destination: ConntrackEndpoint = { ip: orig.dst, port: ported ? orig.dport : undefined };
  const answeredBy: ConntrackEndpoint = { ip: reply.src, port: ported ? reply.sport : undefined };
  const clientAsSeen: ConntrackEndpoint = { ip: reply.dst, port: ported ? reply.dport : undefined };
  const dnat = !sameEndpoint(answeredBy, destination);
  const snat = !sameEndpoint(clientAsSeen, client);
  let text = `${formatEndpoint(client)} → ${formatEndpoint(destination)} ⇒ ${formatEndpoint(answeredBy)}`;
  if (snat) text += ` (SNAT as ${formatEndpoint(clientAsSeen)})`;
  return { entry, client, destination, answeredBy, clientAsSeen, dnat, snat, text };
}

/** {@link conntrackNatView} for each entry, in order. */
export function conntrackNatViews(entries: readonly ConntrackEntry[]): ConntrackNatView[] {
  return entries.map(conntrackNatView);
}

function key(protocol: ServiceProtocol, ip: string, port: number | undefined): string {
  return `${protocol} ${ip} ${port ?? ''}`;
}

function canon(ip: string): string {
  return canonicalIp(ip) ?? ip;
}

/**
 * Counts entries by reply source (`protocol ip port` → entries), for port
 * protocols with a Kubernetes protocol (TCP, UDP, SCTP). Keys are built by
 * {@link endpointKey}.
 */
export function countByReplySource(entries: readonly ConntrackEntry[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const e of entries) {
    const protocol = serviceProtocolOf(e.proto);
    if (protocol === undefined) continue;
    const k = key(protocol, e.reply.src, e.reply.sport);
    counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  return counts;
}

/** The key of an endpoint in {@link countByReplySource} (address made canonical). */
export function endpointKey(e: ServiceEndpoint): string {
  return key(e.protocol, canon(e.ip), e.port);
}

/**
 * Classifies each entry against the Services (see {@link ConntrackServiceMatch}):
 * the original destination is matched against every VIP (address, port and
 * protocol) and, when it is one of `nodeAddresses`, against every NodePort; an entry
 * matching neither, not translated, whose destination is a current endpoint of a Service
 * (address, port, protocol) is that Service's, `via: 'endpoint'`, `'ok'`. The first
 * Service in `services` order wins a tie. Entries of protocols a Service
 * cannot have (icmp, gre, …) are `'no-service'`.
 *
 * Also counts, for every current endpoint of every Service, the entries whose
 * reply source is that endpoint (whatever their destination: the nftables pane
 * shows it as "derived from conntrack"). Addresses in `services` and
 * `nodeAddresses` may be in any IPv6 spelling. Never throws.
 */
export function classifyConntrack(
  entries: readonly ConntrackEntry[],
  services: readonly ServiceFrontends[],
  nodeAddresses: readonly string[],
): ConntrackClassification {
  const byVip = new Map<string, ServiceFrontends>();
  const byNodePort = new Map<string, ServiceFrontends>();
  const byEndpoint = new Map<string, ServiceFrontends>();
  const endpointsOf = new Map<ServiceFrontends, Set<string>>();
  for (const svc of services) {
    for (const v of svc.vips) {
      const k = key(v.protocol, canon(v.ip), v.port);
      if (!byVip.has(k)) byVip.set(k, svc);
    }
    for (const np of svc.nodePorts) {
      const k = key(np.protocol, '', np.port);
      if (!byNodePort.has(k)) byNodePort.set(k, svc);
    }
    endpointsOf.set(svc, new Set(svc.endpoints.map(endpointKey)));
    for (const ep of svc.endpoints) {
      const k = endpointKey(ep);
      if (!byEndpoint.has(k)) byEndpoint.set(k, svc);
    }
  }
  const nodeSet = new Set(nodeAddresses.map(canon));

  const matches: ConntrackServiceMatch[] = [];
  for (const entry of entries) {
    const nat = conntrackNatView(entry);
    const protocol = serviceProtocolOf(entry.proto);
    if (protocol === undefined) {
      matches.push({ nat, status: 'no-service' });
      continue;
    }
    let via: 'vip' | 'nodePort' | 'endpoint' = 'vip';
    let svc = byVip.get(key(protocol, entry.orig.dst, entry.orig.dport));
    if (svc === undefined && nodeSet.has(entry.orig.dst)) {
      svc = byNodePort.get(key(protocol, '', entry.orig.dport));
      via = 'nodePort';
    }
    if (svc === undefined && !nat.dnat) {
      const direct = byEndpoint.get(key(protocol, entry.orig.dst, entry.orig.dport));
      if (direct !== undefined) {
        matches.push({ nat, service: { namespace: direct.namespace, name: direct.name }, via: 'endpoint', status: 'ok' });
        continue;
      }
    }
    if (svc === undefined) {
      matches.push({ nat, status: 'no-service' });
      continue;
    }
    const service = { namespace: svc.namespace, name: svc.name };
    if (!nat.dnat) {
      matches.push({ nat, service, via, status: 'stale', staleReason: 'not-translated', pointsAt: nat.answeredBy });
    } else if (endpointsOf.get(svc)?.has(key(protocol, entry.reply.src, entry.reply.sport))) {
      matches.push({ nat, service, via, status: 'ok' });
    } else {
      matches.push({ nat, service, via, status: 'stale', staleReason: 'endpoint-gone', pointsAt: nat.answeredBy });
    }
  }

  const counts = countByReplySource(entries);
  const endpointCounts: ConntrackEndpointCount[] = [];
  for (const svc of services) {
    for (const ep of svc.endpoints) {
      endpointCounts.push({ namespace: svc.namespace, name: svc.name, endpoint: ep, entries: counts.get(endpointKey(ep)) ?? 0 });
    }
  }
  return { matches, endpointCounts };
}
