/**
 * The API objects `show services` reads, straight from the bytes of an api.json: every object
 * `parseK8sObjects` (src/parsers/k8s-objects.ts) gives, except that an EndpointSlice's `raw`
 * is the one empty {@link UNREAD_RAW} — nothing `show services` prints or derives reads it,
 * and its endpoints are the bulk of a large capture. {@link servicesApiOf} is that narrowing.
 *
 * The reference is {@link servicesApiWhole}: `parseK8sObjects` of the text (the bytes decoded
 * as a replay decodes them: src/sources/read-text.ts `textOfBytes`), narrowed.
 * {@link readServicesApiBytes} gives exactly that for the common shape only — one JSON `kind:
 * List` in the plain subset src/parsers/json-bytes.ts reads (no escape, no byte beyond ASCII,
 * integers only), whose items are Services and EndpointSlices the straight converter reads
 * with no finding (src/parsers/k8s-convert-fast.ts) and Nodes, Pods, ServiceCIDRs and
 * IPAddresses the full converter reads with no finding, each named once, each slice's
 * `addressType` before its `endpoints` — and null on anything else: the caller then decodes
 * the text and parses it whole (src/collect/services-api.ts). An EndpointSlice's endpoints are read from the
 * bytes into the typed model without their JSON objects; everything else is read as
 * `JSON.parse` would make it and converted by the converters the whole parse uses. Pure;
 * never throws.
 */
import { isIP } from 'node:net';
import type { ParseResult } from '../model/diagnostics.js';
import { UNREAD_KINDS_KEY, type AddressType, type ApiObjects, type Endpoint, type EndpointSlice, type IPAddress, type JsonObject, type JsonValue, type K8sObject, type Node, type Pod, type Service, type ServiceCIDR } from '../model/k8s.js';
import { endpointHintsAndRef, endpointSliceFast, serviceFast } from './k8s-convert-fast.js';
import { isJsonObject, toK8sObject } from './k8s-convert.js';
import { parseK8sObjects } from './k8s-objects.js';
import { ADDRESS_TYPES, NO_STRINGS } from './k8s-values.js';
import { JsonBytesCursor, outsideSubset } from './json-bytes.js';

/** The `raw` of every EndpointSlice `show services` reads (frozen, empty). */
export const UNREAD_RAW: JsonObject = Object.freeze({});

/** What `show services` reads of `api`: the same objects, each EndpointSlice's `raw` {@link UNREAD_RAW}. Pure. */
export function servicesApiOf(api: ApiObjects): ApiObjects {
  return { ...api, endpointSlices: api.endpointSlices.map((s) => ({ ...s, raw: UNREAD_RAW })) };
}

/** The reference: `parseK8sObjects(text, origin)`, narrowed by {@link servicesApiOf}, its diagnostics all kept. */
export function servicesApiWhole(text: string, origin: string): ParseResult<ApiObjects> {
  const whole = parseK8sObjects(text, origin);
  return { value: servicesApiOf(whole.value), diagnostics: whole.diagnostics };
}

/**
 * {@link servicesApiWhole} of `bytes` for the common shape (see the module's comment), with
 * no diagnostics; null for any other shape. Never throws.
 */
export function readServicesApiBytes(bytes: Uint8Array, origin: string): ParseResult<ApiObjects> | null {
  try {
    return readList(new JsonBytesCursor(bytes), bytes, origin);
  } catch {
    // Outside the subset, a value a converter gives up on, or anything unforeseen: the whole parse decides.
    return null;
  }
}

/** Kinds read with the full converter (few objects each); a finding sends the file to the whole parse. */
const FULL_CONVERTED = new Set(['Node', 'Pod', 'ServiceCIDR', 'IPAddress']);

function readList(c: JsonBytesCursor, bytes: Uint8Array, origin: string): ParseResult<ApiObjects> | null {
  // `parseK8sObjects` reads text starting otherwise (a byte-order mark, `[`, YAML) another way.
  if (c.blanks() !== 0x7b) return null;
  let line = 1;
  for (let i = 0; i < c.p; i++) if (bytes[i] === 0x0a) line++;
  // All items of a JSON List carry the List's line, as in the whole parse.
  const source = { origin, line };
  c.p++;
  const doc: Record<string, JsonValue> = {};
  let items: { o: JsonObject; endpoints: readonly Endpoint[] | undefined }[] | undefined;
  for (let key = c.key(true); key !== undefined; key = c.key(false)) {
    if (key === 'items') {
      if (items) return null;
      items = readItems(c);
    } else {
      if (key === '__proto__') return null;
      doc[key] = c.value(1);
    }
  }
  if (c.blanks() !== undefined) return null;
  if (doc['kind'] !== 'List' || !items) return null;
  const apiVersionHint = typeof doc['apiVersion'] === 'string' ? doc['apiVersion'] : undefined;
  const withVersion = <T extends K8sObject>(o: T): T => (o.apiVersion === undefined && apiVersionHint ? { ...o, apiVersion: apiVersionHint } : o);
  let finding = false;
  const ctx = { source, report: () => void (finding = true) };
  const keys = new Set<string>();
  const services: Service[] = [];
  const endpointSlices: EndpointSlice[] = [];
  const pods: Pod[] = [];
  const nodes: Node[] = [];
  const serviceCIDRs: ServiceCIDR[] = [];
  const ipAddresses: IPAddress[] = [];
  for (const { o, endpoints } of items) {
    const kind = o['kind'];
    const meta = o['metadata'];
    if (typeof kind !== 'string' || !isJsonObject(meta)) return null;
    const name = meta['name'];
    const namespace = meta['namespace'];
    if (typeof name !== 'string' || name === '' || (namespace !== undefined && typeof namespace !== 'string')) return null;
    const key = `${kind}/${namespace ?? ''}/${name}`;
    if (keys.has(key)) return null;
    keys.add(key);
    if (endpoints !== undefined && kind !== 'EndpointSlice') return null;
    if (kind === 'Service') {
      const service = serviceFast(o, { source });
      if (!service) return null;
      services.push(withVersion(service));
    } else if (kind === 'EndpointSlice') {
      // The slice without its endpoints (not in `o`: read apart), then the endpoints read from the bytes.
      const slice = endpointSliceFast(o, { source });
      if (!slice) return null;
      endpointSlices.push(withVersion({ ...slice, raw: UNREAD_RAW, endpoints: endpoints ?? NO_STRINGS as readonly never[] }));
    } else if (FULL_CONVERTED.has(kind)) {
      const obj = toK8sObject(o, kind, ctx);
      if (finding || obj.kind !== kind) return null;
      if (obj.kind === 'Node') nodes.push(withVersion(obj));
      else if (obj.kind === 'Pod') pods.push(withVersion(obj));
      else if (obj.kind === 'ServiceCIDR') serviceCIDRs.push(withVersion(obj));
      else if (obj.kind === 'IPAddress') ipAddresses.push(withVersion(obj));
    } else {
      return null;
    }
  }
  const unreadList = doc[UNREAD_KINDS_KEY];
  const unread = Array.isArray(unreadList) ? unreadList.filter((x): x is string => typeof x === 'string') : [];
  const value: ApiObjects = { services, endpointSlices, pods, nodes, serviceCIDRs, ipAddresses, others: [], ...(unread.length > 0 ? { unread } : {}) };
  return { value, diagnostics: [] };
}

/** The List's items: each an object as `JSON.parse` makes it, but an `endpoints` list read into the typed model apart. */
function readItems(c: JsonBytesCursor): { o: JsonObject; endpoints: readonly Endpoint[] | undefined }[] {
  if (!c.arrayOrNull()) return outsideSubset();
  const out: { o: JsonObject; endpoints: readonly Endpoint[] | undefined }[] = [];
  for (let first = true; c.element(first); first = false) {
    if (!c.objectOrNull()) return outsideSubset();
    const o: Record<string, JsonValue> = {};
    let endpoints: readonly Endpoint[] | undefined;
    for (let key = c.key(true); key !== undefined; key = c.key(false)) {
      if (key === 'endpoints') {
        endpoints = readEndpoints(c, addressTypeOf(o['addressType']));
      } else {
        // A slice's address type read after its endpoints (their family check needed it before), or `__proto__`.
        if ((key === 'addressType' && endpoints !== undefined) || key === '__proto__') return outsideSubset();
        o[key] = c.value(2);
      }
    }
    out.push({ o, endpoints });
  }
  return out;
}

/** `addressType` as k8s-convert-fast.ts reads it (`null` is IPv4); absent or any other value: give up (the converter reports those). */
function addressTypeOf(v: JsonValue | undefined): AddressType {
  if (v === null) return 'IPv4';
  if (typeof v === 'string' && (ADDRESS_TYPES as readonly string[]).includes(v)) return v as AddressType;
  return outsideSubset();
}

/** A slice's `endpoints` (`null` is none), each as k8s-convert-fast.ts's `endpoint` reads it; gives up where it does. */
function readEndpoints(c: JsonBytesCursor, addressType: AddressType): readonly Endpoint[] {
  if (!c.arrayOrNull()) return NO_STRINGS as readonly never[];
  const family = addressType === 'IPv4' ? 4 : 6;
  const out: Endpoint[] = [];
  for (let first = true; c.element(first); first = false) out.push(readEndpoint(c, addressType, family));
  return out.length === 0 ? (NO_STRINGS as readonly never[]) : out;
}

function readEndpoint(c: JsonBytesCursor, addressType: AddressType, family: number): Endpoint {
  if (!c.objectOrNull()) return outsideSubset();
  let addresses: readonly string[] = NO_STRINGS;
  let ready: boolean | null = null;
  let serving: boolean | null = null;
  let terminating: boolean | null = null;
  let hostname: string | undefined;
  let nodeName: string | undefined;
  let zone: string | undefined;
  // `hints` and `targetRef` (rare) as `JSON.parse` makes them, read by the straight converter's own code.
  let rare: Record<string, JsonValue> | undefined;
  for (let key = c.key(true); key !== undefined; key = c.key(false)) {
    switch (key) {
      case 'addresses':
        addresses = readStrings(c);
        break;
      case 'conditions':
        ready = serving = terminating = null;
        if (!c.objectOrNull()) break;
        for (let k = c.key(true); k !== undefined; k = c.key(false)) {
          if (k === 'ready') ready = c.booleanOrNull();
          else if (k === 'serving') serving = c.booleanOrNull();
          else if (k === 'terminating') terminating = c.booleanOrNull();
          else c.skip();
        }
        break;
      case 'hostname':
        hostname = c.stringOrNull();
        break;
      case 'nodeName':
        nodeName = c.stringOrNull();
        break;
      case 'zone':
        zone = c.stringOrNull();
        break;
      case 'hints':
      case 'targetRef':
        (rare ??= {})[key] = c.value(4);
        break;
      default:
        c.skip();
    }
  }
  if (addressType !== 'FQDN') for (const a of addresses) if (isIP(a) !== family) outsideSubset();
  const refs = rare ? endpointHintsAndRef(rare) : NO_REFS;
  if (!refs) return outsideSubset();
  return { addresses, ready, serving, terminating, hostname, nodeName, zone, hintsForZones: refs.hintsForZones, hintsForNodes: refs.hintsForNodes, targetRef: refs.targetRef };
}

/** An endpoint without `hints` or `targetRef`. */
const NO_REFS = { hintsForZones: NO_STRINGS, hintsForNodes: NO_STRINGS, targetRef: undefined };

/** A list of strings (`null` and empty: the shared empty list); throws on anything else. */
function readStrings(c: JsonBytesCursor): readonly string[] {
  if (!c.arrayOrNull()) return NO_STRINGS;
  const out: string[] = [];
  for (let first = true; c.element(first); first = false) {
    if (c.blanks() !== 0x22) outsideSubset();
    out.push(c.string());
  }
  return out.length === 0 ? NO_STRINGS : out;
}
