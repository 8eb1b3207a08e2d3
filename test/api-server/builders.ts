/**
 * Small builders of API objects for tests of the recorded API server: a web
 * Service, its EndpointSlice, Pods, a Node, Namespaces, and the `v1` `List`
 * that `kubectl get … -o json` would write for them. Each takes overrides.
 */
import type { K8sList, K8sObject } from './types.js';

let rv = 1000;
const nextRv = () => String(++rv);
const CREATED = '2026-11-01T10:00:00Z';

/** A ClusterIP Service `web` in `default` selecting `app=web`, port 80 → 8080/TCP. */
export function makeService(o: { name?: string; namespace?: string; clusterIP?: string; type?: string; nodePort?: number } = {}): K8sObject {
  const name = o.name ?? 'web';
  const clusterIP = o.clusterIP ?? '10.96.12.34';
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name, namespace: o.namespace ?? 'default', uid: `svc-${name}-uid`, resourceVersion: nextRv(),
      creationTimestamp: CREATED, labels: { app: name },
    },
    spec: {
      type: o.type ?? 'ClusterIP', clusterIP, clusterIPs: [clusterIP], ipFamilies: ['IPv4'], ipFamilyPolicy: 'SingleStack',
      internalTrafficPolicy: 'Cluster', sessionAffinity: 'None', selector: { app: name },
      ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8080, ...(o.nodePort ? { nodePort: o.nodePort } : {}) }],
    },
    status: { loadBalancer: {} },
  };
}

/** An IPv4 EndpointSlice of Service `service` with one ready endpoint per address. */
export function makeEndpointSlice(o: { service?: string; namespace?: string; name?: string; addresses?: string[]; node?: string } = {}): K8sObject {
  const service = o.service ?? 'web';
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name: o.name ?? `${service}-x7k2p`, namespace: o.namespace ?? 'default', uid: `eps-${service}-uid`, resourceVersion: nextRv(),
      creationTimestamp: CREATED,
      labels: { 'kubernetes.io/service-name': service, 'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io' },
      ownerReferences: [{ apiVersion: 'v1', kind: 'Service', name: service, uid: `svc-${service}-uid`, controller: true, blockOwnerDeletion: true }],
    },
    addressType: 'IPv4',
    endpoints: (o.addresses ?? ['10.244.1.5', '10.244.2.7']).map((a, i) => ({
      addresses: [a], conditions: { ready: true, serving: true, terminating: false }, nodeName: o.node ?? 'node-1',
      targetRef: { kind: 'Pod', name: `${service}-${i}`, namespace: o.namespace ?? 'default', uid: `pod-${service}-${i}-uid` },
    })),
    ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
  };
}

/** A Running pod with one ready container `app`, on `node` (default `node-1`). */
export function makePod(o: { name?: string; namespace?: string; node?: string; ip?: string; app?: string; phase?: string; containers?: string[] } = {}): K8sObject {
  const name = o.name ?? 'web-0';
  const containers = o.containers ?? ['app'];
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name, namespace: o.namespace ?? 'default', uid: `pod-${name}-uid`, resourceVersion: nextRv(), creationTimestamp: CREATED,
      labels: { app: o.app ?? 'web' },
    },
    spec: {
      nodeName: o.node ?? 'node-1',
      containers: containers.map((c) => ({ name: c, image: 'registry.k8s.io/e2e-test-images/agnhost:2.47', ports: [{ containerPort: 8080, protocol: 'TCP' }] })),
      restartPolicy: 'Always',
    },
    status: {
      phase: o.phase ?? 'Running', hostIP: '192.168.50.2', podIP: o.ip ?? '10.244.1.5', podIPs: [{ ip: o.ip ?? '10.244.1.5' }],
      conditions: [{ type: 'Ready', status: 'True' }],
      containerStatuses: containers.map((c) => ({ name: c, ready: true, restartCount: 0, started: true, image: 'agnhost:2.47', imageID: '', state: { running: { startedAt: CREATED } } })),
    },
  };
}

/** A Ready worker node with an InternalIP. */
export function makeNode(o: { name?: string; ip?: string; roles?: string[] } = {}): K8sObject {
  const name = o.name ?? 'node-1';
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name, uid: `node-${name}-uid`, resourceVersion: nextRv(), creationTimestamp: CREATED,
      labels: { 'kubernetes.io/hostname': name, 'kubernetes.io/os': 'linux', ...Object.fromEntries((o.roles ?? []).map((r) => [`node-role.kubernetes.io/${r}`, ''])) },
    },
    spec: { podCIDR: '10.244.1.0/24', podCIDRs: ['10.244.1.0/24'] },
    status: {
      addresses: [{ type: 'InternalIP', address: o.ip ?? '192.168.50.2' }, { type: 'Hostname', address: name }],
      conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status' }],
      nodeInfo: { kubeletVersion: 'v1.32.4', osImage: 'Debian GNU/Linux 12 (bookworm)', kernelVersion: '6.1.0-30-amd64', containerRuntimeVersion: 'containerd://1.7.24' },
    },
  };
}

/** The default ServiceCIDR `kubernetes` (networking.k8s.io/v1, KEP-1880) with a Ready condition. */
export function makeServiceCIDR(o: { name?: string; cidrs?: string[] } = {}): K8sObject {
  const name = o.name ?? 'kubernetes';
  return {
    apiVersion: 'networking.k8s.io/v1', kind: 'ServiceCIDR',
    metadata: { name, uid: `scidr-${name}-uid`, resourceVersion: nextRv(), creationTimestamp: CREATED },
    spec: { cidrs: o.cidrs ?? ['10.96.0.0/16'] },
    status: { conditions: [{ type: 'Ready', status: 'True', reason: '', message: 'Kubernetes Service CIDR is ready', lastTransitionTime: CREATED }] },
  };
}

/** The IPAddress object the allocator writes for a Service's ClusterIP. */
export function makeIPAddress(ip: string, service: { name: string; namespace?: string }): K8sObject {
  return {
    apiVersion: 'networking.k8s.io/v1', kind: 'IPAddress',
    metadata: { name: ip, uid: `ip-${ip}-uid`, resourceVersion: nextRv(), creationTimestamp: CREATED, labels: { 'ipaddress.kubernetes.io/managed-by': 'ipallocator.k8s.io' } },
    spec: { parentRef: { group: '', resource: 'services', namespace: service.namespace ?? 'default', name: service.name } },
  };
}

/** An Active namespace. */
export function makeNamespace(name: string): K8sObject {
  return {
    apiVersion: 'v1', kind: 'Namespace',
    metadata: { name, uid: `ns-${name}-uid`, resourceVersion: nextRv(), creationTimestamp: CREATED, labels: { 'kubernetes.io/metadata.name': name } },
    spec: { finalizers: ['kubernetes'] },
    status: { phase: 'Active' },
  };
}

/** A `v1` `List` of `items`, with an empty resourceVersion as `kubectl get -o json` writes. */
export function makeList(items: K8sObject[]): K8sList {
  return { apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: '' }, items };
}

/** The standard small capture: Service web, its EndpointSlice, two Pods, a Node, Namespaces default and kube-system. */
export function makeCapture(): K8sList {
  return makeList([
    makeNamespace('default'),
    makeNamespace('kube-system'),
    makeService(),
    makeEndpointSlice(),
    makePod({ name: 'web-0', ip: '10.244.1.5' }),
    makePod({ name: 'web-1', ip: '10.244.2.7', node: 'node-1' }),
    makeNode(),
  ]);
}
