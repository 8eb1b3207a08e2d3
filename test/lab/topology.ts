/**
 * The lab's network: one namespace per node, per pod and for the outside host.
 *
 * - outside: bridge `br0` with the node network's gateway address (192.168.49.1/24);
 *   every node's `eth0` is a veth whose peer is a port of that bridge (the "LAN").
 * - nodes: `eth0` with the node's InternalIP, default route via outside, a route to every
 *   other node's pod CIDR via that node, `ip_forward=1`. The kube-proxy node also gets
 *   `route_localnet=1` (as kube-proxy sets it) and `nf_conntrack_acct=1`.
 * - pods (Calico style): `eth0` with the pod IP /32, `169.254.1.1` as on-link default
 *   gateway; node side `cali…` with `proxy_arp=1` and a /32 route to the pod.
 */
import type { LabScenario, ScenarioPod } from '../../src/analysis/lab-scenario-types.js';
import { nsExecOk, run, runOk } from './exec.js';
import { caliName, type LabNames } from './names.js';

const POD_GATEWAY = '169.254.1.1';

/** Sets sysctls `key=value` inside `ns` (throws TransportError on failure). */
export async function sysctl(ns: string, settings: Readonly<Record<string, string | number>>): Promise<void> {
  const args = Object.entries(settings).map(([k, v]) => `${k}=${v}`);
  await nsExecOk(ns, ['sysctl', '-q', '-w', ...args]);
}

/** Namespace names (from `ip netns list`) that currently exist. */
export async function existingNamespaces(): Promise<Set<string>> {
  const r = await run(['ip', 'netns', 'list']);
  return new Set(r.stdout.split('\n').map((l) => l.split(' ')[0] ?? '').filter((n) => n !== ''));
}

/** Creates the whole topology; `names` must not exist yet. Throws TransportError on failure. */
export async function createTopology(names: LabNames, scenario: LabScenario): Promise<void> {
  for (const ns of names.all) {
    await runOk(['ip', 'netns', 'add', ns]);
    await runOk(['ip', '-n', ns, 'link', 'set', 'lo', 'up']);
  }
  const prefixLen = scenario.nodeNetworkPrefix;
  await runOk(['ip', '-n', names.outside, 'link', 'add', 'br0', 'type', 'bridge']);
  await runOk(['ip', '-n', names.outside, 'addr', 'add', `${scenario.outsideIP}/${prefixLen}`, 'dev', 'br0']);
  await runOk(['ip', '-n', names.outside, 'link', 'set', 'br0', 'up']);

  for (const [i, node] of scenario.nodes.entries()) {
    const ns = names.nodes[node.name] ?? '';
    const port = `veth-node${i + 1}`;
    await runOk(['ip', '-n', names.outside, 'link', 'add', port, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns]);
    await runOk(['ip', '-n', names.outside, 'link', 'set', port, 'master', 'br0', 'up']);
    await runOk(['ip', '-n', ns, 'addr', 'add', `${node.internalIP}/${prefixLen}`, 'dev', 'eth0']);
    await runOk(['ip', '-n', ns, 'link', 'set', 'eth0', 'up']);
    await runOk(['ip', '-n', ns, 'route', 'add', 'default', 'via', scenario.outsideIP, 'dev', 'eth0']);
    for (const other of scenario.nodes) {
      if (other.name !== node.name) {
        await runOk(['ip', '-n', ns, 'route', 'add', other.podCIDR, 'via', other.internalIP, 'dev', 'eth0']);
      }
    }
    await sysctl(ns, { 'net.ipv4.ip_forward': 1 });
  }
  await sysctl(names.node, { 'net.ipv4.conf.all.route_localnet': 1, 'net.netfilter.nf_conntrack_acct': 1 });

  for (const pod of scenario.pods) await createPod(names, pod);
}

async function createPod(names: LabNames, pod: ScenarioPod): Promise<void> {
  const nodeNs = names.nodes[pod.nodeName];
  const podNs = names.pods[pod.key];
  if (nodeNs === undefined || podNs === undefined) throw new Error(`BUG: pod ${pod.key} on unknown node ${pod.nodeName}`);
  const cali = caliName(pod);
  await runOk(['ip', '-n', nodeNs, 'link', 'add', cali, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', podNs]);
  await runOk(['ip', '-n', nodeNs, 'link', 'set', cali, 'up']);
  await sysctl(nodeNs, { [`net.ipv4.conf.${cali}.proxy_arp`]: 1, [`net.ipv4.neigh.${cali}.proxy_delay`]: 0 });
  await runOk(['ip', '-n', nodeNs, 'route', 'add', `${pod.ip}/32`, 'dev', cali, 'scope', 'link']);
  await runOk(['ip', '-n', podNs, 'addr', 'add', `${pod.ip}/32`, 'dev', 'eth0']);
  await runOk(['ip', '-n', podNs, 'link', 'set', 'eth0', 'up']);
  await runOk(['ip', '-n', podNs, 'route', 'add', POD_GATEWAY, 'dev', 'eth0', 'scope', 'link']);
  await runOk(['ip', '-n', podNs, 'route', 'add', 'default', 'via', POD_GATEWAY, 'dev', 'eth0']);
}

/**
 * Deletes the namespaces of `names` that exist, first killing (SIGKILL) every process
 * still inside them (`ip netns pids`). Returns the pids it killed.
 */
export async function destroyTopology(names: LabNames): Promise<number[]> {
  const existing = await existingNamespaces();
  const killed: number[] = [];
  for (const ns of names.all) {
    if (!existing.has(ns)) continue;
    const pids = await run(['ip', 'netns', 'pids', ns]);
    for (const pid of pids.stdout.split('\n').map(Number).filter((p) => Number.isInteger(p) && p > 1)) {
      try {
        process.kill(pid, 'SIGKILL');
        killed.push(pid);
      } catch {
        // already gone
      }
    }
  }
  // A failed delete shows up in the caller's later existingNamespaces() check.
  for (const ns of names.all) {
    if (existing.has(ns)) await run(['ip', 'netns', 'del', ns]);
  }
  return killed;
}
