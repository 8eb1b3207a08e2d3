/**
 * Folding findings into a verdict: `broken` if any finding is, else `unknown` if any part could
 * not be read (a `degraded` claim needs every layer read), else `degraded`, else `ok`.
 * `info` findings never change the verdict. Pure.
 */
import type { Finding, Verdict } from './types.js';

/** The verdict of a Service from its findings (see the module comment). */
export function foldVerdict(findings: readonly Finding[]): Verdict {
  let degraded = false;
  let unknown = false;
  for (const f of findings) {
    if (f.severity === 'broken') return 'broken';
    if (f.severity === 'unknown') unknown = true;
    else if (f.severity === 'degraded') degraded = true;
  }
  return unknown ? 'unknown' : degraded ? 'degraded' : 'ok';
}

/** How many Services have each verdict. */
export function countVerdicts(services: readonly { readonly verdict: Verdict }[]): Record<Verdict, number> {
  const counts: Record<Verdict, number> = { ok: 0, degraded: 0, broken: 0, unknown: 0 };
  for (const s of services) counts[s.verdict]++;
  return counts;
}
