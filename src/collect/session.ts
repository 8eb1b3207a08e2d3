/**
 * The session: the one place that drives a transport over time. It runs the
 * catalog probes, builds snapshots, re-reads counters every `intervalMs` on live
 * sources, computes rates, and keeps the last good snapshot when a refresh fails
 * (a failed load is a state the panes show, not a crash — after k9s).
 * The UI subscribes to it; `show`/`capture` call {@link loadSnapshot} once.
 */
import { collectGarbageBetweenParts } from './memory.js';
import { inputOf, type SessionOptions } from './load-snapshot.js';
export { loadSnapshot, type SessionOptions } from './load-snapshot.js';
import { buildFirstSnapshot, completeSnapshot, ParseCache, partProbes, piecedProbes, summarize, type SnapshotInput } from './build-snapshot.js';
import { iptablesRates } from '../analysis/rates.js';
import type { RuleRates } from '../analysis/rules-view.js';
import { SNAPSHOT_PARTS, type NodeSnapshot, type SnapshotPart } from '../model/snapshot.js';
import { apiOfCluster } from '../model/api-namespace.js';
import type { DnsSearchRun, ServiceDnsResult } from '../model/dns.js';
import { digSearch, nodeResolvConf } from '../dns/dig-search.js';
import { dnsTransportFor } from '../dns/open.js';
import { resolveServiceDns } from '../dns/resolve.js';
import { readClusterDomain, type ClusterDomain } from '../dns/cluster-domain.js';
import type { DnsTransport } from '../dns/transport.js';
import { catalog } from '../sources/catalog.js';
import type { ApiFeed, ApiProblem } from '../sources/cluster-api.js';
export type { ApiProblem } from '../sources/cluster-api.js'; // documented there: a refused `--api-file` version
import { runProbes, type ProbeRun } from '../sources/probe-runner.js';
import { firstStageIds, planOf, runPlanned } from './planned-runs.js';
import { LbDecodesBeside } from './beside-dumps.js';
import { pinnedCiliumLbMaps, plannedIds, type ProbePlan } from './probe-plan.js';
import { rulesetCheckFingerprint, type ChainFocus } from './chain-refresh.js';
import { CHECK_PROBES, focusedRefresh } from './focused-refresh.js';
import { isLbMapsFocus, lbMapProbes, serviceMapsRefresh, ServiceMapDigests } from './map-refresh.js';
import { onDemandProbeIds, PART_PROBE_IDS, withoutPartText, withoutUnwanted } from './session-probes.js';
export { onDemandProbeIds } from './session-probes.js';
export type { ChainFocus } from './chain-refresh.js';
import { ReplayTransport } from '../sources/replay.js';
import { DEFAULT_INTERVAL_MS } from '../sources/refresh-interval.js';
import { FULL_READ_EVERY, nextRefreshDelayMs, refreshNodeCpuMs, slowPartDelayMs } from './refresh-cost.js';

/** What a pane needs to know about the data's freshness; times are ms since epoch. */
export interface SessionState {
  readonly snapshot: NodeSnapshot | null;
  readonly rates: RuleRates;
  readonly loading: boolean;
  readonly refreshing: boolean;
  /** Why the last load or refresh failed; null after a success. */
  readonly error: string | null;
  /** When the shown snapshot was read whole (ms since epoch; a refresh that lost probes keeps it); null before the first. */
  readonly dataAt: number | null;
  /**
   * When the rules were last read whole (ms since epoch): older than `dataAt` when refreshes
   * re-read only the open chain (the header says it then). Absent before the first full read.
   */
  readonly fullReadAt?: number | null;
  /**
   * The wait between refreshes when the last one's node CPU stretched it past the interval
   * (src/collect/refresh-cost.ts: ≤ 5 % of a core), with that CPU (ms); null or absent when not stretched.
   */
  readonly stretched?: { readonly everyMs: number; readonly nodeCpuMs: number } | null;
  /** The DNS pane's Service (`ns/name`) and what its questions got; null until one is asked. */
  readonly dns?: SessionDns | null;
  /** The name last typed in the DNS pane (`n`) and its search, as `dig +search` runs it; null until one is asked. */
  readonly dnsName?: SessionDnsName | null;
  /**
   * The node's name before the first snapshot is built, when the source knows it at once (a
   * replay's manifest.json `node`): the header shows it while the API objects parse. Else null.
   */
  readonly node?: string | null;
  /** A replay's capture time (manifest.json `capturedAt`, ISO-8601 UTC) before the first snapshot; else null. */
  readonly capturedAt?: string | null;
  /**
   * The Cilium LB maps the light probes found pinned (src/collect/probe-plan.ts
   * `pinnedCiliumLbMaps`), set with the first snapshot: the header may name the mode from them
   * before the maps are dumped (src/analysis/early-mode.ts). Null or absent: not read.
   */
  readonly pinnedLbMaps?: readonly string[] | null;
  /**
   * Why the API objects shown are not the source's latest: an `--api-file` version without
   * objects (the last good ones stay), a failing cluster watch ({@link ApiFeed.error}); null when they are.
   */
  readonly apiError?: string | null;
  /** {@link apiError} in short (its kind, when the objects shown were read), when the feed gives it ({@link ApiFeed.problem}). */
  readonly apiProblem?: ApiProblem | null;
}

/** A Service's DNS resolution as the DNS pane shows it. */
export interface SessionDns {
  readonly service: string;
  readonly result: ServiceDnsResult | null;
  readonly loading: boolean;
  readonly error: string | null;
  /** The cluster domain the questions were asked in, and where it came from (once known). */
  readonly domain?: ClusterDomain;
}

/** A name typed in the DNS pane and its resolver search (`run`), once it ends. */
export interface SessionDnsName {
  readonly name: string;
  readonly run: DnsSearchRun | null;
  readonly loading: boolean;
  readonly error: string | null;
  /** The cluster domain the default resolv.conf was made with (once known). */
  readonly domain?: ClusterDomain;
}

/** A read-only view of a session, what the UI depends on (a static one is used in tests). */
export interface SessionLike {
  getState(): SessionState;
  subscribe(listener: () => void): () => void;
  /** `all`: read every part now, not the open chain alone nor slow parts later (the `r` key). */
  refreshNow(all?: boolean): void;
  /** The chain on screen (Rules pane), for refreshes that re-read it alone; optional (static sessions ignore it). */
  focus?(focus: ChainFocus | null): void;
  /** Asks the cluster DNS every question of Service `ns/name` (the DNS pane); no-op without API objects. */
  resolveDns?(service: string): void;
  /** Resolves any name as a pod's resolver would (`dig +search NAME`; the DNS pane's `n`). */
  resolveName?(name: string): void;
}

const EMPTY_RATES: RuleRates = new Map();


export { FULL_READ_EVERY, MAX_SLOW_PART_DELAY_MS, slowPartDelayMs } from './refresh-cost.js';

/**
 * How a live session's load reads the Cilium LB map dumps: `tally` (the default) counts each
 * from the compact scan (src/parsers/bpftool-lb-tally.ts) and decodes and joins the table when
 * a view first reads it (src/collect/lb-lazy.ts `tallyLbPart`); `decode` decodes each dump
 * beside the next one (the path before the tallies, kept as the tests' reference).
 */
export interface SessionLbLoad {
  readonly lbDumpsAtLoad?: 'tally' | 'decode';
}

/**
 * A live or replayed session over one transport.
 *
 * Staged load: {@link start} shows a first snapshot with the node's identity and the API
 * objects (the Services pane), then parses the other parts off the render path
 * ({@link completeSnapshot}), publishing a snapshot after each group; parts not parsed
 * yet are listed in `snapshot.pending`. The probe texts of those parts are dropped once
 * parsed (a refresh re-reads what it re-parses).
 *
 * Refresh (live sources): re-reads the catalog's `refresh` probes, re-parses only the parts
 * whose text changed (fingerprints in a {@link ParseCache}), with the same turns of the event
 * loop; a refresh still running makes the next one a no-op. A part that is slow to read and
 * parse (a 1M-entry conntrack table, a 25,000-Service ruleset) is re-read less often: see
 * {@link slowPartDelayMs}; rule rates are then computed over the time between its reads.
 */
export class Session implements SessionLike {
  private state: SessionState = { snapshot: null, rates: EMPTY_RATES, loading: true, refreshing: false, error: null, dataAt: null, dns: null };
  private readonly listeners = new Set<() => void>();
  private runs: ProbeRun[] = [];
  private timer: NodeJS.Timeout | undefined;
  private dnsTransport: DnsTransport | undefined;
  /** The cluster domain, read once (a kubelet-config probe, the node's resolv.conf) on the first DNS question. */
  private clusterDomain: Promise<ClusterDomain> | undefined;
  // An unchanged ruleset re-read on refresh is not parsed again (live sources only: a replay never refreshes).
  private readonly cache: ParseCache | undefined;
  private unsubscribeApi: (() => void) | undefined;
  private readonly now: () => number;
  /** The staged load is still parsing; refreshes and API rebuilds wait for it. */
  private staging = false;
  private apiDirty = false;
  /** Probes of slow parts and when a refresh may read them again (performance.now() ms). */
  private notBefore = new Map<string, number>();
  /** When the shown iptables counters were read (ms since epoch): the start of the next rates' span. */
  private iptablesAt: number | null = null;
  /** The probe plan of the load (what the node's mode does not need); none skipped before it. */
  private plan: ProbePlan = { skipped: [] };
  /** The chain on screen ({@link focus}); null: refreshes read everything they refresh. */
  private focused: ChainFocus | null = null;
  /** The cheap check's fingerprint at the last full read (src/collect/chain-refresh.ts); null: unknown. */
  private fingerprint: string | null = null;
  /** Focused refreshes since the last full read. */
  private sinceFull = 0;
  /** When each re-read chain's counters were read (ms since epoch), by `ruleset/table/chain`. */
  private readonly chainAt = new Map<string, number>();
  /** The Cilium service maps' last dumps (src/collect/map-refresh.ts), what the LB pane's refresh compares against. */
  private readonly mapDigests = new ServiceMapDigests();
  private lastRefresh: 'chain' | 'check' | 'full' | null = null;
  /** The node CPU (ms) the probes of the last refresh used (src/collect/refresh-cost.ts). */
  private lastCpuMs = 0;
  private stopped = false;

  /**
   * The next refresh after `delayMs`; each waits for the one before (never two at once) and
   * the wait after a refresh is the interval, or the refresh's own time when that was longer.
   */
  private schedule(delayMs: number): void {
    this.timer = setTimeout(() => {
      const started = this.now();
      void this.refresh().finally(() => {
        if (this.stopped) return;
        const interval = this.options.intervalMs ?? DEFAULT_INTERVAL_MS;
        const wait = nextRefreshDelayMs(interval, this.now() - started, this.lastCpuMs);
        const stretched = nextRefreshDelayMs(interval, 0, this.lastCpuMs) > interval ? { everyMs: wait, nodeCpuMs: this.lastCpuMs } : null;
        if (stretched?.everyMs !== this.state.stretched?.everyMs) this.set({ stretched });
        this.schedule(wait);
      });
    }, delayMs);
  }

  constructor(private options: SessionOptions & SessionLbLoad) {
    this.now = options.now ?? Date.now;
    this.cache = options.live ? new ParseCache() : undefined;
    // A replay's manifest names the node and the capture time: no need to wait for the first snapshot to say them.
    if (options.transport instanceof ReplayTransport) {
      const { node, capturedAt } = options.transport.bundle.manifest;
      this.state = { ...this.state, node, capturedAt };
    }
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

  /**
   * Loads the first snapshot (identity and API objects), then the other parts in stages;
   * resolves when the snapshot is complete. Live sources then refresh every interval.
   */
  async start(): Promise<void> {
    await this.load();
    if (this.options.live) this.schedule(this.options.intervalMs ?? DEFAULT_INTERVAL_MS);
    this.unsubscribeApi = this.options.api?.subscribe((change) => (change === 'error' ? this.apiErrorChanged() : this.apiChanged()));
  }

  /** The staged load (see the class comment); a failure becomes `error`, never a rejection. */
  private async load(): Promise<void> {
    this.staging = true;
    try {
      // The probes of the first snapshot first; the parts' probes (the big outputs: a replay
      // reads 300 MB of rules and flows from disk) after its frame, stage by stage.
      const params = this.options.params ? { params: this.options.params } : {};
      const firstRuns = await runProbes(this.options.transport, { ...params, ids: firstStageIds() });
      this.plan = planOf(this.options.transport, firstRuns, this.options.probes);
      // The cheap check's baseline, read before the dumps: a change after it shows at the next check.
      if (this.options.live) this.fingerprint = rulesetCheckFingerprint(CHECK_PROBES.map((id) => firstRuns.find((r) => r.id === id)));
      const first = buildFirstSnapshot(inputOf(this.options, firstRuns, { ...this.extra(), ...this.openApiParse() }));
      // Fixed API objects are parsed once (refreshes reuse them): their text (160 MB at 25,000 Services) can go.
      if (!this.options.api && this.options.apiText !== undefined) this.options = (({ apiText: _, ...rest }) => rest)(this.options);
      const pinnedLbMaps = pinnedCiliumLbMaps(firstRuns.find((r) => r.id === 'bpf-pinned'));
      this.set({ snapshot: first, loading: false, error: null, dataAt: this.now(), fullReadAt: this.now(), pinnedLbMaps });
      const fetched: ProbeRun[] = [];
      // Each LB map dump tallied while the next one runs (beside-dumps.ts; decoded only when the tally
      // refuses it), the build counts the table from the tallies and decodes and joins it when a view
      // first reads it (the LB pane, a step walk, the diagnosis), not for the header's counts. With
      // cilium-agent's listings the table is compared at once: decoded beside as before.
      const tallied = !this.options.ciliumAgent && this.options.lbDumpsAtLoad !== 'decode';
      const decodes = this.options.live ? new LbDecodesBeside(true, tallied) : null;
      const early = decodes ? { early: { lbMaps: decodes.lbMaps, ...(tallied ? { lbTallies: decodes.lbTallies } : {}) } } : {};
      const snapshot = await completeSnapshot(inputOf(this.options, firstRuns, { ...this.extra(), lazyLb: true, ...early }), first, {
        onProgress: (s) => this.set({ snapshot: s }),
        // The parts parsed before are garbage or kept: free the garbage before a big parse allocates.
        beforeBigPart: collectGarbageBetweenParts,
        onPartParsed: (part, ms) => this.partParsed(part, ms, fetched),
        fetchRuns: async (ids) => {
          const got = await this.runPartProbes(ids, decodes?.onRun);
          decodes?.flush();
          this.mapDigests.remember(got);
          // The session keeps each run without its text: completeSnapshot lets the text go once parsed.
          fetched.push(...got.map(withoutPartText));
          return got;
        },
      });
      // The agent's probes that feed no part (cilium-service-list) are still read, as a one-shot load reads them.
      const agentOnly = this.options.ciliumAgent
        ? await runProbes(this.options.ciliumAgent, { ...params, ids: catalog().probes.filter((p) => p.where === 'cilium-agent' && !p.onDemand && !PART_PROBE_IDS().has(p.id)).map((p) => p.id) })
        : [];
      const order = new Map(catalog().probes.map((p, i) => [p.id, i]));
      const runs = [...firstRuns, ...fetched, ...agentOnly].sort((a, b) => (order.get(a.id) ?? 0) - (order.get(b.id) ?? 0));
      this.runs = runs.map(withoutPartText);
      this.set({ snapshot: agentOnly.length ? { ...snapshot, probes: runs.map(summarize) } : snapshot });
    } catch (e) {
      // Parts that will never come are shown as not read (with the error), not as loading.
      const shown = this.state.snapshot;
      const settled = shown?.pending ? (({ pending: _, ...rest }: NodeSnapshot) => rest)(shown) : shown;
      this.set({ loading: false, error: (e as Error).message, snapshot: settled });
    } finally {
      this.staging = false;
    }
    if (this.apiDirty) this.apiChanged();
  }

  /** Runs the parts' probes among `ids`: node probes through the transport, agent probes through the agent's (if any). */
  private async runPartProbes(asked: readonly string[], onRun?: (run: ProbeRun) => void): Promise<ProbeRun[]> {
    const params = this.options.params ? { params: this.options.params } : {};
    const where = new Map(catalog().probes.map((p) => [p.id, p.where]));
    const ids = withoutUnwanted(this.options, asked);
    const node = ids.filter((id) => where.get(id) === 'node');
    const agent = ids.filter((id) => where.get(id) === 'cilium-agent');
    // Without a parse cache (which fingerprints whole texts: live sources), the conntrack table and
    // nft -j are parsed piece by piece: a replay need not hold their texts (220 and 229 MB, huge).
    const pieces = this.cache ? {} : { stdoutAsPieces: piecedProbes() };
    let runs: ProbeRun[] = [];
    if (node.length) {
      const planned = await runPlanned(this.options.transport, this.plan, node, { ...params, ...pieces, ...(onRun ? { onRun } : {}) });
      runs = planned.runs;
      this.plan = planned.plan;
    }
    if (this.options.ciliumAgent && agent.length) runs.push(...(await runProbes(this.options.ciliumAgent, { ...params, ids: agent })));
    return runs;
  }

  /**
   * The API parse the feed made when it opened (`--api-file` for the TUI), as the first build's
   * early parse; also remembered by the parse cache, as the build's own parse would have been.
   */
  private openApiParse(): Pick<SnapshotInput, 'early'> {
    const api = this.options.api?.takeOpenParse?.();
    if (!api) return {};
    this.cache?.store(`api:${api.origin}`, api.text, api.result);
    return { early: { api } };
  }

  /** The parse cache and the plan's skipped probes, as every snapshot of this session is built with. */
  private extra(): Pick<SnapshotInput, 'cache' | 'skipped'> {
    return { ...(this.cache ? { cache: this.cache } : {}), skipped: this.plan.skipped };
  }

  private partParsed(part: SnapshotPart, ms: number, runs: readonly ProbeRun[]): void {
    const ids = partProbes()[part];
    const read = runs.filter((r) => ids.includes(r.id)).reduce((sum, r) => sum + r.result.durationMs, 0);
    const delay = slowPartDelayMs(this.options.intervalMs ?? DEFAULT_INTERVAL_MS, read + ms);
    for (const id of ids) {
      if (delay > 0) this.notBefore.set(id, performance.now() + delay);
      else this.notBefore.delete(id);
    }
  }

  /** The API feed's error changed (its objects did not): the header says it. */
  private apiErrorChanged(): void {
    const apiError = this.options.api?.error?.() ?? null;
    if (apiError !== (this.state.apiError ?? null)) this.set({ apiError, apiProblem: this.options.api?.problem?.() ?? null });
  }

  /** A watch event changed the API objects: re-parse them, keep every other part (no probe runs). */
  private apiChanged(): void {
    this.apiErrorChanged();
    const current = this.state.snapshot;
    if (this.staging || this.state.refreshing) {
      this.apiDirty = true;
      return;
    }
    this.apiDirty = false;
    if (this.runs.length === 0 || !current) return;
    const first = buildFirstSnapshot(inputOf(this.options, this.runs, this.extra()));
    this.set({ snapshot: { ...current, meta: first.meta, api: first.api } });
  }

  /**
   * Tells the session which chain is on screen (the Rules pane's open chain), or none: live
   * refreshes then re-read that chain alone while the cheap check says nothing changed
   * (see {@link refreshNow}).
   */
  focus(focus: ChainFocus | null): void {
    this.focused = focus;
  }

  /** Refreshes now unless one (or the load) is under way; `all` (the `r` key): every part, no chain alone. */
  refreshNow(all = false): void {
    if (all) [this.sinceFull, this.notBefore] = [Number.POSITIVE_INFINITY, new Map()];
    void this.refresh();
  }

  /**
   * One refresh. With a chain on screen ({@link focus}), a live iptables or nftables node,
   * and fewer than {@link FULL_READ_EVERY} refreshes since the last full read: the chain's
   * own probe and the cheap check (src/collect/focused-refresh.ts); a full read when the check
   * says the tables changed, or the open chain's rules did. Otherwise the full
   * read: the probes marked `refresh` (slow parts less often, {@link slowPartDelayMs}),
   * re-parsing only what changed. The last good snapshot stays on failure.
   */
  private async refresh(): Promise<void> {
    if (!this.options.live || this.state.refreshing || this.staging) return;
    // The first load failed (a transport hiccup): try it again rather than refresh nothing.
    if (!this.state.snapshot) {
      this.set({ refreshing: true });
      await this.load();
      this.set({ refreshing: false });
      return;
    }
    this.set({ refreshing: true });
    this.lastCpuMs = 0;
    try {
      // With cilium-agent's listings beside the maps, the LB table is the two compared: read whole.
      const focus = isLbMapsFocus(this.focused) && this.options.ciliumAgent ? null : this.focused;
      if (focus && this.sinceFull < (this.options.fullReadEvery ?? FULL_READ_EVERY) && (await this.refreshFocused(focus))) return;
      await this.refreshFull();
    } catch (e) {
      this.set({ refreshing: false, error: (e as Error).message });
    }
  }

  /** The focused refresh; false when a full read must follow (the check's fingerprint is kept for it). */
  private async refreshFocused(focus: ChainFocus): Promise<boolean> {
    const previous = this.state.snapshot!;
    const key = `${focus.ruleset}/${focus.table}/${focus.chain}`;
    const since = this.chainAt.get(key) ?? this.iptablesAt ?? this.state.dataAt;
    const at0 = this.now();
    const { transport, params = {} } = this.options;
    const got = isLbMapsFocus(focus)
      ? await serviceMapsRefresh({ transport, params, snapshot: previous, digests: this.mapDigests, ...(focus.frontends ? { frontends: focus.frontends } : {}) })
      : await focusedRefresh({ transport, params, focus, snapshot: previous, fingerprint: this.fingerprint, elapsedSeconds: since === null ? 0 : (at0 - since) / 1000 });
    this.lastCpuMs += refreshNodeCpuMs(got.runs ?? []);
    if (got.kind === 'full') return false;
    this.sinceFull++;
    if (!got.checkOnly) this.chainAt.set(key, at0);
    this.lastRefresh = got.checkOnly ? 'check' : 'chain';
    this.set({ snapshot: got.snapshot, rates: got.rates, refreshing: false, error: null, dataAt: got.checkOnly ? this.state.dataAt : at0 });
    this.apiErrorChanged();
    if (this.apiDirty) this.apiChanged();
    return true;
  }

  /** The full refresh (see {@link refresh}). */
  private async refreshFull(): Promise<void> {
    const at0 = performance.now();
    const ids = plannedIds(
      this.plan,
      catalog()
        .probes.filter((p) => p.refresh && at0 >= (this.notBefore.get(p.id) ?? 0))
        .map((p) => p.id)
        // The LB pane on screen: its maps are read again with the rest (src/collect/map-refresh.ts).
        .concat(isLbMapsFocus(this.focused) && !this.options.ciliumAgent ? lbMapProbes() : []),
    );
    const fresh = await runProbes(this.options.transport, { ids: [...new Set([...ids, ...CHECK_PROBES])], ...(this.options.params ? { params: this.options.params } : {}) });
    this.fingerprint = rulesetCheckFingerprint(CHECK_PROBES.map((id) => fresh.find((r) => r.id === id)));
    this.lastCpuMs += refreshNodeCpuMs(fresh);
    this.mapDigests.remember(fresh);
    const failed = fresh.filter((r) => r.status === 'timeout' || (r.status === 'failed' && r.result.stdout === ''));
    const byId = new Map(fresh.filter((r) => !failed.includes(r)).map((r) => [r.id, r]));
    // Stale means data that was there is now old: a probe that never read anything
    // (ipvsadm on a kernel without IPVS) already shows as a diagnostic, not as staleness.
    const hadData = new Set(this.runs.filter((r) => r.status === 'ok').map((r) => r.id));
    const lost = failed.filter((r) => hadData.has(r.id));
    const runs = this.runs.map((r) => byId.get(r.id) ?? r);
    const previous = this.state.snapshot!;
    // Parts none of whose probes were re-read stay as they are (their texts are gone).
    const reuse = new Set<SnapshotPart | 'api'>(SNAPSHOT_PARTS.filter((part) => !partProbes()[part].some((id) => byId.has(id))));
    if (!this.options.api) reuse.add('api');
    const input = inputOf(this.options, runs, { ...this.extra(), reuse: { snapshot: previous, parts: reuse } });
    const snapshot = await completeSnapshot(input, buildFirstSnapshot(input), { onPartParsed: (part, ms) => this.partParsed(part, ms, runs) });
    this.runs = runs.map(withoutPartText);
    const at = this.now();
    // Rates span the time between two reads of the counters (a slow ruleset is not read every refresh).
    let rates = this.state.rates;
    if (byId.has('iptables-save')) {
      const since = this.iptablesAt ?? this.state.dataAt;
      const elapsed = since === null ? 0 : (at - since) / 1000;
      rates = previous.iptables?.value && snapshot.iptables?.value ? iptablesRates(previous.iptables.value, snapshot.iptables.value, elapsed) : EMPTY_RATES;
      this.iptablesAt = at;
      this.chainAt.clear();
    }
    this.sinceFull = 0;
    this.lastRefresh = 'full';
    // Which probes, then the node's own words for the first of them ("Cannot open network namespace …").
    const detail = lost.map((r) => r.result.stderr.trim().split('\n').pop()?.trim() ?? '').find((line) => line !== '');
    const error = lost.length ? `${lost.map((r) => `${r.id}: ${r.status}`).join(', ')}${detail ? ` — ${detail}` : ''}` : null;
    // A refresh that lost probes shows their parts as they were: the data is as old as before.
    const dataAt = lost.length ? this.state.dataAt : at;
    this.set({ snapshot, rates, refreshing: false, error, dataAt, fullReadAt: lost.length ? (this.state.fullReadAt ?? null) : at });
    // A cluster watch says nothing when it starts failing: its error is read with each refresh.
    this.apiErrorChanged();
    if (this.apiDirty) this.apiChanged();
  }

  /** What the last refresh read: `chain` (the open chain), `check` (the check alone), `full`; null before the first. */
  lastRefreshKind(): 'chain' | 'check' | 'full' | null {
    return this.lastRefresh;
  }

  /**
   * Resolves a Service's DNS names through the source's own way to the cluster DNS
   * (replay: the recorded answers). One at a time: a newer request wins.
   */
  resolveDns(service: string): void {
    const shown = this.state.snapshot?.api?.value;
    if (!shown || this.state.dns?.service === service) return;
    // kube-dns lives in kube-system whatever `-n` shows.
    const api = apiOfCluster(shown);
    this.set({ dns: { service, result: null, loading: true, error: null } });
    this.dnsTransport ??= dnsTransportFor(this.options.transport);
    const dns = this.dnsTransport;
    const flag = this.options.clusterDomain;
    this.clusterDomain ??= readClusterDomain({ ...(flag !== undefined ? { flag } : {}), transport: this.options.transport });
    this.clusterDomain
      .then(async (domain) => ({ domain, result: await resolveServiceDns({ api, service, dns, expect: { zone: domain.name }, query: { timeoutMs: 2000, tries: 1 } }) }))
      .then(({ domain, result }) => {
        if (this.state.dns?.service === service) this.set({ dns: { service, result, loading: false, error: null, domain } });
      })
      .catch((e: Error) => {
        if (this.state.dns?.service === service) this.set({ dns: { service, result: null, loading: false, error: e.message } });
      });
  }

  /**
   * Resolves `name` as `dig +search NAME` does (src/dns/dig-search.ts): as a ClusterFirst Pod
   * of the session's namespace (else `default`) does, each question sent through the source's
   * DNS path in the resolver's order. A newer name wins.
   */
  resolveName(name: string): void {
    if (this.state.dnsName?.name === name && (this.state.dnsName.loading || this.state.dnsName.run)) return;
    this.set({ dnsName: { name, run: null, loading: true, error: null } });
    this.dnsTransport ??= dnsTransportFor(this.options.transport);
    const dns = this.dnsTransport;
    const shown = this.state.snapshot?.api?.value;
    // kube-dns, and a Service a Pod reaches by FQDN, may be in any namespace whatever `-n` shows.
    const api = shown ? apiOfCluster(shown) : null;
    const flag = this.options.clusterDomain;
    this.clusterDomain ??= readClusterDomain({ ...(flag !== undefined ? { flag } : {}), transport: this.options.transport });
    const transport = this.options.transport;
    this.clusterDomain
      .then(async (domain) => {
        const ns = this.options.apiNamespace;
        const pod = { namespace: ns ?? 'default', namespaceGiven: ns !== undefined, clusterDomain: domain, nodeResolv: await nodeResolvConf(transport) };
        return { domain, run: await digSearch({ name, dns, resolv: null, pod, api, query: { timeoutMs: 2000, tries: 1 } }) };
      })
      .then(({ domain, run }) => {
        if (this.state.dnsName?.name === name) this.set({ dnsName: { name, run, loading: false, error: null, domain } });
      })
      .catch((e: Error) => {
        if (this.state.dnsName?.name === name) this.set({ dnsName: { name, run: null, loading: false, error: e.message } });
      });
  }

  /** Stops refreshing and closes the transport (and the API feed and Cilium agent transport, if any). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
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
