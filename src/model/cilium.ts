/**
 * Cilium eBPF load-balancing model: the rewrite table that replaces KUBE-* rules when
 * Cilium runs with kube-proxy replacement.
 *
 * One shape serves every source — `cilium-dbg bpf lb list`, `cilium-dbg service list`
 * (text and `-o json`), the StateDB tables, and the raw pinned maps
 * (`cilium_lb{4,6}_services_v2`, `cilium_lb{4,6}_backends_v3`, `cilium_lb{4,6}_reverse_nat`)
 * decoded from `bpftool -j map dump`. A field a source does not carry is `null`.
 *
 * Sources of the words and numbers: cilium/cilium `bpf/lib/lb.h` (struct layouts,
 * `SVC_FLAG_*`, `BE_STATE_*`, `LB_LOOKUP_SCOPE_*`), `pkg/loadbalancer/loadbalancer.go`
 * (`ServiceFlags.String()`, `SVCType`, `SVCLoadBalancingAlgorithm`), `pkg/u8proto`.
 * Addresses are canonical text: IPv4 dotted quad, IPv6 RFC 5952 lower case, no brackets.
 * Ports are host numbers (1–65535; 0 only on wildcard entries).
 */
import { joinHostPort } from '../net/address.js';

/** L4 protocol as Cilium's `u8proto.String()` prints it; `ANY` is protocol 0 (IPPROTO_ANY). */
export type LbProtocol = 'ANY' | 'TCP' | 'UDP' | 'SCTP' | 'ICMP' | 'ICMPv6' | 'VRRP';

/** Lookup scope of a service key (`LB_LOOKUP_SCOPE_EXT` = 0, `LB_LOOKUP_SCOPE_INT` = 1, printed `/i`). */
export type LbScope = 'external' | 'internal';

/** `SVCType` as Cilium prints it (pkg/loadbalancer `SVCType*` constants). */
export type LbServiceType =
  | 'ClusterIP'
  | 'NodePort'
  | 'ExternalIPs'
  | 'HostPort'
  | 'LoadBalancer'
  | 'LocalRedirect';

/** Backend state (`BE_STATE_*` in lb.h: 0 active, 1 terminating, 2 quarantined, 3 maintenance). */
export type LbBackendState = 'active' | 'terminating' | 'quarantined' | 'maintenance';

/** Load-balancing algorithm in the upper 8 bits of a frontend's `affinity_timeout` (0 undef, 1 random, 2 maglev). */
export type LbAlgorithm = 'undef' | 'random' | 'maglev';

/** Where an {@link LbTable} came from. */
export type LbSource =
  | 'bpf-lb-list' // `cilium-dbg bpf lb list` text
  | 'bpf-lb-list-json' // `cilium-dbg bpf lb list -o json`
  | 'service-list' // `cilium-dbg service list` text
  | 'service-list-json' // `cilium-dbg service list -o json`
  | 'bpf-maps' // raw pinned maps via `bpftool -j map dump`
  | 'maps-dump'; // cilium test harness `lb/maps-dump` (BE:/REV:/SVC: lines)

/** Cilium's pinned LB map names (the pin path keeps them whole; the kernel object name is cut to 15 bytes). */
export const CILIUM_LB_MAPS = {
  services4: 'cilium_lb4_services_v2',
  services6: 'cilium_lb6_services_v2',
  backends4: 'cilium_lb4_backends_v3',
  backends6: 'cilium_lb6_backends_v3',
  backends4V2: 'cilium_lb4_backends_v2',
  backends6V2: 'cilium_lb6_backends_v2',
  backends4V1: 'cilium_lb4_backends',
  backends6V1: 'cilium_lb6_backends',
  revNat4: 'cilium_lb4_reverse_nat',
  revNat6: 'cilium_lb6_reverse_nat',
  maglev4: 'cilium_lb4_maglev',
  maglev6: 'cilium_lb6_maglev',
  affinity4: 'cilium_lb4_affinity',
  affinity6: 'cilium_lb6_affinity',
  affinityMatch: 'cilium_lb_affinity_match',
  sourceRange4: 'cilium_lb4_source_range',
  sourceRange6: 'cilium_lb6_source_range',
} as const;

/**
 * Kernel BPF object names hold at most 15 bytes (`BPF_OBJ_NAME_LEN` 16 with the NUL), so
 * `bpftool map show` lists `cilium_lb4_services_v2` as `cilium_lb4_serv`; only the pin path
 * (`/sys/fs/bpf/tc/globals/cilium_lb4_services_v2`) keeps the full name. Checked on Linux 6.18
 * with bpftool 7.1 (`map create … name cilium_lb4_services_v2` → `"name":"cilium_lb4_serv"`).
 */
export const BPF_OBJ_NAME_MAX = 15;

/** The kernel's view of a map name: `name` cut to {@link BPF_OBJ_NAME_MAX} bytes. */
export function kernelMapName(name: string): string {
  return name.slice(0, BPF_OBJ_NAME_MAX);
}

/** Service flag bits: `flags` (low byte) and `flags2` (high byte) of lb{4,6}_service, as Go's `ServiceFlags` u16. */
export const SVC_FLAG = {
  externalIp: 1 << 0,
  nodePort: 1 << 1,
  extLocalScope: 1 << 2,
  hostPort: 1 << 3,
  sessionAffinity: 1 << 4,
  loadBalancer: 1 << 5,
  routable: 1 << 6,
  sourceRange: 1 << 7,
  localRedirect: 1 << 8,
  nat46x64: 1 << 9,
  l7LoadBalancer: 1 << 10,
  loopback: 1 << 11, // also L7 delegate on non-HostPort services
  intLocalScope: 1 << 12,
  twoScopes: 1 << 13,
  quarantined: 1 << 14, // on a backend slot; on the frontend slot the same bit means source-range deny
  fwdModeDsr: 1 << 15,
} as const;

/** A frontend (service key) address: `ip:port/PROTO[/i]`. `protocol` is null when the source omits it (≤1.14 text). */
export interface LbFrontend {
  readonly ip: string;
  readonly port: number;
  readonly protocol: LbProtocol | null;
  readonly scope: LbScope;
}

/**
 * One backend (an entry of `cilium_lb{4,6}_backends_v3`, or a backend line of a listing).
 * `id`: backend ID (u32) when known. `weight`: Maglev weight (service list JSON only).
 * `clusterId`: ClusterMesh cluster (0 = local); printed as `ip@id`. `zone`: zone index from the
 * map or the zone name from the API. `nodeName`: from service list JSON / StateDB.
 */
export interface LbBackend {
  readonly id: number | null;
  readonly ip: string;
  readonly port: number;
  readonly protocol: LbProtocol | null;
  readonly state: LbBackendState | null;
  readonly weight: number | null;
  readonly clusterId: number | null;
  readonly zone: number | string | null;
  readonly nodeName: string | null;
}

/**
 * One backend slot of a service (`backend_slot` ≥ 1 in the key). `slot` is null when the
 * source lists backends without slot numbers (service list). `backend` is null when the
 * slot names a backend ID missing from the backend map (`backend N not found`).
 * `flags`: the slot entry's own flag bits (maps only; the quarantined bit lives here).
 */
export interface LbSlot {
  readonly slot: number | null;
  readonly backendId: number | null;
  readonly backend: LbBackend | null;
  readonly flags: number | null;
}

/**
 * One frontend of a service with its backend slots — slot 0 of the services map plus
 * slots 1..n. `id` is the service ID, which Cilium also uses as the rev-NAT index.
 * `count`: slots eligible for new connections (slot 0's `count`); `qcount`: slots after
 * them held for quarantined/terminating backends. `affinityTimeout` in seconds.
 * `flags` is the u16 of {@link SVC_FLAG} bits when the source carries them (null: at most `type`
 * known); `type` is null only when a listing lost the frontend slot (truncated capture).
 * `name`: `namespace/name` when the source carries it. `raw`: the source lines.
 */
export interface LbService {
  readonly frontend: LbFrontend;
  readonly id: number | null;
  readonly type: LbServiceType | null;
  readonly flags: number | null;
  readonly count: number | null;
  readonly qcount: number | null;
  readonly algorithm: LbAlgorithm | null;
  readonly affinityTimeout: number | null;
  readonly l7ProxyPort: number | null;
  readonly name: string | null;
  readonly slots: readonly LbSlot[];
  readonly raw: string;
}

/** A reverse-NAT entry: rev-NAT id → the frontend address replies are rewritten back to. */
export interface LbRevNat {
  readonly id: number;
  readonly ip: string;
  readonly port: number;
}

/**
 * A map read whose entries (some or all) match no known layout: they are not in the table,
 * so a lookup that misses may be a miss of nodescope's, not of the datapath's.
 */
export interface LbUnreadableMap {
  readonly map: string;
  readonly entries: number;
  readonly reason: string;
}

/** A frontend (`formatFrontend` text) on which two sources of one node disagree, in words that name both. */
export interface LbDisagreement {
  readonly frontend: string;
  readonly message: string;
}

/** The whole LB table of one node from one source. */
export interface LbTable {
  readonly source: LbSource;
  readonly services: readonly LbService[];
  /** Backend map entries (maps, maps-dump); empty when the source shows backends only inside services. */
  readonly backends: readonly LbBackend[];
  readonly revNats: readonly LbRevNat[];
  /** Maps with entries no known layout decodes (set only when there are some). */
  readonly unreadable?: readonly LbUnreadableMap[];
  /** Where the maps and the agent's listings (or two listings) disagree (set only when they do). */
  readonly disagreements?: readonly LbDisagreement[];
  /** `cilium-dbg service list` was joined in: backend states and `count` come from it. */
  readonly statesFrom?: 'service-list';
}

/** `L3n4Addr.String()`: `ip:port/PROTO` plus `/i` for internal scope; protocol omitted when null. */
export function formatFrontend(fe: LbFrontend): string {
  const proto = fe.protocol === null ? '' : `/${fe.protocol}`;
  return `${joinHostPort(fe.ip, fe.port)}${proto}${fe.scope === 'internal' ? '/i' : ''}`;
}

const PROTO_BY_NUMBER: ReadonlyMap<number, LbProtocol> = new Map([
  [0, 'ANY'],
  [1, 'ICMP'],
  [6, 'TCP'],
  [17, 'UDP'],
  [58, 'ICMPv6'],
  [112, 'VRRP'],
  [132, 'SCTP'],
]);

/** IP protocol number → name (`u8proto.String()`); null for numbers Cilium does not name. */
export function protocolFromNumber(n: number): LbProtocol | null {
  return PROTO_BY_NUMBER.get(n) ?? null;
}

/** Name → IP protocol number (case-insensitive, `NONE`/`any` → 0); null if unknown. */
export function protocolNumber(name: string): number | null {
  const upper = name.toUpperCase();
  if (upper === 'NONE') return 0;
  for (const [n, p] of PROTO_BY_NUMBER) if (p.toUpperCase() === upper) return n;
  return null;
}

/** Name → {@link LbProtocol} (case-insensitive; `NONE` → `ANY`); null if unknown. */
export function protocolFromName(name: string): LbProtocol | null {
  const n = protocolNumber(name);
  return n === null ? null : protocolFromNumber(n);
}

const BACKEND_STATES: readonly LbBackendState[] = ['active', 'terminating', 'quarantined', 'maintenance'];

/** `lb{4,6}_backend.flags` → state (`GetBackendStateFromFlags`: unknown values read as active). */
export function backendStateFromFlags(flags: number): LbBackendState {
  return BACKEND_STATES[flags] ?? 'active';
}

/** State → `lb{4,6}_backend.flags` value. */
export function backendStateFlags(state: LbBackendState): number {
  return BACKEND_STATES.indexOf(state);
}

/** Parses a state word (`active`, `terminating`, …); null if not one. */
export function backendStateFromName(word: string): LbBackendState | null {
  return (BACKEND_STATES as readonly string[]).includes(word) ? (word as LbBackendState) : null;
}

/** Upper 8 bits of a frontend's `affinity_timeout` → algorithm (`SVCLoadBalancingAlgorithm.String()`). */
export function algorithmFromNumber(n: number): LbAlgorithm {
  return n === 1 ? 'random' : n === 2 ? 'maglev' : 'undef';
}

/** Algorithm → its number (0 undef, 1 random, 2 maglev). */
export function algorithmNumber(a: LbAlgorithm): number {
  return a === 'random' ? 1 : a === 'maglev' ? 2 : 0;
}

/** `ServiceFlags.SVCType()`: the first type bit that is set, ClusterIP if none. */
export function serviceTypeFromFlags(flags: number): LbServiceType {
  if (flags & SVC_FLAG.externalIp) return 'ExternalIPs';
  if (flags & SVC_FLAG.nodePort) return 'NodePort';
  if (flags & SVC_FLAG.loadBalancer) return 'LoadBalancer';
  if (flags & SVC_FLAG.hostPort) return 'HostPort';
  if (flags & SVC_FLAG.localRedirect) return 'LocalRedirect';
  return 'ClusterIP';
}

const TYPE_BIT: Readonly<Record<LbServiceType, number>> = {
  ClusterIP: 0,
  NodePort: SVC_FLAG.nodePort,
  ExternalIPs: SVC_FLAG.externalIp,
  HostPort: SVC_FLAG.hostPort,
  LoadBalancer: SVC_FLAG.loadBalancer,
  LocalRedirect: SVC_FLAG.localRedirect,
};

/** The type bit of a service type (0 for ClusterIP). */
export function serviceTypeBit(type: LbServiceType): number {
  return TYPE_BIT[type];
}

/** Parses a service type word; null if not one of {@link LbServiceType}. */
export function serviceTypeFromName(word: string): LbServiceType | null {
  return Object.hasOwn(TYPE_BIT, word) ? (word as LbServiceType) : null;
}

/**
 * `ServiceFlags.String()` (pkg/loadbalancer/loadbalancer.go, v1.16+): the type, then
 * `Local`, `InternalLocal`, `two-scopes`, `sessionAffinity`, `non-routable`,
 * `check source-range` [`deny`], `46x64`, `l7-load-balancer`, `loopback`|`delegate-if-local`,
 * `quarantined`, `dsr`, joined by `, `. Example: `ClusterIP, non-routable`.
 */
export function formatServiceFlags(flags: number): string {
  const type = serviceTypeFromFlags(flags);
  const words: string[] = [type];
  let seenDeny = false;
  if (flags & SVC_FLAG.extLocalScope) words.push('Local');
  if (flags & SVC_FLAG.intLocalScope) words.push('InternalLocal');
  if (flags & SVC_FLAG.twoScopes) words.push('two-scopes');
  if (flags & SVC_FLAG.sessionAffinity) words.push('sessionAffinity');
  if (!(flags & SVC_FLAG.routable)) words.push('non-routable');
  if (flags & SVC_FLAG.sourceRange) {
    words.push('check source-range');
    if (flags & SVC_FLAG.quarantined) {
      seenDeny = true;
      words.push('deny');
    }
  }
  if (flags & SVC_FLAG.nat46x64) words.push('46x64');
  if (flags & SVC_FLAG.l7LoadBalancer) words.push('l7-load-balancer');
  if (flags & SVC_FLAG.loopback) words.push(type === 'HostPort' ? 'loopback' : 'delegate-if-local');
  if (!seenDeny && flags & SVC_FLAG.quarantined) words.push('quarantined');
  if (flags & SVC_FLAG.fwdModeDsr) words.push('dsr');
  return words.join(', ');
}

const WORD_BIT: Readonly<Record<string, number>> = {
  Local: SVC_FLAG.extLocalScope,
  InternalLocal: SVC_FLAG.intLocalScope,
  'two-scopes': SVC_FLAG.twoScopes,
  sessionAffinity: SVC_FLAG.sessionAffinity,
  'check source-range': SVC_FLAG.sourceRange,
  deny: SVC_FLAG.quarantined,
  '46x64': SVC_FLAG.nat46x64,
  'l7-load-balancer': SVC_FLAG.l7LoadBalancer,
  loopback: SVC_FLAG.loopback,
  'delegate-if-local': SVC_FLAG.loopback,
  quarantined: SVC_FLAG.quarantined,
  dsr: SVC_FLAG.fwdModeDsr,
};

/**
 * Inverse of {@link formatServiceFlags}: `ClusterIP, non-routable` → bits. The routable bit
 * is set unless `non-routable` appears. Words may also be joined by `+` (test harness form
 * `ClusterIP+non-routable`). Returns null when the first word is not a type or a word is unknown.
 */
export function parseServiceFlags(text: string): number | null {
  const words = text
    .split(/, |\+/)
    .map((w) => w.trim())
    .filter((w) => w !== '');
  const type = serviceTypeFromName(words[0] ?? '');
  if (type === null) return null;
  let bits = serviceTypeBit(type) | SVC_FLAG.routable;
  for (const word of words.slice(1)) {
    if (word === 'non-routable') bits &= ~SVC_FLAG.routable;
    else if (Object.hasOwn(WORD_BIT, word)) bits |= WORD_BIT[word] ?? 0;
    else return null;
  }
  return bits;
}

/**
 * kube-proxy replacement mode as the agent reports it: `True`/`False` since Cilium 1.14,
 * `Strict`/`Probe`/`Partial`/`Disabled` before (1.6–1.13).
 */
export type KubeProxyReplacementMode = 'True' | 'False' | 'Strict' | 'Probe' | 'Partial' | 'Disabled';

/** A device kube-proxy replacement attaches to: `eth0 192.168.49.2 fe80::1 (Direct Routing)`. */
export interface KprDevice {
  readonly name: string;
  readonly ips: readonly string[];
  readonly directRouting: boolean;
}

/**
 * What `cilium-dbg status [--verbose]` (text or `-o json`) says about service load-balancing.
 * Format source: cilium/cilium `pkg/client/client.go` `FormatStatusResponse` and
 * `api/v1/models` (`KubeProxyReplacement`, `Routing`). Unknown → null: the non-verbose text
 * has no `KubeProxyReplacement Details:` block, so socket LB fields stay null there.
 *
 * - `version`: `1.15.1` from `Cilium: Ok 1.15.1 (v1.15.1-a368c8f0)`; `versionDetail` the part in parentheses.
 * - `kubeProxyReplacement.replaces`: `full` (True/Strict), `partial` (Probe/Partial), `none` (False/Disabled).
 * - `socketLB.hostNamespaceOnly`: `Socket LB Coverage: Hostns-only` / `bpfSocketLBHostnsOnly`.
 * - `hostRouting`: `Host Routing: Legacy` (≤1.14) or the `Host:` part of `Routing:` (1.15+).
 * - `fields`: every `Key: value` line in order; keys inside `KubeProxyReplacement Details:` are
 *   prefixed `KubeProxyReplacement Details/` (`…/Socket LB`, `…/- NodePort`). `raw`: the input.
 */
export interface CiliumStatus {
  readonly version: string | null;
  readonly versionDetail: string | null;
  readonly agentState: string | null;
  readonly kubeProxyReplacement: {
    readonly mode: KubeProxyReplacementMode | null;
    readonly replaces: 'full' | 'partial' | 'none' | null;
    readonly devices: readonly KprDevice[];
  };
  readonly socketLB: {
    readonly enabled: boolean | null;
    readonly hostNamespaceOnly: boolean | null;
    readonly tracing: boolean | null;
  };
  readonly nodePort: {
    readonly enabled: boolean | null;
    readonly portMin: number | null;
    readonly portMax: number | null;
    readonly mode: string | null;
    readonly algorithm: string | null;
  };
  readonly hostRouting: 'BPF' | 'Legacy' | null;
  readonly routingNetwork: 'Tunnel' | 'Native' | null;
  readonly tunnelProtocol: string | null;
  readonly masquerading: string | null;
  readonly fields: readonly { readonly key: string; readonly value: string }[];
  readonly raw: string;
}

/** One row of StateDB `db/show frontends` (new LB control plane, Cilium ≥1.17). */
export interface StateDbFrontend {
  readonly address: LbFrontend;
  readonly type: LbServiceType | null;
  readonly serviceName: string;
  readonly portName: string;
  readonly backends: readonly LbFrontend[];
  /** Backends the table did not show (it shows five, then `+ N more ...`). */
  readonly backendsNotShown?: number;
  readonly redirectTo: string;
  readonly status: string;
  readonly since: string;
  readonly error: string;
  readonly raw: string;
}

/** One service instance a StateDB backend row belongs to: `default/echo (http)`, `[terminating]` appended. */
export interface StateDbInstance {
  readonly service: string;
  readonly portName: string | null;
  readonly terminating: boolean;
}

/** One row of StateDB `db/show backends`. */
export interface StateDbBackend {
  readonly address: LbFrontend;
  readonly instances: readonly StateDbInstance[];
  readonly nodeName: string | null;
  readonly raw: string;
}

/** One row of StateDB `db/show services`: `PortNames` `http=80, tftp=69` become pairs. */
export interface StateDbService {
  readonly name: string;
  readonly source: string;
  readonly portNames: readonly { readonly name: string; readonly port: number }[];
  readonly trafficPolicy: string;
  readonly flags: string;
  readonly raw: string;
}

/** The StateDB tables found in one text (any may be empty). */
export interface StateDbTables {
  readonly frontends: readonly StateDbFrontend[];
  readonly backends: readonly StateDbBackend[];
  readonly services: readonly StateDbService[];
}
