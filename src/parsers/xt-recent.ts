/**
 * Parser for the `xt-recent` probe: `grep -r -H -E PATTERN /proc/net/xt_recent
 * /proc/timer_list /proc/uptime`, every line prefixed with its file's path:
 *
 * - `/proc/net/xt_recent/NAME:src=10.244.0.9 ttl: 64 last_seen: 4295123456 oldest_pkt: 3 …`
 *   (net/netfilter/xt_recent.c `recent_seq_show`; `last_seen` in jiffies);
 * - `/proc/timer_list:jiffies: 4295124000` (kernel/time/timer_list.c, the jiffies now);
 * - `/proc/uptime:1234.56 2345.67` (seconds since boot).
 *
 * The ages of entries need the kernel's HZ, which no file prints: on 64-bit kernels jiffies
 * start at INITIAL_JIFFIES = 2^32 − 300·HZ (include/linux/jiffies.h), so
 * HZ ≈ (jiffies − 2^32) / (uptime − 300), snapped to the configurable values (100, 250,
 * 300, 1000) when within 2 %; otherwise ages stay unknown and the walk says so.
 *
 * A list of the rules with no line here is empty (xt_recent creates its file with the rule).
 */
import { diagnostic, type Diagnostic, type ParseResult } from '../model/diagnostics.js';
import type { XtRecentCapture, XtRecentRow } from '../model/xt-recent.js';

const PREFIX = '/proc/net/xt_recent/';
const CONFIG_HZ = [100, 250, 300, 1000];

/** HZ from jiffies and uptime (see the module comment); null when no configurable value is within 2 %. */
export function hzOf(jiffies: number, uptimeSeconds: number): number | null {
  const span = uptimeSeconds - 300;
  if (Math.abs(span) < 60) return null; // ill-conditioned near 300 s of uptime
  const hz = (jiffies - 2 ** 32) / span;
  return CONFIG_HZ.find((h) => Math.abs(hz - h) / h < 0.02) ?? null;
}

/** Parses the probe's output. Pure; never throws: lines it does not know are diagnostics. */
export function parseXtRecent(text: string, origin: string): ParseResult<XtRecentCapture> {
  const lists: Record<string, XtRecentRow[]> = {};
  const diagnostics: Diagnostic[] = [];
  let jiffies: number | null = null;
  let uptime: number | null = null;
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    const bad = (why: string) => diagnostics.push(diagnostic('warning', origin, i + 1, line, 'unknown-line', why));
    if (line.startsWith(PREFIX)) {
      const colon = line.indexOf(':', PREFIX.length);
      const name = colon < 0 ? '' : line.slice(PREFIX.length, colon);
      const m = /^src=(\S+) ttl: \d+ last_seen: (\d+)/.exec(line.slice(colon + 1));
      if (name === '' || !m) return bad('not an xt_recent entry (src=… ttl: … last_seen: …)');
      (lists[name] ??= []).push({ address: m[1]!, lastSeen: Number(m[2]) });
      return;
    }
    const j = /^\/proc\/timer_list:jiffies: (\d+)$/.exec(line);
    if (j) {
      jiffies ??= Number(j[1]);
      return;
    }
    const u = /^\/proc\/uptime:(\d+(?:\.\d+)?) \d+(?:\.\d+)?$/.exec(line);
    if (u) {
      uptime = Number(u[1]);
      return;
    }
    bad('not a line of /proc/net/xt_recent, /proc/timer_list or /proc/uptime');
  });
  const hz = jiffies !== null && uptime !== null ? hzOf(jiffies, uptime) : null;
  return { value: { lists, jiffies, uptimeSeconds: uptime, hz }, diagnostics };
}

/** Age of `row` in seconds at the capture (null when jiffies or HZ are unknown). */
export function xtRecentAge(capture: XtRecentCapture, row: XtRecentRow): number | null {
  if (capture.jiffies === null || capture.hz === null) return null;
  return Math.max(0, (capture.jiffies - row.lastSeen) / capture.hz);
}
