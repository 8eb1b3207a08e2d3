/**
 * The reference of test/unit/lb-layouts.test.ts: the LB map layouts' decoders as they were
 * before session 12 (src/parsers/bpftool-lb-layouts.ts at f6dc504, verbatim but for imports,
 * the export's name and the encoders left out): every field read through a DataView per
 * entry. The decoders that read the bytes in place must return exactly these entries.
 */
import { formatIPv4, formatIPv6 } from '../../src/parsers/cilium-addr.js';

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
const ip = (b: Uint8Array, off: number, family: 4 | 6) => (family === 4 ? formatIPv4(b.subarray(off, off + 4)) : formatIPv6(b.subarray(off, off + 16)));
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
      const k = view(key);
      const v = view(value);
      const le = order === 'little';
      // One literal per era (not a spread of a shared base): tables hold 10^5 of these.
      if (packed) {
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
        port: k.getUint16(a, false),
        slot: k.getUint16(a + 2, le),
        proto: k.getUint8(a + 4),
        scope: k.getUint8(a + 5),
        union: v.getUint32(0, le),
        l7ProxyPort: l7PortFromUnion(v.getUint32(0, le), order),
        count: v.getUint16(4, le),
        revNatId: v.getUint16(6, false),
        flags: v.getUint8(8) | (v.getUint8(9) << 8),
        qcount: v.getUint16(10, le),
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
      const k = view(key);
      const v = view(value);
      const le = order === 'little';
      return {
        kind: 'backends',
        family,
        id: version === 1 ? k.getUint16(0, le) : k.getUint32(0, le),
        ip: ip(value, 0, family),
        port: v.getUint16(a, false),
        proto: v.getUint8(a + 2),
        stateFlags: v.getUint8(a + 3),
        clusterId: version === 3 ? v.getUint16(a + 4, le) : null,
        zone: version === 3 ? v.getUint8(a + 6) : null,
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
    decode: (key, value) => ({ kind: 'revnat', family, id: view(key).getUint16(0, false), ip: ip(value, 0, family), port: view(value).getUint16(a, false) }),
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
export const LB_MAP_LAYOUTS_REFERENCE: readonly LbMapLayout[] = ([4, 6] as const).flatMap((f) => [
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
