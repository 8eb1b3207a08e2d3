/**
 * The parse worker (a `worker_threads` entry: dist/bin/parse-worker.js in the bundle):
 * reads one conntrack capture file as line-aligned byte chunks and parses it with the same
 * byte reader as the main thread (`parseConntrackBytes`, src/parsers/conntrack.ts), classifies the entries against the Services it was given (the conntrack pane's
 * columns, src/analysis/conntrack-classify.ts, read on the rows in place), and posts the
 * parser's column table back as it is (`encodeConntrackColumns`; a table of another kind
 * through the entry codec, `encodeConntrack`, src/parsers/conntrack-transfer.ts) with the
 * classification's typed arrays, all transferred. Posts `{ ok: false, error }` instead of throwing. See worker-parse.ts.
 */
import { statSync } from 'node:fs';
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { classifyConntrackRows } from '../analysis/conntrack-classify.js';
import { decodeConntrackTargets, type ClassifierTargets } from '../analysis/conntrack-targets-codec.js';
import { conntrackRows } from '../model/conntrack-ids.js';
import { parseConntrackBytes } from '../parsers/conntrack.js';
import { encodeConntrack, encodeConntrackColumns } from '../parsers/conntrack-transfer.js';
import type { ConntrackTable } from '../model/conntrack.js';
import type { ParseResult } from '../model/diagnostics.js';
import { readFileLineChunks } from '../sources/bundle.js';
import { collectGarbageIfGrown } from './memory.js';
import { type ConntrackJobInput, type ConntrackJobReply, type ConntrackJobTable, type ConntrackTargetsMessage } from './worker-protocol.js';

async function run(input: ConntrackJobInput, port: MessagePort): Promise<{ reply: ConntrackJobReply; transfer: ArrayBuffer[] }> {
  // Listened for before the parse: the message may come while it runs (it is read after).
  const later = input.targetsLater ? targetsMessage(port) : undefined;
  // The main thread's byte reader (src/parsers/conntrack-bytes.ts): no 220 MB of strings, the columns sized from the file once.
  const result = await parseConntrackBytes(collectingBetween(readFileLineChunks(input.file)), input.origin, { totalBytes: statSync(input.file).size });
  const targets = later ? await later : input.targets;
  if (targets === null) throw new Error('the classification targets could not be decoded');
  // Classified on the rows in place: no object per entry in this thread either.
  const columns = targets ? classifyConntrackRows(conntrackRows(result.value), targets.services, targets.nodeAddresses) : undefined;
  const { table, transfer } = encoded(result);
  if (columns) transfer.push(columns.serviceOf.buffer as ArrayBuffer, columns.codeOf.buffer as ArrayBuffer);
  return { reply: { ok: true, table, ...(columns ? { columns } : {}) }, transfer };
}

/** The targets of the main thread's one {@link ConntrackTargetsMessage}: undefined for none, null when they cannot be decoded. */
function targetsMessage(port: MessagePort): Promise<ClassifierTargets | undefined | null> {
  return new Promise((resolve) => {
    port.once('message', (m: ConntrackTargetsMessage) => {
      if (m.format === 'none') return resolve(undefined);
      resolve((m.format === 'objects' ? m.targets : decodeConntrackTargets(m.encoded)) ?? null);
    });
  });
}

/** The table as sent: the parser's columns as held, else (a table of another kind) through the entry codec. */
function encoded(result: ParseResult<ConntrackTable>): { table: ConntrackJobTable; transfer: ArrayBuffer[] } {
  const columns = encodeConntrackColumns(result);
  if (columns) return { table: { format: 'columns', encoded: columns.encoded }, transfer: columns.transfer };
  const entries = encodeConntrack(result);
  return { table: { format: 'entries', encoded: entries.encoded }, transfer: entries.transfer };
}

/** The items of `pieces`, with a full GC before each when the parse has grown this thread's heap (as the main thread does between chunks). */
function* collectingBetween<T>(pieces: Iterable<T>): Generator<T> {
  for (const piece of pieces) {
    collectGarbageIfGrown();
    yield piece;
  }
}

const port = parentPort;
if (port) {
  run(workerData as ConntrackJobInput, port).then(
    ({ reply, transfer }) => port.postMessage(reply, transfer),
    (e: unknown) => port.postMessage({ ok: false, error: (e as Error)?.message ?? String(e) } satisfies ConntrackJobReply),
  );
}
