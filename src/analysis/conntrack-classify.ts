/**
 * Classifies conntrack entries against Services into typed columns: one Service index
 * and one status code per entry, no object per entry (a million entries in a fraction of
 * a second). The rule is the one of `classifyConntrack` (src/analysis/conntrack-nat.ts):
 * the original destination matched against Service VIPs, then against NodePorts when it
 * is a node address; the reply source against the Service's current endpoints.
 */
import type { ServiceFrontends } from './conntrack-nat.js';
import { canonicalIp, type ConntrackEntry } from '../model/conntrack.js';
import { entryRows, type ConntrackRows } from '../model/conntrack-ids.js';

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

/**
 * `PROTO_CODE[serviceProtocolOf(proto)]` of an entry's protocol, 0 when no Service protocol
 * (`serviceProtocolOf` undefined): compared, not looked up by key (a million entries).
 */
function entryProtoCode(proto: string): number {
  return proto === 'tcp' ? 1 : proto === 'udp' ? 2 : proto === 'sctp' ? 3 : 0;
}

function portKey(port: number | undefined, protocol: number): number {
  return (port ?? 0) * 4 + protocol;
}

/**
 * (port key, Service) pairs listed per address id, in typed arrays: `head[id]` the first
 * pair's slot (-1: none), `next[slot]` the one after. An address has a few pairs, so a
 * look-up is one or two integer reads, not a hashed Map per address. `capacity` bounds the
 * pairs added (the slots are allocated once: growing arrays of a quarter million pairs showed).
 */
class PairsByAddress {
  readonly head: Int32Array;
  private readonly next: Int32Array;
  /** Float64: a port key is any number the objects hold (a port past 2^29 would wrap in Int32). */
  private readonly keys: Float64Array;
  private readonly svcs: Int32Array;
  private readonly tail: Int32Array;
  private used = 0;

  constructor(addresses: number, capacity: number) {
    this.head = new Int32Array(addresses).fill(-1);
    this.tail = new Int32Array(addresses).fill(-1);
    this.next = new Int32Array(capacity);
    this.keys = new Float64Array(capacity);
    this.svcs = new Int32Array(capacity);
  }

  /** Appends (key, svc) to address `id`'s list; with `firstWins`, not when `key` is listed already. */
  add(id: number, key: number, svc: number, firstWins: boolean): void {
    if (firstWins && this.serviceOf(id, key) >= 0) return;
    const slot = this.used++;
    this.keys[slot] = key;
    this.svcs[slot] = svc;
    this.next[slot] = -1;
    const last = this.tail[id]!;
    if (last < 0) this.head[id] = slot;
    else this.next[last] = slot;
    this.tail[id] = slot;
  }

  /** The Service of the first pair of `id` with `key`; -1 when none. */
  serviceOf(id: number, key: number): number {
    for (let k = this.head[id]!; k >= 0; k = this.next[k]!) if (this.keys[k] === key) return this.svcs[k]!;
    return -1;
  }

  /** True when `id` has the pair (key, svc). */
  has(id: number, key: number, svc: number): boolean {
    for (let k = this.head[id]!; k >= 0; k = this.next[k]!) if (this.keys[k] === key && this.svcs[k] === svc) return true;
    return false;
  }
}

/**
 * Classifies `entries` like `classifyConntrack(entries, services, nodeAddresses)` (same
 * statuses, same Service, same tie rule: the first Service in `services` order wins),
 * into typed columns: no allocation per entry. Addresses are compared by the table's
 * address ids (src/model/conntrack-ids.ts: the parser's, or made from the text), so each
 * entry costs a few typed-array reads; a Service address no entry holds cannot match and
 * is skipped. Addresses in `services` and `nodeAddresses` may be in any IPv6 spelling
 * (entries hold canonical text). Never throws.
 */
export function classifyConntrackColumns(
  entries: readonly ConntrackEntry[],
  services: readonly ServiceFrontends[],
  nodeAddresses: readonly string[],
): ConntrackClassificationColumns {
  return classifyConntrackRows(entryRows(entries), services, nodeAddresses);
}

/** {@link classifyConntrackColumns} of a table's rows read in place (src/model/conntrack-ids.ts): no object per entry. Never throws. */
export function classifyConntrackRows(
  rows: ConntrackRows,
  services: readonly Pick<ServiceFrontends, 'vips' | 'nodePorts' | 'endpoints'>[],
  nodeAddresses: readonly string[],
): ConntrackClassificationColumns {
  const ids = rows.ids;
  const idOf = (ip: string) => ids.idOf(canonicalIp(ip) ?? ip);
  const addressCount = ids.addresses.length;
  let vipCount = 0;
  let endpointCount = 0;
  for (const svc of services) {
    vipCount += svc.vips.length;
    endpointCount += svc.endpoints.length;
  }
  // VIP address → (port, protocol) → Service; NodePort (port, protocol) → Service.
  const byVip = new PairsByAddress(addressCount, vipCount);
  const byNodePort = new Map<number, number>();
  // Endpoint address → (port, protocol) → first Service (untranslated flows straight to an
  // endpoint), and every (port, protocol, Service) it is an endpoint of.
  const byEndpoint = new PairsByAddress(addressCount, endpointCount);
  const endpointOf = new PairsByAddress(addressCount, endpointCount);
  services.forEach((svc, s) => {
    for (const v of svc.vips) {
      const id = idOf(v.ip);
      if (id >= 0) byVip.add(id, portKey(v.port, PROTO_CODE[v.protocol] ?? 0), s, true);
    }
    for (const np of svc.nodePorts) {
      const k = portKey(np.port, PROTO_CODE[np.protocol] ?? 0);
      if (!byNodePort.has(k)) byNodePort.set(k, s);
    }
    for (const ep of svc.endpoints) {
      const id = idOf(ep.ip);
      if (id < 0) continue;
      const k = portKey(ep.port, PROTO_CODE[ep.protocol] ?? 0);
      byEndpoint.add(id, k, s, true);
      if (!endpointOf.has(id, k, s)) endpointOf.add(id, k, s, false);
    }
  });
  const isNode = new Uint8Array(addressCount);
  for (const a of nodeAddresses) {
    const id = idOf(a);
    if (id >= 0) isNode[id] = 1;
  }

  const { origDst, replySrc } = ids;
  const n = rows.length;
  const serviceOf = new Int32Array(n).fill(-1);
  const codeOf = new Uint8Array(n);
  let staleCount = 0;
  for (let i = 0; i < n; i++) {
    const pc = entryProtoCode(rows.proto(i));
    if (pc === 0) continue;
    const dst = origDst[i]!;
    const src = replySrc[i]!;
    const dport = rows.origDport(i);
    const sport = rows.replySport(i);
    let via = 0;
    let s = byVip.serviceOf(dst, portKey(dport, pc));
    if (s < 0 && isNode[dst] === 1) {
      s = byNodePort.get(portKey(dport, pc)) ?? -1;
      via = CODE_VIA_NODEPORT;
    }
    const translated = src !== dst || sport !== dport;
    if (s < 0 && !translated) {
      const direct = byEndpoint.serviceOf(dst, portKey(dport, pc));
      if (direct >= 0) {
        serviceOf[i] = direct;
        codeOf[i] = CODE_OK | CODE_VIA_ENDPOINT;
      }
      continue;
    }
    if (s < 0) continue;
    serviceOf[i] = s;
    let status: number;
    if (!translated) status = CODE_STALE_UNTRANSLATED;
    else if (endpointOf.has(src, portKey(sport, pc), s)) status = CODE_OK;
    else status = CODE_STALE_GONE;
    if (status !== CODE_OK) staleCount++;
    codeOf[i] = status | via;
  }
  return { serviceOf, codeOf, staleCount };
}
