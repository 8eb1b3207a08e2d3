/**
 * When a replay's recorded DNS answers (`extra/dns.json`) were taken, relative to the capture
 * of the rules (`manifest.json` `capturedAt`): they are asked after the probes, and a bundle
 * may get its answers much later (the lab's were recorded 40–220 min after). Answers taken
 * long after the rules may not describe the same cluster (Pods rescheduled, endpoints
 * replaced), so past {@link DNS_AGE_LIMIT_MIN} the DNS pane and `show dns` warn. Pure.
 */
import type { ServiceDnsResult } from '../model/dns.js';
import { t, tf, type Lang } from '../text/i18n.js';

/** Minutes apart past which the answers are said to be possibly of another cluster state. */
export const DNS_AGE_LIMIT_MIN = 10;

/** `minutes`: the earliest recorded answer minus the capture time, rounded (negative: before it). */
export interface AnswersAge {
  readonly minutes: number;
  readonly late: boolean;
}

/**
 * The age of `result`'s recorded answers against `capturedAt` (ISO-8601), or null for a live
 * source (asked now), when no question was answered from the recording, or a time is unreadable.
 */
export function answersAge(result: ServiceDnsResult, capturedAt: string, live: boolean): AnswersAge | null {
  if (live) return null;
  const captured = Date.parse(capturedAt);
  const times = result.checks.filter((c) => c.exchange.outcome !== 'not-captured').map((c) => Date.parse(c.exchange.startedAt)).filter(Number.isFinite);
  if (!Number.isFinite(captured) || times.length === 0) return null;
  const minutes = Math.round((Math.min(...times) - captured) / 60_000);
  return { minutes, late: Math.abs(minutes) > DNS_AGE_LIMIT_MIN };
}

/** `answers taken 51 min after the capture`, and past the limit why that matters, in `lang`. */
export function answersAgeText(lang: Lang, age: AnswersAge): string {
  const when = age.minutes === 0 ? t(lang, 'dns.age.same') : tf(lang, age.minutes > 0 ? 'dns.age.after' : 'dns.age.before', { min: Math.abs(age.minutes) });
  return age.late ? tf(lang, 'dns.age.late', { when, limit: DNS_AGE_LIMIT_MIN }) : when;
}
