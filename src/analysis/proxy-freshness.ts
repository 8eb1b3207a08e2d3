/**
 * How fresh a node's proxy rules are, as kube-proxy reports it on `/metrics`
 * (pkg/proxy/metrics: `kubeproxy_sync_proxy_rules_last_timestamp_seconds`, the last time
 * the rules were synced; `kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds`, the
 * last time a change was queued for sync). A queued change newer than the last sync is a
 * pending one — the state kube-proxy's own /healthz counts against its healthz timeout.
 * Both gauges may carry an `ip_family` label (dual-stack proxiers); each family is kept.
 *
 * On a Cilium node (kube-proxy replacement) there is no such gauge; what says how current
 * the agent's LB maps are: `cilium-dbg status --verbose` (its API watch state, stale status
 * probes, failing controllers: src/parsers/cilium-controllers.ts) and, from Cilium 1.17, the
 * StateDB frontends table, where each frontend carries its reconciliation status — `Pending`
 * until the BPF maps hold it, `Done`, `Refreshing`, `Error` — and how long ago that status
 * changed (`Since`). Pure.
 */
import type { StateDbFrontend } from '../model/cilium.js';
import type { CiliumAgentFacts } from '../parsers/cilium-controllers.js';
import { parseAgeText } from '../parsers/cilium-controllers.js';
import type { MetricSample } from '../parsers/prometheus-text.js';
import { t, tf, type Lang } from '../text/i18n.js';
import { whyText } from '../text/why.js';

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

/** What `cilium-dbg status --verbose` says: the API watch, stale status probes, the failing controllers. */
export interface CiliumAgentFreshness {
  readonly kubernetes: { readonly state: string; readonly message: string } | null;
  readonly stale: readonly string[];
  readonly controllersHealthy: number | null;
  readonly controllersTotal: number | null;
  /** Controllers whose last run failed (`failures` in a row), with their last success (seconds before capture; null: never). */
  readonly controllersFailing: readonly { readonly name: string; readonly failures: number; readonly lastSuccessSeconds: number | null; readonly message: string }[];
}

/**
 * The StateDB frontends' reconciliation: counts per status, the longest a frontend has been
 * `Pending` (seconds before capture; null: none pending), the most recent status change of any
 * frontend (null: no age read), and the first errors (`frontend`: `ip:port/PROTO`).
 */
export interface CiliumFrontendsFreshness {
  readonly total: number;
  readonly done: number;
  readonly pending: number;
  readonly refreshing: number;
  readonly error: number;
  readonly oldestPendingSeconds: number | null;
  readonly lastChangeSeconds: number | null;
  readonly errors: readonly { readonly frontend: string; readonly error: string }[];
}

/**
 * A Cilium node's freshness: each of its two sources, or why it was not read (`…Unread`,
 * set exactly when the part is null).
 */
export interface CiliumFreshness {
  readonly source: 'cilium';
  readonly agent: CiliumAgentFreshness | null;
  readonly agentUnread?: string;
  readonly frontends: CiliumFrontendsFreshness | null;
  readonly frontendsUnread?: string;
}

/** A node's proxy freshness, or why it could not be read. */
export type ProxyFreshness =
  | { readonly source: 'kube-proxy-metrics'; readonly families: readonly FamilyFreshness[] }
  | CiliumFreshness
  | { readonly source: 'unknown'; readonly reason: string };

/** How many errors a {@link CiliumFrontendsFreshness} keeps. */
const ERRORS_KEPT = 5;

/** The frontends' reconciliation (see {@link CiliumFrontendsFreshness}) from StateDB rows. */
export function ciliumFrontendsFreshness(rows: readonly StateDbFrontend[]): CiliumFrontendsFreshness {
  const count = (status: string) => rows.filter((r) => r.status === status).length;
  const ages = (rs: readonly StateDbFrontend[]) => rs.map((r) => parseAgeText(r.since)).filter((x): x is number => x !== null);
  const pendingAges = ages(rows.filter((r) => r.status === 'Pending'));
  const all = ages(rows);
  const addr = (r: StateDbFrontend) => `${r.address.ip.includes(':') ? `[${r.address.ip}]` : r.address.ip}:${r.address.port}/${r.address.protocol ?? 'ANY'}`;
  return {
    total: rows.length,
    done: count('Done'),
    pending: count('Pending'),
    refreshing: count('Refreshing'),
    error: count('Error'),
    oldestPendingSeconds: pendingAges.length ? Math.max(...pendingAges) : null,
    lastChangeSeconds: all.length ? Math.min(...all) : null,
    errors: rows.filter((r) => r.status === 'Error').slice(0, ERRORS_KEPT).map((r) => ({ frontend: addr(r), error: r.error })),
  };
}

/**
 * A Cilium node's freshness from what was read of its agent: each input is the parsed
 * facts, or the reason it was not read. `unknown` (both reasons joined) when neither was read.
 */
export function ciliumFreshness(agent: CiliumAgentFacts | string, frontends: readonly StateDbFrontend[] | string): ProxyFreshness {
  if (typeof agent === 'string' && typeof frontends === 'string') return { source: 'unknown', reason: `${agent}; ${frontends}` };
  const a: CiliumAgentFreshness | null = typeof agent === 'string' ? null : {
    kubernetes: agent.kubernetes,
    stale: agent.stale,
    controllersHealthy: agent.controllersHealthy,
    controllersTotal: agent.controllersTotal,
    controllersFailing: agent.controllers.filter((c) => c.failures > 0).map((c) => ({ name: c.name, failures: c.failures, lastSuccessSeconds: c.lastSuccessSeconds, message: c.message })),
  };
  return {
    source: 'cilium',
    agent: a,
    ...(typeof agent === 'string' ? { agentUnread: agent } : {}),
    frontends: typeof frontends === 'string' ? null : ciliumFrontendsFreshness(frontends),
    ...(typeof frontends === 'string' ? { frontendsUnread: frontends } : {}),
  };
}

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

/**
 * A Cilium node's freshness in one line, in `lang` (`fleet.cilium.*`; a reason not read
 * through the phrase table): `Cilium: API watch Ok; controllers 45/45 healthy; LB frontends:
 * 120 done, 2 pending (oldest 40 s); last change 5 s before capture`. States, controller
 * names, frontends and the agent's own messages are the agent's words, kept as they are.
 */
export function ciliumFreshnessText(f: CiliumFreshness, lang: Lang = 'en'): string {
  const parts: string[] = [];
  const a = f.agent;
  if (!a) parts.push(tf(lang, 'fleet.cilium.agentUnknown', { reason: whyText(lang, f.agentUnread ?? '') }));
  else {
    const k = a.kubernetes;
    parts.push(!k ? t(lang, 'fleet.cilium.watchNotShown') : tf(lang, k.state !== 'Ok' && k.message ? 'fleet.cilium.watchWhy' : 'fleet.cilium.watch', { state: k.state, message: k.message }));
    const failing = a.controllersFailing.map((c) => `${c.name} ×${c.failures}`).join(', ');
    if (a.controllersTotal !== null) parts.push(tf(lang, 'fleet.cilium.controllers', { healthy: String(a.controllersHealthy), total: a.controllersTotal }) + (failing ? tf(lang, 'fleet.cilium.failing', { list: failing }) : ''));
    if (a.stale.length) parts.push(tf(lang, 'fleet.cilium.stale', { list: a.stale.join(', ') }));
  }
  const fe = f.frontends;
  if (!fe) parts.push(tf(lang, 'fleet.cilium.frontendsUnknown', { reason: whyText(lang, f.frontendsUnread ?? '') }));
  else {
    const counts = [
      tf(lang, 'fleet.cilium.done', { n: fe.done }),
      fe.pending ? tf(lang, 'fleet.cilium.pending', { n: fe.pending }) + (fe.oldestPendingSeconds !== null ? tf(lang, 'fleet.cilium.oldest', { seconds: fe.oldestPendingSeconds }) : '') : null,
      fe.refreshing ? tf(lang, 'fleet.cilium.refreshing', { n: fe.refreshing }) : null,
      fe.error ? tf(lang, 'fleet.cilium.error', { n: fe.error, list: fe.errors.map((e) => `${e.frontend}: ${e.error}`).join('; ') }) : null,
    ];
    parts.push(tf(lang, 'fleet.cilium.frontends', { counts: counts.filter(Boolean).join(', ') }) + (fe.lastChangeSeconds !== null ? tf(lang, 'fleet.cilium.lastChange', { seconds: fe.lastChangeSeconds }) : ''));
  }
  return tf(lang, 'fleet.cilium.line', { parts: parts.join('; ') });
}

/** `synced 12 s before capture`, `synced 3 min before capture, a change pending 40 s`, Cilium's: one line. */
export function freshnessText(f: ProxyFreshness): string {
  if (f.source === 'unknown') return `unknown: ${f.reason}`;
  if (f.source === 'cilium') return ciliumFreshnessText(f);
  return f.families
    .map((x) => `${x.family ? `${x.family}: ` : ''}${x.syncAgeSeconds === null ? 'never synced' : `synced ${x.syncAgeSeconds} s before capture`}${x.pendingSeconds !== null ? `, a change pending ${x.pendingSeconds} s` : ''}`)
    .join('; ');
}

/**
 * The one fact a matrix column shows of a node's freshness, the worst first: frontends in
 * `Error`, a change pending (kube-proxy: queued after the last sync; Cilium: a frontend still
 * `Pending`; seconds it has waited), the agent's API watch not `Ok`, failing controllers; else
 * `synced` with the age of the last sync (kube-proxy) or of the last frontend change (Cilium;
 * null when not shown), or the API watch state when only the agent status was read.
 */
export type FreshnessBrief =
  | { readonly kind: 'errors'; readonly count: number }
  | { readonly kind: 'pending'; readonly seconds: number }
  | { readonly kind: 'watch'; readonly state: string }
  | { readonly kind: 'failing'; readonly count: number }
  | { readonly kind: 'synced'; readonly seconds: number | null }
  | { readonly kind: 'unknown' };

/** {@link FreshnessBrief} of a node's freshness. */
export function freshnessBrief(f: ProxyFreshness | undefined): FreshnessBrief {
  if (!f || f.source === 'unknown') return { kind: 'unknown' };
  if (f.source === 'kube-proxy-metrics') {
    const pending = f.families.map((x) => x.pendingSeconds).filter((x): x is number => x !== null);
    if (pending.length) return { kind: 'pending', seconds: Math.max(...pending) };
    const ages = f.families.map((x) => x.syncAgeSeconds).filter((x): x is number => x !== null);
    return { kind: 'synced', seconds: ages.length ? Math.max(...ages) : null };
  }
  const fe = f.frontends;
  const a = f.agent;
  if (fe && fe.error > 0) return { kind: 'errors', count: fe.error };
  if (fe && fe.pending > 0) return { kind: 'pending', seconds: fe.oldestPendingSeconds ?? 0 };
  if (a?.kubernetes && a.kubernetes.state !== 'Ok' && a.kubernetes.state !== 'Disabled') return { kind: 'watch', state: a.kubernetes.state };
  if (a && a.controllersFailing.length > 0) return { kind: 'failing', count: a.controllersFailing.length };
  if (fe) return { kind: 'synced', seconds: fe.lastChangeSeconds };
  return a?.kubernetes ? { kind: 'watch', state: a.kubernetes.state } : { kind: 'unknown' };
}
