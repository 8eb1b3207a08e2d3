/**
 * `-n NAMESPACE` over API objects that were not listed per namespace (a replay's recorded
 * objects, an `--api-file`): what a live `kubectl get -n NAMESPACE` would have returned.
 */
import type { ApiObjects, ObjectMeta } from './k8s.js';

/**
 * The objects of `namespace` and the cluster-scoped ones (Nodes, ServiceCIDRs, IPAddresses,
 * and any other object without a namespace), in input order. Pure; never throws.
 */
export function apiInNamespace(api: ApiObjects, namespace: string): ApiObjects {
  const keep = <T extends { readonly meta: ObjectMeta }>(list: readonly T[]): readonly T[] => list.filter((o) => o.meta.namespace === '' || o.meta.namespace === namespace);
  return { ...api, services: keep(api.services), endpointSlices: keep(api.endpointSlices), pods: keep(api.pods), others: keep(api.others) };
}
