/**
 * What `show rules` reads of the API objects, read without modelling the rest: the Nodes
 * (the node's name: build-snapshot.ts `resolveNodeName`), the Services whose
 * `sessionAffinity` is `ClientIP` (iptables-faults.ts `affinityTimeoutMismatches`), the
 * List's unread kinds (api-notes.ts) and the parse's diagnostics. Every other list is empty.
 *
 * The reference is {@link rulesApiWhole}: `parseK8sObjects` (src/parsers/k8s-objects.ts) of
 * the whole text, narrowed by {@link rulesApiOf}. {@link readRulesApi} gives exactly that for
 * the common shape only — one JSON `kind: List` (what `kubectl get -o json` and nodescope's
 * captures write) whose items are Services and EndpointSlices the straight converter reads
 * with no finding (src/parsers/k8s-clean.ts) and Nodes, Pods, ServiceCIDRs and IPAddresses read
 * with no finding, each named once
 * — and null on anything else (a syntax error, YAML, another top-level shape, a bad or
 * kindless item, another kind, a duplicate, a finding): {@link parseRulesApi} then parses the
 * whole text. Pure; never throws.
 */
import type { ParseResult } from '../model/diagnostics.js';
import { UNREAD_KINDS_KEY, type ApiObjects, type JsonObject, type JsonValue, type K8sObject, type Node, type Service } from '../model/k8s.js';
import { endpointSliceClean, serviceClean } from './k8s-clean.js';
import { serviceFast } from './k8s-convert-fast.js';
import { isJsonObject, toK8sObject } from './k8s-convert.js';
import { parseK8sObjects } from './k8s-objects.js';

/**
 * The API objects `show rules` reads of `api` (src/report/rules.ts, header.ts and what they
 * call), the rest left empty: every Node, the Services whose `sessionAffinity` is `ClientIP`,
 * `unread`. Nothing but `show rules` may read a snapshot built from it. Pure.
 */
export function rulesApiOf(api: ApiObjects): ApiObjects {
  return {
    services: api.services.filter((s) => s.sessionAffinity === 'ClientIP'),
    endpointSlices: [],
    pods: [],
    nodes: api.nodes,
    serviceCIDRs: [],
    ipAddresses: [],
    others: [],
    ...(api.unread !== undefined ? { unread: api.unread } : {}),
  };
}

/** The reference: the whole text parsed (`parseK8sObjects(text, origin)`), its objects narrowed by {@link rulesApiOf}, its diagnostics all kept. */
export function rulesApiWhole(text: string, origin: string): ParseResult<ApiObjects> {
  const whole = parseK8sObjects(text, origin);
  return { value: rulesApiOf(whole.value), diagnostics: whole.diagnostics };
}

/** How many texts {@link parseRulesApi} read narrowly and how many it parsed whole (for tests: count work, not time). */
export const rulesApiReads = { narrow: 0, whole: 0 };

/** What `show rules` reads of the API objects in `text` from `origin`: {@link readRulesApi}, else {@link rulesApiWhole}. Never throws. */
export function parseRulesApi(text: string, origin: string): ParseResult<ApiObjects> {
  const narrow = readRulesApi(text, origin);
  if (narrow) {
    rulesApiReads.narrow++;
    return narrow;
  }
  rulesApiReads.whole++;
  return rulesApiWhole(text, origin);
}

/** The modelled kinds `show rules` does not read (k8s-objects.ts reads them; an unknown kind is a finding). */
const OTHER_MODELLED = new Set(['Pod', 'ServiceCIDR', 'IPAddress']);

/** JSON's four blanks (what `JSON.parse` skips around a value). */
function isJsonBlank(c: number): boolean {
  return c === 32 || c === 10 || c === 13 || c === 9;
}

/**
 * {@link rulesApiWhole} of `text` for the common shape (see the module's comment), with no
 * diagnostics; null for any other shape. Never throws.
 */
export function readRulesApi(text: string, origin: string): ParseResult<ApiObjects> | null {
  try {
    return readList(text, origin);
  } catch {
    // A value too deep for a reader's stack, or anything unforeseen: the whole parse decides.
    return null;
  }
}

function readList(text: string, origin: string): ParseResult<ApiObjects> | null {
  let start = 0;
  while (start < text.length && isJsonBlank(text.charCodeAt(start))) start++;
  // `parseK8sObjects` reads text starting otherwise (a byte-order mark, `[`, YAML) another way.
  if (text.charCodeAt(start) !== 0x7b) return null;
  let doc: JsonValue;
  try {
    doc = JSON.parse(text) as JsonValue;
  } catch {
    return null;
  }
  if (!isJsonObject(doc) || doc['kind'] !== 'List' || !Array.isArray(doc['items'])) return null;
  let line = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < start; i = text.indexOf('\n', i + 1)) line++;
  // All items of a JSON List carry the List's line, as in the whole parse.
  const source = { origin, line };
  const apiVersionHint = typeof doc['apiVersion'] === 'string' ? doc['apiVersion'] : undefined;
  let finding = false;
  const ctx = { source, report: () => void (finding = true) };
  const keys = new Set<string>();
  const services: Service[] = [];
  const nodes: Node[] = [];
  const withVersion = <T extends K8sObject>(o: T): T => (o.apiVersion === undefined && apiVersionHint ? { ...o, apiVersion: apiVersionHint } : o);
  for (const item of doc['items']) {
    if (!isJsonObject(item)) return null;
    const kind = item['kind'];
    const meta = item['metadata'];
    if (typeof kind !== 'string' || !isJsonObject(meta)) return null;
    const name = meta['name'];
    const namespace = meta['namespace'];
    if (typeof name !== 'string' || name === '' || (namespace !== undefined && typeof namespace !== 'string')) return null;
    const key = `${kind}/${namespace ?? ''}/${name}`;
    if (keys.has(key)) return null;
    keys.add(key);
    if (kind === 'Service') {
      if (!serviceClean(item)) return null;
      if (sessionAffinityOf(item) !== 'ClientIP') continue;
      const service = serviceFast(item, { source });
      if (!service) return null;
      services.push(withVersion(service));
    } else if (kind === 'EndpointSlice') {
      if (!endpointSliceClean(item)) return null;
    } else if (kind === 'Node') {
      const node = toK8sObject(item, 'Node', ctx);
      if (finding || node.kind !== 'Node') return null;
      nodes.push(withVersion(node));
    } else if (OTHER_MODELLED.has(kind)) {
      // Not read by `show rules`: converted only to know that it reports nothing.
      toK8sObject(item, kind, ctx);
      if (finding) return null;
    } else {
      return null;
    }
  }
  const unreadList = doc[UNREAD_KINDS_KEY];
  const unread = Array.isArray(unreadList) ? unreadList.filter((x): x is string => typeof x === 'string') : [];
  const value: ApiObjects = { services, endpointSlices: [], pods: [], nodes, serviceCIDRs: [], ipAddresses: [], others: [], ...(unread.length > 0 ? { unread } : {}) };
  return { value, diagnostics: [] };
}

function sessionAffinityOf(o: JsonObject): JsonValue | undefined {
  const spec = o['spec'];
  return isJsonObject(spec) ? spec['sessionAffinity'] : undefined;
}
