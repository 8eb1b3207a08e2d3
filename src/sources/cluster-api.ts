/**
 * The cluster API reader: lists, then watches, Services, EndpointSlices, Pods and Nodes
 * (in `-n NAMESPACE`, or all namespaces) and the cluster's ServiceCIDRs and IPAddresses
 * (networking.k8s.io/v1, KEP-1880; skipped with a note where the cluster does not serve them
 * or RBAC forbids them: they only explain ClusterIP ranges), and offers them as one `v1 List` JSON text —
 * the objects exactly as the API returned them — for `parseK8sObjects`
 * (src/parsers/k8s-objects.ts), plus a subscription that fires after watch events.
 *
 * Watches follow the Kubernetes list/watch contract (client-go's reflector): list gives
 * a resourceVersion, watch continues from it, BOOKMARK events advance it, a watch that
 * ends is restarted from the last version, and `410 Gone`/`Expired` (an ERROR event, or a
 * failed re-watch) means the version was compacted away: list again. A failing watch is
 * retried with exponential backoff; the last good objects stay meanwhile.
 */
import { Watch } from '@kubernetes/client-node';
import { collectionPath, explainK8sError, K8sStatusError, k8sRequest, type KubeContext } from './k8s-client.js';
import { UNREAD_KINDS_KEY, type ApiObjects } from '../model/k8s.js';
import type { ParseResult } from '../model/diagnostics.js';

type Json = Record<string, unknown>;

/** The API kinds nodescope reads, as REST resources. */
export type ApiResource = 'services' | 'endpointslices' | 'pods' | 'nodes' | 'servicecidrs' | 'ipaddresses';

/** A kind read; `optional` ones may be missing (404: before 1.33; 403: no RBAC) without failing the reader. */
const KINDS: readonly { readonly resource: ApiResource; readonly kind: string; readonly apiVersion: string; readonly optional?: true }[] = [
  { resource: 'services', kind: 'Service', apiVersion: 'v1' },
  { resource: 'endpointslices', kind: 'EndpointSlice', apiVersion: 'discovery.k8s.io/v1' },
  { resource: 'pods', kind: 'Pod', apiVersion: 'v1' },
  { resource: 'nodes', kind: 'Node', apiVersion: 'v1' },
  { resource: 'servicecidrs', kind: 'ServiceCIDR', apiVersion: 'networking.k8s.io/v1', optional: true },
  { resource: 'ipaddresses', kind: 'IPAddress', apiVersion: 'networking.k8s.io/v1', optional: true },
];

const CLUSTER_SCOPED: ReadonlySet<ApiResource> = new Set(['nodes', 'servicecidrs', 'ipaddresses']);

/**
 * A live source of API objects text. The session re-reads {@link ApiFeed.text} whenever
 * a subscriber is called; `text()` is always a complete List.
 */
export interface ApiFeed {
  /** The current objects as a `v1 List` JSON text (4-space indented, items with kind/apiVersion). */
  text(): string;
  /** Name for diagnostics, e.g. `api:https://10.0.0.1:6443`. */
  readonly origin: string;
  /**
   * True when {@link ApiFeed.text} may wait for the text to be made (a worker's, `trace`:
   * src/cli/trace-api.ts): a snapshot then asks for it after the rules are parsed
   * (src/collect/build-snapshot.ts `apiTextLater`).
   */
  readonly textWaits?: boolean;
  /**
   * Calls `listener` after watch events changed the objects (debounced), or with `'error'`
   * when only {@link ApiFeed.error} changed (the objects did not); returns the unsubscribe function.
   */
  subscribe(listener: (change?: 'error') => void): () => void;
  /** Why the objects are not the source's latest (a failing watch, a refused file version); null when they are. */
  error?(): string | null;
  /**
   * A parse of {@link ApiFeed.text} already made (`parseK8sObjects(text, origin)`), with its
   * input, given once: the first snapshot takes it instead of parsing again (`--api-file`
   * opened for the TUI: src/sources/api-file.ts). Undefined when there is none.
   */
  takeOpenParse?(): { readonly text: string; readonly origin: string; readonly result: ParseResult<ApiObjects> } | undefined;
  /** The same as {@link ApiFeed.error}, as the header's short line needs it; null when there is none. */
  problem?(): ApiProblem | null;
  close(): Promise<void>;
}

/**
 * Why a followed API source's latest version was refused, in short: `empty` (the file holds
 * only white space), `no-objects` (it parses but names no Service and no Node, e.g. an empty
 * List), `invalid` (not JSON/YAML of API objects, e.g. half-written), `gone` (no such file),
 * `unreadable` (any other read error).
 */
export type ApiProblemKind = 'empty' | 'no-objects' | 'invalid' | 'gone' | 'unreadable';

/**
 * A refused version of the API objects: its {@link ApiProblemKind}, the whole reason
 * (`detail`, what {@link ApiFeed.error} says) and when the objects still shown were read
 * (`keptAt`, ms since epoch).
 */
export interface ApiProblem {
  readonly kind: ApiProblemKind;
  readonly detail: string;
  readonly keptAt: number;
}

/** Options of {@link ClusterApi.open}. Times in milliseconds. */
export interface ClusterApiOptions {
  /** Limit Services to this one and EndpointSlices to its `kubernetes.io/service-name` label (needs a namespace). */
  readonly service?: string;
  /** Delay that groups a burst of watch events into one notification (default 200 ms). */
  readonly debounceMs?: number;
  /** First retry delay of a failing watch (default 500 ms), doubled up to 30 s. */
  readonly backoffMs?: number;
  /** Do not watch (one list only, e.g. for `capture`). */
  readonly watch?: boolean;
  /** Server-side end of each watch, after which it is restarted from the last version (default 300–600 s, like client-go). */
  readonly watchTimeoutSeconds?: number;
  /**
   * List every namespace even when `-n` chose one (the context's namespace then only places a
   * debug pod): `diagnose -n` narrows its own output but judges the node against every Service.
   * Where RBAC forbids the cluster-wide list of a kind (403), that kind is read in `-n`'s
   * namespace alone and {@link ClusterApi.skipped} says so.
   */
  readonly allNamespaces?: boolean;
}

/** A Node's addresses and pod CIDRs, from `status.addresses` and `spec.podCIDR(s)`. */
export interface NodeFacts {
  readonly name: string;
  readonly addresses: readonly { readonly type: string; readonly address: string }[];
  readonly podCIDRs: readonly string[];
}

function keyOf(o: Json): string {
  const m = (o['metadata'] ?? {}) as { namespace?: string; name?: string };
  return `${m.namespace ?? ''}/${m.name ?? ''}`;
}

function rvOf(o: unknown): string | undefined {
  const rv = ((o as Json | undefined)?.['metadata'] as { resourceVersion?: unknown } | undefined)?.resourceVersion;
  return typeof rv === 'string' ? rv : undefined;
}

/** Lists and watches the cluster. Create with {@link ClusterApi.open}. */
export class ClusterApi implements ApiFeed {
  readonly origin: string;
  private readonly stores = new Map<ApiResource, Map<string, Json>>();
  private readonly versions = new Map<ApiResource, string>();
  private readonly watches = new Map<ApiResource, AbortController>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly listeners = new Set<() => void>();
  private notifyTimer: NodeJS.Timeout | undefined;
  private closed = false;
  private cached: string | undefined;
  private lastError: string | null = null;
  private readonly unavailable = new Map<ApiResource, string>();
  /** Kinds read in `-n`'s namespace alone because their cluster-wide list was forbidden (`allNamespaces`). */
  private readonly narrowed = new Set<ApiResource>();

  private constructor(
    private readonly kube: KubeContext,
    private readonly options: ClusterApiOptions,
  ) {
    this.origin = `api:${kube.server}`;
  }

  /**
   * Lists every kind (and starts the watches unless `watch: false`). Throws `UserError`
   * for a 403 (naming the verb and resource) and `TransportError` when the API server
   * cannot be reached.
   */
  static async open(kube: KubeContext, options: ClusterApiOptions = {}): Promise<ClusterApi> {
    const api = new ClusterApi(kube, options);
    await Promise.all(KINDS.map((k) => (k.optional ? api.listOptional(k.resource) : api.listWide(k.resource))));
    if (options.watch !== false) for (const k of KINDS) if (!api.unavailable.has(k.resource)) api.startWatch(k.resource);
    return api;
  }

  /** Lists a kind the reader can do without; a 403 or 404 marks it unavailable (see {@link ClusterApi.skipped}). */
  private async listOptional(resource: ApiResource): Promise<void> {
    try {
      await this.list(resource, true);
    } catch (e) {
      if (!(e instanceof K8sStatusError) || (e.code !== 403 && e.code !== 404)) throw e;
      this.unavailable.set(resource, e.code === 403 ? 'forbidden (RBAC)' : 'not served by this cluster');
    }
  }

  /**
   * With `allNamespaces` and `-n`: lists every namespace, and where that is forbidden (403)
   * lists `-n`'s namespace instead, remembered for the watch and the notes. Otherwise {@link list}.
   */
  private async listWide(resource: ApiResource): Promise<void> {
    if (!this.options.allNamespaces || !this.kube.namespaceGiven || CLUSTER_SCOPED.has(resource)) return this.list(resource);
    try {
      await this.list(resource, true);
    } catch (e) {
      if (!(e instanceof K8sStatusError) || e.code !== 403) throw explainK8sError(e, { verb: 'list', resource }, this.kube.server);
      this.narrowed.add(resource);
      await this.list(resource);
    }
  }

  /** The optional kinds not read and why (`servicecidrs: not served by this cluster`), for notes. */
  skipped(): string[] {
    return [...this.unavailable].map(([r, why]) => `${r}: ${why}`);
  }

  /** With `allNamespaces`: the kinds read in `-n`'s namespace alone (their cluster-wide list was forbidden); empty otherwise. */
  narrowedKinds(): ApiResource[] {
    return [...this.narrowed];
  }

  private namespace(resource: ApiResource): string | undefined {
    if (CLUSTER_SCOPED.has(resource) || !this.kube.namespaceGiven) return undefined;
    return this.options.allNamespaces && !this.narrowed.has(resource) ? undefined : this.kube.namespace;
  }

  private selectors(resource: ApiResource): { labelSelector?: string; fieldSelector?: string } {
    const svc = this.options.service;
    if (!svc) return {};
    if (resource === 'services') return { fieldSelector: `metadata.name=${svc}` };
    if (resource === 'endpointslices') return { labelSelector: `kubernetes.io/service-name=${svc}` };
    return {};
  }

  /** Lists one kind; `raw` rethrows the API's own error (a {@link K8sStatusError}) unexplained. */
  private async list(resource: ApiResource, raw = false): Promise<void> {
    const ns = this.namespace(resource);
    let text: string;
    try {
      text = await k8sRequest(this.kube, 'GET', collectionPath(resource, ns), { query: this.selectors(resource) });
    } catch (e) {
      if (raw && e instanceof K8sStatusError) throw e;
      throw explainK8sError(e, { verb: 'list', resource, ...(ns ? { namespace: ns } : {}) }, this.kube.server);
    }
    const list = JSON.parse(text) as { metadata?: { resourceVersion?: string }; items?: Json[] };
    const kind = KINDS.find((k) => k.resource === resource)!;
    const store = new Map<string, Json>();
    // REST lists leave kind/apiVersion out of items; put them back as kubectl's List does.
    for (const item of list.items ?? []) store.set(keyOf(item), { apiVersion: kind.apiVersion, kind: kind.kind, ...item });
    this.stores.set(resource, store);
    this.versions.set(resource, list.metadata?.resourceVersion ?? '');
    this.changed();
  }

  private startWatch(resource: ApiResource, attempt = 0): void {
    if (this.closed) return;
    let expired = false;
    let sawEvent = false;
    const ns = this.namespace(resource);
    const kind = KINDS.find((k) => k.resource === resource)!;
    const onEvent = (type: string, obj: Json) => {
      if (type === 'ERROR') {
        const code = (obj as { code?: number }).code;
        if (code === 410) expired = true;
        this.lastError = `watch ${resource}: ${String((obj as { message?: string }).message ?? code)}`;
        return;
      }
      sawEvent = true;
      const rv = rvOf(obj);
      if (rv) this.versions.set(resource, rv);
      if (type === 'BOOKMARK') return;
      const store = this.stores.get(resource)!;
      const full = { apiVersion: kind.apiVersion, kind: kind.kind, ...obj };
      if (type === 'DELETED') store.delete(keyOf(full));
      else store.set(keyOf(full), full);
      this.lastError = null;
      this.changed();
    };
    const onDone = (err: unknown) => {
      if (this.closed) return;
      const status = (err as { statusCode?: number } | null)?.statusCode;
      if (status === 410) expired = true;
      if (err) this.lastError = `watch ${resource}: ${(err as Error).message ?? String(err)}`;
      // A watch that delivered events and ended cleanly restarts at once; failures and
      // expiries back off (so a list that keeps failing is not retried in a tight loop).
      const next = (err || expired) && !(sawEvent && !expired && !err) ? attempt + 1 : 0;
      const delay = next === 0 ? 0 : Math.min((this.options.backoffMs ?? 500) * 2 ** (next - 1), 30_000);
      this.later(delay, async () => {
        if (expired) {
          try {
            await this.list(resource);
          } catch (e) {
            this.lastError = (e as Error).message;
            return this.startWatch(resource, next);
          }
        }
        this.startWatch(resource, expired ? 0 : next);
      });
    };
    const timeoutSeconds = this.options.watchTimeoutSeconds ?? Math.floor(300 * (1 + Math.random()));
    const query = { resourceVersion: this.versions.get(resource), allowWatchBookmarks: true, timeoutSeconds, ...this.selectors(resource) };
    new Watch(this.kube.kc)
      .watch(collectionPath(resource, ns), query, onEvent, onDone)
      .then((controller) => {
        if (this.closed) controller.abort();
        else this.watches.set(resource, controller);
      })
      .catch(onDone);
  }

  private later(ms: number, run: () => void | Promise<void>): void {
    const t = setTimeout(() => {
      this.timers.delete(t);
      void run();
    }, ms);
    this.timers.add(t);
  }

  private changed(): void {
    this.cached = undefined;
    if (this.listeners.size === 0 || this.notifyTimer) return;
    this.notifyTimer = setTimeout(() => {
      this.notifyTimer = undefined;
      for (const l of this.listeners) l();
    }, this.options.debounceMs ?? 200);
  }

  text(): string {
    if (this.cached !== undefined) return this.cached;
    const items: Json[] = [];
    for (const k of KINDS) {
      const store = this.stores.get(k.resource) ?? new Map<string, Json>();
      for (const key of [...store.keys()].sort()) items.push(store.get(key)!);
    }
    const unread = this.skipped();
    this.cached = `${JSON.stringify({ apiVersion: 'v1', items, kind: 'List', metadata: { resourceVersion: '' }, ...(unread.length > 0 ? { [UNREAD_KINDS_KEY]: unread } : {}) }, null, 4)}\n`;
    return this.cached;
  }

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The last watch problem (cleared by the next event), for a status line; null when healthy. */
  error(): string | null {
    return this.lastError;
  }

  /** A Node's addresses and pod CIDRs, or undefined when no such Node is listed. */
  node(name: string): NodeFacts | undefined {
    const n = this.stores.get('nodes')?.get(`/${name}`);
    if (!n) return undefined;
    const spec = (n['spec'] ?? {}) as { podCIDR?: string; podCIDRs?: string[] };
    const status = (n['status'] ?? {}) as { addresses?: { type: string; address: string }[] };
    return {
      name,
      addresses: (status.addresses ?? []).map((a) => ({ type: a.type, address: a.address })),
      podCIDRs: spec.podCIDRs ?? (spec.podCIDR ? [spec.podCIDR] : []),
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const a of this.watches.values()) a.abort();
    for (const t of this.timers) clearTimeout(t);
    if (this.notifyTimer) clearTimeout(this.notifyTimer);
    this.watches.clear();
    this.timers.clear();
  }
}
