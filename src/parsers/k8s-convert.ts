/**
 * JSON object → typed model (src/model/k8s.ts) for Service, EndpointSlice, Pod and Node.
 *
 * Field names and defaults follow k8s.io/api core/v1 and discovery/v1 `types.go`.
 * Never throws: a field of the wrong type is reported through {@link ConvertContext.report}
 * and left unset (or given the API default); everything else of the object is kept.
 */
import type {
  AddressType,
  ContainerPort,
  Endpoint,
  EndpointPort,
  EndpointSlice,
  IPAddress,
  IpFamily,
  IpFamilyPolicy,
  JsonObject,
  JsonValue,
  K8sObject,
  LoadBalancerIngress,
  Node,
  NodeAddress,
  NodeAddressType,
  ObjectMeta,
  Pod,
  PodPhase,
  Protocol,
  Service,
  ServiceCIDR,
  ServicePort,
  ServiceType,
  SessionAffinity,
  SourceRef,
  TargetRef,
  TrafficPolicy,
  TriState,
} from '../model/k8s.js';
import { LABEL_MANAGED_BY, LABEL_SERVICE_NAME, LABEL_SERVICE_PROXY_NAME, LABEL_TOPOLOGY_ZONE } from '../model/k8s.js';
import { isIP } from 'node:net';
import { ADDRESS_TYPES, AFFINITIES, IP_FAMILIES, IP_FAMILY_POLICIES, NO_MAP, NO_STRINGS, NODE_ADDRESS_TYPES, POD_PHASES, PROTOCOLS, SERVICE_TYPES, TRAFFIC_POLICIES } from './k8s-values.js';
import type { Severity } from '../model/diagnostics.js';
import { endpointSliceFast, serviceFast } from './k8s-convert-fast.js';

/** A path to a value inside one object, e.g. `['spec', 'ports', 0, 'port']`. */
export type JsonPath = readonly (string | number)[];

/** The annotation the EndpointSlice controller sets on every slice (discovery/v1 `EndpointsLastChangeTriggerTime`). */
const ANNOTATION_LAST_CHANGE = 'endpoints.kubernetes.io/last-change-trigger-time';

/**
 * Equal values met again and again in one capture (endpoint `conditions`, timestamps,
 * apiVersion, the managed-by label), kept once. A converter given one replaces such values
 * inside `raw` by the shared instance: the JSON stays the same, the copies go. Only for
 * JSON the parser made itself (never a caller's object). Shared objects are frozen.
 * Fields are picked by name: a walk over every value costs more time than it saves memory.
 */
export class SharedValues {
  private readonly strings = new Map<string, string>();
  private readonly flagObjects = new Map<number, JsonObject>();

  /** Replaces the string at `o[key]` by its shared instance (V8's JSON.parse already shares strings of up to 10 characters). */
  field(o: JsonObject | undefined, key: string): void {
    const v = o?.[key];
    if (typeof v !== 'string' || v.length <= 10) return;
    const had = this.strings.get(v);
    // (Equal strings compare equal with ===: whether `had` is another copy cannot be told, so store it.)
    if (had === undefined) this.strings.set(v, v);
    else (o as Record<string, JsonValue>)[key] = had;
  }

  /** Shares the repeated strings of an object's top level and metadata. */
  meta(o: JsonObject, m: JsonObject): void {
    this.field(o, 'apiVersion');
    this.field(m, 'creationTimestamp');
    const labels = m['labels'];
    if (isJsonObject(labels)) this.field(labels, LABEL_MANAGED_BY);
    const annotations = m['annotations'];
    if (isJsonObject(annotations)) this.field(annotations, ANNOTATION_LAST_CHANGE);
  }

  /**
   * The one instance of endpoint `conditions` (`ready`/`serving`/`terminating` as true,
   * false or null, in any order), or `o` itself when it holds anything else.
   */
  conditions(o: JsonObject): JsonObject {
    // Key order and values in one number: a base-16 digit (1..15) per key.
    let code = 0;
    for (const k in o) {
      const at = k === 'ready' ? 0 : k === 'serving' ? 1 : k === 'terminating' ? 2 : -1;
      const v = o[k];
      const is = v === true ? 1 : v === false ? 2 : v === null ? 3 : 0;
      if (at < 0 || is === 0 || code >= 0x100) return o;
      code = code * 16 + at * 4 + is;
    }
    const had = this.flagObjects.get(code);
    if (had !== undefined) return had;
    this.flagObjects.set(code, Object.freeze(o));
    return o;
  }
}

/** What the converter needs from its caller: where the object came from and where to report. */
export interface ConvertContext {
  readonly source: SourceRef;
  /** When given, equal values inside the object's JSON are replaced by shared ones. */
  readonly share?: SharedValues;
  /** Records a finding about the value at `path` (relative to the object being converted). */
  report(severity: Severity, path: JsonPath, code: string, message: string): void;
}

// Memory: a huge capture has 250,000 endpoints, so the typed view shares what it can with
// `raw` (string lists and string maps are the raw arrays/objects themselves, read only) and
// every empty list or map is one frozen instance (k8s-values.ts). Arrays are built at their
// final size: V8 gives an array grown by `push` room for 17 elements.

/** True when every element is a string (the list can then be shared as a `string[]`). */
function allStrings(a: readonly JsonValue[]): a is readonly string[] {
  for (const v of a) if (typeof v !== 'string') return false;
  return true;
}

/** `a` itself unless it is empty (then the shared empty list). */
function shared<T>(a: readonly T[]): readonly T[] {
  return a.length === 0 ? (NO_STRINGS as readonly never[]) : a;
}

/** The defined items, in a list of their exact size (`flatMap` and `filter` leave spare room). */
function defined<T>(items: readonly (T | undefined)[]): readonly T[] {
  let n = 0;
  for (const x of items) if (x !== undefined) n++;
  if (n === items.length) return shared(items as readonly T[]);
  const out = new Array<T>(n);
  let i = 0;
  for (const x of items) if (x !== undefined) out[i++] = x;
  return shared(out);
}

/** True for a JSON object (not an array, not null). */
export function isJsonObject(v: JsonValue | undefined): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * `JSON.stringify(v)` cut to `max` characters, written without recursion and reading only
 * as much of `v` as it prints: a value nested thousands of levels deep (hostile api.json)
 * overflows the stack of `JSON.stringify`, and a huge one would cost its whole size.
 */
export function shortJson(v: JsonValue, max: number): string {
  let out = '';
  // What is left to print, last first: values, and literal text (brackets, commas, keys).
  const todo: (JsonValue | Literal)[] = [v];
  while (todo.length > 0 && out.length <= max) {
    const next = todo.pop()!;
    if (next instanceof Literal) {
      out += next.text;
    } else if (Array.isArray(next)) {
      out += '[';
      todo.push(new Literal(']'));
      // Every element prints at least one character: no more than `max` can be shown.
      for (let i = Math.min(next.length, max) - 1; i >= 0; i--) {
        todo.push(next[i]!);
        if (i > 0) todo.push(new Literal(','));
      }
    } else if (next !== null && typeof next === 'object') {
      out += '{';
      todo.push(new Literal('}'));
      const keys = Object.keys(next).slice(0, max);
      for (let i = keys.length - 1; i >= 0; i--) {
        todo.push((next as JsonObject)[keys[i]!]!);
        todo.push(new Literal(`${JSON.stringify(keys[i])}:`));
        if (i > 0) todo.push(new Literal(','));
      }
    } else {
      out += JSON.stringify(next);
    }
  }
  return out.length > max ? out.slice(0, max) : out;
}

/** Literal text in {@link shortJson}'s work list. */
class Literal {
  constructor(readonly text: string) {}
}

/** Typed field readers bound to one context; each reports a wrong type and returns "unset". */
class Fields {
  constructor(readonly ctx: ConvertContext) {}

  missing(path: JsonPath, what: string): void {
    this.ctx.report('warning', path, 'missing-field', `${path.join('.')}: ${what} is missing; entry skipped`);
  }

  wrongType(path: JsonPath, want: string, got: JsonValue): void {
    this.ctx.report('warning', path, 'wrong-type', `${path.join('.')}: expected ${want}, got ${shortJson(got, 60)}`);
  }

  obj(o: JsonObject, key: string, path: JsonPath): JsonObject | undefined {
    const v = o[key];
    if (v === undefined || v === null) return undefined;
    if (isJsonObject(v)) return v;
    this.wrongType([...path, key], 'an object', v);
    return undefined;
  }

  /** An array field; `null` and absent are `[]` (the API omits empty lists, watch events send `null`). */
  arr(o: JsonObject, key: string, path: JsonPath): readonly JsonValue[] {
    const v = o[key];
    if (v === undefined || v === null) return [];
    if (Array.isArray(v)) return v as readonly JsonValue[];
    this.wrongType([...path, key], 'a list', v);
    return [];
  }

  str(o: JsonObject, key: string, path: JsonPath): string | undefined {
    const v = o[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v === 'string') return v;
    this.wrongType([...path, key], 'a string', v);
    return undefined;
  }

  int(o: JsonObject, key: string, path: JsonPath): number | undefined {
    const v = o[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v === 'number' && Number.isInteger(v)) return v;
    this.wrongType([...path, key], 'an integer', v);
    return undefined;
  }

  bool(o: JsonObject, key: string, path: JsonPath): boolean | undefined {
    const v = o[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v === 'boolean') return v;
    this.wrongType([...path, key], 'true or false', v);
    return undefined;
  }

  /** A tri-state condition: absent or `null` is `null`; anything but a boolean is reported and `null`. */
  tri(o: JsonObject, key: string, path: JsonPath): TriState {
    const v = o[key];
    if (v === undefined || v === null) return null;
    if (typeof v === 'boolean') return v;
    this.ctx.report('warning', [...path, key], 'condition-not-boolean',
      `${[...path, key].join('.')}: ${shortJson(v, 60)} is not true/false; treated as unset`);
    return null;
  }

  /** A string field restricted to `allowed`; other strings are reported and give `undefined`. */
  oneOf<T extends string>(o: JsonObject, key: string, path: JsonPath, allowed: readonly T[]): T | undefined {
    const v = this.str(o, key, path);
    if (v === undefined) return undefined;
    if ((allowed as readonly string[]).includes(v)) return v as T;
    this.ctx.report('warning', [...path, key], 'unknown-value',
      `${[...path, key].join('.')}: "${v}" is not one of ${allowed.join(', ')}`);
    return undefined;
  }

  /**
   * A `map[string]string` (labels, annotations, selector): the raw object itself when all
   * its values are strings; else a copy where YAML scalars that are not strings are stringified.
   */
  strMap(o: JsonObject, key: string, path: JsonPath): Readonly<Record<string, string>> | undefined {
    const m = this.obj(o, key, path);
    if (m === undefined) return o[key] === null ? NO_MAP : undefined;
    let plain = true;
    for (const k in m) {
      if (typeof m[k] !== 'string') {
        plain = false;
        break;
      }
    }
    if (plain) return m as Readonly<Record<string, string>>;
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(m)) {
      if (typeof v === 'string') out[k] = v;
      else if (typeof v === 'number' || typeof v === 'boolean') out[k] = String(v);
      else if (v === null) out[k] = '';
      else this.wrongType([...path, key, k], 'a string', v);
    }
    return out;
  }

  /** A list of strings: the raw list itself when it holds only strings, else its strings (others reported). */
  strList(o: JsonObject, key: string, path: JsonPath): readonly string[] {
    const a = this.arr(o, key, path);
    if (allStrings(a)) return shared(a);
    const out: string[] = [];
    a.forEach((v, i) => {
      if (typeof v === 'string') out.push(v);
      else this.wrongType([...path, key, i], 'a string', v);
    });
    return shared(out.slice());
  }

  /** Each element of a list of objects, with its path; non-objects are reported and skipped. */
  objects(o: JsonObject, key: string, path: JsonPath): { item: JsonObject; path: JsonPath }[] {
    const out: { item: JsonObject; path: JsonPath }[] = [];
    this.arr(o, key, path).forEach((v, i) => {
      if (isJsonObject(v)) out.push({ item: v, path: [...path, key, i] });
      else this.wrongType([...path, key, i], 'an object', v);
    });
    return out;
  }

  protocol(o: JsonObject, key: string, path: JsonPath): Protocol {
    return this.oneOf(o, key, path, PROTOCOLS) ?? 'TCP';
  }
}

function readMeta(f: Fields, o: JsonObject, share: SharedValues | undefined): ObjectMeta {
  const m = f.obj(o, 'metadata', []) ?? {};
  const p = ['metadata'];
  share?.meta(o, m);
  return {
    namespace: f.str(m, 'namespace', p) ?? '',
    name: f.str(m, 'name', p) ?? '',
    uid: f.str(m, 'uid', p),
    resourceVersion: f.str(m, 'resourceVersion', p),
    creationTimestamp: f.str(m, 'creationTimestamp', p),
    deletionTimestamp: f.str(m, 'deletionTimestamp', p),
    labels: f.strMap(m, 'labels', p) ?? NO_MAP,
    annotations: f.strMap(m, 'annotations', p) ?? NO_MAP,
  };
}

function base(f: Fields, o: JsonObject, ctx: ConvertContext) {
  return { apiVersion: f.str(o, 'apiVersion', []), meta: readMeta(f, o, ctx.share), raw: o, source: ctx.source };
}

function readServicePort(f: Fields, p: JsonObject, path: JsonPath): ServicePort | undefined {
  const port = f.int(p, 'port', path);
  if (port === undefined) {
    if (p['port'] === undefined || p['port'] === null) f.missing([...path, 'port'], 'the port number');
    return undefined;
  }
  const tp = p['targetPort'];
  let targetPort: number | string = port;
  if (typeof tp === 'number' || (typeof tp === 'string' && tp !== '')) targetPort = tp;
  else if (tp !== undefined && tp !== null && tp !== '') f.wrongType([...path, 'targetPort'], 'a number or a port name', tp);
  return {
    name: f.str(p, 'name', path) ?? '',
    protocol: f.protocol(p, 'protocol', path),
    port,
    targetPort,
    nodePort: f.int(p, 'nodePort', path),
    appProtocol: f.str(p, 'appProtocol', path),
  };
}

/** core/v1 Service → {@link Service}. */
export function toService(o: JsonObject, ctx: ConvertContext): Service {
  const f = new Fields(ctx);
  const spec = f.obj(o, 'spec', []) ?? {};
  const status = f.obj(o, 'status', []) ?? {};
  const sp = ['spec'];
  const clusterIP = f.str(spec, 'clusterIP', sp);
  const listed = f.strList(spec, 'clusterIPs', sp);
  const all: readonly string[] = listed.length > 0 ? listed : clusterIP !== undefined && clusterIP !== '' ? [clusterIP] : NO_STRINGS;
  const headless = all.some((ip) => ip.toLowerCase() === 'none');
  if (all.some((ip) => ip.toLowerCase() === 'none' && ip !== 'None')) {
    ctx.report('info', ['spec', 'clusterIP'], 'clusterip-none-case',
      'clusterIP "none" in lower case: read as headless (the API only accepts "None")');
  }
  const ports = defined(f.objects(spec, 'ports', sp).map(({ item, path }) => readServicePort(f, item, path)));
  const affinityConfig = f.obj(spec, 'sessionAffinityConfig', sp);
  const clientIP = affinityConfig ? f.obj(affinityConfig, 'clientIP', [...sp, 'sessionAffinityConfig']) : undefined;
  const lb = f.obj(status, 'loadBalancer', ['status']) ?? {};
  const ingress: readonly LoadBalancerIngress[] = shared(f.objects(lb, 'ingress', ['status', 'loadBalancer']).map(({ item, path }) => ({
    ip: f.str(item, 'ip', path),
    hostname: f.str(item, 'hostname', path),
    ipMode: f.str(item, 'ipMode', path),
  })));
  const familyList = f.strList(spec, 'ipFamilies', sp);
  const isFamily = (v: string): v is IpFamily => (IP_FAMILIES as readonly string[]).includes(v);
  familyList.forEach((v, i) => {
    if (!isFamily(v)) ctx.report('warning', [...sp, 'ipFamilies', i], 'unknown-value', `spec.ipFamilies: "${v}" is not IPv4 or IPv6`);
  });
  const families: readonly IpFamily[] = familyList.every(isFamily) ? familyList : familyList.filter(isFamily);
  const isAllocated = (ip: string): boolean => ip !== '' && ip.toLowerCase() !== 'none';
  const b = base(f, o, ctx);
  return {
    kind: 'Service',
    ...b,
    type: f.oneOf(spec, 'type', sp, SERVICE_TYPES) ?? 'ClusterIP',
    clusterIP,
    clusterIPs: all.every(isAllocated) ? shared(all) : all.filter(isAllocated),
    headless,
    ipFamilies: families,
    ipFamilyPolicy: f.oneOf(spec, 'ipFamilyPolicy', sp, IP_FAMILY_POLICIES),
    ports,
    selector: f.strMap(spec, 'selector', sp),
    externalName: f.str(spec, 'externalName', sp),
    externalIPs: f.strList(spec, 'externalIPs', sp),
    loadBalancerIngress: ingress,
    sessionAffinity: f.oneOf(spec, 'sessionAffinity', sp, AFFINITIES) ?? 'None',
    sessionAffinityTimeoutSeconds: clientIP ? f.int(clientIP, 'timeoutSeconds', [...sp, 'sessionAffinityConfig', 'clientIP']) : undefined,
    externalTrafficPolicy: f.oneOf(spec, 'externalTrafficPolicy', sp, TRAFFIC_POLICIES),
    internalTrafficPolicy: f.oneOf(spec, 'internalTrafficPolicy', sp, TRAFFIC_POLICIES),
    trafficDistribution: f.str(spec, 'trafficDistribution', sp),
    publishNotReadyAddresses: f.bool(spec, 'publishNotReadyAddresses', sp) ?? false,
    healthCheckNodePort: f.int(spec, 'healthCheckNodePort', sp),
    loadBalancerSourceRanges: f.strList(spec, 'loadBalancerSourceRanges', sp),
    serviceProxyName: b.meta.labels[LABEL_SERVICE_PROXY_NAME],
  };
}

function readEndpointPort(f: Fields, p: JsonObject, path: JsonPath): EndpointPort {
  return {
    name: f.str(p, 'name', path) ?? null,
    protocol: f.protocol(p, 'protocol', path),
    port: f.int(p, 'port', path) ?? null,
    appProtocol: f.str(p, 'appProtocol', path),
  };
}

function readTargetRef(f: Fields, e: JsonObject, path: JsonPath): TargetRef | undefined {
  const t = f.obj(e, 'targetRef', path);
  if (!t) return undefined;
  const tp = [...path, 'targetRef'];
  return { kind: f.str(t, 'kind', tp), namespace: f.str(t, 'namespace', tp), name: f.str(t, 'name', tp) ?? '', uid: f.str(t, 'uid', tp) };
}

function hintNames(f: Fields, hints: JsonObject | undefined, key: string, path: JsonPath): readonly string[] {
  if (!hints) return NO_STRINGS;
  return defined(f.objects(hints, key, [...path, 'hints']).map(({ item, path: p }) => f.str(item, 'name', p)));
}

/**
 * The endpoint's addresses that are IPs of the slice's `addressType` (discovery/v1
 * validation: an IPv4 or IPv6 slice holds only addresses of that family; FQDN slices are
 * kept as written). Any other is reported (`invalid-address`) and left out: no proxy can
 * program it, and what reads the model may rely on it being an IP.
 */
function endpointAddresses(f: Fields, e: JsonObject, path: JsonPath, addressType: AddressType): { readonly addresses: readonly string[]; readonly leftOut: number } {
  const all = f.strList(e, 'addresses', path);
  if (addressType === 'FQDN') return { addresses: all, leftOut: 0 };
  const family = addressType === 'IPv4' ? 4 : 6;
  if (all.every((a) => isIP(a) === family)) return { addresses: all, leftOut: 0 };
  const ok: string[] = [];
  all.forEach((a, i) => {
    if (isIP(a) === family) ok.push(a);
    else f.ctx.report('warning', [...path, 'addresses', i], 'invalid-address', `endpoint address ${JSON.stringify(a)} is not an ${addressType} address: left out`);
  });
  return { addresses: ok, leftOut: all.length - ok.length };
}

/** One endpoint; `undefined` when every address it had is invalid ({@link endpointAddresses}). */
function readEndpoint(f: Fields, e: JsonObject, path: JsonPath, share: SharedValues | undefined, addressType: AddressType): Endpoint | undefined {
  const { addresses, leftOut } = endpointAddresses(f, e, path, addressType);
  if (addresses.length === 0 && leftOut > 0) return undefined;
  let cond = f.obj(e, 'conditions', path) ?? {};
  if (share && isJsonObject(e['conditions'])) {
    cond = share.conditions(cond);
    (e as Record<string, JsonValue>)['conditions'] = cond;
  }
  const cp = [...path, 'conditions'];
  const hints = f.obj(e, 'hints', path);
  return {
    addresses,
    ready: f.tri(cond, 'ready', cp),
    serving: f.tri(cond, 'serving', cp),
    terminating: f.tri(cond, 'terminating', cp),
    hostname: f.str(e, 'hostname', path),
    nodeName: f.str(e, 'nodeName', path),
    zone: f.str(e, 'zone', path),
    hintsForZones: hintNames(f, hints, 'forZones', path),
    hintsForNodes: hintNames(f, hints, 'forNodes', path),
    targetRef: readTargetRef(f, e, path),
  };
}

/** discovery/v1 EndpointSlice → {@link EndpointSlice}. A missing addressType is reported and read as IPv4. */
export function toEndpointSlice(o: JsonObject, ctx: ConvertContext): EndpointSlice {
  const f = new Fields(ctx);
  const b = base(f, o, ctx);
  let addressType = f.oneOf(o, 'addressType', [], ADDRESS_TYPES);
  if (addressType === undefined) {
    if (o['addressType'] === undefined) ctx.report('warning', [], 'missing-address-type', 'EndpointSlice without addressType: read as IPv4');
    addressType = 'IPv4';
  }
  return {
    kind: 'EndpointSlice',
    ...b,
    addressType,
    serviceName: b.meta.labels[LABEL_SERVICE_NAME],
    managedBy: b.meta.labels[LABEL_MANAGED_BY],
    ports: shared(f.objects(o, 'ports', []).map(({ item, path }) => readEndpointPort(f, item, path))),
    endpoints: shared(defined(f.objects(o, 'endpoints', []).map(({ item, path }) => readEndpoint(f, item, path, ctx.share, addressType)))),
  };
}

/** The `Ready` condition of a Pod or Node status: `"True"` → true, `"False"` → false, else null. */
function readyCondition(f: Fields, status: JsonObject): TriState {
  for (const { item, path } of f.objects(status, 'conditions', ['status'])) {
    if (f.str(item, 'type', path) !== 'Ready') continue;
    const s = f.str(item, 'status', path);
    return s === 'True' ? true : s === 'False' ? false : null;
  }
  return null;
}

/** `[{ip}]` lists (podIPs, hostIPs) with the singular field as fallback. */
function ipList(f: Fields, status: JsonObject, listKey: string, singleKey: string): readonly string[] {
  const listed = defined(f.objects(status, listKey, ['status']).map(({ item, path }) => f.str(item, 'ip', path)));
  if (listed.length > 0) return listed;
  const one = f.str(status, singleKey, ['status']);
  return one ? [one] : NO_STRINGS;
}

/** core/v1 Pod → {@link Pod}. */
export function toPod(o: JsonObject, ctx: ConvertContext): Pod {
  const f = new Fields(ctx);
  const spec = f.obj(o, 'spec', []) ?? {};
  const status = f.obj(o, 'status', []) ?? {};
  const containerPorts: ContainerPort[] = [];
  for (const { item: c, path } of f.objects(spec, 'containers', ['spec'])) {
    for (const { item: p, path: pp } of f.objects(c, 'ports', path)) {
      const containerPort = f.int(p, 'containerPort', pp);
      if (containerPort === undefined) continue;
      containerPorts.push({ name: f.str(p, 'name', pp), containerPort, protocol: f.protocol(p, 'protocol', pp) });
    }
  }
  return {
    kind: 'Pod',
    ...base(f, o, ctx),
    podIPs: ipList(f, status, 'podIPs', 'podIP'),
    hostIPs: ipList(f, status, 'hostIPs', 'hostIP'),
    nodeName: f.str(spec, 'nodeName', ['spec']),
    phase: f.oneOf(status, 'phase', ['status'], POD_PHASES),
    hostNetwork: f.bool(spec, 'hostNetwork', ['spec']) ?? false,
    ready: readyCondition(f, status),
    containerPorts: shared(containerPorts.slice()),
  };
}

/** core/v1 Node → {@link Node}. */
export function toNode(o: JsonObject, ctx: ConvertContext): Node {
  const f = new Fields(ctx);
  const b = base(f, o, ctx);
  const spec = f.obj(o, 'spec', []) ?? {};
  const status = f.obj(o, 'status', []) ?? {};
  const addresses: NodeAddress[] = [];
  for (const { item, path } of f.objects(status, 'addresses', ['status'])) {
    const type = f.oneOf(item, 'type', path, NODE_ADDRESS_TYPES);
    const address = f.str(item, 'address', path);
    if (type && address !== undefined) addresses.push({ type, address });
  }
  const cidrs = f.strList(spec, 'podCIDRs', ['spec']);
  const cidr = f.str(spec, 'podCIDR', ['spec']);
  return {
    kind: 'Node',
    ...b,
    addresses: shared(addresses.slice()),
    podCIDRs: cidrs.length > 0 ? cidrs : cidr ? [cidr] : NO_STRINGS,
    zone: b.meta.labels[LABEL_TOPOLOGY_ZONE],
    ready: readyCondition(f, status),
  };
}

/** networking.k8s.io/v1 ServiceCIDR → {@link ServiceCIDR}. */
export function toServiceCIDR(o: JsonObject, ctx: ConvertContext): ServiceCIDR {
  const f = new Fields(ctx);
  const spec = f.obj(o, 'spec', []) ?? {};
  const status = f.obj(o, 'status', []) ?? {};
  return { kind: 'ServiceCIDR', ...base(f, o, ctx), cidrs: f.strList(spec, 'cidrs', ['spec']), ready: readyCondition(f, status) };
}

/** networking.k8s.io/v1 IPAddress → {@link IPAddress}; `parentRef` needs `resource` and `name`. */
export function toIPAddress(o: JsonObject, ctx: ConvertContext): IPAddress {
  const f = new Fields(ctx);
  const b = base(f, o, ctx);
  const spec = f.obj(o, 'spec', []) ?? {};
  const pp = ['spec', 'parentRef'];
  const ref = f.obj(spec, 'parentRef', ['spec']);
  const resource = ref ? f.str(ref, 'resource', pp) : undefined;
  const name = ref ? f.str(ref, 'name', pp) : undefined;
  if (ref && (resource === undefined || name === undefined)) f.missing(pp, 'resource or name');
  const parentRef = ref && resource !== undefined && name !== undefined
    ? { group: f.str(ref, 'group', pp) ?? '', resource, namespace: f.str(ref, 'namespace', pp) ?? '', name }
    : undefined;
  return { kind: 'IPAddress', ...b, address: b.meta.name, parentRef };
}

/**
 * Converts one API object. `kind` is the object's kind (already resolved by the caller,
 * which may have inferred it); kinds other than Service, EndpointSlice, Pod, Node, ServiceCIDR and IPAddress
 * become `unknown` objects kept whole. A Service or EndpointSlice is read by
 * src/parsers/k8s-convert-fast.ts when it holds nothing to report (the same object), else
 * by {@link toService} / {@link toEndpointSlice}.
 */
export function toK8sObject(o: JsonObject, kind: string, ctx: ConvertContext): K8sObject {
  switch (kind) {
    // The well-formed common case without field paths; anything to report goes the full way.
    case 'Service':
      return serviceFast(o, ctx) ?? toService(o, ctx);
    case 'EndpointSlice':
      return endpointSliceFast(o, ctx) ?? toEndpointSlice(o, ctx);
    case 'Pod':
      return toPod(o, ctx);
    case 'Node':
      return toNode(o, ctx);
    case 'ServiceCIDR':
      return toServiceCIDR(o, ctx);
    case 'IPAddress':
      return toIPAddress(o, ctx);
    default: {
      const f = new Fields(ctx);
      return { kind: 'unknown', apiKind: kind, ...base(f, o, ctx) };
    }
  }
}
