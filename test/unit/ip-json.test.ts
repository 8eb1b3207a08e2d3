import { describe, expect, it } from 'vitest';
import {
  isLocalDestination,
  localAddresses,
  parseIp,
  parsePrefix,
  routeLookup,
} from '../../src/model/iproute.js';
import { formatIpAddrJson, formatIpRouteJson, parseIpAddrJson, parseIpRouteJson } from '../../src/parsers/ip-json.js';

// ---- builders: iproute2 JSON objects, shaped as `ip -j addr` / `ip -j route` print them ----
type J = Record<string, unknown>;
let nextIndex = 1;
const inet = (local: string, prefixlen: number, o: J = {}): J => ({
  family: local.includes(':') ? 'inet6' : 'inet',
  local,
  prefixlen,
  scope: 'global',
  valid_life_time: 4294967295,
  preferred_life_time: 4294967295,
  ...o,
});
const link = (ifname: string, addrs: J[] = [], o: J = {}): J => ({
  ifindex: nextIndex++,
  ifname,
  flags: ['BROADCAST', 'MULTICAST', 'UP', 'LOWER_UP'],
  mtu: 1500,
  qdisc: 'noqueue',
  operstate: 'UP',
  group: 'default',
  txqlen: 1000,
  link_type: 'ether',
  address: '02:42:ac:11:00:02',
  broadcast: 'ff:ff:ff:ff:ff:ff',
  ...o,
  addr_info: addrs,
});
const route = (dst: string, o: J = {}): J => ({ dst, ...o, flags: (o.flags as string[] | undefined) ?? [] });
const local = (dst: string, dev: string): J =>
  route(dst, { type: 'local', dev, table: 'local', protocol: 'kernel', scope: 'host', prefsrc: dst.split('/')[0] });
const json = (items: J[]): string => `${JSON.stringify(items)}\n`;

/** A kube-proxy IPVS-mode node with Calico, and a Cilium endpoint, as `ip -j addr` lists it. */
function nodeAddrs(): J[] {
  nextIndex = 1;
  return [
    link('lo', [inet('127.0.0.1', 8, { scope: 'host', label: 'lo' }), inet('::1', 128, { scope: 'host' })], {
      flags: ['LOOPBACK', 'UP', 'LOWER_UP'], link_type: 'loopback', operstate: 'UNKNOWN', mtu: 65536,
    }),
    link('eth0', [inet('192.168.49.2', 24, { broadcast: '192.168.49.255', label: 'eth0' }), inet('fe80::42:acff:fe11:2', 64, { scope: 'link' })]),
    link('docker0', [inet('172.17.0.1', 16, { label: 'docker0' })], { operstate: 'DOWN' }),
    link('kube-ipvs0', [inet('10.96.0.10', 32, { label: 'kube-ipvs0' }), inet('10.96.0.1', 32, { label: 'kube-ipvs0' })], {
      flags: ['BROADCAST', 'NOARP'], operstate: 'DOWN', qdisc: 'noop',
    }),
    link('tunl0', [inet('10.244.235.192', 32, { label: 'tunl0' })], { link_type: 'ipip', flags: ['NOARP', 'UP', 'LOWER_UP'], operstate: 'UNKNOWN' }),
    link('cali3f9d8c2b1a0', [inet('fe80::ecee:eeff:feee:eeee', 64, { scope: 'link' })], { link_netnsid: 2, link_index: 3 }),
    link('cilium_host', [inet('10.0.0.93', 32, { scope: 'link' })], { link: 'cilium_net' }),
    link('lxc9a4d1e27b3c5', [inet('fd00::5', 64, { tentative: true })], { link_netnsid: 0, link_index: 7 }),
    link('veth12', [], { linkinfo: { info_kind: 'veth' } }),
    link('nodelocaldns', [inet('169.254.20.10', 32)], { linkinfo: { info_kind: 'dummy', info_data: {} } }),
  ];
}

/** `ip -j route show table all` for that node, plus policy-relevant extras. */
function nodeRoutes(): J[] {
  return [
    route('default', { gateway: '192.168.49.1', dev: 'eth0', protocol: 'dhcp', metric: 100 }),
    route('default', { gateway: '192.168.49.254', dev: 'eth0', metric: 200 }),
    route('10.96.0.0/12', { gateway: '192.168.49.9', dev: 'eth0' }), // would catch ClusterIPs if local did not come first
    route('10.96.0.10', { gateway: '192.168.49.8', dev: 'eth0' }),
    route('10.244.0.0/16', { dev: 'tunl0', protocol: 'bird', scope: 'link' }),
    route('10.244.235.192/26', { type: 'blackhole', protocol: 'bird' }),
    route('10.250.0.0/16', { type: 'throw' }),
    route('10.250.0.0/16', { gateway: '192.168.49.77', dev: 'eth0', table: 'default' }),
    route('10.251.0.0/16', { type: 'unreachable' }),
    route('10.252.0.0/16', { nexthops: [{ gateway: '192.168.49.3', dev: 'eth0', weight: 1, flags: [] }, { gateway: '192.168.49.4', dev: 'eth0', weight: 2, flags: [] }] }),
    route('192.168.49.0/24', { dev: 'eth0', protocol: 'kernel', scope: 'link', prefsrc: '192.168.49.2' }),
    route('10.5.0.0/16', { gateway: '192.168.49.5', dev: 'eth0', table: '100' }),
    local('10.96.0.10', 'kube-ipvs0'),
    local('10.96.0.1', 'kube-ipvs0'),
    local('127.0.0.0/8', 'lo'),
    local('127.0.0.1', 'lo'),
    local('192.168.49.2', 'eth0'),
    route('192.168.49.255', { type: 'broadcast', dev: 'eth0', table: 'local', protocol: 'kernel', scope: 'link', prefsrc: '192.168.49.2' }),
    route('fd00::/64', { dev: 'lxc9a4d1e27b3c5', protocol: 'kernel', metric: 256, pref: 'medium' }),
    route('fd00::/48', { gateway: 'fd00:ffff::1', dev: 'eth0', metric: 1024, pref: 'medium' }),
    route('default', { type: 'unreachable', dev: 'lo', metric: 4294967295, pref: 'medium' }),
    route('::1', { type: 'local', dev: 'lo', table: 'local', protocol: 'kernel', metric: 0, pref: 'medium' }),
    route('ff00::/8', { type: 'multicast', dev: 'eth0', table: 'local', protocol: 'kernel', metric: 256, pref: 'medium' }),
  ];
}

describe('ip -j addr', () => {
  it('models interfaces and recognises node roles (kube-ipvs0, cilium, calico, lxc, tunnels)', () => {
    const { value, diagnostics } = parseIpAddrJson(json(nodeAddrs()), 'ip -j addr');
    expect(diagnostics).toEqual([]);
    expect(value.map((i) => [i.ifname, i.role])).toEqual([
      ['lo', 'loopback'], ['eth0', 'other'], ['docker0', 'docker-bridge'], ['kube-ipvs0', 'kube-ipvs0'],
      ['tunl0', 'calico-tunnel'], ['cali3f9d8c2b1a0', 'calico-endpoint'], ['cilium_host', 'cilium-host'],
      ['lxc9a4d1e27b3c5', 'cilium-endpoint'], ['veth12', 'veth'], ['nodelocaldns', 'nodelocaldns'],
    ]);
    const ipvs = value.find((i) => i.ifname === 'kube-ipvs0')!;
    expect([ipvs.flags, ipvs.operstate, ipvs.extra.qdisc]).toEqual([['BROADCAST', 'NOARP'], 'DOWN', 'noop']);
    const cali = value.find((i) => i.role === 'calico-endpoint')!;
    expect([cali.linkNetnsid, cali.linkIndex, cali.link]).toEqual([2, 3, null]);
    expect(value.find((i) => i.ifname === 'cilium_host')!.link).toBe('cilium_net');
    expect(value.find((i) => i.ifname === 'nodelocaldns')!.infoKind).toBe('dummy');
  });

  it('localAddresses lists every configured address with its interface role and DAD state', () => {
    const ifaces = parseIpAddrJson(json(nodeAddrs()), 'a').value;
    const all = localAddresses(ifaces);
    expect(all.filter((a) => a.role === 'kube-ipvs0').map((a) => `${a.address}/${a.prefixlen}`)).toEqual(['10.96.0.10/32', '10.96.0.1/32']);
    expect(all.find((a) => a.address === 'fd00::5')).toMatchObject({ family: 'inet6', ifname: 'lxc9a4d1e27b3c5', tentative: true });
    const configured = nodeAddrs().flatMap((l) => (l.addr_info as J[]).map((a) => a.local));
    expect(all.map((a) => a.address)).toEqual(configured);
  });

  it('parse(format(x)) == x, including unmodelled keys (qdisc, linkinfo.info_data) and address flags', () => {
    const x = parseIpAddrJson(json(nodeAddrs()), 'a').value;
    const back = parseIpAddrJson(formatIpAddrJson(x), 'fmt');
    expect(back.diagnostics).toEqual([]);
    expect(back.value).toEqual(x);
    expect(JSON.parse(formatIpAddrJson(x))).toEqual(nodeAddrs().map((l) => ((l.addr_info as J[]).length ? l : (({ addr_info: _a, ...rest }) => rest)(l))));
  });
});

describe('ip -j route show table all', () => {
  it('fills in what iproute2 leaves out: unicast, main table, family (pref means IPv6)', () => {
    const { value, diagnostics } = parseIpRouteJson(json(nodeRoutes()), 'ip -j route');
    expect(diagnostics).toEqual([]);
    const first = value[0]!;
    expect([first.type, first.table, first.family, first.protocol, first.scope]).toEqual(['unicast', 'main', 'inet', 'dhcp', null]);
    const v6default = value.find((r) => r.dst === 'default' && r.type === 'unreachable')!;
    expect(v6default.family).toBe('inet6');
    expect(value.find((r) => r.nexthops)!.nexthops!.map((n) => [n.gateway, n.weight])).toEqual([['192.168.49.3', 1], ['192.168.49.4', 2]]);
    expect(value.filter((r) => r.table === 'local')).toHaveLength(8);
  });

  it('a default route without any address gets its family from the probe (-4/-6) or is reported', () => {
    const text = json([route('default', { type: 'blackhole' })]);
    expect(parseIpRouteJson(text, 'r', { family: 'inet' }).value[0]!.family).toBe('inet');
    const unknown = parseIpRouteJson(text, 'r');
    expect(unknown.value[0]!.family).toBeNull();
    expect(unknown.diagnostics.map((d) => d.code)).toEqual(['bad-key']);
  });

  it('parse(format(x)) == x', () => {
    const x = parseIpRouteJson(json(nodeRoutes()), 'r').value;
    const back = parseIpRouteJson(formatIpRouteJson(x), 'fmt');
    expect(back.diagnostics).toEqual([]);
    expect(back.value).toEqual(x);
    expect(JSON.parse(formatIpRouteJson(x))).toEqual(nodeRoutes());
  });

  const routes = parseIpRouteJson(json(nodeRoutes()), 'r').value;
  it.each([
    // [destination, expected type, table, gateway or dev]
    ['10.96.0.10', 'local', 'local', 'kube-ipvs0'], // local table first, despite a /32 in main
    ['10.96.0.1', 'local', 'local', 'kube-ipvs0'],
    ['10.96.7.7', 'unicast', 'main', '192.168.49.9'], // a ClusterIP not on kube-ipvs0 follows main
    ['127.9.9.9', 'local', 'local', 'lo'], // all of 127/8 is local
    ['192.168.49.255', 'broadcast', 'local', 'eth0'],
    ['192.168.49.20', 'unicast', 'main', 'eth0'], // on-link /24 beats default
    ['10.244.235.200', 'blackhole', 'main', null], // /26 blackhole beats the /16
    ['10.244.1.5', 'unicast', 'main', 'tunl0'],
    ['8.8.8.8', 'unicast', 'main', '192.168.49.1'], // lowest metric among equal defaults
    ['10.250.1.1', 'unicast', 'default', '192.168.49.77'], // throw in main → default table
    ['10.251.1.1', 'unreachable', 'main', null],
    ['10.5.1.1', 'unicast', 'main', '192.168.49.1'], // table 100 has no rule: default route of main
    ['fd00::9', 'unicast', 'main', 'lxc9a4d1e27b3c5'], // /64 beats /48
    ['fd00:0:0:1::9', 'unicast', 'main', 'fd00:ffff::1'],
    ['2001:db8::1', 'unreachable', 'main', 'lo'], // the kernel's IPv6 unreachable default
    ['::1', 'local', 'local', 'lo'],
    ['ff02::1', 'multicast', 'local', 'eth0'],
  ])('routeLookup(%s) → %s in %s', (ip, type, table, via) => {
    const r = routeLookup(routes, ip);
    expect(r).not.toBeNull();
    expect([r!.route.type, r!.table, r!.route.gateway ?? r!.route.dev]).toEqual([type, table, via]);
  });

  it('routeLookup gives null without a route or for a non-address; isLocalDestination asks the local table', () => {
    const v4only = routes.filter((r) => r.family === 'inet' && r.dst !== 'default');
    expect(routeLookup(v4only, '8.8.8.8')).toBeNull();
    expect(routeLookup(routes, 'kubernetes.default')).toBeNull();
    expect(routeLookup(routes, '10.250.1.1')!.tablesTried).toEqual(['local', 'main', 'default']);
    expect(isLocalDestination(routes, '10.96.0.10')).toBe(true);
    expect(isLocalDestination(routes, '10.96.0.11')).toBe(false);
    expect(isLocalDestination(routes, '192.168.49.255')).toBe(false); // broadcast, not local
  });

  it('skips dead routes and multipath routes whose nexthops are all dead', () => {
    const dead = parseIpRouteJson(json([
      route('10.9.0.0/16', { gateway: '192.168.49.6', dev: 'eth0', flags: ['dead'] }),
      route('10.9.0.0/16', { nexthops: [{ gateway: '192.168.49.7', dev: 'eth0', weight: 1, flags: ['dead'] }] }),
      route('10.0.0.0/8', { gateway: '192.168.49.8', dev: 'eth0' }),
    ]), 'dead').value;
    expect(routeLookup(dead, '10.9.1.1')!.route.dst).toBe('10.0.0.0/8');
  });
});

describe('ip -j bad input', () => {
  it('iproute2 prints "[" and fails for a missing table: an error diagnostic, not a throw', () => {
    const r = parseIpRouteJson('[', 'ip -j route show table 200');
    expect(r.value).toEqual([]);
    expect(r.diagnostics.map((d) => [d.severity, d.code])).toEqual([['error', 'truncated']]);
  });

  it('keeps the complete elements before a cut, and reads two concatenated outputs', () => {
    const full = json(nodeRoutes().slice(0, 3));
    const cut = full.slice(0, full.length - 20);
    const r = parseIpRouteJson(cut, 'cut');
    expect(r.value.map((x) => x.dst)).toEqual(['default', 'default']);
    expect(r.diagnostics.map((d) => d.code)).toEqual(['truncated']);
    const two = parseIpRouteJson(`${json(nodeRoutes().slice(0, 2))}${json(nodeRoutes().slice(-2))}`, 'two');
    expect(two.diagnostics).toEqual([]);
    expect(two.value).toHaveLength(4);
  });

  it('reports the line of a bad element in pretty output (ip -j -p) and keeps its neighbours', () => {
    const pretty = JSON.stringify(nodeAddrs().slice(0, 3), null, 4).replace('"docker0"', 'docker0');
    const r = parseIpAddrJson(pretty, 'pretty');
    expect(r.value.map((i) => i.ifname)).toEqual(['lo', 'eth0']);
    const bad = r.diagnostics.find((d) => d.code === 'bad-json')!;
    const expectedLine = pretty.split('\n').findIndex((l) => l.includes('"ifindex": 3')) + 1;
    expect(bad.line).toBe(expectedLine - 1); // the element's opening brace
  });

  it('diagnostics on valid pretty output point at the element\'s line', () => {
    const pretty = JSON.stringify([link('eth0'), { ifindex: 9 }], null, 4);
    const d = parseIpAddrJson(pretty, 'p').diagnostics;
    expect(d.map((x) => [x.code, x.line])).toEqual([['bad-interface', pretty.split('\n').findIndex((l) => l.includes('"ifindex": 9'))]]);
  });

  it('reports elements that are not interfaces/routes, odd values, non-arrays and emptiness', () => {
    const a = parseIpAddrJson(json([{ ifindex: 1 }, link('eth9', [], { operstate: 'WEIRD' })]), 'a');
    expect(a.value.map((i) => [i.ifname, i.operstate, i.extra.operstate])).toEqual([['eth9', null, 'WEIRD']]);
    expect(a.diagnostics.map((d) => [d.severity, d.code])).toEqual([['error', 'bad-interface'], ['warning', 'bad-key']]);
    expect(parseIpRouteJson(json([{ gateway: '1.2.3.4' }]), 'r').diagnostics.map((d) => d.code)).toEqual(['bad-route']);
    expect(parseIpRouteJson('{"dst":"default"}', 'r').diagnostics.map((d) => d.code)).toEqual(['not-an-array']);
    expect(parseIpAddrJson('', 'e').diagnostics.map((d) => [d.severity, d.code])).toEqual([['info', 'empty']]);
  });

  it('never throws on garbage', () => {
    const samples = ['\u0000\u00ff\u0001', '[[[[', ']', '["\\', '[{"a":}]', 'null', '[1,2,"x",null]', '{'.repeat(10000)];
    for (const s of samples) {
      expect(() => parseIpAddrJson(s, 'g')).not.toThrow();
      expect(() => parseIpRouteJson(s, 'g')).not.toThrow();
      expect(parseIpRouteJson(s, 'g').diagnostics.length).toBeGreaterThan(0);
    }
  });
});

describe('addresses and prefixes', () => {
  it.each([
    ['10.96.0.10', 'inet', 0x0a60000an],
    ['::', 'inet6', 0n],
    ['::1', 'inet6', 1n],
    ['fd00::1', 'inet6', (0xfd00n << 112n) | 1n],
    ['::ffff:10.0.0.1', 'inet6', (0xffffn << 32n) | 0x0a000001n],
    ['1:2:3:4:5:6:7:8', 'inet6', 0x00010002000300040005000600070008n],
  ])('parseIp(%s)', (text, family, value) => {
    expect(parseIp(text)).toEqual({ family, value });
  });

  it.each(['10.0.0.256', '1.2.3', '1::2::3', '1:2:3:4:5:6:7:8:9', 'fe80::1%eth0', 'default', '', '::ffff:1.2.3'])('parseIp(%j) is null', (t) => {
    expect(parseIp(t)).toBeNull();
  });

  it('parsePrefix understands default, host routes and bad lengths', () => {
    expect(parsePrefix('default', 'inet6')).toEqual({ family: 'inet6', value: 0n, length: 0 });
    expect(parsePrefix('10.96.0.10', null)!.length).toBe(32);
    expect(parsePrefix('10.0.0.0/33', null)).toBeNull();
    expect(parsePrefix('default', null)).toBeNull();
  });
});
