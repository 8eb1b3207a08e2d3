/**
 * What `trace` reads from a replay when `--to` names a dotted-quad IPv4 address: the walk
 * looks up one packet's flow, so the conntrack table is read only for the flows holding the
 * destination address (src/sources/replay-flows.ts); the API objects only as far as a walk to
 * that destination reads them (src/sources/api-select.ts); and the nat table without the rules
 * of the per-Service chains such a walk cannot reach (src/sources/replay-nat.ts). When the
 * walk over that read enters or names a chain whose rules were left out, the source is read
 * again with the nat table whole ({@link loadForTrace}): the document is the one the whole
 * capture gives. Everything else is read as `loadOnce` reads it; a live source (and
 * `--allow-trace`) reads what it always read.
 */
import type { NodeSnapshot } from '../model/snapshot.js';
import { apiTextFor, type FrontendQuery } from '../sources/api-select.js';
import { FlowFilteredReplay, isPlainIpv4 } from '../sources/replay-flows.js';
import { closeSource, type OpenedSource } from '../sources/open.js';
import { traceFromSnapshot, type TraceCommandArgs } from '../trace/choose-engine.js';
import type { TraceResult } from '../trace/types.js';
import { loadOnce } from './load.js';
import type { GlobalOptions } from './options.js';
import { ReplayTransport } from '../sources/replay.js';

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

/** How `trace` reads a replay (see the module comment). */
export interface TraceRead {
  /** The first read: flows, API objects and nat table narrowed to the destination. */
  readonly lean: (source: OpenedSource) => OpenedSource;
  /** The read again: flows and API objects narrowed, the nat table whole. */
  readonly whole: (source: OpenedSource) => OpenedSource;
  /** True when the walk of `args` over the lean read's `snapshot` entered or named a chain whose rules it left out. */
  readonly needsWhole: (snapshot: NodeSnapshot, args: TraceCommandArgs) => boolean;
}

/** True when `r` (or a candidate walk in it) steps into or branches to a chain of `cut`. */
export function touches(r: TraceResult, cut: ReadonlySet<string>): boolean {
  const step = r.steps.some((s) => (s.chain !== null && cut.has(s.chain)) || (s.branches ?? []).some((b) => cut.has(b.target)));
  return step || (r.candidates ?? []).some((c) => touches(c.result, cut));
}

/** How `trace` reads its source for `--to` (see the module comment); undefined: the source as opened. */
export function traceRead(to: string | undefined, allowTrace: boolean): TraceRead | undefined {
  const address = allowTrace ? null : plainIpv4Destination(to);
  if (address === null) return undefined;
  const q: FrontendQuery = { address, port: destinationPort(to!) };
  let leanTransport: FlowFilteredReplay | null = null;
  const narrowed = (source: OpenedSource, nat: boolean): OpenedSource => {
    if (!(source.transport instanceof ReplayTransport)) return source;
    const transport = new FlowFilteredReplay(source.transport.bundle, address, nat ? q : undefined);
    if (nat) leanTransport = transport;
    return { ...source, transport, apiText: source.apiText === undefined ? undefined : apiTextFor(source.apiText, q) };
  };
  return {
    lean: (source) => narrowed(source, true),
    whole: (source) => narrowed(source, false),
    needsWhole: (snapshot, args) => {
      const cut = (leanTransport as FlowFilteredReplay | null)?.natCut;
      return cut !== undefined && cut.size > 0 && touches(traceFromSnapshot(snapshot, args), cut);
    },
  };
}

/**
 * The snapshot `trace` walks and the walk's arguments (`argsOf` makes them from a snapshot:
 * names resolve through its API objects): the lean read, or the read again with the nat table
 * whole when the walk needs it. The source is returned open (`--allow-trace` traces on it).
 */
export async function loadForTrace(opts: GlobalOptions & { to?: string; allowTrace?: boolean }, argsOf: (snapshot: NodeSnapshot) => TraceCommandArgs) {
  const read = traceRead(opts.to, opts.allowTrace === true);
  const closingOnError = async <T>(source: OpenedSource, f: () => T): Promise<T> => {
    try {
      return f();
    } catch (e) {
      await closeSource(source);
      throw e;
    }
  };
  const first = await loadOnce(opts, [], undefined, false, read?.lean, true);
  const args = await closingOnError(first.source, () => argsOf(first.snapshot));
  if (!(await closingOnError(first.source, () => read?.needsWhole(first.snapshot, args)))) return { ...first, args };
  await closeSource(first.source);
  const again = await loadOnce(opts, [], undefined, false, read!.whole, true);
  return { ...again, args: await closingOnError(again.source, () => argsOf(again.snapshot)) };
}
