/**
 * The straight conversion of a well-formed Service or EndpointSlice: the same typed object
 * src/parsers/k8s-convert.ts (`toService`, `toEndpointSlice`) makes, read without a field
 * path per value or an `{item, path}` pair per list element (a large capture has 50,000
 * endpoints: those made a fifth of the conversion's time and much of its garbage).
 *
 * Field names, defaults and accepted values are those of k8s-convert.ts (k8s.io/api core/v1
 * and discovery/v1 `types.go`). A path is only needed to report a finding, so this reader
 * reports none: on the first value the full converter would report (a wrong type, an
 * unknown enum value, a missing port, an invalid endpoint address, a `none` clusterIP, …) or
 * keep in another shape (a label map with non-string values) it gives up and returns
 * `undefined`, and the caller converts with the full converter, which reports. Never throws
 * anything else than what the full converter would.
 */
import { isIP } from 'node:net';
import type {
  AddressType,
  Endpoint,
  EndpointPort,
  EndpointSlice,
  IpFamily,
  JsonObject,
  JsonValue,
  LoadBalancerIngress,
  ObjectMeta,
  Protocol,
  Service,
  ServicePort,
  SourceRef,
  TargetRef,
} from '../model/k8s.js';
import { LABEL_MANAGED_BY, LABEL_SERVICE_NAME, LABEL_SERVICE_PROXY_NAME } from '../model/k8s.js';
import { ADDRESS_TYPES, AFFINITIES, IP_FAMILIES, IP_FAMILY_POLICIES, NO_MAP, NO_STRINGS, PROTOCOLS, SERVICE_TYPES, TRAFFIC_POLICIES } from './k8s-values.js';

/**
 * What this reader needs of k8s-convert.ts's `ConvertContext` (that module calls this one:
 * the shape is restated here rather than imported back): where the object came from, and
 * the capture's `SharedValues` when the JSON is the parser's own.
 */
export interface FastContext {
  readonly source: SourceRef;
  readonly share?: {
    /** Shares the repeated strings of an object's top level and metadata. */
    meta(o: JsonObject, m: JsonObject): void;
    /** The one instance of equal endpoint `conditions`, or `o` itself. */
    conditions(o: JsonObject): JsonObject;
  };
}

/** Thrown inside this module only: the value is one the full converter reports or reshapes. */
const GIVE_UP = Symbol('give up');

function giveUp(): never {
  throw GIVE_UP;
}

const NO_OBJECT: JsonObject = Object.freeze({});


function isObject(v: JsonValue | undefined): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** An optional object: absent and `null` are `undefined`. */
function obj(v: JsonValue | undefined): JsonObject | undefined {
  if (v === undefined || v === null) return undefined;
  if (isObject(v)) return v;
  return giveUp();
}

/** An optional list: absent and `null` are empty. */
function arr(v: JsonValue | undefined): readonly JsonValue[] {
  if (v === undefined || v === null) return NO_STRINGS;
  if (Array.isArray(v)) return v as readonly JsonValue[];
  return giveUp();
}

function str(v: JsonValue | undefined): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'string') return v;
  return giveUp();
}

function int(v: JsonValue | undefined): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'number' && Number.isInteger(v)) return v;
  return giveUp();
}

function bool(v: JsonValue | undefined): boolean | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'boolean') return v;
  return giveUp();
}

/** A condition: absent or `null` is `null`. */
function tri(v: JsonValue | undefined): boolean | null {
  if (v === undefined || v === null) return null;
  if (typeof v === 'boolean') return v;
  return giveUp();
}

function oneOf<T extends string>(v: JsonValue | undefined, allowed: readonly string[]): T | undefined {
  const s = str(v);
  if (s === undefined) return undefined;
  if (allowed.includes(s)) return s as T;
  return giveUp();
}

/** A list of strings: the raw list itself (the shared empty list when empty). */
function strList(v: JsonValue | undefined): readonly string[] {
  const a = arr(v);
  for (let i = 0; i < a.length; i++) if (typeof a[i] !== 'string') giveUp();
  return a.length === 0 ? NO_STRINGS : (a as readonly string[]);
}

/** A string map whose values are all strings: the raw object itself; `null` is the shared empty map. */
function strMap(v: JsonValue | undefined): Readonly<Record<string, string>> | undefined {
  if (v === null) return NO_MAP;
  const m = obj(v);
  if (m === undefined) return undefined;
  for (const k in m) if (typeof m[k] !== 'string') giveUp();
  return m as Readonly<Record<string, string>>;
}

/** Element `i` of a list of objects. */
function objAt(a: readonly JsonValue[], i: number): JsonObject {
  const v = a[i];
  return isObject(v) ? v : giveUp();
}

function readMeta(o: JsonObject, ctx: FastContext): ObjectMeta {
  const m = obj(o['metadata']) ?? {};
  ctx.share?.meta(o, m);
  return {
    namespace: str(m['namespace']) ?? '',
    name: str(m['name']) ?? '',
    uid: str(m['uid']),
    resourceVersion: str(m['resourceVersion']),
    creationTimestamp: str(m['creationTimestamp']),
    deletionTimestamp: str(m['deletionTimestamp']),
    labels: strMap(m['labels']) ?? NO_MAP,
    annotations: strMap(m['annotations']) ?? NO_MAP,
  };
}

function servicePort(p: JsonObject): ServicePort {
  const port = int(p['port']);
  if (port === undefined) return giveUp();
  const tp = p['targetPort'];
  let targetPort: number | string = port;
  if (typeof tp === 'number' || (typeof tp === 'string' && tp !== '')) targetPort = tp;
  else if (tp !== undefined && tp !== null && tp !== '') giveUp();
  return {
    name: str(p['name']) ?? '',
    protocol: oneOf<Protocol>(p['protocol'], PROTOCOLS) ?? 'TCP',
    port,
    targetPort,
    nodePort: int(p['nodePort']),
    appProtocol: str(p['appProtocol']),
  };
}

function ingressList(lb: JsonObject): readonly LoadBalancerIngress[] {
  const a = arr(lb['ingress']);
  if (a.length === 0) return NO_STRINGS as readonly never[];
  const out = new Array<LoadBalancerIngress>(a.length);
  for (let i = 0; i < a.length; i++) {
    const item = objAt(a, i);
    out[i] = { ip: str(item['ip']), hostname: str(item['hostname']), ipMode: str(item['ipMode']) };
  }
  return out;
}

/** Every address `none` in any case, reported by the full converter unless it is `None`. */
function isHeadless(all: readonly string[]): boolean {
  let headless = false;
  for (const ip of all) {
    if (ip.toLowerCase() !== 'none') continue;
    if (ip !== 'None') giveUp();
    headless = true;
  }
  return headless;
}

function serviceOrGiveUp(o: JsonObject, ctx: FastContext): Service {
  const spec = obj(o['spec']) ?? NO_OBJECT;
  const status = obj(o['status']) ?? NO_OBJECT;
  const clusterIP = str(spec['clusterIP']);
  const listed = strList(spec['clusterIPs']);
  const all: readonly string[] = listed.length > 0 ? listed : clusterIP !== undefined && clusterIP !== '' ? [clusterIP] : NO_STRINGS;
  const headless = isHeadless(all);
  const rawPorts = arr(spec['ports']);
  let ports: readonly ServicePort[] = NO_STRINGS as readonly never[];
  if (rawPorts.length > 0) {
    const out = new Array<ServicePort>(rawPorts.length);
    for (let i = 0; i < rawPorts.length; i++) out[i] = servicePort(objAt(rawPorts, i));
    ports = out;
  }
  const affinityConfig = obj(spec['sessionAffinityConfig']);
  const clientIP = affinityConfig ? obj(affinityConfig['clientIP']) : undefined;
  const ingress = ingressList(obj(status['loadBalancer']) ?? NO_OBJECT);
  const families = strList(spec['ipFamilies']);
  for (const v of families) if (!(IP_FAMILIES as readonly string[]).includes(v)) giveUp();
  const isAllocated = (ip: string): boolean => ip !== '' && ip.toLowerCase() !== 'none';
  const apiVersion = str(o['apiVersion']);
  const meta = readMeta(o, ctx);
  return {
    kind: 'Service',
    apiVersion,
    meta,
    raw: o,
    source: ctx.source,
    type: oneOf(spec['type'], SERVICE_TYPES) ?? 'ClusterIP',
    clusterIP,
    clusterIPs: all.every(isAllocated) ? all : all.filter(isAllocated),
    headless,
    ipFamilies: families as readonly IpFamily[],
    ipFamilyPolicy: oneOf(spec['ipFamilyPolicy'], IP_FAMILY_POLICIES),
    ports,
    selector: strMap(spec['selector']),
    externalName: str(spec['externalName']),
    externalIPs: strList(spec['externalIPs']),
    loadBalancerIngress: ingress,
    sessionAffinity: oneOf(spec['sessionAffinity'], AFFINITIES) ?? 'None',
    sessionAffinityTimeoutSeconds: clientIP ? int(clientIP['timeoutSeconds']) : undefined,
    externalTrafficPolicy: oneOf(spec['externalTrafficPolicy'], TRAFFIC_POLICIES),
    internalTrafficPolicy: oneOf(spec['internalTrafficPolicy'], TRAFFIC_POLICIES),
    trafficDistribution: str(spec['trafficDistribution']),
    publishNotReadyAddresses: bool(spec['publishNotReadyAddresses']) ?? false,
    healthCheckNodePort: int(spec['healthCheckNodePort']),
    loadBalancerSourceRanges: strList(spec['loadBalancerSourceRanges']),
    serviceProxyName: meta.labels[LABEL_SERVICE_PROXY_NAME],
  };
}

/** `hints.forZones[].name` / `hints.forNodes[].name`; elements without a name are left out, as the full converter does. */
function hintNames(hints: JsonObject | undefined, key: string): readonly string[] {
  if (!hints) return NO_STRINGS;
  const a = arr(hints[key]);
  if (a.length === 0) return NO_STRINGS;
  const names: string[] = [];
  for (let i = 0; i < a.length; i++) {
    const name = str(objAt(a, i)['name']);
    if (name !== undefined) names.push(name);
  }
  return names.length === 0 ? NO_STRINGS : names.slice();
}

function targetRef(e: JsonObject): TargetRef | undefined {
  const t = obj(e['targetRef']);
  if (!t) return undefined;
  return { kind: str(t['kind']), namespace: str(t['namespace']), name: str(t['name']) ?? '', uid: str(t['uid']) };
}

function endpoint(e: JsonObject, ctx: FastContext, addressType: AddressType, family: number): Endpoint {
  const addresses = strList(e['addresses']);
  if (addressType !== 'FQDN') for (const a of addresses) if (isIP(a) !== family) giveUp();
  const rawCond = e['conditions'];
  let cond = obj(rawCond) ?? NO_OBJECT;
  if (ctx.share && rawCond !== undefined && rawCond !== null) {
    cond = ctx.share.conditions(cond);
    (e as Record<string, JsonValue>)['conditions'] = cond;
  }
  const hints = obj(e['hints']);
  return {
    addresses,
    ready: tri(cond['ready']),
    serving: tri(cond['serving']),
    terminating: tri(cond['terminating']),
    hostname: str(e['hostname']),
    nodeName: str(e['nodeName']),
    zone: str(e['zone']),
    hintsForZones: hintNames(hints, 'forZones'),
    hintsForNodes: hintNames(hints, 'forNodes'),
    targetRef: targetRef(e),
  };
}

function endpointPort(p: JsonObject): EndpointPort {
  return {
    name: str(p['name']) ?? null,
    protocol: oneOf<Protocol>(p['protocol'], PROTOCOLS) ?? 'TCP',
    port: int(p['port']) ?? null,
    appProtocol: str(p['appProtocol']),
  };
}

function sliceOrGiveUp(o: JsonObject, ctx: FastContext): EndpointSlice {
  const apiVersion = str(o['apiVersion']);
  const meta = readMeta(o, ctx);
  const rawType = o['addressType'];
  // Absent is reported (`missing-address-type`); `null` is read as IPv4 without a word.
  if (rawType === undefined) giveUp();
  const addressType = oneOf<AddressType>(rawType, ADDRESS_TYPES) ?? 'IPv4';
  const rawPorts = arr(o['ports']);
  let ports: readonly EndpointPort[] = NO_STRINGS as readonly never[];
  if (rawPorts.length > 0) {
    const out = new Array<EndpointPort>(rawPorts.length);
    for (let i = 0; i < rawPorts.length; i++) out[i] = endpointPort(objAt(rawPorts, i));
    ports = out;
  }
  const rawEndpoints = arr(o['endpoints']);
  let endpoints: readonly Endpoint[] = NO_STRINGS as readonly never[];
  if (rawEndpoints.length > 0) {
    const family = addressType === 'IPv4' ? 4 : 6;
    const out = new Array<Endpoint>(rawEndpoints.length);
    for (let i = 0; i < rawEndpoints.length; i++) out[i] = endpoint(objAt(rawEndpoints, i), ctx, addressType, family);
    endpoints = out;
  }
  return {
    kind: 'EndpointSlice',
    apiVersion,
    meta,
    raw: o,
    source: ctx.source,
    addressType,
    serviceName: meta.labels[LABEL_SERVICE_NAME],
    managedBy: meta.labels[LABEL_MANAGED_BY],
    ports,
    endpoints,
  };
}

/**
 * core/v1 Service → {@link Service}, equal to `toService(o, ctx)`, or `undefined` when the
 * object holds anything `toService` would report or reshape (then call it). Shares values
 * through `ctx.share` as `toService` does; reports nothing.
 */
export function serviceFast(o: JsonObject, ctx: FastContext): Service | undefined {
  try {
    return serviceOrGiveUp(o, ctx);
  } catch (e) {
    if (e === GIVE_UP) return undefined;
    throw e;
  }
}

/**
 * discovery/v1 EndpointSlice → {@link EndpointSlice}, equal to `toEndpointSlice(o, ctx)`,
 * or `undefined` when the object holds anything `toEndpointSlice` would report or reshape
 * (then call it). Shares values through `ctx.share` as `toEndpointSlice` does; reports nothing.
 */
export function endpointSliceFast(o: JsonObject, ctx: FastContext): EndpointSlice | undefined {
  try {
    return sliceOrGiveUp(o, ctx);
  } catch (e) {
    if (e === GIVE_UP) return undefined;
    throw e;
  }
}
