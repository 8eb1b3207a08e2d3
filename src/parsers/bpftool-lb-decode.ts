/**
 * Decoding Cilium's LB maps from `bpftool -j map dump pinned <dir>/<map>` and joining
 * them into an {@link LbTable} — the view `cilium-dbg bpf lb list` prints, from the raw bytes.
 *
 * The layout is chosen by map name and key/value size (`LB_MAP_LAYOUTS`). An entry whose
 * sizes match no known layout for that map stays undecoded with the reason; it is never
 * read with a guessed layout. Names may be the full pinned name or the kernel's 15-byte
 * cut (`cilium_lb4_back` is then told apart by sizes).
 */
import type { Diagnostic, ParseResult } from '../model/diagnostics.js';
import { diagnostic } from '../model/diagnostics.js';
import type { LbBackend, LbRevNat, LbService, LbSlot, LbTable } from '../model/cilium.js';
import { algorithmFromNumber, backendStateFromFlags, BPF_OBJ_NAME_MAX, formatFrontend, protocolFromNumber, SVC_FLAG, serviceTypeFromFlags } from '../model/cilium.js';
import type { BpftoolMapDump, BpftoolMapEntry } from './bpftool-map-dump.js';
import { bytesToHex, entryHex, parseBpftoolMapDump, scanBpftoolMapDumpPieces } from './bpftool-map-dump.js';
import type { BackendEntry, DecodedLbEntry, HostByteOrder, LbMapKind, LbMapLayout, ServiceEntry } from './bpftool-lb-layouts.js';
import { LB_MAP_LAYOUTS } from './bpftool-lb-layouts.js';
import { scanCompactDump } from './bpftool-compact-scan.js';
import { compareFrontends, compareIpBytes, ipBytes } from './cilium-addr.js';

/** An entry left undecoded: where it was, its bytes as hex, and why. */
export interface UndecodedEntry {
  readonly index: number;
  readonly line: number;
  readonly keyHex: string;
  readonly valueHex: string;
  readonly reason: string;
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** One decoded map: the name given, its kind and layout when recognised, entries, and leftovers. */
export interface DecodedLbMap {
  readonly map: string;
  readonly kind: LbMapKind | null;
  readonly layout: Pick<LbMapLayout, 'structs' | 'era' | 'keySize' | 'valueSize'> | null;
  readonly entries: readonly HexEntry[];
  readonly undecoded: readonly UndecodedEntry[];
}

/** A decoded entry with its source bytes, `key 0a 60 … value 00 …` as bpftool prints them. */
export type HexEntry = DecodedLbEntry & { readonly hex: string };

/** Decoding options: `hostByteOrder` of the node that wrote the map (default `little`). */
export interface LbDecodeOptions {
  readonly hostByteOrder?: HostByteOrder;
}

/** The map name from a pin path or name (`/sys/fs/bpf/tc/globals/cilium_lb4_services_v2` → basename). */
export function lbMapBaseName(nameOrPath: string): string {
  return nameOrPath.split('/').filter((p) => p !== '').pop() ?? '';
}

/** Layouts whose map name is `name`, or starts with it when `name` is a 15-byte kernel name. */
function layoutsFor(name: string): LbMapLayout[] {
  return LB_MAP_LAYOUTS.filter((l) => l.maps.some((m) => m === name || (name.length === BPF_OBJ_NAME_MAX && m.startsWith(name))));
}

function sizeMatches(l: LbMapLayout, keySize: number, valueSize: number): boolean {
  return l.keySize === keySize && (l.valueSize === 'multiple-of-4' ? valueSize > 0 && valueSize % 4 === 0 : l.valueSize === valueSize);
}

/**
 * Picks the layout for `name` and the entry sizes in bytes. Returns the layout, or the reason
 * none applies (unknown map name, or sizes no Cilium version used for it).
 */
export function identifyLbMap(name: string, keySize: number, valueSize: number): LbMapLayout | string {
  const base = lbMapBaseName(name);
  const candidates = layoutsFor(base);
  if (candidates.length === 0) return `"${base}" is not a Cilium LB map nodescope decodes`;
  const match = candidates.find((l) => sizeMatches(l, keySize, valueSize));
  if (match) return match;
  const known = candidates.map((l) => `${l.keySize}/${l.valueSize} (${l.structs}, ${l.era})`).join('; ');
  return `key/value size ${keySize}/${valueSize} bytes matches no known layout of ${base}: known ${known}`;
}

/**
 * Decodes the entries of one dump of map `name` one at a time ({@link decodeLbMap}'s loop;
 * a dump read in pieces hands each entry over as it is read and keeps none).
 */
class LbMapDecoder {
  private readonly order: HostByteOrder;
  private readonly entries: HexEntry[] = [];
  private readonly undecoded: UndecodedEntry[] = [];
  private layout: LbMapLayout | null = null;
  // Every entry of one map has the same sizes: identify each (key, value) size pair once.
  private readonly bySizes = new Map<number, LbMapLayout | string>();

  constructor(
    private readonly name: string,
    opts: LbDecodeOptions,
  ) {
    this.order = opts.hostByteOrder ?? 'little';
  }

  add(e: BpftoolMapEntry): void {
    if (e.key === null || e.value === null) {
      this.skip(e.index, e.line, e.key, e.value, e.perCpuValues ? 'per-CPU values: no Cilium LB map is per-CPU' : 'key or value bytes missing');
      return;
    }
    this.addBytes(e.index, e.line, e.key, e.value, e.innerMapId);
  }

  /**
   * One entry given as its bytes (read, not kept: the compact scan reuses its arrays), its
   * index and line in the dump, and bpftool's `inner_map_id` (null when absent).
   */
  addBytes(index: number, line: number, key: Uint8Array, value: Uint8Array, innerMapId: number | null): void {
    const sizes = key.length * 4294967296 + value.length;
    let found = this.bySizes.get(sizes);
    if (found === undefined) this.bySizes.set(sizes, (found = identifyLbMap(this.name, key.length, value.length)));
    if (typeof found === 'string') {
      this.skip(index, line, key, value, found);
      return;
    }
    this.layout ??= found;
    const decoded = found.decode(key, value, this.order);
    if (typeof decoded === 'string') {
      this.skip(index, line, key, value, decoded);
      return;
    }
    // `decoded` is fresh: completing it in place keeps the key order a spread gives, at a
    // fraction of the cost (a spread copy per entry dominated decoding 10^5 entries).
    const out = decoded as Mutable<DecodedLbEntry> & { hex?: string };
    if (innerMapId !== null && out.kind === 'maglev-outer') out.innerMapId = innerMapId;
    out.hex = entryHex(key, value);
    this.entries.push(out as HexEntry);
  }

  private skip(index: number, line: number, key: Uint8Array | null, value: Uint8Array | null, reason: string): void {
    this.undecoded.push({ index, line, keyHex: bytesToHex(key), valueHex: bytesToHex(value), reason });
  }

  finish(): DecodedLbMap {
    const candidates = layoutsFor(lbMapBaseName(this.name));
    const layout = this.layout;
    return {
      map: lbMapBaseName(this.name),
      kind: layout?.kind ?? candidates[0]?.kind ?? null,
      layout: layout && { structs: layout.structs, era: layout.era, keySize: layout.keySize, valueSize: layout.valueSize },
      entries: this.entries,
      undecoded: this.undecoded,
    };
  }
}

/**
 * Decodes one parsed dump of map `name`. Entries with unknown sizes, unreadable bytes or
 * values out of range go to `undecoded` with a reason; nothing is guessed.
 */
export function decodeLbMap(dump: BpftoolMapDump, name: string, opts: LbDecodeOptions = {}): DecodedLbMap {
  const decoder = new LbMapDecoder(name, opts);
  for (const e of dump.entries) decoder.add(e);
  return decoder.finish();
}

/** The `undecoded` warnings of a decoded map, after bpftool's own diagnostics `parsed`. */
function withUndecoded(parsed: readonly Diagnostic[], decoded: DecodedLbMap, origin: string): Diagnostic[] {
  return [...parsed, ...decoded.undecoded.map((u) => diagnostic('warning', origin, u.line, `key ${u.keyHex} value ${u.valueHex}`, 'undecoded', u.reason))];
}

/**
 * Parses `bpftool -j map dump` text of map `name` and decodes it. Undecoded entries are
 * also reported as `undecoded` warnings (with the entry's line), after bpftool's own diagnostics.
 * The usual compact output is read in place (src/parsers/bpftool-compact-scan.ts); any other
 * shape by {@link parseCiliumLbMapDumpWhole}, whose result the compact read equals.
 */
export function parseCiliumLbMapDump(text: string, origin: string, name: string, opts: LbDecodeOptions = {}): ParseResult<DecodedLbMap> {
  return compactLbMap(() => [text], origin, name, opts) ?? parseCiliumLbMapDumpWhole(text, origin, name, opts);
}

/**
 * {@link parseCiliumLbMapDump} through the whole-text parser ({@link parseBpftoolMapDump}: every
 * entry a JSON element, then decoded): the reference the compact read is tested against, and
 * what reads every other shape.
 */
export function parseCiliumLbMapDumpWhole(text: string, origin: string, name: string, opts: LbDecodeOptions = {}): ParseResult<DecodedLbMap> {
  const parsed = parseBpftoolMapDump(text, origin);
  const decoded = decodeLbMap(parsed.value, name, opts);
  return { value: decoded, diagnostics: withUndecoded(parsed.diagnostics, decoded, origin) };
}

/** The compact read of a dump (`pieces()` yields its text), or null when it is not the usual shape. */
function compactLbMap(pieces: () => Iterable<string>, origin: string, name: string, opts: LbDecodeOptions): ParseResult<DecodedLbMap> | null {
  const decoder = new LbMapDecoder(name, opts);
  const scanned = scanCompactDump(pieces(), (key, value, index, line) => decoder.addBytes(index, line, key, value, null));
  if (scanned === null) return null;
  const decoded = decoder.finish();
  // The whole-text parser reports nothing of this shape: the only warnings are the undecoded entries.
  return { value: decoded, diagnostics: withUndecoded([], decoded, origin) };
}

/**
 * {@link parseCiliumLbMapDump} of a dump read in pieces (`pieces()` yields the text in
 * order, anew on each call): each entry is decoded as it is read, so neither the whole text
 * nor the list of raw entries is held (a 25,000-Service node's services map is 61 MB of
 * bpftool JSON). The usual compact output is read in place; a dump of another shape entry by
 * entry (see `scanBpftoolMapDumpPieces`), or, of any shape but the usual one, joined and
 * parsed whole: the same result either way.
 */
export function parseCiliumLbMapDumpPieces(pieces: () => Iterable<string>, origin: string, name: string, opts: LbDecodeOptions = {}): ParseResult<DecodedLbMap> {
  const compact = compactLbMap(pieces, origin, name, opts);
  if (compact !== null) return compact;
  const decoder = new LbMapDecoder(name, opts);
  const scanned = scanBpftoolMapDumpPieces(pieces(), origin, (e) => decoder.add(e));
  if (scanned === null) {
    let text = '';
    for (const piece of pieces()) text += piece;
    return parseCiliumLbMapDumpWhole(text, origin, name, opts);
  }
  const decoded = decoder.finish();
  return { value: decoded, diagnostics: withUndecoded(scanned.diagnostics, decoded, origin) };
}

function backendOf(e: BackendEntry, diags: Diagnostic[], origin: string): LbBackend {
  const protocol = protocolFromNumber(e.proto);
  if (protocol === null) diags.push(diagnostic('warning', origin, 0, `backend ${e.id}`, 'unknown-protocol', `backend ${e.id} has IP protocol ${e.proto}, which Cilium does not name`));
  return { id: e.id, ip: e.ip, port: e.port, protocol, state: backendStateFromFlags(e.stateFlags), weight: null, clusterId: e.clusterId, zone: e.zone, nodeName: null };
}

/**
 * The services entries of `maps` grouped by frontend — one group per (family, address, port,
 * protocol, scope) — groups in the order their first entry was read, entries in read order.
 * Shared by {@link assembleLbTable} and the counting reader (bpftool-lb-count.ts), which must agree.
 */
export function frontendGroups(maps: readonly DecodedLbMap[]): (ServiceEntry & { hex: string })[][] {
  // Entries of one (family, address, port, protocol, scope), groups in the order first read: by
  // address, then the numbers packed into one key (family, port, protocol and scope are at most 6, 65535, 255, 255).
  const groups: (ServiceEntry & { hex: string })[][] = [];
  const byIp = new Map<string, Map<number, (ServiceEntry & { hex: string })[]>>();
  for (const m of maps) {
    for (const e of m.entries) {
      if (e.kind !== 'services') continue;
      let atIp = byIp.get(e.ip);
      if (atIp === undefined) byIp.set(e.ip, (atIp = new Map()));
      const id = ((e.family * 65536 + e.port) * 256 + e.proto) * 256 + e.scope;
      const group = atIp.get(id);
      if (group) group.push(e);
      else {
        const fresh = [e];
        atIp.set(id, fresh);
        groups.push(fresh);
      }
    }
  }
  return groups;
}

/**
 * Joins decoded maps into the table `cilium-dbg bpf lb list` shows: one {@link LbService} per
 * (frontend, scope) with slot 0's id/flags/count/qcount/algorithm, slots resolved to backends
 * by ID (IPv4 and IPv6 share one ID space). A slot whose backend is missing keeps its ID with
 * `backend: null`; a frontend without slot 0 gets `type: null` and a warning. Maglev,
 * affinity and source-range entries are not part of the table (see `DecodedLbMap.entries`).
 * Services are in frontend order (address bytes, then `compareFrontends`), ties in the order
 * their first entry was read; backends by ID; rev-NATs by ID.
 */
export function assembleLbTable(maps: readonly DecodedLbMap[], origin = 'bpf-maps'): ParseResult<LbTable> {
  const diags: Diagnostic[] = [];
  const backends = new BackendsById();
  for (const m of maps) for (const e of m.entries) if (e.kind === 'backends') backends.set(e.id, backendOf(e, diags, origin));
  const revNats: LbRevNat[] = [];
  for (const m of maps) for (const e of m.entries) if (e.kind === 'revnat') revNats.push({ id: e.id, ip: e.ip, port: e.port });
  const groups = frontendGroups(maps);
  // Each service with its address's bytes, read once (compareFrontends reads both addresses per comparison).
  const bytes = new Map<string, readonly number[]>();
  const keyed: { svc: LbService; ip: readonly number[] }[] = [];
  for (const entries of groups) {
    const svc = serviceOf(entries, backends, diags, origin);
    if (!svc) continue;
    let b = bytes.get(svc.frontend.ip);
    if (b === undefined) bytes.set(svc.frontend.ip, (b = ipBytes(svc.frontend.ip) ?? []));
    keyed.push({ svc, ip: b });
  }
  keyed.sort((a, b) => compareIpBytes(a.ip, b.ip) || compareFrontends(a.svc.frontend, b.svc.frontend));
  const services = keyed.map((k) => k.svc);
  revNats.sort((a, b) => a.id - b.id);
  return { value: { source: 'bpf-maps', services, backends: backends.byId(), revNats }, diagnostics: diags };
}

/**
 * Backends by ID, the last one read for an ID kept: an array indexed by ID for the small IDs
 * Cilium hands out (a Map of 10^5 numbers was most of the join), a Map for any larger.
 */
class BackendsById {
  private static readonly DENSE = 1 << 21;
  private readonly dense: (LbBackend | undefined)[] = [];
  private readonly sparse = new Map<number, LbBackend>();

  set(id: number, b: LbBackend): void {
    if (Number.isInteger(id) && id >= 0 && id < BackendsById.DENSE) this.dense[id] = b;
    else this.sparse.set(id, b);
  }

  get(id: number): LbBackend | undefined {
    return Number.isInteger(id) && id >= 0 && id < BackendsById.DENSE ? this.dense[id] : this.sparse.get(id);
  }

  /** Every backend in ID order (IDs are unique: each key holds one). */
  byId(): LbBackend[] {
    const out: LbBackend[] = [];
    for (let i = 0; i < this.dense.length; i++) {
      const b = this.dense[i];
      if (b !== undefined) out.push(b);
    }
    if (this.sparse.size === 0) return out;
    return [...out, ...this.sparse.values()].sort((a, b) => (a.id ?? 0) - (b.id ?? 0));
  }
}

function serviceOf(entries: (ServiceEntry & { hex: string })[], backends: BackendsById, diags: Diagnostic[], origin: string): LbService | null {
  const first = entries[0];
  if (!first) return null;
  const protocol = protocolFromNumber(first.proto);
  const frontend = { ip: first.ip, port: first.port, protocol, scope: first.scope === 1 ? ('internal' as const) : ('external' as const) };
  const where = formatFrontend(frontend);
  if (protocol === null) diags.push(diagnostic('warning', origin, 0, where, 'unknown-protocol', `frontend protocol number ${first.proto} is not one Cilium names`));
  if (first.scope > 1) diags.push(diagnostic('warning', origin, 0, where, 'unknown-scope', `lookup scope ${first.scope} is neither external (0) nor internal (1)`));
  const master = entries.find((e) => e.slot === 0);
  if (!master) diags.push(diagnostic('warning', origin, 0, where, 'missing-frontend-slot', `no slot 0 entry for ${where}`));
  const l7 = ((master?.flags ?? 0) & SVC_FLAG.l7LoadBalancer) !== 0;
  // One stable sort by slot serves both the slots (slot 0 left out) and the raw text.
  const sorted = entries.length === 1 ? entries : [...entries].sort((a, b) => a.slot - b.slot);
  const slots: LbSlot[] = [];
  const raw: string[] = [];
  for (const e of sorted) {
    raw.push(e.hex);
    if (e.slot === 0) continue;
    const backend = backends.get(e.union) ?? null;
    if (backend === null) diags.push(diagnostic('warning', origin, 0, `${where} slot ${e.slot}`, 'missing-backend', `backend ${e.union} not found`));
    slots.push({ slot: e.slot, backendId: e.union, backend, flags: e.flags });
  }
  return {
    frontend,
    id: master?.revNatId ?? first.revNatId,
    type: master && master.flags !== null ? serviceTypeFromFlags(master.flags) : null,
    flags: master?.flags ?? null,
    count: master?.count ?? null,
    qcount: master?.qcount ?? null,
    algorithm: master && !l7 && master.flags !== null ? algorithmFromNumber(master.union >>> 24) : null,
    affinityTimeout: master && !l7 && master.flags !== null ? master.union & 0xffffff : null,
    l7ProxyPort: master && l7 ? master.l7ProxyPort : null,
    name: null,
    slots,
    raw: raw.join('\n'),
  };
}

/**
 * One dump to decode: the map's name (or pin path), bpftool's stdout, and its origin label;
 * `pieces`, when given, yields the stdout in pieces instead (a replay's file; `text` is then unread).
 */
export interface LbMapDumpText {
  readonly name: string;
  readonly text: string;
  readonly origin: string;
  readonly pieces?: () => Iterable<string>;
}

/** Parses and decodes one dump as {@link decodeCiliumLbMaps} does: its pieces when given, else its text. */
export function decodeCiliumLbMapDump(d: LbMapDumpText, opts: LbDecodeOptions = {}): ParseResult<DecodedLbMap> {
  return d.pieces ? parseCiliumLbMapDumpPieces(d.pieces, d.origin, d.name, opts) : parseCiliumLbMapDump(d.text, d.origin, d.name, opts);
}

/**
 * Parses and decodes several dumps (typically services, backends and reverse NAT for both
 * families) and joins them: `maps` per dump, `table` as {@link assembleLbTable} builds it, with
 * `unreadable` naming each map that holds entries no known layout decodes.
 */
export function decodeCiliumLbMaps(dumps: readonly LbMapDumpText[], opts: LbDecodeOptions = {}): ParseResult<{ maps: readonly DecodedLbMap[]; table: LbTable }> {
  return joinDecodedLbMaps(dumps.map((d) => decodeCiliumLbMapDump(d, opts)));
}

/**
 * The second half of {@link decodeCiliumLbMaps}: the dumps' decodes ({@link decodeCiliumLbMapDump},
 * in the dumps' order, each done when its dump ended) joined into one table, diagnostics in order.
 */
export function joinDecodedLbMaps(results: readonly ParseResult<DecodedLbMap>[]): ParseResult<{ maps: readonly DecodedLbMap[]; table: LbTable }> {
  const maps = results.map((r) => r.value);
  const table = assembleLbTable(maps);
  // A lookup that misses in a map nodescope could not read is not the datapath's miss: said on the table.
  const unreadable = maps.filter((m) => m.undecoded.length > 0).map((m) => ({ map: m.map, entries: m.undecoded.length, reason: m.undecoded[0]!.reason }));
  const value = unreadable.length > 0 ? { ...table.value, unreadable } : table.value;
  return { value: { maps, table: value }, diagnostics: [...results.flatMap((r) => r.diagnostics), ...table.diagnostics] };
}
