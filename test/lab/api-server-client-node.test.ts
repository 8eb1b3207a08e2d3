/**
 * The recorded API server driven by @kubernetes/client-node 1.3.0 itself, the
 * library nodescope's cluster reader and kubectl-debug source use: typed list
 * calls with selectors, Status errors as ApiException, Watch and an informer
 * seeing the mutation hook's MODIFIED, and Exec over the WebSocket.
 */
import { PassThrough } from 'node:stream';
import {
  ApiException, CoreV1Api, DiscoveryV1Api, Exec, KubeConfig, makeInformer, Watch, type ObjectCache, type V1EndpointSlice, type V1Status,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeCapture } from '../api-server/builders.js';
import { startApiServer, type ApiServerHandle } from '../api-server/index.js';

let server: ApiServerHandle;
let kc: KubeConfig;
beforeAll(async () => {
  server = await startApiServer({ objects: makeCapture(), podStartDelayMs: 100 });
  kc = new KubeConfig();
  kc.loadFromFile(server.kubeconfigPath);
});
afterAll(async () => {
  await server.close();
});

const replaceEndpoints = (addresses: string[]) =>
  server.mutate({ kind: 'EndpointSlice', namespace: 'default', name: 'web-x7k2p' }, (eps) => ({
    ...eps,
    endpoints: addresses.map((a) => ({ addresses: [a], conditions: { ready: true, serving: true, terminating: false }, nodeName: 'node-1' })),
  }));

/** Runs one exec through client-node and collects stdout, stderr and the channel-3 status. */
async function clientExec(pod: string, command: string[]): Promise<{ stdout: string; stderr: string; status: V1Status }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (d: Buffer) => (out += d.toString()));
  stderr.on('data', (d: Buffer) => (err += d.toString()));
  const status = await new Promise<V1Status>((resolve, reject) => {
    new Exec(kc).exec('default', pod, 'app', command, stdout, stderr, null, false, resolve).catch(reject);
  });
  return { stdout: out, stderr: err, status };
}

describe('@kubernetes/client-node 1.3.0 against the recorded API server', () => {
  it('CoreV1Api.listServiceForAllNamespaces decodes the ServiceList', async () => {
    const list = await kc.makeApiClient(CoreV1Api).listServiceForAllNamespaces();
    expect(list.items.map((s) => `${s.metadata?.namespace}/${s.metadata?.name}`)).toEqual(['default/web']);
    expect(list.items[0]!.spec?.clusterIP).toBe('10.96.12.34');
    expect(list.items[0]!.spec?.ports?.[0]?.port).toBe(80);
    expect(list.metadata?.resourceVersion).toBe(server.resourceVersion());
  });

  it('DiscoveryV1Api.listEndpointSliceForAllNamespaces applies the labelSelector', async () => {
    const d = kc.makeApiClient(DiscoveryV1Api);
    const hit = await d.listEndpointSliceForAllNamespaces({ labelSelector: 'kubernetes.io/service-name=web' });
    expect(hit.items.map((e) => e.metadata?.name)).toEqual(['web-x7k2p']);
    expect(hit.items[0]!.endpoints.flatMap((e) => e.addresses)).toEqual(['10.244.1.5', '10.244.2.7']);
    const miss = await d.listEndpointSliceForAllNamespaces({ labelSelector: 'kubernetes.io/service-name=db' });
    expect(miss.items).toEqual([]);
  });

  it('surfaces Status errors as ApiException with the code and body', async () => {
    const core = kc.makeApiClient(CoreV1Api);
    const missing = await core.readNamespacedPod({ namespace: 'default', name: 'ghost' }).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(ApiException);
    expect((missing as ApiException<string>).code).toBe(404);
    expect(JSON.parse(String((missing as ApiException<string>).body))).toMatchObject({ reason: 'NotFound', message: 'pods "ghost" not found' });
    server.setForbidden([{ verb: 'create', resource: 'pods' }]);
    try {
      const denied = await core
        .createNamespacedPod({ namespace: 'default', body: { metadata: { name: 'x' }, spec: { containers: [{ name: 'c', image: 'busybox' }] } } })
        .catch((e: unknown) => e);
      expect((denied as ApiException<string>).code).toBe(403);
      expect(String((denied as ApiException<string>).body)).toContain(`cannot create resource \\"pods\\" in API group \\"\\" in the namespace \\"default\\"`);
    } finally {
      server.setForbidden([]);
    }
  });

  it('Watch on endpointslices receives MODIFIED after the mutation hook', async () => {
    const list = await kc.makeApiClient(DiscoveryV1Api).listEndpointSliceForAllNamespaces();
    const events: { type: string; obj: V1EndpointSlice }[] = [];
    const ended: unknown[] = [];
    const controller = await new Watch(kc).watch(
      '/apis/discovery.k8s.io/v1/endpointslices',
      { resourceVersion: list.metadata?.resourceVersion, allowWatchBookmarks: true },
      (type, obj: V1EndpointSlice) => events.push({ type, obj }),
      (err) => ended.push(err),
    );
    replaceEndpoints(['10.244.3.9']);
    const deadline = Date.now() + 5000;
    while (events.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    controller.abort();
    expect(events.map((e) => e.type)).toEqual(['MODIFIED']);
    expect(events[0]!.obj.endpoints.flatMap((e) => e.addresses)).toEqual(['10.244.3.9']);
    expect(Number(events[0]!.obj.metadata?.resourceVersion)).toBeGreaterThan(Number(list.metadata?.resourceVersion));
  });

  it('an informer lists, then sees the update through its watch', async () => {
    const d = kc.makeApiClient(DiscoveryV1Api);
    // makeInformer returns a ListWatch, which is also the object cache.
    const informer = makeInformer(kc, '/apis/discovery.k8s.io/v1/endpointslices', () => d.listEndpointSliceForAllNamespaces()) as ReturnType<
      typeof makeInformer<V1EndpointSlice>
    > &
      ObjectCache<V1EndpointSlice>;
    const updates: string[][] = [];
    informer.on('update', (obj: V1EndpointSlice) => updates.push(obj.endpoints.flatMap((e) => e.addresses)));
    await informer.start();
    try {
      expect(informer.list().map((e) => e.metadata?.name)).toEqual(['web-x7k2p']);
      replaceEndpoints(['10.244.4.1', '10.244.4.2']);
      const deadline = Date.now() + 5000;
      while (updates.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(updates).toEqual([['10.244.4.1', '10.244.4.2']]);
    } finally {
      await informer.stop();
    }
  });

  it('Exec over the WebSocket returns stdout and the Success status', async () => {
    const r = await clientExec('web-0', ['sh', '-c', 'echo hi; echo warn >&2']);
    expect(r.stdout).toBe('hi\n');
    expect(r.stderr).toBe('warn\n');
    expect(r.status).toEqual({ metadata: {}, status: 'Success' });
  });

  it('Exec returns the NonZeroExitCode status with the exit code as cause', async () => {
    const r = await clientExec('web-0', ['sh', '-c', 'exit 42']);
    expect(r.status.status).toBe('Failure');
    expect(r.status.reason).toBe('NonZeroExitCode');
    expect(r.status.details?.causes).toEqual([{ reason: 'ExitCode', message: '42' }]);
  });
});
