/**
 * The packet step mode starts with when the user picks a Service: a pod on this
 * node (one that is not the Service's own endpoint, when there is one) sending a
 * new connection to the Service's first ClusterIP port; with no pod on this node
 * in the API objects, the node itself (`nodescope trace --entry host`, the kernel
 * picks the source address from the route). Pure.
 */
import type { NodeSnapshot } from '../model/snapshot.js';

/**
 * A packet as `nodescope trace` takes it: `from` IP (`''` for host entry: the node
 * picks its own address), `to` `IP:PORT/proto`, `entry` `host` when the node itself sends.
 */
export interface StepPacket {
  readonly from: string;
  readonly to: string;
  readonly entry?: 'host';
}

/**
 * Why no default packet can be made for a Service:
 * - `noApi`: the source has no API objects (no Services to read a ClusterIP from);
 * - `notFound`: no such Service in the API objects;
 * - `headless`: `clusterIP: None`, so kube-proxy and Cilium write no rules for it;
 * - `externalName`: an ExternalName Service, a DNS CNAME only;
 * - `noPort`: the Service has a ClusterIP but no port to send to.
 */
export type StepNoPacketReason = 'noApi' | 'notFound' | 'headless' | 'externalName' | 'noPort';

/**
 * The default packet for Service `namespace/name` (see the module doc), or the
 * reason it cannot be made.
 */
export function defaultStepPacket(snapshot: NodeSnapshot, namespace: string, name: string): StepPacket | { readonly reason: StepNoPacketReason } {
  const api = snapshot.api?.value;
  if (!api) return { reason: 'noApi' };
  const svc = api.services.find((s) => s.meta.namespace === namespace && s.meta.name === name);
  if (!svc) return { reason: 'notFound' };
  if (svc.type === 'ExternalName') return { reason: 'externalName' };
  const usable = svc.clusterIPs.filter((a) => a !== 'None' && a !== '');
  if (usable.length === 0) return { reason: 'headless' };
  const ip = usable.find((a) => !a.includes(':')) ?? usable[0]!;
  const port = svc.ports[0];
  if (!port) return { reason: 'noPort' };
  const to = `${ip.includes(':') ? `[${ip}]` : ip}:${port.port}/${port.protocol.toLowerCase()}`;
  const endpoints = new Set(api.endpointSlices.filter((s) => s.meta.namespace === namespace && s.serviceName === name).flatMap((s) => s.endpoints.flatMap((e) => e.addresses)));
  const local = api.pods.filter((p) => p.nodeName === snapshot.meta.node && !p.hostNetwork && p.podIPs.length > 0 && p.phase !== 'Succeeded' && p.phase !== 'Failed');
  const client = local.find((p) => !p.podIPs.some((a) => endpoints.has(a))) ?? local[0];
  // No pod of this node in the API objects (a capture of Services only): the node itself connects, as `trace --entry host` does.
  if (!client) return { from: '', to, entry: 'host' };
  return { from: client.podIPs[0]!, to };
}
