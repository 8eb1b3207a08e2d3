import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeCapture, makeEndpointSlice, makePod, makeService } from '../api-server/builders.js';
import { startApiServer, type ApiServerHandle } from '../api-server/index.js';
import { api, openWatch } from '../api-server/test-client.js';

const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';
const AGGREGATED = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json';

const podBody = (name: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image: 'busybox:1.36' }], ...extra } });

let server: ApiServerHandle;
beforeAll(async () => {
  server = await startApiServer({ objects: makeCapture(), podStartDelayMs: 50, forbid: [{ verb: 'create', resource: 'pods', namespace: 'locked' }] });
});
afterAll(async () => {
  await server.close();
});

describe('discovery', () => {
  it('answers legacy discovery documents', async () => {
    const core = await api(server, '/api/v1');
    expect(core.json.kind).toBe('APIResourceList');
    expect(core.json.resources.map((r: { name: string }) => r.name)).toEqual(['namespaces', 'nodes', 'pods', 'pods/exec', 'pods/portforward', 'services']);
    const groups = await api(server, '/apis');
    expect(groups.json.groups[0].preferredVersion.groupVersion).toBe('discovery.k8s.io/v1');
    expect((await api(server, '/api')).json.versions).toEqual(['v1']);
  });

  it('answers aggregated discovery v2 with its media type when asked', async () => {
    const r = await api(server, '/apis', { accept: AGGREGATED });
    expect(r.contentType).toBe('application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList');
    expect(r.json.kind).toBe('APIGroupDiscoveryList');
    const eps = r.json.items[0].versions[0].resources[0];
    expect(eps).toMatchObject({ resource: 'endpointslices', scope: 'Namespaced', responseKind: { group: 'discovery.k8s.io', kind: 'EndpointSlice' } });
    const core = await api(server, '/api', { accept: AGGREGATED });
    const pods = core.json.items[0].versions[0].resources.find((x: { resource: string }) => x.resource === 'pods');
    expect(pods.subresources[0].subresource).toBe('exec');
    expect(pods.verbs).toEqual(['create', 'delete', 'get', 'list', 'watch']);
  });

  it('serves /version without a token, everything else only with it', async () => {
    expect((await api(server, '/version', { token: null })).json.gitVersion).toMatch(/^v1\.\d+\.\d+$/);
    const r = await api(server, '/api/v1/pods', { token: null });
    expect(r.status).toBe(401);
    expect(r.json).toMatchObject({ kind: 'Status', reason: 'Unauthorized', code: 401 });
    expect((await api(server, '/api/v1/pods', { token: 'wrong' })).status).toBe(401);
  });
});

describe('list and get', () => {
  it('lists across namespaces with the List RV, items without kind as the apiserver sends them', async () => {
    const r = await api(server, '/api/v1/services');
    expect(r.json).toMatchObject({ kind: 'ServiceList', apiVersion: 'v1', metadata: { resourceVersion: server.resourceVersion() } });
    expect(r.json.items.map((s: { metadata: { name: string } }) => s.metadata.name)).toEqual(['web']);
    expect(r.json.items[0].kind).toBeUndefined();
  });

  it('filters by labelSelector and fieldSelector', async () => {
    const bySvc = await api(server, '/apis/discovery.k8s.io/v1/endpointslices?labelSelector=' + encodeURIComponent('kubernetes.io/service-name=web'));
    expect(bySvc.json.items).toHaveLength(1);
    const none = await api(server, '/apis/discovery.k8s.io/v1/endpointslices?labelSelector=' + encodeURIComponent('kubernetes.io/service-name=db'));
    expect(none.json.items).toHaveLength(0);
    const byName = await api(server, '/api/v1/namespaces/default/pods?fieldSelector=metadata.name%3Dweb-1');
    expect(byName.json.items.map((p: { metadata: { name: string } }) => p.metadata.name)).toEqual(['web-1']);
    const byNode = await api(server, '/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-9');
    expect(byNode.json.items).toHaveLength(0);
    const bad = await api(server, '/api/v1/pods?fieldSelector=spec.bogus%3Dx');
    expect(bad.status).toBe(400);
    expect(bad.json.message).toBe('field label not supported: spec.bogus');
  });

  it('pages with limit and continue', async () => {
    const first = await api(server, '/api/v1/pods?limit=1');
    expect(first.json.items).toHaveLength(1);
    expect(first.json.metadata.remainingItemCount).toBe(1);
    const second = await api(server, `/api/v1/pods?limit=1&continue=${first.json.metadata.continue}`);
    expect(second.json.items[0].metadata.name).not.toBe(first.json.items[0].metadata.name);
    expect(second.json.metadata.continue).toBeUndefined();
    expect((await api(server, '/api/v1/pods?continue=garbage')).status).toBe(400);
  });

  it('gets one object exactly as captured', async () => {
    const r = await api(server, '/api/v1/namespaces/default/services/web');
    const captured = makeCapture().items.find((o) => o.kind === 'Service')!;
    expect(r.json).toEqual({ ...captured, metadata: { ...captured.metadata, resourceVersion: r.json.metadata.resourceVersion, uid: captured.metadata.uid } });
    expect(r.json.spec).toEqual(captured['spec']);
  });

  it('answers a Table when asked, with PartialObjectMetadata rows by default', async () => {
    const r = await api(server, '/api/v1/namespaces/default/pods', { accept: TABLE });
    expect(r.json.kind).toBe('Table');
    expect(r.json.columnDefinitions.map((c: { name: string }) => c.name).slice(0, 5)).toEqual(['Name', 'Ready', 'Status', 'Restarts', 'Age']);
    expect(r.json.rows[0].object.kind).toBe('PartialObjectMetadata');
    const full = await api(server, '/api/v1/namespaces/default/pods?includeObject=Object', { accept: TABLE });
    expect(full.json.rows[0].object.spec.containers[0].name).toBe('app');
  });

  it('refuses what it does not implement with Status codes, never a silent 200', async () => {
    const missing = await api(server, '/api/v1/namespaces/default/services/nope');
    expect(missing.json).toMatchObject({ status: 'Failure', reason: 'NotFound', message: 'services "nope" not found', code: 404, details: { name: 'nope', kind: 'services' } });
    const eps = await api(server, '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/nope');
    expect(eps.json.message).toBe('endpointslices.discovery.k8s.io "nope" not found');
    expect((await api(server, '/api/v1/configmaps')).status).toBe(404);
    expect((await api(server, '/apis/apps/v1/deployments')).status).toBe(404);
    const put = await api(server, '/api/v1/namespaces/default/services/web', { method: 'PUT', body: '{}' });
    expect(put.json).toMatchObject({ reason: 'MethodNotAllowed', code: 405 });
    expect((await api(server, '/api/v1/namespaces/default/services', { method: 'POST', body: '{}' })).status).toBe(405);
    const proto = await api(server, '/api/v1/pods', { accept: 'application/vnd.kubernetes.protobuf' });
    expect(proto.status).toBe(406);
  });
});

describe('pod create and delete', () => {
  it('creates a pod Pending, turns it Running, deletes it — all visible to a watch', async () => {
    const w = await openWatch(server, `/api/v1/namespaces/default/pods?watch=1&resourceVersion=${server.resourceVersion()}`);
    const created = await api(server, '/api/v1/namespaces/default/pods', { method: 'POST', body: podBody('made') });
    expect(created.status).toBe(201);
    expect(created.json.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.json.status.phase).toBe('Pending');
    expect(created.json.spec.nodeName).toBe('node-1');
    const [added, running] = await w.next(2);
    expect(added).toMatchObject({ type: 'ADDED', object: { kind: 'Pod', metadata: { name: 'made' } } });
    expect(running).toMatchObject({ type: 'MODIFIED', object: { status: { phase: 'Running' } } });
    expect(Number(running!.object.metadata.resourceVersion)).toBeGreaterThan(Number(added!.object.metadata.resourceVersion));
    const again = await api(server, '/api/v1/namespaces/default/pods', { method: 'POST', body: podBody('made') });
    expect(again.json).toMatchObject({ reason: 'AlreadyExists', code: 409, message: 'pods "made" already exists' });
    const del = await api(server, '/api/v1/namespaces/default/pods/made', { method: 'DELETE', body: '{"propagationPolicy":"Background"}' });
    expect(del.status).toBe(200);
    const [, , deleted] = await w.next(3);
    expect(deleted).toMatchObject({ type: 'DELETED', object: { metadata: { name: 'made' } } });
    expect((await api(server, '/api/v1/namespaces/default/pods/made')).status).toBe(404);
    expect(server.pods().map((p) => p.metadata.name)).not.toContain('made');
    w.close();
  });

  it('names a pod from generateName and validates the body (422)', async () => {
    const r = await api(server, '/api/v1/namespaces/default/pods', { method: 'POST', body: JSON.stringify({ metadata: { generateName: 'probe-' }, spec: { containers: [{ name: 'c', image: 'busybox' }] } }) });
    expect(r.json.metadata.name).toMatch(/^probe-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    const bad = await api(server, '/api/v1/namespaces/default/pods', { method: 'POST', body: JSON.stringify({ metadata: { name: 'x' }, spec: { containers: [] } }) });
    expect(bad.json).toMatchObject({ reason: 'Invalid', code: 422, details: { causes: [{ field: 'spec.containers' }] } });
    const ns = await api(server, '/api/v1/namespaces/nowhere/pods', { method: 'POST', body: podBody('y') });
    expect(ns.json.message).toBe('namespaces "nowhere" not found');
  });

  it('denies with the RBAC message format', async () => {
    const r = await api(server, '/api/v1/namespaces/locked/pods', { method: 'POST', body: podBody('z') });
    expect(r.status).toBe(403);
    expect(r.json.message).toBe(`pods is forbidden: User "${server.user}" cannot create resource "pods" in API group "" in the namespace "locked"`);
    server.setForbidden([{ verb: 'list', resource: 'endpointslices' }]);
    const l = await api(server, '/apis/discovery.k8s.io/v1/endpointslices');
    expect(l.json.message).toBe(`endpointslices.discovery.k8s.io is forbidden: User "${server.user}" cannot list resource "endpointslices" in API group "discovery.k8s.io" at the cluster scope`);
    server.setForbidden([{ verb: 'create', resource: 'pods', namespace: 'locked' }]);
  });
});

describe('watch', () => {
  it('sends ADDED for current objects when no RV is given, then changes', async () => {
    const w = await openWatch(server, '/apis/discovery.k8s.io/v1/endpointslices?watch=true');
    const [first] = await w.next(1);
    expect(first).toMatchObject({ type: 'ADDED', object: { kind: 'EndpointSlice', apiVersion: 'discovery.k8s.io/v1' } });
    server.mutate({ kind: 'EndpointSlice', namespace: 'default', name: 'web-x7k2p' }, (eps) => {
      (eps['endpoints'] as unknown[]).pop();
    });
    const [, modified] = await w.next(2);
    expect(modified!.type).toBe('MODIFIED');
    expect(modified!.object.endpoints).toHaveLength(1);
    w.close();
  });

  it('replays events after a given RV, and only those', async () => {
    const rv = server.resourceVersion();
    server.upsert(makeService({ name: 'api', clusterIP: '10.96.0.50' }));
    server.remove({ kind: 'Service', namespace: 'default', name: 'api' });
    const w = await openWatch(server, `/api/v1/services?watch=1&resourceVersion=${rv}`);
    const events = await w.next(2);
    expect(events.map((e) => e.type)).toEqual(['ADDED', 'DELETED']);
    w.close();
  });

  it('answers a too-old RV with an ERROR event carrying Status 410 Expired, then ends', async () => {
    const w = await openWatch(server, '/api/v1/pods?watch=1&resourceVersion=1');
    const [e] = await w.next(1);
    expect(e).toMatchObject({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired' } });
    expect(e!.object.message).toMatch(/^too old resource version: 1 \(\d+\)$/);
    await w.ended();
    const rv = server.resourceVersion();
    server.mutate({ kind: 'Pod', namespace: 'default', name: 'web-0' }, (p) => {
      p.metadata.labels = { ...p.metadata.labels, touched: 'yes' };
    });
    server.compact();
    const late = await openWatch(server, `/api/v1/pods?watch=1&resourceVersion=${rv}`);
    expect((await late.next(1))[0]!.object.code).toBe(410);
  });

  it('turns selector exits into DELETED and entries into ADDED', async () => {
    const w = await openWatch(server, `/apis/discovery.k8s.io/v1/endpointslices?watch=1&resourceVersion=${server.resourceVersion()}&labelSelector=${encodeURIComponent('kubernetes.io/service-name=web')}`);
    const relabel = (svc: string) =>
      server.mutate({ kind: 'EndpointSlice', namespace: 'default', name: 'web-x7k2p' }, (e) => {
        e.metadata.labels = { ...e.metadata.labels, 'kubernetes.io/service-name': svc };
      });
    relabel('other');
    relabel('web');
    expect((await w.next(2)).map((e) => e.type)).toEqual(['DELETED', 'ADDED']);
    w.close();
  });

  it('streams Table events with headers only on the first', async () => {
    const w = await openWatch(server, '/api/v1/namespaces/default/pods?watch=1', TABLE);
    const [a, b] = await w.next(2);
    expect(a!.object.kind).toBe('Table');
    expect(a!.object.columnDefinitions.length).toBeGreaterThan(0);
    expect(b!.object.columnDefinitions).toBeNull();
    expect(server.pods().map((p) => p.metadata.name)).toContain(b!.object.rows[0].cells[0]);
    expect(b!.object.rows[0].cells).toHaveLength(a!.object.columnDefinitions.length);
    w.close();
  });

  it('sends bookmarks when allowed, and the initial-events-end bookmark for sendInitialEvents', async () => {
    const fast = await startApiServer({ objects: [makePod(), makeEndpointSlice()], bookmarkIntervalMs: 50 });
    try {
      const w = await openWatch(fast, `/api/v1/pods?watch=1&allowWatchBookmarks=true&resourceVersion=${fast.resourceVersion()}`);
      const [bm] = await w.next(1);
      expect(bm).toMatchObject({ type: 'BOOKMARK', object: { kind: 'Pod', metadata: { resourceVersion: fast.resourceVersion() } } });
      w.close();
      const s = await openWatch(fast, '/api/v1/pods?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true');
      const [added, end] = await s.next(2);
      expect(added!.type).toBe('ADDED');
      expect(end!.object.metadata.annotations).toEqual({ 'k8s.io/initial-events-end': 'true' });
      s.close();
    } finally {
      await fast.close();
    }
  });

  it('ends the stream after timeoutSeconds', async () => {
    const w = await openWatch(server, `/api/v1/nodes?watch=1&timeoutSeconds=1&resourceVersion=${server.resourceVersion()}`);
    const t0 = Date.now();
    await w.ended();
    expect(Date.now() - t0).toBeGreaterThanOrEqual(900);
  });
});
