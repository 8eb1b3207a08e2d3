/**
 * The parse worker (a `worker_threads` entry: dist/bin/parse-worker.js in the bundle):
 * reads one conntrack capture file in pieces, parses it with the same parser as the main
 * thread, classifies the entries against the Services it was given (the conntrack pane's
 * columns, src/analysis/conntrack-classify.ts), and posts the table back in columns
 * (src/parsers/conntrack-transfer.ts) with the classification's typed arrays, all
 * transferred. Posts `{ ok: false, error }` instead of throwing. See worker-parse.ts.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { classifyConntrackColumns } from '../analysis/conntrack-classify.js';
import { parseConntrackStream } from '../parsers/conntrack.js';
import { encodeConntrack } from '../parsers/conntrack-transfer.js';
import { readFilePieces } from '../sources/bundle.js';
import { collectGarbageIfGrown } from './memory.js';
import { linesOfPieces, type ConntrackJobInput, type ConntrackJobReply } from './worker-protocol.js';

async function run(input: ConntrackJobInput): Promise<{ reply: ConntrackJobReply; transfer: ArrayBuffer[] }> {
  const result = await parseConntrackStream(collectingBetween(linesOfPieces(readFilePieces(input.file))), input.origin);
  const columns = input.targets ? classifyConntrackColumns(result.value.entries, input.targets.services, input.targets.nodeAddresses) : undefined;
  const { encoded, transfer } = encodeConntrack(result);
  if (columns) transfer.push(columns.serviceOf.buffer as ArrayBuffer, columns.codeOf.buffer as ArrayBuffer);
  return { reply: { ok: true, encoded, ...(columns ? { columns } : {}) }, transfer };
}

/** The items of `pieces`, with a full GC before each when the parse has grown this thread's heap (as the main thread does between chunks). */
function* collectingBetween(pieces: Iterable<string>): Generator<string> {
  for (const piece of pieces) {
    collectGarbageIfGrown();
    yield piece;
  }
}

const port = parentPort;
if (port) {
  run(workerData as ConntrackJobInput).then(
    ({ reply, transfer }) => port.postMessage(reply, transfer),
    (e: unknown) => port.postMessage({ ok: false, error: (e as Error)?.message ?? String(e) } satisfies ConntrackJobReply),
  );
}
