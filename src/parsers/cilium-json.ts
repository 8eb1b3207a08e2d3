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

/** `JSON.parse(text)`, or `undefined` after pushing an `invalid-json` error (line 0) to `diags`. */
export function parseJsonDocument(text: string, origin: string, diags: Diagnostic[]): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    diags.push(diagnostic('error', origin, 0, text.slice(0, 200), 'invalid-json', `not JSON: ${(e as Error).message}`));
    return undefined;
  }
}
