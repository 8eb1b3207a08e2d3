/**
 * Check-only forms of src/parsers/k8s-convert-fast.ts's straight conversions: whether a
 * Service or EndpointSlice object is one that `serviceFast` / `endpointSliceFast` read
 * without giving up — so one the full converter (src/parsers/k8s-convert.ts) reads with no
 * finding — told without building the typed object. For a reader that needs only the
 * diagnostics of these kinds (src/parsers/k8s-rules-api.ts).
 *
 * Every test here is the one the straight conversion makes on the same field (k8s.io/api
 * core/v1 and discovery/v1 `types.go`, the values of k8s-values.ts), so `true` implies the
 * straight conversion succeeds; it may say `false` more often (the caller then reads the
 * whole way). Pure; never throws.
 */
import { isIP } from 'node:net';
import type { JsonObject, JsonValue } from '../model/k8s.js';
import { isJsonObject } from './k8s-convert.js';
import { ADDRESS_TYPES, AFFINITIES, IP_FAMILIES, IP_FAMILY_POLICIES, PROTOCOLS, SERVICE_TYPES, TRAFFIC_POLICIES } from './k8s-values.js';

const absent = (v: JsonValue | undefined): v is undefined | null => v === undefined || v === null;
const optObj = (v: JsonValue | undefined): boolean => absent(v) || isJsonObject(v);
const optArr = (v: JsonValue | undefined): boolean => absent(v) || Array.isArray(v);
const optStr = (v: JsonValue | undefined): boolean => absent(v) || typeof v === 'string';
const optInt = (v: JsonValue | undefined): boolean => absent(v) || (typeof v === 'number' && Number.isInteger(v));
const optBool = (v: JsonValue | undefined): boolean => absent(v) || typeof v === 'boolean';
const optOneOf = (v: JsonValue | undefined, allowed: readonly string[]): boolean => absent(v) || (typeof v === 'string' && allowed.includes(v));

/** An optional list of strings. */
function optStrList(v: JsonValue | undefined): boolean {
  if (absent(v)) return true;
  if (!Array.isArray(v)) return false;
  for (let i = 0; i < v.length; i++) if (typeof v[i] !== 'string') return false;
  return true;
}

/** An optional map of strings (`null` included). */
function optStrMap(v: JsonValue | undefined): boolean {
  if (absent(v)) return true;
  if (!isJsonObject(v)) return false;
  for (const k in v) if (typeof v[k] !== 'string') return false;
  return true;
}

/** A list's elements, each an object passing `each`. */
function everyObject(a: readonly JsonValue[], each: (o: JsonObject) => boolean): boolean {
  for (let i = 0; i < a.length; i++) {
    const v = a[i];
    if (!isJsonObject(v) || !each(v)) return false;
  }
  return true;
}

/** An optional list whose elements are objects passing `each`. */
function optObjects(v: JsonValue | undefined, each: (o: JsonObject) => boolean): boolean {
  if (absent(v)) return true;
  return Array.isArray(v) && everyObject(v, each);
}

function metaClean(o: JsonObject): boolean {
  const m = o['metadata'];
  if (absent(m)) return true;
  if (!isJsonObject(m)) return false;
  return optStr(m['namespace']) && optStr(m['name']) && optStr(m['uid']) && optStr(m['resourceVersion']) && optStr(m['creationTimestamp']) && optStr(m['deletionTimestamp']) && optStrMap(m['labels']) && optStrMap(m['annotations']);
}

function servicePortClean(p: JsonObject): boolean {
  const port = p['port'];
  if (absent(port) || !optInt(port)) return false;
  const tp = p['targetPort'];
  if (!(typeof tp === 'number' || typeof tp === 'string' || tp === undefined || tp === null)) return false;
  return optStr(p['name']) && optOneOf(p['protocol'], PROTOCOLS) && optInt(p['nodePort']) && optStr(p['appProtocol']);
}

const ingressClean = (i: JsonObject): boolean => optStr(i['ip']) && optStr(i['hostname']) && optStr(i['ipMode']);

/** The cluster IPs' `none` in any case other than `None` (the full converter reports it). */
function headlessClean(spec: JsonObject): boolean {
  const listed = spec['clusterIPs'];
  const all: readonly JsonValue[] = Array.isArray(listed) && listed.length > 0 ? listed : typeof spec['clusterIP'] === 'string' && spec['clusterIP'] !== '' ? [spec['clusterIP']] : [];
  for (const ip of all) if (typeof ip === 'string' && ip !== 'None' && ip.toLowerCase() === 'none') return false;
  return true;
}

/**
 * True when `serviceFast` reads `o` (a core/v1 Service) without giving up, i.e. the full
 * converter reports nothing for it; false when it might not.
 */
export function serviceClean(o: JsonObject): boolean {
  const specV = o['spec'];
  const statusV = o['status'];
  if (!optObj(specV) || !optObj(statusV)) return false;
  const spec: JsonObject = isJsonObject(specV) ? specV : {};
  const status: JsonObject = isJsonObject(statusV) ? statusV : {};
  if (!optStr(spec['clusterIP']) || !optStrList(spec['clusterIPs']) || !headlessClean(spec)) return false;
  if (!optObjects(spec['ports'], servicePortClean)) return false;
  const affinity = spec['sessionAffinityConfig'];
  if (!optObj(affinity)) return false;
  if (isJsonObject(affinity)) {
    const clientIP = affinity['clientIP'];
    if (!optObj(clientIP) || (isJsonObject(clientIP) && !optInt(clientIP['timeoutSeconds']))) return false;
  }
  const lb = status['loadBalancer'];
  if (!optObj(lb) || (isJsonObject(lb) && !optObjects(lb['ingress'], ingressClean))) return false;
  const families = spec['ipFamilies'];
  if (!optStrList(families)) return false;
  if (Array.isArray(families)) for (const f of families) if (!(IP_FAMILIES as readonly JsonValue[]).includes(f)) return false;
  return (
    optStr(o['apiVersion']) &&
    metaClean(o) &&
    optOneOf(spec['type'], SERVICE_TYPES) &&
    optOneOf(spec['ipFamilyPolicy'], IP_FAMILY_POLICIES) &&
    optStrMap(spec['selector']) &&
    optStr(spec['externalName']) &&
    optStrList(spec['externalIPs']) &&
    optOneOf(spec['sessionAffinity'], AFFINITIES) &&
    optOneOf(spec['externalTrafficPolicy'], TRAFFIC_POLICIES) &&
    optOneOf(spec['internalTrafficPolicy'], TRAFFIC_POLICIES) &&
    optStr(spec['trafficDistribution']) &&
    optBool(spec['publishNotReadyAddresses']) &&
    optInt(spec['healthCheckNodePort']) &&
    optStrList(spec['loadBalancerSourceRanges'])
  );
}

const endpointPortClean = (p: JsonObject): boolean => optStr(p['name']) && optOneOf(p['protocol'], PROTOCOLS) && optInt(p['port']) && optStr(p['appProtocol']);
const namedClean = (h: JsonObject): boolean => optStr(h['name']);
const optTri = optBool;

function endpointClean(e: JsonObject, fqdn: boolean, family: number): boolean {
  const addresses = e['addresses'];
  if (!optStrList(addresses)) return false;
  if (!fqdn && Array.isArray(addresses)) for (const a of addresses) if (isIP(a as string) !== family) return false;
  const cond = e['conditions'];
  if (!optObj(cond)) return false;
  if (isJsonObject(cond) && !(optTri(cond['ready']) && optTri(cond['serving']) && optTri(cond['terminating']))) return false;
  const hints = e['hints'];
  if (!optObj(hints)) return false;
  if (isJsonObject(hints) && !(optObjects(hints['forZones'], namedClean) && optObjects(hints['forNodes'], namedClean))) return false;
  const ref = e['targetRef'];
  if (!optObj(ref)) return false;
  if (isJsonObject(ref) && !(optStr(ref['kind']) && optStr(ref['namespace']) && optStr(ref['name']) && optStr(ref['uid']))) return false;
  return optStr(e['hostname']) && optStr(e['nodeName']) && optStr(e['zone']);
}

/**
 * True when `endpointSliceFast` reads `o` (a discovery/v1 EndpointSlice) without giving up,
 * i.e. the full converter reports nothing for it; false when it might not.
 */
export function endpointSliceClean(o: JsonObject): boolean {
  if (!optStr(o['apiVersion']) || !metaClean(o)) return false;
  const rawType = o['addressType'];
  // Absent is reported (`missing-address-type`); `null` is read as IPv4 without a word.
  if (rawType === undefined || !optOneOf(rawType, ADDRESS_TYPES)) return false;
  if (!optObjects(o['ports'], endpointPortClean)) return false;
  const fqdn = rawType === 'FQDN';
  const family = rawType === 'IPv6' ? 6 : 4;
  return optObjects(o['endpoints'], (e) => endpointClean(e, fqdn, family));
}
