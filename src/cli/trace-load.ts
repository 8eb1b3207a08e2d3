/**
 * What `trace` reads from a replay: the walk looks up one packet's flow, so the conntrack
 * table is read only for the flows holding the destination address (src/sources/replay-flows.ts)
 * when `--to` names a dotted-quad IPv4 address, and the API objects only as far as a walk to
 * that destination reads them (src/sources/api-select.ts). Everything else is read as
 * `loadOnce` reads it; a live source (and `--allow-trace`) reads what it always read.
 */
import { apiTextFor } from '../sources/api-select.js';
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

/** The port of a `--to` text (`IP:PORT/PROTO`), null when it has none (`IP/icmp`). */
function destinationPort(to: string): number | null {
  const m = /:([0-9]{1,5})(?:\/|$)/.exec(to.trim());
  return m ? Number(m[1]) : null;
}

/**
 * The source `trace` reads (see the module comment): a replay narrowed to the flows and API
 * objects of a dotted-quad IPv4 `--to`; undefined: the source as opened.
 */
export function traceSource(to: string | undefined, allowTrace: boolean): ((source: OpenedSource) => OpenedSource) | undefined {
  const reader = traceReader(to, allowTrace);
  if (reader === undefined) return undefined;
  const q = { address: plainIpv4Destination(to)!, port: destinationPort(to!) };
  return (source) => {
    if (!(source.transport instanceof ReplayTransport)) return source;
    return { ...source, transport: reader(source), apiText: source.apiText === undefined ? undefined : apiTextFor(source.apiText, q) };
  };
}
