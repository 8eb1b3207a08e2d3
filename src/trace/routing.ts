/**
 * The routing questions step mode asks of the node's addresses and routes: is this
 * address the node's own, which way does a packet go (local delivery, forward, an error
 * route), what type does the kernel give an address (`-m addrtype`, `fib daddr type`),
 * and which source address does MASQUERADE pick.
 *
 * Routing is the default policy rules only (local, main, default tables): `ip rule`
 * additions, marks and TOS in the route lookup are not modelled (see
 * `src/model/iproute.ts` `routeLookup`).
 */
import { localAddresses, parseIp, routeLookup, type NetInterface, type Route, type RouteType } from '../model/iproute.js';
import type { AddressFamily as PacketFamily } from '../net/address.js';

/** The node's network as step mode needs it: interfaces with addresses, and routes. */
export interface NetView {
  readonly interfaces: readonly NetInterface[];
  readonly routes: readonly Route[];
}

/** True when `ip` is an address of one of the node's interfaces. */
export function isOwnAddress(net: NetView, ip: string): boolean {
  const want = parseIp(ip);
  if (!want) return false;
  return localAddresses(net.interfaces).some((a) => {
    const have = parseIp(a.address);
    return have !== null && have.family === want.family && have.value === want.value;
  });
}

/**
 * The kernel's choice of source address for a packet leaving through `dev` towards
 * `nexthop` (net/ipv4/devinet.c `inet_select_addr` with scope universe, as MASQUERADE
 * and unbound sockets use it): the first primary global address of `dev` in the same
 * subnet as `nexthop`, else the first primary global address of `dev`, else the first
 * primary global address of any interface in interface order. Null when there is none.
 */
export function selectSourceAddress(net: NetView, dev: string | null, nexthop: string | null, family: PacketFamily): string | null {
  const fam = family === 'ipv4' ? 'inet' : 'inet6';
  const usable = (i: NetInterface) => i.addresses.filter((a) => a.family === fam && a.scope === 'global' && !a.flags.includes('secondary') && !a.flags.includes('tentative'));
  const out = dev === null ? undefined : net.interfaces.find((i) => i.ifname === dev);
  if (out) {
    const addrs = usable(out);
    const hop = nexthop === null ? null : parseIp(nexthop);
    if (hop) {
      for (const a of addrs) {
        const mine = parseIp(a.local);
        if (!mine || mine.family !== hop.family) continue;
        const bits = BigInt(mine.family === 'inet' ? 32 : 128);
        const shift = bits - BigInt(a.prefixlen);
        if (mine.value >> shift === hop.value >> shift) return a.local;
      }
    }
    if (addrs[0]) return addrs[0].local;
  }
  for (const i of net.interfaces) {
    const a = usable(i)[0];
    if (a) return a.local;
  }
  return null;
}


/**
 * A routing decision for destination `dst`.
 * - `kind`: `local` (deliver to this host), `unicast` (send out `dev`), an error route
 *   type (`blackhole`, `unreachable`, `prohibit`), `broadcast`/`multicast`/`anycast`/
 *   `nat`/`throw`, or `none` when no table has a route (the kernel answers ENETUNREACH);
 * - `nexthop`: the gateway, or `dst` itself when the route is on-link;
 * - `text`: the route as `ip route` would print it.
 */
export interface RouteDecision {
  readonly kind: RouteType | 'none';
  readonly dev: string | null;
  readonly gateway: string | null;
  readonly nexthop: string | null;
  readonly table: string | null;
  readonly prefsrc: string | null;
  readonly text: string;
}

/** The route the kernel picks for `dst` (default policy rules), as a {@link RouteDecision}. */
export function routeDecision(net: NetView, dst: string): RouteDecision {
  const r = routeLookup(net.routes, dst);
  if (!r) return { kind: 'none', dev: null, gateway: null, nexthop: null, table: null, prefsrc: null, text: `no route to ${dst}` };
  const route = r.route;
  const multipath = route.nexthops && route.nexthops.length > 0 ? route.nexthops[0] : null;
  const gateway = route.gateway ?? multipath?.gateway ?? null;
  const dev = route.dev ?? multipath?.dev ?? null;
  const parts = [route.type === 'unicast' ? '' : `${route.type} `, route.dst, gateway ? ` via ${gateway}` : '', dev ? ` dev ${dev}` : '', r.table === 'main' ? '' : ` table ${r.table}`];
  return {
    kind: route.type,
    dev,
    gateway,
    nexthop: route.type === 'unicast' ? (gateway ?? dst) : null,
    table: r.table,
    prefsrc: route.prefsrc,
    text: parts.join('').trim(),
  };
}

/**
 * The address type the kernel gives `ip` (net/ipv4/fib_frontend.c `__inet_dev_addr_type`):
 * the type of the local-table route covering it (`local`, `broadcast`, …), else
 * `multicast` for 224.0.0.0/4 and ff00::/8, else `unicast`. Upper case is iptables'
 * `addrtype` spelling, lower case nft's `fib … type`.
 */
export function addressType(net: NetView, ip: string): RouteType {
  const local = routeLookup(net.routes, ip, ['local']);
  if (local) return local.route.type;
  const v = parseIp(ip);
  if (v && v.family === 'inet' && v.value >> 28n === 0xen) return 'multicast';
  if (v && v.family === 'inet6' && v.value >> 120n === 0xffn) return 'multicast';
  if (v && v.family === 'inet' && v.value === 0xffffffffn) return 'broadcast';
  return 'unicast';
}

/**
 * True when interface `name` matches an iptables interface pattern (`-i cali+`: a
 * trailing `+` matches any suffix) or an nft wildcard (`iifname "cali*"`).
 */
export function interfaceMatches(pattern: string, name: string | null): boolean {
  if (name === null) return false;
  if (pattern.endsWith('+') || pattern.endsWith('*')) return name.startsWith(pattern.slice(0, -1));
  return pattern === name;
}

/** The interface `name`, or undefined. */
export function findInterface(net: NetView, name: string | null): NetInterface | undefined {
  return name === null ? undefined : net.interfaces.find((i) => i.ifname === name);
}

/** The ifindex of interface `name` (for `meta iif`), or null. */
export function ifindexOf(net: NetView, name: string | null): number | null {
  return findInterface(net, name)?.ifindex ?? null;
}

/** All addresses of the node, as text (for reasons shown to the user). */
export function ownAddressList(net: NetView): string[] {
  return localAddresses(net.interfaces).map((a) => a.address);
}
