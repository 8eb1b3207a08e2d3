/**
 * Content negotiation of kube-apiserver (`k8s.io/apiserver/pkg/endpoints/handlers/negotiation`):
 * the Accept header picks plain JSON, a `meta.k8s.io` `Table`, `PartialObjectMetadata`,
 * or (on `/api`, `/apis`) aggregated discovery. Protobuf and YAML are not served.
 */
import type { AggregatedVersion } from './resources.js';
import { notAcceptable, StatusError } from './status.js';

/** What the response will be. */
export type Negotiated =
  | { kind: 'json' }
  | { kind: 'table'; apiVersion: 'meta.k8s.io/v1' | 'meta.k8s.io/v1beta1' }
  | { kind: 'partial'; apiVersion: 'meta.k8s.io/v1' | 'meta.k8s.io/v1beta1' }
  | { kind: 'discovery'; version: AggregatedVersion };

/** One parsed media range: `type/subtype` and its lower-cased parameters. */
interface MediaRange {
  type: string;
  params: Record<string, string>;
}

function parseAccept(accept: string): MediaRange[] {
  return accept
    .split(',')
    .map((part) => {
      const [type, ...ps] = part.split(';').map((x) => x.trim());
      const params: Record<string, string> = {};
      for (const p of ps) {
        const eq = p.indexOf('=');
        if (eq > 0) params[p.slice(0, eq).trim().toLowerCase()] = p.slice(eq + 1).trim();
      }
      return { type: (type ?? '').toLowerCase(), params };
    })
    .filter((m) => m.type !== '');
}

/**
 * Picks the first acceptable media range in the client's order. Throws a 406
 * {@link StatusError} when nothing acceptable is asked for (e.g. protobuf only).
 */
export function negotiate(accept: string | undefined, allowDiscovery: boolean): Negotiated {
  if (!accept || accept.trim() === '') return { kind: 'json' };
  for (const m of parseAccept(accept)) {
    const jsonish = m.type === 'application/json' || m.type === 'application/*' || m.type === '*/*';
    if (!jsonish) continue;
    const as = m.params['as'];
    if (as === undefined) return { kind: 'json' };
    const g = m.params['g'];
    const v = m.params['v'];
    if (g === 'meta.k8s.io' && (v === 'v1' || v === 'v1beta1')) {
      const apiVersion = v === 'v1' ? 'meta.k8s.io/v1' : 'meta.k8s.io/v1beta1';
      if (as === 'Table') return { kind: 'table', apiVersion };
      if (as === 'PartialObjectMetadata' || as === 'PartialObjectMetadataList') return { kind: 'partial', apiVersion };
    }
    if (allowDiscovery && as === 'APIGroupDiscoveryList' && g === 'apidiscovery.k8s.io' && (v === 'v2' || v === 'v2beta1')) {
      return { kind: 'discovery', version: v };
    }
  }
  throw new StatusError(notAcceptable(accept));
}

/** The Content-Type of a response of this negotiated kind. */
export function contentTypeOf(n: Negotiated): string {
  switch (n.kind) {
    case 'json':
      return 'application/json';
    case 'table':
      return `application/json;as=Table;v=${n.apiVersion.split('/')[1]};g=meta.k8s.io`;
    case 'partial':
      return `application/json;as=PartialObjectMetadataList;v=${n.apiVersion.split('/')[1]};g=meta.k8s.io`;
    case 'discovery':
      return `application/json;g=apidiscovery.k8s.io;v=${n.version};as=APIGroupDiscoveryList`;
  }
}
