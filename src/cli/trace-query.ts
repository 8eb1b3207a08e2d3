/**
 * The destination `trace --to` narrows a replay's reads to (src/cli/trace-load.ts): a
 * dotted-quad IPv4 address and its port, read from the `--to` text (`IP:PORT/PROTO`,
 * `IP/icmp`). Kept apart from trace-load.ts so that the API worker can start from it before
 * the command's other modules load (src/cli/trace-early.ts).
 */
import type { FrontendQuery } from '../sources/api-select.js';
import { isPlainIpv4 } from '../sources/replay-flows.js';

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

/** The port of a `--to` text (`IP:PORT/PROTO`), null when it has none (`IP/icmp`). */
function destinationPort(to: string): number | null {
  const m = /:([0-9]{1,5})(?:\/|$)/.exec(to.trim());
  return m ? Number(m[1]) : null;
}

/**
 * The destination `trace` narrows the API objects and flows to; null when it reads the source
 * as opened (`--allow-trace`, or `--to` not a dotted-quad IPv4 address).
 */
export function traceQuery(to: string | undefined, allowTrace: boolean): FrontendQuery | null {
  const address = allowTrace ? null : plainIpv4Destination(to);
  return address === null ? null : { address, port: destinationPort(to!) };
}
