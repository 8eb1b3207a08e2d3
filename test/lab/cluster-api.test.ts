/**
 * The cluster API feed against the recorded API server (real REST, watch and Status
 * protocol; no root needed): the List text parses to what the server holds, watch events
 * reach subscribers and the session's snapshot, 410 Expired leads to a re-list, a
 * Service choice narrows the lists, -n limits the namespace, and a 403 names verb and
 * resource.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UserError } from '../../src/errors.js';
import { parseK8sObjects } from '../../src/parsers/k8s-objects.js';
import { Session } from '../../src/collect/session.js';
import { ClusterApi } from '../../src/sources/cluster-api.js';
import { loadKube } from '../../src/sources/k8s-client.js';
import { ReplayTransport } from '../../src/sources/replay.js';
import { defaultCaptureDir } from '../../src/paths.js';
import { makeCapture, makeEndpointSlice, makeIPAddress, makeService, makeServiceCIDR } from '../api-server/builders.js';
import { startApiServer, type ApiServerHandle } from '../api-server/index.js';

let server: ApiServerHandle;
const feeds: ClusterApi[] = [];
const dir = mkdtempSync(path.join(tmpdir(), 'nodescope-capi-'));

beforeAll(async () => {
  const capture = makeCapture();
  capture.items.push(makeService({ name: 'db', namespace: 'kube-system', clusterIP: '10.96.0.50' }), makeEndpointSlice({ service: 'db', namespace: 'kube-system', addresses: ['10.244.3.3'] }));
  capture.items.push(makeServiceCIDR(), makeIPAddress('10.96.12.34', { name: 'web' }));
  server = await startApiServer({ objects: capture, podStartDelayMs: 50 });
});
afterAll(async () => {
  for (const f of feeds) await f.close();
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

async function open(opts: Parameters<typeof ClusterApi.open>[1] = {}, kubeOpts: { namespace?: string } = {}): Promise<ClusterApi> {
  const f = await ClusterApi.open(loadKube({ kubeconfig: server.kubeconfigPath, ...kubeOpts }), { debounceMs: 20, backoffMs: 50, ...opts });
  feeds.push(f);
  return f;
}

async function until(what: string, ok: () => boolean, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const endpointsOf = (text: string, service: string) =>
  parseK8sObjects(text, 't').value.endpointSlices.filter((e) => e.serviceName === service).flatMap((e) => e.endpoints.flatMap((p) => p.addresses));

describe('ClusterApi against the recorded API server', () => {
  it('lists every kind in all namespaces as one List the parser reads without diagnostics', async () => {
    const f = await open({ watch: false });
    const parsed = parseK8sObjects(f.text(), f.origin);
    expect(parsed.diagnostics.filter((d) => d.severity !== 'info')).toEqual([]);
    const names = (xs: readonly { meta: { namespace: string; name: string } }[]) => xs.map((x) => `${x.meta.namespace}/${x.meta.name}`).sort();
    expect(names(parsed.value.services)).toEqual(server.list('services').map((o) => `${o.metadata.namespace}/${o.metadata.name}`).sort());
    expect(names(parsed.value.pods)).toEqual(server.list('pods').map((o) => `${o.metadata.namespace}/${o.metadata.name}`).sort());
    expect(parsed.value.nodes.map((n) => n.meta.name)).toEqual(['node-1']);
    // Items are the API's objects: the captured Service is there field for field.
    const raw = parsed.value.services.find((s) => s.meta.name === 'web')!.raw;
    expect(raw).toEqual(server.get({ kind: 'Service', namespace: 'default', name: 'web' }));
    expect(f.node('node-1')?.podCIDRs.length).toBeGreaterThan(0);
    expect(f.node('nope')).toBeUndefined();
  });

  it('-n limits namespaced kinds; a chosen Service narrows Services and EndpointSlices', async () => {
    const ns = await open({ watch: false }, { namespace: 'kube-system' });
    expect(parseK8sObjects(ns.text(), 't').value.services.map((s) => s.meta.name)).toEqual(['db']);
    expect(parseK8sObjects(ns.text(), 't').value.nodes).toHaveLength(1);
    const one = await open({ watch: false, service: 'web' }, { namespace: 'default' });
    const v = parseK8sObjects(one.text(), 't').value;
    expect(v.services.map((s) => s.meta.name)).toEqual(['web']);
    expect(v.endpointSlices.map((e) => e.serviceName)).toEqual(['web']);
  });

  it('allNamespaces (diagnose -n) lists every namespace whatever -n says; a forbidden cluster-wide list falls back to -n', async () => {
    const names = (f: ClusterApi) => parseK8sObjects(f.text(), 't').value.services.map((x) => `${x.meta.namespace}/${x.meta.name}`).sort();
    const all = await open({ watch: false, allNamespaces: true }, { namespace: 'kube-system' });
    expect(names(all)).toEqual(server.list('services').map((o) => `${o.metadata.namespace}/${o.metadata.name}`).sort());
    expect(names(all)).toEqual(expect.arrayContaining(['default/web', 'kube-system/db']));
    expect(all.narrowedKinds()).toEqual([]);
    server.setForbidden([{ verb: 'list', resource: 'services', clusterScope: true }]);
    try {
      const narrowed = await open({ allNamespaces: true }, { namespace: 'kube-system' });
      expect(names(narrowed)).toEqual(['kube-system/db']);
      expect(narrowed.narrowedKinds()).toEqual(['services']);
      // The other kinds still span every namespace, and the watch of services stays in kube-system.
      expect(parseK8sObjects(narrowed.text(), 't').value.endpointSlices.map((e) => e.meta.namespace)).toEqual(expect.arrayContaining(['default', 'kube-system']));
      server.upsert(makeService({ name: 'db2', namespace: 'kube-system', clusterIP: '10.96.0.51' }));
      await until('the kube-system watch event', () => names(narrowed).includes('kube-system/db2'));
      server.remove({ kind: 'Service', namespace: 'kube-system', name: 'db2' });
      await until('the kube-system delete event', () => !names(narrowed).includes('kube-system/db2'));
      // Without -n there is nothing to fall back to: the 403 is the user's to see.
      const e = await open({ watch: false, allNamespaces: true }).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(UserError);
    } finally {
      server.setForbidden([]);
    }
  });

  it('a watch event changes the text and notifies subscribers; the session rebuilds its snapshot', async () => {
    const f = await open();
    const session = new Session({ transport: new ReplayTransport(defaultCaptureDir()), live: false, api: f });
    await session.start();
    expect(endpointsOf(f.text(), 'web')).toEqual(['10.244.1.5', '10.244.2.7']);
    let calls = 0;
    f.subscribe(() => calls++);
    server.mutate({ kind: 'EndpointSlice', namespace: 'default', name: 'web-x7k2p' }, (eps) => {
      eps['endpoints'] = [{ addresses: ['10.244.9.9'], conditions: { ready: true } }];
    });
    await until('the watch event', () => calls > 0);
    expect(endpointsOf(f.text(), 'web')).toEqual(['10.244.9.9']);
    await until('the session snapshot', () => session.getState().snapshot?.api?.value?.endpointSlices.some((e) => e.endpoints.some((p) => p.addresses[0] === '10.244.9.9')) ?? false);
    await session.stop();
  });

  it('410 Expired after a compaction makes it list again, and it keeps watching', async () => {
    const f = await open({ watchTimeoutSeconds: 1 });
    const lists = () => server.requests().filter((r) => r.path === '/api/v1/services' && !/watch=/.test(r.query)).length;
    const before = lists();
    // Advance the version through another kind, then drop the history: the Service watch's version is now too old.
    server.mutate({ kind: 'Pod', namespace: 'default', name: 'web-0' }, (p) => {
      p.metadata.labels = { ...p.metadata.labels, touched: 'yes' };
    });
    await until('the pod event', () => f.text().includes('"touched": "yes"'));
    server.compact();
    await until('a re-list of services', () => lists() > before, 15_000);
    server.upsert(makeService({ name: 'late', namespace: 'default', clusterIP: '10.96.0.77' }));
    await until('the new service through the restarted watch', () => f.text().includes('10.96.0.77'), 15_000);
  });

  it('a forbidden list is a UserError naming the verb and resource', async () => {
    server.setForbidden([{ verb: 'list', resource: 'endpointslices' }]);
    try {
      const e = await open({ watch: false }).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(UserError);
      expect((e as UserError).message).toMatch(/"list" on "endpointslices" at the cluster scope/);
    } finally {
      server.setForbidden([]);
    }
  });

  it('lists ServiceCIDRs and IPAddresses (cluster-scoped even with -n); a forbidden one is skipped and named, not fatal', async () => {
    const ns = await open({ watch: false }, { namespace: 'kube-system' });
    const v = parseK8sObjects(ns.text(), 't').value;
    expect(v.serviceCIDRs.map((c) => c.cidrs)).toEqual([['10.96.0.0/16']]);
    expect(v.ipAddresses.map((a) => `${a.address} ${a.parentRef?.namespace}/${a.parentRef?.name}`)).toEqual(['10.96.12.34 default/web']);
    expect(ns.skipped()).toEqual([]);
    expect(v.unread).toBeUndefined();
    server.setForbidden([{ verb: 'list', resource: 'ipaddresses' }]);
    try {
      const f = await open({ watch: false });
      expect(parseK8sObjects(f.text(), 't').value.ipAddresses).toEqual([]);
      expect(f.skipped()).toEqual(['ipaddresses: forbidden (RBAC)']);
      // The objects text carries the note, so a capture's replay says it too.
      expect(parseK8sObjects(f.text(), 't').value.unread).toEqual(['ipaddresses: forbidden (RBAC)']);
    } finally {
      server.setForbidden([]);
    }
  });

  it('a missing kubeconfig or unknown context is a UserError', () => {
    expect(() => loadKube({ kubeconfig: path.join(dir, 'none') })).toThrow(UserError);
    const file = path.join(dir, 'kc');
    writeFileSync(file, 'apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n');
    expect(() => loadKube({ kubeconfig: file })).toThrow(UserError);
    expect(() => loadKube({ kubeconfig: server.kubeconfigPath, context: 'nope' })).toThrow(UserError);
  });
});
