/**
 * What the main thread and the parse worker (parse-worker.ts) send each other.
 */
import type { ConntrackClassificationColumns } from '../analysis/conntrack-classify.js';
import type { ConntrackTargets } from '../analysis/conntrack-index.js';
import type { EncodedConntrackTargets } from '../analysis/conntrack-targets-codec.js';
import type { EncodedConntrack, EncodedConntrackColumns } from '../parsers/conntrack-transfer.js';

/**
 * The worker's input (`workerData`): a conntrack capture file, its diagnostics' origin, and what
 * to classify its entries against — `targets` given here, or with `targetsLater` in one
 * {@link ConntrackTargetsMessage} that the worker reads once its parse is done (so the parse
 * starts before the main thread has made the targets); neither: no classification.
 */
export interface ConntrackJobInput {
  readonly file: string;
  readonly origin: string;
  readonly targets?: ConntrackTargets;
  readonly targetsLater?: boolean;
}

/**
 * The main thread's one message to a worker started with `targetsLater`: the targets encoded
 * (src/analysis/conntrack-targets-codec.ts), as objects when they are of a shape the encoding
 * does not hold, or null (none: the worker only parses).
 */
export type ConntrackTargetsMessage =
  | { readonly format: 'encoded'; readonly encoded: EncodedConntrackTargets }
  | { readonly format: 'objects'; readonly targets: ConntrackTargets }
  | { readonly format: 'none' };

/** The parsed table as sent: the parser's columns as held, or (a table of another kind) through the entry codec. */
export type ConntrackJobTable =
  | { readonly format: 'columns'; readonly encoded: EncodedConntrackColumns }
  | { readonly format: 'entries'; readonly encoded: EncodedConntrack };

/** The worker's one message: the table and the classification, or why it failed. */
export type ConntrackJobReply =
  | { readonly ok: true; readonly table: ConntrackJobTable; readonly columns?: ConntrackClassificationColumns }
  | { readonly ok: false; readonly error: string };
