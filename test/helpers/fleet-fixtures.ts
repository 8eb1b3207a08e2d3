/**
 * A fleet bundle of generated lab nodes, written as `fleet capture` writes one: each node's
 * iptables-save is what kube-proxy's generator (src/analysis/kubeproxy-iptables.ts) writes
 * for the API the node last saw (test/lab/fleet-lab.ts: lab-node2 with a stale web endpoint,
 * lab-node3 without kube-dns), lab-node's kube-proxy /metrics readable, a fourth node failed.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { generateIptablesRestore } from '../../src/analysis/kubeproxy-iptables.js';
import { FLEET_FORMAT_VERSION, writeFleetManifest } from '../../src/fleet/bundle.js';
import { writeBundle } from '../../src/sources/bundle.js';
import { probe } from '../../src/sources/catalog.js';
import type { ProbeRun } from '../../src/sources/probe-runner.js';
import { apiObjectsText } from '../lab/api-objects.js';
import { FLEET_SCENARIO, fleetNodes } from '../lab/fleet-lab.js';

/** When the generated fleet was "captured". */
export const CAPTURED = '2026-12-05T10:00:00.000Z';
/** lab-node's last kube-proxy sync (seconds since the epoch): 12 s before the capture. */
export const SYNC = Date.parse(CAPTURED) / 1000 - 12;

function run(id: string, stdout: string, exitCode = 0, stderr = ''): ProbeRun {
  const argv = probe(id).argv;
  return { id, argv, status: exitCode === 0 ? 'ok' : 'failed', result: { argv, stdout, stderr, exitCode, startedAt: CAPTURED, durationMs: 5 } };
}

/** A fleet bundle of the three lab nodes (+ `extra` ok copies of lab-node), written as fleet capture writes it. */
export function writeLabFleet(dir: string, extra = 0): void {
  const api = apiObjectsText(FLEET_SCENARIO);
  const nodes = fleetNodes();
  for (let i = 0; i < extra; i++) nodes.push({ ...nodes[0]!, name: `lab-node-x${i}` });
  for (const node of nodes) {
    const rules = generateIptablesRestore({ ...FLEET_SCENARIO, nodeName: node.name, nodeIPs: [node.ip], services: node.services }, { includeJumpRules: true, nfacct: false, randomFully: true });
    const metrics = node.name === 'lab-node'
      ? `# HELP kubeproxy_sync_proxy_rules_last_timestamp_seconds The last time proxy rules were successfully synced\n# TYPE kubeproxy_sync_proxy_rules_last_timestamp_seconds gauge\nkubeproxy_sync_proxy_rules_last_timestamp_seconds ${SYNC}\nkubeproxy_sync_proxy_rules_last_queued_timestamp_seconds ${SYNC - 1}\n`
      : '';
    writeBundle(path.join(dir, 'nodes', node.name), {
      capturedAt: CAPTURED, nodescopeVersion: 'test', node: node.name, source: { kind: 'kubectl-debug', label: `node/${node.name}` }, toolVersions: {},
      runs: [run('iptables-save', rules), metrics ? run('kube-proxy-metrics', metrics) : run('kube-proxy-metrics', '', 7, 'curl: (7) Failed to connect to 127.0.0.1 port 10249: Connection refused\n')],
      apiText: api,
    });
  }
  writeFileSync(path.join(dir, 'api.json'), api);
  writeFleetManifest(dir, {
    formatVersion: FLEET_FORMAT_VERSION, capturedAt: CAPTURED, via: 'node-debug-pod',
    nodes: [...nodes.map((n) => ({ name: n.name, dir: `nodes/${n.name}`, status: 'ok' as const })), { name: 'lab-node9', dir: 'nodes/lab-node9', status: 'failed', reason: 'timed out after 2 min while opening the node' }],
  });
}
