/**
 * `-n NAMESPACE` over API objects that were not listed per namespace (a replay's recorded
 * objects, an `--api-file`): what a live `kubectl get -n NAMESPACE` would have returned.
 */
import type { ApiObjects, ObjectMeta } from './k8s.js';

// A narrowed view → the objects it was narrowed from; a WeakMap so the view stays plain data
// (its JSON, its equality) and the whole set lives only as long as the view.
const wholeOf = new WeakMap<ApiObjects, ApiObjects>();

/**
 * The objects of `namespace` and the cluster-scoped ones (Nodes, ServiceCIDRs, IPAddresses,
 * and any other object without a namespace), in input order. Pure; never throws. The whole
 * set stays reachable through {@link apiOfCluster}.
 */
export function apiInNamespace(api: ApiObjects, namespace: string): ApiObjects {
  const keep = <T extends { readonly meta: ObjectMeta }>(list: readonly T[]): readonly T[] => list.filter((o) => o.meta.namespace === '' || o.meta.namespace === namespace);
  const view: ApiObjects = { ...api, services: keep(api.services), endpointSlices: keep(api.endpointSlices), pods: keep(api.pods), others: keep(api.others) };
  wholeOf.set(view, apiOfCluster(api));
  return view;
}

/**
 * Every namespace's objects behind a view of {@link apiInNamespace}, else `api` itself: for
 * what crosses namespaces whatever `-n` shows — the cluster DNS (kube-system/kube-dns, and
 * the Services a Pod reaches by FQDN in any namespace). Never throws.
 */
export function apiOfCluster(api: ApiObjects): ApiObjects {
  return wholeOf.get(api) ?? api;
}
