/**
 * Interfaces, addresses and routes as iproute2's JSON output (`ip -j addr`,
 * `ip -j [-d] link`, `ip -j route show table all`) describes them, and the two questions
 * the step engine asks of them: "is this address local?" and "which route does the
 * kernel pick for this destination?".
 *
 * Field names follow iproute2's JSON keys (`ifname`, `operstate`, `link_type`,
 * `prefsrc`, …) lower-camel-cased. Source of the shapes: iproute2 6.1 `ip/ipaddress.c`
 * and `ip/iproute.c` (print_linkinfo, print_addrinfo, print_route), checked against the
 * real `ip` of the lab.
 */

/** Address family as iproute2 prints it. */
export type IpFamily = 'inet' | 'inet6';

/** Route/address scope names (iproute2 `rt_scopes`): global = universe (0), site 200, link 253, host 254, nowhere 255. */
export type RouteScope = 'global' | 'site' | 'link' | 'host' | 'nowhere';

/**
 * Route types (`rtm_type`, iproute2 `rtnl_rtntype_n2a`): `unicast` (the default, not
 * printed), `local` (delivered to this host), `broadcast`, `multicast`, `anycast`,
 * `blackhole` (silently dropped, EINVAL to a local sender), `unreachable` (ICMP
 * net-unreachable, ENETUNREACH), `prohibit` (ICMP admin-prohibited, EACCES), `throw`
 * (continue with the next policy rule), `nat`.
 */
export type RouteType =
  | 'unicast'
  | 'local'
  | 'broadcast'
  | 'multicast'
  | 'anycast'
  | 'blackhole'
  | 'unreachable'
  | 'prohibit'
  | 'throw'
  | 'nat';

/** Kernel operational state (RFC 2863 `IF_OPER_*`). */
export type OperState = 'UNKNOWN' | 'NOTPRESENT' | 'DOWN' | 'LOWERLAYERDOWN' | 'TESTING' | 'DORMANT' | 'UP';

/**
 * What an interface is for on a Kubernetes node, from its name (and `info_kind` when
 * listed with `-d`):
 * - `loopback`: `lo`;
 * - `kube-ipvs0`: kube-proxy IPVS mode's dummy holding every ClusterIP as a /32
 *   (pkg/proxy/ipvs `DefaultDummyDevice`);
 * - `nodelocaldns`: NodeLocal DNSCache's dummy (169.254.20.10);
 * - `cilium-host` / `cilium-net`: Cilium's veth pair to the host stack;
 *   `cilium-tunnel`: `cilium_vxlan` / `cilium_geneve`; `cilium-endpoint`: `lxc*` veths
 *   (one per pod, `lxc_health` for the health endpoint);
 * - `calico-endpoint`: `cali*` veths; `calico-tunnel`: `tunl0`, `vxlan.calico`,
 *   `vxlan-v6.calico`, `wireguard.cali`;
 * - `flannel`: `flannel.N` (VXLAN) / `flannel-wg`; `cni-bridge`: `cni0`, `cbr0`,
 *   `kube-bridge`; `docker-bridge`: `docker0`;
 * - `veth`, `dummy`, `bridge`, `tunnel` (vxlan/geneve/ipip/gre/wireguard): by `info_kind`
 *   when only `-d` tells; `other` otherwise (a physical NIC when listed without `-d`).
 */
export type InterfaceRole =
  | 'loopback'
  | 'kube-ipvs0'
  | 'nodelocaldns'
  | 'cilium-host'
  | 'cilium-net'
  | 'cilium-tunnel'
  | 'cilium-endpoint'
  | 'calico-endpoint'
  | 'calico-tunnel'
  | 'flannel'
  | 'cni-bridge'
  | 'docker-bridge'
  | 'veth'
  | 'dummy'
  | 'bridge'
  | 'tunnel'
  | 'other';

/**
 * One `addr_info` entry.
 * - `local`: the address; `prefixlen` in bits; `address`: the peer of a point-to-point
 *   address, else null; `broadcast`: IPv4 broadcast, else null;
 * - `scope`: null when iproute2 printed a number it has no name for;
 * - `flags`: the boolean keys iproute2 sets (`secondary`, `tentative`, `dadfailed`,
 *   `deprecated`, `dynamic`, `noprefixroute`, `nodad`, `mngtmpaddr`, …);
 * - `validLifeTime` / `preferredLifeTime` in seconds (4294967295 = forever);
 * - `extra`: every other key, as it was.
 */
export interface InterfaceAddress {
  readonly family: IpFamily;
  readonly local: string;
  readonly prefixlen: number;
  readonly address: string | null;
  readonly broadcast: string | null;
  readonly scope: RouteScope | null;
  readonly label: string | null;
  readonly flags: readonly string[];
  readonly validLifeTime: number | null;
  readonly preferredLifeTime: number | null;
  readonly extra: Readonly<Record<string, unknown>>;
}

/**
 * One interface of `ip -j addr` / `ip -j link`.
 * - `flags`: link flags (`UP`, `LOWER_UP`, `NOARP`, `NO-CARRIER`, …); `mtu` in bytes;
 * - `linkType`: `ether`, `loopback`, `none`, `ipip`, …; `address`/`broadcast`: link-layer;
 * - `link`: the peer's name when it is in the same namespace (veth), `linkIndex` its
 *   ifindex when iproute2 cannot name it, `linkNetnsid` the peer's namespace id (a pod's
 *   veth seen from the host);
 * - `master`: the bridge/bond it is enslaved to;
 * - `infoKind`: `linkinfo.info_kind` (`veth`, `dummy`, `bridge`, `vxlan`, …), only with `-d`;
 * - `role`: derived from name and kind, see {@link InterfaceRole};
 * - `extra`: every key not modelled (`qdisc`, `group`, `txqlen`, the rest of `linkinfo`, …).
 */
export interface NetInterface {
  readonly ifindex: number;
  readonly ifname: string;
  readonly flags: readonly string[];
  readonly mtu: number | null;
  readonly operstate: OperState | null;
  readonly linkType: string | null;
  readonly address: string | null;
  readonly broadcast: string | null;
  readonly link: string | null;
  readonly linkIndex: number | null;
  readonly linkNetnsid: number | null;
  readonly master: string | null;
  readonly infoKind: string | null;
  readonly role: InterfaceRole;
  readonly addresses: readonly InterfaceAddress[];
  readonly extra: Readonly<Record<string, unknown>>;
}

/** One nexthop of a multipath route; `weight` unitless (iproute2 prints weight = hops + 1). */
export interface RouteNexthop {
  readonly gateway: string | null;
  readonly dev: string | null;
  readonly weight: number | null;
  readonly flags: readonly string[];
  readonly extra: Readonly<Record<string, unknown>>;
}

/**
 * One route of `ip -j route show table all`.
 * - `type`: `unicast` when iproute2 printed no `type` key;
 * - `family`: from the addresses in the route (a `default` route without any address is
 *   IPv6 when iproute2 printed `pref`, which it does for IPv6 only), null when unknowable;
 * - `dst`: `default` or a prefix as printed (`10.0.0.0/24`; host routes without `/32`);
 * - `table`: `main` when iproute2 printed no `table` key; `local`, `default`, or a number;
 * - `protocol`: null when not printed (RTPROT_BOOT); `scope`: null when not printed
 *   (universe/global);
 * - `metric`: the route priority, null when not printed (0 for IPv4);
 * - `flags`: `onlink`, `linkdown`, `dead`, `pervasive`, …;
 * - `nexthops`: multipath nexthops, else null;
 * - `pref`: IPv6 router preference (`low`/`medium`/`high`), else null;
 * - `extra`: every key not modelled (`via`, `expires`, `metrics`, `encap`, …).
 */
export interface Route {
  readonly type: RouteType;
  readonly family: IpFamily | null;
  readonly dst: string;
  readonly gateway: string | null;
  readonly dev: string | null;
  readonly table: string;
  readonly protocol: string | null;
  readonly scope: RouteScope | null;
  readonly prefsrc: string | null;
  readonly metric: number | null;
  readonly flags: readonly string[];
  readonly nexthops: readonly RouteNexthop[] | null;
  readonly pref: string | null;
  readonly extra: Readonly<Record<string, unknown>>;
}

/** A parsed IP address: `value` is the address as a 32-bit (inet) or 128-bit (inet6) integer. */
export interface IpValue {
  readonly family: IpFamily;
  readonly value: bigint;
}

/** One address configured on this host (see {@link localAddresses}). */
export interface LocalAddress {
  readonly address: string;
  readonly family: IpFamily;
  readonly prefixlen: number;
  readonly ifname: string;
  readonly role: InterfaceRole;
  readonly scope: RouteScope | null;
  /** IPv6 duplicate address detection has not finished: the kernel does not accept traffic to it yet. */
  readonly tentative: boolean;
}

/**
 * The answer of {@link routeLookup}: the route the kernel would use and the table it was
 * found in. `route.type` says what happens: `local` (delivered to this host),
 * `unicast` (forwarded via `gateway`/`dev`), `broadcast`/`multicast`, or an error route
 * (`blackhole`, `unreachable`, `prohibit`). `tablesTried` lists the tables consulted in
 * rule order (a `throw` route moves on to the next).
 */
export interface RouteLookupResult {
  readonly route: Route;
  readonly table: string;
  readonly tablesTried: readonly string[];
}

/**
 * Parses an IPv4 dotted quad or an IPv6 address (with `::`, embedded IPv4, no zone id)
 * to an integer. Returns null for anything else (a name, a prefix, `default`).
 */
export function parseIp(text: string): IpValue | null {
  if (/^\d{1,3}(\.\d{1,3}){3}$/.test(text)) {
    const parts = text.split('.').map(Number);
    if (parts.some((p) => p > 255)) return null;
    return { family: 'inet', value: parts.reduce((acc, p) => (acc << 8n) | BigInt(p), 0n) };
  }
  if (!/^[0-9a-fA-F:.]+$/.test(text) || !text.includes(':')) return null;
  let head = text;
  const lastColon = text.lastIndexOf(':');
  if (text.slice(lastColon + 1).includes('.')) {
    // Embedded IPv4 (`::ffff:10.0.0.1`): rewrite the last 32 bits as two hex groups.
    const v4 = parseIp(text.slice(lastColon + 1));
    if (!v4 || v4.family !== 'inet') return null;
    head = `${text.slice(0, lastColon + 1)}${(v4.value >> 16n).toString(16)}:${(v4.value & 0xffffn).toString(16)}`;
  }
  const double = head.split('::');
  if (double.length > 2) return null;
  const groups = (s: string): bigint[] | null => {
    if (s === '') return [];
    const g = s.split(':');
    if (g.some((x) => !/^[0-9a-fA-F]{1,4}$/.test(x))) return null;
    return g.map((x) => BigInt(`0x${x}`));
  };
  const left = groups(double[0]!);
  const right = double.length === 2 ? groups(double[1]!) : [];
  if (!left || !right) return null;
  const have = left.length + right.length;
  if (double.length === 1 ? have !== 8 : have > 7) return null;
  const all = [...left, ...Array<bigint>(8 - have).fill(0n), ...right];
  return { family: 'inet6', value: all.reduce((acc, g) => (acc << 16n) | g, 0n) };
}

/**
 * Parses a route destination (`default`, `10.0.0.0/24`, `10.96.0.10`, `fd00::/64`) into
 * family, network integer and prefix length. `family` resolves `default`. Null when
 * malformed or when `default` has no known family.
 */
export function parsePrefix(dst: string, family: IpFamily | null): { family: IpFamily; value: bigint; length: number } | null {
  if (dst === 'default') return family ? { family, value: 0n, length: 0 } : null;
  const [addr, len, extra] = dst.split('/');
  if (extra !== undefined || addr === undefined) return null;
  const ip = parseIp(addr);
  if (!ip) return null;
  const max = ip.family === 'inet' ? 32 : 128;
  const length = len === undefined ? max : /^\d+$/.test(len) ? Number(len) : NaN;
  if (!(length >= 0 && length <= max)) return null;
  return { family: ip.family, value: ip.value, length };
}

function inPrefix(ip: IpValue, p: { family: IpFamily; value: bigint; length: number }): boolean {
  if (ip.family !== p.family) return false;
  const bits = BigInt(ip.family === 'inet' ? 32 : 128);
  const shift = bits - BigInt(p.length);
  return ip.value >> shift === p.value >> shift;
}

/**
 * The kernel's default policy rules (`ip rule`: 0 local, 32766 main, 32767 default), the
 * order {@link routeLookup} consults tables in.
 */
export const DEFAULT_RULE_TABLES: readonly string[] = ['local', 'main', 'default'];

/**
 * Which route the kernel picks for destination `ip`: within each table of `tables`
 * (default {@link DEFAULT_RULE_TABLES}, the default policy rules), the longest prefix
 * that contains `ip` wins, ties going to the lowest metric, then to the first listed
 * (iproute2 lists in kernel FIB order). A `throw` route continues with the next table.
 * Routes whose nexthops are all `dead` are skipped. Returns null when no table has a
 * route (the kernel answers ENETUNREACH) or `ip` is not an address. Policy routing
 * beyond the default rules (`ip rule` additions, marks, TOS) is not modelled.
 */
export function routeLookup(
  routes: readonly Route[],
  ip: string,
  tables: readonly string[] = DEFAULT_RULE_TABLES,
): RouteLookupResult | null {
  const dest = parseIp(ip);
  if (!dest) return null;
  const tried: string[] = [];
  for (const table of tables) {
    tried.push(table);
    let best: { route: Route; length: number } | null = null;
    for (const r of routes) {
      if (r.table !== table || r.flags.includes('dead')) continue;
      if (r.nexthops && r.nexthops.length > 0 && r.nexthops.every((n) => n.flags.includes('dead'))) continue;
      const p = parsePrefix(r.dst, r.family);
      if (!p || !inPrefix(dest, p)) continue;
      if (
        !best ||
        p.length > best.length ||
        (p.length === best.length && (r.metric ?? 0) < (best.route.metric ?? 0))
      ) {
        best = { route: r, length: p.length };
      }
    }
    if (best && best.route.type !== 'throw') return { route: best.route, table, tablesTried: tried };
  }
  return null;
}

/**
 * True when the kernel delivers packets for `ip` to this host: the local table holds a
 * `local` route covering it (interface addresses, kube-ipvs0 ClusterIPs, all of
 * 127.0.0.0/8). This is the kernel's own test (`fib_lookup` → RTN_LOCAL), stricter than
 * "an interface carries this address" for tentative IPv6 addresses.
 */
export function isLocalDestination(routes: readonly Route[], ip: string): boolean {
  return routeLookup(routes, ip, ['local'])?.route.type === 'local';
}

/**
 * Every address configured on the interfaces, in interface order, as
 * {@link LocalAddress}es. Includes kube-ipvs0 /32s (role `kube-ipvs0`) and link-local
 * and loopback addresses; callers filter by `scope`/`role` as they need.
 */
export function localAddresses(interfaces: readonly NetInterface[]): LocalAddress[] {
  return interfaces.flatMap((i) =>
    i.addresses.map((a) => ({
      address: a.local,
      family: a.family,
      prefixlen: a.prefixlen,
      ifname: i.ifname,
      role: i.role,
      scope: a.scope,
      tentative: a.flags.includes('tentative'),
    })),
  );
}

const ROLE_BY_NAME: ReadonlyArray<readonly [RegExp, InterfaceRole]> = [
  [/^lo$/, 'loopback'],
  [/^kube-ipvs0$/, 'kube-ipvs0'],
  [/^nodelocaldns$/, 'nodelocaldns'],
  [/^cilium_host$/, 'cilium-host'],
  [/^cilium_net$/, 'cilium-net'],
  [/^cilium_(vxlan|geneve|ipip[46]?|wg\d*)$/, 'cilium-tunnel'],
  [/^lxc/, 'cilium-endpoint'],
  [/^cali/, 'calico-endpoint'],
  [/^(tunl0|vxlan\.calico|vxlan-v6\.calico|wireguard\.cali|wg-v6\.cali)$/, 'calico-tunnel'],
  [/^flannel[.-]/, 'flannel'],
  [/^(cni0|cbr0|kube-bridge)$/, 'cni-bridge'],
  [/^docker0$/, 'docker-bridge'],
];

const ROLE_BY_KIND: Readonly<Record<string, InterfaceRole>> = {
  veth: 'veth',
  dummy: 'dummy',
  bridge: 'bridge',
  vxlan: 'tunnel',
  geneve: 'tunnel',
  ipip: 'tunnel',
  gre: 'tunnel',
  ip6tnl: 'tunnel',
  wireguard: 'tunnel',
};

/** The {@link InterfaceRole} of an interface from its name, `link_type` and `info_kind`. */
export function interfaceRole(ifname: string, linkType: string | null, infoKind: string | null): InterfaceRole {
  if (linkType === 'loopback') return 'loopback';
  for (const [re, role] of ROLE_BY_NAME) if (re.test(ifname)) return role;
  return (infoKind && ROLE_BY_KIND[infoKind]) || 'other';
}
