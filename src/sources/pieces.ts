/**
 * Reading a probe's stdout in pieces, never whole: what a transport that can read its output
 * again on demand offers beside the {@link Transport} contract (a replay reads its bundle
 * file; live transports cannot and do not implement it).
 */
import type { ExecOptions, ExecResult, Transport } from './transport.js';

/**
 * An {@link ExecResult} whose stdout may come as `stdoutPieces` instead (then `stdout` is
 * `''`): line-aligned pieces whose concatenation is the stdout (a line of 1 MiB or more, as
 * `nft -j` prints, is cut inside, between two characters). Each call reads it again.
 */
export interface PiecedExecResult extends ExecResult {
  readonly stdoutPieces?: () => Iterable<string>;
  /** The file `stdoutPieces` reads (absolute path), for a reader in another thread. */
  readonly stdoutPath?: string;
}

/** A transport that can answer with {@link PiecedExecResult.stdoutPieces} (for an `ok` run). */
export interface PieceReader {
  execInPieces(argv: readonly string[], options: ExecOptions): Promise<PiecedExecResult>;
}

/** True when `transport` can read stdout in pieces ({@link PieceReader}). */
export function readsInPieces(transport: Transport): transport is Transport & PieceReader {
  return typeof (transport as Partial<PieceReader>).execInPieces === 'function';
}
