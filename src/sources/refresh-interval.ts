/**
 * The one default of `--interval`: how often a live source is read again (the session's
 * counter refresh) and a followed `--api-file` is checked. Milliseconds; the flag itself is
 * given in seconds.
 */
export const DEFAULT_INTERVAL_MS = 2000;
