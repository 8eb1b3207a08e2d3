/**
 * How fresh a node's proxy rules are, as kube-proxy reports it on `/metrics`
 * (pkg/proxy/metrics: `kubeproxy_sync_proxy_rules_last_timestamp_seconds`, the last time
 * the rules were synced; `kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds`, the
 * last time a change was queued for sync). A queued change newer than the last sync is a
 * pending one — the state kube-proxy's own /healthz counts against its healthz timeout.
 * Both gauges may carry an `ip_family` label (dual-stack proxiers); each family is kept.
 * Pure.
 */
import type { MetricSample } from '../parsers/prometheus-text.js';

/** Metric names read (kube-proxy's). */
export const KUBE_PROXY_SYNC_METRICS = {
  lastSync: 'kubeproxy_sync_proxy_rules_last_timestamp_seconds',
  lastQueued: 'kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds',
} as const;

/** One IP family's freshness (`family` null when the gauge has no ip_family label). Times: ISO-8601 UTC; ages: seconds at capture time. */
export interface FamilyFreshness {
  readonly family: string | null;
  readonly lastSyncAt: string | null;
  readonly lastQueuedAt: string | null;
  /** Seconds from the last sync to the capture. */
  readonly syncAgeSeconds: number | null;
  /** Seconds a queued change has waited for a sync at capture time; null when none waits. */
  readonly pendingSeconds: number | null;
}

/** A node's proxy freshness, or why it could not be read. */
export type ProxyFreshness =
  | { readonly source: 'kube-proxy-metrics'; readonly families: readonly FamilyFreshness[] }
  | { readonly source: 'unknown'; readonly reason: string };

const iso = (s: number) => new Date(s * 1000).toISOString();
const round = (s: number) => Math.round(s * 10) / 10;

/** Freshness from kube-proxy's samples, at `capturedAtMs` (the probe's start). */
export function kubeProxyFreshness(samples: readonly MetricSample[], capturedAtMs: number): ProxyFreshness {
  const byFamily = new Map<string | null, { sync?: number; queued?: number }>();
  for (const s of samples) {
    const key = s.name === KUBE_PROXY_SYNC_METRICS.lastSync ? 'sync' : s.name === KUBE_PROXY_SYNC_METRICS.lastQueued ? 'queued' : null;
    if (!key || !Number.isFinite(s.value) || s.value <= 0) continue;
    const fam = s.labels['ip_family'] ?? null;
    byFamily.set(fam, { ...byFamily.get(fam), [key]: s.value });
  }
  if (byFamily.size === 0) return { source: 'unknown', reason: `the metrics hold no ${KUBE_PROXY_SYNC_METRICS.lastSync}` };
  const now = capturedAtMs / 1000;
  const families = [...byFamily].map(([family, v]): FamilyFreshness => ({
    family,
    lastSyncAt: v.sync !== undefined ? iso(v.sync) : null,
    lastQueuedAt: v.queued !== undefined ? iso(v.queued) : null,
    syncAgeSeconds: v.sync !== undefined ? round(now - v.sync) : null,
    pendingSeconds: v.queued !== undefined && (v.sync === undefined || v.queued > v.sync) ? round(now - v.queued) : null,
  }));
  families.sort((a, b) => String(a.family).localeCompare(String(b.family)));
  return { source: 'kube-proxy-metrics', families };
}

/** `synced 12 s before capture`, `synced 3 min before capture, a change pending 40 s`: one line. */
export function freshnessText(f: ProxyFreshness): string {
  if (f.source === 'unknown') return `unknown: ${f.reason}`;
  return f.families
    .map((x) => `${x.family ? `${x.family}: ` : ''}${x.syncAgeSeconds === null ? 'never synced' : `synced ${x.syncAgeSeconds} s before capture`}${x.pendingSeconds !== null ? `, a change pending ${x.pendingSeconds} s` : ''}`)
    .join('; ');
}
