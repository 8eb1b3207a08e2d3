/**
 * The object store behind the recorded API server: an etcd-like keyspace with
 * one global resourceVersion counter, a bounded event history for watches, and
 * subscribers.
 *
 * Captured objects keep their own `metadata.resourceVersion` (so a GET returns
 * exactly what was captured); the counter starts at the highest numeric one.
 * The history covers events with RV in (`oldestRv`, `currentRv`]: a watch from an
 * RV below `oldestRv` is "too old" (410 Expired), as after an etcd compaction.
 */
import { RESOURCES, resourceForKind, type ResourceInfo, type ResourceName } from './resources.js';
import { alreadyExists, notFound, StatusError } from './status.js';
import type { K8sList, K8sObject, ObjectRef } from './types.js';

/** One change in the store. `previous` is the object before a MODIFIED/DELETED. */
export interface StoreEvent {
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED';
  readonly resource: ResourceName;
  readonly rv: number;
  readonly object: K8sObject;
  readonly previous?: K8sObject;
}

/** What loading a capture kept and what it skipped (kinds this server does not serve). */
export interface LoadReport {
  readonly loaded: number;
  readonly skipped: readonly string[];
}

function keyOf(o: K8sObject): string {
  return `${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`;
}

function clone<T>(v: T): T {
  return structuredClone(v);
}

function numericRv(v: unknown): number | undefined {
  return typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : undefined;
}

/** `ServiceList` → `Service`; `List` → undefined. */
function itemKindOfList(listKind: string | undefined): string | undefined {
  return listKind && listKind !== 'List' && listKind.endsWith('List') ? listKind.slice(0, -4) : undefined;
}

/** The in-memory keyspace. All methods return deep copies; nothing outside mutates stored objects. */
export class ObjectStore {
  private rv = 0;
  private oldest = 0;
  private readonly data = new Map<ResourceName, Map<string, K8sObject>>();
  private history: StoreEvent[] = [];
  private readonly listeners = new Set<(e: StoreEvent) => void>();
  /** What {@link ObjectStore.load} kept and skipped. */
  readonly report: LoadReport;

  /**
   * Loads a capture: a `List` (any `*List` kind), an array, or one object.
   * Objects of kinds not in {@link RESOURCES} are skipped and named in `report`.
   */
  constructor(input: K8sList | readonly K8sObject[] | K8sObject, private readonly historyLimit = 1000) {
    for (const r of RESOURCES) this.data.set(r.resource, new Map());
    const list = Array.isArray(input) ? { items: input as K8sObject[] } : (input as K8sList).items ? (input as K8sList) : { items: [input as K8sObject] };
    const defaultKind = itemKindOfList((list as K8sList).kind);
    let max = numericRv((list as K8sList).metadata?.resourceVersion) ?? 0;
    const skipped: string[] = [];
    let loaded = 0;
    for (const raw of list.items) {
      const kind = raw.kind ?? defaultKind;
      const info = kind ? resourceForKind(kind) : undefined;
      if (!info || !raw.metadata?.name) {
        skipped.push(`${kind ?? '(no kind)'} ${raw.metadata?.namespace ?? ''}/${raw.metadata?.name ?? ''}`);
        continue;
      }
      const o = clone(raw);
      max = Math.max(max, numericRv(o.metadata.resourceVersion) ?? 0);
      this.data.get(info.resource)!.set(keyOf(o), o);
      loaded++;
    }
    this.rv = max === 0 ? 1 : max;
    // Objects captured without an RV get the load RV, so every object has one.
    for (const m of this.data.values()) for (const o of m.values()) o.metadata.resourceVersion ??= String(this.rv);
    this.oldest = this.rv;
    this.report = { loaded, skipped };
  }

  /** The current (highest) resourceVersion. */
  currentRv(): number {
    return this.rv;
  }

  /** The lowest RV a watch may start from: events after it are all in the history. */
  oldestRv(): number {
    return this.oldest;
  }

  /** Objects of `resource` (in `namespace` if given), ordered by namespace then name, as etcd keys sort. */
  list(resource: ResourceName, namespace?: string): K8sObject[] {
    const all = [...this.data.get(resource)!.values()].filter((o) => namespace === undefined || o.metadata.namespace === namespace);
    all.sort((a, b) => (keyOf(a) < keyOf(b) ? -1 : keyOf(a) > keyOf(b) ? 1 : 0));
    return all.map(clone);
  }

  /** One object, or undefined. */
  get(resource: ResourceName, namespace: string | undefined, name: string): K8sObject | undefined {
    const o = this.data.get(resource)!.get(`${namespace ?? ''}/${name}`);
    return o ? clone(o) : undefined;
  }

  /** Whether a namespace exists: a Namespace object, or (when none were captured) any object in it. */
  namespaceExists(ns: string): boolean {
    const nss = this.data.get('namespaces')!;
    if (nss.size > 0) return nss.has(`/${ns}`);
    return ns === 'default' || [...this.data.values()].some((m) => [...m.values()].some((o) => o.metadata.namespace === ns));
  }

  /** Stores a new object with the next RV; throws a 409 {@link StatusError} if it exists. */
  create(info: ResourceInfo, object: K8sObject): K8sObject {
    const m = this.data.get(info.resource)!;
    const key = keyOf(object);
    if (m.has(key)) throw new StatusError(alreadyExists(info.group, info.resource, object.metadata.name ?? ''));
    const o = clone(object);
    o.metadata.resourceVersion = String(++this.rv);
    m.set(key, o);
    this.emit({ type: 'ADDED', resource: info.resource, rv: this.rv, object: clone(o) });
    return clone(o);
  }

  /** Replaces (or adds) an object with the next RV: MODIFIED (or ADDED). */
  put(info: ResourceInfo, object: K8sObject): K8sObject {
    const m = this.data.get(info.resource)!;
    const key = keyOf(object);
    const previous = m.get(key);
    const o = clone(object);
    o.metadata.resourceVersion = String(++this.rv);
    m.set(key, o);
    const ev: StoreEvent = previous
      ? { type: 'MODIFIED', resource: info.resource, rv: this.rv, object: clone(o), previous: clone(previous) }
      : { type: 'ADDED', resource: info.resource, rv: this.rv, object: clone(o) };
    this.emit(ev);
    return clone(o);
  }

  /** Deletes an object: DELETED carrying the object with the deletion's RV. Throws 404 if absent. */
  remove(info: ResourceInfo, namespace: string | undefined, name: string): K8sObject {
    const m = this.data.get(info.resource)!;
    const key = `${namespace ?? ''}/${name}`;
    const previous = m.get(key);
    if (!previous) throw new StatusError(notFound(info.group, info.resource, name));
    m.delete(key);
    const o = clone(previous);
    o.metadata.resourceVersion = String(++this.rv);
    this.emit({ type: 'DELETED', resource: info.resource, rv: this.rv, object: clone(o), previous: clone(previous) });
    return o;
  }

  /**
   * Events of `resource` with RV > `since`, or `'expired'` when `since` is
   * older than the history reaches (the caller answers 410).
   */
  eventsSince(resource: ResourceName, since: number): StoreEvent[] | 'expired' {
    if (since < this.oldest) return 'expired';
    return this.history.filter((e) => e.resource === resource && e.rv > since);
  }

  /** Calls `fn` for every later event; returns the unsubscribe function. */
  subscribe(fn: (e: StoreEvent) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Drops the whole history, as an etcd compaction: watches from any earlier RV get 410. */
  compact(): void {
    this.history = [];
    this.oldest = this.rv;
  }

  /** Finds the resource of a reference by `resource` or `kind`. */
  static resolve(ref: ObjectRef): ResourceInfo | undefined {
    if (ref.resource) return RESOURCES.find((r) => r.resource === ref.resource);
    return ref.kind ? resourceForKind(ref.kind) : undefined;
  }

  private emit(e: StoreEvent): void {
    this.history.push(e);
    if (this.history.length > this.historyLimit) {
      const dropped = this.history.splice(0, this.history.length - this.historyLimit);
      this.oldest = dropped[dropped.length - 1]!.rv;
    }
    for (const l of [...this.listeners]) l(e);
  }
}
