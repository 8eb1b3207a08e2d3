/**
 * Compact rows of the Services view (src/analysis/service-view.ts). A row keeps only
 * references into the API objects — the Service, its EndpointSlices (sorted by name), the
 * Pods its endpoints and its selector name — plus the endpoint order, packed as one
 * char code per endpoint address. Every other field (endpoints, ports, slices, selected
 * Pods) is derived when read: a frame reads ~30 rows, and at 25,000 Services × 10
 * endpoints materialised rows held ~55 MB where these hold a few.
 *
 * Derived endpoint lists of the last rows read are kept (a small FIFO), so a pane or a
 * report reading `row.endpoints` several times derives them once.
 */
import type { Endpoint, EndpointSlice, Node, Pod, Service, TargetRef } from '../model/k8s.js';
import { expandIpv6 } from '../model/conntrack.js';
import type { EndpointPortRow, EndpointRow, PortRow, SelectedPod, ServiceRow, SliceRow } from './service-types.js';

/** What every row of one view shares: the Nodes by name and the viewed node (for `onNode`). */
export interface RowContext {
  readonly nodes: ReadonlyMap<string, Node>;
  readonly viewed: string | undefined;
}

/**
 * The order of a row's endpoint addresses: position `i` of the sorted list is natural
 * address `charCodeAt(i)` (a `number[]` past 65,535 addresses); undefined when the natural
 * order (slices, their endpoints, each endpoint's addresses) is already sorted.
 */
export type EndpointOrder = string | readonly number[] | undefined;

const EMPTY: readonly never[] = [];

/** The name a slice port or Service port is matched by: absent and `""` are the same. */
export function portName(p: { readonly name: string | null }): string {
  return p.name ?? '';
}

/** Plain code-unit order (what `<` does), for stable sorts. */
export function byText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * EndpointSlices grouped by the Service they belong to, keyed `namespace/serviceName` (label
 * `kubernetes.io/service-name`; `namespace/` for a slice without it), each list in input order.
 */
export function slicesByService(slices: readonly EndpointSlice[]): Map<string, EndpointSlice[]> {
  const out = new Map<string, EndpointSlice[]>();
  for (const s of slices) {
    const k = `${s.meta.namespace}/${s.serviceName ?? ''}`;
    const list = out.get(k);
    if (list) list.push(s);
    else out.set(k, [s]);
  }
  return out;
}

/** A copy of `services` in the Services view's row order: namespace, then name ({@link byText}; ties keep input order). */
export function servicesInRowOrder(services: readonly Service[]): Service[] {
  return [...services].sort((a, b) => byText(a.meta.namespace, b.meta.namespace) || byText(a.meta.name, b.meta.name));
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

/** Every address of `slices` in natural order: slice by slice, endpoint by endpoint. */
export function naturalAddresses(slices: readonly EndpointSlice[]): string[] {
  const out: string[] = [];
  for (const s of slices) for (const e of s.endpoints) for (const a of e.addresses) out.push(a);
  return out;
}

/**
 * The {@link EndpointOrder} of `addresses` (natural order): by {@link addressSortKey}, ties
 * in natural order — which is slice-name order, since the slices are sorted by name. A list of
 * dotted quads only is ordered by their numbers (the same order, without a key text per
 * address); any other list by the keys ({@link endpointOrderByKeys}, its reference in
 * test/unit/endpoint-order.test.ts).
 */
export function endpointOrder(addresses: readonly string[]): EndpointOrder {
  const n = addresses.length;
  if (n < 2) return undefined;
  const values: number[] = [];
  let sorted = true;
  for (let i = 0; i < n; i++) {
    const v = dottedQuadValue(addresses[i]!);
    if (v < 0) return endpointOrderByKeys(addresses);
    if (i > 0 && values[i - 1]! > v) sorted = false;
    values.push(v);
  }
  if (sorted) return undefined;
  return packOrder(Array.from({ length: n }, (_, i) => i).sort((a, b) => values[a]! - values[b]! || a - b));
}

/**
 * {@link endpointOrder} by the {@link addressSortKey} texts, for any list (IPv6, FQDN, odd
 * texts): the way every order was made before dotted quads were ordered by number.
 */
export function endpointOrderByKeys(addresses: readonly string[]): EndpointOrder {
  const n = addresses.length;
  if (n < 2) return undefined;
  const keys = addresses.map(addressSortKey);
  let sorted = true;
  for (let i = 1; i < n && sorted; i++) sorted = keys[i - 1]! <= keys[i]!;
  if (sorted) return undefined;
  return packOrder(Array.from({ length: n }, (_, i) => i).sort((a, b) => byText(keys[a]!, keys[b]!) || a - b));
}

/** Sorted positions as an {@link EndpointOrder}: one char code each, or the numbers past 65,535. */
function packOrder(idx: number[]): EndpointOrder {
  if (idx.length > 0xffff) return idx;
  let out = '';
  // In chunks: fromCharCode's arguments go on the stack.
  for (let i = 0; i < idx.length; i += 4096) out += String.fromCharCode(...idx.slice(i, i + 4096));
  return out;
}

/**
 * The four parts of a dotted quad of 1–3 digit parts (what {@link ipv4Key} accepts) read as
 * one number in base 1000, so numbers order as those keys do (each part is zero-padded to
 * three digits there); -1 for any other text.
 */
function dottedQuadValue(address: string): number {
  let value = 0;
  let start = 0;
  for (let part = 0; part < 4; part++) {
    let end = start;
    let n = 0;
    while (end < address.length && end - start < 4) {
      const c = address.charCodeAt(end);
      if (c < 48 || c > 57) break;
      n = n * 10 + (c - 48);
      end++;
    }
    const len = end - start;
    if (len < 1 || len > 3) return -1;
    if (part < 3 ? address.charCodeAt(end) !== 46 : end !== address.length) return -1;
    value = value * 1000 + n;
    start = end + 1;
  }
  return value;
}

/**
 * The addresses of {@link naturalAddresses} in row order, in an array of their own length.
 * Rows keep it (shared strings, ~130 bytes a Service of 10 endpoints): the filter reads
 * every row's addresses each keypress, and walking the slices for them took ~40% longer.
 */
export function sortedAddresses(natural: readonly string[], order: EndpointOrder): readonly string[] {
  if (natural.length === 0) return EMPTY;
  if (order === undefined) return natural.slice();
  return natural.map((_, i) => natural[orderAt(order, i)]!);
}

function orderAt(order: EndpointOrder, i: number): number {
  return order === undefined ? i : typeof order === 'string' ? order.charCodeAt(i) : order[i]!;
}

/** The Pod a targetRef names in `pods` (`namespace/name`), unless its uid says it is an earlier one. */
export function podOf(ref: TargetRef | undefined, sliceNs: string, pods: ReadonlyMap<string, Pod>): Pod | undefined {
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

/** Rows whose endpoints were derived last, oldest first; bounded (a frame reads ~30 rows). */
const recent = new Map<CompactServiceRow, readonly EndpointRow[]>();
const RECENT_MAX = 64;

/**
 * A row's references besides its Service. `slices` are the Service's EndpointSlices sorted
 * by name (one slice held bare); `addressList` the endpoint addresses in row order (see
 * {@link sortedAddresses}); `endpointPods` the Pod of each endpoint (natural order),
 * undefined when none is known; `selected` the Pods the selector matches, by name (null: no
 * selector or no Pods known).
 */
export interface RowParts {
  readonly slices: EndpointSlice | readonly EndpointSlice[];
  readonly order: EndpointOrder;
  readonly addressList: readonly string[];
  readonly endpointPods: readonly (Pod | undefined)[] | undefined;
  readonly selected: readonly Pod[] | null;
}

/**
 * Derives the {@link RowParts} of one Service of a view (src/analysis/service-view.ts): one
 * per view, shared by its rows, so a row not read yet holds no parts of its own.
 */
export interface RowPartsMaker {
  partsOf(service: Service): RowParts;
}

function isMaker(m: RowParts | RowPartsMaker): m is RowPartsMaker {
  return typeof (m as Partial<RowPartsMaker>).partsOf === 'function';
}

/**
 * A {@link ServiceRow} that derives its fields from the objects it references: its Service
 * and its {@link RowParts}, given or made by the view's {@link RowPartsMaker} when first read.
 */
export class CompactServiceRow implements ServiceRow {
  /** The row's parts, or the view's maker until first read. */
  private made: RowParts | RowPartsMaker;

  constructor(
    readonly service: Service,
    parts: RowParts | RowPartsMaker,
    private readonly context: RowContext,
  ) {
    this.made = parts;
  }

  /** The parts, derived on first read (a frame reads ~40 rows of 25,000). */
  private get parts(): RowParts {
    const m = this.made;
    if (!isMaker(m)) return m;
    const parts = m.partsOf(this.service);
    this.made = parts;
    return parts;
  }

  private get sliceRefs(): EndpointSlice | readonly EndpointSlice[] { return this.parts.slices; }
  private get order(): EndpointOrder { return this.parts.order; }
  private get addressList(): readonly string[] { return this.parts.addressList; }
  private get endpointPods(): readonly (Pod | undefined)[] | undefined { return this.parts.endpointPods; }
  private get selected(): readonly Pod[] | null { return this.parts.selected; }

  get namespace(): string { return this.service.meta.namespace; }
  get name(): string { return this.service.meta.name; }
  get type(): Service['type'] { return this.service.type; }
  get headless(): boolean { return this.service.headless; }
  get clusterIPs(): readonly string[] { return this.service.clusterIPs; }
  get externalName(): string | undefined { return this.service.externalName; }
  get externalIPs(): readonly string[] { return this.service.externalIPs; }
  get loadBalancerIPs(): readonly string[] {
    const ingress = this.service.loadBalancerIngress;
    return ingress.length === 0 ? EMPTY : ingress.flatMap((i) => i.ip ?? []);
  }
  get sessionAffinity(): Service['sessionAffinity'] { return this.service.sessionAffinity; }
  get sessionAffinityTimeoutSeconds(): number | undefined { return this.service.sessionAffinityTimeoutSeconds; }
  get externalTrafficPolicy(): Service['externalTrafficPolicy'] { return this.service.externalTrafficPolicy; }
  get internalTrafficPolicy(): Service['internalTrafficPolicy'] { return this.service.internalTrafficPolicy; }
  get trafficDistribution(): string | undefined { return this.service.trafficDistribution; }
  get selector(): Readonly<Record<string, string>> | undefined { return selectorOf(this.service); }

  /** The EndpointSlices, sorted by name. */
  sliceList(): readonly EndpointSlice[] {
    const s = this.sliceRefs;
    return isSliceList(s) ? s : [s];
  }

  get ports(): readonly PortRow[] {
    const slices = this.sliceList();
    return this.service.ports.map((p) => {
      const resolved = new Set<number>();
      for (const s of slices) {
        for (const sp of s.ports) if (portName(sp) === p.name && sp.protocol === p.protocol && sp.port !== null) resolved.add(sp.port);
      }
      return { name: p.name, protocol: p.protocol, port: p.port, targetPort: p.targetPort, nodePort: p.nodePort, appProtocol: p.appProtocol, endpointPorts: [...resolved].sort((a, b) => a - b) };
    });
  }

  get slices(): readonly SliceRow[] {
    return this.sliceList().map((s) => ({ name: s.meta.name, addressType: s.addressType, managedBy: s.managedBy, ports: s.ports, endpointCount: s.endpoints.length }));
  }

  get selectedPods(): readonly SelectedPod[] | null {
    return this.selected?.map((p) => ({
      name: p.meta.name,
      phase: p.phase,
      nodeName: p.nodeName,
      podIPs: p.podIPs,
      containerPortNames: p.containerPorts.flatMap((c) => c.name ?? []).sort(byText),
    })) ?? null;
  }

  /** The endpoint addresses in row order (what the Services filter reads), without endpoint rows. */
  addresses(): readonly string[] {
    return this.addressList;
  }

  get endpoints(): readonly EndpointRow[] {
    let rows = recent.get(this);
    if (rows) return rows;
    rows = this.deriveEndpoints();
    if (recent.size >= RECENT_MAX) recent.delete(recent.keys().next().value!);
    recent.set(this, rows);
    return rows;
  }

  /**
   * Calls `visit` for each endpoint address in row order with its endpoint, slice and the
   * endpoint's Pod, building no endpoint rows (for sweeps over every Service).
   */
  forEachEndpoint(visit: (address: string, endpoint: Endpoint, slice: EndpointSlice, pod: Pod | undefined) => void): void {
    const pods = this.endpointPods;
    const order = this.order;
    let k = 0;
    if (order === undefined) {
      for (const slice of this.sliceList()) {
        for (const e of slice.endpoints) {
          const pod = pods?.[k++];
          for (const address of e.addresses) visit(address, e, slice, pod);
        }
      }
      return;
    }
    // Natural position → endpoint, slice and endpoint index; then visited in row order.
    const eps: Endpoint[] = [];
    const sliceAt: EndpointSlice[] = [];
    const endpointAt: number[] = [];
    for (const slice of this.sliceList()) {
      for (const e of slice.endpoints) {
        for (let n = 0; n < e.addresses.length; n++) {
          eps.push(e);
          sliceAt.push(slice);
          endpointAt.push(k);
        }
        k++;
      }
    }
    const addresses = this.addressList;
    for (let i = 0; i < addresses.length; i++) {
      const j = orderAt(order, i);
      visit(addresses[i]!, eps[j]!, sliceAt[j]!, pods?.[endpointAt[j]!]);
    }
  }

  private deriveEndpoints(): EndpointRow[] {
    const svc = this.service;
    const { nodes, viewed } = this.context;
    const portsOf = new Map<EndpointSlice, EndpointPortRow[]>();
    const rows: EndpointRow[] = [];
    this.forEachEndpoint((address, e, slice, pod) => {
      let ports = portsOf.get(slice);
      if (!ports) {
        ports = slice.ports.map((p) => ({
          name: portName(p),
          protocol: p.protocol,
          port: p.port,
          servicePort: svc.ports.find((sp) => sp.name === portName(p) && sp.protocol === p.protocol)?.port,
        }));
        portsOf.set(slice, ports);
      }
      const nodeName = e.nodeName ?? pod?.nodeName;
      const node = nodeName === undefined ? undefined : nodes.get(nodeName);
      rows.push({
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
      });
    });
    return rows;
  }
}

function isSliceList(s: EndpointSlice | readonly EndpointSlice[]): s is readonly EndpointSlice[] {
  return Array.isArray(s);
}

/** The Service's selector; `undefined` when it has none or `{}` (the API treats them the same). */
export function selectorOf(svc: Service): Readonly<Record<string, string>> | undefined {
  return svc.selector && Object.keys(svc.selector).length > 0 ? svc.selector : undefined;
}

/**
 * What a row built by {@link CompactServiceRow} gives without deriving its endpoint rows:
 * its Service, its EndpointSlices (sorted by name) and a visit of its endpoints in natural
 * order. Readers that go over every Service use it; the class stays inside this module.
 */
export interface ServiceRowSource {
  readonly service: Service;
  sliceList(): readonly EndpointSlice[];
  forEachEndpoint(visit: (address: string, endpoint: Endpoint, slice: EndpointSlice, pod: Pod | undefined) => void): void;
}

/** The row's sources when it is compact, else null (a row of plain data: read its fields). */
export function rowSource(row: ServiceRow): ServiceRowSource | null {
  return row instanceof CompactServiceRow ? row : null;
}

/** The endpoint addresses of `row` in row order (compact rows skip building endpoint rows). */
export function endpointAddresses(row: ServiceRow): readonly string[] {
  return row instanceof CompactServiceRow ? row.addresses() : row.endpoints.map((e) => e.address);
}
