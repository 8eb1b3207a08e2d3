/**
 * The small node probes of a generated capture: `uname -nrm`, `ip -j addr`, `ip -j route
 * show table all`, tool versions, conntrack sizes, resolv.conf — in the shapes iproute2 6.1
 * and the tools print them (compare fixtures/lab-iptables/probes/).
 *
 * The node: `lo`, `eth0` with the node address on the node network, and a bridge `cni0`
 * holding .1 of the node's pod CIDR (a bridge CNI such as flannel's); routes to the other
 * nodes' pod CIDRs via their addresses, a default route via the network's .1.
 */
import type { LabScenario } from '../../src/analysis/lab-scenario-types.js';

const FOREVER = 4294967295;

interface Link {
  readonly name: string;
  readonly index: number;
  readonly mac: string;
  readonly flags: readonly string[];
  readonly type: 'loopback' | 'ether';
  readonly addrs: readonly { readonly ip: string; readonly prefix: number; readonly scope: 'host' | 'global' }[];
}

function linksOf(s: LabScenario): Link[] {
  const node = s.nodes.find((n) => n.name === s.nodeName)!;
  const [podNet, podPrefix] = node.podCIDR.split('/');
  const bridge = podNet!.replace(/\.0$/, '.1');
  return [
    { name: 'lo', index: 1, mac: '00:00:00:00:00:00', flags: ['LOOPBACK', 'UP', 'LOWER_UP'], type: 'loopback', addrs: [{ ip: '127.0.0.1', prefix: 8, scope: 'host' }] },
    { name: 'eth0', index: 2, mac: '52:54:00:12:34:56', flags: ['BROADCAST', 'MULTICAST', 'UP', 'LOWER_UP'], type: 'ether', addrs: [{ ip: node.internalIP, prefix: s.nodeNetworkPrefix, scope: 'global' }] },
    { name: 'cni0', index: 3, mac: '6e:1f:2a:3b:4c:5d', flags: ['BROADCAST', 'MULTICAST', 'UP', 'LOWER_UP'], type: 'ether', addrs: [{ ip: bridge, prefix: Number(podPrefix), scope: 'global' }] },
  ];
}

/** `ip -j addr` stdout (one line, newline-terminated). */
export function ipAddrJson(s: LabScenario): string {
  const items = linksOf(s).map((l) => ({
    ifindex: l.index,
    ifname: l.name,
    flags: l.flags,
    mtu: l.type === 'loopback' ? 65536 : 1500,
    qdisc: l.type === 'loopback' ? 'noqueue' : 'fq_codel',
    operstate: l.type === 'loopback' ? 'UNKNOWN' : 'UP',
    group: 'default',
    txqlen: 1000,
    link_type: l.type,
    address: l.mac,
    broadcast: l.type === 'loopback' ? '00:00:00:00:00:00' : 'ff:ff:ff:ff:ff:ff',
    addr_info: l.addrs.map((a) => ({
      family: 'inet',
      local: a.ip,
      prefixlen: a.prefix,
      scope: a.scope,
      label: l.name,
      valid_life_time: FOREVER,
      preferred_life_time: FOREVER,
    })),
  }));
  return `${JSON.stringify(items)}\n`;
}

function network(ip: string, prefix: number): string {
  const n = ip.split('.').reduce((a, p) => a * 256 + Number(p), 0) >>> 0;
  const mask = prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
  const m = (n & mask) >>> 0;
  return `${m >>> 24}.${(m >>> 16) & 255}.${(m >>> 8) & 255}.${m & 255}/${prefix}`;
}

/** `ip -j route show table all` stdout: main table, then the local table. */
export function ipRouteJson(s: LabScenario): string {
  const node = s.nodes.find((n) => n.name === s.nodeName)!;
  const links = linksOf(s);
  const eth = links[1]!.addrs[0]!;
  const cni = links[2]!.addrs[0]!;
  const gateway = network(eth.ip, eth.prefix).replace(/\.0\/\d+$/, '.1');
  const routes: Record<string, unknown>[] = [{ dst: 'default', gateway, dev: 'eth0', flags: [] }];
  routes.push({ dst: node.podCIDR, dev: 'cni0', protocol: 'kernel', scope: 'link', prefsrc: cni.ip, flags: [] });
  for (const other of s.nodes) if (other.name !== node.name) routes.push({ dst: other.podCIDR, gateway: other.internalIP, dev: 'eth0', flags: ['onlink'] });
  routes.push({ dst: network(eth.ip, eth.prefix), dev: 'eth0', protocol: 'kernel', scope: 'link', prefsrc: eth.ip, flags: [] });
  const local = (type: string, dst: string, dev: string, scope: string, prefsrc: string) => ({ type, dst, dev, table: 'local', protocol: 'kernel', scope, prefsrc, flags: [] });
  routes.push(local('local', '127.0.0.0/8', 'lo', 'host', '127.0.0.1'), local('local', '127.0.0.1', 'lo', 'host', '127.0.0.1'), local('broadcast', '127.255.255.255', 'lo', 'link', '127.0.0.1'));
  routes.push(local('local', cni.ip, 'cni0', 'host', cni.ip), local('local', eth.ip, 'eth0', 'host', eth.ip));
  return `${JSON.stringify(routes)}\n`;
}

/** `uname -nrm` stdout. */
export function unameText(s: LabScenario): string {
  return `${s.nodeName} 6.1.0-28-amd64 x86_64\n`;
}

/** The node's resolv.conf (a cloud VM's). */
export const RESOLV_CONF = 'nameserver 192.168.0.2\nsearch internal\n';

/** Tool versions as `--version` prints them on Debian 12. */
export const TOOL_VERSIONS = {
  iptables: 'iptables v1.8.9 (nf_tables)',
  nft: 'nftables v1.0.6 (Lester Gooch #5)',
  conntrack: 'conntrack v1.4.7 (conntrack-tools)',
} as const;
