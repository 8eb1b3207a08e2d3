/**
 * One shape for "what a frontend does", shared by the expectation (what kube-proxy or Cilium
 * would program from the API objects) and the readers of the node's dataplane (what it does
 * program), so one comparer serves iptables, nftables and Cilium. Pure data.
 */
import type { Evidence } from './types.js';

/** How a frontend is reached: ClusterIP, an externalIP, a LoadBalancer ingress IP, or a NodePort. */
export type FrontendKind = 'clusterIP' | 'externalIP' | 'loadBalancer' | 'nodePort';

/**
 * What a frontend does with a new connection from an ordinary client (a Pod for a ClusterIP,
 * an outside address for the external frontends): DNAT to `endpoints`, `reject` (kube-proxy's
 * "has no endpoints" REJECT), or `drop` (its "has no local endpoints" DROP for a Local policy).
 */
export type FrontendOutcome = 'endpoints' | 'reject' | 'drop';

/** One DNAT destination of a frontend. `weight`: the share of new connections it gets (0–1), null when not known. */
export interface ProgrammedEndpoint {
  readonly ip: string;
  readonly port: number;
  /** Upper-case protocol of the DNAT rule (`TCP`), or null when the rule does not restrict it. */
  readonly protocol: string | null;
  readonly weight: number | null;
  /** Cilium backend state (`active`, `terminating`, `quarantined`, `maintenance`), else null. */
  readonly state?: string | null;
  readonly evidence: readonly Evidence[];
}

/**
 * One frontend as programmed (or as it should be). `service` is `ns/name` when the rule,
 * element or LB entry names its Service (kube-proxy comments, chain names, Cilium's
 * service name), else null. `portName`: the Service port name when known. `affinitySeconds`:
 * ClientIP affinity timeout, null for none. `problems`: what the reader did not understand on
 * the way (the comparison is then `unknown` for this frontend).
 */
export interface ProgrammedFrontend {
  readonly kind: FrontendKind;
  /** The frontend address; `*` for a NodePort on every node address. */
  readonly ip: string;
  readonly port: number;
  readonly protocol: string;
  readonly service: string | null;
  readonly portName: string | null;
  readonly outcome: FrontendOutcome;
  readonly endpoints: readonly ProgrammedEndpoint[];
  readonly affinitySeconds: number | null;
  readonly evidence: readonly Evidence[];
  readonly problems: readonly string[];
  /** Cilium only: `internal` for the second, internal-scope entry of a two-scope Service (printed `/i`). */
  readonly scope?: 'internal';
  /** Cilium only: the frontend's `SVC_FLAG_*` bits when the source carries them. */
  readonly flags?: number | null;
}

/**
 * `ip:port/PROTO` (`*:port/PROTO` for a NodePort on every IPv4 node address, `[::]:port/PROTO`
 * on every IPv6 one), `/i` appended for Cilium's internal scope: the key frontends are matched by.
 */
export function frontendKey(f: { readonly ip: string; readonly port: number; readonly protocol: string; readonly scope?: 'internal' }): string {
  const ip = f.ip.includes(':') ? `[${f.ip}]` : f.ip;
  return `${ip}:${f.port}/${f.protocol.toUpperCase()}${f.scope === 'internal' ? '/i' : ''}`;
}

/** `ip:port` of an endpoint ( `[v6]:port` for IPv6), as kube-proxy's `Endpoint.String()`. */
export function endpointKey(e: { readonly ip: string; readonly port: number }): string {
  return e.ip.includes(':') ? `[${e.ip}]:${e.port}` : `${e.ip}:${e.port}`;
}

/** The frontends of a dataplane, by {@link frontendKey}; later duplicates are kept in `duplicates`. */
export interface FrontendIndex {
  readonly byKey: ReadonlyMap<string, ProgrammedFrontend>;
  readonly duplicates: readonly ProgrammedFrontend[];
}

/** Indexes frontends by key (first wins, like the first matching KUBE-SERVICES rule). */
export function indexFrontends(frontends: Iterable<ProgrammedFrontend>): FrontendIndex {
  const byKey = new Map<string, ProgrammedFrontend>();
  const duplicates: ProgrammedFrontend[] = [];
  for (const f of frontends) {
    const k = frontendKey(f);
    if (byKey.has(k)) duplicates.push(f);
    else byKey.set(k, f);
  }
  return { byKey, duplicates };
}
