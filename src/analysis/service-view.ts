/**
 * The Services pane's data: Services joined to their EndpointSlices (label
 * `kubernetes.io/service-name`), each endpoint to its Pod (`targetRef`) and Node
 * (`nodeName`), plus the facts a diagnosis starts from and the frontends/backends the
 * conntrack stale-entry check needs.
 *
 * Port resolution follows the EndpointSlice contract (k8s.io/api discovery/v1
 * `EndpointPort`: "name … must match the name of the Service port"): the endpoint port
 * for Service port `http/TCP` is the slice port named `http` with protocol TCP; an
 * unnamed Service port matches a slice port whose name is `""` or absent.
 *
 * Pure functions; every list is sorted (Services by namespace then name, endpoints by
 * address numerically — IPv4 before IPv6 — then slice name).
 */
import type {
  AddressType,
  ApiObjects,
  Endpoint,
  EndpointPort,
  EndpointSlice,
  Node,
  Pod,
  PodPhase,
  Protocol,
  Service,
  ServicePort,
  ServiceType,
  SessionAffinity,
  TargetRef,
  TrafficPolicy,
  TriState,
} from '../model/k8s.js';
import { isReady } from '../model/k8s.js';
import { expandIpv6 } from '../model/conntrack.js';

/** Options of {@link buildServiceView}: `nodeName` is the node being viewed. */
export interface ServiceViewOptions {
  readonly nodeName?: string;
}

/**
 * One Service port with what the slices resolve it to.
 * - `targetPort`: as declared (number or container port name).
 * - `endpointPorts`: the distinct ports (ascending) that slice ports of the same name and
 *   protocol give; several when a named targetPort resolves differently per Pod; `[]`
 *   when no slice has the port.
 */
export interface PortRow {
  readonly name: string;
  readonly protocol: Protocol;
  readonly port: number;
  readonly targetPort: number | string;
  readonly nodePort: number | undefined;
  readonly appProtocol: string | undefined;
  readonly endpointPorts: readonly number[];
}

/**
 * One port of an endpoint: the slice port, and the Service port it serves
 * (`servicePort` undefined when no Service port has that name and protocol).
 * `port` null means the slice leaves it unconstrained.
 */
export interface EndpointPortRow {
  readonly name: string;
  readonly protocol: Protocol;
  readonly port: number | null;
  readonly servicePort: number | undefined;
}

/** The Pod an endpoint's targetRef names, when that Pod is known. */
export interface EndpointPod {
  readonly namespace: string;
  readonly name: string;
  readonly phase: PodPhase | undefined;
  readonly hostNetwork: boolean;
  readonly ready: TriState;
}

/** The Node an endpoint runs on, when that Node is known. */
export interface EndpointNode {
  readonly name: string;
  readonly zone: string | undefined;
  readonly internalIPs: readonly string[];
}

/**
 * One endpoint address of one slice.
 * - `ready` / `serving` / `terminating`: the slice's conditions, tri-state (null = unset).
 * - `nodeName`: the endpoint's `nodeName`, else its Pod's `spec.nodeName`.
 * - `onNode`: whether it runs on the viewed node; `null` when no node was given or the
 *   endpoint's node is unknown.
 */
export interface EndpointRow extends Omit<Endpoint, 'addresses'> {
  readonly address: string;
  readonly addressType: AddressType;
  readonly sliceName: string;
  readonly ports: readonly EndpointPortRow[];
  readonly onNode: boolean | null;
  readonly pod: EndpointPod | undefined;
  readonly node: EndpointNode | undefined;
}

/** A Pod the Service's selector matches; `containerPortNames` are its named container ports (sorted). */
export interface SelectedPod {
  readonly name: string;
  readonly phase: PodPhase | undefined;
  readonly nodeName: string | undefined;
  readonly podIPs: readonly string[];
  readonly containerPortNames: readonly string[];
}

/** One EndpointSlice of a Service, summarised. */
export interface SliceRow {
  readonly name: string;
  readonly addressType: AddressType;
  readonly managedBy: string | undefined;
  readonly ports: readonly EndpointPort[];
  readonly endpointCount: number;
}

/**
 * One row of the Services pane.
 * - `loadBalancerIPs`: the `ip` of each `status.loadBalancer.ingress` entry.
 * - `selector`: `undefined` when the Service has none (or `{}`, which the API treats the same).
 * - `selectedPods`: the Pods of the namespace whose labels match the selector, by name;
 *   `null` when there is no selector or no Pod is known at all.
 * - `service`: the model object (for its `raw` JSON).
 */
export interface ServiceRow {
  readonly namespace: string;
  readonly name: string;
  readonly type: ServiceType;
  readonly headless: boolean;
  readonly clusterIPs: readonly string[];
  readonly externalName: string | undefined;
  readonly externalIPs: readonly string[];
  readonly loadBalancerIPs: readonly string[];
  readonly sessionAffinity: SessionAffinity;
  readonly sessionAffinityTimeoutSeconds: number | undefined;
  readonly externalTrafficPolicy: TrafficPolicy | undefined;
  readonly internalTrafficPolicy: TrafficPolicy | undefined;
  readonly trafficDistribution: string | undefined;
  readonly selector: Readonly<Record<string, string>> | undefined;
  readonly ports: readonly PortRow[];
  readonly slices: readonly SliceRow[];
  readonly endpoints: readonly EndpointRow[];
  readonly selectedPods: readonly SelectedPod[] | null;
  readonly service: Service;
}

/**
 * The Services pane: rows sorted by namespace and name; `orphanSlices` are slices whose
 * Service (namespace + service-name label) is not among the objects (or that have no
 * label), sorted by namespace and name.
 */
export interface ServiceView {
  readonly nodeName: string | undefined;
  readonly podsKnown: boolean;
  readonly rows: readonly ServiceRow[];
  readonly orphanSlices: readonly { readonly namespace: string; readonly name: string; readonly serviceName: string | undefined }[];
}

/** The name a slice port or Service port is matched by: absent and `""` are the same. */
function portName(p: { readonly name: string | null }): string {
  return p.name ?? '';
}

/**
 * A sort key that orders addresses numerically: IPv4 first (octets zero-padded), then
 * IPv6 (fully expanded), then anything else (FQDN endpoints) as text.
 */
export function addressSortKey(address: string): string {
  const v4 = ipv4Key(address);
  if (v4 !== undefined) return v4;
  const v6 = address.includes(':') ? expandIpv6(address) : undefined;
  return v6 ? `6 ${v6}` : `9 ${address}`;
}

/**
 * `4 010.096.000.001` for a dotted quad of 1–3 digit parts, else undefined. Hand-rolled:
 * called once per endpoint (250,000 at 25,000 Services), where a regex and arrays showed.
 */
function ipv4Key(address: string): string | undefined {
  let out = '4 ';
  let start = 0;
  for (let part = 0; part < 4; part++) {
    let end = start;
    while (end < address.length && end - start < 4) {
      const c = address.charCodeAt(end);
      if (c < 48 || c > 57) break;
      end++;
    }
    const len = end - start;
    if (len < 1 || len > 3) return undefined;
    if (part < 3 ? address.charCodeAt(end) !== 46 : end !== address.length) return undefined;
    out += (len === 1 ? '00' : len === 2 ? '0' : '') + address.slice(start, end) + (part < 3 ? '.' : '');
    start = end + 1;
  }
  return out;
}

function byText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Labels ⊇ selector. */
function matches(selector: Readonly<Record<string, string>>, labels: Readonly<Record<string, string>>): boolean {
  return Object.entries(selector).every(([k, v]) => labels[k] === v);
}

function labelKey(namespace: string, key: string, value: string): string {
  return `${namespace}\u0000${key}\u0000${value}`;
}

/** The Pods of `namespace` carrying the selector's first label (a superset of the matches). */
function candidates(podsByLabel: ReadonlyMap<string, readonly Pod[]>, namespace: string, selector: Readonly<Record<string, string>>): readonly Pod[] {
  const [k, v] = Object.entries(selector)[0]!;
  return podsByLabel.get(labelKey(namespace, k, v)) ?? [];
}

function selectorOf(svc: Service): Readonly<Record<string, string>> | undefined {
  return svc.selector && Object.keys(svc.selector).length > 0 ? svc.selector : undefined;
}

function podOf(ref: TargetRef | undefined, sliceNs: string, pods: ReadonlyMap<string, Pod>): Pod | undefined {
  if (!ref || (ref.kind !== undefined && ref.kind !== 'Pod')) return undefined;
  const pod = pods.get(`${ref.namespace ?? sliceNs}/${ref.name}`);
  // A uid that differs names an earlier Pod of the same name: not this one.
  if (pod && ref.uid && pod.meta.uid && ref.uid !== pod.meta.uid) return undefined;
  return pod;
}

const nodeSummaries = new WeakMap<Node, NonNullable<EndpointRow['node']>>();

/** An endpoint's node as its row shows it; one object per Node, shared by its endpoints. */
function nodeSummary(node: Node): NonNullable<EndpointRow['node']> {
  let summary = nodeSummaries.get(node);
  if (!summary) {
    summary = { name: node.meta.name, zone: node.zone, internalIPs: node.addresses.filter((a) => a.type === 'InternalIP').map((a) => a.address) };
    nodeSummaries.set(node, summary);
  }
  return summary;
}

function endpointRows(
  slice: EndpointSlice,
  svc: Service,
  pods: ReadonlyMap<string, Pod>,
  nodes: ReadonlyMap<string, Node>,
  viewed: string | undefined,
): EndpointRow[] {
  const ports: EndpointPortRow[] = slice.ports.map((p) => ({
    name: portName(p),
    protocol: p.protocol,
    port: p.port,
    servicePort: svc.ports.find((sp) => sp.name === portName(p) && sp.protocol === p.protocol)?.port,
  }));
  return slice.endpoints.flatMap((e) => {
    const pod = podOf(e.targetRef, slice.meta.namespace, pods);
    const nodeName = e.nodeName ?? pod?.nodeName;
    const node = nodeName === undefined ? undefined : nodes.get(nodeName);
    return e.addresses.map((address) => ({
      address,
      addressType: slice.addressType,
      sliceName: slice.meta.name,
      ports,
      ready: e.ready,
      serving: e.serving,
      terminating: e.terminating,
      hostname: e.hostname,
      nodeName,
      zone: e.zone,
      hintsForZones: e.hintsForZones,
      hintsForNodes: e.hintsForNodes,
      onNode: viewed === undefined || nodeName === undefined ? null : nodeName === viewed,
      targetRef: e.targetRef,
      pod: pod && { namespace: pod.meta.namespace, name: pod.meta.name, phase: pod.phase, hostNetwork: pod.hostNetwork, ready: pod.ready },
      node: node && nodeSummary(node),
    }));
  });
}

function portRow(p: ServicePort, slices: readonly EndpointSlice[]): PortRow {
  const resolved = new Set<number>();
  for (const s of slices) {
    for (const sp of s.ports) {
      if (portName(sp) === p.name && sp.protocol === p.protocol && sp.port !== null) resolved.add(sp.port);
    }
  }
  return {
    name: p.name,
    protocol: p.protocol,
    port: p.port,
    targetPort: p.targetPort,
    nodePort: p.nodePort,
    appProtocol: p.appProtocol,
    endpointPorts: [...resolved].sort((a, b) => a - b),
  };
}

/**
 * Joins Services ↔ EndpointSlices ↔ Pods ↔ Nodes into the Services pane's rows.
 * `options.nodeName` is the node being viewed (for {@link EndpointRow.onNode}).
 */
export function buildServiceView(objects: ApiObjects, options: ServiceViewOptions = {}): ServiceView {
  // A pure function of immutable objects, asked for by several panes: computed once per node.
  let byNode = viewCache.get(objects);
  if (!byNode) viewCache.set(objects, (byNode = new Map()));
  const cached = byNode.get(options.nodeName);
  if (cached) return cached;
  const view = computeServiceView(objects, options);
  byNode.set(options.nodeName, view);
  return view;
}

const viewCache = new WeakMap<ApiObjects, Map<string | undefined, ServiceView>>();

function computeServiceView(objects: ApiObjects, options: ServiceViewOptions): ServiceView {
  const pods = new Map(objects.pods.map((p) => [`${p.meta.namespace}/${p.meta.name}`, p]));
  // Pods by namespace and label (`ns`, `key=value`), in input order: a selector is matched
  // only against the Pods of its namespace that carry its first label.
  const podsByLabel = new Map<string, Pod[]>();
  for (const p of objects.pods) {
    for (const [k, v] of Object.entries(p.meta.labels)) {
      const key = labelKey(p.meta.namespace, k, v);
      const list = podsByLabel.get(key);
      if (list) list.push(p);
      else podsByLabel.set(key, [p]);
    }
  }
  const nodes = new Map(objects.nodes.map((n) => [n.meta.name, n]));
  const slicesOf = new Map<string, EndpointSlice[]>();
  for (const s of objects.endpointSlices) {
    const k = `${s.meta.namespace}/${s.serviceName ?? ''}`;
    const list = slicesOf.get(k);
    if (list) list.push(s);
    else slicesOf.set(k, [s]);
  }
  const podsKnown = objects.pods.length > 0;
  const services = [...objects.services].sort(
    (a, b) => byText(a.meta.namespace, b.meta.namespace) || byText(a.meta.name, b.meta.name),
  );
  const rows = services.map((svc): ServiceRow => {
    const slices = [...(slicesOf.get(`${svc.meta.namespace}/${svc.meta.name}`) ?? [])].sort((a, b) => byText(a.meta.name, b.meta.name));
    // Sort keys computed once per endpoint, not once per comparison.
    const endpoints = slices
      .flatMap((s) => endpointRows(s, svc, pods, nodes, options.nodeName))
      .map((row) => ({ row, key: addressSortKey(row.address) }))
      .sort((a, b) => byText(a.key, b.key) || byText(a.row.sliceName, b.row.sliceName))
      .map((x) => x.row);
    const selector = selectorOf(svc);
    const selectedPods =
      selector && podsKnown
        ? candidates(podsByLabel, svc.meta.namespace, selector)
            .filter((p) => matches(selector, p.meta.labels))
            .map((p) => ({
              name: p.meta.name,
              phase: p.phase,
              nodeName: p.nodeName,
              podIPs: p.podIPs,
              containerPortNames: p.containerPorts.flatMap((c) => c.name ?? []).sort(byText),
            }))
            .sort((a, b) => byText(a.name, b.name))
        : null;
    return {
      namespace: svc.meta.namespace,
      name: svc.meta.name,
      type: svc.type,
      headless: svc.headless,
      clusterIPs: svc.clusterIPs,
      externalName: svc.externalName,
      externalIPs: svc.externalIPs,
      loadBalancerIPs: svc.loadBalancerIngress.flatMap((i) => i.ip ?? []),
      sessionAffinity: svc.sessionAffinity,
      sessionAffinityTimeoutSeconds: svc.sessionAffinityTimeoutSeconds,
      externalTrafficPolicy: svc.externalTrafficPolicy,
      internalTrafficPolicy: svc.internalTrafficPolicy,
      trafficDistribution: svc.trafficDistribution,
      selector,
      ports: svc.ports.map((p) => portRow(p, slices)),
      slices: slices.map((s) => ({
        name: s.meta.name,
        addressType: s.addressType,
        managedBy: s.managedBy,
        ports: s.ports,
        endpointCount: s.endpoints.length,
      })),
      endpoints,
      selectedPods,
      service: svc,
    };
  });
  const known = new Set(services.map((s) => `${s.meta.namespace}/${s.meta.name}`));
  const orphanSlices = objects.endpointSlices
    .filter((s) => s.serviceName === undefined || !known.has(`${s.meta.namespace}/${s.serviceName}`))
    .map((s) => ({ namespace: s.meta.namespace, name: s.meta.name, serviceName: s.serviceName }))
    .sort((a, b) => byText(a.namespace, b.namespace) || byText(a.name, b.name));
  return { nodeName: options.nodeName, podsKnown, rows, orphanSlices };
}

// ---- facts ----------------------------------------------------------------------------------

/**
 * What looks wrong with one Service, as data for the diagnosis pane:
 * - `no-endpointslice`: no slice names the Service (`detail.hasSelector` says whether the
 *   controller should have made one, or they are managed by hand);
 * - `no-ready-endpoints`: slices exist but no endpoint is ready (ready true or unset);
 *   `detail` counts endpoints, serving and terminating ones;
 * - `selector-matches-no-pod`: Pods are known but none in the namespace has the selector's labels;
 * - `port-name-mismatch`: a Service port has no slice port of the same name and
 *   protocol, or a slice port matches no Service port; `detail.port` names it. When the
 *   targetPort is a name and Pods are known, `detail.podsWithTargetPortName` counts the
 *   selected Pods declaring a container port of that name.
 */
export interface ServiceFact {
  readonly namespace: string;
  readonly name: string;
  readonly code: 'no-endpointslice' | 'no-ready-endpoints' | 'selector-matches-no-pod' | 'port-name-mismatch';
  readonly severity: 'warning' | 'error';
  readonly message: string;
  readonly detail: Readonly<Record<string, string | number | boolean | readonly string[]>>;
}

function factsFor(row: ServiceRow): ServiceFact[] {
  const facts: ServiceFact[] = [];
  const fact = (code: ServiceFact['code'], severity: ServiceFact['severity'], message: string, detail: ServiceFact['detail']) =>
    facts.push({ namespace: row.namespace, name: row.name, code, severity, message, detail });
  if (row.type === 'ExternalName') return facts; // resolved by DNS only: no endpoints by design
  if (row.slices.length === 0) {
    const hasSelector = row.selector !== undefined;
    fact('no-endpointslice', 'error',
      hasSelector ? 'no EndpointSlice names this Service' : 'no EndpointSlice names this Service, and it has no selector to make one',
      { hasSelector });
  } else if (!row.endpoints.some(isReady)) {
    fact('no-ready-endpoints', 'error', 'EndpointSlices exist but no endpoint is ready', {
      endpoints: row.endpoints.length,
      serving: row.endpoints.filter((e) => e.serving === true).length,
      terminating: row.endpoints.filter((e) => e.terminating === true).length,
    });
  }
  if (row.selectedPods !== null && row.selectedPods.length === 0) {
    const selector = Object.entries(row.selector ?? {}).map(([k, v]) => `${k}=${v}`).join(',');
    fact('selector-matches-no-pod', 'error', `no Pod in ${row.namespace} matches selector ${selector}`, { selector });
  }
  if (row.slices.length > 0) {
    const sliceKeys = new Set(row.slices.flatMap((s) => s.ports.map((p) => `${portName(p)}/${p.protocol}`)));
    const serviceKeys = new Set(row.ports.map((p) => `${p.name}/${p.protocol}`));
    const sliceNames = [...sliceKeys].sort(byText);
    for (const p of row.ports) {
      if (sliceKeys.has(`${p.name}/${p.protocol}`)) continue;
      const detail: Record<string, string | number | boolean | readonly string[]> = {
        port: `${p.name}/${p.protocol}`,
        targetPort: String(p.targetPort),
        slicePorts: sliceNames,
      };
      if (typeof p.targetPort === 'string' && row.selectedPods !== null) {
        const name = p.targetPort;
        detail['podsWithTargetPortName'] = row.selectedPods.filter((pod) => pod.containerPortNames.includes(name)).length;
      }
      fact('port-name-mismatch', 'warning', `Service port "${p.name}"/${p.protocol} has no matching EndpointSlice port`, detail);
    }
    for (const k of sliceNames) {
      if (serviceKeys.has(k)) continue;
      fact('port-name-mismatch', 'warning', `EndpointSlice port "${k.split('/')[0]}" matches no Service port`, { port: k, slicePorts: sliceNames });
    }
  }
  return facts;
}

/** The facts (see {@link ServiceFact}) for every Service of the view, in row order. */
export function diagnoseService(view: ServiceView): ServiceFact[] {
  return view.rows.flatMap(factsFor);
}

// ---- dataplane targets ------------------------------------------------------------------------

/** A frontend: ClusterIP, external IP or load-balancer IP, with a Service port. */
export interface DataplaneVip {
  readonly ip: string;
  readonly port: number;
  readonly protocol: Protocol;
}

/** A backend: endpoint address and resolved port; `ready` as kube-proxy reads it (unset = ready). */
export interface DataplaneEndpoint {
  readonly ip: string;
  readonly port: number;
  readonly protocol: Protocol;
  readonly ready: boolean;
}

/**
 * What the dataplane should rewrite for one Service: frontends (`vips`, `nodePorts`) and
 * the current backends. Structurally a `ServiceFrontends` of src/analysis/conntrack-nat.ts.
 */
export interface DataplaneTarget {
  readonly namespace: string;
  readonly name: string;
  readonly vips: readonly DataplaneVip[];
  readonly nodePorts: readonly { readonly port: number; readonly protocol: Protocol }[];
  readonly endpoints: readonly DataplaneEndpoint[];
}

function uniqueSorted<T>(items: readonly T[], key: (t: T) => string): T[] {
  const seen = new Map<string, T>();
  for (const t of items) if (!seen.has(key(t))) seen.set(key(t), t);
  return [...seen.entries()].sort(([a], [b]) => byText(a, b)).map(([, t]) => t);
}

/**
 * Frontends and backends per Service for conntrack stale-entry detection. ExternalName
 * and headless Services have no VIP; `vips` are clusterIPs, externalIPs and load-balancer
 * IPs × Service ports; `endpoints` are IPv4/IPv6 endpoint addresses × the slice ports that
 * serve a Service port (slice ports without a number are skipped). Lists are de-duplicated
 * and sorted (addresses numerically, then port, then protocol).
 */
export function dataplaneTargets(view: ServiceView): DataplaneTarget[] {
  return view.rows.map((row) => {
    const frontIPs = row.type === 'ExternalName' || row.headless ? [] : [...row.clusterIPs, ...row.externalIPs, ...row.loadBalancerIPs];
    const vips = uniqueSorted(
      frontIPs.flatMap((ip) => row.ports.map((p) => ({ ip, port: p.port, protocol: p.protocol }))),
      (v) => `${addressSortKey(v.ip)} ${String(v.port).padStart(5, '0')} ${v.protocol}`,
    );
    const nodePorts = uniqueSorted(
      row.type === 'ExternalName' ? [] : row.ports.flatMap((p) => (p.nodePort === undefined ? [] : [{ port: p.nodePort, protocol: p.protocol }])),
      (n) => `${String(n.port).padStart(5, '0')} ${n.protocol}`,
    );
    // One address may sit in two slices (during a controller handover): ready if either says so.
    const endpoints = new Map<string, DataplaneEndpoint>();
    for (const e of row.endpoints) {
      if (e.addressType === 'FQDN') continue;
      for (const p of e.ports) {
        if (p.servicePort === undefined || p.port === null) continue;
        const k = `${addressSortKey(e.address)} ${String(p.port).padStart(5, '0')} ${p.protocol}`;
        const ready = isReady(e) || (endpoints.get(k)?.ready ?? false);
        endpoints.set(k, { ip: e.address, port: p.port, protocol: p.protocol, ready });
      }
    }
    const sorted = [...endpoints.entries()].sort(([a], [b]) => byText(a, b)).map(([, e]) => e);
    return { namespace: row.namespace, name: row.name, vips, nodePorts, endpoints: sorted };
  });
}
