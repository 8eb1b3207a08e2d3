/**
 * The kubectl-debug source against the recorded API server, whose pod exec runs for
 * real inside the lab's node namespace (so `chroot /host iptables-save` reads the lab
 * node's rules): the pod it creates has the shape `kubectl debug node/… --profile=sysadmin`
 * gives (checked against the real kubectl), panes' snapshot is filled (Services and
 * iptables rules), the pod is deleted on close, after SIGINT and after an error thrown in
 * the real binary, RBAC denials name verb and resource, and leftovers are swept.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, connect as netConnect, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UserError } from '../../src/errors.js';
import { packageRoot } from '../../src/paths.js';
import { Session, loadSnapshot } from '../../src/collect/session.js';
import { MANAGED_BY_LABEL, OWNER_ANNOTATION, RUN_ANNOTATION, localOwner } from '../../src/sources/k8s-debug-pod.js';
import { holdRun } from './run-records.js';
import { closeSource, openSource, type OpenedSource } from '../../src/sources/open.js';
import { startApiServer, type ApiServerHandle, type K8sObject } from '../api-server/index.js';
import { labAvailable } from '../helpers/lab.js';
import { startBinary, type BinaryRun } from '../helpers/run-binary.js';
import { LAB_SCENARIO, labDown, labUp, type LabHandle } from './lab.js';
import { sureOfMode } from '../helpers/live-replay.js';

const PREFIX = 'nkd-';
const canRun = labAvailable(['ip', 'nft', 'iptables-restore', 'curl', 'dnsmasq', 'conntrack', 'sysctl', 'openssl']);
const NODE = LAB_SCENARIO.nodeName;
const CLI = path.join(packageRoot(), 'dist', 'bin', 'nodescope.js');
const haveKubectl = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' }).status === 0;

let lab: LabHandle;
let server: ApiServerHandle;
let home: string;
const savedKubeconfig = process.env['KUBECONFIG'];

const ours = (s: ApiServerHandle = server) => s.pods().filter((p) => p.metadata.labels?.[MANAGED_BY_LABEL] === 'nodescope');
const quiet = { progress: () => undefined };

async function until(what: string, ok: () => boolean, timeoutMs = 15_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Runs the built CLI with the test server's kubeconfig; `onStart` gets the child's pid. */
function cli(args: string[], s: ApiServerHandle = server, onStart?: (pid: number) => void): Promise<BinaryRun> {
  const run = startBinary(args, { env: { ...process.env, KUBECONFIG: s.kubeconfigPath, HOME: home, NO_COLOR: '1' } });
  run.child.on('spawn', () => onStart?.(run.child.pid!));
  return run.done;
}

beforeAll(async () => {
  if (!canRun) return;
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: build first (npx tsc -p . — npm test does)`);
  lab = await labUp('iptables', { prefix: PREFIX });
  server = await startApiServer({ objectsFile: lab.apiObjectsPath, netns: lab.names.node, podStartDelayMs: 200 });
  process.env['KUBECONFIG'] = server.kubeconfigPath;
  home = mkdtempSync(path.join(tmpdir(), 'nodescope-kd-home-'));
  // Run records (src/run-record.ts) of this process and of the binaries it starts, in one place.
  process.env['XDG_STATE_HOME'] = path.join(home, '.local', 'state');
}, 120_000);

afterAll(async () => {
  delete process.env['XDG_STATE_HOME'];
  if (savedKubeconfig === undefined) delete process.env['KUBECONFIG'];
  else process.env['KUBECONFIG'] = savedKubeconfig;
  if (!canRun) return;
  await server?.close();
  await labDown({ prefix: PREFIX });
  rmSync(home, { recursive: true, force: true });
}, 60_000);

describe.runIf(canRun)('kubectl-debug source', () => {
  it('creates the debug pod, fills the snapshot from the node and the API, and deletes the pod on close', async () => {
    const progress: string[] = [];
    const source = await openSource({ node: NODE }, { progress: (m) => progress.push(m) });
    let closed = false;
    try {
      expect(source.transport.kind).toBe('kubectl-debug');
      expect(ours()).toHaveLength(1);
      const pod = ours()[0]!;
      expect(pod['spec']).toMatchObject({
        nodeName: NODE, hostNetwork: true, hostPID: true, hostIPC: true, restartPolicy: 'Never', tolerations: [{ operator: 'Exists' }],
        volumes: [{ name: 'host-root', hostPath: { path: '/' } }],
        containers: [{ name: 'debugger', image: 'busybox:1.36.1', securityContext: { privileged: true }, volumeMounts: [{ name: 'host-root', mountPath: '/host' }] }],
      });
      expect(pod.metadata.annotations?.[OWNER_ANNOTATION]).toBe(localOwner());
      expect(progress.some((m) => m.endsWith('Running'))).toBe(true);

      const { snapshot, runs } = await loadSnapshot({ transport: source.transport, live: true, ...(source.api ? { api: source.api } : {}) });
      const ipt = runs.find((r) => r.id === 'iptables-save')!;
      expect(ipt.result.argv.slice(0, 4)).toEqual(['chroot', '/host', 'env', 'LC_ALL=C']);
      expect(snapshot.iptables?.value?.tables.some((t) => t.chains.some((c) => c.name === 'KUBE-SERVICES'))).toBe(true);
      expect(snapshot.api?.value?.services.map((s) => s.meta.name).sort()).toEqual(LAB_SCENARIO.services.map((s) => s.name).sort());
      expect(snapshot.meta.node).toBe(NODE);
      await closeSource(source);
      closed = true;
      expect(ours()).toEqual([]);
    } finally {
      if (!closed) await closeSource(source);
    }
  });

  it.runIf(haveKubectl)('the pod has the fields kubectl debug node/… --profile=sysadmin sets', async () => {
    // Asynchronously: the API server runs in this process and must keep answering.
    const r = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn('kubectl', ['--cache-dir', path.join(home, 'kcache'), 'debug', `node/${NODE}`, '--image=busybox:1.36.1', '--profile=sysadmin', '--', 'true'], { env: { ...process.env, HOME: home } });
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('close', (code) => resolve({ code, stderr }));
    });
    expect(r.code, r.stderr).toBe(0);
    const theirs = server.pods().find((p) => p.metadata.name?.startsWith(`node-debugger-${NODE}-`)) as K8sObject;
    server.remove({ kind: 'Pod', namespace: 'default', name: theirs.metadata.name! });
    const source = await openSource({ node: NODE }, quiet);
    const mine = ours()[0]!;
    await closeSource(source);
    const shape = (p: K8sObject) => {
      const spec = p['spec'] as Record<string, unknown> & { containers: Record<string, unknown>[] };
      const c = spec.containers[0]!;
      return {
        pod: Object.fromEntries(['nodeName', 'hostNetwork', 'hostPID', 'hostIPC', 'restartPolicy', 'tolerations', 'volumes'].map((k) => [k, spec[k]])),
        container: Object.fromEntries(['image', 'securityContext', 'volumeMounts'].map((k) => [k, c[k]])),
      };
    };
    expect(shape(mine)).toEqual(shape(theirs));
  });

  it('a 403 on create pods or on pods/exec is a UserError naming it, and no pod stays', async () => {
    server.setForbidden([{ verb: 'create', resource: 'pods' }]);
    try {
      const e = await openSource({ node: NODE }, quiet).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(UserError);
      expect((e as UserError).message).toMatch(/"create" on "pods" in namespace "default"/);
    } finally {
      server.setForbidden([]);
    }
    server.setForbidden([{ verb: 'create', resource: 'pods/exec' }]);
    let source: OpenedSource | undefined;
    try {
      source = await openSource({ node: NODE }, quiet);
      const e = await loadSnapshot({ transport: source.transport, live: true }).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(UserError);
      expect((e as UserError).message).toMatch(/"create" on "pods\/exec"/);
    } finally {
      server.setForbidden([]);
      if (source) await closeSource(source);
    }
    expect(ours()).toEqual([]);
  });

  it('an unknown node is a UserError before any pod exists', async () => {
    await expect(openSource({ node: 'no-such-node' }, quiet)).rejects.toBeInstanceOf(UserError);
    expect(ours()).toEqual([]);
  });

  it('at start, deletes the leftover of a run recorded here as gone and an ended one, and leaves a colleague\'s running pod', async () => {
    const gone = await holdRun();
    await gone.kill(); // SIGKILL: its record stays, nobody listens on it
    const leftover = (name: string, owner: string, run: string, phase = 'Running') => ({
      apiVersion: 'v1', kind: 'Pod',
      metadata: { name, namespace: 'default', labels: { [MANAGED_BY_LABEL]: 'nodescope' }, annotations: { [OWNER_ANNOTATION]: owner, [RUN_ANNOTATION]: run } },
      spec: { nodeName: NODE, containers: [{ name: 'debugger', image: 'busybox:1.36.1' }] },
      status: { phase },
    });
    server.upsert(leftover('nodescope-old-mine', localOwner(), gone.id));
    server.upsert(leftover('nodescope-old-ended', 'someone@elsewhere', 'aaaaaaaaaaaa', 'Failed'));
    server.upsert(leftover('nodescope-colleague', 'someone@elsewhere', 'bbbbbbbbbbbb'));
    const progress: string[] = [];
    const source = await openSource({ node: NODE }, { progress: (m) => progress.push(m) });
    await closeSource(source);
    expect(ours().map((p) => p.metadata.name)).toEqual(['nodescope-colleague']);
    expect(progress.filter((m) => /leftover|alone/.test(m)).sort()).toEqual([
      'deleted leftover debug pod default/nodescope-old-ended: it already ended (Failed)',
      `deleted leftover debug pod default/nodescope-old-mine: its nodescope run ${gone.id} on this machine is gone`,
      'left debug pod default/nodescope-colleague alone: its run bbbbbbbbbbbb is not recorded on this machine, made by someone@elsewhere',
    ]);
    server.remove({ kind: 'Pod', namespace: 'default', name: 'nodescope-colleague' });
  });

  it('the real binary: show rules --node prints the node\'s rules and deletes its pod', async () => {
    const r = await cli(['show', 'rules', '--node', NODE]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('KUBE-SERVICES');
    expect(ours()).toEqual([]);
  });

  it('the real binary: diagnose -n NS --node judges the node against every namespace\'s Services and lists NS\'s (issue 22)', async () => {
    type Doc = { services: { namespace: string }[]; nodeFindings: unknown[] };
    const all = await cli(['diagnose', '--node', NODE, '-o', 'json']);
    const before = server.requests().length;
    const ns = await cli(['diagnose', '--node', NODE, '-n', 'kube-system', '-o', 'json']);
    // Exit 0 or 1 (a verdict), never 2 (could not run); they may differ: -n counts NS's Services only.
    expect([all.code! < 2, ns.code! < 2], `${all.stderr}${ns.stderr}`).toEqual([true, true]);
    const [a, n] = [JSON.parse(all.stdout) as Doc, JSON.parse(ns.stdout) as Doc];
    expect(new Set(a.services.map((x) => x.namespace)).size).toBeGreaterThan(1);
    expect(n.services.length).toBeGreaterThan(0);
    expect(n.services.every((x) => x.namespace === 'kube-system')).toBe(true);
    // The same node findings: no frontend of another namespace's Service is taken for a leftover.
    expect(n.nodeFindings).toEqual(a.nodeFindings);
    const mine = server.requests().slice(before);
    expect(mine.some((r) => r.method === 'GET' && r.path === '/api/v1/services' && !/watch=/.test(r.query))).toBe(true);
    // -n still places the debug pod.
    expect(mine.some((r) => r.method === 'POST' && r.path === '/api/v1/namespaces/kube-system/pods')).toBe(true);
    expect(ours()).toEqual([]);
  });

  it('the real binary deletes its pod after an error thrown mid-run', async () => {
    const r = await cli(['show', 'rules', '--node', NODE, '--bpf-root', 'not a path']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('invalid bpfRoot');
    expect(server.requests().some((q) => q.method === 'POST' && q.path === '/api/v1/namespaces/default/pods')).toBe(true);
    expect(ours()).toEqual([]);
  });

  it('the real binary deletes its pod after SIGINT', async () => {
    const slow = await startApiServer({ objectsFile: lab.apiObjectsPath, netns: lab.names.node, podStartDelayMs: 60_000 });
    try {
      let pid = 0;
      const done = cli(['show', 'rules', '--node', NODE], slow, (p) => (pid = p));
      await until('the debug pod to exist', () => ours(slow).length === 1);
      process.kill(pid, 'SIGINT');
      const r = await done;
      expect(r.code).toBe(130);
      expect(ours(slow)).toEqual([]);
      expect(slow.requests().some((q) => q.method === 'DELETE' && q.path.startsWith('/api/v1/namespaces/default/pods/nodescope-'))).toBe(true);
    } finally {
      await slow.close();
    }
  });

  it('a lost API connection fails refreshes (stale data kept) and they resume when it is back', async () => {
    // A TCP proxy in front of the server stands for the network path to the API.
    const port = Number(new URL(server.url).port);
    const sockets = new Set<Socket>();
    let proxy: Server | undefined;
    const up = (listenPort = 0) =>
      new Promise<number>((resolve) => {
        proxy = createServer((c) => {
          const u = netConnect(port, '127.0.0.1');
          for (const s of [c, u]) {
            sockets.add(s);
            s.on('close', () => sockets.delete(s));
            s.on('error', () => undefined);
          }
          c.pipe(u).pipe(c);
        });
        proxy.listen(listenPort, '127.0.0.1', () => resolve((proxy!.address() as { port: number }).port));
      });
    const down = () => new Promise<void>((resolve) => {
      proxy!.close(() => resolve());
      for (const s of sockets) s.destroy();
    });
    const proxyPort = await up();
    const kubeconfig = path.join(home, 'kubeconfig-proxy');
    writeFileSync(kubeconfig, readFileSync(server.kubeconfigPath, 'utf8').replace(`:${port}`, `:${proxyPort}`));
    process.env['KUBECONFIG'] = kubeconfig;
    try {
      const source = await openSource({ node: NODE }, quiet);
      const session = new Session({ transport: source.transport, live: true, intervalMs: 3_600_000, ...(source.api ? { api: source.api } : {}) });
      await session.start();
      const first = session.getState();
      expect(first.snapshot?.iptables?.value).toBeTruthy();
      await down();
      session.refreshNow();
      await until('the failed refresh', () => !session.getState().refreshing && session.getState().error !== null);
      expect(session.getState().error).toMatch(/exec in debug pod .* failed/);
      expect(session.getState().snapshot).toBe(first.snapshot);
      await up(proxyPort);
      session.refreshNow();
      await until('a refresh after the API came back', () => !session.getState().refreshing && session.getState().dataAt! > first.dataAt!);
      expect(session.getState().error ?? '').not.toMatch(/exec in debug pod/);
      await session.stop();
      expect(ours()).toEqual([]);
    } finally {
      process.env['KUBECONFIG'] = server.kubeconfigPath;
      if (proxy?.listening) await down();
    }
  });

  it('runs the cilium-agent probes in the Cilium agent pod of the node, when there is one', async () => {
    server.upsert({
      apiVersion: 'v1', kind: 'Pod',
      metadata: { name: 'cilium-x2k9p', namespace: 'kube-system', labels: { 'k8s-app': 'cilium' } },
      spec: { nodeName: NODE, containers: [{ name: 'cilium-agent', image: 'quay.io/cilium/cilium:v1.16.5' }] },
      status: { phase: 'Running' },
    });
    try {
      const source = await openSource({ node: NODE }, quiet);
      try {
        expect(source.ciliumAgent?.label).toBe('cilium-agent:kube-system/cilium-x2k9p');
        const { runs } = await loadSnapshot({ transport: source.transport, live: true, ...(source.ciliumAgent ? { ciliumAgent: source.ciliumAgent } : {}) });
        const status = runs.find((r) => r.id === 'cilium-status')!;
        // This machine has no cilium-dbg: the probe reaches the agent container and reports it missing.
        expect(status.status).toBe('missing');
        const execs = server.requests().filter((q) => q.path === '/api/v1/namespaces/kube-system/pods/cilium-x2k9p/exec');
        expect(execs.length).toBeGreaterThanOrEqual(3);
        for (const q of execs) expect(new URLSearchParams(q.query).get('container')).toBe('cilium-agent');
        expect(new URLSearchParams(execs[0]!.query).getAll('command').slice(0, 3)).toEqual(['env', 'LC_ALL=C', 'cilium-dbg']);
      } finally {
        await closeSource(source);
      }
    } finally {
      server.remove({ kind: 'Pod', namespace: 'kube-system', name: 'cilium-x2k9p' });
    }
  });

  it('capture --node writes a bundle that show --replay prints like the live show, with no secret in it', async () => {
    const dir = path.join(home, 'bundle-node');
    const live = { services: await cli(['show', 'services', '--node', NODE]), rules: await cli(['show', 'rules', '--node', NODE]) };
    const cap = await cli(['capture', '--node', NODE, '-o', dir]);
    expect(cap.code, cap.stderr).toBe(0);
    expect(ours()).toEqual([]);
    const manifest = JSON.parse(readFileSync(path.join(dir, 'manifest.json'), 'utf8')) as { source: { kind: string }; api: unknown };
    expect(manifest.source.kind).toBe('kubectl-debug');
    expect(manifest.api).not.toBeNull();
    for (const what of ['services', 'rules'] as const) {
      const replay = await cli(['show', what, '--replay', dir]);
      expect(replay.code, replay.stderr).toBe(0);
      expect(live[what].code, live[what].stderr).toBe(0);
      const [liveHead, ...liveBody] = sureOfMode(what, live[what].stdout).split('\n');
      const [replayHead, ...replayBody] = replay.stdout.split('\n');
      // The capture's own probes (kube-proxy's metrics on 127.0.0.1) cross the node's OUTPUT/INPUT
      // chains between the live read and the capture: rule counters move; everything else is equal.
      const masked = (text: string) => text.replace(/\[\d+:\d+\]/g, '[p:b]');
      expect((replayBody.join('\n').match(/\[\d+:\d+\]/g) ?? []).length).toBe((liveBody.join('\n').match(/\[\d+:\d+\]/g) ?? []).length);
      expect(masked(replayBody.join('\n'))).toBe(masked(liveBody.join('\n')));
      // The head differs only in live/replay, the source label and the capture time.
      expect(replayHead!.split(' · ')[0]).toBe(liveHead!.split(' · ')[0]);
    }
    const kubeconfig = readFileSync(server.kubeconfigPath, 'utf8');
    const caData = /certificate-authority-data: (\S+)/.exec(kubeconfig)![1]!;
    // The operator's identity (nodescope's own debug pod and its annotations) stays out too.
    const api = readFileSync(path.join(dir, 'api.json'), 'utf8');
    expect(api).toContain('"kind": "Service"');
    for (const file of filesUnder(dir)) {
      const text = readFileSync(file, 'utf8');
      expect(text, file).not.toContain(OWNER_ANNOTATION);
      expect(text, file).not.toContain(RUN_ANNOTATION);
      expect(text, file).not.toContain('nodescope/pid');
      expect(text, file).not.toMatch(/"name": "nodescope-/);
      expect(text, file).not.toContain(server.token);
      expect(text, file).not.toContain(caData.slice(0, 40));
      expect(text, file).not.toContain('BEGIN');
    }
  });
});

/** Every file under `dir`, recursively. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = path.join(dir, n);
    return statSync(p).isDirectory() ? filesUnder(p) : [p];
  });
}
