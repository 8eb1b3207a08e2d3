/**
 * What `trace` reads from a replay: the walk looks up one packet's flow, so the conntrack
 * table is read only for the flows holding the destination address (src/sources/replay-flows.ts)
 * when `--to` names a dotted-quad IPv4 address. Everything else is read as `loadOnce` reads it;
 * a live source (and `--allow-trace`) reads what it always read.
 */
import { FlowFilteredReplay, isPlainIpv4 } from '../sources/replay-flows.js';
import type { OpenedSource } from '../sources/open.js';
import { ReplayTransport } from '../sources/replay.js';
import type { Transport } from '../sources/transport.js';

/** The address of a `--to` text (`IP:PORT/PROTO`, `IP/icmp`) when it is a dotted-quad IPv4 address, else null. */
export function plainIpv4Destination(to: string | undefined): string | null {
  if (to === undefined) return null;
  const text = to.trim();
  const slash = text.lastIndexOf('/');
  const host = slash >= 0 ? text.slice(0, slash) : text;
  const colon = host.indexOf(':');
  if (colon >= 0 && host.indexOf(':', colon + 1) >= 0) return null;
  const ip = colon >= 0 ? host.slice(0, colon) : host;
  return isPlainIpv4(ip) ? ip : null;
}

/** The transport `trace` reads `source` through (see the module comment); undefined: the source's own. */
export function traceReader(to: string | undefined, allowTrace: boolean): ((source: OpenedSource) => Transport) | undefined {
  const address = allowTrace ? null : plainIpv4Destination(to);
  if (address === null) return undefined;
  return (source) => (source.transport instanceof ReplayTransport ? new FlowFilteredReplay(source.transport.bundle, address) : source.transport);
}
