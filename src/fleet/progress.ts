/**
 * The fleet capture's progress line for stderr: done / failed / running / waiting, the
 * time elapsed and an estimate of the time left. Pure.
 */

/** Counts of a fleet capture at one moment. `done` counts ok and failed nodes alike. */
export interface FleetTally {
  readonly total: number;
  readonly done: number;
  readonly failed: number;
  readonly running: number;
}

/** `42 s`, `3 min 5 s`: a duration in words (rounded to whole seconds). */
export function durationText(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${s % 60} s`;
}

/**
 * Milliseconds left, from the throughput so far (nodes finished per millisecond, which
 * already reflects the parallelism); null before the first node finished (no rate yet).
 */
export function etaMs(tally: FleetTally, elapsedMs: number): number | null {
  if (tally.done === 0 || elapsedMs <= 0) return null;
  return (elapsedMs / tally.done) * (tally.total - tally.done);
}

/**
 * `fleet: 7/20 done (1 failed), 4 running, 9 waiting — 12 s elapsed, ETA 22 s`; the ETA
 * reads `ETA ?` until a node has finished.
 */
export function progressLine(tally: FleetTally, elapsedMs: number): string {
  const waiting = tally.total - tally.done - tally.running;
  const eta = etaMs(tally, elapsedMs);
  const failed = tally.failed ? ` (${tally.failed} failed)` : '';
  return `fleet: ${tally.done}/${tally.total} done${failed}, ${tally.running} running, ${waiting} waiting — ${durationText(elapsedMs)} elapsed, ETA ${eta === null ? '?' : durationText(eta)}`;
}
