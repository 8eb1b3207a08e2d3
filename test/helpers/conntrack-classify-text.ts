/**
 * The conntrack classification as it was before the address ids (session 9's
 * src/analysis/conntrack-classify.ts, string-keyed Maps per VIP and endpoint): the
 * reference the id-based one is compared with (test/unit/conntrack-classify-ids.test.ts).
 */
import { serviceProtocolOf, type ServiceFrontends } from '../../src/analysis/conntrack-nat.js';
import {
  CODE_OK,
  CODE_STALE_GONE,
  CODE_STALE_UNTRANSLATED,
  CODE_VIA_ENDPOINT,
  CODE_VIA_NODEPORT,
  type ConntrackClassificationColumns,
} from '../../src/analysis/conntrack-classify.js';
import { canonicalIp, type ConntrackEntry } from '../../src/model/conntrack.js';

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
export function classifyConntrackColumnsByText(
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
