/**
 * Live kernel trace (`nodescope trace … --allow-trace`): the one place nodescope writes
 * to a node. Through the declared probes `trace-*` of `commands/probes.yaml` it adds a
 * temporary table `inet nodescope-trace-<run id>` (one per run, src/run-record.ts, so two
 * runs on one node never touch each other's) whose chains (prerouting and output,
 * priority raw − 1 = −301, before every other chain) set `meta nftrace set 1` for exactly
 * one 5-tuple, runs `nft -a monitor trace` for a bounded time while the user's traffic
 * passes, and on every exit path stops the monitor (its process group) and deletes the
 * table (both undos registered with `onCleanup` before the table is added). A table left
 * by a run that was killed (SIGKILL) is reported at the next trace on that node, and
 * removed when this machine's record says its run is gone. Then the kernel's walk of the first traced
 * packet is compared with nodescope's walk of the same packet (same source port, same
 * random branch the kernel took), as the lab oracle `test/lab/trace-oracle-kit.ts` does.
 *
 * Kernel event semantics: `src/trace/kernel-trace.ts`; trace format: `src/parsers/nft-trace.ts`.
 */
import { isIP } from 'node:net';
import { onCleanup } from '../cleanup.js';
import { currentRun, runState, type RunState } from '../run-record.js';
import { BugError, said, UserError } from '../errors.js';
import type { Diagnostic } from '../model/diagnostics.js';
import type { NftRuleset } from '../model/nftables.js';
import { parseNftTrace, splitTracePasses, type NftTraceEvent, type NftTracePass } from '../parsers/nft-trace.js';
import { catalog, probe, type Catalog } from '../sources/catalog.js';
import { runProbe, type ProbeRun } from '../sources/probe-runner.js';
import type { Transport } from '../sources/transport.js';
import type { PacketSpec } from '../trace/packet.js';
import { joinHostPort } from '../net/address.js';

/** Name prefix of the temporary tables (family `inet`): `nodescope-trace-<run id>`. */
export const LIVE_TRACE_TABLE = 'nodescope-trace';
/** A trace table's name: older nodescopes used the bare prefix, this one adds its run id. */
const TRACE_TABLE_NAME = /^nodescope-trace(?:-([0-9a-f]{12}))?$/;

/** The trace table of run `runId`. */
export function traceTableName(runId: string): string {
  return `${LIVE_TRACE_TABLE}-${runId}`;
}

/** `family table` of a run's table, as the kernel prints it (its own events are left out). */
export function liveTraceSkip(table: string): readonly string[] {
  return [`inet ${table}`];
}

/** Chains where a traced packet's walk starts (`family table chain`). */
export function liveTraceStartChains(table: string): readonly string[] {
  return [`inet ${table} pre`, `inet ${table} out`];
}

/** Every nodescope trace table a trace's events pass through (another run's table on the same node shows in them too). */
export function traceTablesIn(events: readonly NftTraceEvent[]): string[] {
  return [...new Set(events.filter((e) => e.family === 'inet' && e.table !== null && TRACE_TABLE_NAME.test(e.table)).map((e) => `inet ${e.table!}`))];
}

/**
 * `nft` without nodescope's own trace tables (this run's, or another run's on the same
 * node, read into the snapshot while it traced): the packet's walk is the node's, not
 * the tracer's. The same object when there are none.
 */
export function withoutTraceTables(nft: NftRuleset): NftRuleset {
  const tables = nft.tables.filter((t) => !(t.family === 'inet' && TRACE_TABLE_NAME.test(t.name)));
  return tables.length === nft.tables.length ? nft : { ...nft, tables };
}

/** A trace table found on the node that is not this run's, and what was done with it. */
export interface StaleTraceTable {
  readonly table: string;
  /** Its run id; null for an older nodescope's bare `nodescope-trace`. */
  readonly run: string | null;
  readonly state: RunState;
  readonly removed: boolean;
  /** One line for stderr: found, removed or left alone, and why. */
  readonly message: string;
}

/** Names of nodescope's trace tables in the `nft-tables` probe's output (`table inet X {` or `table inet X`; other lines ignored). */
export function traceTablesListed(text: string): string[] {
  const names: string[] = [];
  for (const line of text.split('\n')) {
    const m = /^table inet ([^\s{]+)(?: \{)?$/.exec(line.trim());
    if (m && TRACE_TABLE_NAME.test(m[1]!)) names.push(m[1]!);
  }
  return names;
}

/** Default bound of the monitor, seconds. */
export const DEFAULT_TRACE_SECONDS = 10;
/** Largest bound accepted, seconds (the catalog's pattern allows two digits). */
export const MAX_TRACE_SECONDS = 60;

/**
 * The 5-tuple the trace table marks: `l3` is the nft address expression (`ip`/`ip6`),
 * `sport` null traces every source port (1-65535).
 */
export interface LiveTraceMatch {
  readonly l3: 'ip' | 'ip6';
  readonly src: string;
  readonly dst: string;
  readonly proto: 'tcp' | 'udp' | 'sctp';
  readonly sport: number | null;
  readonly dport: number;
}

/**
 * The match for a parsed packet. Throws {@link UserError} when the packet has no source
 * address (`--from` is required for a live trace) or no ports (icmp).
 * `sportGiven`: whether the user wrote a source port (parsePacketArgs fills a default).
 */
export function liveTraceMatch(spec: PacketSpec, sportGiven: boolean): LiveTraceMatch {
  if (spec.src === null) throw new UserError(said('ue.live.needsFrom'), said('ue.live.needsFromHint'));
  if (spec.proto !== 'tcp' && spec.proto !== 'udp' && spec.proto !== 'sctp') {
    throw new UserError(said('ue.live.proto', { proto: spec.proto }), said('ue.live.protoHint'));
  }
  if (spec.dport === null) throw new BugError('a tcp/udp/sctp packet without a destination port');
  return { l3: spec.family === 'ipv6' ? 'ip6' : 'ip', src: spec.src, dst: spec.dst, proto: spec.proto, sport: sportGiven ? spec.sport : null, dport: spec.dport };
}

/** The `--trace-seconds` value as seconds; throws {@link UserError} outside 1–60. */
export function traceSeconds(text: string | undefined): number {
  if (text === undefined) return DEFAULT_TRACE_SECONDS;
  if (!/^[0-9]{1,2}$/.test(text.trim()) || Number(text) < 1 || Number(text) > MAX_TRACE_SECONDS) {
    throw new UserError(said('ue.live.seconds', { text: String(text), max: MAX_TRACE_SECONDS }), said('ue.live.secondsHint'));
  }
  return Number(text);
}

/** The probe parameters of the `trace-rule-add` probe for one chain. */
export function traceRuleParams(m: LiveTraceMatch, chain: 'pre' | 'out'): Record<string, string> {
  for (const a of [m.src, m.dst]) if (isIP(a) === 0) throw new UserError(said('ue.notIp', { text: JSON.stringify(a) }));
  return {
    traceChain: chain,
    traceL3: m.l3,
    traceSrc: m.src,
    traceDst: m.dst,
    traceProto: m.proto,
    traceSport: m.sport === null ? '1-65535' : String(m.sport),
    traceDport: String(m.dport),
  };
}

/** Options of {@link captureKernelTrace}. */
export interface KernelTraceOptions {
  readonly transport: Transport;
  readonly match: LiveTraceMatch;
  /** Must be true (`--allow-trace`); otherwise a {@link UserError} and nothing runs. */
  readonly allowTrace: boolean;
  /** Bound of the monitor, seconds (default {@link DEFAULT_TRACE_SECONDS}). */
  readonly seconds?: number;
  /** Milliseconds given to the monitor to subscribe before `onListening` (default 400). */
  readonly settleMs?: number;
  /** Called once the monitor listens (print "send the traffic now", or send it in a test). */
  readonly onListening?: () => void | Promise<void>;
  /** Lines about trace tables of other runs found on the node (removed or left alone). */
  readonly onNotice?: (message: string) => void;
  readonly catalog?: Catalog;
}

/** What the kernel printed during the window: the monitor's run, its events and passes. */
export interface KernelTraceCapture {
  readonly monitor: ProbeRun;
  readonly events: readonly NftTraceEvent[];
  readonly diagnostics: readonly Diagnostic[];
  /** One per traced packet, starting in a chain of the trace table. */
  readonly passes: readonly NftTracePass[];
  /** Whether the table was deleted again (false: the delete failed; it stays registered as a cleanup). */
  readonly removed: boolean;
  /** This run's table (`nodescope-trace-<run id>`). */
  readonly table: string;
  /** Trace tables of other runs found on the node before this one was added. */
  readonly stale: readonly StaleTraceTable[];
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Adds the trace table, runs the monitor for the bound, deletes the table and returns
 * what the kernel printed. Throws {@link UserError} without `allowTrace`, on a replay
 * transport, or when nft refuses the table (the error names nft's message); the table is
 * deleted on every path, including an error thrown by `onListening`, Ctrl-C and SIGTERM
 * (through `onCleanup`).
 */
export async function captureKernelTrace(options: KernelTraceOptions): Promise<KernelTraceCapture> {
  if (!options.allowTrace) throw new UserError(said('ue.live.writes'), said('ue.live.pass'));
  const { transport } = options;
  if (transport.kind === 'replay') throw new UserError(said('ue.live.needsLive'), said('ue.live.needsLiveHint'));
  const cat = options.catalog ?? catalog();
  const seconds = options.seconds ?? DEFAULT_TRACE_SECONDS;
  const write = (id: string, params: Record<string, string> = {}, timeoutMs?: number) =>
    runProbe(transport, probe(id, cat), params, cat, { allowWrites: true, ...(timeoutMs !== undefined ? { timeoutMs } : {}) });
  const must = async (id: string, params: Record<string, string> = {}) => {
    const r = await write(id, params);
    if (r.status !== 'ok') throw new UserError(said('ue.live.failed', { what: r.argv.join(' '), where: transport.label, detail: r.result.stderr.trim() || r.status }), said('ue.live.failedHint'));
    return r;
  };
  const table = traceTableName((await currentRun()).id);
  const where = transport.label;
  let deleted = false;
  const remove = async () => {
    if (deleted) return;
    const r = await write('trace-table-delete', { traceTable: table });
    // "No such file or directory": never added, or gone already.
    if (r.status === 'ok' || /No such file or directory/.test(r.result.stderr)) deleted = true;
    else throw new Error(r.result.stderr.trim() || r.status);
  };
  const stale = await sweepTraceTables(transport, table, write, options.onNotice ?? (() => undefined));
  const unregister = onCleanup(`delete nft table inet ${table} on ${where}`, remove, {
    leftBehind: `nft table inet ${table} on ${where} (marks one 5-tuple for tracing): the next trace --allow-trace from this machine removes it, or: nft delete table inet ${table}`,
  });
  const stopMonitor = new AbortController();
  let monitor: Promise<ProbeRun> | null = null;
  const unregisterMonitor = onCleanup(`stop nft monitor trace on ${where}`, async () => {
    stopMonitor.abort();
    await monitor?.catch(() => undefined);
  }, { leftBehind: `nft monitor trace on ${where}: ends by itself within ${seconds} s (timeout)` });
  try {
    await must('trace-table-add', { traceTable: table });
    await must('trace-chain-add', { traceTable: table, traceChain: 'pre', traceHook: 'prerouting' });
    await must('trace-chain-add', { traceTable: table, traceChain: 'out', traceHook: 'output' });
    await must('trace-rule-add', { traceTable: table, ...traceRuleParams(options.match, 'pre') });
    await must('trace-rule-add', { traceTable: table, ...traceRuleParams(options.match, 'out') });
    monitor = runProbe(transport, probe('trace-monitor', cat), { traceSeconds: String(seconds) }, cat, { allowWrites: true, timeoutMs: seconds * 1000 + 3000, signal: stopMonitor.signal });
    monitor.catch(() => undefined); // awaited below; an early throw must not leave it unhandled
    await sleep(options.settleMs ?? 400);
    await options.onListening?.();
    const run = await monitor;
    await remove().catch(() => undefined);
    const parsed = parseNftTrace(run.result.stdout, `${where}: nft monitor trace`);
    // `timeout` ends nft with SIGTERM (exit 124); the runner's own kill gives `timeout`.
    if (run.status !== 'ok' && run.result.exitCode !== 124 && run.status !== 'timeout') {
      throw new UserError(said('ue.live.failed', { what: 'nft monitor trace', where, detail: run.result.stderr.trim() || run.status }), said('ue.live.failedHint'));
    }
    const starts = liveTraceStartChains(table);
    const passes = splitTracePasses(parsed.value, starts).filter((p) => isTraceStart(p.events[0], starts));
    return { monitor: run, events: parsed.value, diagnostics: parsed.diagnostics, passes, removed: deleted, table, stale };
  } finally {
    // The monitor first (an error thrown by onListening left it running), then the table.
    stopMonitor.abort();
    await monitor?.catch(() => undefined);
    unregisterMonitor();
    await remove().catch(() => undefined);
    if (deleted) unregister();
  }
}

/**
 * Lists the node's tables and deals with nodescope trace tables of other runs: removes
 * one whose run this machine records as gone (killed), leaves the others (a live run
 * here; a run not recorded here — another machine's, possibly tracing right now; an older
 * nodescope's bare `nodescope-trace`) and says so through `notice`.
 */
async function sweepTraceTables(
  transport: Transport,
  mine: string,
  write: (id: string, params?: Record<string, string>) => Promise<ProbeRun>,
  notice: (message: string) => void,
): Promise<StaleTraceTable[]> {
  const listed = await write('nft-tables'); // the catalog's one table listing (detection reads it too)
  if (listed.status !== 'ok') return [];
  const out: StaleTraceTable[] = [];
  for (const table of traceTablesListed(listed.result.stdout)) {
    if (table === mine) continue;
    const run = TRACE_TABLE_NAME.exec(table)![1] ?? null;
    const state: RunState = run === null ? 'unknown' : await runState(run);
    const where = `inet ${table} on ${transport.label}`;
    let removed = false;
    let message: string;
    if (state === 'gone') {
      const r = await write('trace-table-delete', { traceTable: table });
      removed = r.status === 'ok' || /No such file or directory/.test(r.result.stderr);
      message = removed
        ? `removed the trace table ${where} left by run ${run} (killed: its record on this machine is not held)`
        : `could not remove the stale trace table ${where} of run ${run}: ${r.result.stderr.trim() || r.status}`;
    } else if (state === 'alive') {
      message = `another trace runs on this node: table ${where} of run ${run} (alive on this machine), left alone`;
    } else {
      message = `left the trace table ${where} alone: ${run === null ? 'made by an older nodescope' : `its run ${run} is not recorded on this machine (another machine's trace, or killed there)`}; if no trace runs now: nft delete table inet ${table}`;
    }
    notice(message);
    out.push({ table, run, state, removed, message });
  }
  return out;
}

function isTraceStart(e: NftTraceEvent | undefined, starts: readonly string[]): boolean {
  return e !== undefined && e.kind === 'packet' && starts.includes(`${e.family} ${e.table ?? ''} ${e.chain ?? ''}`);
}

/** True when a pass is the first packet of a flow (TCP SYN without ACK; any UDP/SCTP packet). */
export function startsFlow(pass: NftTracePass): boolean {
  const flags = pass.events[0]?.fields['tcp flags'];
  return flags === undefined || flags === 'syn';
}

/**
 * What the kernel's pass tells about the packet: source port and chain at the trace
 * table (`pre` = arrived, `out` = sent by the node), and the endpoint it was DNATed to
 * (`IP:PORT` from a `dnat to` rule, else from the first later `packet:` line whose
 * destination changed; null when it was not rewritten).
 */
export interface PassFacts {
  readonly sport: number | null;
  readonly chain: 'pre' | 'out';
  readonly endpoint: string | null;
  readonly tcpFlags: string | null;
}

/** The {@link PassFacts} of one pass. */
export function passFacts(pass: NftTracePass): PassFacts {
  const start = pass.events[0]!;
  const f = start.fields;
  const sportText = f['tcp sport'] ?? f['udp sport'] ?? f['sctp sport'];
  let endpoint: string | null = null;
  for (const e of pass.events) {
    const m = e.kind === 'rule' && e.ruleText ? /dnat (?:ip |ip6 )?to (\S+)/.exec(e.ruleText) : null;
    if (m) endpoint = m[1]!;
  }
  if (endpoint === null) {
    const dst = f['ip daddr'] ?? f['ip6 daddr'];
    const dport = f['tcp dport'] ?? f['udp dport'] ?? f['sctp dport'];
    const moved = pass.events.find((e) => e.kind === 'packet' && (e.fields['ip daddr'] ?? e.fields['ip6 daddr']) !== undefined && (e.fields['ip daddr'] ?? e.fields['ip6 daddr']) !== dst);
    if (moved) {
      const d = moved.fields['ip daddr'] ?? moved.fields['ip6 daddr']!;
      const p = moved.fields['tcp dport'] ?? moved.fields['udp dport'] ?? moved.fields['sctp dport'] ?? dport;
      endpoint = p ? joinHostPort(d, p) : d;
    }
  }
  return {
    sport: sportText !== undefined && /^\d+$/.test(sportText) ? Number(sportText) : null,
    chain: start.chain === 'out' ? 'out' : 'pre',
    endpoint,
    tcpFlags: f['tcp flags'] ?? null,
  };
}

/** The pass to compare: the first that starts a flow, else the first; null when none was traced. */
export function chosenPass(passes: readonly NftTracePass[]): NftTracePass | null {
  return passes.find(startsFlow) ?? passes[0] ?? null;
}
