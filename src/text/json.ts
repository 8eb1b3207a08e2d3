import { jsonTerminalSafe } from './terminal-safe.js';

/**
 * Stable JSON for scripts (`nodescope show … -o json`). Counters are 64-bit and
 * printed as decimal strings so no consumer rounds them through a float.
 */

/**
 * JSON.stringify with bigint as decimal strings, two-space indent, trailing newline; the
 * characters JSON.stringify leaves raw that a terminal would act on or hide (C1, bidi and
 * other format characters, U+2028/U+2029) as `\\uHHHH` escapes: the values stay exact.
 */
export function toJson(value: unknown): string {
  return jsonTerminalSafe(JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v), 2)) + '\n';
}

/** What {@link parseJsonObject} gives: the object, or why the text is not one. */
export type JsonObjectResult = { readonly object: Record<string, unknown>; readonly error: null } | { readonly object: null; readonly error: string };

/**
 * `JSON.parse` of a text that must hold one JSON object (not an array, not a scalar, not
 * null). Never throws: a syntax error or another JSON value comes back as `error` (the
 * engine's message, or "not an object") for the caller's diagnostic.
 */
export function parseJsonObject(text: string): JsonObjectResult {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    return { object: null, error: (e as Error).message };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return { object: null, error: 'not an object' };
  return { object: parsed as Record<string, unknown>, error: null };
}

/**
 * {@link toJson} of a value built to hold no bigint (`show services`: its ports and counts are
 * numbers): `JSON.stringify` without a replacer, which prints the same text at a fraction of the
 * cost (a replacer is a call per value). A bigint after all makes `JSON.stringify` throw a
 * `TypeError` (ECMA-262, SerializeJSONProperty): then the value goes through {@link toJson}.
 */
export function toJsonNoBigint(value: unknown): string {
  let json: string;
  try {
    json = JSON.stringify(value, null, 2);
  } catch (e) {
    if (e instanceof TypeError) return toJson(value);
    throw e;
  }
  return jsonTerminalSafe(json) + '\n';
}
