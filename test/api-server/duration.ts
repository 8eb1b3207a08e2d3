/**
 * `duration.HumanDuration` from `k8s.io/apimachinery/pkg/util/duration`: the
 * AGE column of `kubectl get` (`5m10s`, `3h`, `2d4h`, `3y12d`).
 */

/**
 * Human approximation of a duration in milliseconds, exactly as Go's
 * `HumanDuration` rounds: below −1 s `<invalid>`, below 0 `0s`, below 2 min
 * seconds, below 10 min `XmYs`, below 3 h minutes, below 8 h `XhYm`, below
 * 48 h hours, below 8 d `XdYh`, below 2 y days, below 8 y `XyYd`, then years.
 */
export function humanDuration(ms: number): string {
  const seconds = Math.trunc(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.trunc(seconds / 60);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.trunc(seconds / 3600);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${Math.trunc(hours / 24)}d` : `${Math.trunc(hours / 24)}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${Math.trunc(hours / 24)}d`;
  if (hours < 24 * 365 * 8) {
    const dy = Math.trunc(hours / 24) % 365;
    const y = Math.trunc(hours / 24 / 365);
    return dy === 0 ? `${y}y` : `${y}y${dy}d`;
  }
  return `${Math.trunc(hours / 24 / 365)}y`;
}

/** `translateTimestampSince`: `<unknown>` for a missing timestamp, else {@link humanDuration} of now − t. */
export function ageOf(timestamp: string | undefined, now: Date): string {
  if (!timestamp) return '<unknown>';
  const t = Date.parse(timestamp);
  if (Number.isNaN(t)) return '<unknown>';
  return humanDuration(now.getTime() - t);
}
