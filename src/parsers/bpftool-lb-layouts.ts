/**
 * Byte layouts of Cilium's LB map keys and values, per Cilium era, with decoders (bytes →
 * fields) and encoders for the current layouts (fields → bytes, used by the node lab).
 *
 * Sources: cilium/cilium `bpf/lib/lb.h` (newest), `bpf/lib/common.h` @ 00155816 (v1.13–1.15)
 * and the v1.5-era common.h (see shared/corpus/cilium/lb-bpf-struct-versions.txt), plus the
 * Go mirrors in `pkg/loadbalancer/maps/types.go` whose `ToNetwork()` say which fields are
 * stored in network byte order:
 *
 * - network order (big-endian): addresses, `dport`/`port`, and every rev-NAT index —
 *   `lb{4,6}_service.rev_nat_index`, the reverse-NAT map key, the Maglev outer key, and
 *   `rev_nat_id` in the affinity and source-range keys (Go: "For some reasons rev_nat_index
 *   is stored in network byte order in the SVC BPF maps");
 * - host order: `backend_slot`, `backend_id` (key and union), `count`, `qcount`,
 *   `cluster_id`, the `affinity_timeout` union (LB algorithm in the top 8 bits), LPM prefix
 *   length. `l7_lb_proxy_port` is the host u32 `htons(port)` (Go `SetL7LBProxyPort`).
 *
 * Host order is little-endian on x86-64 and arm64 (the default here).
 */
import { formatIPv6 } from './cilium-addr.js';

/** Byte order of host-order fields: the node's CPU (`little` on x86-64/arm64). */
export type HostByteOrder = 'little' | 'big';

/** What a map holds. */
export type LbMapKind = 'services' | 'backends' | 'revnat' | 'maglev-outer' | 'maglev-inner' | 'affinity' | 'affinity-match' | 'source-range';

/** A decoded services-map entry (`lb{4,6}_key` → `lb{4,6}_service`). `qcount` is null in eras without it. */
export interface ServiceEntry {
  readonly kind: 'services';
  readonly family: 4 | 6;
  readonly ip: string;
  readonly port: number;
  readonly proto: number;
  readonly scope: number;
  readonly slot: number;
  /** The value's first u32: backend ID on slots ≥1; on slot 0 LB algorithm << 24 | affinity timeout (s), or the L7 proxy port. */
  readonly union: number;
  /** `l7_lb_proxy_port` reading of the union (Go `GetL7LBProxyPort`). */
  readonly l7ProxyPort: number;
  readonly count: number;
  readonly qcount: number | null;
  readonly revNatId: number;
  /** `flags | flags2 << 8` (Go `ServiceFlags`); null in the v1.5 packed era (no flags). */
  readonly flags: number | null;
}

/** A decoded backend (`__u32`/`__u16` id → `lb{4,6}_backend`). `clusterId`/`zone` null before backends_v3. */
export interface BackendEntry {
  readonly kind: 'backends';
  readonly family: 4 | 6;
  readonly id: number;
  readonly ip: string;
  readonly port: number;
  readonly proto: number;
  /** `flags`: `BE_STATE_*` (pad, always 0, before backends_v2). */
  readonly stateFlags: number;
  readonly clusterId: number | null;
  readonly zone: number | null;
}

/** A reverse-NAT entry (`__u16` rev-NAT index → `lb{4,6}_reverse_nat`). */
export interface RevNatEntry {
  readonly kind: 'revnat';
  readonly family: 4 | 6;
  readonly id: number;
  readonly ip: string;
  readonly port: number;
}

/** Maglev outer map: rev-NAT index → inner map (bpftool shows the inner map's id). */
export interface MaglevOuterEntry {
  readonly kind: 'maglev-outer';
  readonly family: 4 | 6;
  readonly revNatId: number;
  readonly innerMapId: number;
}

/** Maglev inner map (`cilium_maglev_inner`): the lookup table of backend IDs (u32 each). */
export interface MaglevInnerEntry {
  readonly kind: 'maglev-inner';
  readonly backendIds: readonly number[];
}

/** `cilium_lb_affinity_match`: which backends belong to which rev-NAT id (value unused). */
export interface AffinityMatchEntry {
  readonly kind: 'affinity-match';
  readonly backendId: number;
  readonly revNatId: number;
}

/**
 * `cilium_lb{4,6}_affinity`: client → backend. `client` is the IP, or `cookie:N` when
 * `netns_cookie` is set (socket LB keys by network-namespace cookie). `lastUsed` is in the
 * agent's BPF clock (`bpf_mono_now()`: ktime seconds or jiffies).
 */
export interface AffinityEntry {
  readonly kind: 'affinity';
  readonly family: 4 | 6;
  readonly client: string;
  readonly revNatId: number;
  readonly lastUsed: bigint;
  readonly backendId: number;
}

/** `cilium_lb{4,6}_source_range` (LPM trie): allowed/denied source CIDR per rev-NAT id. */
export interface SourceRangeEntry {
  readonly kind: 'source-range';
  readonly family: 4 | 6;
  readonly revNatId: number;
  readonly cidr: string;
}

/** Any decoded LB map entry. */
export type DecodedLbEntry =
  | ServiceEntry
  | BackendEntry
  | RevNatEntry
  | MaglevOuterEntry
  | MaglevInnerEntry
  | AffinityMatchEntry
  | AffinityEntry
  | SourceRangeEntry;

/**
 * One known layout: which map names (full, as pinned) it applies to, key and value sizes in
 * bytes, the C structs and the Cilium era. `decode` returns the entry or a reason string.
 */
export interface LbMapLayout {
  readonly kind: LbMapKind;
  readonly family: 4 | 6 | null;
  readonly maps: readonly string[];
  readonly keySize: number;
  /** Exact value size, or `'multiple-of-4'` for Maglev inner tables. */
  readonly valueSize: number | 'multiple-of-4';
  readonly structs: string;
  readonly era: string;
  decode(key: Uint8Array, value: Uint8Array, order: HostByteOrder): DecodedLbEntry | string;
}

/** Go `GetL7LBProxyPort`: `ntohs(uint16(union))` — the port sits in the union's low u16 in network order. */
export function l7PortFromUnion(union: number, order: HostByteOrder): number {
  const low = union & 0xffff;
  return order === 'little' ? ((low & 0xff) << 8) | (low >> 8) : low;
}

/** Go `SetL7LBProxyPort`: `uint32(htons(port))`. */
export function unionFromL7Port(port: number, order: HostByteOrder): number {
  return order === 'little' ? ((port & 0xff) << 8) | (port >> 8) : port;
}

const view = (b: Uint8Array) => new DataView(b.buffer, b.byteOffset, b.byteLength);
// What DataView's getUint16/getUint32 read at `o` (`le`: little-endian), without a DataView per entry
// (10^5 entries a map): the hot decoders below; the layouts' sizes are checked before any decode.
const u16be = (b: Uint8Array, o: number): number => (b[o]! << 8) | b[o + 1]!;
const u16 = (b: Uint8Array, o: number, le: boolean): number => (le ? b[o]! | (b[o + 1]! << 8) : (b[o]! << 8) | b[o + 1]!);
const u32 = (b: Uint8Array, o: number, le: boolean): number => (le ? b[o]! | (b[o + 1]! << 8) | (b[o + 2]! << 16) | (b[o + 3]! << 24) : (b[o]! << 24) | (b[o + 1]! << 16) | (b[o + 2]! << 8) | b[o + 3]!) >>> 0;
// formatIPv4's text, read in place for IPv4.
const ip = (b: Uint8Array, off: number, family: 4 | 6) => (family === 4 ? `${b[off]}.${b[off + 1]}.${b[off + 2]}.${b[off + 3]}` : formatIPv6(b.subarray(off, off + 16)));
const addrLen = (family: 4 | 6) => (family === 4 ? 4 : 16);

function serviceLayout(family: 4 | 6, era: 'current' | 'packed'): LbMapLayout {
  const a = addrLen(family);
  const packed = era === 'packed';
  return {
    kind: 'services',
    family,
    maps: [`cilium_lb${family}_services_v2`],
    keySize: packed ? a + 6 : a + 8,
    valueSize: packed ? 8 : 12,
    structs: packed ? `lb${family}_key_v2 + lb${family}_service_v2 (packed)` : `lb${family}_key + lb${family}_service`,
    era: packed ? 'Cilium ~1.5 (backend_id u16, no flags)' : 'Cilium 1.6+ (flags2 1.8+, qcount 1.16+; pad reads as qcount 0 before)',
    decode(key, value, order) {
      const le = order === 'little';
      // One literal per era (not a spread of a shared base): tables hold 10^5 of these.
      if (packed) {
        const k = view(key);
        const v = view(value);
        // lb4_service_v2 (packed): count u16, backend_id u16, rev_nat_index u16, weight u16
        return {
          kind: 'services',
          family,
          ip: ip(key, 0, family),
          port: k.getUint16(a, false),
          slot: k.getUint16(a + 2, le),
          proto: k.getUint8(a + 4),
          scope: 0,
          union: v.getUint16(2, le),
          l7ProxyPort: 0,
          count: v.getUint16(0, le),
          qcount: null,
          revNatId: v.getUint16(4, false),
          flags: null,
        };
      }
      return {
        kind: 'services',
        family,
        ip: ip(key, 0, family),
        port: u16be(key, a),
        slot: u16(key, a + 2, le),
        proto: key[a + 4]!,
        scope: key[a + 5]!,
        union: u32(value, 0, le),
        l7ProxyPort: l7PortFromUnion(u32(value, 0, le), order),
        count: u16(value, 4, le),
        revNatId: u16be(value, 6),
        flags: value[8]! | (value[9]! << 8),
        qcount: u16(value, 10, le),
      };
    },
  };
}

function backendLayout(family: 4 | 6, version: 1 | 2 | 3): LbMapLayout {
  const a = addrLen(family);
  const suffix = version === 1 ? '' : `_v${version}`;
  return {
    kind: 'backends',
    family,
    maps: [`cilium_lb${family}_backends${suffix}`],
    keySize: version === 1 ? 2 : 4,
    valueSize: version === 3 ? a + 8 : a + 4,
    structs: `__u${version === 1 ? 16 : 32} backend_id → lb${family}_backend`,
    era: version === 1 ? 'Cilium ≤1.10' : version === 2 ? 'Cilium 1.11–1.12' : 'Cilium 1.13+ (cluster_id u8 + pad ≤1.15, u16 + zone after; same bytes for ids < 256)',
    decode(key, value, order) {
      const le = order === 'little';
      return {
        kind: 'backends',
        family,
        id: version === 1 ? u16(key, 0, le) : u32(key, 0, le),
        ip: ip(value, 0, family),
        port: u16be(value, a),
        proto: value[a + 2]!,
        stateFlags: value[a + 3]!,
        clusterId: version === 3 ? u16(value, a + 4, le) : null,
        zone: version === 3 ? value[a + 6]! : null,
      };
    },
  };
}

function revNatLayout(family: 4 | 6): LbMapLayout {
  const a = addrLen(family);
  return {
    kind: 'revnat',
    family,
    maps: [`cilium_lb${family}_reverse_nat`],
    keySize: 2,
    valueSize: a + 2,
    structs: `__be16 rev_nat_index → lb${family}_reverse_nat (packed)`,
    era: 'all Cilium versions',
    decode: (key, value) => ({ kind: 'revnat', family, id: u16be(key, 0), ip: ip(value, 0, family), port: u16be(value, a) }),
  };
}

function maglevOuterLayout(family: 4 | 6): LbMapLayout {
  return {
    kind: 'maglev-outer',
    family,
    maps: [`cilium_lb${family}_maglev`],
    keySize: 2,
    valueSize: 4,
    structs: '__be16 rev_nat_index → inner map',
    era: 'Cilium 1.9+',
    decode: (key, value, order) => ({ kind: 'maglev-outer', family, revNatId: view(key).getUint16(0, false), innerMapId: view(value).getUint32(0, order === 'little') }),
  };
}

const maglevInnerLayout: LbMapLayout = {
  kind: 'maglev-inner',
  family: null,
  maps: ['cilium_maglev_inner'],
  keySize: 4,
  valueSize: 'multiple-of-4',
  structs: '__u32 0 → __u32 backend_ids[LUT size]',
  era: 'Cilium 1.9+ (u16 ids before backend IDs became u32 in 1.11 are not decoded)',
  decode(_key, value, order) {
    const v = view(value);
    const ids: number[] = [];
    for (let off = 0; off + 4 <= value.length; off += 4) ids.push(v.getUint32(off, order === 'little'));
    return { kind: 'maglev-inner', backendIds: ids };
  },
};

const affinityMatchLayout: LbMapLayout = {
  kind: 'affinity-match',
  family: null,
  maps: ['cilium_lb_affinity_match'],
  keySize: 8,
  valueSize: 1,
  structs: 'lb_affinity_match {backend_id u32, rev_nat_id be16, pad} → __u8',
  era: 'Cilium 1.8+',
  decode: (key, _value, order) => ({ kind: 'affinity-match', backendId: view(key).getUint32(0, order === 'little'), revNatId: view(key).getUint16(4, false) }),
};

function affinityLayout(family: 4 | 6): LbMapLayout {
  const a = family === 4 ? 8 : 16; // v4: union {__be32 client_ip; __net_cookie client_cookie}
  return {
    kind: 'affinity',
    family,
    maps: [`cilium_lb${family}_affinity`],
    keySize: a + 8,
    valueSize: 16,
    structs: `lb${family}_affinity_key → lb_affinity_val`,
    era: 'Cilium 1.8+',
    decode(key, value, order) {
      const k = view(key);
      const v = view(value);
      const le = order === 'little';
      const cookie = k.getUint8(a + 2) !== 0;
      const client = cookie ? `cookie:${k.getBigUint64(0, le)}` : ip(key, 0, family);
      return { kind: 'affinity', family, client, revNatId: k.getUint16(a, false), lastUsed: v.getBigUint64(0, le), backendId: v.getUint32(8, le) };
    },
  };
}

function sourceRangeLayout(family: 4 | 6): LbMapLayout {
  const a = addrLen(family);
  return {
    kind: 'source-range',
    family,
    maps: [`cilium_lb${family}_source_range`],
    keySize: 8 + a,
    valueSize: 1,
    structs: `lb${family}_src_range_key {lpm prefixlen u32, rev_nat_id be16, pad, addr} → __u8`,
    era: 'Cilium 1.8+',
    decode(key, _value, order) {
      const bits = view(key).getUint32(0, order === 'little') - 32; // prefixlen counts rev_nat_id + pad
      if (bits < 0 || bits > a * 8) return `LPM prefix length ${bits + 32} out of range`;
      return { kind: 'source-range', family, revNatId: view(key).getUint16(4, false), cidr: `${ip(key, 8, family)}/${bits}` };
    },
  };
}

/** Every layout nodescope knows, newest first within each map. */
export const LB_MAP_LAYOUTS: readonly LbMapLayout[] = ([4, 6] as const).flatMap((f) => [
  serviceLayout(f, 'current'),
  serviceLayout(f, 'packed'),
  backendLayout(f, 3),
  backendLayout(f, 2),
  backendLayout(f, 1),
  revNatLayout(f),
  maglevOuterLayout(f),
  affinityLayout(f),
  sourceRangeLayout(f),
]).concat([maglevInnerLayout, affinityMatchLayout]);

/** Encodes the current `lb{4,6}_key` (12 / 24 bytes). `ip` is 4 or 16 bytes. */
export function encodeServiceKey(k: { ip: number[]; port: number; slot: number; proto: number; scope: number }, order: HostByteOrder = 'little'): Uint8Array {
  const a = k.ip.length;
  const out = new Uint8Array(a + 8);
  const v = view(out);
  out.set(k.ip, 0);
  v.setUint16(a, k.port, false);
  v.setUint16(a + 2, k.slot, order === 'little');
  v.setUint8(a + 4, k.proto);
  v.setUint8(a + 5, k.scope);
  return out;
}

/** Encodes the current `lb{4,6}_service` (12 bytes). `flags` is the u16 `flags | flags2 << 8`. */
export function encodeServiceValue(s: { union: number; count: number; revNatId: number; flags: number; qcount: number }, order: HostByteOrder = 'little'): Uint8Array {
  const out = new Uint8Array(12);
  const v = view(out);
  const le = order === 'little';
  v.setUint32(0, s.union >>> 0, le);
  v.setUint16(4, s.count, le);
  v.setUint16(6, s.revNatId, false);
  v.setUint8(8, s.flags & 0xff);
  v.setUint8(9, (s.flags >> 8) & 0xff);
  v.setUint16(10, s.qcount, le);
  return out;
}

/** Encodes a backends_v2/v3 key (`__u32` backend id). */
export function encodeBackendKey(id: number, order: HostByteOrder = 'little'): Uint8Array {
  const out = new Uint8Array(4);
  view(out).setUint32(0, id, order === 'little');
  return out;
}

/** Encodes a backends_v3 `lb{4,6}_backend` (12 / 24 bytes). */
export function encodeBackendValue(b: { ip: number[]; port: number; proto: number; stateFlags: number; clusterId: number; zone: number }, order: HostByteOrder = 'little'): Uint8Array {
  const a = b.ip.length;
  const out = new Uint8Array(a + 8);
  const v = view(out);
  out.set(b.ip, 0);
  v.setUint16(a, b.port, false);
  v.setUint8(a + 2, b.proto);
  v.setUint8(a + 3, b.stateFlags);
  v.setUint16(a + 4, b.clusterId, order === 'little');
  v.setUint8(a + 6, b.zone);
  return out;
}

/** Encodes a reverse-NAT key (`__be16`). */
export function encodeRevNatKey(id: number): Uint8Array {
  const out = new Uint8Array(2);
  view(out).setUint16(0, id, false);
  return out;
}

/** Encodes `lb{4,6}_reverse_nat` (6 / 18 bytes, packed). */
export function encodeRevNatValue(r: { ip: number[]; port: number }): Uint8Array {
  const out = new Uint8Array(r.ip.length + 2);
  out.set(r.ip, 0);
  view(out).setUint16(r.ip.length, r.port, false);
  return out;
}
