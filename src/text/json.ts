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
