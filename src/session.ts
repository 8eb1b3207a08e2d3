/**
 * The session: the one place that drives a transport over time. It runs the
 * catalog probes, builds snapshots, re-reads counters every `intervalMs` on live
 * sources, computes rates, and keeps the last good snapshot when a refresh fails
 * (a failed load is a state the panes show, not a crash — after k9s).
 * The UI subscribes to it; `show`/`capture` call {@link loadSnapshot} once.
 */
import { buildSnapshot, ParseCache } from './analysis/build-snapshot.js';
import { iptablesRates } from './analysis/rates.js';
import type { RuleRates } from './analysis/rules-view.js';
import type { NodeSnapshot, SnapshotSource } from './model/snapshot.js';
import type { ServiceDnsResult } from './model/dns.js';
import { dnsTransportFor } from './dns/open.js';
import { resolveServiceDns } from './dns/resolve.js';
import type { DnsTransport } from './dns/transport.js';
import { catalog } from './sources/catalog.js';
import type { ApiFeed } from './sources/cluster-api.js';
import { runProbes, type ProbeRun } from './sources/probe-runner.js';
import type { Transport } from './sources/transport.js';

/** What a pane needs to know about the data's freshness; times are ms since epoch. */
export interface SessionState {
  readonly snapshot: NodeSnapshot | null;
  readonly rates: RuleRates;
  readonly loading: boolean;
  readonly refreshing: boolean;
  /** Why the last load or refresh failed; null after a success. */
  readonly error: string | null;
  /** When the shown snapshot was read (ms since epoch); null before the first. */
  readonly dataAt: number | null;
  /** The DNS pane's Service (`ns/name`) and what its questions got; null until one is asked. */
  readonly dns?: SessionDns | null;
}

/** A Service's DNS resolution as the DNS pane shows it. */
export interface SessionDns {
  readonly service: string;
  readonly result: ServiceDnsResult | null;
  readonly loading: boolean;
  readonly error: string | null;
}

/** A read-only view of a session, what the UI depends on (a static one is used in tests). */
export interface SessionLike {
  getState(): SessionState;
  subscribe(listener: () => void): () => void;
  refreshNow(): void;
  /** Asks the cluster DNS every question of Service `ns/name` (the DNS pane); no-op without API objects. */
  resolveDns?(service: string): void;
}

/** Options of {@link Session}. `intervalMs`: live counter refresh period (default 2,000 ms). */
export interface SessionOptions {
  readonly transport: Transport;
  readonly apiText?: string;
  readonly apiOrigin?: string;
  readonly live: boolean;
  readonly intervalMs?: number;
  readonly params?: Readonly<Record<string, string | undefined>>;
  readonly now?: () => number;
  /** Live API objects (cluster list/watch): used instead of `apiText`; a watch update rebuilds the snapshot. */
  readonly api?: ApiFeed;
  /** Runs the `where: cilium-agent` probes (exec into the Cilium agent pod), when the source found one. */
  readonly ciliumAgent?: Transport;
}

const EMPTY_RATES: RuleRates = new Map();

/** Runs every node probe once and builds a snapshot. Throws only if the transport itself breaks. */
export async function loadSnapshot(options: SessionOptions): Promise<{ snapshot: NodeSnapshot; runs: ProbeRun[] }> {
  const params = options.params ? { params: options.params } : {};
  const runs = await runProbes(options.transport, params);
  if (options.ciliumAgent) runs.push(...(await runProbes(options.ciliumAgent, { ...params, where: 'cilium-agent' })));
  return { snapshot: snapshotOf(options, runs), runs };
}

function snapshotOf(options: SessionOptions, runs: readonly ProbeRun[], cache?: ParseCache): NodeSnapshot {
  const first = runs.map((r) => r.result.startedAt).sort()[0];
  const apiText = options.api ? options.api.text() : options.apiText;
  const apiOrigin = options.api ? options.api.origin : options.apiOrigin;
  return buildSnapshot({
    runs,
    ...(apiText !== undefined ? { apiText } : {}),
    ...(apiOrigin ? { apiOrigin } : {}),
    source: { kind: options.transport.kind, label: options.transport.label, live: options.live } satisfies SnapshotSource,
    capturedAt: first ?? new Date((options.now ?? Date.now)()).toISOString(),
    ...(cache ? { cache } : {}),
  });
}

/** A live or replayed session over one transport. */
export class Session implements SessionLike {
  private state: SessionState = { snapshot: null, rates: EMPTY_RATES, loading: true, refreshing: false, error: null, dataAt: null, dns: null };
  private readonly listeners = new Set<() => void>();
  private runs: ProbeRun[] = [];
  private timer: NodeJS.Timeout | undefined;
  private dnsTransport: DnsTransport | undefined;
  // An unchanged ruleset re-read on refresh is not parsed again.
  private readonly cache = new ParseCache();
  private unsubscribeApi: (() => void) | undefined;
  private readonly now: () => number;

  constructor(private readonly options: SessionOptions) {
    this.now = options.now ?? Date.now;
  }

  getState(): SessionState {
    return this.state;
  }

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private set(patch: Partial<SessionState>): void {
    this.state = { ...this.state, ...patch };
    for (const l of this.listeners) l();
  }

  /** Loads the first snapshot, then (live sources) refreshes counters every interval. */
  async start(): Promise<void> {
    try {
      const { snapshot, runs } = await loadSnapshot(this.options);
      this.runs = runs;
      this.set({ snapshot, loading: false, error: null, dataAt: this.now() });
    } catch (e) {
      this.set({ loading: false, error: (e as Error).message });
    }
    if (this.options.live) this.timer = setInterval(() => this.refreshNow(), this.options.intervalMs ?? 2000);
    this.unsubscribeApi = this.options.api?.subscribe(() => this.apiChanged());
  }

  /** A watch event changed the API objects: rebuild from the probe outputs already read (no probe runs). */
  private apiChanged(): void {
    if (this.runs.length === 0) return;
    this.set({ snapshot: snapshotOf(this.options, this.runs) });
  }

  /** Re-reads the probes marked `refresh` and rebuilds the snapshot; keeps the last good one on failure. */
  refreshNow(): void {
    if (!this.options.live || this.state.refreshing) return;
    this.set({ refreshing: true });
    const ids = catalog().probes.filter((p) => p.refresh).map((p) => p.id);
    runProbes(this.options.transport, { ids, ...(this.options.params ? { params: this.options.params } : {}) })
      .then((fresh) => {
        const failed = fresh.filter((r) => r.status === 'timeout' || (r.status === 'failed' && r.result.stdout === ''));
        const byId = new Map(fresh.filter((r) => !failed.includes(r)).map((r) => [r.id, r]));
        this.runs = this.runs.map((r) => byId.get(r.id) ?? r);
        const previous = this.state.snapshot;
        const snapshot = snapshotOf(this.options, this.runs, this.cache);
        const at = this.now();
        const elapsed = this.state.dataAt === null ? 0 : (at - this.state.dataAt) / 1000;
        const rates = previous?.iptables?.value && snapshot.iptables?.value ? iptablesRates(previous.iptables.value, snapshot.iptables.value, elapsed) : EMPTY_RATES;
        const error = failed.length ? failed.map((r) => `${r.id}: ${r.status}`).join(', ') : null;
        this.set({ snapshot, rates, refreshing: false, error, dataAt: at });
      })
      .catch((e: Error) => this.set({ refreshing: false, error: e.message }));
  }

  /** Stops refreshing and closes the transport (and the API feed and Cilium agent transport, if any). */
  /**
   * Resolves a Service's DNS names through the source's own way to the cluster DNS
   * (replay: the recorded answers). One at a time: a newer request wins.
   */
  resolveDns(service: string): void {
    const api = this.state.snapshot?.api?.value;
    if (!api || this.state.dns?.service === service) return;
    this.set({ dns: { service, result: null, loading: true, error: null } });
    this.dnsTransport ??= dnsTransportFor(this.options.transport);
    resolveServiceDns({ api, service, dns: this.dnsTransport, query: { timeoutMs: 2000, tries: 1 } })
      .then((result) => {
        if (this.state.dns?.service === service) this.set({ dns: { service, result, loading: false, error: null } });
      })
      .catch((e: Error) => {
        if (this.state.dns?.service === service) this.set({ dns: { service, result: null, loading: false, error: e.message } });
      });
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.dnsTransport?.close();
    this.unsubscribeApi?.();
    await this.options.transport.close();
    await this.options.ciliumAgent?.close();
    await this.options.api?.close();
  }
}

/** A session over a fixed snapshot (tests, and `show` of one read). */
export function staticSession(snapshot: NodeSnapshot | null, patch: Partial<SessionState> = {}): SessionLike {
  const state: SessionState = { snapshot, rates: EMPTY_RATES, loading: snapshot === null, refreshing: false, error: null, dataAt: 0, dns: null, ...patch };
  return { getState: () => state, subscribe: () => () => {}, refreshNow: () => {}, resolveDns: () => {} };
}
