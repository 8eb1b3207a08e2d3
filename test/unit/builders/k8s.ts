/**
 * Builders for Kubernetes API objects in the shape the API returns them (core/v1,
 * discovery/v1 JSON), with small defaults: a ClusterIP Service `default/web` on port 80 →
 * 8080 named `http`, its EndpointSlice, a Pod and a Node. Tests state only what matters.
 *
 * `objectsOf(...)` runs the real parser over a `kind: List`, so analysis tests see
 * exactly what a capture would give them.
 */
import type { ApiObjects, JsonObject, JsonValue } from '../../../src/model/k8s.js';
import { parseK8sObjects } from '../../../src/parsers/k8s-objects.js';

type Json = Record<string, JsonValue>;

/** Drops keys whose value is `undefined`, so builders never emit them. */
function compact(o: Record<string, JsonValue | undefined>): Json {
  const out: Json = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined) out[k] = v;
  return out;
}

export interface PortOpts {
  name?: string;
  protocol?: string;
  port?: number;
  targetPort?: number | string;
  nodePort?: number;
  appProtocol?: string;
}

export interface ServiceOpts {
  name?: string;
  namespace?: string;
  uid?: string;
  type?: string;
  /** `null` omits spec.clusterIP (ExternalName); defaults to 10.96.0.10. */
  clusterIP?: string | null;
  clusterIPs?: string[];
  ipFamilies?: string[];
  ports?: PortOpts[];
  /** `null` omits spec.selector; defaults to `{app: <name>}`. */
  selector?: Record<string, string> | null;
  externalName?: string;
  externalIPs?: string[];
  lbIngress?: { ip?: string; hostname?: string; ipMode?: string }[];
  sessionAffinity?: string;
  timeoutSeconds?: number;
  externalTrafficPolicy?: string;
  internalTrafficPolicy?: string;
  trafficDistribution?: string;
  publishNotReadyAddresses?: boolean;
  healthCheckNodePort?: number;
  loadBalancerSourceRanges?: string[];
  ipFamilyPolicy?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

/** A core/v1 Service. */
export function makeService(o: ServiceOpts = {}): JsonObject {
  const name = o.name ?? 'web';
  const clusterIP = o.clusterIP === undefined ? '10.96.0.10' : o.clusterIP;
  const ports = (o.ports ?? [{ name: 'http', port: 80, targetPort: 8080 }]).map((p) =>
    compact({ name: p.name, protocol: p.protocol ?? 'TCP', port: p.port ?? 80, targetPort: p.targetPort ?? p.port ?? 80, nodePort: p.nodePort, appProtocol: p.appProtocol }),
  );
  const selector = o.selector === undefined ? { app: name } : o.selector;
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: compact({
      name,
      namespace: o.namespace ?? 'default',
      uid: o.uid ?? `uid-svc-${name}`,
      labels: o.labels,
      annotations: o.annotations,
    }),
    spec: compact({
      type: o.type ?? 'ClusterIP',
      clusterIP: clusterIP ?? undefined,
      clusterIPs: o.clusterIPs ?? (clusterIP ? [clusterIP] : undefined),
      ipFamilies: o.ipFamilies,
      ipFamilyPolicy: o.ipFamilyPolicy,
      ports,
      selector: selector ?? undefined,
      externalName: o.externalName,
      externalIPs: o.externalIPs,
      sessionAffinity: o.sessionAffinity ?? 'None',
      sessionAffinityConfig: o.timeoutSeconds === undefined ? undefined : { clientIP: { timeoutSeconds: o.timeoutSeconds } },
      externalTrafficPolicy: o.externalTrafficPolicy,
      internalTrafficPolicy: o.internalTrafficPolicy,
      trafficDistribution: o.trafficDistribution,
      publishNotReadyAddresses: o.publishNotReadyAddresses,
      healthCheckNodePort: o.healthCheckNodePort,
      loadBalancerSourceRanges: o.loadBalancerSourceRanges,
    }),
    status: { loadBalancer: o.lbIngress ? { ingress: o.lbIngress.map((i) => compact(i)) } : {} },
  };
}

export interface EndpointOpts {
  address?: string;
  /** `null` leaves the condition unset, as the API may; defaults true/true/false. */
  ready?: boolean | null | string;
  serving?: boolean | null;
  terminating?: boolean | null;
  hostname?: string;
  nodeName?: string;
  zone?: string;
  forZones?: string[];
  forNodes?: string[];
  /** Name of the Pod in targetRef (namespace: the slice's). */
  pod?: string;
  podUid?: string;
}

/** One discovery/v1 Endpoint. */
export function makeEndpoint(o: EndpointOpts = {}, namespace = 'default'): JsonObject {
  const cond = (v: boolean | null | string | undefined, dflt: boolean): JsonValue | undefined =>
    v === null ? undefined : v === undefined ? dflt : v;
  const hints =
    o.forZones || o.forNodes
      ? compact({ forZones: o.forZones?.map((name) => ({ name })), forNodes: o.forNodes?.map((name) => ({ name })) })
      : undefined;
  return compact({
    addresses: [o.address ?? '10.244.1.5'],
    conditions: compact({ ready: cond(o.ready, true), serving: cond(o.serving, true), terminating: cond(o.terminating, false) }),
    hostname: o.hostname,
    nodeName: o.nodeName,
    zone: o.zone,
    hints,
    targetRef: o.pod ? compact({ kind: 'Pod', namespace, name: o.pod, uid: o.podUid }) : undefined,
  });
}

export interface SliceOpts {
  name?: string;
  namespace?: string;
  /** The Service named by label kubernetes.io/service-name; `null` omits the label. */
  service?: string | null;
  addressType?: string;
  /** Slice ports; `name: null` writes `"name": null`. */
  ports?: { name?: string | null; port?: number | null; protocol?: string }[] | null;
  endpoints?: EndpointOpts[] | null;
  managedBy?: string;
}

/** A discovery/v1 EndpointSlice. */
export function makeEndpointSlice(o: SliceOpts = {}): JsonObject {
  const service = o.service === undefined ? 'web' : o.service;
  const namespace = o.namespace ?? 'default';
  const labels = compact({
    'endpointslice.kubernetes.io/managed-by': o.managedBy ?? 'endpointslice-controller.k8s.io',
    'kubernetes.io/service-name': service ?? undefined,
  });
  const ports =
    o.ports === null
      ? null
      : (o.ports ?? [{ name: 'http', port: 8080 }]).map((p) => {
          const out: Json = { protocol: p.protocol ?? 'TCP' };
          if (p.name !== undefined) out['name'] = p.name;
          if (p.port !== undefined) out['port'] = p.port;
          return out;
        });
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: o.name ?? `${service ?? 'orphan'}-abcde`, namespace, labels },
    addressType: o.addressType ?? 'IPv4',
    endpoints: o.endpoints === null ? null : (o.endpoints ?? [{}]).map((e) => makeEndpoint(e, namespace)),
    ports,
  };
}

export interface PodOpts {
  name?: string;
  namespace?: string;
  uid?: string;
  ip?: string;
  ips?: string[];
  hostIP?: string;
  nodeName?: string;
  phase?: string;
  hostNetwork?: boolean;
  labels?: Record<string, string>;
  ready?: boolean;
  containerPorts?: { name?: string; containerPort: number; protocol?: string }[];
}

/** A core/v1 Pod (labels default to `{app: web}`). */
export function makePod(o: PodOpts = {}): JsonObject {
  const ips = o.ips ?? [o.ip ?? '10.244.1.5'];
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: compact({ name: o.name ?? 'web-0', namespace: o.namespace ?? 'default', uid: o.uid, labels: o.labels ?? { app: 'web' } }),
    spec: compact({
      nodeName: o.nodeName ?? 'node-a',
      hostNetwork: o.hostNetwork,
      containers: [compact({ name: 'main', ports: o.containerPorts?.map((p) => compact({ ...p })) })],
    }),
    status: compact({
      phase: o.phase ?? 'Running',
      podIP: ips[0],
      podIPs: ips.map((ip) => ({ ip })),
      hostIP: o.hostIP,
      conditions: o.ready === undefined ? undefined : [{ type: 'Ready', status: o.ready ? 'True' : 'False' }],
    }),
  };
}

export interface NodeOpts {
  name?: string;
  internalIP?: string;
  externalIP?: string;
  podCIDR?: string;
  podCIDRs?: string[];
  zone?: string;
  ready?: boolean;
}

/** A core/v1 Node. */
export function makeNode(o: NodeOpts = {}): JsonObject {
  const name = o.name ?? 'node-a';
  const addresses: Json[] = [{ type: 'InternalIP', address: o.internalIP ?? '192.168.0.10' }];
  if (o.externalIP) addresses.push({ type: 'ExternalIP', address: o.externalIP });
  addresses.push({ type: 'Hostname', address: name });
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: compact({ name, labels: o.zone ? { 'topology.kubernetes.io/zone': o.zone } : undefined }),
    spec: compact({ podCIDR: o.podCIDR ?? o.podCIDRs?.[0], podCIDRs: o.podCIDRs ?? (o.podCIDR ? [o.podCIDR] : undefined) }),
    status: compact({
      addresses,
      conditions: o.ready === undefined ? undefined : [{ type: 'Ready', status: o.ready ? 'True' : 'False' }],
    }),
  };
}

/** `kubectl get … -o json` text holding `items`. */
export function listJson(items: readonly JsonObject[]): string {
  return JSON.stringify({ apiVersion: 'v1', kind: 'List', items, metadata: { resourceVersion: '' } }, null, 4);
}

/** Parses `items` through the real parser; fails loudly if the builders made something it rejects. */
export function objectsOf(...items: JsonObject[]): ApiObjects {
  const r = parseK8sObjects(listJson(items), 'builder');
  const bad = r.diagnostics.filter((d) => d.severity !== 'info');
  if (bad.length > 0) throw new Error(`builder objects did not parse cleanly: ${bad.map((d) => d.message).join('; ')}`);
  return r.value;
}
