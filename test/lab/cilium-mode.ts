/**
 * The node lab's Cilium mode: what a node running Cilium with kube-proxy replacement holds
 * instead of kube-proxy's rules —
 *
 * - no KUBE-* chain and no `table ip kube-proxy`;
 * - the CILIUM_* chains the agent installs in iptables (cilium/cilium
 *   `pkg/datapath/iptables/iptables.go`: feeder rules `cilium-feeder: <chain>`, the proxy
 *   NOTRACK/ACCEPT rules, the FORWARD accepts for `cilium_host`/`cilium_net`/`lxc+`, the
 *   host mark, and iptables masquerading — the Helm default `bpf.masquerade=false`), with
 *   their comments as real nodes show them (cilium/cilium issues #26882, #31565);
 * - the `cilium_host`/`cilium_net` veth pair with the router address (first address of the
 *   node's pod CIDR) those rules name;
 * - the LB BPF maps, pinned under a bpffs of the lab instance
 *   (`<stateDir>/bpffs/tc/globals`, the layout of `/sys/fs/bpf/tc/globals`), filled with the
 *   scenario ({@link ciliumServicesOf}). Nothing is attached to a hook: the lab shows the
 *   tables, it does not forward Service traffic.
 *
 * cilium-agent itself does not run here, so a capture has no `cilium-dbg` output.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { LabScenario } from '../../src/analysis/lab-scenario-types.js';
import { nsExecOk } from './exec.js';
import type { LabNames } from './names.js';
import { bpffsMounted, createLabCiliumMaps, removeLabCiliumMaps, type LabCiliumMaps } from './cilium-maps.js';
import { ciliumServicesOf, labCiliumTable } from './cilium-scenario.js';

/** The bpffs mount point of a lab instance: `<stateDir>/bpffs`. */
export function labBpffs(names: LabNames): string {
  return path.join(names.stateDir, 'bpffs');
}

/** Where the instance pins Cilium's maps (what `--bpf-root` must name): `<stateDir>/bpffs/tc/globals`. */
export function labBpfRoot(names: LabNames): string {
  return path.join(labBpffs(names), 'tc', 'globals');
}

/** The node's pod CIDR and the cilium_host router address (its first host address, /32). */
function nodeNetwork(scenario: LabScenario): { podCIDR: string; routerIP: string } {
  const node = scenario.nodes.find((n) => n.name === scenario.nodeName);
  if (!node) throw new Error(`BUG: scenario node ${scenario.nodeName} is not among its nodes`);
  const [base] = node.podCIDR.split('/');
  const octets = (base ?? '').split('.').map(Number);
  octets[3] = (octets[3] ?? 0) + 1;
  return { podCIDR: node.podCIDR, routerIP: octets.join('.') };
}

/**
 * The iptables-restore input of Cilium's chains on the scenario's node (IPv4, tunnel mode,
 * iptables masquerading). Marks are Cilium's `linux_defaults` magic marks: 0x200 to-proxy,
 * 0xa00 proxy return, 0x800 proxy upstream, 0xc00 from host, 0xd00/0xe00 IPsec, 0xf00 identity.
 */
export function ciliumRulesText(scenario: LabScenario): string {
  const { podCIDR, routerIP } = nodeNetwork(scenario);
  const cluster = scenario.clusterCIDR ?? podCIDR;
  const feeder = (hook: string, chain: string) => `-A ${hook} -m comment --comment "cilium-feeder: ${chain}" -j ${chain}`;
  return [
    '*raw',
    ':PREROUTING ACCEPT [0:0]',
    ':OUTPUT ACCEPT [0:0]',
    ':CILIUM_OUTPUT_raw - [0:0]',
    ':CILIUM_PRE_raw - [0:0]',
    feeder('PREROUTING', 'CILIUM_PRE_raw'),
    feeder('OUTPUT', 'CILIUM_OUTPUT_raw'),
    '-A CILIUM_OUTPUT_raw -o lxc+ -m mark --mark 0xa00/0xfffffeff -m comment --comment "cilium: NOTRACK for proxy return traffic" -j CT --notrack',
    '-A CILIUM_OUTPUT_raw -o cilium_host -m mark --mark 0xa00/0xfffffeff -m comment --comment "cilium: NOTRACK for proxy return traffic" -j CT --notrack',
    '-A CILIUM_OUTPUT_raw -o lxc+ -m mark --mark 0x800/0xe00 -m comment --comment "cilium: NOTRACK for L7 proxy upstream traffic" -j CT --notrack',
    '-A CILIUM_OUTPUT_raw -o cilium_host -m mark --mark 0x800/0xe00 -m comment --comment "cilium: NOTRACK for L7 proxy upstream traffic" -j CT --notrack',
    '-A CILIUM_PRE_raw -m mark --mark 0x200/0xf00 -m comment --comment "cilium: NOTRACK for proxy traffic" -j CT --notrack',
    'COMMIT',
    '*mangle',
    ':PREROUTING ACCEPT [0:0]',
    ':POSTROUTING ACCEPT [0:0]',
    ':CILIUM_POST_mangle - [0:0]',
    ':CILIUM_PRE_mangle - [0:0]',
    feeder('PREROUTING', 'CILIUM_PRE_mangle'),
    feeder('POSTROUTING', 'CILIUM_POST_mangle'),
    '-A CILIUM_PRE_mangle -m socket --transparent -m mark ! --mark 0xe00/0xf00 -m mark ! --mark 0x800/0xf00 -m comment --comment "cilium: any->pod redirect proxied traffic to host proxy" -j MARK --set-xmark 0x200/0xffffffff',
    'COMMIT',
    '*nat',
    ':PREROUTING ACCEPT [0:0]',
    ':OUTPUT ACCEPT [0:0]',
    ':POSTROUTING ACCEPT [0:0]',
    ':CILIUM_OUTPUT_nat - [0:0]',
    ':CILIUM_POST_nat - [0:0]',
    ':CILIUM_PRE_nat - [0:0]',
    feeder('PREROUTING', 'CILIUM_PRE_nat'),
    feeder('OUTPUT', 'CILIUM_OUTPUT_nat'),
    feeder('POSTROUTING', 'CILIUM_POST_nat'),
    `-A CILIUM_POST_nat -s ${podCIDR} ! -d ${cluster} ! -o cilium_+ -m comment --comment "cilium masquerade non-cluster" -j MASQUERADE`,
    '-A CILIUM_POST_nat -m mark --mark 0xa00/0xe00 -m comment --comment "exclude proxy return traffic from masquerade" -j ACCEPT',
    `-A CILIUM_POST_nat ! -s ${podCIDR} ! -d ${podCIDR} -o cilium_host -m comment --comment "cilium host->cluster masquerade" -j SNAT --to-source ${routerIP}`,
    `-A CILIUM_POST_nat -s 127.0.0.1/32 -o cilium_host -m comment --comment "cilium host->cluster from 127.0.0.1 masquerade" -j SNAT --to-source ${routerIP}`,
    `-A CILIUM_POST_nat -o cilium_host -m mark --mark 0xf00/0xf00 -m conntrack --ctstate DNAT -m comment --comment "hairpin traffic that originated from a local pod" -j SNAT --to-source ${routerIP}`,
    'COMMIT',
    '*filter',
    ':INPUT ACCEPT [0:0]',
    ':FORWARD ACCEPT [0:0]',
    ':OUTPUT ACCEPT [0:0]',
    ':CILIUM_FORWARD - [0:0]',
    ':CILIUM_INPUT - [0:0]',
    ':CILIUM_OUTPUT - [0:0]',
    feeder('INPUT', 'CILIUM_INPUT'),
    feeder('FORWARD', 'CILIUM_FORWARD'),
    feeder('OUTPUT', 'CILIUM_OUTPUT'),
    '-A CILIUM_FORWARD -o cilium_host -m comment --comment "cilium: any->cluster on cilium_host forward accept" -j ACCEPT',
    '-A CILIUM_FORWARD -i cilium_host -m comment --comment "cilium: cluster->any on cilium_host forward accept (nodeport)" -j ACCEPT',
    '-A CILIUM_FORWARD -i lxc+ -m comment --comment "cilium: cluster->any on lxc+ forward accept" -j ACCEPT',
    '-A CILIUM_FORWARD -i cilium_net -m comment --comment "cilium: cluster->any on cilium_net forward accept (nodeport)" -j ACCEPT',
    '-A CILIUM_INPUT -m mark --mark 0x200/0xf00 -m comment --comment "cilium: ACCEPT for proxy traffic" -j ACCEPT',
    '-A CILIUM_OUTPUT -m mark --mark 0xa00/0xfffffeff -m comment --comment "cilium: ACCEPT for proxy return traffic" -j ACCEPT',
    '-A CILIUM_OUTPUT -m mark --mark 0x800/0xe00 -m comment --comment "cilium: ACCEPT for l7 proxy upstream traffic" -j ACCEPT',
    '-A CILIUM_OUTPUT -m mark ! --mark 0xe00/0xf00 -m mark ! --mark 0xd00/0xf00 -m mark ! --mark 0xa00/0xe00 -m mark ! --mark 0x800/0xe00 -m mark ! --mark 0xf00/0xf00 -m comment --comment "cilium: host->any mark as from host" -j MARK --set-xmark 0xc00/0xf00',
    'COMMIT',
    '',
  ].join('\n');
}

/** What {@link loadCiliumDataplane} set up. */
export interface CiliumDataplane {
  readonly rulesFile: string;
  readonly bpfRoot: string;
  readonly maps: LabCiliumMaps;
}

/**
 * Loads Cilium mode into the node namespace: the cilium_host/cilium_net pair, the CILIUM_*
 * chains (written to `<stateDir>/rules.cilium.iptables` and loaded with iptables-restore),
 * and the LB maps of the scenario under {@link labBpfRoot}. The caller has flushed the
 * node's ruleset. Throws `TransportError` when a command fails, `Error` when bpftool does.
 */
export async function loadCiliumDataplane(names: LabNames, scenario: LabScenario): Promise<CiliumDataplane> {
  const { routerIP } = nodeNetwork(scenario);
  const link = await nsExecOk(names.node, ['ip', '-j', 'link', 'show']);
  if (!link.stdout.includes('"cilium_host"')) {
    await nsExecOk(names.node, ['ip', 'link', 'add', 'cilium_host', 'type', 'veth', 'peer', 'name', 'cilium_net']);
    await nsExecOk(names.node, ['ip', 'addr', 'add', `${routerIP}/32`, 'dev', 'cilium_host']);
    for (const dev of ['cilium_net', 'cilium_host']) await nsExecOk(names.node, ['ip', 'link', 'set', dev, 'up']);
  }
  const rulesFile = path.join(names.stateDir, 'rules.cilium.iptables');
  writeFileSync(rulesFile, ciliumRulesText(scenario));
  await nsExecOk(names.node, ['iptables-restore', rulesFile]);
  const maps = createLabCiliumMaps({ bpffs: labBpffs(names), root: labBpfRoot(names), table: labCiliumTable(ciliumServicesOf(scenario), scenario.nodeIPs) });
  return { rulesFile, bpfRoot: maps.root, maps };
}

/**
 * Unpins the instance's maps and unmounts its bpffs (so the state directory can go). Safe
 * when nothing is there. Throws `Error` when umount fails.
 */
export function removeCiliumMaps(names: LabNames): void {
  const mount = labBpffs(names);
  if (!bpffsMounted(mount)) return;
  removeLabCiliumMaps({ bpffs: mount, root: labBpfRoot(names) });
  const r = spawnSync('umount', [mount], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`umount ${mount} failed: ${r.stderr}`);
  if (existsSync(mount)) rmSync(mount, { recursive: true, force: true });
}
