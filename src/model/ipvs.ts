/**
 * IPVS (Linux Virtual Server) model: what `ipvsadm -L` prints about the kernel's
 * virtual server table, as kube-proxy's IPVS mode programs it.
 *
 * Format source: ipvsadm v1.31 `ipvsadm.c` (`print_title`, `print_service_entry`,
 * `print_largenum`, `fwd_name`), the version Debian 12 and most node images ship.
 * Field names follow ipvsadm's own column headers (`ActiveConn`, `InActConn`,
 * `Conns`, `InPkts`, …), lower-camel-cased.
 */

/** Virtual service protocol as ipvsadm prints it (`TCP`, `UDP`, `SCTP`; SCTP since ipvsadm 1.27). */
export type IpvsProtocol = 'TCP' | 'UDP' | 'SCTP';

/**
 * Real-server forwarding method, ipvsadm's `fwd_name()`:
 * `Masq` (NAT, `-m`; what kube-proxy uses), `Route` (direct routing, `-g`),
 * `Tunnel` (IPIP/GUE/GRE, `-i`), `Local` (the real server is this host).
 */
export type IpvsForwardMethod = 'Masq' | 'Route' | 'Tunnel' | 'Local';

/**
 * Which listing a table came from; each prints different columns:
 * - `list`: `ipvsadm -L [-n]` (Scheduler Flags / Forward Weight ActiveConn InActConn);
 * - `stats`: `--stats` (Conns InPkts OutPkts InBytes OutBytes);
 * - `rate`: `--rate` (CPS InPPS OutPPS InBPS OutBPS);
 * - `thresholds`: `--thresholds` (Uthreshold Lthreshold ActiveConn InActConn);
 * - `persistent-conn`: `--persistent-conn` (Weight PersistConn ActiveConn InActConn).
 */
export type IpvsListingKind = 'list' | 'stats' | 'rate' | 'thresholds' | 'persistent-conn';

/** The K/M/G/T suffix `print_largenum` appends without `--exact` (K = 10^3 … T = 10^12). */
export type IpvsCountSuffix = 'K' | 'M' | 'G' | 'T';

/**
 * One number from a `--stats`/`--rate` column.
 *
 * Without `--exact`, ipvsadm prints values ≥ 100,000,000 divided (integer division) by
 * 10^3/10^6/10^9/10^12 with a suffix, so precision is lost: `value` is the printed
 * number times the multiplier and the true counter lies in `[value, value + multiplier)`.
 * `suffix` is null when the value is exact (no suffix printed).
 */
export interface IpvsCount {
  readonly value: bigint;
  readonly suffix: IpvsCountSuffix | null;
}

/**
 * `--stats` columns: totals since the service was created or last zeroed (`ipvsadm -Z`).
 * `conns` in connections, `inPkts`/`outPkts` in packets, `inBytes`/`outBytes` in bytes.
 */
export interface IpvsStats {
  readonly conns: IpvsCount;
  readonly inPkts: IpvsCount;
  readonly outPkts: IpvsCount;
  readonly inBytes: IpvsCount;
  readonly outBytes: IpvsCount;
}

/**
 * `--rate` columns: the kernel estimator's smoothed per-second rates
 * (`cps` connections/s, `inPps`/`outPps` packets/s, `inBps`/`outBps` bytes/s).
 */
export interface IpvsRate {
  readonly cps: IpvsCount;
  readonly inPps: IpvsCount;
  readonly outPps: IpvsCount;
  readonly inBps: IpvsCount;
  readonly outBps: IpvsCount;
}

/**
 * An `address:port` as ipvsadm prints it (`addrport_to_anyname`).
 *
 * - `host`: the address without brackets (`10.96.0.10`, `fd00::1`), or a host name when
 *   listed without `-n` and reverse lookup succeeded.
 * - `family`: `ipv4`/`ipv6` when `host` is a literal address, null when it is a name.
 * - `bracketed`: IPv6 services print as `[addr]:port`.
 * - `port`: the number, or null when only a service name was printed and no
 *   `/etc/services` data resolved it.
 * - `portName`: the service name printed instead of the number without `-n`
 *   (`http-alt`), else null.
 */
export interface IpvsAddress {
  readonly host: string;
  readonly family: 'ipv4' | 'ipv6' | null;
  readonly bracketed: boolean;
  readonly port: number | null;
  readonly portName: string | null;
}

/** The identity of a virtual service: protocol + address, or a firewall mark (`FWM  <mark>`). */
export type IpvsServiceKey =
  | { readonly kind: 'address'; readonly protocol: IpvsProtocol; readonly address: IpvsAddress }
  | { readonly kind: 'fwmark'; readonly fwmark: number; readonly family: 'ipv4' | 'ipv6' };

/**
 * Persistence (`-p`): `timeout` in seconds; `mask` the granularity netmask when not
 * /32 (IPv4 dotted, e.g. `255.255.255.0`) or /128 (IPv6 prefix length as text);
 * `pe` the persistence engine (`sip`), else null.
 */
export interface IpvsPersistence {
  readonly timeout: number;
  readonly mask: string | null;
  readonly pe: string | null;
}

/**
 * The virtual-server line's right-hand side.
 * - `scheduled` (list, thresholds, persistent-conn listings): scheduler name (`rr`, `wlc`,
 *   `sh`, `mh`, …), scheduler flags printed in parentheses (`sh-port`, `flag-1`, …),
 *   persistence, one-packet scheduling (`ops`).
 * - `stats` / `rate`: the counters of the whole virtual service.
 */
export type IpvsServiceValues =
  | {
      readonly kind: 'scheduled';
      readonly scheduler: string;
      readonly schedFlags: readonly string[];
      readonly persistence: IpvsPersistence | null;
      readonly onePacket: boolean;
    }
  | { readonly kind: 'stats'; readonly stats: IpvsStats }
  | { readonly kind: 'rate'; readonly rate: IpvsRate };

/**
 * A real-server line's columns, by listing kind. Connection counts are connections
 * (ActiveConn: ESTABLISHED for TCP; InActConn: every other state), weight is unitless.
 * `tunnelInfo` is the `TunnelInfo` column of `--tun-info` (`n/a` for non-tunnel dests), else null.
 */
export type IpvsRealServerValues =
  | {
      readonly kind: 'list';
      readonly forward: IpvsForwardMethod;
      readonly tunnelInfo: string | null;
      readonly weight: number;
      readonly activeConn: number;
      readonly inActConn: number;
    }
  | { readonly kind: 'stats'; readonly stats: IpvsStats }
  | { readonly kind: 'rate'; readonly rate: IpvsRate }
  | {
      readonly kind: 'thresholds';
      readonly uThreshold: number;
      readonly lThreshold: number;
      readonly activeConn: number;
      readonly inActConn: number;
    }
  | {
      readonly kind: 'persistent-conn';
      readonly weight: number;
      readonly persistConn: number;
      readonly activeConn: number;
      readonly inActConn: number;
    };

/** One `  -> addr:port …` line. `line` is 1-based in the parsed text; `raw` is the line as read. */
export interface IpvsRealServer {
  readonly address: IpvsAddress;
  readonly values: IpvsRealServerValues;
  readonly line: number;
  readonly raw: string;
}

/** One virtual service with its real servers (possibly none: a Service without ready endpoints). */
export interface IpvsVirtualServer {
  readonly key: IpvsServiceKey;
  readonly values: IpvsServiceValues;
  readonly realServers: readonly IpvsRealServer[];
  readonly line: number;
  readonly raw: string;
}

/**
 * One `ipvsadm -L` output.
 * - `version`: IPVS version from `IP Virtual Server version 1.2.1 (size=4096)`, null when
 *   absent (listing one service with `-t vip:port` prints no version line).
 * - `connTableSize`: the `size=` value, the connection hash table size in buckets.
 * - `tunnelInfo`: true when the title has the `TunnelInfo` column (`--tun-info`).
 */
export interface IpvsListing {
  readonly kind: IpvsListingKind;
  readonly version: string | null;
  readonly connTableSize: number | null;
  readonly tunnelInfo: boolean;
  readonly virtualServers: readonly IpvsVirtualServer[];
}

/** Multipliers for {@link IpvsCountSuffix}. */
export const IPVS_SUFFIX_MULTIPLIER: Readonly<Record<IpvsCountSuffix, bigint>> = {
  K: 1_000n,
  M: 1_000_000n,
  G: 1_000_000_000n,
  T: 1_000_000_000_000n,
};

/**
 * The address text as ipvsadm prints it: `host:port`, `[v6]:port`, with the service
 * name when one was printed (`10.0.0.1:http-alt`).
 */
export function formatIpvsAddress(a: IpvsAddress): string {
  const host = a.bracketed ? `[${a.host}]` : a.host;
  return `${host}:${a.portName ?? String(a.port ?? 0)}`;
}

/** The virtual service identity as ipvsadm's first column prints it (`TCP  10.96.0.10:53`, `FWM  5 IPv6`). */
export function formatIpvsServiceKey(k: IpvsServiceKey): string {
  if (k.kind === 'fwmark') return `FWM  ${k.fwmark}${k.family === 'ipv6' ? ' IPv6' : ''}`;
  return `${k.protocol.padEnd(4)} ${formatIpvsAddress(k.address)}`;
}

/** Upper bound (exclusive) of the true value behind a possibly-suffixed {@link IpvsCount}. */
export function ipvsCountUpperBound(c: IpvsCount): bigint {
  return c.suffix === null ? c.value + 1n : c.value + IPVS_SUFFIX_MULTIPLIER[c.suffix];
}

// ---- ipset: kube-proxy's IPVS mode matches Service traffic with ipsets ----

/**
 * One dimension of an ipset element, from the set type's `:`-suffix (`hash:ip,port,ip`
 * has dims `ip`, `port`, `ip`). Kernel set types: ip, net, port, mac, iface, mark, set
 * (list:set). Source: ipset(8) "SET TYPES".
 */
export type IpsetDimension = 'ip' | 'net' | 'port' | 'mac' | 'iface' | 'mark' | 'set';

/**
 * One decoded part of a member (`10.96.0.10,tcp:53` → ip + port).
 * - `ip`: an address; `net`: address with `prefixLen` (null when printed without `/n`,
 *   i.e. a host-length prefix); `port`: `protocol` (`tcp`, `udp`, `sctp`, `icmp`, …, null
 *   when printed bare as in bitmap:port) and `port` (null for an ICMP type name such as
 *   `echo-request`); `mac`; `iface` (`physdev:` prefix → `physdev` true); `mark` (number);
 *   `set` (member set name of list:set).
 */
export type IpsetPart =
  | { readonly dim: 'ip'; readonly address: string }
  | { readonly dim: 'net'; readonly address: string; readonly prefixLen: number | null }
  | { readonly dim: 'port'; readonly protocol: string | null; readonly port: number | null; readonly text: string }
  | { readonly dim: 'mac'; readonly mac: string }
  | { readonly dim: 'iface'; readonly name: string; readonly physdev: boolean }
  | { readonly dim: 'mark'; readonly mark: number }
  | { readonly dim: 'set'; readonly name: string };

/**
 * One line under `Members:`.
 * - `element`: the element text as printed (`10.96.0.10,tcp:53`);
 * - `parts`: decoded per the set's dims, or null when the element does not fit them;
 * - `options`: extensions after the element in printed order (`timeout 300`,
 *   `packets 0`, `bytes 0`, `comment "…"` unquoted, `nomatch` → null value).
 */
export interface IpsetMember {
  readonly element: string;
  readonly parts: readonly IpsetPart[] | null;
  readonly options: ReadonlyArray<readonly [string, string | null]>;
  readonly line: number;
  readonly raw: string;
}

/**
 * One set from `ipset list` / `ipset -L`.
 * - `type`: as printed (`hash:ip,port`); `method` (`hash`, `bitmap`, `list`) and `dims`
 *   split from it;
 * - `revision`: set type revision; `header`: creation options in printed order
 *   (`family inet`, `hashsize 1024`, `maxelem 65536`, `range 0-65535`, `counters` → null
 *   value, …) with `family` pulled out (`inet`/`inet6`, null for bitmap:port/list:set);
 * - `sizeInMemory` in bytes; `references`: how many iptables rules/sets refer to it;
 * - `numberOfEntries`: null when the ipset version does not print it (before 6.38? the
 *   line is absent in old output);
 * - `members`: null for `ipset list -t` (terse) output, which has no `Members:` section.
 */
export interface IpsetSet {
  readonly name: string;
  readonly type: string;
  readonly method: string;
  readonly dims: readonly IpsetDimension[];
  readonly revision: number | null;
  readonly family: 'inet' | 'inet6' | null;
  readonly header: ReadonlyArray<readonly [string, string | null]>;
  readonly sizeInMemory: number | null;
  readonly references: number | null;
  readonly numberOfEntries: number | null;
  readonly members: readonly IpsetMember[] | null;
  readonly line: number;
}

/**
 * kube-proxy IPVS-mode set names and the types it creates them with (`ipsetInfo` in
 * pkg/proxy/ipvs/proxier.go, names in pkg/proxy/ipvs/ipset.go; KUBE-IPVS-IPS since about
 * v1.29). Every set is created with the `comment` option. IPv6 sets of a dual-stack
 * proxier are named with `KUBE-6-` instead of `KUBE-` (cut to 31 characters).
 */
export const KUBE_IPSETS = {
  'KUBE-CLUSTER-IP': 'hash:ip,port',
  'KUBE-LOOP-BACK': 'hash:ip,port,ip',
  'KUBE-EXTERNAL-IP': 'hash:ip,port',
  'KUBE-EXTERNAL-IP-LOCAL': 'hash:ip,port',
  'KUBE-LOAD-BALANCER': 'hash:ip,port',
  'KUBE-LOAD-BALANCER-LOCAL': 'hash:ip,port',
  'KUBE-LOAD-BALANCER-FW': 'hash:ip,port',
  'KUBE-LOAD-BALANCER-SOURCE-IP': 'hash:ip,port,ip',
  'KUBE-LOAD-BALANCER-SOURCE-CIDR': 'hash:ip,port,net',
  'KUBE-NODE-PORT-TCP': 'bitmap:port',
  'KUBE-NODE-PORT-LOCAL-TCP': 'bitmap:port',
  'KUBE-NODE-PORT-UDP': 'bitmap:port',
  'KUBE-NODE-PORT-LOCAL-UDP': 'bitmap:port',
  'KUBE-NODE-PORT-SCTP-HASH': 'hash:ip,port',
  'KUBE-NODE-PORT-LOCAL-SCTP-HASH': 'hash:ip,port',
  'KUBE-HEALTH-CHECK-NODE-PORT': 'bitmap:port',
  'KUBE-IPVS-IPS': 'hash:ip',
} as const satisfies Record<string, string>;
