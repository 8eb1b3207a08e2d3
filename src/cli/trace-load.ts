/**
 * What `trace` reads from a replay when `--to` names a dotted-quad IPv4 address: the walk
 * looks up one packet's flow, so the conntrack table is read only for the flows holding the
 * destination address (src/sources/replay-flows.ts), and the API objects only as far as a
 * walk to that destination reads them (src/sources/api-select.ts). Whatever the source, the
 * iptables rulesets are parsed lazily (each chain's rules on first read: the walk reads a
 * handful of kube-proxy's tens of thousands of chains, the head's mode evidence reads line
 * facts; src/parsers/iptables-save.ts `parseIptablesSaveLazy`), with the values of the whole
 * parse. A replay's api.json is narrowed on a worker thread (src/cli/trace-api.ts).
 * Everything else is read as `loadOnce` reads it; a live source (and `--allow-trace`)
 * reads what it always read.
 */
import type { NodeSnapshot } from '../model/snapshot.js';
import { apiTextFor } from '../sources/api-select.js';
import { FlowFilteredReplay } from '../sources/replay-flows.js';
import { closeSource, type OpenedSource } from '../sources/open.js';
import type { TraceCommandArgs } from '../trace/choose-engine.js';
import { loadOnce } from './load.js';
import { startTraceApi, type TraceApiOptions } from './trace-api.js';
import { traceQuery } from './trace-query.js';
import type { GlobalOptions } from './options.js';
import { ReplayTransport } from '../sources/replay.js';

export { plainIpv4Destination } from './trace-query.js';

/**
 * How `trace` reads its source for `--to` (see the module comment): the source with its
 * conntrack flows and API objects narrowed to the destination; undefined: the source as opened.
 */
export function traceRead(to: string | undefined, allowTrace: boolean): ((source: OpenedSource) => OpenedSource) | undefined {
  const q = traceQuery(to, allowTrace);
  if (q === null) return undefined;
  const address = q.address;
  return (source) => {
    if (!(source.transport instanceof ReplayTransport)) return source;
    const transport = new FlowFilteredReplay(source.transport.bundle, address);
    return { ...source, transport, apiText: source.apiText === undefined ? undefined : apiTextFor(source.apiText, q) };
  };
}

/**
 * The snapshot `trace` walks and the walk's arguments (`argsOf` makes them from a snapshot:
 * names resolve through its API objects), read as {@link traceRead} says with the iptables
 * chains parsed on first read; a replay's api.json is read and narrowed on a worker while
 * the dumps are read and parsed (src/cli/trace-api.ts; `api.worker` false: on this thread,
 * the reference). The source is returned open (`--allow-trace` traces on it).
 */
export async function loadForTrace(opts: GlobalOptions & { to?: string; allowTrace?: boolean }, argsOf: (snapshot: NodeSnapshot) => TraceCommandArgs, api: TraceApiOptions = {}) {
  const q = traceQuery(opts.to, opts.allowTrace === true);
  const hooks = q === null ? undefined : { replayApi: (file: string, origin: string) => startTraceApi(file, origin, q, api) };
  const loaded = await loadOnce(opts, { reader: traceRead(opts.to, opts.allowTrace === true), lazyRules: true, hooks });
  try {
    return { ...loaded, args: argsOf(loaded.snapshot) };
  } catch (e) {
    await closeSource(loaded.source);
    throw e;
  }
}
