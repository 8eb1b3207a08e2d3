/**
 * The IPVS pane's rows: each virtual server (kube-proxy IPVS mode programs one per Service
 * address and port) with its scheduler, scheduler flags, persistence and one-packet flag,
 * and each real server with its forwarding method, weight and counters. The counters come
 * from `ipvsadm -Ln --stats --exact` (connections, packets, bytes since the service was
 * made) and `ipvsadm -Ln` (ActiveConn / InActConn now); the two listings are joined on the
 * virtual server's key and the real server's address. Pure.
 *
 * A table that was not read is `unknown`, with the probes that would read it and why they
 * did not, never an empty table: "0 virtual servers" is only said when ipvsadm answered.
 */
import type { Diagnostic } from '../model/diagnostics.js';
import {
  formatIpvsAddress,
  formatIpvsServiceKey,
  IPVS_SUFFIX_MULTIPLIER,
  type IpvsCount,
  type IpvsForwardMethod,
  type IpvsListing,
  type IpvsPersistence,
  type IpvsStats,
  type IpvsVirtualServer,
} from '../model/ipvs.js';
import { isPending, type NodeSnapshot, type Parsed, type ProbeSummary } from '../model/snapshot.js';
import { rowMatcher } from '../text/row-filter.js';

/** One real server row. Null fields: the listing that has them was not read. */
export interface IpvsRealServerRow {
  /** `ip:port` (IPv6 in brackets), as ipvsadm prints it. */
  readonly address: string;
  readonly forward: IpvsForwardMethod | null;
  readonly weight: number | null;
  /** Connections now: ActiveConn (TCP ESTABLISHED) and InActConn (any other state). */
  readonly activeConn: number | null;
  readonly inActConn: number | null;
  /** Totals since the virtual service was made (`--stats`). */
  readonly stats: IpvsStats | null;
}

/** One virtual server row. */
export interface IpvsVirtualServerRow {
  /** `TCP  10.96.0.10:53`, `FWM  5`: ipvsadm's first column. */
  readonly service: string;
  readonly scheduler: string | null;
  /** Scheduler flags (`sh-port`) and `ops` (one-packet scheduling). */
  readonly flags: readonly string[];
  readonly persistence: IpvsPersistence | null;
  readonly stats: IpvsStats | null;
  readonly realServers: readonly IpvsRealServerRow[];
}

/** What the IPVS pane shows. */
export type IpvsView =
  | { readonly status: 'pending' }
  | {
      readonly status: 'unknown';
      /** The probes that would read the table (argv as the catalog runs them). */
      readonly probes: readonly string[];
      /** Why they did not: each probe's failure, or that none ran on this source. */
      readonly reason: string;
    }
  | {
      readonly status: 'ready';
      /** `ipvsadm -Ln`, `ipvsadm -Ln --stats --exact`: the listings the rows come from. */
      readonly sources: readonly string[];
      /** `1.2.1 (size=4096)`: IPVS version and connection hash table size; null when not printed. */
      readonly version: string | null;
      readonly virtualServers: readonly IpvsVirtualServerRow[];
      readonly diagnostics: readonly Diagnostic[];
    };

/** The catalog's IPVS probes (commands/probes.yaml), as the unknown table names them. */
export const IPVS_PROBES: readonly string[] = ['ipvsadm -Ln', 'ipvsadm -Ln --stats --exact'];

function failure(p: ProbeSummary): string {
  const why = p.status === 'missing' ? `${p.argv[0]} not found` : p.status === 'timeout' ? `timed out after ${p.durationMs} ms` : `exit code ${p.exitCode ?? '?'}`;
  const stderr = p.stderrTail.trim().split('\n')[0] ?? '';
  return `${p.argv.join(' ')}: ${why}${stderr ? ` (${stderr})` : ''}`;
}

/** Why no IPVS table was read: each IPVS probe's failure, else that none ran. */
function unknownReason(snapshot: NodeSnapshot, part: Parsed<IpvsListing> | null): string {
  const tried = ['ipvsadm', 'ipvsadm-stats'].map((id) => snapshot.probes.find((p) => p.id === id)).filter((p) => p !== undefined);
  if (tried.length > 0) return tried.map(failure).join('; ');
  if (part?.error) return part.error;
  return 'no IPVS probe ran on this source';
}

/** The row matches `filter` (src/text/row-filter.ts) on its Service address or a real server's. */
function matches(v: IpvsVirtualServerRow, filter: string): boolean {
  return filter === '' || rowMatcher(filter).test(`${v.service} ${v.realServers.map((r) => r.address).join(' ')}`);
}

const rsKey = (vs: string, rs: string) => `${vs}\u0000${rs}`;

function countsOf(listing: IpvsListing | null): { vs: Map<string, IpvsVirtualServer>; rs: Map<string, IpvsVirtualServer['realServers'][number]> } {
  const vs = new Map<string, IpvsVirtualServer>();
  const rs = new Map<string, IpvsVirtualServer['realServers'][number]>();
  for (const v of listing?.virtualServers ?? []) {
    const key = formatIpvsServiceKey(v.key);
    vs.set(key, v);
    for (const r of v.realServers) rs.set(rsKey(key, formatIpvsAddress(r.address)), r);
  }
  return { vs, rs };
}

/** The rows of one virtual server, from the scheduling listing (`list`) joined with the counters one (`stats`). */
function virtualServerRow(v: IpvsVirtualServer, stats: ReturnType<typeof countsOf>): IpvsVirtualServerRow {
  const service = formatIpvsServiceKey(v.key);
  const sched = v.values.kind === 'scheduled' ? v.values : null;
  const own = v.values.kind === 'stats' ? v.values.stats : null;
  const statsOf = (x: IpvsVirtualServer | IpvsVirtualServer['realServers'][number] | undefined): IpvsStats | null => (x?.values.kind === 'stats' ? x.values.stats : null);
  return {
    service,
    scheduler: sched?.scheduler ?? null,
    flags: sched ? [...sched.schedFlags, ...(sched.onePacket ? ['ops'] : [])] : [],
    persistence: sched?.persistence ?? null,
    stats: own ?? statsOf(stats.vs.get(service)),
    realServers: v.realServers.map((r) => {
      const address = formatIpvsAddress(r.address);
      const list = r.values.kind === 'list' ? r.values : null;
      return {
        address,
        forward: list?.forward ?? null,
        weight: list?.weight ?? (r.values.kind === 'persistent-conn' ? r.values.weight : null),
        activeConn: list?.activeConn ?? null,
        inActConn: list?.inActConn ?? null,
        stats: r.values.kind === 'stats' ? r.values.stats : statsOf(stats.rs.get(rsKey(service, address))),
      };
    }),
  };
}

/**
 * The IPVS view of `snapshot`: `pending` while its part loads, `unknown` (with the probes
 * and why) when no listing was read, else its virtual servers in ipvsadm's order — those
 * whose key or a real server's address contains `filter` (case-insensitive) when given.
 */
export function buildIpvsView(snapshot: NodeSnapshot | null, filter = ''): IpvsView {
  if (!snapshot || isPending(snapshot, 'ipvs')) return { status: 'pending' };
  const part = snapshot.ipvs;
  const main = part?.value ?? null;
  if (!main) return { status: 'unknown', probes: IPVS_PROBES, reason: unknownReason(snapshot, part) };
  // The scheduling listing drives the rows (it has every virtual server with its scheduler); the counters join in.
  const list = main.kind === 'stats' ? (snapshot.ipvsList?.value ?? null) : main;
  const counters = main.kind === 'stats' ? main : null;
  const rowsFrom = list ?? main;
  const joined = countsOf(counters);
  const sources = [list ? 'ipvsadm -Ln' : null, counters ? 'ipvsadm -Ln --stats --exact' : null].filter((s): s is string => s !== null);
  const version = rowsFrom.version === null ? null : `${rowsFrom.version}${rowsFrom.connTableSize === null ? '' : ` (size=${rowsFrom.connTableSize})`}`;
  return {
    status: 'ready',
    sources,
    version,
    virtualServers: rowsFrom.virtualServers.map((v) => virtualServerRow(v, joined)).filter((v) => matches(v, filter)),
    diagnostics: [...(part?.diagnostics ?? []), ...(snapshot.ipvsList?.diagnostics ?? [])],
  };
}

/** A counter as text: exact digits, or the printed value with its K/M/G/T suffix when ipvsadm rounded it. */
export function ipvsCountText(c: IpvsCount): string {
  return c.suffix === null ? String(c.value) : `${c.value / IPVS_SUFFIX_MULTIPLIER[c.suffix]}${c.suffix}`;
}
