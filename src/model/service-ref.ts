/**
 * A reference to one Service: its namespace and name, parsed once from `namespace/name`
 * and formatted back once, looked up in the API objects once, with one "not found" error
 * (as kube-proxy builds a `NamespacedName` once and everyone prints its `String()`).
 */
import { said, UserError, type Said } from '../errors.js';
import { closeNames } from './close-names.js';
import type { ApiObjects, Service } from './k8s.js';

/** A Service by namespace and name (the API's `metadata.namespace` and `metadata.name`). */
export interface ServiceRef {
  readonly namespace: string;
  readonly name: string;
}

/**
 * A DNS-1123 label: lower-case letters, digits and `-`, starting and ending with a letter
 * or digit, at most 63 characters — the grammar of a namespace name and (a subset of it,
 * RFC 1035 labels) of a Service name (Kubernetes `validation.IsDNS1123Label`).
 */
const LABEL = '[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?';
const REF_RE = new RegExp(`^(${LABEL})/(${LABEL})$`);

/** The reference of a namespace and a name. */
export function serviceRef(namespace: string, name: string): ServiceRef {
  return { namespace, name };
}

/** `namespace/name` → the reference, or null when the text is not two DNS-1123 labels joined by `/`. */
export function parseServiceRef(text: string): ServiceRef | null {
  const m = REF_RE.exec(text);
  return m ? { namespace: m[1]!, name: m[2]! } : null;
}

/**
 * The reference back from text {@link formatServiceRef} made (a key of a view or a state
 * field, not user input: that goes through {@link parseServiceRef}); the namespace is what
 * comes before the first `/`.
 */
export function refFromKey(key: string): ServiceRef {
  const slash = key.indexOf('/');
  return slash < 0 ? { namespace: '', name: key } : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

/** `namespace/name` → the reference; throws `UserError` (with an example) when it is not one. */
export function requireServiceRef(text: string, example = '--service default/web'): ServiceRef {
  const ref = parseServiceRef(text);
  if (!ref) throw new UserError(said('err.notNsName', { text: JSON.stringify(text) }), said('err.eg', { list: example }));
  return ref;
}

/** The reference as text: `namespace/name`. */
export function formatServiceRef(ref: ServiceRef): string {
  return `${ref.namespace}/${ref.name}`;
}

/** Whether two references name the same Service. */
export function sameService(a: ServiceRef, b: ServiceRef): boolean {
  return a.namespace === b.namespace && a.name === b.name;
}

/** The reference of an API Service object. */
export function refOfService(svc: Service): ServiceRef {
  return { namespace: svc.meta.namespace, name: svc.meta.name };
}

/** The Service `ref` names among `api`'s, or undefined. */
export function findService(api: ApiObjects, ref: ServiceRef): Service | undefined {
  return api.services.find((s) => s.meta.namespace === ref.namespace && s.meta.name === ref.name);
}

/**
 * The one error for a Service that is not where it was looked for: `where` says where
 * (default: the API objects), `known` the Services there (`namespace/name`), of which the
 * closest are offered (src/model/close-names.ts); without close ones, `otherwise` is the hint.
 */
export function serviceNotFound(
  ref: ServiceRef | string,
  known: readonly string[],
  where: Said = said('ue.theApiObjects'),
  otherwise: Said = said('ue.listServices'),
): UserError {
  const text = typeof ref === 'string' ? ref : formatServiceRef(ref);
  const close = closeNames(text, known);
  return new UserError(said('err.noService', { service: text, where }), close.length ? said('err.oneOf', { list: close.join(', ') }) : otherwise);
}

/**
 * The Service `ref` names among `api`'s; throws {@link serviceNotFound}'s error (with the
 * closest names) when there is none.
 */
export function lookupService(api: ApiObjects, ref: ServiceRef): Service {
  const svc = findService(api, ref);
  if (svc) return svc;
  throw serviceNotFound(ref, api.services.map((s) => formatServiceRef(refOfService(s))));
}
