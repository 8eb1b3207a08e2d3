/**
 * A lab fleet: three node network namespaces, each holding the iptables rules kube-proxy
 * would write on that node for one API (the lab scenario with a third node) — except that
 * `lab-node2` was programmed from an older API state (web with an endpoint that is gone:
 * a stale endpoint) and `lab-node3` from one without kube-dns (a missing Service). The
 * recorded API server serves the current API and runs each node-debug pod's exec in the
 * namespace of the pod's node.
 */
import type { LabScenario, ScenarioService } from '../../src/analysis/lab-scenario-types.js';
import { generateIptablesRestore } from '../../src/analysis/kubeproxy-iptables.js';
import { buildApiObjects } from './api-objects.js';
import { nsExecOk, run } from './exec.js';
import { LAB_SCENARIO } from './scenario.js';

/** The stale endpoint lab-node2 still sends web's traffic to (its pod is gone from the API). */
export const STALE_ENDPOINT = '10.244.1.99';

/** The lab scenario with a third node. */
export const FLEET_SCENARIO: LabScenario = {
  ...LAB_SCENARIO,
  nodes: [...LAB_SCENARIO.nodes, { name: 'lab-node3', internalIP: '192.168.49.4', podCIDR: '10.244.2.0/24' }],
};

/** Each node, and the Services its kube-proxy last programmed. */
export function fleetNodes(): { name: string; ip: string; services: readonly ScenarioService[] }[] {
  const current = FLEET_SCENARIO.services;
  const stale = current.map((s) =>
    s.name === 'web' ? { ...s, endpoints: [...s.endpoints, { ip: STALE_ENDPOINT, nodeName: 'lab-node2', ready: true, serving: true, terminating: false, podName: 'web-7c9d8b5f4-old1x' }] } : s,
  );
  return [
    { name: 'lab-node', ip: '192.168.49.2', services: current },
    { name: 'lab-node2', ip: '192.168.49.3', services: stale },
    { name: 'lab-node3', ip: '192.168.49.4', services: current.filter((s) => s.name !== 'kube-dns') },
  ];
}

/** The namespace of node `name` under `prefix`. */
export function fleetNs(prefix: string, name: string): string {
  return `${prefix}${name}`;
}

/** Builds the three node namespaces and loads each one's rules. Returns node → namespace. */
export async function fleetUp(prefix: string): Promise<Record<string, string>> {
  await fleetDown(prefix);
  const out: Record<string, string> = {};
  for (const node of fleetNodes()) {
    const ns = fleetNs(prefix, node.name);
    await run(['ip', 'netns', 'add', ns]);
    await nsExecOk(ns, ['ip', 'link', 'set', 'lo', 'up']);
    const rules = generateIptablesRestore({ ...FLEET_SCENARIO, nodeName: node.name, nodeIPs: [node.ip], services: node.services }, { includeJumpRules: true, nfacct: false, randomFully: true });
    await nsExecOk(ns, ['iptables-restore'], { input: rules });
    out[node.name] = ns;
  }
  return out;
}

/** Removes the namespaces of {@link fleetUp}. */
export async function fleetDown(prefix: string): Promise<void> {
  for (const node of fleetNodes()) await run(['ip', 'netns', 'del', fleetNs(prefix, node.name)]);
}

/** The current API objects of the fleet (a List). */
export function fleetApiObjects(): ReturnType<typeof buildApiObjects> {
  return buildApiObjects(FLEET_SCENARIO);
}
