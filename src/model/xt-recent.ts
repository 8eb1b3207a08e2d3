/**
 * The `-m recent` lists of a node (`/proc/net/xt_recent/NAME`, net/netfilter/xt_recent.c),
 * as the `xt-recent` probe reads them (src/parsers/xt-recent.ts).
 */

/** One address of a list: `lastSeen` in jiffies. */
export interface XtRecentRow {
  readonly address: string;
  readonly lastSeen: number;
}

/**
 * The captured lists by name, the jiffies and uptime (seconds) read with them, and the
 * derived `hz` (null when it could not be told).
 */
export interface XtRecentCapture {
  readonly lists: Readonly<Record<string, readonly XtRecentRow[]>>;
  readonly jiffies: number | null;
  readonly uptimeSeconds: number | null;
  readonly hz: number | null;
}
