/**
 * Lab: DNS over `--node` through a Kubernetes port-forward. The recorded API server
 * serves the lab's API objects and forwards `pods/portforward` for real: it dials
 * `localhost:53` inside the CoreDNS pod's network namespace (as containerd does), where a
 * real dnsmasq answers on 127.0.0.1 (a CoreDNS container listens on every address; the
 * lab's own dnsmasq binds the pod IP only, so each coredns pod gets a second one on
 * loopback here). Each pod's loopback server also answers `whoami.kube-system.svc…` with
 * its own address, so a test can tell which pod a question reached.
 *
 * Checked: the real `kubectl port-forward` binary through the server (kubectl speaks
 * SPDY/3.1, tunnelled in a WebSocket or raw), nodescope's client (dig, the Service
 * resolution the DNS pane shows, the built binary), and the failures: RBAC forbidding
 * `create pods/portforward`, no Ready CoreDNS pod, nothing listening in the pod.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DirectDnsTransport } from '../../src/dns/direct.js';
import { runDigCommand, dig } from '../../src/dns/dig.js';
import { dnsTransportFor } from '../../src/dns/open.js';
import { PORT_FORWARD_NOTE } from '../../src/dns/portforward.js';
import { ReplayDnsTransport } from '../../src/dns/replay.js';
import { captureBundle } from '../../src/collect/capture.js';
import { resolveServiceDns } from '../../src/dns/resolve.js';
import { UserError } from '../../src/errors.js';
import { Session } from '../../src/collect/session.js';
import type { ApiObjects } from '../../src/model/k8s.js';
import { parseK8sObjects } from '../../src/parsers/k8s-objects.js';
import { packageRoot } from '../../src/paths.js';
import { closeSource, openSource, type OpenedSource } from '../../src/sources/open.js';
import { netnsDialer, startApiServer, type ApiServerHandle, type K8sObject } from '../api-server/index.js';
import { labAvailable } from '../helpers/lab.js';
import { LAB_SCENARIO, labDown, labSpawn, labUp, nsExec, type LabHandle } from './lab.js';
import { dnsmasqArgs } from './servers.js';

const PREFIX = 'ndpf-';
const canRun = labAvailable(['ip', 'nft', 'iptables-restore', 'curl', 'dnsmasq', 'conntrack', 'sysctl', 'openssl']);
const haveKubectl = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' }).status === 0;
const CLI = path.join(packageRoot(), 'dist', 'bin', 'nodescope.js');
const NODE = LAB_SCENARIO.nodeName;
const ZONE = LAB_SCENARIO.clusterDomain;
const DNS_PODS = LAB_SCENARIO.pods.filter((p) => p.role === 'dns');
const WHOAMI = `whoami.kube-system.svc.${ZONE}`;
/** The address `whoami` answers in the n-th CoreDNS pod. */
const whoamiOf = (i: number) => `192.0.2.${i + 1}`;
const svcIp = (name: string) => LAB_SCENARIO.services.find((s) => s.name === name)!.clusterIP;
const KUBE_DNS_IP = svcIp('kube-dns');
const quiet = { progress: () => undefined };

let lab: LabHandle;
let server: ApiServerHandle;
let source: OpenedSource;
let api: ApiObjects;
let home: string;
const savedKubeconfig = process.env['KUBECONFIG'];

/** The kube-dns EndpointSlice, for edits that are undone afterwards. */
function kubeDnsSlice(): K8sObject {
  return server.list('endpointslices').find((s) => s.metadata.labels?.['kubernetes.io/service-name'] === 'kube-dns')!;
}

/** Runs `edit` on the kube-dns slice for the duration of `body`, then restores it. */
async function withSlice<T>(edit: (slice: K8sObject) => void, body: () => Promise<T>): Promise<T> {
  const before = structuredClone(kubeDnsSlice());
  const ref = { kind: 'EndpointSlice', namespace: 'kube-system', name: before.metadata.name! };
  server.mutate(ref, (s) => edit(s));
  try {
    return await body();
  } finally {
    server.mutate(ref, before);
  }
}

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { env: { ...process.env, KUBECONFIG: server.kubeconfigPath, HOME: home, NO_COLOR: '1', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Whether process `pid` still runs (signal 0 checks without signalling). */
function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

beforeAll(async () => {
  if (!canRun) return;
  lab = await labUp('iptables', { prefix: PREFIX });
  const nsByPod = new Map(LAB_SCENARIO.pods.map((p) => [`${p.namespace}/${p.name}`, lab.podNs(p.key)]));
  const loopbackArgs = (i: number) => dnsmasqArgs(LAB_SCENARIO, '127.0.0.1', { records: [{ name: WHOAMI, addresses: [whoamiOf(i)] }] });
  const loopbackServers = new Map<string, { pid: number; log: string }>();
  for (const [i, pod] of DNS_PODS.entries()) loopbackServers.set(pod.key, await labSpawn(lab.names, `dns-lo-${pod.key}`, lab.podNs(pod.key), loopbackArgs(i)));
  server = await startApiServer({
    objectsFile: lab.apiObjectsPath, netns: lab.names.node, podStartDelayMs: 100,
    portForward: netnsDialer((pod) => nsByPod.get(`${pod.namespace}/${pod.name}`)),
  });
  process.env['KUBECONFIG'] = server.kubeconfigPath;
  home = mkdtempSync(path.join(tmpdir(), 'nodescope-pf-home-'));
  source = await openSource({ node: NODE }, quiet);
  api = parseK8sObjects(source.apiText!, 'api').value;
  // The loopback servers answer before the tests start. Under a full CI run one was once
  // not up after 10 s: start it again if it exited, and say what its log says if it never answers.
  for (const [i, pod] of DNS_PODS.entries()) {
    const deadline = Date.now() + 30_000;
    let restarted = false;
    while ((await nsExec(lab.podNs(pod.key), ['bash', '-c', 'exec 3<>/dev/tcp/127.0.0.1/53'])).exitCode !== 0) {
      const proc = loopbackServers.get(pod.key)!;
      if (Date.now() > deadline) throw new Error(`no DNS server on 127.0.0.1:53 in ${pod.name}; its log: ${readFileSync(proc.log, 'utf8').slice(-500)}`);
      if (!restarted && !processAlive(proc.pid)) {
        restarted = true;
        loopbackServers.set(pod.key, await labSpawn(lab.names, `dns-lo-${pod.key}`, lab.podNs(pod.key), loopbackArgs(i)));
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}, 180_000);

afterAll(async () => {
  if (savedKubeconfig === undefined) delete process.env['KUBECONFIG'];
  else process.env['KUBECONFIG'] = savedKubeconfig;
  if (!canRun) return;
  if (source) await closeSource(source);
  await server?.close();
  await labDown({ prefix: PREFIX });
  rmSync(home, { recursive: true, force: true });
}, 60_000);

/** A running `kubectl port-forward` (`:REMOTE`: kubectl picks the local port): resolves once it prints "Forwarding from". */
async function kubectlPortForward(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ port: number; stop: () => Promise<string>; exited: Promise<number | null> }> {
  const child = spawn('kubectl', ['--cache-dir', path.join(home, 'kcache'), 'port-forward', ...args], {
    env: { ...process.env, KUBECONFIG: server.kubeconfigPath, HOME: home, ...env }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`kubectl port-forward did not start: ${out}`)), 15_000);
    const look = (d: Buffer) => {
      out += d.toString();
      const m = /Forwarding from 127\.0\.0\.1:(\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    };
    child.stdout.on('data', look);
    child.stderr.on('data', look);
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`kubectl port-forward exited: ${out}`));
    });
  });
  return {
    port,
    exited,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
      return out;
    },
  };
}

/** Asks `name` A over TCP of 127.0.0.1:`port` (the local end of kubectl's forward). */
async function askLocal(port: number, name: string): Promise<string[]> {
  const e = await new DirectDnsTransport().query({ server: '127.0.0.1', port, qname: name, qtype: 'A' }, { proto: 'tcp', timeoutMs: 3000 });
  expect(e.outcome, e.error ?? '').toBe('answer');
  return e.answers.map((a) => a.data);
}

describe.runIf(canRun && haveKubectl)('the real kubectl port-forward through the recorded server', () => {
  // kubectl ≥ 1.30 tunnels SPDY in a WebSocket first; KUBECTL_PORT_FORWARD_WEBSOCKETS=false makes it upgrade to SPDY directly.
  for (const [mode, env, upgrade] of [['SPDY in a WebSocket', {}, 'websocket'], ['SPDY/3.1 upgrade', { KUBECTL_PORT_FORWARD_WEBSOCKETS: 'false' }, 'SPDY/3.1']] as const) {
    it(`${mode}: DNS questions reach the CoreDNS pod's dnsmasq, one per connection`, async () => {
      const [first, second] = DNS_PODS;
      const before = server.requests().length;
      const pf = await kubectlPortForward(['-n', 'kube-system', `pod/${first!.name}`, ':53'], env);
      try {
        expect(await askLocal(pf.port, `web.default.svc.${ZONE}`)).toEqual([svcIp('web')]);
        expect(await askLocal(pf.port, WHOAMI)).toEqual([whoamiOf(0)]);
      } finally {
        await pf.stop();
      }
      const pf2 = await kubectlPortForward(['-n', 'kube-system', `pod/${second!.name}`, ':53'], env);
      try {
        expect(await askLocal(pf2.port, WHOAMI)).toEqual([whoamiOf(1)]);
      } finally {
        await pf2.stop();
      }
      const upgrades = server.requests().slice(before).filter((q) => q.path.endsWith('/portforward') && q.status === 101);
      expect(upgrades.map((q) => q.upgrade)).toEqual([upgrade, upgrade]);
    });
  }

  it('nothing listening in the pod: kubectl reports the kubelet-style error from the error stream', async () => {
    const pf = await kubectlPortForward(['-n', 'kube-system', `pod/${DNS_PODS[0]!.name}`, ':5353']);
    const e = await new DirectDnsTransport().query({ server: '127.0.0.1', port: pf.port, qname: WHOAMI, qtype: 'A' }, { proto: 'tcp', timeoutMs: 2000 });
    expect(e.outcome).not.toBe('answer');
    await pf.exited; // kubectl ≥ 1.29 gives up after a forwarding error
    const out = await pf.stop();
    // klog quotes the message, so the namespace's quotes come escaped.
    expect(out).toContain(`an error occurred forwarding ${pf.port} -> 5353`);
    expect(out).toMatch(/error forwarding port 5353 to pod coredns-[a-z0-9-]+, uid [0-9a-f-]+: failed to connect to localhost:5353 inside namespace \\?"ndpf-[a-z0-9-]+\\?", IPv4: connect ECONNREFUSED 127\.0\.0\.1:5353/);
    expect(out).toContain('lost connection to pod');
  });

  it('RBAC forbidding create pods/portforward: kubectl shows the apiserver\'s message', async () => {
    server.setForbidden([{ verb: 'create', resource: 'pods/portforward', namespace: 'kube-system' }]);
    try {
      const r = await run('kubectl', ['--cache-dir', path.join(home, 'kcache'), 'port-forward', '-n', 'kube-system', `pod/${DNS_PODS[0]!.name}`, ':53']);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain(`pods "${DNS_PODS[0]!.name}" is forbidden: User "${server.user}" cannot create resource "pods/portforward" in API group "" in the namespace "kube-system"`);
    } finally {
      server.setForbidden([]);
    }
  });
});

describe.runIf(canRun)('DNS over --node through a port-forward to CoreDNS', () => {
  it('dig: the kube-dns ClusterIP question is answered by the first Ready CoreDNS pod, through pods/portforward, with no exec on the node', async () => {
    const dns = dnsTransportFor(source.transport);
    const before = server.requests().length;
    const r = await dig({ name: `web.default.svc.${ZONE}`, dns, api });
    const [first] = DNS_PODS;
    expect(r.exchange).toMatchObject({ outcome: 'answer', rcode: 'NOERROR', transport: 'tcp', server: KUBE_DNS_IP, via: `port-forward to kube-system/${first!.name}:53` });
    expect(r.exchange.answers.map((a) => a.data)).toEqual([svcIp('web')]);
    expect(r.check?.verdict).toBe('ok');
    expect(r.note).toBe(PORT_FORWARD_NOTE);
    const asked = server.requests().slice(before);
    expect(asked.filter((q) => q.path.endsWith('/portforward')).map((q) => [q.path, q.query, q.status])).toEqual([
      [`/api/v1/namespaces/kube-system/pods/${first!.name}/portforward`, '?ports=53', 101],
    ]);
    expect(asked.some((q) => q.path.endsWith('/exec'))).toBe(false);
    // The answer came from that pod's server, not through the ClusterIP.
    const who = await dig({ name: WHOAMI, dns, api });
    expect(who.exchange.answers.map((a) => a.data)).toEqual([whoamiOf(0)]);
    await dns.close();
  });

  it('a question for a CoreDNS pod\'s own IP goes to that pod', async () => {
    const dns = dnsTransportFor(source.transport);
    const second = DNS_PODS[1]!;
    const r = await dig({ name: WHOAMI, dns, api, server: second.ip });
    expect(r.exchange.via).toBe(`port-forward to kube-system/${second.name}:53`);
    expect(r.exchange.answers.map((a) => a.data)).toEqual([whoamiOf(1)]);
    await expect(dig({ name: WHOAMI, dns, api, server: '10.244.0.23' })).rejects.toThrow(/cannot be asked/);
  });

  it('the DNS pane\'s resolution of a Service says the path and that the ClusterIP DNAT is skipped', async () => {
    const dns = dnsTransportFor(source.transport);
    const r = await resolveServiceDns({ api, service: 'default/web', dns, query: { timeoutMs: 2000, tries: 1 } });
    expect(r.via).toBe(`port-forward to kube-system/${DNS_PODS[0]!.name}:53`);
    expect(r.notes).toContain(PORT_FORWARD_NOTE);
    const a = r.checks.find((c) => c.exchange.qtype === 'A')!;
    expect(a.verdict).toBe('ok');
    // The search expansion a pod would send (`web` → web.default.svc.cluster.local) went the same way.
    expect(r.searches[0]!.answeredBy).toBe(`web.default.svc.${ZONE}.`);
    expect(r.searches[0]!.steps.flatMap((s) => s.exchanges).every((x) => x.via === r.via)).toBe(true);
  });

  it('RBAC forbidding create pods/portforward is a UserError naming verb, resource and namespace', async () => {
    server.setForbidden([{ verb: 'create', resource: 'pods/portforward' }]);
    try {
      const dns = dnsTransportFor(source.transport);
      const e = await dig({ name: `web.default.svc.${ZONE}`, dns, api }).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(UserError);
      expect((e as UserError).message).toMatch(/"create" on "pods\/portforward" in namespace "kube-system"/);
      expect((e as UserError).hint).toMatch(/kubectl auth can-i create pods\/portforward -n kube-system/);
    } finally {
      server.setForbidden([]);
    }
  });

  it('no Ready CoreDNS pod: the ClusterIP question is a UserError; a pod IP may still be asked', async () => {
    await withSlice(
      (s) => {
        for (const ep of s['endpoints'] as { conditions: { ready: boolean } }[]) ep.conditions.ready = false;
      },
      async () => {
        const dns = dnsTransportFor(source.transport);
        const e = await dig({ name: `web.default.svc.${ZONE}`, dns, api }).catch((x: unknown) => x);
        expect(e).toBeInstanceOf(UserError);
        expect((e as UserError).message).toMatch(new RegExp(`no Ready CoreDNS pod behind ${KUBE_DNS_IP.replace(/\./g, '\\.')}`));
        const r = await dig({ name: WHOAMI, dns, api, server: DNS_PODS[0]!.ip });
        expect(r.exchange.answers.map((a) => a.data)).toEqual([whoamiOf(0)]);
      },
    );
  });

  it('nothing listening on the pod\'s port: a network-error exchange carrying the dial error, not a crash', async () => {
    await withSlice(
      (s) => {
        for (const p of s['ports'] as { name: string; port: number }[]) p.port = 5353;
      },
      async () => {
        const dns = dnsTransportFor(source.transport);
        const r = await dig({ name: `web.default.svc.${ZONE}`, dns, api, query: { timeoutMs: 3000, tries: 1 } });
        expect(r.exchange.outcome).toBe('network-error');
        expect(r.exchange.via).toBe(`port-forward to kube-system/${DNS_PODS[0]!.name}:5353`);
        expect(r.exchange.error).toMatch(/error forwarding port 5353 to pod .*failed to connect to localhost:5353 inside namespace "ndpf-coredns-1", IPv4: connect ECONNREFUSED 127\.0\.0\.1:5353$/);
      },
    );
  });

  it('runDigCommand prints the path and the note (text and JSON)', async () => {
    const dns = dnsTransportFor(source.transport);
    const text = await runDigCommand({ name: `web.default.svc.${ZONE}`, dns, api });
    expect(text).toContain(`@${KUBE_DNS_IP} via port-forward to kube-system/${DNS_PODS[0]!.name}:53`);
    expect(text).toContain(`;; NOTE: ${PORT_FORWARD_NOTE}`);
    const json = JSON.parse(await runDigCommand({ name: `web.default.svc.${ZONE}`, dns, api, format: 'json' })) as { note: string; exchange: { via: string } };
    expect(json.note).toBe(PORT_FORWARD_NOTE);
    expect(json.exchange.via).toBe(`port-forward to kube-system/${DNS_PODS[0]!.name}:53`);
  });

  it('the TUI session over --node: the DNS pane\'s state holds the path and the note; an RBAC refusal is the pane\'s error, not a crash', async () => {
    const opened = await openSource({ node: NODE }, quiet);
    const session = new Session({ transport: opened.transport, live: true, intervalMs: 3_600_000, ...(opened.api ? { api: opened.api } : {}) });
    const settled = async () => {
      const end = Date.now() + 15_000;
      while (session.getState().dns?.loading !== false) {
        if (Date.now() > end) throw new Error('the DNS resolution did not finish');
        await new Promise((r) => setTimeout(r, 20));
      }
      return session.getState().dns!;
    };
    try {
      await session.start();
      session.resolveDns('default/web');
      const ok = await settled();
      expect(ok.error).toBeNull();
      expect(ok.result?.via).toBe(`port-forward to kube-system/${DNS_PODS[0]!.name}:53`);
      expect(ok.result?.notes).toContain(PORT_FORWARD_NOTE);
      server.setForbidden([{ verb: 'create', resource: 'pods/portforward' }]);
      try {
        session.resolveDns('default/web-headless');
        const refused = await settled();
        expect(refused.result).toBeNull();
        expect(refused.error).toMatch(/"create" on "pods\/portforward" in namespace "kube-system"/);
      } finally {
        server.setForbidden([]);
      }
    } finally {
      await session.stop();
    }
  });

  it('capture --node records every Service\'s answers through the port-forward; the replay gives them back', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'nodescope-pf-capture-'));
    try {
      await captureBundle(await openSource({ node: NODE }, quiet), dir, { dnsTimeoutMs: 2000 });
      const replay = ReplayDnsTransport.fromBundle(dir);
      const e = await replay.query({ server: KUBE_DNS_IP, port: 53, qname: `web.default.svc.${ZONE}`, qtype: 'A' });
      expect(e).toMatchObject({ outcome: 'answer', via: `port-forward to kube-system/${DNS_PODS[0]!.name}:53` });
      expect(e.answers.map((a) => a.data)).toEqual([svcIp('web')]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.runIf(existsSync(CLI))('the built binary: dig --node answers through the port-forward and deletes its debug pod', async () => {
    const r = await run(process.execPath, [CLI, 'dig', `web.default.svc.${ZONE}`, '--node', NODE]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`via port-forward to kube-system/${DNS_PODS[0]!.name}:53`);
    expect(r.stdout).toMatch(new RegExp(`web\\.default\\.svc\\.cluster\\.local\\.\\t\\d+\\tIN\\tA\\t${svcIp('web').replace(/\./g, '\\.')}`));
    expect(r.stdout).toContain(';; NOTE: asked through a port-forward');
    expect(server.pods().filter((p) => p.metadata.labels?.['app.kubernetes.io/managed-by'] === 'nodescope' && p.metadata.name !== (source.transport as { pod?: { name: string } }).pod?.name)).toEqual([]);
  });

  it.runIf(existsSync(CLI))('the built binary: a forbidden port-forward exits 1 with the RBAC message', async () => {
    server.setForbidden([{ verb: 'create', resource: 'pods/portforward' }]);
    try {
      const r = await run(process.execPath, [CLI, 'dig', `web.default.svc.${ZONE}`, '--node', NODE]);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/"create" on "pods\/portforward" in namespace "kube-system"/);
    } finally {
      server.setForbidden([]);
    }
  });
});
