/**
 * The inverse of `assembleLbTable`: an {@link LbTable} back to the entries of Cilium's
 * current maps (`cilium_lb{4,6}_services_v2` with `lb{4,6}_key`/`lb{4,6}_service`,
 * `cilium_lb{4,6}_backends_v3`, `cilium_lb{4,6}_reverse_nat`), byte for byte as the agent
 * writes them (see `bpftool-lb-layouts.ts` for the byte order of each field). Used by the
 * node lab to fill real maps and by tests as the formatter of the map model.
 */
import { BugError } from '../errors.js';
import type { LbService, LbTable } from '../model/cilium.js';
import { algorithmNumber, backendStateFlags, CILIUM_LB_MAPS, formatFrontend, protocolNumber } from '../model/cilium.js';
import type { HostByteOrder } from './bpftool-lb-layouts.js';
import { encodeBackendKey, encodeBackendValue, encodeRevNatKey, encodeRevNatValue, encodeServiceKey, encodeServiceValue, unionFromL7Port } from './bpftool-lb-layouts.js';
import { ipBytes } from './cilium-addr.js';

/** One map's worth of entries: full map name, key/value sizes in bytes, entries in table order. */
export interface EncodedLbMap {
  readonly name: string;
  readonly keySize: number;
  readonly valueSize: number;
  readonly entries: readonly { readonly key: Uint8Array; readonly value: Uint8Array }[];
}

const need = <T>(v: T | null | undefined, what: string): T => {
  if (v === null || v === undefined) throw new BugError(`cannot encode LB table: ${what} is unknown`);
  return v;
};

function bytesOf(ip: string): number[] {
  return need(ipBytes(ip), `address ${ip}`);
}

function serviceEntries(svc: LbService, order: HostByteOrder) {
  const where = formatFrontend(svc.frontend);
  const ip = bytesOf(svc.frontend.ip);
  const proto = need(protocolNumber(svc.frontend.protocol ?? 'ANY'), `protocol of ${where}`);
  const id = need(svc.id, `rev-NAT id of ${where}`);
  const flags = need(svc.flags, `flags of ${where}`);
  const scope = svc.frontend.scope === 'internal' ? 1 : 0;
  const key = (slot: number) => encodeServiceKey({ ip, port: svc.frontend.port, slot, proto, scope }, order);
  const union =
    svc.l7ProxyPort !== null
      ? unionFromL7Port(svc.l7ProxyPort, order)
      : ((algorithmNumber(svc.algorithm ?? 'undef') << 24) | (svc.affinityTimeout ?? 0)) >>> 0;
  const master = { key: key(0), value: encodeServiceValue({ union, count: need(svc.count, `count of ${where}`), revNatId: id, flags, qcount: svc.qcount ?? 0 }, order) };
  const slots = svc.slots.map((s) => ({
    key: key(need(s.slot, `slot number in ${where}`)),
    value: encodeServiceValue({ union: need(s.backendId ?? s.backend?.id, `backend id in ${where}`), count: 0, revNatId: id, flags: s.flags ?? flags, qcount: 0 }, order),
  }));
  return [master, ...slots];
}

/**
 * Encodes `table` into the six current maps (IPv4 and IPv6 services, backends_v3, reverse
 * NAT), empty maps included. Throws `BugError` when the table lacks what the maps need
 * (rev-NAT ids, flags, counts, slot numbers, backend ids — tables parsed from listings do).
 */
export function encodeLbTable(table: LbTable, order: HostByteOrder = 'little'): EncodedLbMap[] {
  const v6 = (ip: string) => ip.includes(':');
  const services = (fam6: boolean) => table.services.filter((s) => v6(s.frontend.ip) === fam6).flatMap((s) => serviceEntries(s, order));
  const backends = (fam6: boolean) =>
    table.backends
      .filter((b) => v6(b.ip) === fam6)
      .map((b) => ({
        key: encodeBackendKey(need(b.id, `id of backend ${b.ip}`), order),
        value: encodeBackendValue(
          { ip: bytesOf(b.ip), port: b.port, proto: need(protocolNumber(b.protocol ?? 'ANY'), `protocol of backend ${b.id}`), stateFlags: backendStateFlags(b.state ?? 'active'), clusterId: b.clusterId ?? 0, zone: typeof b.zone === 'number' ? b.zone : 0 },
          order,
        ),
      }));
  const revNats = (fam6: boolean) => table.revNats.filter((r) => v6(r.ip) === fam6).map((r) => ({ key: encodeRevNatKey(r.id), value: encodeRevNatValue({ ip: bytesOf(r.ip), port: r.port }) }));
  return [
    { name: CILIUM_LB_MAPS.services4, keySize: 12, valueSize: 12, entries: services(false) },
    { name: CILIUM_LB_MAPS.backends4, keySize: 4, valueSize: 12, entries: backends(false) },
    { name: CILIUM_LB_MAPS.revNat4, keySize: 2, valueSize: 6, entries: revNats(false) },
    { name: CILIUM_LB_MAPS.services6, keySize: 24, valueSize: 12, entries: services(true) },
    { name: CILIUM_LB_MAPS.backends6, keySize: 4, valueSize: 24, entries: backends(true) },
    { name: CILIUM_LB_MAPS.revNat6, keySize: 2, valueSize: 18, entries: revNats(true) },
  ];
}
