/**
 * The typed error taxonomy (after Shopify cli-kit's `error.ts`). Tests check the
 * kind (`instanceof`), never the message text.
 *
 * - {@link TransportError}: a command on the node could not run or failed.
 * - {@link ParseError}: input that cannot be parsed at all (a parser normally
 *   returns diagnostics instead; this is for whole-document failures such as JSON
 *   that does not parse).
 * - {@link UserError}: the user can act on it; carries what to try next.
 * - {@link BugError}: nodescope itself is wrong; should be reported.
 */

/** A probe could not be executed, or exited non-zero. */
export class TransportError extends Error {
  override readonly name = 'TransportError';
  constructor(
    message: string,
    /** The node (host name, `local`, `netns:NAME`, `replay:DIR`). */
    readonly node: string,
    /** The argv that was run. */
    readonly argv: readonly string[],
    /** Exit code, or null when the process did not start or was killed. */
    readonly exitCode: number | null,
    /** Last lines of stderr (at most 2,000 characters). */
    readonly stderrTail: string,
  ) {
    super(message);
  }
}

/** A whole document could not be parsed; `line` is 1-based, 0 when unknown. */
export class ParseError extends Error {
  override readonly name = 'ParseError';
  constructor(
    message: string,
    readonly origin: string,
    readonly line: number,
    readonly excerpt: string,
  ) {
    super(message);
  }
}

/** Something the user asked for cannot be done as asked; `hint` says what to try. */
export class UserError extends Error {
  override readonly name = 'UserError';
  constructor(
    message: string,
    readonly hint?: string,
  ) {
    super(message);
  }
}

/** An internal invariant broke: a defect in nodescope. */
export class BugError extends Error {
  override readonly name = 'BugError';
}

/** Last `max` characters of `text`, for error reports. */
export function tail(text: string, max = 2000): string {
  return text.length > max ? text.slice(text.length - max) : text;
}
