/**
 * The Services the conntrack pane classifies entries against, read straight from the API
 * objects: the frontends and backends `dataplaneTargets` (src/analysis/service-view.ts) gives,
 * without building the Services view first and without sorting or de-duplicating inside a
 * Service. The classifier (src/analysis/conntrack-classify.ts) reads each Service's VIPs,
 * NodePorts and endpoints as sets (the first Service in list order wins a tie), so only the
 * order of the Services matters to it; that order is the view's (namespace, then name).
 */
import { canonicalIp } from '../model/conntrack.js';
import type { ApiObjects, EndpointPort, EndpointSlice, Protocol } from '../model/k8s.js';
import { formatServiceRef } from '../model/service-ref.js';
import type { ServiceEndpoint, ServiceFrontends, ServiceNodePort, ServiceProtocol, ServiceVip } from './conntrack-nat.js';
import { portName, servicesInRowOrder, slicesByService } from './service-row.js';

/**
 * True for an address written the one way the view's sort key and the classifier's
 * address ids agree on: dotted-quad IPv4 without leading zeros (each part ≤ 255), or IPv6
 * already in its canonical form (`canonicalIp(text) === text`, src/model/conntrack.ts). Two different texts that pass
 * name two different addresses, so a set of them needs no spelling-aware de-duplication.
 */
export function isPlainAddress(text: string): boolean {
  if (text.indexOf(':') >= 0) return canonicalIp(text) === text;
  let start = 0;
  for (let part = 0; part < 4; part++) {
    let end = start;
    let value = 0;
    while (end < text.length) {
      const c = text.charCodeAt(end);
      if (c < 48 || c > 57) break;
      value = value * 10 + (c - 48);
      end++;
    }
    const len = end - start;
    if (len < 1 || len > 3 || value > 255 || (len > 1 && text.charCodeAt(start) === 48)) return false;
    if (part < 3 ? text.charCodeAt(end) !== 46 : end !== text.length) return false;
    start = end + 1;
  }
  return true;
}

/**
 * Per Service of `objects`, in the Services view's row order (namespace, then name, by code
 * unit; ties in input order), what `dataplaneTargets(buildServiceView(objects))` gives as sets:
 * `vips` (clusterIPs, externalIPs and load-balancer ingress IPs × Service ports; none for
 * ExternalName or headless Services), `nodePorts` (none for ExternalName), `endpoints` (every
 * address of the Service's non-FQDN slices × the slice ports with a number that serve a
 * Service port by name and protocol). Lists are in reading order and may repeat an item;
 * endpoints carry no `ready` (the classifier does not read it). Returns undefined — the caller
 * then uses the view — when an address is not plain ({@link isPlainAddress}): the view keys
 * addresses by a sort key under which two spellings can collide and keeps one of them.
 * Never throws.
 */
export function classificationTargets(objects: ApiObjects): ServiceFrontends[] | undefined {
  const out: { namespace: string; name: string; vips: ServiceVip[]; nodePorts: ServiceNodePort[]; endpoints: ServiceEndpoint[] }[] = [];
  let open = out[0]!;
  const sink: TargetSink = {
    service(namespace, name) {
      out.push((open = { namespace, name, vips: [], nodePorts: [], endpoints: [] }));
      return true;
    },
    vip(ip, port, protocol) {
      open.vips.push({ ip, port, protocol });
      return true;
    },
    nodePort(port, protocol) {
      open.nodePorts.push({ port, protocol });
      return true;
    },
    endpoint(ip, port, protocol) {
      open.endpoints.push({ ip, port, protocol });
      return true;
    },
  };
  return readClassificationTargets(objects, sink) ? out : undefined;
}

/**
 * Where {@link readClassificationTargets} writes: `service` opens the next Service, then its
 * `vip`s, `nodePort`s and `endpoint`s in that order. A method that returns false stops the
 * reading (src/analysis/conntrack-targets-codec.ts `TargetColumnsWriter`: an item its columns
 * do not hold).
 */
export interface TargetSink {
  service(namespace: string, name: string): boolean;
  vip(ip: string, port: number, protocol: ServiceProtocol): boolean;
  nodePort(port: number, protocol: ServiceProtocol): boolean;
  endpoint(ip: string, port: number, protocol: ServiceProtocol): boolean;
}

/**
 * Reads {@link classificationTargets}' Services and items from `objects`, in its order, into
 * `sink` (the objects, or columns for the parse worker). False when an address is not plain
 * (classificationTargets' undefined) or the sink refused an item; what was written is then of
 * no use. Never throws.
 */
export function readClassificationTargets(objects: ApiObjects, sink: TargetSink): boolean {
  const slicesOf = slicesByService(objects.endpointSlices);
  const services = servicesInRowOrder(objects.services);
  for (const svc of services) {
    const svcPorts = svc.ports;
    if (!sink.service(svc.meta.namespace, svc.meta.name)) return false;
    if (svc.type !== 'ExternalName' && !svc.headless) {
      const addVips = (ip: string): boolean => {
        if (!isPlainAddress(ip)) return false;
        for (const p of svcPorts) if (!sink.vip(ip, p.port, p.protocol)) return false;
        return true;
      };
      for (const ip of svc.clusterIPs) if (!addVips(ip)) return false;
      for (const ip of svc.externalIPs) if (!addVips(ip)) return false;
      for (const ingress of svc.loadBalancerIngress) if (ingress.ip !== undefined && !addVips(ingress.ip)) return false;
    }
    if (svc.type !== 'ExternalName') for (const p of svcPorts) if (p.nodePort !== undefined && !sink.nodePort(p.nodePort, p.protocol)) return false;
    for (const slice of slicesOf.get(formatServiceRef(svc.meta)) ?? []) {
      if (slice.addressType === 'FQDN') continue;
      const ports = servingPorts(slice.ports, svcPorts);
      if (ports.length === 0) continue;
      for (const e of slice.endpoints) {
        for (const address of e.addresses) {
          if (!isPlainAddress(address)) return false;
          for (const p of ports) if (!sink.endpoint(address, p.port!, p.protocol)) return false;
        }
      }
    }
  }
  return true;
}

/** The slice ports with a number that serve a Service port (same name, absent = `""`, and protocol). */
function servingPorts(ports: readonly EndpointPort[], svcPorts: readonly { readonly name: string; readonly protocol: Protocol }[]): readonly EndpointPort[] {
  return ports.filter((p) => p.port !== null && svcPorts.some((sp) => sp.name === portName(p) && sp.protocol === p.protocol));
}
