/**
 * A fleet bundle of generated Cilium nodes (kube-proxy replacement), written as `fleet capture`
 * writes one: each node's LB maps are what Cilium's agent would write on that node for the API
 * it last saw (src/analysis/cilium-expected.ts), encoded in the real map layouts and dumped as
 * `bpftool -j map dump` prints them; its iptables rules are Cilium's own chains (no KUBE-).
 * As in the kube-proxy lab fleet (test/lab/fleet-lab.ts): lab-node2 still holds a web
 * endpoint that is gone, lab-node3 has no kube-dns. `status` and `frontends` give a node its
 * `cilium-dbg status --verbose` and `cilium-dbg shell -- db/show frontends` outputs.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { expectCiliumTable } from '../../src/analysis/cilium-expected.js';
import { FLEET_FORMAT_VERSION, writeFleetManifest } from '../../src/fleet/bundle.js';
import { encodeLbTable } from '../../src/parsers/bpftool-lb-encode.js';
import { writeBundle } from '../../src/sources/bundle.js';
import { probe } from '../../src/sources/catalog.js';
import type { ProbeRun } from '../../src/sources/probe-runner.js';
import { apiObjectsText } from '../lab/api-objects.js';
import { ciliumRulesText } from '../lab/cilium-mode.js';
import { FLEET_SCENARIO, fleetNodes } from '../lab/fleet-lab.js';
import { bpftoolJson } from '../unit/cilium-builders.js';
import { CAPTURED } from './fleet-fixtures.js';

/** The probe of each LB map (commands/probes.yaml). */
const MAP_PROBE: Readonly<Record<string, string>> = {
  cilium_lb4_services_v2: 'bpf-lb4-services',
  cilium_lb4_backends_v3: 'bpf-lb4-backends',
  cilium_lb4_reverse_nat: 'bpf-lb4-reverse-nat',
};

function run(id: string, stdout: string, exitCode = 0, stderr = ''): ProbeRun {
  const argv = probe(id).argv.map((a) => a.replace('{bpfRoot}', '/sys/fs/bpf/tc/globals'));
  return { id, argv, status: exitCode === 0 ? 'ok' : 'failed', result: { argv, stdout, stderr, exitCode, startedAt: CAPTURED, durationMs: 5 } };
}

/** What a node's agent answers, by node name: `cilium-status` and `cilium-statedb-frontends` stdout (absent: the probe failed). */
export interface CiliumAgentOutputs {
  readonly status?: string;
  readonly frontends?: string;
}

/** Writes the Cilium fleet into `dir`; `agents`: each node's agent outputs. Returns the node names. */
export function writeCiliumFleet(dir: string, agents: Readonly<Record<string, CiliumAgentOutputs>> = {}): string[] {
  const api = apiObjectsText(FLEET_SCENARIO);
  const nodes = fleetNodes();
  for (const node of nodes) {
    const table = expectCiliumTable({ ...FLEET_SCENARIO, nodeName: node.name, nodeIPs: [node.ip], services: node.services }).table;
    const maps = encodeLbTable(table).filter((m) => MAP_PROBE[m.name]);
    const agent = agents[node.name] ?? {};
    const unreachable = 'Error: Get "http://localhost/v1/healthz": dial unix /var/run/cilium/cilium.sock: connect: no such file or directory\n';
    writeBundle(path.join(dir, 'nodes', node.name), {
      capturedAt: CAPTURED, nodescopeVersion: 'test', node: node.name, source: { kind: 'kubectl-debug', label: `node/${node.name}` }, toolVersions: {},
      runs: [
        run('iptables-save', ciliumRulesText({ ...FLEET_SCENARIO, nodeName: node.name })),
        ...maps.map((m) => run(MAP_PROBE[m.name]!, bpftoolJson(m.entries))),
        agent.status !== undefined ? run('cilium-status', agent.status) : run('cilium-status', '', 1, unreachable),
        agent.frontends !== undefined ? run('cilium-statedb-frontends', agent.frontends) : run('cilium-statedb-frontends', '', 1, unreachable),
      ],
      apiText: api,
    });
  }
  writeFileSync(path.join(dir, 'api.json'), api);
  writeFleetManifest(dir, { formatVersion: FLEET_FORMAT_VERSION, capturedAt: CAPTURED, via: 'node-debug-pod', nodes: nodes.map((n) => ({ name: n.name, dir: `nodes/${n.name}`, status: 'ok' as const })) });
  return nodes.map((n) => n.name);
}
