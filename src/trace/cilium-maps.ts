/**
 * Lookups in Cilium's LB maps as the datapath does them (cilium/cilium `bpf/lib/lb.h`:
 * `lb4_lookup_service`, `lb4_select_backend_id`, `lb4_lookup_backend`, `lb4_rev_nat`), over
 * the {@link LbTable} of a snapshot. Each lookup returns the key it built and the value it
 * found, both decoded and as bytes (`key 0a 60 … value 00 …`, bpftool's order).
 *
 * Bytes: a service entry's bytes are the capture's own (`LbService.raw` keeps one
 * `key … value …` line per slot). Backend and reverse-NAT entries are re-encoded from
 * their decoded fields in the current layouts (`cilium_lb{4,6}_backends_v3`,
 * `cilium_lb{4,6}_reverse_nat`, little-endian host), which `bpftool-lb-encode.ts` writes
 * byte for byte as the agent does; tests compare them with the dumps.
 */
import type { LbBackend, LbRevNat, LbService, LbTable } from '../model/cilium.js';
import { CILIUM_LB_MAPS, formatServiceFlags, protocolNumber, SVC_FLAG } from '../model/cilium.js';
import { bytesToHex } from '../parsers/bpftool-map-dump.js';
import { encodeBackendKey, encodeBackendValue, encodeRevNatKey, encodeRevNatValue, encodeServiceKey } from '../parsers/bpftool-lb-layouts.js';
import { ipBytes } from '../parsers/cilium-addr.js';
import { backendStateFlags } from '../model/cilium.js';

/** The map names of one IP family (services, backends, reverse NAT). */
export interface LbMapNames {
  readonly services: string;
  readonly backends: string;
  readonly revNat: string;
}

/** `cilium_lb4_*` for IPv4, `cilium_lb6_*` for IPv6. */
export function lbMapNames(family: 'ipv4' | 'ipv6'): LbMapNames {
  return family === 'ipv4'
    ? { services: CILIUM_LB_MAPS.services4, backends: CILIUM_LB_MAPS.backends4, revNat: CILIUM_LB_MAPS.revNat4 }
    : { services: CILIUM_LB_MAPS.services6, backends: CILIUM_LB_MAPS.backends6, revNat: CILIUM_LB_MAPS.revNat6 };
}

/**
 * A service map key (`struct lb4_key` / `lb6_key`): address, port (host number), backend
 * slot, IP protocol number (0 = ANY), lookup scope (0 external, 1 internal).
 */
export interface ServiceKey {
  readonly ip: string;
  readonly port: number;
  readonly proto: number;
  readonly scope: 0 | 1;
  readonly slot: number;
}

/** `{address 10.96.12.34, dport 80, proto 6 (TCP), scope ext, slot 0}`: a key in lb.h's field names. */
export function serviceKeyText(k: ServiceKey, protoName: string): string {
  return `{address ${k.ip}, dport ${k.port}, proto ${k.proto} (${protoName}), scope ${k.scope === 1 ? 'int' : 'ext'}, backend_slot ${k.slot}}`;
}

/** The key's bytes as bpftool prints them (space-separated hex), or null for an address that is not one. */
export function serviceKeyHex(k: ServiceKey): string | null {
  const ip = ipBytes(k.ip);
  return ip === null ? null : bytesToHex(encodeServiceKey({ ip, port: k.port, slot: k.slot, proto: k.proto, scope: k.scope }));
}

/** The capture's `key … value …` line of `svc` for slot `slot`, null when the source has no bytes. */
export function serviceEntryHex(svc: LbService, k: ServiceKey): string | null {
  const keyHex = serviceKeyHex(k);
  if (keyHex === null) return null;
  return svc.raw.split('\n').find((line) => line.startsWith(`key ${keyHex} value `)) ?? null;
}

function frontendProto(svc: LbService): number | null {
  return svc.frontend.protocol === null ? null : protocolNumber(svc.frontend.protocol);
}

/** A service lookup's outcome: the keys tried in order, and the entry found (slot 0) or null. */
export interface ServiceLookup {
  readonly tried: readonly ServiceKey[];
  readonly key: ServiceKey;
  readonly service: LbService | null;
  /** True when the entry was found only under protocol 0 (ANY: maps written before protocol differentiation). */
  readonly anyProto: boolean;
}

function find(table: LbTable, k: ServiceKey): LbService | null {
  return (
    table.services.find(
      (s) => s.frontend.ip === k.ip && s.frontend.port === k.port && (s.frontend.scope === 'internal' ? 1 : 0) === k.scope && (frontendProto(s) ?? 0) === k.proto,
    ) ?? null
  );
}

/**
 * `lb4_lookup_service(key, scope_switch)`: slot 0 under the external scope; when found,
 * `scope_switch` is set (traffic from inside the cluster) and the service has two scopes
 * (`SVC_FLAG_TWO_SCOPES`), the internal-scope entry instead. A key with the packet's
 * protocol that finds nothing is retried with protocol 0, which maps written without
 * protocol differentiation hold. `proto`: IP protocol number.
 */
export function lookupService(table: LbTable, ip: string, port: number, proto: number, scopeSwitch: boolean): ServiceLookup {
  const tried: ServiceKey[] = [];
  const attempt = (p: number): ServiceLookup | null => {
    const ext: ServiceKey = { ip, port, proto: p, scope: 0, slot: 0 };
    tried.push(ext);
    const svc = find(table, ext);
    if (svc === null) return null;
    if (scopeSwitch && svc.flags !== null && (svc.flags & SVC_FLAG.twoScopes) !== 0) {
      const int: ServiceKey = { ...ext, scope: 1 };
      tried.push(int);
      return { tried, key: int, service: find(table, int), anyProto: p === 0 && proto !== 0 };
    }
    return { tried, key: ext, service: svc, anyProto: p === 0 && proto !== 0 };
  };
  const first = attempt(proto);
  if (first) return first;
  if (proto !== 0) {
    const any = attempt(0);
    if (any) return any;
  }
  return { tried, key: tried[0]!, service: null, anyProto: false };
}

/** The slot-0 value of a service in lb.h's field names: `{count 2, qcount 1, rev_nat_index 1, flags ClusterIP, non-routable}`. */
export function serviceValueText(svc: LbService): string {
  const flags = svc.flags === null ? (svc.type ?? '?') : `0x${svc.flags.toString(16).padStart(4, '0')} (${formatServiceFlags(svc.flags)})`;
  return `{count ${svc.count ?? '?'}, qcount ${svc.qcount ?? '?'}, rev_nat_index ${svc.id ?? '?'}, flags ${flags}${svc.algorithm ? `, algorithm ${svc.algorithm}` : ''}}`;
}

/** `key 03 00 00 00 value 0a f4 …` of a backend entry (backends_v3 layout), null when its id or address is unknown. */
export function backendEntryHex(b: LbBackend): string | null {
  const ip = ipBytes(b.ip);
  const proto = protocolNumber(b.protocol ?? 'ANY');
  if (ip === null || b.id === null || proto === null) return null;
  const value = encodeBackendValue({ ip, port: b.port, proto, stateFlags: backendStateFlags(b.state ?? 'active'), clusterId: b.clusterId ?? 0, zone: typeof b.zone === 'number' ? b.zone : 0 });
  return `key ${bytesToHex(encodeBackendKey(b.id))} value ${bytesToHex(value)}`;
}

/** A backend entry in lb.h's field names: `{address 10.244.0.23, port 8080, proto TCP, flags 0 (active), cluster_id 0, zone 0}`. */
export function backendValueText(b: LbBackend): string {
  const state = b.state ?? 'active';
  return `{address ${b.ip}, port ${b.port}, proto ${b.protocol ?? '?'}, flags ${backendStateFlags(state)} (${state}), cluster_id ${b.clusterId ?? 0}, zone ${b.zone ?? 0}}`;
}

/** `key 00 01 value 0a 60 0c 22 00 50` of a reverse-NAT entry, null when the address is not one. */
export function revNatEntryHex(r: LbRevNat): string | null {
  const ip = ipBytes(r.ip);
  return ip === null ? null : `key ${bytesToHex(encodeRevNatKey(r.id))} value ${bytesToHex(encodeRevNatValue({ ip, port: r.port }))}`;
}

/** The backend with `id` in the backend map, null when the map has none. */
export function lookupBackend(table: LbTable, id: number): LbBackend | null {
  return table.backends.find((b) => b.id === id) ?? null;
}

/** The reverse-NAT entry with `id`, null when the map has none. */
export function lookupRevNat(table: LbTable, id: number): LbRevNat | null {
  return table.revNats.find((r) => r.id === id) ?? null;
}
