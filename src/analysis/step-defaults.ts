/**
 * The packet step mode starts with when the user picks a Service: a pod on this
 * node (one that is not the Service's own endpoint, when there is one) sending a
 * new connection to the Service's first ClusterIP port. Pure.
 */
import type { NodeSnapshot } from '../model/snapshot.js';

/** A packet as `nodescope trace` takes it: `from` IP, `to` `IP:PORT/proto`. */
export interface StepPacket {
  readonly from: string;
  readonly to: string;
}

/**
 * The default packet for Service `namespace/name`, or a reason it cannot be made
 * (no API objects, a headless or ExternalName Service, no pod on this node).
 */
export function defaultStepPacket(snapshot: NodeSnapshot, namespace: string, name: string): StepPacket | { readonly reason: string } {
  const api = snapshot.api?.value;
  if (!api) return { reason: 'no API objects: type a packet with nodescope trace' };
  const svc = api.services.find((s) => s.meta.namespace === namespace && s.meta.name === name);
  const ip = svc?.clusterIPs.find((a) => a !== 'None' && a !== '' && !a.includes(':')) ?? svc?.clusterIPs.find((a) => a !== 'None' && a !== '');
  const port = svc?.ports[0];
  if (!svc || !ip || !port) return { reason: `${namespace}/${name} has no ClusterIP port to send to` };
  const endpoints = new Set(api.endpointSlices.filter((s) => s.meta.namespace === namespace && s.serviceName === name).flatMap((s) => s.endpoints.flatMap((e) => e.addresses)));
  const local = api.pods.filter((p) => p.nodeName === snapshot.meta.node && !p.hostNetwork && p.podIPs.length > 0 && p.phase !== 'Succeeded' && p.phase !== 'Failed');
  const client = local.find((p) => !p.podIPs.some((a) => endpoints.has(a))) ?? local[0];
  if (!client) return { reason: `no pod on ${snapshot.meta.node} to send from: type a packet with nodescope trace` };
  const to = ip.includes(':') ? `[${ip}]:${port.port}` : `${ip}:${port.port}`;
  return { from: client.podIPs[0]!, to: `${to}/${port.protocol.toLowerCase()}` };
}
