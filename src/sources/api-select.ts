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
 * Pure.
 */

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

/**
 * `text` narrowed to what a walk to `q` reads (see the module comment); `text` itself when
 * it is not one JSON `List` whose items all carry a kind, or when nothing is left out.
 * Never throws.
 */
export function apiTextFor(text: string, q: FrontendQuery): string {
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
