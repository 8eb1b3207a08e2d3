/**
 * A lab fleet of Cilium nodes with real BPF maps: three node network namespaces, each with
 * Cilium's iptables chains and its own LB maps (`cilium_lb4_services_v2`, `…_backends_v3`,
 * `…_reverse_nat`) pinned under a bpffs of its own and filled by bpftool with what the agent
 * would write on that node for the API it last saw (test/lab/fleet-lab.ts: lab-node2 still a
 * web backend whose pod is gone, lab-node3 no kube-dns). Each is captured with the real binary
 * (`capture --netns … --bpf-root …`, bpftool dumping the pinned maps), the bundles put
 * together as a fleet, and `fleet diagnose` must name exactly those two nodes' backend sets,
 * endpoints named. No cilium-agent runs here: each node's freshness is `unknown`, saying so.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectCiliumTable } from '../../src/analysis/cilium-expected.js';
import { FLEET_FORMAT_VERSION, writeFleetManifest } from '../../src/fleet/bundle.js';
import { labAvailable } from '../helpers/lab.js';
import { runBinary } from '../helpers/run-binary.js';
import { bpffsMounted, createLabCiliumMaps, removeLabCiliumMaps } from './cilium-maps.js';
import { ciliumRulesText } from './cilium-mode.js';
import { nsExecOk, run, runOk } from './exec.js';
import { FLEET_SCENARIO, fleetApiObjects, fleetNodes, STALE_ENDPOINT } from './fleet-lab.js';

const PREFIX = 'nsfc-';
const STATE = `/run/nodescope-lab/${PREFIX}`;
const canRun = labAvailable(['ip', 'iptables-restore', 'iptables-save', 'bpftool', 'mount', 'umount']);
const bpffsOf = (node: string) => path.join(STATE, node, 'bpffs');
const rootOf = (node: string) => path.join(bpffsOf(node), 'tc', 'globals');
let dir: string;

const cli = (args: string[]) => runBinary(args, dir);

/** Removes every namespace, map and bpffs of this file (a previous run that died included). */
async function down(): Promise<void> {
  for (const node of fleetNodes()) {
    await run(['ip', 'netns', 'del', `${PREFIX}${node.name}`]);
    if (bpffsMounted(bpffsOf(node.name))) {
      removeLabCiliumMaps({ bpffs: bpffsOf(node.name), root: rootOf(node.name) });
      spawnSync('umount', [bpffsOf(node.name)]);
    }
  }
  rmSync(STATE, { recursive: true, force: true });
}

beforeAll(async () => {
  if (!canRun) return;
  await down();
  dir = mkdtempSync(path.join(tmpdir(), 'nodescope-fleet-cilium-lab-'));
  writeFileSync(path.join(dir, 'api.json'), JSON.stringify(fleetApiObjects()));
  for (const node of fleetNodes()) {
    const ns = `${PREFIX}${node.name}`;
    await runOk(['ip', 'netns', 'add', ns]);
    await nsExecOk(ns, ['ip', 'link', 'set', 'lo', 'up']);
    await nsExecOk(ns, ['iptables-restore'], { input: ciliumRulesText({ ...FLEET_SCENARIO, nodeName: node.name }) });
    mkdirSync(bpffsOf(node.name), { recursive: true });
    const table = expectCiliumTable({ ...FLEET_SCENARIO, nodeName: node.name, nodeIPs: [node.ip], services: node.services }).table;
    createLabCiliumMaps({ bpffs: bpffsOf(node.name), root: rootOf(node.name), table });
  }
}, 120_000);

afterAll(async () => {
  if (!canRun) return;
  await down();
  rmSync(dir, { recursive: true, force: true });
}, 60_000);

describe.runIf(canRun)('fleet diagnose over Cilium nodes with real BPF maps', () => {
  it('captures each node through bpftool and names the two nodes whose backends differ, endpoints named', async () => {
    const fleet = path.join(dir, 'fleet');
    const nodes = fleetNodes();
    for (const node of nodes) {
      const r = await cli(['capture', '--netns', `${PREFIX}${node.name}`, '--bpf-root', rootOf(node.name), '--api-file', path.join(dir, 'api.json'), '--no-dns', '-o', path.join(fleet, 'nodes', node.name)]);
      expect(r.code, r.stderr).toBe(0);
    }
    writeFileSync(path.join(fleet, 'api.json'), JSON.stringify(fleetApiObjects()));
    writeFleetManifest(fleet, { formatVersion: FLEET_FORMAT_VERSION, capturedAt: new Date().toISOString(), via: 'node-debug-pod', nodes: nodes.map((n) => ({ name: n.name, dir: `nodes/${n.name}`, status: 'ok' as const })) });
    const d = await cli(['fleet', 'diagnose', fleet, '-o', 'json']);
    expect(d.code, d.stderr).toBe(1);
    const json = JSON.parse(d.stdout) as { nodes: { name: string; mode: string; freshness: { source: string; reason?: string } }[]; services: { name: string; majority: string[] | null; divergent: { node: string; stale: string[]; missing: string[]; differsFromApi: boolean; differsFromMajority: boolean }[] }[] };
    expect(json.nodes.map((n) => [n.name, n.mode])).toEqual(nodes.map((n) => [n.name, 'cilium']));
    const web = json.services.find((s) => s.name === 'web')!;
    expect(web.divergent.map((x) => [x.node, x.stale, x.missing, x.differsFromApi, x.differsFromMajority])).toEqual([['lab-node2', [`${STALE_ENDPOINT}:8080`], [], true, true]]);
    const dns = json.services.find((s) => s.name === 'kube-dns')!;
    expect(dns.divergent.map((x) => [x.node, x.stale, x.missing])).toEqual([['lab-node3', [], dns.majority]]);
    expect(dns.majority?.length).toBeGreaterThan(0);
    const named = json.services.flatMap((s) => s.divergent.map((x) => `${x.node} ${s.name}`)).sort();
    expect(named).toEqual(['lab-node2 web', 'lab-node3 kube-dns']);
    for (const n of json.nodes) expect(n.freshness).toEqual({ source: 'unknown', reason: 'the capture did not read cilium-status; the capture did not read cilium-statedb-frontends' });
    expect(existsSync(path.join(fleet, 'nodes', 'lab-node2', 'probes', 'bpf-lb4-services.stdout'))).toBe(true);
  }, 240_000);
});
