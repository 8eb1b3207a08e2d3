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
      out.push({ layer: 'endpoints', code: 'wrong-family-address', severity: 'degraded', message: `EndpointSlice ${e.sliceName} (${e.addressType}) holds ${e.address}: kube-proxy skips it`, endpoint: e.address, evidence: services(row) });
    }
    const first = seen.get(e.address);
    if (first !== undefined && first !== e.sliceName) {
      out.push({ layer: 'endpoints', code: 'duplicate-endpoint', severity: 'info', message: `${e.address} is in EndpointSlices ${first} and ${e.sliceName} (kube-proxy uses it once; the conditions of one slice win)`, endpoint: e.address, evidence: services(row) });
    } else seen.set(e.address, e.sliceName);
  }
  return out;
}

function specFindings(row: ServiceRow): Finding[] {
  const out: Finding[] = [];
  if (row.type === 'ExternalName' && row.externalName !== undefined && parseAddress(row.externalName) !== null) {
    out.push({ layer: 'api', code: 'externalname-ip', severity: 'broken', message: `externalName is the address ${row.externalName}: CoreDNS answers a CNAME only for names (NXDOMAIN or a CNAME to an IP-looking name); use a Service without selector and an EndpointSlice instead`, evidence: services(row) });
  }
  const spec = row.service.raw['spec'];
  const lbIP = spec && typeof spec === 'object' && !Array.isArray(spec) ? (spec as Record<string, unknown>)['loadBalancerIP'] : undefined;
  if (typeof lbIP === 'string' && lbIP.toLowerCase() === 'none') {
    out.push({ layer: 'api', code: 'headless-lb-ip', severity: 'degraded', message: `loadBalancerIP is "${lbIP}": a headless Service is written clusterIP: None${row.headless ? '' : ' (this one has a ClusterIP)'}`, evidence: services(row) });
  }
  return out;
}

/**
 * The API and endpoints findings of one Service: `endpoints` its endpoint rows (read once by
 * the caller), `pods` its namespace's Pods (for the nearest labels).
 */
export function apiFindings(row: ServiceRow, endpoints: readonly EndpointRow[], pods: readonly Pod[]): Finding[] {
  const out: Finding[] = [];
  const usable = endpoints.some((e) => e.ready !== false || (e.serving === true && e.terminating === true));
  for (const f of factsFor(row)) {
    if (f.code === 'no-endpointslice') {
      out.push({ layer: 'endpoints', code: 'no-endpoints', severity: 'broken', message: f.message, evidence: services(row) });
    } else if (f.code === 'no-ready-endpoints') {
      // kube-proxy falls back to serving-and-terminating endpoints: traffic still flows, for now.
      out.push({ layer: 'endpoints', code: 'no-ready-endpoints', severity: usable ? 'degraded' : 'broken', message: usable ? `${f.message} (serving-and-terminating ones still take traffic)` : f.message, evidence: services(row) });
    } else if (f.code === 'selector-matches-no-pod') {
      const near = nearestLabels(row.selector ?? {}, pods);
      const hint = near.length > 0 ? `; nearest labels: ${near.join(', ')}` : '';
      out.push({ layer: 'api', code: 'selector-matches-nothing', severity: 'broken', message: `${f.message}${hint}`, evidence: services(row) });
    } else {
      out.push({ layer: 'api', code: 'port-name-mismatch', severity: 'degraded', message: f.message, evidence: services(row) });
    }
  }
  return [...out, ...sliceFindings(row, endpoints), ...specFindings(row)];
}
