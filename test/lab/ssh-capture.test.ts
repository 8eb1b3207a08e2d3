/**
 * The built CLI over SSH, run where an SRE's laptop would be — in the lab's `outside`
 * namespace (`ip netns exec`), connecting by TCP to sshd in the node namespace with the
 * HOME's ~/.ssh (key, known_hosts). `capture --ssh` writes a bundle that `show --replay`
 * prints exactly like the live `show --ssh`; the bundle holds no key material; an
 * unknown host key stops the CLI with its fingerprint until `--accept-new-host-key`.
 * The API server cannot be reached from that namespace, so API objects come from
 * `--api-file` (the lab's List) — the live API path is covered by kubectl-debug.test.ts.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/paths.js';
import { labAvailable } from '../helpers/lab.js';
import { plainEnv, startBinary } from '../helpers/run-binary.js';
import { runOk } from './exec.js';
import { LAB_SCENARIO, labDown, labUp, type LabHandle } from './lab.js';
import { makeKey, startSshd, type KeyPair } from './ssh-lab.js';
import { sureOfMode } from '../helpers/live-replay.js';

const PREFIX = 'nssc-';
const canRun = labAvailable(['ip', 'nft', 'iptables-restore', 'curl', 'dnsmasq', 'conntrack', 'sysctl', 'ssh-keygen']);
const CLI = path.join(packageRoot(), 'dist', 'bin', 'nodescope.js');
const nodeIP = LAB_SCENARIO.nodes.find((n) => n.name === LAB_SCENARIO.nodeName)?.internalIP ?? '';

let lab: LabHandle;
let dir: string;
let home: string;
let hostKey: KeyPair;
let userKey: KeyPair;

/** Runs the CLI inside the outside namespace with the test HOME and no kubeconfig. */
const cli = (args: string[]) => startBinary(args, { env: plainEnv(home), under: ['ip', 'netns', 'exec', lab.names.outside] }).done;

function filesUnder(d: string): string[] {
  return readdirSync(d).flatMap((n) => (statSync(path.join(d, n)).isDirectory() ? filesUnder(path.join(d, n)) : [path.join(d, n)]));
}

beforeAll(async () => {
  if (!canRun) return;
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: build first (npx tsc -p . — npm test does)`);
  lab = await labUp('iptables', { prefix: PREFIX });
  dir = mkdtempSync(path.join(tmpdir(), 'nodescope-sshcap-'));
  home = path.join(dir, 'home');
  mkdirSync(path.join(home, '.ssh'), { recursive: true });
  hostKey = await makeKey(path.join(dir, 'host_ed25519'), 'node-host-key');
  userKey = await makeKey(path.join(home, '.ssh', 'id_ed25519'), 'sre@laptop');
  await startSshd(lab.names, { key: 'sshd', ns: lab.names.node, address: nodeIP, port: 22, dir, hostKey, authorized: [userKey.publicLine] });
}, 120_000);

afterAll(async () => {
  if (!canRun) return;
  await labDown({ prefix: PREFIX });
  rmSync(dir, { recursive: true, force: true });
}, 60_000);

describe.runIf(canRun)('nodescope CLI over SSH from the outside namespace', () => {
  it('stops on an unknown host key with its fingerprint, and goes on with --accept-new-host-key', async () => {
    const refused = await cli(['show', 'rules', '--ssh', `root@${nodeIP}`, '--api-file', lab.apiObjectsPath]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(hostKey.fingerprint);
    expect(refused.stderr).toContain('--accept-new-host-key');
    expect(existsSync(path.join(home, '.ssh', 'known_hosts'))).toBe(false);
    const accepted = await cli(['show', 'rules', '--ssh', `root@${nodeIP}`, '--api-file', lab.apiObjectsPath, '--accept-new-host-key']);
    expect(accepted.code, accepted.stderr).toBe(0);
    await runOk(['ssh-keygen', '-F', nodeIP, '-f', path.join(home, '.ssh', 'known_hosts')]);
  });

  it('capture --ssh writes a bundle that show --replay prints like the live show, without key material', async () => {
    writeFileSync(path.join(home, '.ssh', 'known_hosts'), `${nodeIP} ${hostKey.publicLine}\n`);
    const bundle = path.join(dir, 'bundle-ssh');
    const target = ['--ssh', `root@${nodeIP}`, '--api-file', lab.apiObjectsPath];
    const live = { services: await cli(['show', 'services', ...target]), rules: await cli(['show', 'rules', ...target]) };
    const cap = await cli(['capture', ...target, '-o', bundle]);
    expect(cap.code, cap.stderr).toBe(0);
    const manifest = JSON.parse(readFileSync(path.join(bundle, 'manifest.json'), 'utf8')) as { source: { kind: string; label: string }; probes: { id: string; executedArgv: string[] }[] };
    expect(manifest.source).toEqual({ kind: 'ssh', label: `ssh:root@${nodeIP}` });
    expect(manifest.probes.find((p) => p.id === 'iptables-save')?.executedArgv).toEqual(['env', 'LC_ALL=C', 'iptables-save', '-c']);
    // The SSH session's own packets cross the node's INPUT/OUTPUT chains between the live
    // read and the capture, so rule counters ([packets:bytes]) move; everything else is equal.
    const counters = (text: string) => (text.match(/\[\d+:\d+\]/g) ?? []).length;
    const masked = (text: string) => text.replace(/\[\d+:\d+\]/g, '[p:b]');
    for (const what of ['services', 'rules'] as const) {
      expect(live[what].code, live[what].stderr).toBe(0);
      const replay = await cli(['show', what, '--replay', bundle]);
      expect(replay.code, replay.stderr).toBe(0);
      const [liveHead, ...liveBody] = sureOfMode(what, live[what].stdout).split('\n');
      const [replayHead, ...replayBody] = replay.stdout.split('\n');
      expect(counters(replayBody.join('\n'))).toBe(counters(liveBody.join('\n')));
      expect(masked(replayBody.join('\n'))).toBe(masked(liveBody.join('\n')));
      expect(replayHead!.split(' · ')[0]).toBe(liveHead!.split(' · ')[0]);
    }
    expect(live.rules.stdout).toContain('KUBE-SERVICES');
    const privateBody = readFileSync(userKey.file, 'utf8').split('\n').filter((l) => l !== '' && !l.startsWith('-----'));
    for (const file of filesUnder(bundle)) {
      const text = readFileSync(file, 'utf8');
      expect(text, file).not.toContain('PRIVATE KEY');
      for (const line of privateBody) expect(text.includes(line), `${file} holds private key material`).toBe(false);
    }
  });
});
