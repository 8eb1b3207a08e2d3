/**
 * The recorded API server checked with the real `kubectl`: discovery, server-side
 * printing (Table), -o json byte equality, label selectors, watch, exec over
 * WebSockets (exit codes), `kubectl debug node/…` (protobuf pod create) and
 * delete, RBAC denials, and exec inside a network namespace (root only).
 */
import { execFile, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeCapture } from '../api-server/builders.js';
import { startApiServer, type ApiServerHandle, type K8sObject } from '../api-server/index.js';
import { api } from '../api-server/test-client.js';
import { apiObjectsText, buildApiObjects } from './api-objects.js';

const kubectlReason = (() => {
  const r = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8', timeout: 30_000 });
  if (r.error) return `kubectl is not installed (${r.error.message})`;
  return r.status === 0 ? null : `kubectl version --client failed: ${r.stderr.trim()}`;
})();
if (kubectlReason) console.warn(`skipping kubectl checks of the recorded API server: ${kubectlReason}`);
const isRoot = process.getuid?.() === 0;
if (!isRoot) console.warn('skipping exec-in-netns check: needs root for ip netns');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

const work = mkdtempSync(join(tmpdir(), 'nodescope-kubectl-'));

/** Runs kubectl against `server` with its own kubeconfig and discovery cache; HOME is a temp dir. */
function kubectl(server: ApiServerHandle, args: string[], timeoutMs = 60_000): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      'kubectl',
      ['--kubeconfig', server.kubeconfigPath, '--cache-dir', join(work, 'cache'), ...args],
      { env: { ...process.env, HOME: work, KUBECONFIG: '' }, timeout: timeoutMs, encoding: 'utf8' },
      (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr }),
    );
  });
}

/** What `json.MarshalIndent(obj, "", "    ")` prints for an unstructured object: sorted keys, HTML-escaped. */
function goJson(v: unknown): string {
  const sort = (x: unknown): unknown =>
    Array.isArray(x)
      ? x.map(sort)
      : x !== null && typeof x === 'object'
        ? Object.fromEntries(Object.keys(x).sort().map((k) => [k, sort((x as Record<string, unknown>)[k])]))
        : x;
  return JSON.stringify(sort(v), null, 4).replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026') + '\n';
}

const rows = (text: string) => text.trim().split('\n').map((l) => l.trim().split(/\s{2,}/));
const until = async (what: string, ok: () => boolean, timeoutMs = 10_000) => {
  const end = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
};

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe.skipIf(kubectlReason !== null)('kubectl against the recorded API server', () => {
  let server: ApiServerHandle;
  const capture = makeCapture();
  beforeAll(async () => {
    server = await startApiServer({ objects: capture, podStartDelayMs: 200 });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('kubectl get svc,endpointslices -A prints server-side Tables after aggregated discovery', async () => {
    const r = await kubectl(server, ['get', 'svc,endpointslices', '-A']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const [svcBlock, epsBlock] = r.stdout.split('\n\n');
    expect(rows(svcBlock!)).toEqual([
      ['NAMESPACE', 'NAME', 'TYPE', 'CLUSTER-IP', 'EXTERNAL-IP', 'PORT(S)', 'AGE'],
      ['default', 'service/web', 'ClusterIP', '10.96.12.34', '<none>', '80/TCP', expect.stringMatching(/^\d+[smhdy]/)],
    ]);
    expect(rows(epsBlock!)).toEqual([
      ['NAMESPACE', 'NAME', 'ADDRESSTYPE', 'PORTS', 'ENDPOINTS', 'AGE'],
      ['default', 'endpointslice.discovery.k8s.io/web-x7k2p', 'IPv4', '8080', '10.244.1.5,10.244.2.7', expect.stringMatching(/^\d+[smhdy]/)],
    ]);
    const asked = server.requests();
    expect(asked.some((q) => q.path === '/apis' && q.accept.includes('as=APIGroupDiscoveryList') && q.status === 200)).toBe(true);
    expect(asked.some((q) => q.path === '/api/v1/services' && q.accept.includes('as=Table') && q.status === 200)).toBe(true);
  });

  it('kubectl get svc -n default web -o json is byte-equal to the captured object', async () => {
    const r = await kubectl(server, ['get', 'svc', '-n', 'default', 'web', '-o', 'json']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(goJson(capture.items.find((o) => o.kind === 'Service')));
  });

  it('kubectl get endpointslices -l selects by label on the server', async () => {
    const hit = await kubectl(server, ['get', 'endpointslices', '-l', 'kubernetes.io/service-name=web']);
    expect(rows(hit.stdout).map((r) => r[0])).toEqual(['NAME', 'web-x7k2p']);
    expect(server.requests().at(-1)!.query).toContain('labelSelector=kubernetes.io%2Fservice-name%3Dweb');
    const miss = await kubectl(server, ['get', 'endpointslices', '-l', 'kubernetes.io/service-name=db']);
    expect(miss.stdout).toBe('');
    expect(miss.stderr.trim()).toBe('No resources found in default namespace.');
  });

  it('kubectl get pods -w shows a created pod arrive and turn Running', async () => {
    const child = spawn('kubectl', ['--kubeconfig', server.kubeconfigPath, '--cache-dir', join(work, 'cache'), 'get', 'pods', '-w'], {
      env: { ...process.env, HOME: work, KUBECONFIG: '' },
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    try {
      await until('the initial pod list', () => out.includes('web-1'));
      const created = await api(server, '/api/v1/namespaces/default/pods', {
        method: 'POST',
        body: JSON.stringify({ metadata: { name: 'arrival' }, spec: { containers: [{ name: 'c', image: 'busybox:1.36' }] } }),
      });
      expect(created.status).toBe(201);
      await until('the Running row of the new pod', () => /arrival\s+1\/1\s+Running/.test(out));
      expect(out).toMatch(/arrival\s+0\/1\s+ContainerCreating/);
    } finally {
      child.kill();
      await api(server, '/api/v1/namespaces/default/pods/arrival', { method: 'DELETE' });
    }
  });

  it('kubectl exec runs the command and propagates a non-zero exit code', async () => {
    const ok = await kubectl(server, ['exec', 'web-0', '--', 'echo', 'hi']);
    expect(ok).toEqual({ code: 0, stdout: 'hi\n', stderr: '' });
    const bad = await kubectl(server, ['exec', 'web-0', '--', 'sh', '-c', 'echo oops >&2; exit 3']);
    expect(bad.code).toBe(3);
    expect(bad.stderr).toBe('oops\ncommand terminated with exit code 3\n');
    const upgrades = server.requests().filter((q) => q.path.endsWith('/exec'));
    expect(upgrades.every((q) => q.upgrade === 'websocket' && q.status === 101)).toBe(true);
  });

  it('kubectl exec -i feeds stdin through to the command', async () => {
    // Asynchronous on purpose: the server runs in this process, a spawnSync would block it.
    const child = execFile('kubectl', ['--kubeconfig', server.kubeconfigPath, '--cache-dir', join(work, 'cache'), 'exec', '-i', 'web-0', '--', 'wc', '-c'], {
      env: { ...process.env, HOME: work, KUBECONFIG: '' }, timeout: 60_000, encoding: 'utf8',
    });
    let out = '';
    child.stdout!.on('data', (d: string) => (out += d));
    child.stdin!.end('twelve bytes');
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code).toBe(0);
    expect(out.trim()).toBe('12');
  });

  it('kubectl debug node/… creates the node-debug pod with the sysadmin spec; exec and delete work', async () => {
    const r = await kubectl(server, ['debug', 'node/node-1', '--image=busybox', '--profile=sysadmin', '--', 'sh', '-c', 'echo x']);
    expect(r.code).toBe(0);
    const m = r.stdout.match(/^Creating debugging pod (node-debugger-node-1-[a-z0-9]{5}) with container debugger on node node-1\.$/m);
    expect(m, r.stdout + r.stderr).not.toBeNull();
    const name = m![1]!;
    const pod = server.pods().find((p) => p.metadata.name === name) as K8sObject & { spec: any }; // eslint-disable-line @typescript-eslint/no-explicit-any
    expect(pod.spec).toMatchObject({
      nodeName: 'node-1', hostNetwork: true, hostPID: true, hostIPC: true, restartPolicy: 'Never',
      volumes: [{ name: 'host-root', hostPath: { path: '/' } }],
      containers: [{ name: 'debugger', image: 'busybox', command: ['sh', '-c', 'echo x'], securityContext: { privileged: true }, volumeMounts: [{ name: 'host-root', mountPath: '/host' }] }],
      tolerations: [{ operator: 'Exists' }],
    });
    await until('the debug pod to run', () => (server.get({ kind: 'Pod', namespace: 'default', name })?.['status'] as { phase?: string }).phase === 'Running');
    const inHost = await kubectl(server, ['exec', name, '--', 'chroot', '/host', 'sh', '-c', 'test -d /proc/1 && echo host']);
    expect(inHost.stdout).toBe('host\n');
    const del = await kubectl(server, ['delete', 'pod', name]);
    expect(del.code).toBe(0);
    expect(del.stdout.trim()).toBe(`pod "${name}" deleted`);
    expect(server.pods().map((p) => p.metadata.name)).not.toContain(name);
  });

  it('kubectl shows the RBAC denial of pods/exec and of list', async () => {
    server.setForbidden([{ verb: 'create', resource: 'pods/exec' }, { verb: 'list', resource: 'nodes' }]);
    try {
      const ex = await kubectl(server, ['exec', 'web-0', '--', 'true']);
      expect(ex.code).toBe(1);
      expect(ex.stderr).toContain(`pods "web-0" is forbidden: User "${server.user}" cannot create resource "pods/exec" in API group "" in the namespace "default"`);
      const ls = await kubectl(server, ['get', 'nodes']);
      expect(ls.code).toBe(1);
      expect(ls.stderr.trim()).toBe(`Error from server (Forbidden): nodes is forbidden: User "${server.user}" cannot list resource "nodes" in API group "" at the cluster scope`);
    } finally {
      server.setForbidden([]);
    }
  });

  it('kubectl: a cluster-scope-only denial refuses -A and allows -n (what diagnose -n falls back to)', async () => {
    server.setForbidden([{ verb: 'list', resource: 'services', clusterScope: true }]);
    try {
      const all = await kubectl(server, ['get', 'services', '-A']);
      expect(all.code).toBe(1);
      expect(all.stderr.trim()).toBe(`Error from server (Forbidden): services is forbidden: User "${server.user}" cannot list resource "services" in API group "" at the cluster scope`);
      const one = await kubectl(server, ['get', 'services', '-n', 'default', '-o', 'name']);
      expect(one.code, one.stderr).toBe(0);
      expect(one.stdout).toContain('service/web');
    } finally {
      server.setForbidden([]);
    }
  });

  it('kubectl get of a missing object shows the NotFound Status', async () => {
    const r = await kubectl(server, ['get', 'svc', 'nope']);
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe('Error from server (NotFound): services "nope" not found');
  });
});

describe.skipIf(kubectlReason !== null)("kubectl against the node lab's API objects", () => {
  it('lists every Service the lab wrote', async () => {
    const file = join(work, 'lab-objects.json');
    writeFileSync(file, apiObjectsText());
    const server = await startApiServer({ objectsFile: file });
    try {
      const r = await kubectl(server, ['get', 'services', '-A', '-o', 'json']);
      expect(r.code).toBe(0);
      const got = (JSON.parse(r.stdout) as { items: K8sObject[] }).items.map((s) => `${s.metadata.namespace}/${s.metadata.name}`);
      const want = (buildApiObjects() as unknown as { items: K8sObject[] }).items.filter((o) => o.kind === 'Service').map((s) => `${s.metadata.namespace}/${s.metadata.name}`);
      expect(got.sort()).toEqual(want.sort());
      expect(want.length).toBeGreaterThan(0);
    } finally {
      await server.close();
    }
  });
});

describe.skipIf(kubectlReason !== null || !isRoot)('kubectl exec inside a network namespace', () => {
  const ns = `nsapi-${process.pid}`;
  let server: ApiServerHandle;
  beforeAll(async () => {
    spawnSync('ip', ['netns', 'add', ns]);
    server = await startApiServer({ objects: makeCapture(), netns: ns });
  });
  afterAll(async () => {
    await server?.close();
    spawnSync('ip', ['netns', 'del', ns]);
  });

  it('runs the command in the configured namespace', async () => {
    const r = await kubectl(server, ['exec', 'web-0', '--', 'stat', '-L', '-c', '%i', '/proc/self/ns/net']);
    expect(r.code).toBe(0);
    const want = spawnSync('stat', ['-L', '-c', '%i', `/run/netns/${ns}`], { encoding: 'utf8' }).stdout;
    const hostNs = spawnSync('stat', ['-L', '-c', '%i', '/proc/self/ns/net'], { encoding: 'utf8' }).stdout;
    expect(r.stdout).toBe(want);
    expect(r.stdout).not.toBe(hostNs);
  });
});
