/**
 * Lab: a node-like network namespace (uplink veth, a Cilium-style lxc veth into a pod
 * namespace, cilium_host/cilium_net, kube-ipvs0 holding ClusterIP /32s, blackhole /
 * throw / unreachable / prohibit / multipath routes, a route in the default table),
 * listed by the real `ip -j addr` and `ip -j route show table all`, parsed, and
 * `routeLookup` checked against the kernel's own answer (`ip -j route get`, a FIB lookup
 * that sends no packet).
 *
 * kube-ipvs0 is a dummy in kube-proxy; kernels built without CONFIG_DUMMY (like the one
 * this lab was written on) get a bridge with no ports instead: same role for the test
 * (a down, NOARP device whose /32 addresses land in the local table).
 */
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { labAvailable } from '../helpers/lab.js';
import { localAddresses, routeLookup, type NetInterface, type Route } from '../../src/model/iproute.js';
import { parseIpAddrJson, parseIpRouteJson } from '../../src/parsers/ip-json.js';

const NODE = `nodescope-ipnode-${process.pid}`;
const POD = `nodescope-ippod-${process.pid}`;
const OUTSIDE = `nodescope-ipout-${process.pid}`;

function run(argv: readonly string[], allowFail = false): { stdout: string; stderr: string; status: number | null } {
  const r = spawnSync(argv[0]!, argv.slice(1), { encoding: 'utf8', timeout: 20_000 });
  if (!allowFail && r.status !== 0) throw new Error(`${argv.join(' ')} → ${r.status}: ${r.stderr}`);
  return { stdout: r.stdout, stderr: r.stderr, status: r.status };
}
const ip = (ns: string, args: string): string => run(['ip', '-n', ns, ...args.split(' ')]).stdout;

const labOk = labAvailable(['ip']);
let dummyKind = 'dummy';

describe.runIf(labOk)('ip -j against the kernel', () => {
  let ifaces: NetInterface[] = [];
  let detailed: NetInterface[] = [];
  let routes: Route[] = [];

  beforeAll(() => {
    for (const ns of [NODE, POD, OUTSIDE]) {
      run(['ip', 'netns', 'del', ns], true);
      run(['ip', 'netns', 'add', ns]);
      ip(ns, 'link set lo up');
    }
    // Uplink: node eth0 ↔ outside gw0.
    ip(NODE, `link add eth0 type veth peer name gw0 netns ${OUTSIDE}`);
    ip(OUTSIDE, 'addr add 192.168.49.1/24 dev gw0');
    ip(OUTSIDE, 'link set gw0 up');
    ip(NODE, 'addr add 192.168.49.2/24 dev eth0');
    ip(NODE, 'addr add fd00:49::2/64 dev eth0 nodad');
    ip(NODE, 'link set eth0 up');
    // A Cilium-style pod: lxc veth on the node, eth0 in the pod, a /32 route to it.
    ip(NODE, `link add lxc12ab34cd type veth peer name eth0 netns ${POD}`);
    ip(NODE, 'link set lxc12ab34cd up');
    ip(POD, 'addr add 10.244.0.23/32 dev eth0');
    ip(POD, 'link set eth0 up');
    ip(NODE, 'route add 10.244.0.23 dev lxc12ab34cd scope link');
    ip(NODE, 'route add fd00:244::/64 dev lxc12ab34cd');
    ip(NODE, 'link add cilium_host type veth peer name cilium_net');
    ip(NODE, 'link set cilium_host up');
    ip(NODE, 'link set cilium_net up');
    ip(NODE, 'addr add 10.244.0.1/32 dev cilium_host scope link');
    // kube-ipvs0: a dummy when the kernel has one, else an empty bridge.
    if (run(['ip', '-n', NODE, 'link', 'add', 'kube-ipvs0', 'type', 'dummy'], true).status !== 0) {
      dummyKind = 'bridge';
      ip(NODE, 'link add kube-ipvs0 type bridge');
    }
    ip(NODE, 'link set kube-ipvs0 arp off');
    ip(NODE, 'addr add 10.96.0.10/32 dev kube-ipvs0');
    ip(NODE, 'addr add 10.96.0.1/32 dev kube-ipvs0');
    // Routes of every type, in main, default and a table no rule points at.
    ip(NODE, 'route add default via 192.168.49.1');
    ip(NODE, 'route add 10.244.1.0/24 via 192.168.49.3');
    ip(NODE, 'route add blackhole 10.244.9.0/24');
    ip(NODE, 'route add throw 10.250.0.0/16');
    ip(NODE, 'route add 10.250.0.0/16 via 192.168.49.77 table default');
    ip(NODE, 'route add unreachable 10.251.0.0/16');
    ip(NODE, 'route add prohibit 10.252.0.0/16');
    ip(NODE, 'route add 10.253.0.0/16 nexthop via 192.168.49.4 weight 1 nexthop via 192.168.49.5 weight 2');
    ip(NODE, 'route add 10.5.0.0/16 via 192.168.49.6 table 100');
    ip(NODE, 'route add 10.96.0.0/12 via 192.168.49.9 metric 50');
    ip(NODE, '-6 route add default via fd00:49::1');

    const addr = parseIpAddrJson(ip(NODE, '-j addr'), 'ip -j addr');
    const addrD = parseIpAddrJson(ip(NODE, '-j -d addr'), 'ip -j -d addr');
    const rt = parseIpRouteJson(ip(NODE, '-j route show table all'), 'ip -j route show table all');
    expect([...addr.diagnostics, ...addrD.diagnostics, ...rt.diagnostics]).toEqual([]);
    ifaces = addr.value;
    detailed = addrD.value;
    routes = rt.value;
  });

  afterAll(() => {
    for (const ns of [NODE, POD, OUTSIDE]) run(['ip', 'netns', 'del', ns], true);
  });

  it('recognises the node interfaces by name, and by kind with -d', () => {
    const role = (list: NetInterface[], n: string) => list.find((i) => i.ifname === n)?.role;
    expect(['lo', 'eth0', 'lxc12ab34cd', 'cilium_host', 'cilium_net', 'kube-ipvs0'].map((n) => role(ifaces, n))).toEqual([
      'loopback', 'other', 'cilium-endpoint', 'cilium-host', 'cilium-net', 'kube-ipvs0',
    ]);
    expect(role(detailed, 'eth0')).toBe('veth');
    expect(detailed.find((i) => i.ifname === 'kube-ipvs0')!.infoKind).toBe(dummyKind);
    const lxc = ifaces.find((i) => i.ifname === 'lxc12ab34cd')!;
    expect(lxc.linkNetnsid).not.toBeNull(); // its peer lives in the pod namespace
    expect(ifaces.find((i) => i.ifname === 'cilium_host')!.link).toBe('cilium_net');
    expect(ifaces.find((i) => i.ifname === 'kube-ipvs0')!.flags).toContain('NOARP');
  });

  it('localAddresses has the ClusterIPs on kube-ipvs0 and the node addresses', () => {
    const local = localAddresses(ifaces);
    expect(local.filter((a) => a.role === 'kube-ipvs0').map((a) => `${a.address}/${a.prefixlen}`).sort()).toEqual(['10.96.0.1/32', '10.96.0.10/32']);
    expect(local.some((a) => a.address === 'fd00:49::2' && a.ifname === 'eth0')).toBe(true);
    expect(routes.some((r) => r.table === 'local' && r.type === 'local' && r.dst === '10.96.0.10' && r.dev === 'kube-ipvs0')).toBe(true);
  });

  // The kernel's errno for each outcome: no route at all (or IPv6's unreachable default)
  // is ENETUNREACH, an IPv4 `unreachable` route EHOSTUNREACH, blackhole EINVAL, prohibit EACCES.
  const ERRORS: Record<string, string> = {
    'Network is unreachable': 'no-route',
    'No route to host': 'unreachable',
    'Invalid argument': 'blackhole',
    'Permission denied': 'prohibit',
  };

  it.each([
    '10.96.0.10', '10.96.0.1', '10.96.5.5', '127.0.0.5', '192.168.49.2', '192.168.49.255', '192.168.49.50',
    '10.244.0.23', '10.244.0.1', '10.244.1.9', '10.244.9.9', '10.250.1.1', '10.251.1.1', '10.252.1.1',
    '10.253.1.1', '10.5.1.1', '8.8.8.8', 'fd00:49::2', 'fd00:49::9', 'fd00:244::5', '2001:db8::1', '::1',
  ])('routeLookup(%s) agrees with `ip route get`', (dest) => {
    const mine = routeLookup(routes, dest);
    const kernel = run(['ip', '-n', NODE, '-j', 'route', 'get', dest], true);
    if (kernel.status !== 0) {
      const err = Object.keys(ERRORS).find((e) => kernel.stderr.includes(e));
      expect(err, kernel.stderr).toBeDefined();
      const want = ERRORS[err!]!;
      if (want === 'no-route') expect(mine === null || mine.route.type === 'unreachable', JSON.stringify(mine)).toBe(true);
      else expect(mine?.route.type).toBe(want);
      return;
    }
    const [got] = JSON.parse(kernel.stdout) as { type?: string; gateway?: string; dev: string; table?: string }[];
    expect(mine).not.toBeNull();
    const type = got!.type ?? 'unicast';
    expect(mine!.route.type).toBe(type);
    if (type !== 'unicast') return;
    expect(mine!.table).toBe(got!.table ?? 'main');
    const hops = mine!.route.nexthops ?? [{ gateway: mine!.route.gateway, dev: mine!.route.dev }];
    // For multipath the kernel picks one nexthop (by hash); it must be one of the route's.
    expect(hops.map((h) => [h.gateway ?? null, h.dev])).toContainEqual([got!.gateway ?? null, got!.dev]);
  });
});
