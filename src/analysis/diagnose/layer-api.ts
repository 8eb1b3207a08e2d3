/**
 * The API and endpoints layers: what the Service and its EndpointSlices promise before any
 * node is asked — the Services pane's facts (src/analysis/service-view.ts `factsFor`: no slice,
 * no ready endpoint, a selector matching no Pod, port names that do not meet) plus the nearest
 * labels when a selector matches nothing, one address in two slices, an address of the other
 * family in a slice, an ExternalName that is an IP (CoreDNS answers NXDOMAIN for it), and a
 * headless Service written as `loadBalancerIP: None`. Pure.
 */
import { editDistance } from '../../model/close-names.js';
import type { ApiObjects, Pod } from '../../model/k8s.js';
import { parseAddress } from '../../net/address.js';
import { factsFor } from '../service-view.js';
import type { EndpointRow, ServiceRow } from '../service-types.js';
import type { ServiceFact } from '../service-view.js';
import { said, saying, type Said } from './say.js';
import type { Finding } from './types.js';

const services = (row: ServiceRow) => [{ pane: 'services' as const, ref: `${row.namespace}/${row.name}` }];

/** Pods of a namespace, indexed once per diagnosis (the nearest-label search reads them). */
export function podsByNamespace(objects: ApiObjects): Map<string, Pod[]> {
  const out = new Map<string, Pod[]>();
  for (const p of objects.pods) {
    const list = out.get(p.meta.namespace) ?? [];
    list.push(p);
    out.set(p.meta.namespace, list);
  }
  return out;
}

/** The Pod label `k=v` closest to a selector entry (edit distance ≤ 2 on key or value), with its Pod. */
export function nearestLabels(selector: Readonly<Record<string, string>>, pods: readonly Pod[]): string[] {
  const out: string[] = [];
  for (const [k, v] of Object.entries(selector)) {
    let best: { text: string; d: number } | null = null;
    for (const pod of pods) {
      for (const [pk, pv] of Object.entries(pod.meta.labels)) {
        const d = editDistance(k, pk) + editDistance(v, pv);
        if (d === 0 || d > 2 || (best && best.d <= d)) continue;
        best = { text: `${pk}=${pv} (Pod ${pod.meta.name})`, d };
      }
    }
    if (best) out.push(`${k}=${v} → ${best.text}`);
  }
  return out;
}

function sliceFindings(row: ServiceRow, endpoints: readonly EndpointRow[]): Finding[] {
  const out: Finding[] = [];
  const seen = new Map<string, string>();
  for (const e of endpoints) {
    const family = parseAddress(e.address)?.family;
    if ((e.addressType === 'IPv4' && family === 'ipv6') || (e.addressType === 'IPv6' && family === 'ipv4')) {
      out.push({ layer: 'endpoints', code: 'wrong-family-address', severity: 'degraded', ...saying('dg.wrongFamily', { slice: e.sliceName, type: e.addressType, address: e.address }), endpoint: e.address, evidence: services(row) });
    }
    const first = seen.get(e.address);
    if (first !== undefined && first !== e.sliceName) {
      out.push({ layer: 'endpoints', code: 'duplicate-endpoint', severity: 'info', ...saying('dg.duplicate', { address: e.address, first, second: e.sliceName }), endpoint: e.address, evidence: services(row) });
    } else seen.set(e.address, e.sliceName);
  }
  return out;
}

function specFindings(row: ServiceRow): Finding[] {
  const out: Finding[] = [];
  if (row.type === 'ExternalName' && row.externalName !== undefined && parseAddress(row.externalName) !== null) {
    out.push({ layer: 'api', code: 'externalname-ip', severity: 'broken', ...saying('dg.externalNameIp', { address: row.externalName }), evidence: services(row) });
  }
  const spec = row.service.raw['spec'];
  const lbIP = spec && typeof spec === 'object' && !Array.isArray(spec) ? (spec as Record<string, unknown>)['loadBalancerIP'] : undefined;
  if (typeof lbIP === 'string' && lbIP.toLowerCase() === 'none') {
    out.push({ layer: 'api', code: 'headless-lb-ip', severity: 'degraded', ...saying(row.headless ? 'dg.headlessLbIp' : 'dg.headlessLbIpHasIp', { value: lbIP }), evidence: services(row) });
  }
  return out;
}

/** A Services pane fact (src/analysis/service-view.ts `factsFor`) as a phrase of the i18n tables, from its code and detail. */
function factSaid(f: ServiceFact): Said {
  const d = f.detail;
  switch (f.code) {
    case 'no-endpointslice':
      return said(d['hasSelector'] ? 'dg.fact.noSlice' : 'dg.fact.noSliceNoSelector');
    case 'no-ready-endpoints':
      return said(d['endpoints'] === 0 ? 'dg.fact.noEndpoint' : 'dg.fact.noReady');
    case 'selector-matches-no-pod':
      return said('dg.fact.selector', { namespace: f.namespace, selector: String(d['selector'] ?? '') });
    default: {
      const [name = '', protocol = ''] = String(d['port'] ?? '').split('/');
      return said(d['targetPort'] !== undefined ? 'dg.fact.servicePort' : 'dg.fact.slicePort', { name, protocol });
    }
  }
}

/**
 * The API and endpoints findings of one Service: `endpoints` its endpoint rows (read once by
 * the caller), `pods` its namespace's Pods (for the nearest labels).
 */
export function apiFindings(row: ServiceRow, endpoints: readonly EndpointRow[], pods: readonly Pod[]): Finding[] {
  const out: Finding[] = [];
  const usable = endpoints.some((e) => e.ready !== false || (e.serving === true && e.terminating === true));
  for (const f of factsFor(row)) {
    const fact = factSaid(f);
    if (f.code === 'no-endpointslice') {
      out.push({ layer: 'endpoints', code: 'no-endpoints', severity: 'broken', message: f.message, said: fact, evidence: services(row) });
    } else if (f.code === 'no-ready-endpoints') {
      // kube-proxy falls back to serving-and-terminating endpoints: traffic still flows, for now.
      const s = usable ? saying('dg.fact.noReadyFallback', { fact }) : { message: f.message, said: fact };
      out.push({ layer: 'endpoints', code: 'no-ready-endpoints', severity: usable ? 'degraded' : 'broken', ...s, evidence: services(row) });
    } else if (f.code === 'selector-matches-no-pod') {
      const near = nearestLabels(row.selector ?? {}, pods);
      const params = { namespace: row.namespace, selector: String(f.detail['selector'] ?? '') };
      const s = near.length > 0 ? saying('dg.fact.selectorNear', { ...params, near: near.join(', ') }) : { message: f.message, said: fact };
      out.push({ layer: 'api', code: 'selector-matches-nothing', severity: 'broken', ...s, evidence: services(row) });
    } else if (endpoints.length > 0) {
      // A slice without endpoints has no ports: the mismatch says nothing more than "no endpoints".
      out.push({ layer: 'api', code: 'port-name-mismatch', severity: 'degraded', message: f.message, said: fact, evidence: services(row) });
    }
  }
  return [...out, ...sliceFindings(row, endpoints), ...specFindings(row)];
}
