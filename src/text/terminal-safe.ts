/**
 * Text from outside (node output, API objects, DNS answers, bundle files) made safe to write
 * to a terminal: no byte of it can act as a control function, and nothing in it is invisible.
 *
 * What is escaped, and why:
 * - C0 controls U+0000–U+001F (ESC starts every escape sequence: CSI, OSC 0 "set title",
 *   OSC 52 "set clipboard"; BEL ends an OSC; CR, BS move the cursor), DEL U+007F, and the C1
 *   controls U+0080–U+009F (U+009B is a one-character CSI, U+009D an OSC): ECMA-48
 *   ("Control Functions for Coded Character Sets", 5th ed., sections 5 and 8.3).
 * - Bidirectional embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069) and the
 *   implicit marks (U+200E, U+200F, U+061C), which reorder what is shown ("Trojan Source"):
 *   Unicode Standard Annex #9 (Unicode Bidirectional Algorithm), sections 2.1–2.6.
 * - Every other format character (general category Cf: U+00AD, U+200B–U+200D, U+2060–U+2064,
 *   U+FEFF, U+180E, the tag characters U+E0000–…), every default-ignorable code point (Hangul
 *   fillers, variation selectors: drawn as nothing), the line and paragraph separators U+2028
 *   and U+2029 (Zl, Zp) and lone surrogates: Unicode Standard, chapter 23 and
 *   DerivedCoreProperties.txt (Default_Ignorable_Code_Point).
 *
 * The visible form, one convention everywhere: `\t`, `\n`, `\r` for those three; `\xHH` for
 * any other code point below U+0100 (so ESC is `\x1b`, DEL `\x7f`, CSI `\x9b`); `\uHHHH` for
 * the BMP and `\u{HHHHH}` above it (U+202E is `\u202e`), lowercase hex: JavaScript's own
 * escapes. A backslash is not escaped, so ordinary text (a comment holding `C:\dir`) stays
 * as written and a string that went through once has nothing left to escape: applying this at
 * two layers never doubles a backslash.
 */

/** Where the text goes: `line` (a cell, a title, one line: `\n`, `\r`, `\t` escaped too) or `document` (keeps `\n` and `\t`). */
export type TerminalSafeMode = 'line' | 'document';

// Every character that needs an escape in `line` mode. `document` excludes \t and \n only.
const UNSAFE_LINE_ALL = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\p{Default_Ignorable_Code_Point}]/gu;
const UNSAFE_DOCUMENT_ALL = /[\0-\x08\x0b-\x1f\x7f-\x9f\p{Cf}\p{Zl}\p{Zp}\p{Cs}\p{Default_Ignorable_Code_Point}]/gu;
// What JSON.stringify leaves raw that a terminal acts on or does not show: DEL, C1, format
// characters, U+2028/U+2029, default-ignorables (it already escapes C0 and lone surrogates).
const JSON_UNSAFE_ALL = /[\x7f-\x9f\p{Cf}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}]/gu;

// Per UTF-16 code unit: LINE set when `line` mode escapes it, DOCUMENT when `document` mode
// does, JSON_TEXT when {@link jsonTerminalSafe} does; a surrogate has all three (whether its
// pair's code point needs an escape is left to the regular expressions).
// A table look-up per code unit is several times faster than a Unicode property class (the
// fast path runs on every table cell of a million-row table), and this builds it from the
// same classes, so the two cannot disagree.
const LINE = 1;
const DOCUMENT = 2;
const JSON_TEXT = 4;
let unsafeUnits: Uint8Array | null = null;

function unitTable(): Uint8Array {
  const table = new Uint8Array(0x10000);
  const line = new RegExp(UNSAFE_LINE_ALL.source, 'u');
  const document = new RegExp(UNSAFE_DOCUMENT_ALL.source, 'u');
  const json = new RegExp(JSON_UNSAFE_ALL.source, 'u');
  for (let unit = 0; unit < 0x10000; unit++) {
    if (unit >= 0xd800 && unit <= 0xdfff) table[unit] = LINE | DOCUMENT | JSON_TEXT;
    else {
      const ch = String.fromCharCode(unit);
      table[unit] = (line.test(ch) ? LINE : 0) | (document.test(ch) ? DOCUMENT : 0) | (json.test(ch) ? JSON_TEXT : 0);
    }
  }
  return table;
}

// Printable ASCII (and in `document` mode tab and newline) never needs an escape: a native
// scan for anything else answers for long texts (a whole document) faster than the JS loop.
const NOT_PLAIN: Readonly<Record<number, RegExp>> = {
  [LINE]: /[^\x20-\x7e]/,
  [DOCUMENT]: /[^\t\n\x20-\x7e]/,
  // JSON.stringify has escaped every C0 control already.
  [JSON_TEXT]: /[^\x00-\x7e]/,
};
const LONG_TEXT = 4096;
// Before the table exists, the classes themselves answer (without `g`: no lastIndex): building
// the table runs them over 65,536 code units, more than a command that writes one document
// (`trace -o json`, an error) ever scans. The first short texts past a few build it (the TUI's
// and the tables' millions of cells then take the table, as before).
const EXACT: Readonly<Record<number, RegExp>> = {
  [LINE]: new RegExp(UNSAFE_LINE_ALL.source, 'u'),
  [DOCUMENT]: new RegExp(UNSAFE_DOCUMENT_ALL.source, 'u'),
  [JSON_TEXT]: new RegExp(JSON_UNSAFE_ALL.source, 'u'),
};
const TEXTS_BEFORE_TABLE = 64;
let textsWithoutTable = 0;

/**
 * Whether `text` may need an escape for `flag`: true when the class matches it; with the table,
 * true also for any surrogate (the caller's regular expression decides; either way a text the
 * class does not match comes back unchanged).
 */
function mayNeedEscape(text: string, flag: number): boolean {
  if (unsafeUnits === null && (text.length >= LONG_TEXT || ++textsWithoutTable <= TEXTS_BEFORE_TABLE)) return NOT_PLAIN[flag]!.test(text) && EXACT[flag]!.test(text);
  if (text.length >= LONG_TEXT && !NOT_PLAIN[flag]!.test(text)) return false;
  const table = (unsafeUnits ??= unitTable());
  for (let i = 0; i < text.length; i++) if ((table[text.charCodeAt(i)]! & flag) !== 0) return true;
  return false;
}

/**
 * Whether `text` holds a code unit above U+007E (what {@link NOT_PLAIN}'s JSON class finds): a
 * text of code units below U+0080 only is as long in UTF-8 as in UTF-16 (a lone surrogate is
 * three bytes), and U+007F is searched for by itself — both native scans several times faster
 * than the class over a long JSON text (`show services -o json` checks 44 MB of it).
 */
function beyondAsciiOrDel(text: string): boolean {
  return Buffer.byteLength(text, 'utf8') !== text.length || text.indexOf('\x7f') >= 0;
}

const SHORT: Readonly<Record<string, string>> = { '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/** The visible form of one unsafe character (see the module comment). */
export function escapeCodePoint(ch: string): string {
  const short = SHORT[ch];
  if (short) return short;
  const cp = ch.codePointAt(0)!;
  const hex = cp.toString(16);
  if (cp < 0x100) return `\\x${hex.padStart(2, '0')}`;
  if (cp < 0x10000) return `\\u${hex.padStart(4, '0')}`;
  return `\\u{${hex}}`;
}

/**
 * `text` with every character that a terminal could act on or would not show replaced by its
 * visible escape (see the module comment). `mode` `line` (default) also escapes tab, newline
 * and carriage return: for a table cell, a title, a single line. `document` keeps tab and
 * newline: for a whole multi-line document whose line breaks are our own. A string with
 * nothing to escape is returned as is (the same string, no copy). Never throws.
 */
export function terminalSafe(text: string, mode: TerminalSafeMode = 'line'): string {
  const line = mode === 'line';
  if (!mayNeedEscape(text, line ? LINE : DOCUMENT)) return text;
  const out = text.replace(line ? UNSAFE_LINE_ALL : UNSAFE_DOCUMENT_ALL, escapeCodePoint);
  // Only a well-formed pair (an emoji) was seen: keep the caller's string.
  return out === text ? text : out;
}


function jsonEscape(ch: string): string {
  const cp = ch.codePointAt(0)!;
  if (cp < 0x10000) return `\\u${cp.toString(16).padStart(4, '0')}`;
  const hi = ch.charCodeAt(0).toString(16);
  const lo = ch.charCodeAt(1).toString(16);
  return `\\u${hi}\\u${lo}`;
}

/**
 * A JSON text (from `JSON.stringify`) with the characters it leaves raw that a terminal acts
 * on or hides (DEL, C1, format characters, U+2028/U+2029, default-ignorables) written as JSON
 * `\uHHHH` escapes (a surrogate pair above the BMP): `JSON.parse` gives back exactly the same
 * values (RFC 8259, section 7). Outside strings JSON holds none of them, so the whole text can
 * be scanned. Returns `json` itself when there is nothing to escape.
 */
export function jsonTerminalSafe(json: string): string {
  if (json.length >= LONG_TEXT ? !beyondAsciiOrDel(json) : !mayNeedEscape(json, JSON_TEXT)) return json;
  const out = json.replace(JSON_UNSAFE_ALL, jsonEscape);
  return out === json ? json : out;
}

/** The part of a Node writable stream {@link guardTerminalStream} wraps. */
export interface WritableText {
  write(chunk: string | Uint8Array, ...rest: never[]): boolean;
}

/**
 * DECTCEM "show cursor" (ECMA-48 private mode 25): what Ink's restore-cursor writes to stderr,
 * alone, as the process exits, to give the shell its cursor back.
 */
export const SHOW_CURSOR = '\u001B[?25h';

/**
 * Makes every string later written to `stream` terminal-safe in `document` mode (newlines and
 * tabs kept), whoever writes it: for a stream that carries only nodescope's own messages
 * (stderr: errors quoting node text, progress, cleanup reports), never for one a renderer draws
 * on with its own escape sequences (the TUI's stdout). Byte chunks pass unchanged (nodescope
 * writes strings), and so does a write of exactly {@link SHOW_CURSOR} (restore-cursor's, at
 * exit; escaped it would print `\x1b[?25h` on the shell's line; every message of ours has words
 * around any node text). Returns the function that restores the stream's own `write`.
 */
export function guardTerminalStream(stream: WritableText): () => void {
  const own = stream.write;
  const write = function (this: WritableText, chunk: string | Uint8Array, ...rest: never[]): boolean {
    return own.call(this, typeof chunk === 'string' && chunk !== SHOW_CURSOR ? terminalSafe(chunk, 'document') : chunk, ...rest);
  };
  stream.write = write;
  return () => {
    if (stream.write === write) stream.write = own;
  };
}
