/**
 * `nodescope fleet capture` (the real binary) against the recorded API server over a lab
 * fleet of three node namespaces (fleet-lab.ts): each node-debug pod's exec lands in its
 * node's namespace by the pod's nodeName. All three are captured; afterwards no pod of
 * nodescope is left on the server (also checked with the real kubectl) — after a normal
 * run, after SIGINT and SIGTERM mid-capture, and after the API server drops every
 * connection mid-capture. `fleet diagnose` then names exactly the two bad nodes — from the
 * bundle, and live (capturing to a temporary bundle it deletes after), also as the `--fleet`
 * TUI in tmux.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MANAGED_BY_LABEL, RUN_LABEL } from '../../src/sources/k8s-debug-pod.js';
import { readFleetManifest } from '../../src/fleet/bundle.js';
import { readBundle } from '../../src/sources/bundle.js';
import { startApiServer, type ApiServerHandle } from '../api-server/index.js';
import { labAvailable } from '../helpers/lab.js';
import { startBinary } from '../helpers/run-binary.js';
import { BINARY, TmuxSession, tmuxAvailable } from '../helpers/tmux.js';
import { run } from './exec.js';
import { fleetApiObjects, fleetDown, fleetNodes, fleetUp, STALE_ENDPOINT } from './fleet-lab.js';

const PREFIX = 'nsfl-';
const canRun = labAvailable(['ip', 'iptables-restore', 'iptables-save', 'conntrack']);
const haveKubectl = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' }).status === 0;

let server: ApiServerHandle;
let home: string;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ours = () => server.pods().filter((p) => p.metadata.labels?.[MANAGED_BY_LABEL] === 'nodescope');

async function until(what: string, ok: () => boolean, timeoutMs = 30_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

/** Runs the built binary with the server's kubeconfig (`env`: more variables). */
function cli(args: string[], env: Record<string, string> = {}) {
  return startBinary(args, { env: { ...process.env, HOME: home, XDG_STATE_HOME: path.join(home, 'state'), KUBECONFIG: server.kubeconfigPath, NO_COLOR: '1', LANG: 'C.UTF-8', ...env } });
}

/** What the real kubectl lists of nodescope's pods (empty when nothing is left); async: the server runs in this process. */
async function kubectlOurs(): Promise<string[]> {
  const r = await run(['kubectl', '--kubeconfig', server.kubeconfigPath, '--cache-dir', path.join(home, 'kube-cache'), 'get', 'pods', '-A', '-l', `${MANAGED_BY_LABEL}=nodescope`, '-o', 'name'], { timeoutMs: 60_000 });
  expect(r.exitCode, r.stderr).toBe(0);
  return r.stdout.split('\n').filter(Boolean);
}

beforeAll(async () => {
  if (!canRun) return;
  const nodeNetns = await fleetUp(PREFIX);
  server = await startApiServer({ objects: fleetApiObjects() as never, nodeNetns, podStartDelayMs: 100 });
  home = mkdtempSync(path.join(tmpdir(), 'nodescope-fleet-home-'));
}, 120_000);

afterAll(async () => {
  if (!canRun) return;
  await server?.close();
  await fleetDown(PREFIX);
  rmSync(home, { recursive: true, force: true });
}, 60_000);

describe.runIf(canRun)('fleet capture through the recorded API server', () => {
  let fleetDir = '';

  it('captures all three nodes, each pod on its node with the run label and a deadline; nothing is left after', async () => {
    fleetDir = path.join(home, 'fleet');
    const seen = new Map<string, Record<string, unknown>>();
    const r = cli(['fleet', 'capture', '-o', fleetDir, '--parallel', '2', '--pod-deadline', '10m']);
    while (r.child.exitCode === null) {
      for (const p of ours()) seen.set(p.metadata.name!, p as Record<string, unknown>);
      await sleep(20);
    }
    const out = await r.done;
    expect(out.code, out.stderr).toBe(0);
    const manifest = readFleetManifest(fleetDir);
    expect(manifest.nodes.map((n) => [n.name, n.status])).toEqual(fleetNodes().map((n) => [n.name, 'ok']));
    expect(manifest.cluster).toBe(server.url);
    // Each node bundle holds that node's own rules: the stale endpoint only on lab-node2.
    for (const n of manifest.nodes) {
      const bundle = readBundle(path.join(fleetDir, n.dir));
      expect(bundle.manifest.node).toBe(n.name);
      const rules = readFileSync(path.join(fleetDir, n.dir, 'probes', 'iptables-save.stdout'), 'utf8');
      expect(rules.includes(STALE_ENDPOINT), n.name).toBe(n.name === 'lab-node2');
      expect(rules.includes('kube-system/kube-dns'), n.name).toBe(n.name !== 'lab-node3');
    }
    // One pod per node, bound by nodeName, labelled with one run id, ending by itself.
    const pods = [...seen.values()];
    const spec = (p: Record<string, unknown>) => p['spec'] as { nodeName: string; activeDeadlineSeconds: number; hostNetwork: boolean; hostPID: boolean; tolerations: unknown[] };
    expect(pods.map((p) => spec(p).nodeName).sort()).toEqual(['lab-node', 'lab-node2', 'lab-node3']);
    const runs = new Set(pods.map((p) => (p['metadata'] as { labels: Record<string, string> }).labels[RUN_LABEL]));
    expect(runs.size).toBe(1);
    expect([...runs][0]).toMatch(/^[0-9a-f]{12}$/);
    for (const p of pods) expect(spec(p)).toMatchObject({ activeDeadlineSeconds: 600, hostNetwork: true, hostPID: true, tolerations: [{ operator: 'Exists' }] });
    expect(out.stderr).toMatch(/fleet: 3\/3 done, 0 running, 0 waiting — \d+ s elapsed, ETA 0 s/);
    expect(ours()).toEqual([]);
    if (haveKubectl) expect(await kubectlOurs()).toEqual([]);
  }, 120_000);

  it('fleet diagnose names exactly the two bad nodes and their Services (exit 1)', async () => {
    const r = await cli(['fleet', 'diagnose', fleetDir, '-o', 'json']).done;
    expect(r.code, r.stderr).toBe(1);
    const d = JSON.parse(r.stdout) as { nodes: { name: string; status: string }[]; services: { namespace: string; name: string; divergent: { node: string; stale: string[]; missing: string[] }[]; nodes: Record<string, { verdict: string; ownFault: boolean }> }[] };
    expect(d.nodes.map((n) => [n.name, n.status])).toEqual([['lab-node', 'ok'], ['lab-node2', 'degraded'], ['lab-node3', 'broken']]);
    const bad = d.services.flatMap((s) => Object.entries(s.nodes).filter(([, c]) => c.ownFault).map(([n, c]) => `${n} ${s.namespace}/${s.name} ${c.verdict}`));
    expect(bad.sort()).toEqual(['lab-node2 default/web degraded', 'lab-node3 kube-system/kube-dns broken']);
    const divergent = d.services.flatMap((s) => s.divergent.map((x) => `${x.node} ${s.namespace}/${s.name} stale=${x.stale.join(',')} missing=${x.missing.join(',')}`));
    expect(divergent.sort()).toEqual([`lab-node2 default/web stale=${STALE_ENDPOINT}:8080 missing=`, 'lab-node3 kube-system/kube-dns stale= missing=10.244.0.2:53,10.244.0.3:53']);
  }, 60_000);

  it('live fleet diagnose (no DIR, the kubeconfig\'s cluster): captures to a temporary bundle, names the same two nodes, deletes it', async () => {
    const tmp = path.join(home, 'tmp-live');
    mkdirSync(tmp, { recursive: true });
    const r = await cli(['fleet', 'diagnose', '--parallel', '2', '-o', 'json'], { TMPDIR: tmp }).done;
    expect(r.code, r.stderr).toBe(1);
    const d = JSON.parse(r.stdout) as { nodes: { name: string; status: string }[] };
    expect(d.nodes.map((n) => [n.name, n.status])).toEqual([['lab-node', 'ok'], ['lab-node2', 'degraded'], ['lab-node3', 'broken']]);
    expect(r.stderr).toMatch(/fleet: 3\/3 done/);
    expect(readdirSync(tmp)).toEqual([]);
    expect(ours()).toEqual([]);
    // A bundle and live options at once is refused, before anything is read or created.
    const pods = server.requests().filter((q) => q.method === 'POST').length;
    const both = await cli(['fleet', 'diagnose', fleetDir, '--nodes', 'lab-node']).done;
    expect(both.code).not.toBe(0);
    expect(both.stdout).toBe('');
    expect(both.stderr).toContain('give DIR or the live options, not both');
    expect(server.requests().filter((q) => q.method === 'POST').length).toBe(pods);
  }, 120_000);

  it.runIf(tmuxAvailable('the live --fleet tmux case'))('live --fleet TUI: the matrix of the nodes captured now; q leaves no pod and no bundle', async () => {
    const tmp = path.join(home, 'tmp-tui');
    mkdirSync(tmp, { recursive: true });
    const tmux = new TmuxSession(`nodescope-fleet-live-${process.pid}`);
    try {
      const env = `HOME=${home} XDG_STATE_HOME=${path.join(home, 'state')} KUBECONFIG=${server.kubeconfigPath} TMPDIR=${tmp}`;
      expect(tmux.start(`env ${env} node ${BINARY} --fleet --nodes lab-node,lab-node2 --lang en`, 120, 32)).toBe(0);
      const matrix = await tmux.waitFor(['2 nodes: 1 ok · 1 degraded'], 60_000);
      expect(matrix).toMatch(/default\/web +degraded/);
      await tmux.keys('q');
      await tmux.waitExit();
    } finally {
      tmux.kill();
    }
    expect(readdirSync(tmp)).toEqual([]);
    expect(ours()).toEqual([]);
  }, 120_000);

  it.each([
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const)('%s mid-capture: every pod is deleted before the process exits (exit %i)', async (sig, code) => {
    const r = cli(['fleet', 'capture', '-o', path.join(home, `fleet-${sig}`), '--parallel', '2']);
    await until('a debug pod to run', () => ours().some((p) => (p['status'] as { phase?: string } | undefined)?.phase === 'Running'));
    await until('an exec into it', () => server.requests().some((q) => q.path.endsWith('/exec') && q.status === 101));
    r.child.kill(sig);
    const out = await r.done;
    expect(out.code, out.stderr).toBe(code);
    expect(out.stderr).not.toMatch(/left behind|internal error/);
    expect(ours()).toEqual([]);
    if (haveKubectl) expect(await kubectlOurs()).toEqual([]);
  }, 120_000);

  it('the API server drops every connection mid-capture: the nodes cut off are recorded as failed, the others captured, no pod left', async () => {
    const dir = path.join(home, 'fleet-drop');
    const before = server.requests().length;
    const r = cli(['fleet', 'capture', '-o', dir, '--parallel', '1']);
    await until('the first exec', () => server.requests().slice(before).some((q) => q.path.endsWith('/exec') && q.status === 101));
    expect(server.dropConnections()).toBeGreaterThan(0);
    const out = await r.done;
    const manifest = readFleetManifest(dir);
    const failed = manifest.nodes.filter((n) => n.status === 'failed');
    expect(failed.length, out.stderr).toBeGreaterThanOrEqual(1);
    for (const f of failed) expect(f.reason, f.name).toMatch(/exec|connect|socket|closed|hang up|ECONNRESET|reset/i);
    expect(manifest.nodes.length).toBe(3);
    expect(out.code, out.stderr).toBe(failed.length === 3 ? 2 : 1);
    expect(ours()).toEqual([]);
    if (haveKubectl) expect(await kubectlOurs()).toEqual([]);
  }, 120_000);
});
