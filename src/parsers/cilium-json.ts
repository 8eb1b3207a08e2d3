/**
 * Reading the agent's `-o json` output (Go `encoding/json` of the API models): tolerant field
 * accessors that return null for a missing or mistyped field, and a whole-document parse that
 * turns invalid JSON into one diagnostic instead of an exception.
 */
import type { Diagnostic } from '../model/diagnostics.js';
import { diagnostic } from '../model/diagnostics.js';

/** A JSON object. */
export type Json = Record<string, unknown>;

/** `v` if it is a JSON object (not an array), else null. */
export const obj = (v: unknown): Json | null => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : null);
/** `v` if it is a string, else null. */
export const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
/** `v` if it is a finite number, else null. */
export const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
/** `v` if it is a boolean, else null. */
export const bool = (v: unknown): boolean | null => (typeof v === 'boolean' ? v : null);

/** kubectl's `Defaulted container "cilium-agent" out of: …` notice (stderr, often merged into a capture). */
const KUBECTL_NOTICE = /^Defaulted container "[^"]*" out of: /;

/**
 * Where the JSON document of a capture starts: after the lines a capture may put before it
 * (kubectl's `Defaulted container …` notice, a shell prompt), at the first line whose first
 * non-blank character is `[` or `{`. `lines`: the 0-based indices and texts of the lines
 * skipped (blank ones left out); `start`: the offset of the document; -1 when no line opens one.
 */
export function jsonStart(text: string): { start: number; lines: { index: number; text: string }[] } {
  const lines: { index: number; text: string }[] = [];
  let at = 0;
  for (let index = 0; at <= text.length; index++) {
    const nl = text.indexOf('\n', at);
    const end = nl < 0 ? text.length : nl;
    const line = text.slice(at, end);
    const first = line.trimStart()[0];
    if (first === '[' || first === '{') return { start: at, lines };
    if (line.trim() !== '') lines.push({ index, text: line.replace(/\r$/, '') });
    if (nl < 0) break;
    at = nl + 1;
  }
  return { start: -1, lines };
}

/** True when `text` is a JSON document, perhaps after a kubectl notice or prompt line (see {@link jsonStart}). */
export function looksLikeJson(text: string): boolean {
  const { start, lines } = jsonStart(text);
  return start >= 0 && lines.every((l) => KUBECTL_NOTICE.test(l.text));
}

/**
 * `JSON.parse` of the document in `text`, or `undefined` after pushing an `invalid-json` error
 * (line 0) to `diags`. Lines before the document (see {@link jsonStart}) are skipped: kubectl's
 * `Defaulted container …` notice as a `kubectl-notice` info, any other as an `unrecognized-line`
 * warning, each with its 1-based line number.
 */
export function parseJsonDocument(text: string, origin: string, diags: Diagnostic[]): unknown {
  const { start, lines } = jsonStart(text);
  for (const l of lines) {
    if (KUBECTL_NOTICE.test(l.text)) diags.push(diagnostic('info', origin, l.index + 1, l.text, 'kubectl-notice', "kubectl's notice, not the command's output: skipped"));
    else if (start >= 0) diags.push(diagnostic('warning', origin, l.index + 1, l.text, 'unrecognized-line', 'a line before the JSON document: skipped'));
  }
  const body = start > 0 ? text.slice(start) : text;
  try {
    return JSON.parse(body) as unknown;
  } catch (e) {
    diags.push(diagnostic('error', origin, 0, body.slice(0, 200), 'invalid-json', `not JSON: ${(e as Error).message}`));
    return undefined;
  }
}

/**
 * The items of a JSON listing: an array's elements, or a single object as one item (`cilium-dbg
 * service get ID -o json` prints one object where `service list -o json` prints an array);
 * null for anything else.
 */
export function jsonItems(doc: unknown): unknown[] | null {
  if (Array.isArray(doc)) return doc;
  return obj(doc) ? [doc] : null;
}
