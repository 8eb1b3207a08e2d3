/**
 * Whether `nodescope dash --service NS/NAME` names a Service the source knows, decided
 * before the dashboard's screen opens (a typo then ends with a message and the closest
 * names instead of an empty dashboard). Pure.
 */
import { said, UserError } from '../errors.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import { formatServiceRef, refOfService, serviceNotFound } from '../model/service-ref.js';
import { dashSample } from './series.js';

/**
 * True when `snapshot` holds what {@link dashServiceError} needs: API objects (the Service
 * list), or else every part parsed (the rewrite table, for a source without API objects).
 */
export function canCheckService(snapshot: NodeSnapshot | null): snapshot is NodeSnapshot {
  return snapshot !== null && (Boolean(snapshot.api?.value) || (snapshot.pending?.length ?? 0) === 0);
}

/**
 * The UserError for a `service` (`namespace/name`) the source does not know, else null.
 * With API objects: not among their Services (the hint lists the closest `ns/name`s).
 * Without: an iptables/nftables node whose kube-proxy rules have no chain of it (other
 * modes have no per-endpoint counter to look it up by, and the dashboard says so).
 */
export function dashServiceError(snapshot: NodeSnapshot, service: string): UserError | null {
  const api = snapshot.api?.value;
  if (api) {
    const names = api.services.map((s) => formatServiceRef(refOfService(s)));
    if (names.includes(service)) return null;
    return serviceNotFound(service, names);
  }
  const sample = dashSample(snapshot, service, 0);
  if (sample.serviceFound || !['iptables', 'iptables-legacy', 'iptables-mixed', 'nftables'].includes(sample.mode)) return null;
  return serviceNotFound(service, [], said('ue.kubeProxyRules'), said('ue.checkNameRules'));
}
