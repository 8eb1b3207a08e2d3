/**
 * `metav1.Status` error bodies exactly as kube-apiserver writes them
 * (`k8s.io/apimachinery/pkg/api/errors/errors.go`, and `forbiddenMessage` in
 * `k8s.io/apiserver/pkg/endpoints/handlers/responsewriters/errors.go`).
 */

/** The `reason` values this server uses (`metav1.StatusReason`). */
export type StatusReason =
  | 'NotFound'
  | 'AlreadyExists'
  | 'Forbidden'
  | 'Unauthorized'
  | 'MethodNotAllowed'
  | 'BadRequest'
  | 'Invalid'
  | 'Expired'
  | 'Gone'
  | 'NotAcceptable'
  | 'UnsupportedMediaType'
  | 'Conflict'
  | 'InternalError'
  | 'Timeout'
  | 'NonZeroExitCode';

/** One `metav1.StatusCause`. */
export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

/** A `metav1.Status` object (kind `Status`, apiVersion `v1`). */
export interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure' | 'Success';
  message?: string;
  reason?: StatusReason;
  details?: { name?: string; group?: string; kind?: string; causes?: StatusCause[] };
  code: number;
}

/** A Status error thrown inside the server and answered as its `code`. */
export class StatusError extends Error {
  constructor(readonly status: Status) {
    super(status.message ?? status.reason ?? 'error');
  }
}

/** A `schema.GroupResource` as the apiserver prints it: `pods`, `endpointslices.discovery.k8s.io`. */
export function qualifiedResource(group: string, resource: string): string {
  return group === '' ? resource : `${resource}.${group}`;
}

function failure(code: number, reason: StatusReason, message: string, details?: Status['details']): Status {
  const s: Status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code };
  if (details) s.details = details;
  return s;
}

function details(group: string, resource: string, name?: string): NonNullable<Status['details']> {
  const d: NonNullable<Status['details']> = {};
  if (name !== undefined && name !== '') d.name = name;
  if (group !== '') d.group = group;
  d.kind = resource;
  return d;
}

/** 404: `pods "x" not found` (errors.NewNotFound). */
export function notFound(group: string, resource: string, name: string): Status {
  return failure(404, 'NotFound', `${qualifiedResource(group, resource)} "${name}" not found`, details(group, resource, name));
}

/** 404 for a path that names no resource: `the server could not find the requested resource`. */
export function pathNotFound(): Status {
  return failure(404, 'NotFound', 'the server could not find the requested resource', {});
}

/** 409: `pods "x" already exists` (errors.NewAlreadyExists). */
export function alreadyExists(group: string, resource: string, name: string): Status {
  return failure(409, 'AlreadyExists', `${qualifiedResource(group, resource)} "${name}" already exists`, details(group, resource, name));
}

/** 409 Conflict (errors.NewConflict), e.g. a failed precondition. */
export function conflict(group: string, resource: string, name: string, why: string): Status {
  return failure(
    409,
    'Conflict',
    `Operation cannot be fulfilled on ${qualifiedResource(group, resource)} "${name}": ${why}`,
    details(group, resource, name),
  );
}

/** What an RBAC denial is about: the authorizer attributes that go into the message. */
export interface ForbiddenAttributes {
  user: string;
  verb: string;
  group: string;
  resource: string;
  subresource?: string;
  namespace?: string;
  name?: string;
}

/**
 * 403 with the RBAC message format, e.g.
 * `pods is forbidden: User "x" cannot create resource "pods" in API group "" in the namespace "y"`;
 * a named object reads `pods "p" is forbidden: …`, a subresource `… resource "pods/exec" …`,
 * a cluster-scoped request `… at the cluster scope`.
 */
export function forbidden(a: ForbiddenAttributes): Status {
  const res = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  const where =
    a.namespace !== undefined && a.namespace !== '' ? `in the namespace "${a.namespace}"` : 'at the cluster scope';
  const why = `User "${a.user}" cannot ${a.verb} resource "${res}" in API group "${a.group}" ${where}`;
  const qr = qualifiedResource(a.group, a.resource);
  const head = a.name ? `${qr} "${a.name}" is forbidden` : `${qr} is forbidden`;
  return failure(403, 'Forbidden', `${head}: ${why}`, details(a.group, a.resource, a.name));
}

/** 401 for a missing or wrong bearer token. */
export function unauthorized(): Status {
  return failure(401, 'Unauthorized', 'Unauthorized');
}

/** 405: `the server does not allow this method on the requested resource`. */
export function methodNotAllowed(): Status {
  return failure(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource', {});
}

/** 400 Bad Request with a message. */
export function badRequest(message: string): Status {
  return failure(400, 'BadRequest', message);
}

/** 422 Invalid (errors.NewInvalid) with one cause per field error. */
export function invalid(kind: string, name: string, causes: StatusCause[], group = ''): Status {
  const list = causes.map((c) => `${c.field}: ${c.message}`).join(', ');
  const head = `${kind}${group ? '.' + group : ''} "${name}" is invalid`;
  const msg = causes.length === 1 ? `${head}: ${list}` : `${head}: [${list}]`;
  const d: NonNullable<Status['details']> = { name, kind, causes };
  if (group) d.group = group;
  return failure(422, 'Invalid', msg, d);
}

/** 410 `Expired` for a watch or list from a compacted resourceVersion (errors.NewResourceExpired). */
export function expired(requested: number, oldest: number): Status {
  return failure(410, 'Expired', `too old resource version: ${requested} (${oldest})`);
}

/** 406 Not Acceptable. */
export function notAcceptable(accept: string): Status {
  return failure(406, 'NotAcceptable', `only the following media types are accepted: application/json (asked: ${accept})`);
}

/** 415 Unsupported Media Type. */
export function unsupportedMediaType(type: string): Status {
  return failure(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: application/json (got: ${type})`);
}

/** 500 Internal error (errors.NewInternalError): `Internal error occurred: …`. */
export function internalError(why: string): Status {
  return failure(500, 'InternalError', `Internal error occurred: ${why}`, { causes: [{ message: why }] });
}

/** The exec success status written on channel 3: `{"metadata":{},"status":"Success"}`. */
export function execSuccess(): { metadata: Record<string, never>; status: 'Success' } {
  return { metadata: {}, status: 'Success' };
}

/**
 * The exec failure for a non-zero exit code, as the kubelet writes it
 * (`pkg/kubelet/cri/streaming/remotecommand`, message text from containerd's
 * `error executing command %v, exit code %d`).
 */
export function execNonZero(argv: readonly string[], code: number): Record<string, unknown> {
  return {
    metadata: {},
    status: 'Failure',
    message: `command terminated with non-zero exit code: error executing command [${argv.join(' ')}], exit code ${code}`,
    reason: 'NonZeroExitCode',
    details: { causes: [{ reason: 'ExitCode', message: String(code) }] },
  };
}
