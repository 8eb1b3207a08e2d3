/**
 * What `trace` reads of a replay's API objects: a walk to one destination needs only the
 * Services that can have it as a frontend, their EndpointSlices, and the objects that place
 * the node and the client (Nodes, Pods, the rest), so converting the other Services and
 * slices of a large capture is wasted work. {@link apiTextFor} narrows the text of one JSON
 * `List` (what `nodescope capture` and `kubectl get -o json` write) to those items; any
 * other text is returned as it is.
 *
 * A Service is kept when it may matter to the walk's document (src/trace/with-expectation.ts,
 * src/analysis/expectation-lookup.ts, src/analysis/iptables-faults.ts): a string in it holds
 * the destination address (ClusterIPs, externalIPs, LB ingress), a port of it has the
 * destination port as its nodePort, or it asks for session affinity (the header's
 * affinity-timeout note reads every such Service). Every Service of a kept name is kept (a
 * duplicate must still replace the earlier one), and every slice naming such a name or none.
 * The test is a superset (text containment): keeping too much costs time, never an answer.
 * The List is read item by item (src/parsers/json-list.ts): only the Services whose raw text
 * may pass the test, and the values the choice reads (kind, name, the slice's label), are
 * parsed; the kept items' own text makes the narrowed List. Pure.
 */
import { fieldText, scanJsonList, listHead, type JsonList } from '../parsers/json-list.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

/** The destination of a walk: a dotted-quad IPv4 address and the port (null for ICMP). */
export interface FrontendQuery {
  readonly address: string;
  readonly port: number | null;
}

/** The label an EndpointSlice names its Service by (discovery.k8s.io/v1). */
const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/** True when a string anywhere in `v` contains `needle` (iterative: no depth limit). */
function holdsText(v: Json, needle: string): boolean {
  const stack: Json[] = [v];
  while (stack.length > 0) {
    const x = stack.pop()!;
    if (typeof x === 'string') {
      if (x.includes(needle)) return true;
    } else if (Array.isArray(x)) {
      stack.push(...x);
    } else if (isObject(x)) {
      for (const k in x) stack.push(x[k]!);
    }
  }
  return false;
}

/** The Service may be the walk's (see the module comment). */
function mayMatter(svc: JsonObject, q: FrontendQuery): boolean {
  const spec = isObject(svc['spec']) ? svc['spec'] : {};
  const affinity = spec['sessionAffinity'];
  if (affinity !== undefined && affinity !== 'None') return true;
  const ports = Array.isArray(spec['ports']) ? spec['ports'] : [];
  if (q.port !== null && ports.some((p) => isObject(p) && p['nodePort'] !== undefined && Number(p['nodePort']) === q.port)) return true;
  return holdsText(svc, q.address);
}

const nameOf = (o: JsonObject): unknown => (isObject(o['metadata']) ? o['metadata']['name'] : undefined);

/** What {@link apiTextFor} reads of each item without parsing it. */
const WATCH = [['kind'], ['metadata', 'name'], ['metadata', 'labels', SERVICE_NAME_LABEL], ['spec', 'sessionAffinity'], ['spec', 'ports']] as const;
const [KIND, NAME, SERVICE, AFFINITY, PORTS] = [0, 1, 2, 3, 4] as const;

/** The indexes at which `needle` occurs in `text`, ascending. */
function occurrences(text: string, needle: string): number[] {
  const out: number[] = [];
  for (let at = text.indexOf(needle); at >= 0; at = text.indexOf(needle, at + needle.length)) out.push(at);
  return out;
}

/** True when one of the ascending `at` lies in `[start, end)`; `cursor.i` moves on (items come in text order). */
function within(at: readonly number[], cursor: { i: number }, start: number, end: number): boolean {
  while (cursor.i < at.length && at[cursor.i]! < start) cursor.i++;
  return cursor.i < at.length && at[cursor.i]! < end;
}

/**
 * {@link apiTextFor} over the scanned items of `list`: the same choice without parsing every
 * item. A Service is parsed (and tested as {@link mayMatter} does) only when its raw text may
 * pass: it holds the address or an escape, its `spec.sessionAffinity` is not `"None"`, or its
 * ports name a nodePort. Null when the reading meets anything {@link apiTextForParsed} would
 * judge otherwise (then the caller parses the whole text).
 */
function apiTextForScanned(text: string, list: JsonList, q: FrontendQuery): string | null {
  const head = JSON.parse(listHead(text, list)) as unknown;
  if (!isObject(head) || head['kind'] !== 'List') return text;
  const value = (item: JsonList['items'][number], w: number): unknown => {
    const raw = fieldText(text, item, w);
    return raw === undefined ? undefined : (JSON.parse(raw) as unknown);
  };
  const kinds = list.items.map((item) => value(item, KIND));
  if (!kinds.every((k) => typeof k === 'string' && k !== '')) return text;
  const address = occurrences(text, q.address);
  const escapes = occurrences(text, '\\');
  const [a, e] = [{ i: 0 }, { i: 0 }];
  const names = new Set<unknown>();
  for (let i = 0; i < list.items.length; i++) {
    if (kinds[i] !== 'Service') continue;
    const item = list.items[i]!;
    const affinity = fieldText(text, item, AFFINITY);
    const ports = fieldText(text, item, PORTS);
    const may = within(address, a, item.start, item.end) || within(escapes, e, item.start, item.end) ||
      (affinity !== undefined && JSON.parse(affinity) !== 'None') || (q.port !== null && ports !== undefined && ports.includes('nodePort'));
    if (!may || !mayMatter(JSON.parse(text.slice(item.start, item.end)) as JsonObject, q)) continue;
    const name = value(item, NAME);
    // An object as a name is equal only to itself: the whole reading decides that case.
    if (typeof name === 'object' && name !== null) return null;
    names.add(name);
  }
  const kept = list.items.filter((item, i) => {
    if (kinds[i] === 'Service') return names.has(value(item, NAME));
    if (kinds[i] !== 'EndpointSlice') return true;
    const service = value(item, SERVICE);
    return typeof service !== 'string' || names.has(service);
  });
  if (kept.length === list.items.length) return text;
  return `${text.slice(0, list.open + 1)}${kept.map((item) => text.slice(item.start, item.end)).join(',')}${text.slice(list.close)}`;
}

/**
 * `text` narrowed to what a walk to `q` reads (see the module comment); `text` itself when
 * it is not one JSON `List` whose items all carry a kind, or when nothing is left out.
 * Never throws.
 */
export function apiTextFor(text: string, q: FrontendQuery): string {
  const list = scanJsonList(text, WATCH);
  return (list && apiTextForScanned(text, list, q)) ?? apiTextForParsed(text, q);
}

/** {@link apiTextFor} by one `JSON.parse` of the whole text (any JSON the item scan does not read). */
export function apiTextForParsed(text: string, q: FrontendQuery): string {
  try {
    const list = JSON.parse(text) as unknown;
    if (!isObject(list) || list['kind'] !== 'List' || !Array.isArray(list['items'])) return text;
    const items = list['items'];
    if (!items.every((i) => isObject(i) && typeof i['kind'] === 'string' && i['kind'] !== '')) return text;
    const objects = items as JsonObject[];
    const names = new Set<unknown>();
    for (const o of objects) if (o['kind'] === 'Service' && mayMatter(o, q)) names.add(nameOf(o));
    const kept = objects.filter((o) => {
      if (o['kind'] === 'Service') return names.has(nameOf(o));
      if (o['kind'] !== 'EndpointSlice') return true;
      const metadata = isObject(o['metadata']) ? o['metadata'] : {};
      const service = isObject(metadata['labels']) ? metadata['labels'][SERVICE_NAME_LABEL] : undefined;
      return typeof service !== 'string' || names.has(service);
    });
    return kept.length === items.length ? text : JSON.stringify({ ...list, items: kept });
  } catch {
    // A value nested too deep for JSON.stringify: the parser says what it can of the whole text.
    return text;
  }
}
