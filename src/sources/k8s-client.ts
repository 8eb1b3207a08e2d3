/**
 * The Kubernetes API connection every cluster-backed source shares: the kubeconfig
 * (`KUBECONFIG`, else `~/.kube/config`; `--context`; `-n/--namespace`) loaded by
 * `@kubernetes/client-node`, a small REST helper that returns the API's JSON text
 * unchanged (typed client models would re-serialize timestamps and drop unknown fields),
 * and the translation of API failures into nodescope's errors: a 403 names the verb and
 * resource RBAC is missing (`UserError`), an unreachable server is a `TransportError`.
 * Credentials stay inside client-node's request options; nothing here logs or returns them.
 */
import { existsSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { said, TransportError, UserError } from '../errors.js';

/** A loaded kubeconfig with the chosen context. `namespace`: `-n`, else the context's, else `default`. */
export interface KubeContext {
  readonly kc: KubeConfig;
  readonly context: string;
  readonly namespace: string;
  /** `-n` was given (API lists are then limited to it; else all namespaces). */
  readonly namespaceGiven: boolean;
  /** The API server URL (no credentials). */
  readonly server: string;
}

/** Options of {@link loadKube}. */
export interface KubeOptions {
  readonly context?: string;
  readonly namespace?: string;
  /** Overrides `KUBECONFIG` (`--kubeconfig FILE`; tests). */
  readonly kubeconfig?: string;
}

/**
 * Loads the kubeconfig like kubectl: every file of `KUBECONFIG` (merged), else
 * `~/.kube/config`. Throws `UserError` when there is none, the context is unknown, or
 * the context names no cluster.
 */
export function loadKube(options: KubeOptions = {}): KubeContext {
  const kc = new KubeConfig();
  const env = options.kubeconfig ?? process.env['KUBECONFIG'] ?? '';
  const files = env.split(path.delimiter).filter((f) => f !== '');
  const candidates = files.length ? files : [path.join(os.homedir(), '.kube', 'config')];
  if (!candidates.some((f) => existsSync(f))) {
    throw new UserError(said('ue.kube.none', { files: candidates.join(', '), verb: said(candidates.length > 1 ? 'ue.kube.do' : 'ue.kube.does') }), said('ue.kube.noneHint'));
  }
  try {
    if (options.kubeconfig !== undefined) {
      kc.loadFromFile(candidates.find((f) => existsSync(f))!);
    } else kc.loadFromDefault();
  } catch (e) {
    throw new UserError(said('ue.kube.cannotRead', { detail: (e as Error).message }));
  }
  if (options.context) {
    if (!kc.getContextObject(options.context)) {
      throw new UserError(said('err.noContext', { context: options.context }), said('ue.kube.contexts', { list: kc.getContexts().map((c) => c.name).join(', ') || said('ue.kube.noContexts') }));
    }
    kc.setCurrentContext(options.context);
  }
  const ctx = kc.getContextObject(kc.getCurrentContext());
  const cluster = kc.getCurrentCluster();
  if (!ctx || !cluster) throw new UserError(said('ue.kube.noCluster', { context: kc.getCurrentContext() }), said('ue.kube.pickContext'));
  return {
    kc,
    context: ctx.name,
    namespace: options.namespace ?? ctx.namespace ?? 'default',
    namespaceGiven: options.namespace !== undefined,
    server: cluster.server,
  };
}

/** A `metav1.Status` failure answered by the API (`code` is the HTTP status). */
export class K8sStatusError extends Error {
  override readonly name = 'K8sStatusError';
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

/** Reads an error body: a Status's `message`/`reason`, else the text itself. */
export function statusFromBody(code: number, text: string): K8sStatusError {
  try {
    const s = JSON.parse(text) as { message?: string; reason?: string };
    if (typeof s.message === 'string') return new K8sStatusError(code, s.reason ?? '', s.message);
  } catch {
    // not JSON: keep the text
  }
  return new K8sStatusError(code, '', text.trim().slice(0, 500) || `HTTP ${code}`);
}

/** What was being done, for error messages: `verb` and `resource` as RBAC names them. */
export interface K8sAction {
  readonly verb: string;
  readonly resource: string;
  readonly namespace?: string;
}

/**
 * Turns an API failure into nodescope's error: 401 → `UserError` (credentials), 403 →
 * `UserError` naming the missing verb/resource and the scope, other statuses →
 * `UserError` with the API's message, a network failure → `TransportError`.
 */
export function explainK8sError(e: unknown, action: K8sAction, server: string): Error {
  if (e instanceof UserError || e instanceof TransportError) return e;
  const scope = action.namespace ? said('ue.kube.inNamespace', { ns: action.namespace }) : said('ue.kube.clusterScope');
  if (e instanceof K8sStatusError) {
    if (e.code === 403) {
      return new UserError(
        said('ue.kube.refused', { verb: action.verb, resource: action.resource, scope, detail: e.message }),
        said('ue.kube.rbac', { verb: action.verb, resource: action.resource, scope: action.namespace ? ` -n ${action.namespace}` : ' -A' }),
      );
    }
    if (e.code === 401) return new UserError(said('ue.kube.401', { server, detail: e.message }), said('ue.kube.401Hint'));
    return new UserError(said('ue.kube.failed', { verb: action.verb, resource: action.resource, code: e.code, reason: e.reason ? ` ${e.reason}` : '', detail: e.message }));
  }
  return new TransportError(`cannot reach the API server ${server}: ${(e as Error).message}`, server, [], null, '');
}

/** Options of one REST call: query parameters, a JSON body, a timeout in milliseconds (default 30,000). */
export interface RestOptions {
  readonly query?: Readonly<Record<string, string | number | boolean | undefined>>;
  readonly body?: unknown;
  readonly timeoutMs?: number;
}

/**
 * One REST call; resolves with the response body text on 2xx. Rejects with
 * {@link K8sStatusError} for an error status and with the socket's error when the
 * server cannot be reached.
 */
export async function k8sRequest(kube: KubeContext, method: 'GET' | 'POST' | 'DELETE', apiPath: string, options: RestOptions = {}): Promise<string> {
  const url = new URL(kube.server.replace(/\/$/, '') + apiPath);
  for (const [k, v] of Object.entries(options.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
  const body = options.body === undefined ? undefined : JSON.stringify(options.body);
  const req: https.RequestOptions = {
    method,
    headers: { Accept: 'application/json', ...(body !== undefined ? { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(body)) } : {}) },
  };
  await kube.kc.applyToHTTPSOptions(req);
  const mod = url.protocol === 'http:' ? http : https;
  return new Promise((resolve, reject) => {
    const r = mod.request(url, req, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const code = res.statusCode ?? 0;
        if (code >= 200 && code < 300) resolve(text);
        else reject(statusFromBody(code, text));
      });
      res.on('error', reject);
    });
    r.setTimeout(options.timeoutMs ?? 30_000, () => r.destroy(new Error(`no answer in ${options.timeoutMs ?? 30_000} ms`)));
    r.on('error', reject);
    r.end(body);
  });
}

/** The REST collection path of a kind, optionally in a namespace. */
export function collectionPath(kind: 'services' | 'endpointslices' | 'pods' | 'nodes' | 'servicecidrs' | 'ipaddresses', namespace?: string): string {
  const base = kind === 'endpointslices' ? '/apis/discovery.k8s.io/v1'
    : kind === 'servicecidrs' || kind === 'ipaddresses' ? '/apis/networking.k8s.io/v1' : '/api/v1';
  const clusterScoped = kind === 'nodes' || kind === 'servicecidrs' || kind === 'ipaddresses';
  return clusterScoped || namespace === undefined ? `${base}/${kind}` : `${base}/namespaces/${encodeURIComponent(namespace)}/${kind}`;
}
