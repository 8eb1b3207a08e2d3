import { describe, expect, it } from 'vitest';
import { serviceDataplane } from '../../src/analysis/service-dataplane.js';
import { UserError } from '../../src/errors.js';
import { findService, formatServiceRef, lookupService, parseServiceRef, refFromKey, requireServiceRef, serviceNotFound } from '../../src/model/service-ref.js';
import { snapshotOf } from '../helpers/fixtures.js';
import { makeService, objectsOf } from './builders/k8s.js';

describe('ServiceRef', () => {
  it.each(['default/web', 'kube-system/kube-dns', 'a/b', 'ns-1/svc-2'])('parses and formats %s back', (text) => {
    const ref = parseServiceRef(text);
    expect(ref).not.toBeNull();
    expect(formatServiceRef(ref!)).toBe(text);
    expect(refFromKey(text)).toEqual(ref);
  });

  it.each(['web', 'default/', '/web', 'Default/web', 'default/web/x', 'default/-web', 'a.b/web', `default/${'x'.repeat(64)}`])('refuses %s', (text) => {
    expect(parseServiceRef(text)).toBeNull();
    expect(() => requireServiceRef(text)).toThrow(UserError);
  });

  it('finds a Service by reference, and names the closest when it is not there', () => {
    const api = objectsOf(makeService({ name: 'web' }), makeService({ name: 'db', namespace: 'prod' }));
    expect(findService(api, { namespace: 'default', name: 'web' })?.meta.name).toBe('web');
    expect(() => lookupService(api, { namespace: 'default', name: 'wbe' })).toThrow(UserError);
    try {
      lookupService(api, { namespace: 'default', name: 'wbe' });
    } catch (e) {
      expect((e as UserError).message).toBe('no Service default/wbe in the API objects');
      expect((e as UserError).hint).toBe('one of default/web');
    }
    expect(serviceNotFound('x/y', []).hint).toBe('list them with `nodescope show services`');
  });
});

describe('serviceDataplane: which dataplane handles a Service on this node', () => {
  it.each([
    ['lab-iptables', 'iptables'],
    ['lab-nftables', 'nft'],
    ['lab-cilium', 'cilium'],
  ] as const)('%s: default/web is handled by %s', async (fixture, kind) => {
    const snapshot = await snapshotOf(fixture);
    const where = serviceDataplane(snapshot, { namespace: 'default', name: 'web' });
    expect(where.kind).toBe(kind);
    if (where.kind === 'iptables') expect(where.chains[0]!.chain).toMatch(/^KUBE-SVC-/);
    if (where.kind === 'nft') expect(where.chains[0]!.chain).toMatch(/^service-.*-default\/web\//);
    if (where.kind === 'cilium') expect(where.lb.frontends[where.frontend]!.service?.name).toBe('web');
  });

  it('says none for a Service the node has nothing of', async () => {
    const snapshot = await snapshotOf('lab-iptables');
    expect(serviceDataplane(snapshot, { namespace: 'default', name: 'nope' }).kind).toBe('none');
  });
});
