/**
 * The Kubernetes API objects of a lab scenario, as `kubectl get
 * services,endpointslices,pods,nodes -A -o json` prints them: one `v1 List` with
 * Services, EndpointSlices (discovery.k8s.io/v1), Pods and Nodes, keys sorted and
 * 4-space indented like kubectl. Everything is deterministic: uids are derived from the
 * object's kind/namespace/name, timestamps are `scenario.createdAt`, resourceVersions
 * count up in list order. An IPv6 input beside the scenario makes its Services of the same
 * name dual-stack (PreferDualStack, IPv4 first), its others IPv6 single-stack, each with an
 * IPv6 EndpointSlice, and gives the input's node its IPv6 InternalIPs.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { KubeProxyInput, LabScenario, ScenarioNode, ScenarioPod, ScenarioService } from '../../src/analysis/lab-scenario-types.js';
import { LAB_SCENARIO } from './scenario.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** A deterministic RFC 4122 version-4-shaped uid for an object. */
export function objectUid(kind: string, namespace: string, name: string): string {
  const h = createHash('sha256').update(`${kind}/${namespace}/${name}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** Kubernetes' random-suffix alphabet (k8s.io/apimachinery/pkg/util/rand), used for generated names. */
const SUFFIX_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** A deterministic 5-character generateName suffix. */
export function nameSuffix(seed: string): string {
  const h = createHash('sha256').update(seed).digest();
  return Array.from(h.subarray(0, 5), (b) => SUFFIX_ALPHABET[b % SUFFIX_ALPHABET.length]).join('');
}

class Versions {
  private next = 1000;
  take(): string {
    return String(this.next++);
  }
}

function serviceLabels(svc: ScenarioService): Record<string, string> {
  if (svc.name === 'kube-dns') {
    return { 'k8s-app': 'kube-dns', 'kubernetes.io/cluster-service': 'true', 'kubernetes.io/name': 'CoreDNS' };
  }
  return { app: svc.name };
}

/** `IPv6` for an address with a colon, else `IPv4`. */
const familyOfIp = (ip: string): 'IPv4' | 'IPv6' => (ip.includes(':') ? 'IPv6' : 'IPv4');

/**
 * A Service's ClusterIPs: its own, then its twin's of the other family when the scenario has
 * a Service of the same namespace/name in `dualStack` (a dual-stack Service, PreferDualStack).
 */
function clusterIPsOf(svc: ScenarioService, twin: ScenarioService | undefined): string[] {
  return twin ? [svc.clusterIP, twin.clusterIP] : [svc.clusterIP];
}

function serviceObject(s: LabScenario, svc: ScenarioService, rv: Versions, twin?: ScenarioService): Json {
  const external = svc.type !== 'ClusterIP';
  const clusterIPs = clusterIPsOf(svc, twin);
  const spec: Record<string, Json> = {
    clusterIP: svc.clusterIP,
    clusterIPs,
    internalTrafficPolicy: svc.internalTrafficPolicy ?? 'Cluster',
    ipFamilies: svc.clusterIP === 'None' ? ['IPv4'] : clusterIPs.map(familyOfIp),
    ipFamilyPolicy: twin ? 'PreferDualStack' : 'SingleStack',
    ports: svc.ports.map((p) => ({
      ...(p.name !== '' ? { name: p.name } : {}),
      ...(external && p.nodePort ? { nodePort: p.nodePort } : {}),
      port: p.port,
      protocol: p.protocol,
      targetPort: p.targetPort,
    })),
    selector: { ...(svc.selector ?? {}) },
    sessionAffinity: svc.sessionAffinity ? 'ClientIP' : 'None',
    type: svc.type,
  };
  if (external) spec.externalTrafficPolicy = svc.externalTrafficPolicy ?? 'Cluster';
  if (svc.externalIPs?.length) spec.externalIPs = [...svc.externalIPs];
  if (svc.sessionAffinity) spec.sessionAffinityConfig = { clientIP: { timeoutSeconds: svc.sessionAffinity.timeoutSeconds } };
  if (svc.loadBalancerSourceRanges?.length) spec.loadBalancerSourceRanges = [...svc.loadBalancerSourceRanges];
  if (svc.trafficDistribution !== undefined) spec.trafficDistribution = svc.trafficDistribution;
  const proxy = new Set(svc.ipModeProxyIPs ?? []);
  const lbIPs = [...(svc.loadBalancerIPs ?? []), ...(twin?.loadBalancerIPs ?? [])];
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      creationTimestamp: s.createdAt,
      labels: serviceLabels(svc),
      name: svc.name,
      namespace: svc.namespace,
      resourceVersion: rv.take(),
      uid: objectUid('Service', svc.namespace, svc.name),
    },
    spec,
    status: { loadBalancer: lbIPs.length ? { ingress: lbIPs.map((ip) => ({ ip, ipMode: proxy.has(ip) || twin?.ipModeProxyIPs?.includes(ip) ? 'Proxy' : 'VIP' })) } : {} },
  };
}

function endpointSliceObject(s: LabScenario, svc: ScenarioService, rv: Versions, family: 'IPv4' | 'IPv6' = 'IPv4'): Json {
  const seed = `EndpointSlice/${svc.namespace}/${svc.name}${family === 'IPv6' ? '/IPv6' : ''}`;
  const name = `${svc.name}-${nameSuffix(seed)}`;
  const headless = svc.clusterIP === 'None';
  const podsByName = new Map(s.pods.map((p) => [p.name, p]));
  const endpoints = svc.endpoints.map((ep) => {
    const pod = ep.podName === undefined ? undefined : podsByName.get(ep.podName);
    return {
      addresses: [ep.ip],
      conditions: { ready: ep.ready, serving: ep.serving, terminating: ep.terminating },
      ...(ep.nodeName !== undefined ? { nodeName: ep.nodeName } : {}),
      ...(ep.zone !== undefined ? { zone: ep.zone } : {}),
      ...(ep.zoneHints?.length || ep.nodeHints?.length
        ? { hints: { ...(ep.zoneHints?.length ? { forZones: ep.zoneHints.map((name) => ({ name })) } : {}), ...(ep.nodeHints?.length ? { forNodes: ep.nodeHints.map((name) => ({ name })) } : {}) } }
        : {}),
      ...(pod !== undefined
        ? { targetRef: { kind: 'Pod', name: pod.name, namespace: pod.namespace, uid: objectUid('Pod', pod.namespace, pod.name) } }
        : {}),
    };
  });
  return {
    addressType: family,
    apiVersion: 'discovery.k8s.io/v1',
    // The controller's placeholder slice for a Service without endpoints has null lists.
    endpoints: endpoints.length > 0 ? endpoints : null,
    kind: 'EndpointSlice',
    metadata: {
      annotations: { 'endpoints.kubernetes.io/last-change-trigger-time': s.createdAt },
      creationTimestamp: s.createdAt,
      generateName: `${svc.name}-`,
      generation: 1,
      labels: {
        ...serviceLabels(svc),
        'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io',
        'kubernetes.io/service-name': svc.name,
        ...(headless ? { 'service.kubernetes.io/headless': '' } : {}),
      },
      name,
      namespace: svc.namespace,
      ownerReferences: [
        { apiVersion: 'v1', blockOwnerDeletion: true, controller: true, kind: 'Service', name: svc.name, uid: objectUid('Service', svc.namespace, svc.name) },
      ],
      resourceVersion: rv.take(),
      uid: objectUid('EndpointSlice', svc.namespace, name),
    },
    ports: endpoints.length > 0
      ? svc.ports.map((p) => ({ name: p.name, port: p.targetPort, protocol: p.protocol }))
      : null,
  };
}

function containerPorts(pod: ScenarioPod): Json {
  if (pod.role === 'web') return [{ containerPort: pod.httpPort ?? 8080, name: 'http', protocol: 'TCP' }];
  if (pod.role === 'dns') {
    return [
      { containerPort: 53, name: 'dns', protocol: 'UDP' },
      { containerPort: 53, name: 'dns-tcp', protocol: 'TCP' },
    ];
  }
  return [];
}

/**
 * A pod whose endpoint is terminating is being deleted: the API server set its
 * deletionTimestamp (deletion time + grace period; here one hour after creation, 30 s grace).
 */
function deletionOf(s: LabScenario, pod: ScenarioPod): Record<string, Json> {
  const terminating = s.services.some((svc) => svc.endpoints.some((e) => e.podName === pod.name && e.terminating));
  if (!terminating) return {};
  return { deletionGracePeriodSeconds: 30, deletionTimestamp: new Date(Date.parse(s.createdAt) + 3_630_000).toISOString().replace('.000Z', 'Z') };
}

function podObject(s: LabScenario, pod: ScenarioPod, rv: Versions): Json {
  const node = s.nodes.find((n) => n.name === pod.nodeName);
  const container = pod.role === 'dns' ? 'coredns' : pod.role === 'web' ? 'web' : 'client';
  const t = s.createdAt;
  const conditions = ['PodReadyToStartContainers', 'Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map((type) => ({
    lastProbeTime: null,
    lastTransitionTime: t,
    status: 'True',
    type,
  }));
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      creationTimestamp: t,
      ...deletionOf(s, pod),
      ...(pod.replicaSet !== undefined ? { generateName: `${pod.replicaSet}-` } : {}),
      labels: { ...pod.labels },
      name: pod.name,
      namespace: pod.namespace,
      ...(pod.replicaSet !== undefined
        ? {
            ownerReferences: [
              { apiVersion: 'apps/v1', blockOwnerDeletion: true, controller: true, kind: 'ReplicaSet', name: pod.replicaSet,
                uid: objectUid('ReplicaSet', pod.namespace, pod.replicaSet) },
            ],
          }
        : {}),
      resourceVersion: rv.take(),
      uid: objectUid('Pod', pod.namespace, pod.name),
    },
    spec: {
      containers: [
        {
          image: pod.image,
          imagePullPolicy: 'IfNotPresent',
          name: container,
          ports: containerPorts(pod),
          resources: {},
          terminationMessagePath: '/dev/termination-log',
          terminationMessagePolicy: 'File',
        },
      ],
      dnsPolicy: pod.role === 'dns' ? 'Default' : 'ClusterFirst',
      enableServiceLinks: true,
      nodeName: pod.nodeName,
      preemptionPolicy: 'PreemptLowerPriority',
      priority: 0,
      restartPolicy: 'Always',
      schedulerName: 'default-scheduler',
      securityContext: {},
      serviceAccount: 'default',
      serviceAccountName: 'default',
      terminationGracePeriodSeconds: 30,
    },
    status: {
      conditions,
      containerStatuses: [
        {
          containerID: `containerd://${createHash('sha256').update(`container/${pod.namespace}/${pod.name}`).digest('hex')}`,
          image: pod.image,
          imageID: '',
          lastState: {},
          name: container,
          ready: true,
          restartCount: 0,
          started: true,
          state: { running: { startedAt: t } },
        },
      ],
      hostIP: node?.internalIP ?? '',
      hostIPs: node ? [{ ip: node.internalIP }] : [],
      phase: 'Running',
      podIP: pod.ip,
      podIPs: [{ ip: pod.ip }],
      qosClass: 'BestEffort',
      startTime: t,
    },
  };
}

function nodeObject(s: LabScenario, node: ScenarioNode, rv: Versions, v6IPs: readonly string[] = []): Json {
  const t = s.createdAt;
  const resources = { cpu: '2', 'ephemeral-storage': '20470152Ki', memory: '8148188Ki', pods: '110' };
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      annotations: { 'node.alpha.kubernetes.io/ttl': '0', 'volumes.kubernetes.io/controller-managed-attach-detach': 'true' },
      creationTimestamp: t,
      labels: {
        'beta.kubernetes.io/arch': 'amd64',
        'beta.kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
        'kubernetes.io/hostname': node.name,
        'kubernetes.io/os': 'linux',
        ...(node.zone !== undefined ? { 'topology.kubernetes.io/zone': node.zone } : {}),
      },
      name: node.name,
      resourceVersion: rv.take(),
      uid: objectUid('Node', '', node.name),
    },
    spec: { podCIDR: node.podCIDR, podCIDRs: [node.podCIDR] },
    status: {
      addresses: [
        { address: node.internalIP, type: 'InternalIP' },
        ...v6IPs.map((address) => ({ address, type: 'InternalIP' })),
        { address: node.name, type: 'Hostname' },
      ],
      allocatable: resources,
      capacity: resources,
      conditions: [
        ['MemoryPressure', 'False', 'KubeletHasSufficientMemory', 'kubelet has sufficient memory available'],
        ['DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'],
        ['PIDPressure', 'False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'],
        ['Ready', 'True', 'KubeletReady', 'kubelet is posting ready status'],
      ].map(([type, status, reason, message]) => ({
        lastHeartbeatTime: t, lastTransitionTime: t, message: message ?? '', reason: reason ?? '', status: status ?? '', type: type ?? '',
      })),
      daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      nodeInfo: {
        architecture: 'amd64',
        bootID: objectUid('boot', '', node.name),
        containerRuntimeVersion: 'containerd://1.7.22',
        kernelVersion: '6.1.0-28-amd64',
        kubeProxyVersion: 'v1.31.0',
        kubeletVersion: 'v1.31.0',
        machineID: createHash('md5').update(node.name).digest('hex'),
        operatingSystem: 'linux',
        osImage: 'Debian GNU/Linux 12 (bookworm)',
        systemUUID: objectUid('system', '', node.name),
      },
    },
  };
}

function byNamespaceName<T extends { namespace: string; name: string }>(a: T, b: T): number {
  return a.namespace === b.namespace ? (a.name < b.name ? -1 : a.name > b.name ? 1 : 0) : a.namespace < b.namespace ? -1 : 1;
}

/** Recursively sorts object keys, as kubectl's JSON printer (unstructured maps) emits them. */
function sortKeys(value: Json): Json {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.keys(value).sort().map((k) => [k, sortKeys(value[k] ?? null)]));
  }
  return value;
}

/**
 * The `v1 List` of Services, EndpointSlices, Pods and Nodes for `scenario`, in kubectl's
 * order (by kind as requested, then namespace and name).
 */
export function buildApiObjects(scenario: LabScenario = LAB_SCENARIO, v6?: KubeProxyInput): Json {
  const rv = new Versions();
  const services = [...scenario.services].sort(byNamespaceName);
  const pods = [...scenario.pods].sort(byNamespaceName);
  const nodes = [...scenario.nodes].sort((a, b) => (a.name < b.name ? -1 : 1));
  const v6Services = [...(v6?.services ?? [])].sort(byNamespaceName);
  const ref = (x: ScenarioService) => `${x.namespace}/${x.name}`;
  const twins = new Map(v6Services.map((x) => [ref(x), x]));
  const v4Refs = new Set(services.map(ref));
  const v6Only = v6Services.filter((x) => !v4Refs.has(ref(x)));
  const items: Json[] = [
    ...[...services, ...v6Only].sort(byNamespaceName).map((svc) => serviceObject(scenario, svc, rv, v4Refs.has(ref(svc)) ? twins.get(ref(svc)) : undefined)),
    ...services.map((svc) => endpointSliceObject(scenario, svc, rv)),
    ...v6Services.map((svc) => endpointSliceObject(scenario, svc, rv, 'IPv6')),
    ...pods.map((p) => podObject(scenario, p, rv)),
    ...nodes.map((n) => nodeObject(scenario, n, rv, v6 && n.name === v6.nodeName ? v6.nodeIPs : [])),
  ];
  return sortKeys({ apiVersion: 'v1', items, kind: 'List', metadata: { resourceVersion: '' } });
}

/** The List as kubectl prints it (4-space JSON, trailing newline). */
export function apiObjectsText(scenario: LabScenario = LAB_SCENARIO, v6?: KubeProxyInput): string {
  return `${JSON.stringify(buildApiObjects(scenario, v6), null, 4)}\n`;
}

/** Writes the List to `file` (creating its directory); returns `file`. */
export function writeApiObjects(file: string, scenario: LabScenario = LAB_SCENARIO): string {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, apiObjectsText(scenario));
  return file;
}
