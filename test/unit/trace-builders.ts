/**
 * Builders for step-mode tests: the lab node's addresses and routes as `ip -j addr` /
 * `ip -j route show table all` would print them (then parsed by the real parsers), the
 * kube-proxy rules of a scenario in either mode (generated, then parsed), conntrack
 * lines, and packet specs.
 */
import type { LabScenario } from '../../src/analysis/lab-scenario-types.js';
import { generateIptablesRestore } from '../../src/analysis/kubeproxy-iptables.js';
import { generateNftablesRules } from '../../src/analysis/kubeproxy-nftables.js';
import { parseConntrack } from '../../src/parsers/conntrack.js';
import { parseIpAddrJson, parseIpRouteJson } from '../../src/parsers/ip-json.js';
import { parseIptablesSave } from '../../src/parsers/iptables-save.js';
import { parseNftText } from '../../src/parsers/nft-text.js';
import type { TraceInput } from '../../src/trace/input.js';
import { parsePacketArgs, type PacketSpec, type TracePacketArgs } from '../../src/trace/packet.js';
import { caliName } from '../lab/names.js';
import { LAB_SCENARIO } from '../lab/scenario.js';

type J = Record<string, unknown>;

/** The lab node's interfaces as `ip -j addr` prints them: lo, eth0, one cali veth per local pod. */
export function labAddrJson(scenario: LabScenario = LAB_SCENARIO): string {
  const node = scenario.nodes.find((n) => n.name === scenario.nodeName)!;
  let index = 1;
  const link = (ifname: string, addrs: J[], o: J = {}): J => ({ ifindex: index++, ifname, flags: ['BROADCAST', 'MULTICAST', 'UP', 'LOWER_UP'], mtu: 1500, operstate: 'UP', link_type: 'ether', ...o, addr_info: addrs });
  const inet = (local: string, prefixlen: number, o: J = {}): J => ({ family: 'inet', local, prefixlen, scope: 'global', valid_life_time: 4294967295, preferred_life_time: 4294967295, ...o });
  const items: J[] = [
    link('lo', [inet('127.0.0.1', 8, { scope: 'host', label: 'lo' })], { flags: ['LOOPBACK', 'UP', 'LOWER_UP'], link_type: 'loopback', operstate: 'UNKNOWN', mtu: 65536 }),
    link('eth0', [inet(node.internalIP, scenario.nodeNetworkPrefix, { broadcast: '192.168.49.255', label: 'eth0' })], { link_netnsid: 0 }),
  ];
  for (const pod of scenario.pods.filter((p) => p.nodeName === scenario.nodeName)) items.push(link(caliName(pod), [], { link_netnsid: 1 }));
  return JSON.stringify(items);
}

/** The lab node's routes as `ip -j route show table all` prints them. */
export function labRouteJson(scenario: LabScenario = LAB_SCENARIO): string {
  const node = scenario.nodes.find((n) => n.name === scenario.nodeName)!;
  const net = `${node.internalIP.split('.').slice(0, 3).join('.')}.0/${scenario.nodeNetworkPrefix}`;
  const routes: J[] = [{ dst: 'default', gateway: scenario.outsideIP, dev: 'eth0', flags: [] }];
  for (const other of scenario.nodes.filter((n) => n.name !== scenario.nodeName)) routes.push({ dst: other.podCIDR, gateway: other.internalIP, dev: 'eth0', flags: [] });
  for (const pod of scenario.pods.filter((p) => p.nodeName === scenario.nodeName)) routes.push({ dst: pod.ip, dev: caliName(pod), scope: 'link', flags: [] });
  routes.push({ dst: net, dev: 'eth0', protocol: 'kernel', scope: 'link', prefsrc: node.internalIP, flags: [] });
  routes.push({ type: 'local', dst: '127.0.0.0/8', dev: 'lo', table: 'local', protocol: 'kernel', scope: 'host', prefsrc: '127.0.0.1', flags: [] });
  routes.push({ type: 'local', dst: '127.0.0.1', dev: 'lo', table: 'local', protocol: 'kernel', scope: 'host', prefsrc: '127.0.0.1', flags: [] });
  routes.push({ type: 'broadcast', dst: '127.255.255.255', dev: 'lo', table: 'local', protocol: 'kernel', scope: 'link', prefsrc: '127.0.0.1', flags: [] });
  routes.push({ type: 'local', dst: node.internalIP, dev: 'eth0', table: 'local', protocol: 'kernel', scope: 'host', prefsrc: node.internalIP, flags: [] });
  routes.push({ type: 'broadcast', dst: '192.168.49.255', dev: 'eth0', table: 'local', protocol: 'kernel', scope: 'link', prefsrc: node.internalIP, flags: [] });
  return JSON.stringify(routes);
}

/** Conntrack lines (`conntrack -L` format) to parse into the input. */
export type ConntrackLines = readonly string[];

/** Options of {@link labInput}. */
export interface LabInputOptions {
  readonly scenario?: LabScenario;
  readonly conntrack?: ConntrackLines;
}

/** The text of kube-proxy's rules for `mode` as the lab loads them. */
export function labRules(mode: 'iptables' | 'nftables', scenario: LabScenario = LAB_SCENARIO): string {
  return mode === 'iptables'
    ? generateIptablesRestore(scenario, { includeJumpRules: true, nfacct: false, randomFully: true })
    : generateNftablesRules(scenario);
}

/** A walk input for the lab node in `mode`, every part parsed by the real parsers (no diagnostics allowed). */
export function labInput(mode: 'iptables' | 'nftables', options: LabInputOptions = {}): TraceInput {
  const scenario = options.scenario ?? LAB_SCENARIO;
  const addrs = parseIpAddrJson(labAddrJson(scenario), 'ip-addr');
  const routes = parseIpRouteJson(labRouteJson(scenario), 'ip-route');
  const ct = parseConntrack((options.conntrack ?? []).join('\n'), 'conntrack');
  const problems = [...addrs.diagnostics, ...routes.diagnostics, ...ct.diagnostics].filter((d) => d.severity !== 'info');
  if (problems.length) throw new Error(`builder data did not parse: ${JSON.stringify(problems)}`);
  const base = { addrs: addrs.value, routes: routes.value, conntrack: ct.value.entries };
  if (mode === 'iptables') {
    const rs = parseIptablesSave(labRules('iptables', scenario), 'iptables-save', { family: 'ipv4' });
    if (rs.diagnostics.some((d) => d.severity === 'error')) throw new Error('iptables rules did not parse');
    return { ...base, iptables: [rs.value] };
  }
  const nft = parseNftText(labRules('nftables', scenario), 'nft');
  if (nft.diagnostics.some((d) => d.severity === 'error')) throw new Error(`nft rules did not parse: ${JSON.stringify(nft.diagnostics.slice(0, 3))}`);
  return { ...base, nft: nft.value };
}

/** A packet spec from the CLI words, with defaults for the rest. */
export function packet(args: TracePacketArgs): PacketSpec {
  return parsePacketArgs(args);
}

/** The lab pod with `key` (throws for an unknown key). */
export function labPod(key: string, scenario: LabScenario = LAB_SCENARIO) {
  const pod = scenario.pods.find((p) => p.key === key);
  if (!pod) throw new Error(`no pod ${key}`);
  return pod;
}

/** The lab Service `name` and its first port. */
export function labService(name: string, scenario: LabScenario = LAB_SCENARIO) {
  const svc = scenario.services.find((s) => s.name === name);
  if (!svc) throw new Error(`no service ${name}`);
  return { svc, port: svc.ports[0]! };
}
