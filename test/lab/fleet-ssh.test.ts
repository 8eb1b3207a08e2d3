/**
 * `nodescope fleet capture --ssh` / `--ssh-file` (the real binary) over a lab fleet of SSH
 * "nodes": two of the fleet's node namespaces (fleet-lab.ts: lab-node holds the rules for
 * the current API, lab-node2 still a stale web endpoint), each with its own sshd on a veth
 * address reached from this host's namespace. Both are captured over SSH, API objects from
 * `--api-file`, and `fleet diagnose` on the result names lab-node2's stale endpoint.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFleetManifest } from '../../src/fleet/bundle.js';
import { labAvailable } from '../helpers/lab.js';
import { runBinary } from '../helpers/run-binary.js';
import { run, runOk } from './exec.js';
import { FLEET_SCENARIO, fleetApiObjects, fleetDown, fleetUp, STALE_ENDPOINT } from './fleet-lab.js';
import { labNames, type LabNames } from './names.js';
import { stopAllProcesses } from './processes.js';
import { makeKey, startSshd } from './ssh-lab.js';

const PREFIX = 'nsfs-';
const canRun = labAvailable(['ip', 'iptables-restore', 'iptables-save', 'conntrack', 'ssh-keygen']);
/** The SSH nodes: fleet node, its veth address (this host's end is .1 of the /30). */
const NODES = [
  { node: 'lab-node', address: '10.251.1.2', host: '10.251.1.1', veth: `${PREFIX}v1` },
  { node: 'lab-node2', address: '10.251.2.2', host: '10.251.2.1', veth: `${PREFIX}v2` },
] as const;

let dir: string;
let home: string;
let names: LabNames;
let apiFile: string;

const cli = (args: string[]) => runBinary(args, home);

beforeAll(async () => {
  if (!canRun) return;
  const namespaces = await fleetUp(PREFIX);
  names = { ...labNames(PREFIX, FLEET_SCENARIO), all: Object.values(namespaces) };
  dir = mkdtempSync(path.join(tmpdir(), 'nodescope-fleet-ssh-'));
  home = path.join(dir, 'home');
  mkdirSync(path.join(home, '.ssh'), { recursive: true });
  const userKey = await makeKey(path.join(home, '.ssh', 'id_ed25519'), 'sre@laptop');
  for (const n of NODES) {
    const ns = namespaces[n.node]!;
    await run(['ip', 'link', 'del', n.veth]);
    await runOk(['ip', 'link', 'add', n.veth, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns]);
    await runOk(['ip', 'addr', 'add', `${n.host}/30`, 'dev', n.veth]);
    await runOk(['ip', 'link', 'set', n.veth, 'up']);
    await runOk(['ip', 'netns', 'exec', ns, 'ip', 'addr', 'add', `${n.address}/30`, 'dev', 'eth0']);
    await runOk(['ip', 'netns', 'exec', ns, 'ip', 'link', 'set', 'eth0', 'up']);
    const hostKey = await makeKey(path.join(dir, `${n.node}_host_ed25519`), `${n.node}-host-key`);
    await startSshd(names, { key: `sshd-${n.node}`, ns, address: n.address, port: 22, dir, hostKey, authorized: [userKey.publicLine] });
  }
  apiFile = path.join(dir, 'api.json');
  writeFileSync(apiFile, JSON.stringify(fleetApiObjects()));
}, 120_000);

afterAll(async () => {
  if (!canRun) return;
  if (names) await stopAllProcesses(names);
  await fleetDown(PREFIX);
  rmSync(dir, { recursive: true, force: true });
}, 60_000);

describe.runIf(canRun)('fleet capture over SSH', () => {
  it('--ssh captures both nodes, and fleet diagnose names the stale endpoint of the second', async () => {
    const out = path.join(dir, 'fleet');
    const hosts = NODES.map((n) => `root@${n.address}`);
    const r = await cli(['fleet', 'capture', '-o', out, '--ssh', hosts.join(','), '--api-file', apiFile, '--accept-new-host-key']);
    expect(r.code, r.stderr).toBe(0);
    const manifest = readFleetManifest(out);
    expect(manifest.via).toBe('ssh');
    expect(manifest.nodes.map((n) => [n.name, n.status])).toEqual(hosts.map((h) => [h, 'ok']));
    // Each bundle holds its own node's rules (read through its own sshd).
    for (const [i, n] of manifest.nodes.entries()) {
      const rules = readFileSync(path.join(out, n.dir, 'probes', 'iptables-save.stdout'), 'utf8');
      expect(rules.includes(STALE_ENDPOINT), n.name).toBe(i === 1);
    }
    const d = await cli(['fleet', 'diagnose', out, '-o', 'json']);
    expect(d.code, d.stderr).toBe(1);
    const json = JSON.parse(d.stdout) as { nodes: { name: string; status: string; mode: string }[]; services: { name: string; divergent: { node: string; stale: string[] }[] }[] };
    expect(json.nodes.map((n) => [n.name, n.mode])).toEqual(hosts.map((h) => [h, 'iptables']));
    expect(json.nodes[1]!.status).toBe('degraded');
    const web = json.services.find((s) => s.name === 'web');
    expect(web?.divergent.map((x) => [x.node, x.stale])).toEqual([[hosts[1], [`${STALE_ENDPOINT}:8080`]]]);
  }, 240_000);

  it('--ssh-file reads the hosts from a file (comments and blank lines skipped)', async () => {
    const out = path.join(dir, 'fleet-file');
    const file = path.join(dir, 'hosts.txt');
    writeFileSync(file, `# the lab's SSH nodes\n${NODES.map((n) => `root@${n.address}`).join('\n\n')}\n`);
    const r = await cli(['fleet', 'capture', '-o', out, '--ssh-file', file, '--api-file', apiFile]);
    expect(r.code, r.stderr).toBe(0);
    expect(readFleetManifest(out).nodes.map((n) => n.status)).toEqual(['ok', 'ok']);
  }, 240_000);
});
