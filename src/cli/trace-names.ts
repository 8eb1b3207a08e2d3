/**
 * `trace --from POD-NAME` and `trace --to-service NS/NAME[:PORT]`: names resolved to the
 * addresses the trace engine takes, through the source's own API objects (a replay's
 * recorded ones, `--api-file`, or the cluster). A name that matches nothing, or more than
 * one thing, is a UserError naming the candidates, never a guess.
 */
import { isIP } from 'node:net';
import { said, UsageError, UserError } from '../errors.js';
import type { ApiObjects } from '../model/k8s.js';

/** True when `from` is an address (`IP`, `IP:PORT`, `[IPv6]:PORT`), not a Pod name. */
export function isAddressArg(from: string): boolean {
  if (from.startsWith('[')) return true;
  const colon = from.lastIndexOf(':');
  return isIP(from) !== 0 || (colon > 0 && isIP(from.slice(0, colon)) !== 0);
}

/** `--from NAME` or `NAMESPACE/NAME` → the Pod's first IP (in `namespace` when given and the name has none). */
export function podAddress(api: ApiObjects | null, from: string, namespace: string | undefined): string {
  if (!api) throw new UserError(said('ue.from.podNeedsApi', { from }), said('ue.from.podNeedsApiHint'));
  const [ns, name] = from.includes('/') ? (from.split('/', 2) as [string, string]) : [namespace, from];
  const found = api.pods.filter((p) => p.meta.name === name && (ns === undefined || p.meta.namespace === ns));
  if (found.length > 1) throw new UserError(said('ue.from.podsIn', { from, namespaces: found.map((p) => p.meta.namespace).join(', ') }), said('ue.from.podsInHint', { example: `${found[0]!.meta.namespace}/${name}` }));
  const pod = found[0];
  if (!pod) {
    const close = api.pods.filter((p) => p.meta.name.startsWith(name.slice(0, 3))).slice(0, 5).map((p) => `${p.meta.namespace}/${p.meta.name}`);
    throw new UserError(said('ue.from.noPod', { from, ns: ns ? said('ue.from.inNamespace', { ns }) : '' }), close.length ? said('err.eg', { list: close.join(', ') }) : said('ue.from.listPods'));
  }
  const ip = pod.podIPs[0];
  if (!ip) throw new UserError(said('ue.from.noIp', { from }), said('ue.from.noIpHint'));
  return ip;
}

/** `--to-service NS/NAME[:PORT]` (PORT a number or a port name; optional when the Service has one port) → `clusterIP:port/proto`. */
export function serviceDestination(api: ApiObjects | null, ref: string): string {
  const m = /^([^/]+)\/([^:]+)(?::(.+))?$/.exec(ref);
  if (!m) throw new UsageError(said('ue.toService.form', { ref }), said('ue.toService.example'));
  const [, ns, name, port] = m as unknown as [string, string, string, string | undefined];
  if (!api) throw new UserError(said('ue.toService.needsApi', { ref }), said('ue.toService.needsApiHint'));
  const svc = api.services.find((s) => s.meta.namespace === ns && s.meta.name === name);
  if (!svc) throw new UserError(said('ue.toService.noService', { ref, service: `${ns}/${name}` }), said('ue.toService.list'));
  const ip = svc.clusterIPs[0] ?? svc.clusterIP;
  if (!ip || ip === 'None') throw new UserError(said('ue.toService.noClusterIp', { ref }), said('ue.toService.noClusterIpHint'));
  const ports = port === undefined ? svc.ports : svc.ports.filter((p) => String(p.port) === port || p.name === port);
  if (ports.length !== 1) {
    const all = svc.ports.map((p) => `${p.port}/${p.protocol}${p.name ? ` (${p.name})` : ''}`).join(', ');
    throw new UserError(said('ue.toService.ports', { ref, why: said(ports.length ? 'ue.toService.severalPorts' : 'ue.toService.noSuchPort'), all: all || said('ue.none') }), said('ue.data', { text: `--to-service ${ns}/${name}:${svc.ports[0]?.name || (svc.ports[0]?.port ?? 'PORT')} (a port name tells ports of one number apart)` }));
  }
  const p = ports[0]!;
  return `${ip.includes(':') ? `[${ip}]` : ip}:${p.port}/${p.protocol.toLowerCase()}`;
}
