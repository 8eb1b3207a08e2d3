/**
 * Typed views of the Kubernetes API objects nodescope reads: Service, EndpointSlice, Pod
 * and Node. Field comments name the API field each value comes from (k8s.io/api
 * core/v1 `types.go`, discovery/v1 `types.go`). Every object keeps the JSON the API
 * returned as `raw`, so a capture reproduces exactly what the API said.
 *
 * Everything here is read only, and shared to keep a 50,000-object capture small: string
 * lists and string maps of the typed view are the very arrays/objects inside `raw`, empty
 * lists and maps are one frozen instance, and one parse keeps equal endpoint `conditions`
 * once (frozen). Copy before changing anything.
 *
 * Built by `parseK8sObjects` (src/parsers/k8s-objects.ts); values here are what the
 * parser could read reliably, after the API's documented defaults (protocol `TCP`,
 * type `ClusterIP`, sessionAffinity `None`, targetPort = port).
 */

/** Any JSON value, as `JSON.parse` returns it. */
export type JsonValue = null | boolean | number | string | readonly JsonValue[] | JsonObject;

/** A JSON object. */
export interface JsonObject {
  readonly [key: string]: JsonValue;
}

/** core/v1 `Protocol` (ServicePort.protocol, EndpointPort.protocol). The API default is `TCP`. */
export type Protocol = 'TCP' | 'UDP' | 'SCTP';

/** core/v1 `ServiceType` (`spec.type`). The API default is `ClusterIP`. */
export type ServiceType = 'ClusterIP' | 'NodePort' | 'LoadBalancer' | 'ExternalName';

/** core/v1 `IPFamily` (`spec.ipFamilies[]`). */
export type IpFamily = 'IPv4' | 'IPv6';

/** core/v1 `IPFamilyPolicy` (`spec.ipFamilyPolicy`). */
export type IpFamilyPolicy = 'SingleStack' | 'PreferDualStack' | 'RequireDualStack';

/** core/v1 `ServiceAffinity` (`spec.sessionAffinity`). The API default is `None`. */
export type SessionAffinity = 'None' | 'ClientIP';

/**
 * core/v1 `ServiceExternalTrafficPolicy` / `ServiceInternalTrafficPolicy`
 * (`spec.externalTrafficPolicy`, `spec.internalTrafficPolicy`).
 */
export type TrafficPolicy = 'Cluster' | 'Local';

/** discovery/v1 `AddressType` (`addressType` of an EndpointSlice). */
export type AddressType = 'IPv4' | 'IPv6' | 'FQDN';

/** core/v1 `PodPhase` (`status.phase`). */
export type PodPhase = 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Unknown';

/** core/v1 `NodeAddressType` (`status.addresses[].type`). */
export type NodeAddressType = 'InternalIP' | 'ExternalIP' | 'Hostname' | 'InternalDNS' | 'ExternalDNS';

/**
 * A condition the API may leave unset: `true`, `false`, or `null` when the field is
 * absent (discovery/v1 `EndpointConditions` are `*bool`; nil means "unknown", which
 * kube-proxy and CoreDNS read as ready). Kept distinct so a pane can say "unset".
 */
export type TriState = boolean | null;

/** The label that ties an EndpointSlice to its Service (discovery/v1 `LabelServiceName`). */
export const LABEL_SERVICE_NAME = 'kubernetes.io/service-name';
/** The label naming the controller that manages an EndpointSlice (discovery/v1 `LabelManagedBy`). */
export const LABEL_MANAGED_BY = 'endpointslice.kubernetes.io/managed-by';
/** The well-known zone label on Nodes (core/v1 `LabelTopologyZone`). */
export const LABEL_TOPOLOGY_ZONE = 'topology.kubernetes.io/zone';
/**
 * The label that hands a Service to another proxy (KEP-2447): kube-proxy lists Services and
 * EndpointSlices with `!service.kubernetes.io/service-proxy-name` and never programs such a
 * Service (cmd/kube-proxy/app/server.go, the informers' label selector).
 */
export const LABEL_SERVICE_PROXY_NAME = 'service.kubernetes.io/service-proxy-name';
/** The label the EndpointSlice controller puts on slices of headless Services; kube-proxy does not list them either. */
export const LABEL_HEADLESS = 'service.kubernetes.io/headless';

/**
 * Where an object was read: `origin` as given to the parser, `line` the 1-based line
 * where its text starts (for an item of a JSON list: where the list starts), 0 when
 * unknown (objects from a live watch).
 */
export interface SourceRef {
  readonly origin: string;
  readonly line: number;
}

/**
 * meta/v1 `ObjectMeta`, the fields nodescope uses. `namespace` is `''` for
 * cluster-scoped objects (Node). `labels`/`annotations` are `{}` (a shared frozen one)
 * when absent or `null` (an empty `annotations:` key in YAML). Timestamps are RFC 3339
 * strings as sent.
 */
export interface ObjectMeta {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string | undefined;
  readonly resourceVersion: string | undefined;
  readonly creationTimestamp: string | undefined;
  readonly deletionTimestamp: string | undefined;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
}

/** Fields every modelled object carries. */
interface ObjectBase {
  readonly apiVersion: string | undefined;
  readonly meta: ObjectMeta;
  /**
   * The object exactly as the API returned it (YAML input: its JSON equivalent), as
   * `JSON.parse` gives it: `JSON.stringify(raw)` is the API's JSON. Read only (see the
   * module doc: parts of it are shared).
   */
  readonly raw: JsonObject;
  readonly source: SourceRef;
}

/**
 * core/v1 `ServicePort` (`spec.ports[]`).
 * - `name`: `''` when unnamed (allowed for a single-port Service).
 * - `port`: the Service port (1–65535).
 * - `targetPort`: `IntOrString`: a number, or the name of a container port; defaults to `port`.
 * - `nodePort`: allocated for NodePort/LoadBalancer Services, else `undefined`.
 */
export interface ServicePort {
  readonly name: string;
  readonly protocol: Protocol;
  readonly port: number;
  readonly targetPort: number | string;
  readonly nodePort: number | undefined;
  readonly appProtocol: string | undefined;
}

/** core/v1 `LoadBalancerIngress` (`status.loadBalancer.ingress[]`): an IP and/or a hostname. */
export interface LoadBalancerIngress {
  readonly ip: string | undefined;
  readonly hostname: string | undefined;
  /** `VIP` or `Proxy` (`ipMode`, Kubernetes ≥ 1.29), when set. */
  readonly ipMode: string | undefined;
}

/**
 * core/v1 `Service`.
 * - `clusterIP`: `spec.clusterIP` verbatim (`'None'` for headless; `undefined` when absent,
 *   as in ExternalName Services).
 * - `clusterIPs`: the allocated IPs only (`spec.clusterIPs`, else `[spec.clusterIP]`),
 *   never `None`; IPv4 and/or IPv6 in the order of `ipFamilies`.
 * - `headless`: `spec.clusterIP` is `None` (compared case-insensitively, see quirk 29).
 * - `selector`: `spec.selector`; `undefined` when absent (endpoints managed by hand),
 *   which differs from `{}`.
 * - `sessionAffinityTimeoutSeconds`: `spec.sessionAffinityConfig.clientIP.timeoutSeconds`
 *   in seconds.
 * - `trafficDistribution`: `spec.trafficDistribution` (`PreferClose`, `PreferSameZone`,
 *   `PreferSameNode`), kept as the string the API sent.
 */
export interface Service extends ObjectBase {
  readonly kind: 'Service';
  readonly type: ServiceType;
  readonly clusterIP: string | undefined;
  readonly clusterIPs: readonly string[];
  readonly headless: boolean;
  readonly ipFamilies: readonly IpFamily[];
  readonly ipFamilyPolicy: IpFamilyPolicy | undefined;
  readonly ports: readonly ServicePort[];
  readonly selector: Readonly<Record<string, string>> | undefined;
  readonly externalName: string | undefined;
  readonly externalIPs: readonly string[];
  readonly loadBalancerIngress: readonly LoadBalancerIngress[];
  readonly sessionAffinity: SessionAffinity;
  readonly sessionAffinityTimeoutSeconds: number | undefined;
  readonly externalTrafficPolicy: TrafficPolicy | undefined;
  readonly internalTrafficPolicy: TrafficPolicy | undefined;
  readonly trafficDistribution: string | undefined;
  /** `spec.publishNotReadyAddresses`; `false` when absent. */
  readonly publishNotReadyAddresses: boolean;
  /** `spec.healthCheckNodePort` (a port, allocated for LoadBalancer + externalTrafficPolicy Local), when set. */
  readonly healthCheckNodePort: number | undefined;
  /** `spec.loadBalancerSourceRanges` as sent (CIDRs; the API tolerates blanks around them); `[]` when absent. */
  readonly loadBalancerSourceRanges: readonly string[];
  /** The value of label {@link LABEL_SERVICE_PROXY_NAME} (another proxy owns the Service), when set. */
  readonly serviceProxyName: string | undefined;
}

/**
 * discovery/v1 `EndpointPort` (`ports[]` of an EndpointSlice).
 * - `name`: the Service port name it serves; `null` (absent) and `''` are both allowed
 *   and both mean "the unnamed port".
 * - `port`: the port on the endpoint (the resolved targetPort); `null` means unconstrained.
 */
export interface EndpointPort {
  readonly name: string | null;
  readonly protocol: Protocol;
  readonly port: number | null;
  readonly appProtocol: string | undefined;
}

/** core/v1 `ObjectReference` as used by `endpoints[].targetRef`. */
export interface TargetRef {
  readonly kind: string | undefined;
  readonly namespace: string | undefined;
  readonly name: string;
  readonly uid: string | undefined;
}

/**
 * discovery/v1 `Endpoint` (`endpoints[]`).
 * - `addresses`: IPs (or FQDNs for `addressType: FQDN`); the API allows exactly one today.
 * - `ready` / `serving` / `terminating`: `conditions.*`, tri-state (see {@link TriState}).
 * - `hintsForZones` / `hintsForNodes`: `hints.forZones[].name` / `hints.forNodes[].name`;
 *   `[]` when absent.
 */
export interface Endpoint {
  readonly addresses: readonly string[];
  readonly ready: TriState;
  readonly serving: TriState;
  readonly terminating: TriState;
  readonly hostname: string | undefined;
  readonly nodeName: string | undefined;
  readonly zone: string | undefined;
  readonly hintsForZones: readonly string[];
  readonly hintsForNodes: readonly string[];
  readonly targetRef: TargetRef | undefined;
}

/**
 * discovery/v1 `EndpointSlice`.
 * - `serviceName`: label `kubernetes.io/service-name`, `undefined` when missing.
 * - `managedBy`: label `endpointslice.kubernetes.io/managed-by`.
 * - `ports` / `endpoints`: `[]` when absent or `null` (seen in watch events after an
 *   apiserver restart, quirk 29).
 */
export interface EndpointSlice extends ObjectBase {
  readonly kind: 'EndpointSlice';
  readonly addressType: AddressType;
  readonly serviceName: string | undefined;
  readonly managedBy: string | undefined;
  readonly ports: readonly EndpointPort[];
  readonly endpoints: readonly Endpoint[];
}

/** core/v1 `ContainerPort` (`spec.containers[].ports[]`): what a named targetPort resolves to. */
export interface ContainerPort {
  readonly name: string | undefined;
  readonly containerPort: number;
  readonly protocol: Protocol;
}

/**
 * core/v1 `Pod`, the fields that join a Service to its backends.
 * - `podIPs`: `status.podIPs[].ip`, else `[status.podIP]`, else `[]`.
 * - `hostIPs`: `status.hostIPs[].ip`, else `[status.hostIP]`, else `[]`.
 * - `ready`: the `Ready` entry of `status.conditions` (`"True"`/`"False"`), `null` when absent.
 */
export interface Pod extends ObjectBase {
  readonly kind: 'Pod';
  readonly podIPs: readonly string[];
  readonly hostIPs: readonly string[];
  readonly nodeName: string | undefined;
  readonly phase: PodPhase | undefined;
  readonly hostNetwork: boolean;
  readonly ready: TriState;
  readonly containerPorts: readonly ContainerPort[];
}

/** core/v1 `NodeAddress` (`status.addresses[]`). */
export interface NodeAddress {
  readonly type: NodeAddressType;
  readonly address: string;
}

/**
 * core/v1 `Node`.
 * - `podCIDRs`: `spec.podCIDRs`, else `[spec.podCIDR]`, else `[]`.
 * - `zone`: label `topology.kubernetes.io/zone`.
 * - `ready`: the `Ready` entry of `status.conditions`, `null` when absent.
 */
export interface Node extends ObjectBase {
  readonly kind: 'Node';
  readonly addresses: readonly NodeAddress[];
  readonly podCIDRs: readonly string[];
  readonly zone: string | undefined;
  readonly ready: TriState;
}

/**
 * networking.k8s.io/v1 `ServiceCIDR` (KEP-1880, GA in 1.33): a range ClusterIPs are allocated from.
 * - `cidrs`: `spec.cidrs` (one per family at most), `[]` when absent.
 * - `ready`: the `Ready` entry of `status.conditions`, `null` when absent.
 */
export interface ServiceCIDR extends ObjectBase {
  readonly kind: 'ServiceCIDR';
  readonly cidrs: readonly string[];
  readonly ready: TriState;
}

/** networking.k8s.io/v1 `ParentReference` of an IPAddress: the object the address is allocated to. */
export interface IpAddressParent {
  readonly group: string;
  readonly resource: string;
  readonly namespace: string;
  readonly name: string;
}

/**
 * networking.k8s.io/v1 `IPAddress` (KEP-1880): one allocated ClusterIP. `address` is the
 * object's name (the IP in canonical form); `parentRef` is `spec.parentRef` (normally
 * `services` in the Service's namespace), `undefined` when absent.
 */
export interface IPAddress extends ObjectBase {
  readonly kind: 'IPAddress';
  readonly address: string;
  readonly parentRef: IpAddressParent | undefined;
}

/**
 * An object of a kind nodescope does not model (Namespace, Endpoints, Status, …), kept
 * whole. `apiKind` is its `kind` field (`''` when absent and not inferable).
 */
export interface UnknownObject extends ObjectBase {
  readonly kind: 'unknown';
  readonly apiKind: string;
}

/** Any object the parser returns. */
export type K8sObject = Service | EndpointSlice | Pod | Node | ServiceCIDR | IPAddress | UnknownObject;

/** The API objects of one capture or one live cluster view, in input order. */
export interface ApiObjects {
  readonly services: readonly Service[];
  readonly endpointSlices: readonly EndpointSlice[];
  readonly pods: readonly Pod[];
  readonly nodes: readonly Node[];
  readonly serviceCIDRs: readonly ServiceCIDR[];
  readonly ipAddresses: readonly IPAddress[];
  readonly others: readonly UnknownObject[];
  /**
   * Optional kinds the reader asked for and could not read, with why
   * (`servicecidrs: forbidden (RBAC)`, `ipaddresses: not served by this cluster`): the
   * objects list carries them as {@link UNREAD_KINDS_KEY}. Absent when every kind was read.
   * Not terminal-safe (made safe where printed).
   */
  readonly unread?: readonly string[];
}

/** The List's top-level key (not a Kubernetes field) where nodescope records the optional kinds it could not read. */
export const UNREAD_KINDS_KEY = 'x-nodescope-unread';

/** meta/v1 `WatchEvent.type`. */
export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

/** One watch event with its object already modelled (ERROR carries a `Status` as `unknown`). */
export interface WatchEvent {
  readonly type: WatchEventType;
  readonly object: K8sObject;
}

/** An ApiObjects with nothing in it. */
export const EMPTY_API_OBJECTS: ApiObjects = Object.freeze({
  services: [],
  endpointSlices: [],
  pods: [],
  nodes: [],
  serviceCIDRs: [],
  ipAddresses: [],
  others: [],
});

/**
 * The identity the API uses for watch updates: kind, namespace and name
 * (`"Service/default/kubernetes"`; `''` namespace for cluster-scoped kinds).
 */
export function objectKey(o: K8sObject): string {
  const kind = o.kind === 'unknown' ? o.apiKind : o.kind;
  return `${kind}/${o.meta.namespace}/${o.meta.name}`;
}

/** True when the endpoint counts as ready: `true` or unset (`null`), as kube-proxy and CoreDNS read it. */
export function isReady(e: Pick<Endpoint, 'ready'>): boolean {
  return e.ready !== false;
}
