/**
 * Classifies conntrack entries against Services into typed columns: one Service index
 * and one status code per entry, no object per entry (a million entries in a fraction of
 * a second). The rule is the one of `classifyConntrack` (src/analysis/conntrack-nat.ts):
 * the original destination matched against Service VIPs, then against NodePorts when it
 * is a node address; the reply source against the Service's current endpoints.
 */
import { serviceProtocolOf, type ServiceFrontends } from './conntrack-nat.js';
import { canonicalIp, type ConntrackEntry } from '../model/conntrack.js';

/** How an entry relates to the Services (see `ConntrackServiceMatch` in conntrack-nat.ts). */
export type ConntrackStatus = 'ok' | 'stale' | 'no-service';

/** Why a stale entry is stale: its endpoint is gone, or it was never translated (made while the Service had no endpoints). */
export type ConntrackStaleReason = 'endpoint-gone' | 'not-translated';

/** Status codes of {@link ConntrackClassificationColumns.codeOf} (low two bits), plus {@link CODE_VIA_NODEPORT}. */
export const CODE_NO_SERVICE = 0;
/** Answered by a current endpoint. */
export const CODE_OK = 1;
/** Stale: answered by something that is no current endpoint. */
export const CODE_STALE_GONE = 2;
/** Stale: not translated at all. */
export const CODE_STALE_UNTRANSLATED = 3;
/** Bit set when the Service was matched by a NodePort on a node address (clear: by VIP). */
export const CODE_VIA_NODEPORT = 4;
/** Bit set (with {@link CODE_OK}) when an untranslated entry's destination is a current endpoint of the Service (Cilium socket LB, or a Pod dialled directly). */
export const CODE_VIA_ENDPOINT = 8;

/**
 * The classification of every entry, one slot per entry in input order:
 * `serviceOf[i]` is the index of the Service in the `services` given (-1: none),
 * `codeOf[i]` a status code (`CODE_*`). `staleCount` counts the stale entries.
 */
export interface ConntrackClassificationColumns {
  readonly serviceOf: Int32Array;
  readonly codeOf: Uint8Array;
  readonly staleCount: number;
}

const PROTO_CODE: Readonly<Record<string, number>> = { TCP: 1, UDP: 2, SCTP: 3 };

function portKey(port: number | undefined, protocol: number): number {
  return (port ?? 0) * 4 + protocol;
}

/**
 * Classifies `entries` like `classifyConntrack(entries, services, nodeAddresses)` (same
 * statuses, same Service, same tie rule: the first Service in `services` order wins),
 * into typed columns: no allocation per entry, so a million entries take a fraction of a
 * second. Addresses in `services` and `nodeAddresses` may be in any IPv6 spelling
 * (entries hold canonical text). Never throws.
 */
export function classifyConntrackColumns(
  entries: readonly ConntrackEntry[],
  services: readonly ServiceFrontends[],
  nodeAddresses: readonly string[],
): ConntrackClassificationColumns {
  const canon = (ip: string) => canonicalIp(ip) ?? ip;
  // VIP address → (port, protocol) → service; NodePort (port, protocol) → service.
  const byVip = new Map<string, Map<number, number>>();
  const byNodePort = new Map<number, number>();
  // Endpoint address → (port, protocol) → service: untranslated flows straight to an endpoint.
  const byEndpoint = new Map<string, Map<number, number>>();
  // Per service: endpoint address → set of (port, protocol).
  const endpointsOf: Map<string, Set<number>>[] = [];
  services.forEach((svc, s) => {
    for (const v of svc.vips) {
      const ip = canon(v.ip);
      const ports = byVip.get(ip) ?? new Map<number, number>();
      byVip.set(ip, ports);
      const k = portKey(v.port, PROTO_CODE[v.protocol] ?? 0);
      if (!ports.has(k)) ports.set(k, s);
    }
    for (const np of svc.nodePorts) {
      const k = portKey(np.port, PROTO_CODE[np.protocol] ?? 0);
      if (!byNodePort.has(k)) byNodePort.set(k, s);
    }
    const eps = new Map<string, Set<number>>();
    for (const ep of svc.endpoints) {
      const ip = canon(ep.ip);
      const set = eps.get(ip) ?? new Set<number>();
      eps.set(ip, set);
      const k = portKey(ep.port, PROTO_CODE[ep.protocol] ?? 0);
      set.add(k);
      const ports = byEndpoint.get(ip) ?? new Map<number, number>();
      byEndpoint.set(ip, ports);
      if (!ports.has(k)) ports.set(k, s);
    }
    endpointsOf.push(eps);
  });
  const nodeSet = new Set(nodeAddresses.map(canon));

  const n = entries.length;
  const serviceOf = new Int32Array(n).fill(-1);
  const codeOf = new Uint8Array(n);
  let staleCount = 0;
  for (let i = 0; i < n; i++) {
    const e = entries[i]!;
    const protocol = serviceProtocolOf(e.proto);
    if (protocol === undefined) continue;
    const pc = PROTO_CODE[protocol]!;
    const { orig, reply } = e;
    let via = 0;
    let s = byVip.get(orig.dst)?.get(portKey(orig.dport, pc));
    if (s === undefined && nodeSet.has(orig.dst)) {
      s = byNodePort.get(portKey(orig.dport, pc));
      via = CODE_VIA_NODEPORT;
    }
    const translated = reply.src !== orig.dst || reply.sport !== orig.dport;
    if (s === undefined && !translated) {
      const direct = byEndpoint.get(orig.dst)?.get(portKey(orig.dport, pc));
      if (direct !== undefined) {
        serviceOf[i] = direct;
        codeOf[i] = CODE_OK | CODE_VIA_ENDPOINT;
      }
      continue;
    }
    if (s === undefined) continue;
    serviceOf[i] = s;
    let status: number;
    if (!translated) status = CODE_STALE_UNTRANSLATED;
    else if (endpointsOf[s]!.get(reply.src)?.has(portKey(reply.sport, pc))) status = CODE_OK;
    else status = CODE_STALE_GONE;
    if (status !== CODE_OK) staleCount++;
    codeOf[i] = status | via;
  }
  return { serviceOf, codeOf, staleCount };
}
