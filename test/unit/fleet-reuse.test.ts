/**
 * `fleet diagnose` reuses a node's rules diagnosis for every node with the same key
 * (src/fleet/node-key.ts): counters left out of the rules, the API as seen from the node.
 * Proven here by diagnosing a fleet both ways — reused and every node whole — and getting the
 * same result, on a fleet where the key must tell nodes apart: web has externalTrafficPolicy
 * Local (lab-node and lab-node2 hold its endpoints, lab-node3–6 none), lab-node5's counters
 * differ from lab-node4's, only lab-node5 has a flow to a pod that is gone, and lab-node6 holds
 * lab-node's very rules (counters aside) — wrong for a node without web's endpoints.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateIptablesRestore } from '../../src/analysis/kubeproxy-iptables.js';
import type { LabScenario } from '../../src/analysis/lab-scenario-types.js';
import { FLEET_FORMAT_VERSION, writeFleetManifest } from '../../src/fleet/bundle.js';
import { diagnoseFleet } from '../../src/fleet/diagnose.js';
import { fleetDiagnoseNode } from '../../src/fleet/node-diagnosis.js';
import { writeBundle } from '../../src/sources/bundle.js';
import { probe } from '../../src/sources/catalog.js';
import type { ProbeRun } from '../../src/sources/probe-runner.js';
import { apiObjectsText } from '../lab/api-objects.js';
import { FLEET_SCENARIO } from '../lab/fleet-lab.js';

const CAPTURED = '2026-12-05T10:00:00.000Z';
/** A web pod that is gone from the API: lab-node5 still has a flow DNAT'ed to it. */
const GONE = '10.244.1.77';

const SCENARIO: LabScenario = {
  ...FLEET_SCENARIO,
  nodes: [...FLEET_SCENARIO.nodes, { name: 'lab-node4', internalIP: '192.168.49.5', podCIDR: '10.244.3.0/24' }, { name: 'lab-node5', internalIP: '192.168.49.6', podCIDR: '10.244.4.0/24' }, { name: 'lab-node6', internalIP: '192.168.49.7', podCIDR: '10.244.5.0/24' }],
  services: FLEET_SCENARIO.services.map((s) => (s.name === 'web' ? { ...s, externalTrafficPolicy: 'Local' as const } : s)),
};
const NODES = ['lab-node', 'lab-node2', 'lab-node3', 'lab-node4', 'lab-node5', 'lab-node6'];

function run(id: string, stdout: string): ProbeRun {
  const argv = probe(id).argv;
  return { id, argv, status: 'ok', result: { argv, stdout, stderr: '', exitCode: 0, startedAt: CAPTURED, durationMs: 5 } };
}

/** `iptables-save -c` text of restore text: counters `[n:m]` on every rule, varying with `seed`. */
function withCounters(text: string, seed: number): string {
  let i = 0;
  return text.split('\n').map((l) => (l.startsWith('-A ') ? `[${seed * ++i}:${seed * i * 60}] ${l}` : l.startsWith(':') ? l.replace(/\[\d+:\d+\]$/, `[${seed}:${seed * 99}]`) : l)).join('\n');
}

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'nodescope-fleet-reuse-'));
  const api = apiObjectsText(SCENARIO);
  for (const [i, name] of NODES.entries()) {
    const as = name === 'lab-node6' ? 'lab-node' : name;
    const ip = SCENARIO.nodes.find((n) => n.name === as)!.internalIP;
    const rules = generateIptablesRestore({ ...SCENARIO, nodeName: as, nodeIPs: [ip] }, { includeJumpRules: true, nfacct: false, randomFully: true });
    const flows = name === 'lab-node5' ? `ipv4     2 tcp      6 431483 ESTABLISHED src=10.244.0.9 dst=10.96.12.34 sport=37679 dport=80 packets=4 bytes=566 src=${GONE} dst=10.244.0.9 sport=8080 dport=37679 packets=6 bytes=4512 [ASSURED] mark=0 use=1\n` : '';
    writeBundle(path.join(dir, 'nodes', name), {
      capturedAt: CAPTURED, nodescopeVersion: 'test', node: name, source: { kind: 'kubectl-debug', label: `node/${name}` }, toolVersions: {},
      runs: [run('iptables-save', withCounters(rules, i + 1)), run('conntrack', flows)],
      apiText: api,
    });
  }
  writeFileSync(path.join(dir, 'api.json'), api);
  writeFleetManifest(dir, { formatVersion: FLEET_FORMAT_VERSION, capturedAt: CAPTURED, via: 'node-debug-pod', nodes: NODES.map((name) => ({ name, dir: `nodes/${name}`, status: 'ok' as const })) });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('fleet diagnose reuse', () => {
  it('gives what diagnosing every node whole gives, reusing only where the key allows', async () => {
    const reused: string[] = [];
    const fast = await diagnoseFleet(dir, { diagnose: fleetDiagnoseNode, onNode: (name, _i, _n, r) => void (r && reused.push(name)) });
    const whole = await diagnoseFleet(dir, { diagnose: fleetDiagnoseNode, reuse: false });
    expect(isDeepStrictEqual(fast, whole)).toBe(true);
    // lab-node and lab-node2 each hold their own of web's endpoints (eTP Local): diagnosed whole.
    // lab-node3, lab-node4 and lab-node5 hold none: the first is diagnosed, the others reuse it.
    expect(reused).toEqual(['lab-node4', 'lab-node5']);
    // lab-node6 has lab-node's rules, but not its endpoints: not reused, and web is wrong there.
    expect(fast.nodes.filter((n) => n.status !== 'ok').map((n) => n.name)).toEqual(['lab-node5', 'lab-node6']);
    expect(fast.services.find((s) => s.name === 'web')?.nodes['lab-node6']?.findings.some((f) => f.layer === 'dataplane')).toBe(true);
    // The flow is lab-node5's alone: the reused rules diagnosis did not carry it to the others.
    const web = fast.services.find((s) => s.name === 'web');
    expect(Object.entries(web?.nodes ?? {}).filter(([, c]) => c.findings.some((f) => f.layer === 'conntrack')).map(([n]) => n)).toEqual(['lab-node5']);
    // Evidence quotes rules without counters, so reused and whole cells agree.
    expect(JSON.stringify(fast)).not.toMatch(/"text":"\[\d+:\d+\]/);
  });
});
