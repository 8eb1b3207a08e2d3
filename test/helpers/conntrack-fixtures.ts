/**
 * Conntrack variants of the lab fixture bundles for the Conntrack view, pane and report
 * tests: the same capture replayed with API objects where a kube-dns endpoint moved, so
 * the entries the capture holds for the old endpoint are stale — what happens when a
 * CoreDNS pod is replaced and kube-proxy does not clear its UDP conntrack entries.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { NodeSnapshot } from '../../src/model/snapshot.js';
import { copyFixture, snapshotOfDir } from './fixtures.js';

/** The kube-dns endpoint the stale variants remove, and the one that replaces it. */
export const MOVED_DNS_ENDPOINT = { from: '10.244.0.3', to: '10.244.0.4' } as const;

interface SliceJson {
  kind: string;
  metadata: { namespace: string; labels?: Record<string, string> };
  endpoints: { addresses: string[] }[] | null;
}

/**
 * Fixture bundle `name` (e.g. `lab-iptables`) replayed with its kube-dns EndpointSlice
 * naming {@link MOVED_DNS_ENDPOINT}.to instead of `.from`: the conntrack capture is
 * unchanged, so its UDP entries answered by `.from` are stale.
 */
export async function snapshotWithMovedDnsEndpoint(name: string): Promise<NodeSnapshot> {
  const dir = copyFixture(name);
  const file = path.join(dir, 'api.json');
  const list = JSON.parse(readFileSync(file, 'utf8')) as { items: SliceJson[] };
  const slice = list.items.find((i) => i.kind === 'EndpointSlice' && i.metadata.labels?.['kubernetes.io/service-name'] === 'kube-dns');
  if (!slice?.endpoints) throw new Error(`${name}: no kube-dns EndpointSlice with endpoints`);
  for (const e of slice.endpoints) e.addresses = e.addresses.map((a) => (a === MOVED_DNS_ENDPOINT.from ? MOVED_DNS_ENDPOINT.to : a));
  writeFileSync(file, JSON.stringify(list));
  return snapshotOfDir(dir);
}
