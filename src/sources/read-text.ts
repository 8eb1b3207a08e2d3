/**
 * Reading a bundle file as text, as `readFileSync(file, 'utf8')` gives it, faster for the
 * common case: a file of ASCII bytes only (API objects, rulesets, conntrack tables of most
 * nodes) is decoded as Latin-1, which maps each byte to the same character UTF-8 would and
 * skips UTF-8's per-character decoding. Any other file is decoded as UTF-8 (invalid sequences
 * as U+FFFD, a BOM kept: what `readFileSync(file, 'utf8')` does).
 */
import { isAscii } from 'node:buffer';
import { readFileSync } from 'node:fs';

/** The text of `file` (see the module comment). Throws the file system's error. */
export function readTextFile(file: string): string {
  return textOfBytes(readFileSync(file));
}

/** The text of a file's `bytes`, decoded as {@link readTextFile} decodes them. */
export function textOfBytes(bytes: Buffer): string {
  return isAscii(bytes) ? bytes.toString('latin1') : bytes.toString('utf8');
}
