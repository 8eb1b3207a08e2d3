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
 * address numerically — IPv4 before IPv6 — then slice name). The rows are compact
 * (src/analysis/service-row.ts): references into the API objects plus the endpoint order,
 * their lists derived when read, so a view of 25,000 Services holds a few MB, not ~55.
 */
import type {
  ApiObjects,
  Endpoint,
  EndpointPort,
  EndpointSlice,
  Pod,
  Service,
  Protocol,
} from '../model/k8s.js';
import { isReady } from '../model/k8s.js';
import {
  addressSortKey,
  byText,
  CompactServiceRow,
  type RowParts,
  type RowPartsMaker,
  rowSource,
  endpointOrder,
  naturalAddresses,
  podOf,
  portName,
  selectorOf,
  servicesInRowOrder,
  slicesByService,
  sortedAddresses,
  type RowContext,
} from './service-row.js';
import { formatServiceRef } from '../model/service-ref.js';

export { addressSortKey, endpointAddresses } from './service-row.js';

/** Options of {@link buildServiceView}: `nodeName` is the node being viewed. */
export interface ServiceViewOptions {
  readonly nodeName?: string;
}

// The row types live in service-types.ts, where the compact rows (service-row.ts) read them too.
export type { EndpointNode, EndpointPod, EndpointPortRow, EndpointRow, PortRow, SelectedPod, ServiceRow, SliceRow } from './service-types.js';
import type { EndpointRow, PortRow, ServiceRow } from './service-types.js';

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
  // A few nodes' views at most: a fleet views one object set from hundreds of nodes in turn.
  if (byNode.size >= VIEWS_PER_OBJECTS) byNode.delete(byNode.keys().next().value);
  byNode.set(options.nodeName, view);
  return view;
}

/** Views kept per object set (the panes ask for one or two nodes; the rest is a fleet's stream). */
const VIEWS_PER_OBJECTS = 4;

const viewCache = new WeakMap<ApiObjects, Map<string | undefined, ServiceView>>();
/** Shared by every row without slices or selected Pods. */
const NONE: readonly never[] = [];

/**
 * The per-Service parts of one view's rows ({@link RowParts}), made when a row is first read.
 * The Pod lookups are built on the first part that needs them and dropped, with the slice
 * grouping, once every row has its parts.
 */
class ViewRowParts implements RowPartsMaker {
  private slicesOf: Map<string, EndpointSlice[]> | null;
  private pods: { readonly byName: ReadonlyMap<string, Pod>; readonly byLabel: ReadonlyMap<string, readonly Pod[]> } | null = null;
  private left: number;

  constructor(private readonly objects: ApiObjects, rows: number) {
    this.slicesOf = slicesByService(objects.endpointSlices);
    this.left = rows;
  }

  partsOf(svc: Service): RowParts {
    const podsKnown = this.objects.pods.length > 0;
    const found = this.slicesOf?.get(formatServiceRef(svc.meta));
    const slices: readonly EndpointSlice[] = found ? found.sort((a, b) => byText(a.meta.name, b.meta.name)) : NONE;
    const natural = naturalAddresses(slices);
    const order = endpointOrder(natural);
    const pods = podsKnown ? (this.pods ??= podLookups(this.objects.pods)) : null;
    let endpointPods: (Pod | undefined)[] | undefined;
    if (pods) {
      const list = slices.flatMap((s) => s.endpoints.map((e) => podOf(e.targetRef, s.meta.namespace, pods.byName)));
      if (list.some((p) => p !== undefined)) endpointPods = list;
    }
    const selector = selectorOf(svc);
    const matched = selector && pods ? candidates(pods.byLabel, svc.meta.namespace, selector).filter((p) => matches(selector, p.meta.labels)) : null;
    const selected = matched && (matched.length === 0 ? NONE : matched.sort((a, b) => byText(a.meta.name, b.meta.name)));
    if (--this.left === 0) {
      this.slicesOf = null;
      this.pods = null;
    }
    return { slices: slices.length === 1 ? slices[0]! : slices, order, addressList: sortedAddresses(natural, order), endpointPods, selected };
  }
}

/** The Pods by `namespace/name`, and by namespace and label (`ns`, `key=value`) in input order. */
function podLookups(list: readonly Pod[]): { byName: Map<string, Pod>; byLabel: Map<string, Pod[]> } {
  const byName = new Map(list.map((p) => [`${p.meta.namespace}/${p.meta.name}`, p]));
  // A selector is matched only against the Pods of its namespace that carry its first label.
  const byLabel = new Map<string, Pod[]>();
  for (const p of list) {
    for (const [k, v] of Object.entries(p.meta.labels)) {
      const key = labelKey(p.meta.namespace, k, v);
      const found = byLabel.get(key);
      if (found) found.push(p);
      else byLabel.set(key, [p]);
    }
  }
  return { byName, byLabel };
}

/**
 * The view with each row's parts made when the row is first read and `orphanSlices` when
 * first read: a frame of the Services pane reads ~40 rows of 25,000. Equal to
 * {@link computeServiceViewWhole} (test/ui/services-first-frame.test.tsx).
 */
function computeServiceView(objects: ApiObjects, options: ServiceViewOptions, whole = false): ServiceView {
  const podsKnown = objects.pods.length > 0;
  const services = servicesInRowOrder(objects.services);
  const context: RowContext = { nodes: new Map(objects.nodes.map((n) => [n.meta.name, n])), viewed: options.nodeName };
  const maker = new ViewRowParts(objects, services.length);
  // Rows keep references and the endpoint order only; their fields are derived when read.
  const rows = services.map((svc): ServiceRow => new CompactServiceRow(svc, whole ? maker.partsOf(svc) : maker, context));
  const orphans = () => {
    const known = new Set(services.map((s) => formatServiceRef(s.meta)));
    return objects.endpointSlices
      .filter((s) => s.serviceName === undefined || !known.has(`${s.meta.namespace}/${s.serviceName}`))
      .map((s) => ({ namespace: s.meta.namespace, name: s.meta.name, serviceName: s.serviceName }))
      .sort((a, b) => byText(a.namespace, b.namespace) || byText(a.name, b.name));
  };
  if (whole) return { nodeName: options.nodeName, podsKnown, rows, orphanSlices: orphans() };
  let orphanSlices: ServiceView['orphanSlices'] | undefined;
  return {
    nodeName: options.nodeName,
    podsKnown,
    rows,
    get orphanSlices() {
      return (orphanSlices ??= orphans());
    },
  };
}

/**
 * The view with every row's parts and the orphan slices made at once (the way every view was
 * built before the parts were made on first read): the reference the tests compare
 * {@link buildServiceView} with. Not cached.
 */
export function computeServiceViewWhole(objects: ApiObjects, options: ServiceViewOptions = {}): ServiceView {
  return computeServiceView(objects, options, true);
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

/** The facts (see {@link ServiceFact}) of one Service row. */
export function factsFor(row: ServiceRow): ServiceFact[] {
  // A compact row's slices and endpoint conditions, read without deriving rows (every Service is read).
  const compact = rowSource(row);
  const slices: readonly { readonly ports: readonly EndpointPort[] }[] = compact ? compact.sliceList() : row.slices;
  const endpoints = (): readonly Pick<Endpoint, 'ready' | 'serving' | 'terminating'>[] => {
    if (!compact) return row.endpoints;
    const out: Endpoint[] = [];
    compact.forEachEndpoint((_, e) => out.push(e));
    return out;
  };
  const facts: ServiceFact[] = [];
  const fact = (code: ServiceFact['code'], severity: ServiceFact['severity'], message: string, detail: ServiceFact['detail']) =>
    facts.push({ namespace: row.namespace, name: row.name, code, severity, message, detail });
  if (row.type === 'ExternalName') return facts; // resolved by DNS only: no endpoints by design
  if (slices.length === 0) {
    const hasSelector = row.selector !== undefined;
    fact('no-endpointslice', 'error',
      hasSelector ? 'no EndpointSlice names this Service' : 'no EndpointSlice names this Service, and it has no selector to make one',
      { hasSelector });
  } else {
    const all = endpoints();
    if (!all.some(isReady)) {
      fact('no-ready-endpoints', 'error', all.length === 0 ? 'EndpointSlices exist but hold no endpoint' : 'EndpointSlices exist but no endpoint is ready', {
        endpoints: all.length,
        serving: all.filter((e) => e.serving === true).length,
        terminating: all.filter((e) => e.terminating === true).length,
      });
    }
  }
  if (row.selectedPods !== null && row.selectedPods.length === 0) {
    const selector = Object.entries(row.selector ?? {}).map(([k, v]) => `${k}=${v}`).join(',');
    fact('selector-matches-no-pod', 'error', `no Pod in ${row.namespace} matches selector ${selector}`, { selector });
  }
  // The controller's placeholder slice (no endpoints) carries no ports: nothing to match there.
  if (slices.some((s) => s.ports.length > 0) || (slices.length > 0 && endpoints().length > 0)) {
    const sliceKeys = new Set(slices.flatMap((s) => s.ports.map((p) => `${portName(p)}/${p.protocol}`)));
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
    // Port, protocol and nodePort only: a compact row's Service ports give them without deriving `ports`.
    const ports: readonly Pick<PortRow, 'port' | 'protocol' | 'nodePort'>[] = rowSource(row)?.service.ports ?? row.ports;
    const frontIPs = row.type === 'ExternalName' || row.headless ? [] : [...row.clusterIPs, ...row.externalIPs, ...row.loadBalancerIPs];
    const vips = uniqueSorted(
      frontIPs.flatMap((ip) => ports.map((p) => ({ ip, port: p.port, protocol: p.protocol }))),
      (v) => `${addressSortKey(v.ip)} ${String(v.port).padStart(5, '0')} ${v.protocol}`,
    );
    const nodePorts = uniqueSorted(
      row.type === 'ExternalName' ? [] : ports.flatMap((p) => (p.nodePort === undefined ? [] : [{ port: p.nodePort, protocol: p.protocol }])),
      (n) => `${String(n.port).padStart(5, '0')} ${n.protocol}`,
    );
    // One address may sit in two slices (during a controller handover): ready if either says so.
    const endpoints = new Map<string, DataplaneEndpoint>();
    const add = (addressKey: string, ip: string, port: number, protocol: Protocol, endpointReady: boolean) => {
      const k = `${addressKey} ${String(port).padStart(5, '0')} ${protocol}`;
      const ready = endpointReady || (endpoints.get(k)?.ready ?? false);
      endpoints.set(k, { ip, port, protocol, ready });
    };
    const compact = rowSource(row);
    if (compact) {
      // The same visits in the same order, without building endpoint rows (every Service is read).
      const served = new Map<EndpointSlice, EndpointPort[]>();
      const svcPorts = compact.service.ports;
      compact.forEachEndpoint((address, e, slice) => {
        if (slice.addressType === 'FQDN') return;
        let ports = served.get(slice);
        if (!ports) {
          ports = slice.ports.filter((p) => p.port !== null && svcPorts.some((sp) => sp.name === portName(p) && sp.protocol === p.protocol));
          served.set(slice, ports);
        }
        if (ports.length === 0) return;
        const key = addressSortKey(address);
        for (const p of ports) add(key, address, p.port!, p.protocol, isReady(e));
      });
    } else {
      for (const e of row.endpoints) {
        if (e.addressType === 'FQDN') continue;
        for (const p of e.ports) if (p.servicePort !== undefined && p.port !== null) add(addressSortKey(e.address), e.address, p.port, p.protocol, isReady(e));
      }
    }
    const sorted = [...endpoints.entries()].sort(([a], [b]) => byText(a, b)).map(([, e]) => e);
    return { namespace: row.namespace, name: row.name, vips, nodePorts, endpoints: sorted };
  });
}
