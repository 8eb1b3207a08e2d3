/**
 * The session: the one place that drives a transport over time. It runs the
 * catalog probes, builds snapshots, re-reads counters every `intervalMs` on live
 * sources, computes rates, and keeps the last good snapshot when a refresh fails
 * (a failed load is a state the panes show, not a crash — after k9s).
 * The UI subscribes to it; `show`/`capture` call {@link loadSnapshot} once.
 */
import { buildSnapshot } from './analysis/build-snapshot.js';
import { iptablesRates } from './analysis/rates.js';
import type { RuleRates } from './analysis/rules-view.js';
import type { NodeSnapshot, SnapshotSource } from './model/snapshot.js';
import { catalog } from './sources/catalog.js';
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
}

/** A read-only view of a session, what the UI depends on (a static one is used in tests). */
export interface SessionLike {
  getState(): SessionState;
  subscribe(listener: () => void): () => void;
  refreshNow(): void;
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
}

const EMPTY_RATES: RuleRates = new Map();

/** Runs every node probe once and builds a snapshot. Throws only if the transport itself breaks. */
export async function loadSnapshot(options: SessionOptions): Promise<{ snapshot: NodeSnapshot; runs: ProbeRun[] }> {
  const runs = await runProbes(options.transport, { ...(options.params ? { params: options.params } : {}) });
  return { snapshot: snapshotOf(options, runs), runs };
}

function snapshotOf(options: SessionOptions, runs: readonly ProbeRun[]): NodeSnapshot {
  const first = runs.map((r) => r.result.startedAt).sort()[0];
  return buildSnapshot({
    runs,
    ...(options.apiText !== undefined ? { apiText: options.apiText } : {}),
    ...(options.apiOrigin ? { apiOrigin: options.apiOrigin } : {}),
    source: { kind: options.transport.kind, label: options.transport.label, live: options.live } satisfies SnapshotSource,
    capturedAt: first ?? new Date((options.now ?? Date.now)()).toISOString(),
  });
}

/** A live or replayed session over one transport. */
export class Session implements SessionLike {
  private state: SessionState = { snapshot: null, rates: EMPTY_RATES, loading: true, refreshing: false, error: null, dataAt: null };
  private readonly listeners = new Set<() => void>();
  private runs: ProbeRun[] = [];
  private timer: NodeJS.Timeout | undefined;
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
        const snapshot = snapshotOf(this.options, this.runs);
        const at = this.now();
        const elapsed = this.state.dataAt === null ? 0 : (at - this.state.dataAt) / 1000;
        const rates = previous?.iptables?.value && snapshot.iptables?.value ? iptablesRates(previous.iptables.value, snapshot.iptables.value, elapsed) : EMPTY_RATES;
        const error = failed.length ? failed.map((r) => `${r.id}: ${r.status}`).join(', ') : null;
        this.set({ snapshot, rates, refreshing: false, error, dataAt: at });
      })
      .catch((e: Error) => this.set({ refreshing: false, error: e.message }));
  }

  /** Stops refreshing and closes the transport. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.options.transport.close();
  }
}

/** A session over a fixed snapshot (tests, and `show` of one read). */
export function staticSession(snapshot: NodeSnapshot | null, patch: Partial<SessionState> = {}): SessionLike {
  const state: SessionState = { snapshot, rates: EMPTY_RATES, loading: snapshot === null, refreshing: false, error: null, dataAt: 0, ...patch };
  return { getState: () => state, subscribe: () => () => {}, refreshNow: () => {} };
}
