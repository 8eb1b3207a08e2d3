/**
 * Test-data builders for the Cilium tests: model objects with overrides, C-struct byte
 * images written field by field from the struct definitions (independent of the encoder
 * under test), and bpftool JSON output around them.
 */
import path from 'node:path';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { LbBackend, LbService, LbSlot, LbTable } from '../../src/model/cilium.js';

/** An active TCP backend `10.244.0.23:8080`, id 1, local cluster, zone 0. */
export function makeBackend(o: Partial<LbBackend> = {}): LbBackend {
  return { id: 1, ip: '10.244.0.23', port: 8080, protocol: 'TCP', state: 'active', weight: null, clusterId: 0, zone: 0, nodeName: null, ...o };
}

/** Slot `slot` pointing at `backend` (its id), slot flags 0. */
export function makeSlot(slot: number, backend: LbBackend | null, o: Partial<LbSlot> = {}): LbSlot {
  return { slot, backendId: backend?.id ?? null, backend, flags: 0, ...o };
}

/** A ClusterIP frontend with complete map fields; `backends` fill slots 1.. in order. */
export function makeService(o: Partial<LbService> = {}, backends: readonly LbBackend[] = []): LbService {
  return {
    frontend: { ip: '10.96.12.34', port: 80, protocol: 'TCP', scope: 'external' },
    id: 1,
    type: 'ClusterIP',
    flags: 0,
    count: backends.length,
    qcount: 0,
    algorithm: 'undef',
    affinityTimeout: 0,
    l7ProxyPort: null,
    name: null,
    slots: backends.map((b, i) => makeSlot(i + 1, b, { flags: o.flags ?? 0 })),
    raw: '',
    ...o,
  };
}

/** A maps-shaped table: the services, their distinct backends, one rev-NAT entry per service. */
export function makeTable(services: readonly LbService[], o: Partial<LbTable> = {}): LbTable {
  const backends = new Map<number, LbBackend>();
  for (const s of services) for (const sl of s.slots) if (sl.backend?.id != null) backends.set(sl.backend.id, sl.backend);
  const revNats = services.map((s) => ({ id: s.id ?? 0, ip: s.frontend.ip, port: s.frontend.port }));
  return { source: 'bpf-maps', services, backends: [...backends.values()], revNats, ...o };
}

/** A little C-struct writer: fields at explicit offsets, host order little-endian unless told. */
export class StructBytes {
  readonly bytes: Uint8Array;
  private readonly dv: DataView;
  constructor(size: number, private readonly hostLittle = true) {
    this.bytes = new Uint8Array(size);
    this.dv = new DataView(this.bytes.buffer);
  }
  addr(off: number, octets: readonly number[]): this {
    this.bytes.set(octets, off);
    return this;
  }
  be16(off: number, v: number): this {
    this.dv.setUint16(off, v, false);
    return this;
  }
  u8(off: number, v: number): this {
    this.dv.setUint8(off, v);
    return this;
  }
  u16(off: number, v: number): this {
    this.dv.setUint16(off, v, this.hostLittle);
    return this;
  }
  u32(off: number, v: number): this {
    this.dv.setUint32(off, v, this.hostLittle);
    return this;
  }
}

/** `struct lb4_key` (lb.h): __be32 address; __be16 dport; __u16 backend_slot; __u8 proto; __u8 scope; __u8 pad[2]. */
export const lb4Key = (addr: number[], dport: number, slot: number, proto: number, scope = 0, little = true) =>
  new StructBytes(12, little).addr(0, addr).be16(4, dport).u16(6, slot).u8(8, proto).u8(9, scope).bytes;

/** `struct lb6_key`: union v6addr address; __be16 dport; __u16 backend_slot; __u8 proto; __u8 scope; __u8 pad[2]. */
export const lb6Key = (addr: number[], dport: number, slot: number, proto: number, scope = 0) =>
  new StructBytes(24).addr(0, addr).be16(16, dport).u16(18, slot).u8(20, proto).u8(21, scope).bytes;

/**
 * `struct lb4_service` / `lb6_service` (12 bytes): union {__u32 backend_id; __u32 affinity_timeout;
 * __u32 l7_lb_proxy_port}; __u16 count; __u16 rev_nat_index (network order, Go `ToNetwork`);
 * __u8 flags; __u8 flags2; __u16 qcount (pad[2] before 1.16).
 */
export const lbService = (v: { union: number; count: number; revNat: number; flags: number; flags2: number; qcount: number }, little = true) =>
  new StructBytes(12, little).u32(0, v.union).u16(4, v.count).be16(6, v.revNat).u8(8, v.flags).u8(9, v.flags2).u16(10, v.qcount).bytes;

/** v1.5 `struct lb4_key_v2` (packed, 10 bytes): address; dport; __u16 slave; __u8 proto; __u8 pad. */
export const lb4KeyV2Packed = (addr: number[], dport: number, slave: number) => new StructBytes(10).addr(0, addr).be16(4, dport).u16(6, slave).bytes;

/** v1.5 `struct lb4_service_v2` (packed, 8 bytes): __u16 count; __u16 backend_id; __u16 rev_nat_index; __u16 weight. */
export const lb4ServiceV2Packed = (count: number, backendId: number, revNat: number) => new StructBytes(8).u16(0, count).u16(2, backendId).be16(4, revNat).u16(6, 0).bytes;

/** `__u32` backend id key (backends_v2/v3). */
export const backendKey = (id: number, little = true) => new StructBytes(4, little).u32(0, id).bytes;

/** backends_v3 newest `struct lb4_backend`: address; __be16 port; __u8 proto; __u8 flags; __u16 cluster_id; __u8 zone; __u8 pad. */
export const lb4BackendV3 = (addr: number[], port: number, proto: number, flags: number, clusterId = 0, zone = 0, little = true) =>
  new StructBytes(12, little).addr(0, addr).be16(4, port).u8(6, proto).u8(7, flags).u16(8, clusterId).u8(10, zone).bytes;

/** backends_v3 of 1.13–1.15 (common.h @ 00155816): ... __u8 flags; __u8 cluster_id; __u8 pad[3]. */
export const lb4BackendV3U8Cluster = (addr: number[], port: number, proto: number, flags: number, clusterId: number) =>
  new StructBytes(12).addr(0, addr).be16(4, port).u8(6, proto).u8(7, flags).u8(8, clusterId).bytes;

/** `struct lb6_backend` newest (24 bytes). */
export const lb6BackendV3 = (addr: number[], port: number, proto: number, flags: number) => new StructBytes(24).addr(0, addr).be16(16, port).u8(18, proto).u8(19, flags).bytes;

/** backends_v2 / v1 `struct lb4_backend` (8 bytes): address; port; proto; flags (pad in v1). */
export const lb4BackendV2 = (addr: number[], port: number, proto: number, flags: number) => new StructBytes(8).addr(0, addr).be16(4, port).u8(6, proto).u8(7, flags).bytes;

/** `__be16` rev-NAT key. */
export const revNatKey = (id: number) => new StructBytes(2).be16(0, id).bytes;
/** `struct lb4_reverse_nat` (packed, 6 bytes). */
export const lb4RevNat = (addr: number[], port: number) => new StructBytes(6).addr(0, addr).be16(4, port).bytes;
/** `struct lb6_reverse_nat` (packed, 18 bytes). */
export const lb6RevNat = (addr: number[], port: number) => new StructBytes(18).addr(0, addr).be16(16, port).bytes;

/** bpftool's spelling of one byte in JSON: `"0x0a"`. */
const jsonByte = (b: number) => `"0x${b.toString(16).padStart(2, '0')}"`;

/**
 * `bpftool -j map dump` text for entries, as bpftool v7 prints it (one line, no spaces);
 * `pretty` mimics `-p`; `formatted` adds a BTF `formatted` object per entry.
 */
export function bpftoolJson(entries: readonly { key: Uint8Array; value: Uint8Array; formatted?: unknown }[], opts: { pretty?: boolean } = {}): string {
  const one = (e: { key: Uint8Array; value: Uint8Array; formatted?: unknown }) => {
    const parts = [`"key":[${[...e.key].map(jsonByte).join(',')}]`, `"value":[${[...e.value].map(jsonByte).join(',')}]`];
    if (e.formatted !== undefined) parts.push(`"formatted":${JSON.stringify(e.formatted)}`);
    return opts.pretty ? `{\n        ${parts.join(',\n        ')}\n    }` : `{${parts.join(',')}}`;
  };
  return opts.pretty ? `[${entries.map(one).join(',')}\n]\n` : `[${entries.map(one).join(',')}]\n`;
}

/** The shared corpus directory (`../shared/corpus` from the package root), or null when absent. */
export function corpusDir(): string | null {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const repoRoot = path.resolve(here, '../..');
  const dir = path.resolve(repoRoot, '../shared/corpus');
  return existsSync(dir) ? dir : null;
}

/** The Cilium corpus files as `[name, text]`, or [] when the corpus is absent. */
export function ciliumCorpus(): [string, string][] {
  const dir = corpusDir();
  if (dir === null || !existsSync(path.join(dir, 'cilium'))) return [];
  return readdirSync(path.join(dir, 'cilium'))
    .sort()
    .map((f) => [f, readFileSync(path.join(dir, 'cilium', f), 'utf8')]);
}
