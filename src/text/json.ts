/**
 * Stable JSON for scripts (`nodescope show … -o json`). Counters are 64-bit and
 * printed as decimal strings so no consumer rounds them through a float.
 */

/** JSON.stringify with bigint as decimal strings, two-space indent, trailing newline. */
export function toJson(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v), 2) + '\n';
}
