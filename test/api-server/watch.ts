/**
 * Watch streams (`?watch=true`): a chunked HTTP response of newline-separated
 * JSON `{"type":…,"object":…}` events, as `k8s.io/apiserver/pkg/endpoints/handlers/watch.go`
 * writes them.
 *
 * resourceVersion semantics (https://kubernetes.io/docs/reference/using-api/api-concepts/#semantics-for-watch):
 * unset or `"0"` — synthetic ADDED for every current object, then changes;
 * `N` — every change after N, from the history; N older than the history —
 * one `ERROR` event carrying a `Status` 410 `Expired`, then the stream ends, so
 * the client re-lists. `sendInitialEvents=true` (streaming list) — ADDED for
 * every current object, then a BOOKMARK annotated `k8s.io/initial-events-end`.
 * `allowWatchBookmarks=true` — a BOOKMARK with the current RV every
 * `bookmarkIntervalMs`. `timeoutSeconds` ends the stream. Selector semantics:
 * an object that stops matching is sent as DELETED, one that starts matching
 * as ADDED.
 */
import type { ServerResponse } from 'node:http';
import type { Negotiated } from './negotiate.js';
import { contentTypeOf } from './negotiate.js';
import { apiVersionOf, type ResourceInfo } from './resources.js';
import { expired } from './status.js';
import type { ObjectStore, StoreEvent } from './store.js';
import { partialMetadata, toTable, type IncludeObject } from './table.js';
import type { K8sObject, WatchEventType } from './types.js';

/** The parameters of one watch request. */
export interface WatchParams {
  readonly info: ResourceInfo;
  readonly namespace?: string;
  readonly matches: (o: K8sObject) => boolean;
  readonly resourceVersion?: string;
  readonly sendInitialEvents: boolean;
  readonly allowBookmarks: boolean;
  readonly timeoutSeconds?: number;
  readonly bookmarkIntervalMs: number;
  readonly negotiated: Negotiated;
  readonly include: IncludeObject;
  readonly now: () => Date;
}

/** Adds `kind`/`apiVersion` if the stored object lacks them (inside a List they may be absent). */
export function withTypeMeta(info: ResourceInfo, o: K8sObject): K8sObject {
  if (o.kind && o.apiVersion) return o;
  const { kind: _k, apiVersion: _a, ...rest } = o;
  return { apiVersion: apiVersionOf(info), kind: info.kind, ...rest } as K8sObject;
}

/**
 * Serves one watch on `res` until the client goes away, the timeout passes or
 * `stop()` (returned) is called.
 */
export function serveWatch(res: ServerResponse, store: ObjectStore, p: WatchParams): () => void {
  res.writeHead(200, { 'Content-Type': contentTypeOf(p.negotiated), 'Cache-Control': 'no-cache, private', 'Transfer-Encoding': 'chunked' });
  res.socket?.setNoDelay(true);
  res.flushHeaders(); // the apiserver answers 200 at once, before any event
  let headersSent = false;
  const encode = (o: K8sObject): unknown => {
    const n = p.negotiated;
    if (n.kind === 'table') {
      const t = toTable(p.info.resource, [o], {
        resourceVersion: o.metadata.resourceVersion ?? '', now: p.now(), include: p.include, apiVersion: n.apiVersion, noHeaders: headersSent,
      });
      headersSent = true;
      return t;
    }
    if (n.kind === 'partial') return partialMetadata(o, n.apiVersion);
    return withTypeMeta(p.info, o);
  };
  const write = (type: WatchEventType, object: unknown) => {
    if (!res.writableEnded) res.write(JSON.stringify({ type, object }) + '\n');
  };
  const bookmark = (rv: number, initialEnd = false) =>
    write('BOOKMARK', {
      kind: p.info.kind,
      apiVersion: apiVersionOf(p.info),
      metadata: { resourceVersion: String(rv), ...(initialEnd ? { annotations: { 'k8s.io/initial-events-end': 'true' } } : {}) },
    });
  const inNs = (o: K8sObject) => p.namespace === undefined || o.metadata.namespace === p.namespace;
  const translate = (e: StoreEvent): [WatchEventType, K8sObject] | undefined => {
    if (!inNs(e.object)) return undefined;
    const now = p.matches(e.object);
    if (e.type === 'ADDED') return now ? ['ADDED', e.object] : undefined;
    if (e.type === 'DELETED') return now ? ['DELETED', e.object] : undefined;
    const before = e.previous ? p.matches(e.previous) : false;
    if (now && before) return ['MODIFIED', e.object];
    if (now) return ['ADDED', e.object];
    if (before) return ['DELETED', e.object];
    return undefined;
  };
  const timers: NodeJS.Timeout[] = [];
  let unsubscribe = (): void => undefined;
  const stop = () => {
    unsubscribe();
    for (const t of timers) clearTimeout(t), clearInterval(t);
    if (!res.writableEnded) res.end();
  };
  res.on('close', stop);

  const rvParam = p.resourceVersion;
  const current = store.currentRv();
  let backlog: StoreEvent[] = [];
  if (!p.sendInitialEvents && rvParam !== undefined && rvParam !== '' && rvParam !== '0') {
    const since = /^\d+$/.test(rvParam) ? Number(rvParam) : NaN;
    const events = Number.isNaN(since) ? 'expired' : store.eventsSince(p.info.resource, since);
    if (events === 'expired') {
      write('ERROR', expired(Number.isNaN(since) ? 0 : since, store.oldestRv()));
      stop();
      return stop;
    }
    backlog = events;
  }
  // Subscribing and replaying happen in one synchronous turn, so no event falls in between.
  unsubscribe = store.subscribe((e) => {
    if (e.resource !== p.info.resource) return;
    const t = translate(e);
    if (t) write(t[0], encode(t[1]));
  });
  if (backlog.length) {
    for (const e of backlog) {
      const t = translate(e);
      if (t) write(t[0], encode(t[1]));
    }
  } else if (p.sendInitialEvents || rvParam === undefined || rvParam === '' || rvParam === '0') {
    for (const o of store.list(p.info.resource, p.namespace)) if (p.matches(o)) write('ADDED', encode(o));
    if (p.sendInitialEvents) bookmark(current, true);
  }
  if (p.allowBookmarks) timers.push(setInterval(() => bookmark(store.currentRv()), p.bookmarkIntervalMs));
  if (p.timeoutSeconds !== undefined && p.timeoutSeconds > 0) timers.push(setTimeout(stop, p.timeoutSeconds * 1000));
  return stop;
}
