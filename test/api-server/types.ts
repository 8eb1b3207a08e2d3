/**
 * Shapes shared by the recorded Kubernetes API server (test infrastructure).
 *
 * Objects are kept as plain JSON exactly as a capture holds them (`kubectl get
 * … -o json`), so what the server returns for a captured object is byte-for-byte
 * what was captured. Only the few fields the server reads are typed.
 */

/** The metadata fields the server reads or writes (the rest is carried untouched). */
export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  [key: string]: unknown;
}

/** One Kubernetes API object as JSON (`kind`/`apiVersion` may be absent inside a List). */
export interface K8sObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  [key: string]: unknown;
}

/** A `v1` `List` (or `ServiceList`, …) as `kubectl get … -o json` writes it. */
export interface K8sList {
  apiVersion?: string;
  kind?: string;
  metadata?: { resourceVersion?: string; [key: string]: unknown };
  items: K8sObject[];
}

/** Watch event types of the Kubernetes watch protocol (`k8s.io/apimachinery/pkg/watch`). */
export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

/** The API verbs that the authorizer sees (`k8s.io/apiserver/pkg/authorization/authorizer`). */
export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection';

/**
 * One denied request, as an RBAC rule would deny it. `resource` is the plural
 * resource, optionally with a subresource (`pods`, `pods/exec`); `namespace`
 * limits the denial to one namespace (absent: every namespace and cluster scope);
 * `clusterScope` denies only the request at the cluster scope (`-A`), as a RoleBinding that
 * grants one namespace leaves the cluster-wide list denied.
 */
export interface ForbidRule {
  verb: Verb;
  resource: string;
  namespace?: string;
  clusterScope?: boolean;
}

/** A reference to one stored object, by kind (`EndpointSlice`) or plural resource (`endpointslices`). */
export interface ObjectRef {
  kind?: string;
  resource?: string;
  namespace?: string;
  name: string;
}
