/**
 * DNS over `--node` without root: the CoreDNS pod choice (pure), and the whole path —
 * PortForwardDnsTransport → client-node's PortForward over a WebSocket → the recorded API
 * server's pods/portforward → a real DNS server on 127.0.0.1 (the server's dialer goes to
 * it instead of into a pod's namespace; the lab test does the namespaces).
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dnsTransportFor } from '../../src/dns/open.js';
import { podForServer, PORT_FORWARD_NOTE, PortForwardDnsTransport } from '../../src/dns/portforward.js';
import type { Transport } from '../../src/sources/transport.js';
import { UserError } from '../../src/errors.js';
import { loadKube } from '../../src/sources/k8s-client.js';
import { podsFromList, podsFromSlices, serviceAddresses, type ClusterDnsTargets } from '../../src/sources/k8s-coredns.js';
import { startApiServer, type ApiServerHandle, type K8sObject } from '../api-server/index.js';
import { startTestDnsServer, type TestDnsServer } from './builders/dns.js';
import { makeEndpointSlice, makePod, makeService, type EndpointOpts } from './builders/k8s.js';

const NS = 'kube-system';
const CLOSING_PORT = 54;
const Z = 'default.svc.cluster.local';
const DNS_LABELS = { 'k8s-app': 'kube-dns' };
const dnsPorts = [{ name: 'dns', port: 53, protocol: 'UDP' }, { name: 'dns-tcp', port: 53, protocol: 'TCP' }, { name: 'metrics', port: 9153, protocol: 'TCP' }];
const kubeDns = () => makeService({ name: 'kube-dns', namespace: NS, clusterIP: '10.96.0.10', selector: DNS_LABELS, ports: dnsPorts.slice(0, 2).map((p) => ({ ...p, targetPort: p.port })) });
const slice = (endpoints: EndpointOpts[], ports = dnsPorts) => makeEndpointSlice({ name: 'kube-dns-x1', namespace: NS, service: 'kube-dns', ports, endpoints });
const corePod = (name: string, ip: string, o: { phase?: string; ready?: boolean } = {}) =>
  makePod({ name, namespace: NS, ip, labels: DNS_LABELS, phase: o.phase ?? 'Running', ready: o.ready ?? true, containerPorts: [{ name: 'dns', containerPort: 53, protocol: 'UDP' }, { name: 'dns-tcp', containerPort: 53, protocol: 'TCP' }] });

describe('which CoreDNS pod (pure)', () => {
  it('slices: Ready endpoints first (API order kept), then serving, terminating dropped, the dns-tcp port', () => {
    const pods = podsFromSlices([slice([
      { pod: 'coredns-a', address: '10.244.0.2', ready: false, serving: false },
      { pod: 'coredns-b', address: '10.244.0.3' },
      { pod: 'coredns-c', address: '10.244.0.4', ready: false, serving: true },
      { pod: 'coredns-d', address: '10.244.0.5', terminating: true, ready: false },
      { pod: 'coredns-e', address: '10.244.0.6', ready: null },
      { address: '10.244.0.7' },
    ], [{ name: 'metrics', port: 9153, protocol: 'TCP' }, { name: 'dns-tcp', port: 1053, protocol: 'TCP' }])] as never);
    expect(pods.map((p) => [p.name, p.ip, p.ready, p.port])).toEqual([
      ['coredns-b', '10.244.0.3', true, 1053],
      ['coredns-e', '10.244.0.6', true, 1053],
      ['coredns-c', '10.244.0.4', false, 1053],
      ['coredns-a', '10.244.0.2', false, 1053],
    ]);
  });

  it('pods by label: Running only, Ready first, the container port named dns-tcp', () => {
    const pods = podsFromList([corePod('coredns-a', '10.244.0.2', { ready: false }), corePod('coredns-b', '10.244.0.3'), corePod('coredns-c', '10.244.0.4', { phase: 'Pending' })] as never);
    expect(pods.map((p) => [p.name, p.ready, p.port, p.from])).toEqual([['coredns-b', true, 53, 'pod-label'], ['coredns-a', false, 53, 'pod-label']]);
  });

  it('the ClusterIP goes to the first Ready pod, a pod IP to that pod; others and no Ready pod are UserErrors', () => {
    const targets: ClusterDnsTargets = { ...serviceAddresses(kubeDns() as never), pods: podsFromSlices([slice([{ pod: 'coredns-a', address: '10.244.0.2', ready: false }, { pod: 'coredns-b', address: '10.244.0.3' }])] as never) };
    expect(targets.clusterIPs).toEqual(['10.96.0.10']);
    expect(podForServer(targets, '10.96.0.10').name).toBe('coredns-b');
    expect(podForServer(targets, '10.244.0.2').name).toBe('coredns-a');
    expect(() => podForServer(targets, '8.8.8.8')).toThrow(UserError);
    expect(() => podForServer(targets, '8.8.8.8')).toThrow(/8\.8\.8\.8 cannot be asked/);
    const noService = { ...targets, clusterIPs: [], serviceProblem: 'there is no Service kube-system/kube-dns' };
    expect(() => podForServer(noService, '10.96.0.10')).toThrow(/10\.96\.0\.10 cannot be asked \(the kube-dns ClusterIP is unknown: there is no Service kube-system\/kube-dns\)/);
    expect(podForServer(noService, '10.244.0.3').name).toBe('coredns-b');
    const noneReady = { ...targets, pods: targets.pods.map((p) => ({ ...p, ready: false })) };
    expect(() => podForServer(noneReady, '10.96.0.10')).toThrow(/no Ready CoreDNS pod behind 10\.96\.0\.10: kube-system\/coredns-b, kube-system\/coredns-a are not Ready/);
  });
});

describe('dnsTransportFor a kubectl-debug source', () => {
  const debugSource = (kube?: unknown) => ({ kind: 'kubectl-debug', label: 'node/n1', ...(kube ? { kube } : {}), exec: async () => { throw new Error('unused'); }, close: async () => {} }) as unknown as Transport;

  it('is a port-forward transport from its kubeconfig context; without one a UserError', () => {
    const t = dnsTransportFor(debugSource({ kc: {}, server: 'https://x', namespace: 'default' }));
    expect([t.kind, t.label, t.note]).toEqual(['port-forward', 'port-forward to a CoreDNS pod', PORT_FORWARD_NOTE]);
    expect(() => dnsTransportFor(debugSource())).toThrow(UserError);
  });
});

describe('PortForwardDnsTransport through the recorded API server (WebSocket port-forward)', () => {
  let dnsServer: TestDnsServer;
  let server: ApiServerHandle;
  const dialled: string[] = [];

  const closing = { server: net.createServer((c) => c.end()), port: 0 };

  beforeAll(async () => {
    dnsServer = await startTestDnsServer({ records: [{ name: `web.${Z}`, type: 'A', data: '10.96.12.34' }] });
    await new Promise<void>((r) => closing.server.listen(0, '127.0.0.1', () => r()));
    closing.port = (closing.server.address() as net.AddressInfo).port;
    const objects: K8sObject[] = [
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } },
      kubeDns() as K8sObject,
      slice([{ pod: 'coredns-a', address: '10.244.0.2', ready: false }, { pod: 'coredns-b', address: '10.244.0.3' }]) as K8sObject,
      corePod('coredns-a', '10.244.0.2', { ready: false }) as K8sObject,
      corePod('coredns-b', '10.244.0.3') as K8sObject,
    ];
    server = await startApiServer({
      objects,
      // Every pod's port 53 is the test DNS server, CLOSING_PORT accepts and hangs up; anything else is refused.
      portForward: (pod, port) =>
        new Promise((resolve, reject) => {
          dialled.push(`${pod.namespace}/${pod.name}:${port}`);
          const s = net.connect(port === 53 ? dnsServer.port : port === CLOSING_PORT ? closing.port : 1, '127.0.0.1');
          s.once('connect', () => resolve(s));
          s.once('error', reject);
        }),
    });
  });
  afterAll(async () => {
    await server?.close();
    await dnsServer?.close();
    closing.server.close();
  });

  const transport = () => PortForwardDnsTransport.forKube(loadKube({ kubeconfig: server.kubeconfigPath }));
  const ask = (server_ = '10.96.0.10') => ({ server: server_, port: 53, qname: `web.${Z}`, qtype: 'A' as const });

  it('asks the Ready pod over TCP through pods/portforward and names it in via', async () => {
    const t = transport();
    expect(t.label).toBe('port-forward to a CoreDNS pod');
    expect(t.note).toBe(PORT_FORWARD_NOTE);
    const before = dialled.length;
    const e = await t.query(ask());
    expect(e).toMatchObject({ outcome: 'answer', transport: 'tcp', server: '10.96.0.10', via: 'port-forward to kube-system/coredns-b:53' });
    expect(e.answers.map((a) => a.data)).toEqual(['10.96.12.34']);
    expect(t.label).toBe('port-forward to kube-system/coredns-b:53');
    expect(dialled.slice(before)).toEqual(['kube-system/coredns-b:53']);
    expect(dnsServer.seen.at(-1)).toEqual({ transport: 'tcp', name: `web.${Z}`, type: 'A' });
    const upgrade = server.requests().filter((r) => r.path.endsWith('/portforward')).at(-1);
    expect(upgrade).toMatchObject({ path: '/api/v1/namespaces/kube-system/pods/coredns-b/portforward', query: '?ports=53', status: 101, upgrade: 'websocket' });
  });

  it('a forbidden pods/portforward is a UserError; once allowed again the next question goes through', async () => {
    const t = transport();
    server.setForbidden([{ verb: 'create', resource: 'pods/portforward', namespace: NS }]);
    try {
      await expect(t.query(ask())).rejects.toThrow(/the cluster refused: nodescope needs "create" on "pods\/portforward" in namespace "kube-system"/);
    } finally {
      server.setForbidden([]);
    }
    expect((await t.query(ask())).outcome).toBe('answer');
  });

  it('RBAC refusing get (a WebSocket upgrade is a GET) is named as get', async () => {
    server.setForbidden([{ verb: 'get', resource: 'pods/portforward' }]);
    try {
      await expect(transport().query(ask())).rejects.toThrow(/needs "get" on "pods\/portforward" in namespace "kube-system"/);
    } finally {
      server.setForbidden([]);
    }
  });

  it('a connection the pod closes before replying is a network-error exchange, and the next question looks the pods up again', async () => {
    let lookups = 0;
    const t = new PortForwardDnsTransport({
      findPods: async () => {
        lookups++;
        return { clusterIPs: ['10.96.0.10'], servicePorts: [], pods: [{ namespace: NS, name: 'coredns-b', ip: '10.244.0.3', port: CLOSING_PORT, ready: true, from: 'endpointslice' }] };
      },
      open: async (pod) => (await import('../../src/sources/k8s-portforward.js')).openPortForward(loadKube({ kubeconfig: server.kubeconfigPath }).kc, { namespace: pod.namespace, pod: pod.name, port: pod.port }),
    });
    const e = await t.query(ask(), { tries: 1, timeoutMs: 2000 });
    expect(e).toMatchObject({ outcome: 'network-error', error: 'connection closed before a full reply' });
    await t.query(ask(), { tries: 1, timeoutMs: 2000 });
    expect(lookups).toBe(2);
  });

  it('a refused dial in the pod is a network-error exchange with the kubelet-style reason', async () => {
    const t = new PortForwardDnsTransport({
      findPods: async () => ({ clusterIPs: ['10.96.0.10'], servicePorts: [], pods: [{ namespace: NS, name: 'coredns-b', ip: '10.244.0.3', port: 5353, ready: true, from: 'endpointslice' }] }),
      open: async (pod) => (await import('../../src/sources/k8s-portforward.js')).openPortForward(loadKube({ kubeconfig: server.kubeconfigPath }).kc, { namespace: pod.namespace, pod: pod.name, port: pod.port }),
    });
    const e = await t.query(ask(), { tries: 1, timeoutMs: 2000 });
    expect(e.outcome).toBe('network-error');
    expect(e.error).toMatch(/^port-forward to kube-system\/coredns-b:5353: error forwarding port 5353 to pod coredns-b, uid [^:]*: connect ECONNREFUSED/);
  });

  it('listing forbidden: the UserError names list endpointslices or pods', async () => {
    server.setForbidden([{ verb: 'list', resource: 'endpointslices' }, { verb: 'list', resource: 'pods' }]);
    try {
      await expect(transport().query(ask())).rejects.toThrow(/"list" on "endpointslices" in namespace "kube-system"/);
    } finally {
      server.setForbidden([]);
    }
  });
});
