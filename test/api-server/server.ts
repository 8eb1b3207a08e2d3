/**
 * The recorded Kubernetes API server: HTTPS, bearer-token authentication, the
 * REST conventions of kube-apiserver over a capture's API objects, watch,
 * pod create/delete, RBAC-style denials and pod exec over WebSockets.
 *
 * Paths served (everything else is a 404 `Status`, every other method a 405):
 *   GET  /version /healthz /livez /readyz                  (no token needed)
 *   GET  /api /api/v1 /apis /apis/{discovery,networking}.k8s.io[/v1]   (legacy or aggregated discovery)
 *   GET  /api/v1/{namespaces,nodes}[/NAME]
 *   GET  /api/v1[/namespaces/NS]/{pods,services}[/NAME]
 *   GET  /apis/discovery.k8s.io/v1[/namespaces/NS]/endpointslices[/NAME]
 *   GET  /apis/networking.k8s.io/v1/{servicecidrs,ipaddresses}[/NAME]
 *        (collections: list or `?watch=1`; also the legacy `/api/v1/watch/…` prefix)
 *   POST /api/v1/namespaces/NS/pods          DELETE /api/v1/namespaces/NS/pods/NAME
 *   GET  /api/v1/namespaces/NS/pods/NAME/exec  (WebSocket upgrade; see exec.ts)
 *   GET|POST /api/v1/namespaces/NS/pods/NAME/portforward  (WebSocket `v4.channel.k8s.io`,
 *        see portforward-upgrade.ts: v4 channels, kubectl's SPDY/3.1 raw or tunnelled in a WebSocket)
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { STATUS_CODES } from 'node:http';
import { WebSocketServer } from 'ws';
import { parse as parseYaml } from 'yaml';
import { generateCertificates } from './cert.js';
import type { PodDialer } from './dial.js';
import { EXEC_PROTOCOLS, runExecSession } from './exec.js';
import { parsePorts } from './portforward.js';
import { portForwardUpgrader } from './portforward-upgrade.js';
import { writeKubeconfig } from './kubeconfig.js';
import { contentTypeOf, negotiate, type Negotiated } from './negotiate.js';
import { decodeK8sProtobuf, ProtobufUnsupported } from './protobuf.js';
import { admitPod, k8sTime, preparePod, runningStatus } from './pods.js';
import {
  aggregatedDiscovery, apiGroupFor, apiGroupList, apiResourceList, apiVersionOf, apiVersions, findResource, RESOURCES,
  versionInfo, type ResourceInfo,
} from './resources.js';
import { matchFields, matchLabels, parseFieldSelector, parseLabelSelector, SelectorError } from './selectors.js';
import {
  alreadyExists, badRequest, conflict, forbidden, internalError, methodNotAllowed, notFound, pathNotFound, StatusError,
  unauthorized, unsupportedMediaType, type Status,
} from './status.js';
import { ObjectStore } from './store.js';
import { partialMetadata, toTable, type IncludeObject } from './table.js';
import type { ForbidRule, K8sList, K8sObject, ObjectRef, Verb } from './types.js';
import { serveWatch, withTypeMeta } from './watch.js';

/** Options of {@link startApiServer}. Give `objectsFile` or `objects`. */
export interface ApiServerOptions {
  /** A `kubectl get … -o json` List file (JSON; YAML is read too). */
  objectsFile?: string;
  /** The objects themselves (a List, an array, or one object). */
  objects?: K8sList | readonly K8sObject[];
  /** Network namespace that exec commands run in (`ip netns exec NAME`); needs root. */
  netns?: string;
  /**
   * Network namespace per node name: an exec into a pod runs in the namespace of the pod's
   * `spec.nodeName` (a fleet of lab nodes), else in {@link netns}.
   */
  nodeNetns?: Readonly<Record<string, string>>;
  /** How a port-forward reaches a pod's port (e.g. `netnsDialer`); without it every forward fails on the error channel. */
  portForward?: PodDialer;
  /** Milliseconds a created pod stays Pending before it turns Running (default 300). */
  podStartDelayMs?: number;
  /** Requests to deny with an RBAC-style 403 (initial set; see {@link ApiServerHandle.setForbidden}). */
  forbid?: readonly ForbidRule[];
  /** User name in 403 messages (default `nodescope-tester`). */
  user?: string;
  /** Bearer token to require (default: 32 random bytes, hex). */
  token?: string;
  /** Listen address (default `127.0.0.1`) and port (default 0 = any free port). */
  host?: string;
  port?: number;
  /** Watch history length in events (default 1000); older RVs get 410. */
  historyLimit?: number;
  /** Interval of watch BOOKMARK events in ms when a client allows them (default 60,000). */
  bookmarkIntervalMs?: number;
  /** Clock for timestamps and AGE cells (default `() => new Date()`). */
  now?: () => Date;
}

/** One request as the server saw it (never any header, so never the token). */
export interface RequestRecord {
  readonly method: string;
  readonly path: string;
  readonly query: string;
  readonly accept: string;
  readonly status: number;
  readonly upgrade?: string;
}

/** A running server. */
export interface ApiServerHandle {
  /** `https://127.0.0.1:PORT`. */
  readonly url: string;
  /** The CA certificate (PEM) that signed the server certificate. */
  readonly caPem: string;
  /** The bearer token the server requires. Never log it. */
  readonly token: string;
  /** A kubeconfig for this server (in a temp dir removed by `close()`). */
  readonly kubeconfigPath: string;
  /** The user name 403 messages name. */
  readonly user: string;
  /** Kinds/objects in the capture that are not served. */
  readonly skipped: readonly string[];
  /** Every pod (captured and created), ordered by namespace/name. */
  pods(): K8sObject[];
  /** Every object of a resource (plural name, e.g. `endpointslices`). */
  list(resource: string): K8sObject[];
  /** One object, or undefined. */
  get(ref: ObjectRef): K8sObject | undefined;
  /**
   * Changes a stored object and emits MODIFIED: `change` is the replacement
   * object, or a function that edits the current one in place (or returns a
   * replacement). Throws a `StatusError` 404 when absent.
   */
  mutate(ref: ObjectRef, change: K8sObject | ((current: K8sObject) => K8sObject | void)): K8sObject;
  /** Adds (ADDED) or replaces (MODIFIED) an object of a served kind. */
  upsert(object: K8sObject): K8sObject;
  /** Deletes an object (DELETED). Throws a `StatusError` 404 when absent. */
  remove(ref: ObjectRef): K8sObject;
  /** Drops the watch history: a watch from any RV before now gets 410 Expired. */
  compact(): void;
  /** The current resourceVersion. */
  resourceVersion(): string;
  /** Replaces the set of denied requests. */
  setForbidden(rules: readonly ForbidRule[]): void;
  /** Requests received so far, oldest first. */
  requests(): readonly RequestRecord[];
  /**
   * `true`: stop answering, as a hung apiserver does — TLS still connects, but new
   * requests and upgrades get no answer (streams already open go on); `false`: answer
   * again, first the held requests whose client is still connected.
   */
  freeze(frozen: boolean): void;
  /** Requests held by {@link freeze} right now (method and path; `clientGone`: the server has seen the client's connection close). */
  held(): readonly { method: string; path: string; clientGone: boolean }[];
  /**
   * Drops every connection at once — watches, exec and port-forward streams, idle
   * keep-alive sockets — as an apiserver restart or a load balancer reset does; new
   * connections are accepted again right away. Resolves with how many sockets were dropped.
   */
  dropConnections(): number;
  /** Stops listening, ends watches and exec sessions, removes the temp dir. */
  close(): Promise<void>;
}

type Route =
  | { kind: 'info'; body: () => unknown; noAuth?: boolean }
  | { kind: 'discovery'; legacy: boolean }
  | { kind: 'resource'; info: ResourceInfo; namespace?: string; name?: string; sub?: string; legacyWatch: boolean };

/** Maps a path to what it names; throws a 404 StatusError for anything else. */
function route(pathname: string): Route {
  const parts = pathname.split('/').filter((x) => x !== '');
  const text = (s: string) => ({ kind: 'info' as const, body: () => s, noAuth: true });
  if (parts.length === 1 && (parts[0] === 'healthz' || parts[0] === 'livez' || parts[0] === 'readyz')) return text('ok');
  if (parts.length === 1 && parts[0] === 'version') return { kind: 'info', body: versionInfo, noAuth: true };
  let group: string;
  let rest: string[];
  if (parts[0] === 'api') {
    if (parts.length === 1) return { kind: 'discovery', legacy: true };
    if (parts[1] !== 'v1') throw new StatusError(pathNotFound());
    group = '';
    rest = parts.slice(2);
    if (rest.length === 0) return { kind: 'info', body: () => apiResourceList('', 'v1') };
  } else if (parts[0] === 'apis') {
    if (parts.length === 1) return { kind: 'discovery', legacy: false };
    const g = apiGroupFor(parts[1]!);
    if (!g) throw new StatusError(pathNotFound());
    if (parts.length === 2) return { kind: 'info', body: () => g };
    const list = apiResourceList(parts[1]!, parts[2]!);
    if (!list) throw new StatusError(pathNotFound());
    group = parts[1]!;
    rest = parts.slice(3);
    if (rest.length === 0) return { kind: 'info', body: () => list };
  } else {
    throw new StatusError(pathNotFound());
  }
  let legacyWatch = false;
  if (rest[0] === 'watch') {
    legacyWatch = true;
    rest = rest.slice(1);
  }
  let namespace: string | undefined;
  if (rest[0] === 'namespaces' && rest.length >= 3) {
    namespace = rest[1];
    rest = rest.slice(2);
  }
  const [resource, name, sub, ...extra] = rest;
  const info = resource ? findResource(group, resource) : undefined;
  if (!info || extra.length > 0) throw new StatusError(pathNotFound());
  if (namespace !== undefined && !info.namespaced) throw new StatusError(pathNotFound());
  if (namespace === undefined && info.namespaced && name !== undefined) throw new StatusError(pathNotFound());
  if (sub !== undefined && !info.subresources.some((s) => s.name === sub)) throw new StatusError(pathNotFound());
  return { kind: 'resource', info, ...(namespace !== undefined ? { namespace } : {}), ...(name !== undefined ? { name } : {}), ...(sub !== undefined ? { sub } : {}), legacyWatch };
}

function statusBody(s: Status): string {
  return JSON.stringify(s);
}

function sendJson(res: ServerResponse, code: number, body: unknown, contentType = 'application/json'): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(code, { 'Content-Type': typeof body === 'string' ? 'text/plain; charset=utf-8' : contentType, 'Cache-Control': 'no-cache, private', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

/** Answers a refused upgrade on the raw socket, as an HTTP response with a Status body. */
function refuseUpgrade(socket: Socket, s: Status): void {
  const body = statusBody(s);
  socket.end(
    `HTTP/1.1 ${s.code} ${STATUS_CODES[s.code] ?? 'Error'}\r\nContent-Type: application/json\r\nCache-Control: no-cache, private\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

function readBody(req: IncomingMessage, limit = 3 * 1024 * 1024): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > limit) reject(new StatusError({ ...badRequest('request entity too large'), code: 413 }));
      else chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** Decodes a request body: JSON, or (for pods) Kubernetes protobuf; anything else is 415. */
function parseBody(body: Buffer, contentType: string | undefined): unknown {
  const type = (contentType ?? 'application/json').split(';')[0]!.trim().toLowerCase();
  if (type === 'application/vnd.kubernetes.protobuf') {
    try {
      return decodeK8sProtobuf(body);
    } catch (e) {
      if (e instanceof ProtobufUnsupported) throw new StatusError(unsupportedMediaType(`${type} (${e.message})`));
      throw e;
    }
  }
  if (type !== 'application/json' && type !== '') throw new StatusError(unsupportedMediaType(type));
  try {
    return JSON.parse(body.toString('utf8'));
  } catch (e) {
    throw new StatusError(badRequest(`the body of the request could not be decoded as JSON: ${(e as Error).message}`));
  }
}

function loadObjects(opts: ApiServerOptions): K8sList | readonly K8sObject[] {
  if (opts.objects) return opts.objects;
  if (!opts.objectsFile) return [];
  const text = readFileSync(opts.objectsFile, 'utf8');
  try {
    return JSON.parse(text) as K8sList;
  } catch {
    return parseYaml(text) as K8sList;
  }
}

/**
 * Starts the server on loopback with a fresh CA and certificate, writes a
 * kubeconfig for it, and resolves once it listens. Throws when `openssl` is
 * missing or the objects file cannot be read.
 */
export async function startApiServer(opts: ApiServerOptions = {}): Promise<ApiServerHandle> {
  const now = opts.now ?? (() => new Date());
  const user = opts.user ?? 'nodescope-tester';
  const token = opts.token ?? randomBytes(32).toString('hex');
  const podStartDelayMs = opts.podStartDelayMs ?? 300;
  const bookmarkIntervalMs = opts.bookmarkIntervalMs ?? 60_000;
  let forbid: readonly ForbidRule[] = opts.forbid ?? [];
  const store = new ObjectStore(loadObjects(opts), opts.historyLimit ?? 1000);
  const certs = generateCertificates();
  const dir = mkdtempSync(join(tmpdir(), 'nodescope-apiserver-'));
  const log: RequestRecord[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const watches = new Set<() => void>();
  const sockets = new Set<Socket>();
  let podIpCounter = 0;
  let serverAddress = '';

  const isForbidden = (verb: Verb, resource: string, sub: string | undefined, namespace: string | undefined) =>
    forbid.some((r) => r.verb === verb && r.resource === (sub ? `${resource}/${sub}` : resource) && (r.clusterScope ? namespace === undefined : r.namespace === undefined || r.namespace === namespace));
  const authorize = (verb: Verb, info: ResourceInfo, namespace?: string, name?: string, sub?: string) => {
    if (isForbidden(verb, info.resource, sub, namespace)) {
      throw new StatusError(forbidden({ user, verb, group: info.group, resource: info.resource, ...(sub ? { subresource: sub } : {}), ...(namespace ? { namespace } : {}), ...(name ? { name } : {}) }));
    }
  };
  const authenticated = (req: IncomingMessage) => req.headers.authorization === `Bearer ${token}`;

  const firstNode = () => store.list('nodes')[0];
  const nodeInternalIP = (nodeName: string | undefined) => {
    const node = nodeName ? store.get('nodes', undefined, nodeName) : undefined;
    const addrs = (node?.['status'] as { addresses?: { type: string; address: string }[] } | undefined)?.addresses ?? [];
    return addrs.find((a) => a.type === 'InternalIP')?.address;
  };
  const schedulePodStart = (pod: K8sObject) => {
    const t = setTimeout(() => {
      timers.delete(t);
      const cur = store.get('pods', pod.metadata.namespace, pod.metadata.name!);
      if (!cur || cur.metadata.uid !== pod.metadata.uid) return;
      const nodeName = (cur['spec'] as { nodeName?: string }).nodeName;
      podIpCounter++;
      const podIP = `10.244.${200 + Math.floor(podIpCounter / 250)}.${(podIpCounter % 250) + 2}`;
      store.put(findResource('', 'pods')!, { ...cur, status: runningStatus(cur, now(), nodeInternalIP(nodeName), podIP) });
    }, podStartDelayMs);
    timers.add(t);
  };

  const selectorsOf = (info: ResourceInfo, q: URLSearchParams) => {
    try {
      const labels = parseLabelSelector(q.get('labelSelector') ?? '');
      const fields = parseFieldSelector(q.get('fieldSelector') ?? '', Object.keys(info.fieldLabels));
      return (o: K8sObject) => matchLabels(labels, o.metadata.labels) && matchFields(fields, (f) => info.fieldLabels[f]!(o));
    } catch (e) {
      if (e instanceof SelectorError) throw new StatusError(badRequest(e.message));
      throw e;
    }
  };
  const includeOf = (q: URLSearchParams): IncludeObject => {
    const v = q.get('includeObject') ?? 'Metadata';
    if (v !== 'None' && v !== 'Metadata' && v !== 'Object') throw new StatusError(badRequest(`includeObject: Unsupported value: "${v}": supported values: "Metadata", "None", "Object"`));
    return v;
  };

  const respondObject = (res: ServerResponse, code: number, info: ResourceInfo, o: K8sObject, n: Negotiated, q: URLSearchParams) => {
    if (n.kind === 'table') return sendJson(res, code, toTable(info.resource, [o], { resourceVersion: o.metadata.resourceVersion ?? '', now: now(), include: includeOf(q), apiVersion: n.apiVersion }), contentTypeOf(n));
    if (n.kind === 'partial') return sendJson(res, code, partialMetadata(o, n.apiVersion), contentTypeOf(n).replace('PartialObjectMetadataList', 'PartialObjectMetadata'));
    return sendJson(res, code, withTypeMeta(info, o));
  };

  const handleList = (res: ServerResponse, info: ResourceInfo, namespace: string | undefined, q: URLSearchParams, n: Negotiated) => {
    const matches = selectorsOf(info, q);
    const rvParam = q.get('resourceVersion');
    if (rvParam && /^\d+$/.test(rvParam) && Number(rvParam) > store.currentRv()) {
      throw new StatusError({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: `Too large resource version: ${rvParam}, current: ${store.currentRv()}`, reason: 'Timeout', details: { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }] }, code: 504 });
    }
    let items = store.list(info.resource, namespace).filter(matches);
    const cont = q.get('continue');
    if (cont) {
      let start: string;
      try {
        const tok = JSON.parse(Buffer.from(cont, 'base64url').toString('utf8')) as { v?: string; start?: string };
        if (tok.v !== 'meta.k8s.io/v1' || typeof tok.start !== 'string') throw new Error('bad token');
        start = tok.start;
      } catch {
        throw new StatusError(badRequest('continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)'));
      }
      items = items.filter((o) => `${o.metadata.namespace ?? ''}/${o.metadata.name}` >= start);
    }
    const limit = Number(q.get('limit') ?? '0');
    let continueToken: string | undefined;
    let remaining: number | undefined;
    if (Number.isInteger(limit) && limit > 0 && items.length > limit) {
      const next = items[limit]!;
      continueToken = Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv: store.currentRv(), start: `${next.metadata.namespace ?? ''}/${next.metadata.name}` })).toString('base64url');
      if (!q.get('labelSelector') && !q.get('fieldSelector')) remaining = items.length - limit;
      items = items.slice(0, limit);
    }
    const rv = String(store.currentRv());
    if (n.kind === 'table') {
      return sendJson(res, 200, toTable(info.resource, items, { resourceVersion: rv, now: now(), include: includeOf(q), apiVersion: n.apiVersion, ...(continueToken ? { continueToken } : {}) }), contentTypeOf(n));
    }
    const metadata: Record<string, unknown> = { resourceVersion: rv };
    if (continueToken) metadata['continue'] = continueToken;
    if (remaining !== undefined) metadata['remainingItemCount'] = remaining;
    if (n.kind === 'partial') {
      return sendJson(res, 200, { kind: 'PartialObjectMetadataList', apiVersion: n.apiVersion, metadata, items: items.map((o) => partialMetadata(o, n.apiVersion)) }, contentTypeOf(n));
    }
    // A typed list's items carry no kind/apiVersion on the wire.
    const bare = items.map(({ kind: _k, apiVersion: _a, ...rest }) => rest);
    return sendJson(res, 200, { kind: info.listKind, apiVersion: apiVersionOf(info), metadata, items: bare });
  };

  const handleCreate = async (req: IncomingMessage, res: ServerResponse, info: ResourceInfo, namespace: string, q: URLSearchParams, n: Negotiated) => {
    const body = parseBody(await readBody(req), req.headers['content-type']);
    const prepared = preparePod(body, namespace);
    if (!store.namespaceExists(namespace)) throw new StatusError(notFound('', 'namespaces', namespace));
    if (store.get('pods', namespace, prepared.metadata.name!)) throw new StatusError(alreadyExists('', 'pods', prepared.metadata.name!));
    const admitted = admitPod(prepared, now(), firstNode()?.metadata.name);
    if (q.getAll('dryRun').includes('All')) return respondObject(res, 201, info, { ...admitted, metadata: { ...admitted.metadata, resourceVersion: '' } }, n, q);
    const stored = store.create(info, admitted);
    schedulePodStart(stored);
    return respondObject(res, 201, info, stored, n, q);
  };

  const handleDelete = async (req: IncomingMessage, res: ServerResponse, info: ResourceInfo, namespace: string, name: string, q: URLSearchParams, n: Negotiated) => {
    const raw = await readBody(req);
    const current = store.get(info.resource, namespace, name);
    if (!current) throw new StatusError(notFound(info.group, info.resource, name));
    const opts = raw.toString('utf8').trim() ? (parseBody(raw, req.headers['content-type']) as { preconditions?: { uid?: string; resourceVersion?: string }; dryRun?: string[] }) : {};
    const pre = opts.preconditions ?? {};
    if (pre.uid && pre.uid !== current.metadata.uid) {
      throw new StatusError(conflict(info.group, info.resource, name, `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${current.metadata.uid ?? ''}`));
    }
    if (pre.resourceVersion && pre.resourceVersion !== current.metadata.resourceVersion) {
      throw new StatusError(conflict(info.group, info.resource, name, `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${current.metadata.resourceVersion ?? ''}`));
    }
    if (q.getAll('dryRun').includes('All') || (opts.dryRun ?? []).includes('All')) return respondObject(res, 200, info, current, n, q);
    const gone = store.remove(info, namespace, name);
    return respondObject(res, 200, info, gone, n, q);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> => {
    const r = route(url.pathname);
    if (!(r.kind === 'info' && r.noAuth) && !authenticated(req)) throw new StatusError(unauthorized());
    const method = req.method ?? 'GET';
    const q = url.searchParams;
    if (r.kind === 'info') {
      if (method !== 'GET' && method !== 'HEAD') throw new StatusError(methodNotAllowed());
      return sendJson(res, 200, r.body());
    }
    if (r.kind === 'discovery') {
      if (method !== 'GET' && method !== 'HEAD') throw new StatusError(methodNotAllowed());
      const n = negotiate(req.headers.accept, true);
      if (n.kind === 'discovery') return sendJson(res, 200, aggregatedDiscovery(r.legacy, n.version), contentTypeOf(n));
      return sendJson(res, 200, r.legacy ? apiVersions(serverAddress) : apiGroupList());
    }
    const { info, namespace, name, sub } = r;
    if (sub === 'exec' || sub === 'portforward') throw new StatusError(badRequest('Upgrade request required'));
    const n = negotiate(req.headers.accept, false);
    const watch = r.legacyWatch || q.get('watch') === '1' || q.get('watch') === 'true';
    if (method === 'GET' && name === undefined) {
      authorize(watch ? 'watch' : 'list', info, namespace);
      if (!watch) return handleList(res, info, namespace, q, n);
      const timeout = q.get('timeoutSeconds');
      const stop = serveWatch(res, store, {
        info, ...(namespace !== undefined ? { namespace } : {}), matches: selectorsOf(info, q),
        ...(q.get('resourceVersion') !== null ? { resourceVersion: q.get('resourceVersion')! } : {}),
        sendInitialEvents: q.get('sendInitialEvents') === 'true', allowBookmarks: q.get('allowWatchBookmarks') === 'true',
        ...(timeout !== null && /^\d+$/.test(timeout) ? { timeoutSeconds: Number(timeout) } : {}),
        bookmarkIntervalMs, negotiated: n, include: includeOf(q), now,
      });
      watches.add(stop);
      res.on('close', () => watches.delete(stop));
      return;
    }
    if (method === 'GET' && name !== undefined) {
      authorize('get', info, namespace, name);
      const o = store.get(info.resource, namespace, name);
      if (!o) throw new StatusError(notFound(info.group, info.resource, name));
      return respondObject(res, 200, info, o, n, q);
    }
    if (method === 'POST' && name === undefined && info.verbs.includes('create') && namespace !== undefined) {
      authorize('create', info, namespace);
      return handleCreate(req, res, info, namespace, q, n);
    }
    if (method === 'DELETE' && name !== undefined && info.verbs.includes('delete') && namespace !== undefined) {
      authorize('delete', info, namespace, name);
      return handleDelete(req, res, info, namespace, name, q, n);
    }
    throw new StatusError(methodNotAllowed());
  };

  const wss = new WebSocketServer({ noServer: true, handleProtocols: (protocols) => EXEC_PROTOCOLS.find((p) => protocols.has(p)) ?? false });
  const forwards = portForwardUpgrader(() => opts.portForward);
  let frozen = false;
  const parked: { method: string; path: string; socket: IncomingMessage['socket']; resume: () => void }[] = [];
  const park = (req: IncomingMessage, resume: () => void): boolean => {
    if (!frozen) return false;
    // A client that gave up meanwhile is not answered later (its DELETE must not happen behind its back).
    parked.push({ method: req.method ?? 'GET', path: new URL(req.url ?? '/', 'https://localhost').pathname, socket: req.socket, resume: () => void (req.socket.destroyed || resume()) });
    return true;
  };
  const server: Server = createServer({ key: certs.keyPem, cert: certs.certPem }, function onRequest(req, res) {
    if (park(req, () => onRequest(req, res))) return;
    const url = new URL(req.url ?? '/', 'https://localhost');
    const record = (status: number) => log.push({ method: req.method ?? 'GET', path: url.pathname, query: url.search, accept: req.headers.accept ?? '', status });
    res.on('finish', () => record(res.statusCode));
    handle(req, res, url).catch((e: unknown) => {
      const s = e instanceof StatusError ? e.status : internalError(e instanceof Error ? e.message : String(e));
      if (res.headersSent) {
        res.end();
        return;
      }
      sendJson(res, s.code, s);
    });
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  /** Where an exec into `pod` runs: its node's namespace ({@link ApiServerOptions.nodeNetns}), else `netns`. */
  const netnsOf = (pod: K8sObject): string | undefined => {
    const node = (pod['spec'] as { nodeName?: string } | undefined)?.nodeName;
    return (node !== undefined ? opts.nodeNetns?.[node] : undefined) ?? opts.netns;
  };
  server.on('upgrade', function onUpgrade(req: IncomingMessage, socket: Socket, head: Buffer) {
    if (park(req, () => onUpgrade(req, socket, head))) return;
    const url = new URL(req.url ?? '/', 'https://localhost');
    const upgrade = String(req.headers.upgrade ?? '');
    const record = (status: number) => log.push({ method: req.method ?? 'GET', path: url.pathname, query: url.search, accept: req.headers.accept ?? '', status, upgrade });
    socket.on('error', () => undefined);
    try {
      const r = route(url.pathname);
      if (!authenticated(req)) throw new StatusError(unauthorized());
      if (r.kind !== 'resource' || (r.sub !== 'exec' && r.sub !== 'portforward') || r.namespace === undefined || r.name === undefined) {
        throw new StatusError(badRequest(`the recorded API server upgrades only pod exec and portforward requests (asked: ${upgrade} ${url.pathname})`));
      }
      const { info, namespace, name } = r;
      // A WebSocket upgrade is a GET, which RBAC sees as `get` (clusters with
      // AuthorizePodWebsocketUpgradeCreatePermission also check `create`); kubectl's SPDY
      // upgrade is a POST: `create`. Exec keeps this server's original `create` only.
      if (r.sub === 'portforward' && req.method === 'GET') authorize('get', info, namespace, name, r.sub);
      authorize('create', info, namespace, name, r.sub);
      const pod = store.get('pods', namespace, name);
      if (!pod) throw new StatusError(notFound('', 'pods', name));
      const phase = (pod['status'] as { phase?: string } | undefined)?.phase ?? '';
      if (r.sub === 'portforward') {
        if (phase !== 'Running') throw new StatusError(badRequest(`unable to upgrade connection: pod ${name} is not running (phase ${phase || 'Pending'})`));
        let ports: number[];
        try {
          ports = parsePorts(url.searchParams.getAll('ports'));
        } catch (e) {
          throw new StatusError(badRequest((e as Error).message));
        }
        forwards.upgrade(req, socket, head, { namespace, name, uid: pod.metadata.uid ?? '' }, ports, record);
        return;
      }
      if (phase === 'Succeeded' || phase === 'Failed') throw new StatusError(badRequest(`cannot exec into a container in a completed pod; current phase is ${phase}`));
      const spec = pod['spec'] as { containers?: { name: string }[]; ephemeralContainers?: { name: string }[] } | undefined;
      const names = [...(spec?.containers ?? []), ...(spec?.ephemeralContainers ?? [])].map((c) => c.name);
      let container = url.searchParams.get('container') ?? '';
      if (container === '') {
        if (names.length !== 1) throw new StatusError(badRequest(`a container name must be specified for pod ${name}, choose one of: [${names.join(' ')}]`));
        container = names[0]!;
      }
      if (!names.includes(container)) throw new StatusError(badRequest(`container ${container} is not valid for pod ${name}`));
      if (phase !== 'Running') throw new StatusError(badRequest(`container "${container}" in pod "${name}" is waiting to start: ContainerCreating`));
      const argv = url.searchParams.getAll('command');
      if (argv.length === 0) throw new StatusError(badRequest('you must specify at least one command for the container'));
      const flag = (k: string) => ['1', 'true'].includes(url.searchParams.get(k) ?? '');
      if (!flag('stdout') && !flag('stderr') && !flag('stdin')) throw new StatusError(badRequest('you must specify at least 1 of stdin, stdout, stderr'));
      if (upgrade.toLowerCase() !== 'websocket') {
        throw new StatusError(badRequest(`the recorded API server speaks exec only over WebSockets (${EXEC_PROTOCOLS.join(', ')}), not ${upgrade}`));
      }
      const offered = String(req.headers['sec-websocket-protocol'] ?? '').split(',').map((p) => p.trim());
      if (!EXEC_PROTOCOLS.some((p) => offered.includes(p))) {
        throw new StatusError(badRequest(`unable to upgrade: no supported sub-protocol among [${offered.join(' ')}]; this server speaks ${EXEC_PROTOCOLS.join(', ')}`));
      }
      wss.handleUpgrade(req, socket, head, (ws) => {
        record(101);
        void runExecSession(ws, {
          argv, stdin: flag('stdin'), stdout: flag('stdout'), stderr: flag('stderr'), tty: flag('tty'), podName: name,
          ...(netnsOf(pod) ? { netns: netnsOf(pod)! } : {}),
        });
      });
    } catch (e) {
      const s = e instanceof StatusError ? e.status : internalError(e instanceof Error ? e.message : String(e));
      record(s.code);
      refuseUpgrade(socket, s);
    }
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => resolve());
  });
  const addr = server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  serverAddress = `${host}:${addr.port}`;
  const url = `https://${serverAddress}`;
  const kubeconfigPath = join(dir, 'kubeconfig');
  writeKubeconfig(kubeconfigPath, url, certs.caPem, token);

  const infoOf = (ref: ObjectRef) => {
    const info = ObjectStore.resolve(ref);
    if (!info) throw new Error(`not a served resource: ${ref.kind ?? ref.resource ?? '(none)'}`);
    return info;
  };
  return {
    url,
    caPem: certs.caPem,
    token,
    kubeconfigPath,
    user,
    skipped: store.report.skipped,
    pods: () => store.list('pods'),
    list: (resource) => {
      const info = RESOURCES.find((r) => r.resource === resource);
      if (!info) throw new Error(`not a served resource: ${resource}`);
      return store.list(info.resource);
    },
    get: (ref) => store.get(infoOf(ref).resource, ref.namespace, ref.name),
    mutate: (ref, change) => {
      const info = infoOf(ref);
      const cur = store.get(info.resource, ref.namespace, ref.name);
      if (!cur) throw new StatusError(notFound(info.group, info.resource, ref.name));
      const next = typeof change === 'function' ? (change(cur) ?? cur) : change;
      return store.put(info, { ...next, metadata: { ...next.metadata, name: ref.name, ...(ref.namespace ? { namespace: ref.namespace } : {}) } });
    },
    upsert: (object) => {
      const info = infoOf({ kind: object.kind ?? '', name: object.metadata.name ?? '' });
      return store.put(info, { ...object, metadata: { ...object.metadata, creationTimestamp: object.metadata.creationTimestamp ?? k8sTime(now()) } });
    },
    remove: (ref) => store.remove(infoOf(ref), ref.namespace, ref.name),
    compact: () => store.compact(),
    resourceVersion: () => String(store.currentRv()),
    setForbidden: (rules) => {
      forbid = [...rules];
    },
    requests: () => [...log],
    freeze: (on) => {
      frozen = on;
      if (!on) for (const p of parked.splice(0)) p.resume();
    },
    held: () => parked.map(({ method, path, socket }) => ({ method, path, clientGone: socket.destroyed })),
    dropConnections: () => {
      const n = sockets.size;
      for (const stop of [...watches]) stop();
      for (const c of wss.clients) c.terminate();
      for (const s of [...sockets]) s.destroy();
      return n;
    },
    close: async () => {
      parked.length = 0;
      for (const t of timers) clearTimeout(t);
      for (const stop of [...watches]) stop();
      for (const c of wss.clients) c.terminate();
      forwards.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
