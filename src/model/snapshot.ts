/**
 * NodeSnapshot: everything nodescope knows about one node at one moment, parsed.
 * It is the only thing analyses and panes read (DESIGN.md: parsers → NodeSnapshot
 * → analyses → panes). Each part keeps the parser's diagnostics beside its value,
 * and the probe that produced it, so a pane can say "failed: …" or show the
 * offending line instead of crashing.
 */
import type { ChainSummary } from './chain-summary.js';
import type { ApiObjects } from './k8s.js';
import type { CiliumStatus, LbTable } from './cilium.js';
import type { ConntrackTable } from './conntrack.js';
import type { Diagnostic } from './diagnostics.js';
import type { NetInterface, Route } from './iproute.js';
import type { IptablesRuleset } from './iptables.js';
import type { NftRuleset } from './nftables.js';
import type { IpsetSet, IpvsListing } from './ipvs.js';
import type { XtRecentCapture } from './xt-recent.js';

/** How a probe ended (same words as the probe runner). */
export type ProbeOutcome = 'ok' | 'failed' | 'missing' | 'timeout';

/**
 * One probe as the snapshot remembers it: what ran, how it ended, how long it took
 * (`durationMs`, milliseconds), when it started (ISO-8601 UTC), and the last 2,000
 * characters of its stderr.
 */
export interface ProbeSummary {
  readonly id: string;
  readonly argv: readonly string[];
  readonly status: ProbeOutcome;
  readonly exitCode: number | null;
  readonly startedAt: string;
  readonly durationMs: number;
  /** Node CPU time of the probe (user + system, ms), when measured (src/sources/child-cpu.ts); absent when unknown. */
  readonly cpuMs?: number;
  readonly stderrTail: string;
  /** The catalog marks the probe optional: absent on many nodes, not an error when missing. */
  readonly optional: boolean;
  /** A replay's bundle has no run of this probe (status `missing`): nothing is known about the node. */
  readonly notCaptured?: boolean;
}

/**
 * A parsed part of the snapshot. `value` is null when the probe did not produce
 * output to parse (missing, failed with empty output); `error` then says why.
 */
export interface Parsed<T> {
  readonly value: T | null;
  readonly diagnostics: readonly Diagnostic[];
  readonly probe: ProbeSummary | null;
  readonly error: string | null;
}

/** Where the snapshot's data came from. `live`: re-readable now (not a replay). */
export interface SnapshotSource {
  readonly kind: 'local' | 'netns' | 'ssh' | 'kubectl-debug' | 'replay';
  readonly label: string;
  readonly live: boolean;
}

/**
 * A part of {@link NodeSnapshot} that a staged load parses after the first frame
 * (the field of the same name). The first snapshot carries the node's identity,
 * addresses, routes and API objects; these follow, in this order of need.
 */
export type SnapshotPart = 'iptables' | 'ip6tables' | 'iptablesLegacy' | 'nft' | 'lb' | 'ciliumStatus' | 'ipvs' | 'ipset' | 'xtRecent' | 'conntrack' | 'ciliumConntrack';

/** Every {@link SnapshotPart}, in the order a staged load parses them. */
export const SNAPSHOT_PARTS: readonly SnapshotPart[] = ['iptables', 'ip6tables', 'iptablesLegacy', 'nft', 'lb', 'ciliumStatus', 'ipvs', 'ipset', 'xtRecent', 'conntrack', 'ciliumConntrack'];

/**
 * True when `part` of the snapshot is still being parsed (staged load): its field is
 * null for now and must be shown as "loading", never as absent or empty.
 */
export function isPending(snapshot: NodeSnapshot | null | undefined, part: SnapshotPart): boolean {
  return snapshot?.pending?.includes(part) ?? false;
}

/** Identity and provenance of a snapshot. `capturedAt`: ISO-8601 UTC. */
export interface SnapshotMeta {
  readonly node: string;
  readonly kernel: string | null;
  readonly source: SnapshotSource;
  readonly capturedAt: string;
  readonly toolVersions: Readonly<Record<string, string>>;
  /**
   * A replayed bundle's provenance note (manifest.json `note`): how the data was made. A bundle
   * captured from a replay says it is a copy (`copy of the capture of NODE taken TIME …`,
   * src/collect/capture.ts) and keeps the original's note. Absent for live sources.
   */
  readonly note?: string;
}

/**
 * The whole parsed state of a node. Every dataplane part is optional: a node in
 * nftables mode has no useful `iptables`, a Cilium node may have neither.
 * Counters inside rulesets are packets and bytes (bigint, exact).
 */
export interface NodeSnapshot {
  readonly meta: SnapshotMeta;
  readonly probes: readonly ProbeSummary[];
  /** Interfaces and addresses (`ip -j addr`). */
  readonly addrs: Parsed<NetInterface[]> | null;
  /** Routes of every table (`ip -j route show table all`). */
  readonly routes: Parsed<Route[]> | null;
  readonly iptables: Parsed<IptablesRuleset> | null;
  readonly ip6tables: Parsed<IptablesRuleset> | null;
  readonly iptablesLegacy: Parsed<IptablesRuleset> | null;
  /** The nftables ruleset (`nft -j list ruleset`, else the `nft list ruleset` text). */
  readonly nft: Parsed<NftRuleset> | null;
  readonly conntrack: Parsed<ConntrackTable> | null;
  /**
   * Cilium's own conntrack (`cilium-dbg bpf ct list global`: the `cilium_ct{4,6}_global` and
   * `cilium_ct_any{4,6}_global` maps), service entries joined to their backend address from
   * `lb` (src/parsers/cilium-ct.ts says what it can and cannot show). Null when not read.
   */
  readonly ciliumConntrack?: Parsed<ConntrackTable> | null;
  /** nf_conntrack_max and nf_conntrack_count (entries), when read. */
  readonly conntrackMax: number | null;
  readonly conntrackCount: number | null;
  /** IPVS virtual servers: the `ipvsadm -Ln --stats --exact` listing when read, else `ipvsadm -Ln`. */
  readonly ipvs: Parsed<IpvsListing> | null;
  /**
   * The `ipvsadm -Ln` listing (schedulers, flags, persistence, forwarding, weights) when
   * `ipvs` holds the counters listing and this one was read too; absent otherwise.
   */
  readonly ipvsList?: Parsed<IpvsListing> | null;
  readonly ipset: Parsed<IpsetSet[]> | null;
  /** The `-m recent` lists (`/proc/net/xt_recent/*`, with jiffies and uptime for their ages); null/absent when not read. */
  readonly xtRecent?: Parsed<XtRecentCapture> | null;
  readonly api: Parsed<ApiObjects> | null;
  /**
   * Cilium's load-balancing table: decoded from the pinned BPF maps (bpftool) when
   * they were read, else as cilium-agent prints it (`cilium-dbg bpf lb list`).
   * `lbMapsRead` says which BPF maps answered (map names), for the mode evidence.
   */
  readonly lb: Parsed<LbTable> | null;
  readonly lbMapsRead: readonly string[];
  readonly ciliumStatus: Parsed<CiliumStatus> | null;
  /**
   * Parts not parsed yet (staged load, src/collect/session.ts): each listed field is null until a
   * later snapshot of the same session carries it. Absent or empty: the snapshot is complete
   * (`show`, `capture` and every refresh build complete snapshots).
   */
  readonly pending?: readonly SnapshotPart[];
  /**
   * Heavy probes the probe plan left out and why (src/collect/probe-plan.ts: e.g. the whole
   * nftables ruleset of a node whose nftables holds only iptables-nft tables); absent when none.
   */
  readonly skipped?: readonly { readonly id: string; readonly reason: string; readonly silent?: boolean }[];
  /**
   * Chain names and rule counts of the iptables rulesets that were not parsed (`show services`
   * reads no rule): mode detection's evidence then (src/analysis/proxy-mode.ts); absent otherwise.
   */
  readonly chainSummaries?: { readonly iptables?: ChainSummary; readonly iptablesLegacy?: ChainSummary };
  /** nftables table names as `family name` from the `nft-tables` probe (`nft list flowtables`; the cheap mode evidence), when read. */
  readonly nftTableNames?: readonly string[];
}
