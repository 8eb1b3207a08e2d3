/**
 * The typed error taxonomy (after Shopify cli-kit's `error.ts`). Tests check the
 * kind (`instanceof`), never the message text.
 *
 * - {@link TransportError}: a command on the node could not run or failed.
 * - {@link ParseError}: input that cannot be parsed at all (a parser normally
 *   returns diagnostics instead; this is for whole-document failures such as JSON
 *   that does not parse).
 * - {@link UserError}: the user can act on it; carries what to try next.
 * - {@link UsageError}: a UserError in the command line's form (exit 2, as a parse error).
 * - {@link BugError}: nodescope itself is wrong; should be reported.
 */
import { tf, type Lang, type MessageKey } from './text/i18n.js';

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

/**
 * A message of ours by key (src/text/i18n.ts): `params` fill the key's `{name}` holes; a
 * param is data (a name, an address, a flag) copied as it is, or a message in turn,
 * rendered in the same language.
 */
export interface Said {
  readonly key: MessageKey;
  readonly params?: Readonly<Record<string, string | number | Said>>;
}

/** A {@link Said} for `key` with `params`. */
export function said(key: MessageKey, params?: Readonly<Record<string, string | number | Said>>): Said {
  return params ? { key, params } : { key };
}

/** `s` in `lang`, nested messages rendered in turn. */
export function saidIn(s: Said, lang: Lang): string {
  const params: Record<string, string | number> = {};
  for (const [k, v] of Object.entries(s.params ?? {})) params[k] = typeof v === 'object' ? saidIn(v, lang) : v;
  return tf(lang, s.key, params);
}

/**
 * Something the user asked for cannot be done as asked; `hint` says what to try. Both are
 * keys (issue 22 item 5: every user-facing error has its Japanese): `message` and `hint`
 * are their English, as printed in English; {@link UserError.text} renders another language.
 */
export class UserError extends Error {
  override readonly name = 'UserError';
  /** The hint in English. */
  readonly hint?: string;
  constructor(
    readonly said: Said,
    readonly hintSaid?: Said,
  ) {
    super(saidIn(said, 'en'));
    if (hintSaid) this.hint = saidIn(hintSaid, 'en');
  }

  /** The message (`part` `message`) or the hint in `lang`; '' for a hint not given. */
  text(lang: Lang, part: 'message' | 'hint' = 'message'): string {
    if (part === 'hint') return this.hintSaid ? saidIn(this.hintSaid, lang) : '';
    return saidIn(this.said, lang);
  }
}

/**
 * The command line itself is wrong: a word nodescope does not know, a flag missing, or two
 * flags that exclude each other. Exits 2 like commander's own parse errors (the usage exit
 * of getopt-style tools), with the command's `--help` named after the hint (src/cli.tsx).
 */
export class UsageError extends UserError {}

/** An internal invariant broke: a defect in nodescope. */
export class BugError extends Error {
  override readonly name = 'BugError';
}

/** Last `max` characters of `text`, for error reports. */
export function tail(text: string, max = 2000): string {
  return text.length > max ? text.slice(text.length - max) : text;
}
