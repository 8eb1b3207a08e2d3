/**
 * The numbers the projector dashboard draws, as pure functions of snapshots:
 *
 * - per-endpoint traffic of one Service: in iptables mode the packet counter of each
 *   KUBE-SEP chain's DNAT rule (it counts the first packet of every connection that chose
 *   the endpoint); in nftables mode, whose kube-proxy rules carry no counters, the
 *   conntrack entries each endpoint answered — a connection is counted when its entry
 *   first appears, so the rate is new connections per second;
 * - conntrack table use (`nf_conntrack_count` against `nf_conntrack_max`, entries);
 * - Cilium LB map fill (entries of `cilium_lb4_services_v2` … against the map size,
 *   65,536 by default: Cilium's `--bpf-lb-map-max`).
 *
 * {@link DashHistory} turns successive samples into rates (per second) and keeps the last
 * {@link HISTORY_POINTS} of them. A replay has one snapshot: {@link DashHistory.replay} says
 * so, and the dashboard shows totals instead of rates.
 */
import { conntrackNatView } from '../analysis/conntrack-nat.js';
import { nftChainRows } from '../analysis/nft-view.js';
import { detectProxyMode, type ProxyMode } from '../analysis/proxy-mode.js';
import { chainRows } from '../analysis/rules-view.js';
import { serviceDataplane, type NftServiceChainRef, type ServiceChainRef } from '../analysis/service-dataplane.js';
import { CILIUM_LB_MAPS } from '../model/cilium.js';
import type { IptablesRuleset } from '../model/iptables.js';
import type { NftRuleset } from '../model/nftables.js';
import { refFromKey } from '../model/service-ref.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import { percentText as formatPercent } from '../text/cells.js';

/** Cilium's default LB map size (`--bpf-lb-map-max`, entries). */
export const DEFAULT_LB_MAP_MAX = 65_536;

/** How many samples a chart keeps. */
export const HISTORY_POINTS = 60;

/**
 * What the per-endpoint numbers count: `dnat-packets` (iptables KUBE-SEP DNAT counters,
 * packets), `conntrack-flows` (conntrack entries answered by the endpoint), `none` (the
 * mode has neither: Cilium, IPVS, no rules).
 */
export type CounterKind = 'dnat-packets' | 'conntrack-flows' | 'none';

/** One endpoint's counter in one sample: a running total, or the flow keys seen now. */
export interface EndpointSample {
  /** `ip:port` the Service's traffic is DNATed to. */
  readonly endpoint: string;
  /** dnat-packets: the counter (packets); conntrack-flows: entries in the table now. */
  readonly total: number;
  /** conntrack-flows: the entries' original tuples (`proto src:sport`), to count new ones. */
  readonly flows: readonly string[];
}

/** One LB map's fill: entries against the map's size. */
export interface MapFill {
  readonly map: string;
  readonly entries: number;
  readonly max: number;
}

/** One reading of the node for the dashboard. `at`: ms since epoch (the session's data time). */
export interface DashSample {
  readonly at: number;
  readonly mode: ProxyMode;
  readonly kind: CounterKind;
  /** The Service was found in the node's rewrite table (false: a message instead of charts). */
  readonly serviceFound: boolean;
  readonly endpoints: readonly EndpointSample[];
  readonly conntrackCount: number | null;
  readonly conntrackMax: number | null;
  readonly lbMaps: readonly MapFill[];
}

/** The modes whose Services are kube-proxy iptables chains. */
const IPTABLES_MODES: ReadonlySet<ProxyMode> = new Set(['iptables', 'iptables-legacy', 'iptables-mixed']);

function dnatTarget(target: string): string | null {
  return /(\d+\.\d+\.\d+\.\d+|\[[0-9a-f:]+\]):(\d+)/i.exec(target)?.[0] ?? null;
}

function iptablesEndpoints(ipt: IptablesRuleset, chains: readonly ServiceChainRef[]): EndpointSample[] | null {
  const refs = chains.filter((r) => r.chain.startsWith('KUBE-SVC-'));
  if (refs.length === 0) return null;
  const totals = new Map<string, number>();
  for (const ref of refs) {
    for (const row of chainRows(ipt, 'nat', ref.chain) ?? []) {
      if (!row.jumpTo?.startsWith('KUBE-SEP-')) continue;
      for (const sep of chainRows(ipt, 'nat', row.jumpTo) ?? []) {
        const to = /^DNAT\b/.test(sep.target) ? dnatTarget(sep.target) : null;
        if (to) totals.set(to, (totals.get(to) ?? 0) + Number(sep.packets ?? 0n));
      }
    }
  }
  return [...totals].map(([endpoint, total]) => ({ endpoint, total, flows: [] }));
}

function nftEndpoints(snapshot: NodeSnapshot, nft: NftRuleset, refs: readonly NftServiceChainRef[]): EndpointSample[] | null {
  if (refs.length === 0) return null;
  const wanted = new Map<string, string>(); // "PROTO ip:port" → endpoint
  for (const ref of refs) {
    const proto = /\/(tcp|udp|sctp)\//.exec(ref.chain)?.[1] ?? 'tcp';
    for (const row of nftChainRows(nft, ref.table, ref.chain) ?? []) {
      if (!row.jumpTo?.startsWith('endpoint-')) continue;
      for (const ep of nftChainRows(nft, ref.table, row.jumpTo) ?? []) {
        const to = /^dnat\b/.test(ep.target) ? dnatTarget(ep.target) : null;
        if (to) wanted.set(`${proto} ${to}`, to);
      }
    }
  }
  const flows = new Map<string, string[]>([...new Set(wanted.values())].map((e) => [e, []]));
  for (const entry of snapshot.conntrack?.value?.entries ?? []) {
    const view = conntrackNatView(entry);
    const answered = view.answeredBy.port === undefined ? view.answeredBy.ip : `${view.answeredBy.ip}:${view.answeredBy.port}`;
    const endpoint = wanted.get(`${entry.proto} ${answered}`);
    if (endpoint && view.dnat) flows.get(endpoint)!.push(`${entry.proto} ${entry.orig.src}:${entry.orig.sport ?? ''}>${entry.orig.dst}:${entry.orig.dport ?? ''}`);
  }
  return [...flows].map(([endpoint, f]) => ({ endpoint, total: f.length, flows: f }));
}

/** The LB maps of the snapshot with their fill, against `lbMapMax` entries each. */
export function lbMapFill(snapshot: NodeSnapshot, lbMapMax = DEFAULT_LB_MAP_MAX): MapFill[] {
  const lb = snapshot.lb?.value;
  if (!lb) return [];
  const v6 = (ip: string) => ip.includes(':');
  const count = (six: boolean) => lb.services.filter((s) => v6(s.frontend.ip) === six).reduce((n, s) => n + 1 + s.slots.length, 0);
  const out: MapFill[] = [{ map: CILIUM_LB_MAPS.services4, entries: count(false), max: lbMapMax }];
  const six = count(true);
  if (six > 0) out.push({ map: CILIUM_LB_MAPS.services6, entries: six, max: lbMapMax });
  return out;
}

/**
 * Reads one sample of Service `service` (`ns/name`) from a snapshot taken at `at` (ms).
 * Pure; a Service the rewrite table does not have gives `serviceFound: false`.
 */
export function dashSample(snapshot: NodeSnapshot, service: string, at: number, lbMapMax = DEFAULT_LB_MAP_MAX): DashSample {
  const mode = detectProxyMode(snapshot).mode;
  // kube-proxy's rules carry the counters only in the iptables and nftables modes.
  const where = IPTABLES_MODES.has(mode) || mode === 'nftables' ? serviceDataplane(snapshot, refFromKey(service), { mode, lbMaps: false }) : { kind: 'none' as const };
  const ipt = where.kind === 'iptables' ? iptablesEndpoints(where.ruleset, where.chains) : null;
  const nft = where.kind === 'nft' ? nftEndpoints(snapshot, where.ruleset, where.chains) : null;
  const kind: CounterKind = ipt ? 'dnat-packets' : nft ? 'conntrack-flows' : 'none';
  return {
    at,
    mode,
    kind,
    serviceFound: (ipt ?? nft) !== null,
    endpoints: [...(ipt ?? nft ?? [])].sort((a, b) => a.endpoint.localeCompare(b.endpoint, 'en', { numeric: true })),
    conntrackCount: snapshot.conntrackCount ?? snapshot.conntrack?.value?.entries.length ?? null,
    conntrackMax: snapshot.conntrackMax,
    lbMaps: lbMapFill(snapshot, lbMapMax),
  };
}

/**
 * `count` of `max` as the dashboard's gauges label it, rounded as the Conntrack pane does:
 * one decimal, `<0.1%` for a use above 0 that would round to 0.0 (16 of 262,144). Empty
 * without a max.
 */
export function percentText(count: number | null, max: number | null): string {
  if (count === null || !max) return '';
  return formatPercent(Math.min(100, (count / max) * 100));
}

/**
 * What to hand blessed-contrib's `gauge.setPercent` for `percent` (0–100): the gauge reads
 * any value below 1.001 as a fraction and multiplies it by 100 (`lib/widget/gauge.js`),
 * so a use under 1% is passed as its fraction.
 */
export function gaugeValue(percent: number): number {
  return percent < 1.001 ? percent / 100 : percent;
}

/** One endpoint's rate series (per second, oldest first) and its latest total. */
export interface EndpointSeries {
  readonly endpoint: string;
  readonly rates: readonly number[];
  readonly total: number;
}

/**
 * Samples over time → rates. Immutable: {@link DashHistory.add} returns a new history.
 * A counter that went backwards (rules reloaded, conntrack flushed) restarts from the new
 * value instead of giving a negative rate.
 */
export class DashHistory {
  private constructor(
    readonly samples: readonly DashSample[],
    private readonly series: ReadonlyMap<string, readonly number[]>,
  ) {}

  /** An empty history. */
  static empty(): DashHistory {
    return new DashHistory([], new Map());
  }

  /** The history with `sample` appended (at most {@link HISTORY_POINTS} kept). */
  add(sample: DashSample): DashHistory {
    const prev = this.samples[this.samples.length - 1];
    const series = new Map(this.series);
    if (prev && sample.at > prev.at) {
      const dt = (sample.at - prev.at) / 1000;
      for (const e of sample.endpoints) {
        const before = prev.endpoints.find((p) => p.endpoint === e.endpoint);
        let delta: number;
        if (sample.kind === 'conntrack-flows') {
          const seen = new Set(before?.flows ?? []);
          delta = e.flows.filter((f) => !seen.has(f)).length;
        } else {
          delta = before && e.total >= before.total ? e.total - before.total : 0;
        }
        series.set(e.endpoint, [...(series.get(e.endpoint) ?? []), delta / dt].slice(-HISTORY_POINTS));
      }
    }
    return new DashHistory([...this.samples, sample].slice(-HISTORY_POINTS), series);
  }

  /** The latest sample, or null before the first. */
  latest(): DashSample | null {
    return this.samples[this.samples.length - 1] ?? null;
  }

  /** Per-endpoint rate series of the latest sample's endpoints. */
  endpointSeries(): EndpointSeries[] {
    return (this.latest()?.endpoints ?? []).map((e) => ({ endpoint: e.endpoint, rates: this.series.get(e.endpoint) ?? [], total: e.total }));
  }

  /** True when rates exist (two samples at different times). */
  hasRates(): boolean {
    return [...this.series.values()].some((r) => r.length > 0);
  }
}
