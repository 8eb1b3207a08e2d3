/**
 * The kernel oracle for step mode: a temporary nft table that sets `meta nftrace` for
 * one 5-tuple (a chain at priority raw − 1 on prerouting and one on output), a running
 * `nft -a monitor trace` in the node namespace, a snapshot of the same node captured
 * through the real probe pipeline, and the comparison of the kernel's events with the
 * walk's. Everything it adds to the kernel is removed by {@link TraceSession.close}.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import dnsPacket from 'dns-packet';
import { buildSnapshot } from '../../src/collect/build-snapshot.js';
import type { NftRuleset } from '../../src/model/nftables.js';
import { parseNftJson } from '../../src/parsers/nft-json.js';
import { parseNftTrace, splitTracePasses, type NftTracePass } from '../../src/parsers/nft-trace.js';
import { LocalTransport } from '../../src/sources/local.js';
import { runProbes } from '../../src/sources/probe-runner.js';
import { walkPacket } from '../../src/trace/engine.js';
import { traceInputFromSnapshot, type TraceInput } from '../../src/trace/input.js';
import { diffKernelEvents, diffPacketsSeen, formatKernelEvent, kernelEventsOfTrace, kernelEventsOfWalk, packetsOfTrace } from '../../src/trace/kernel-trace.js';
import { parsePacketArgs, type TraceEntry } from '../../src/trace/packet.js';
import type { TraceResult } from '../../src/trace/types.js';
import { expect } from 'vitest';
import type { VerdictKind } from '../../src/trace/types.js';
import { nsExec, nsExecOk, sleep } from './exec.js';
import type { LabHandle, ProxyMode } from './lab.js';

/** Name of the temporary table that marks packets for tracing. */
export const TRACE_TABLE = 'nodescope_trace';
/** Chains of that table where a traced packet's walk starts (`family table chain`). */
export const TRACE_START_CHAINS = [`ip ${TRACE_TABLE} pre`, `ip ${TRACE_TABLE} out`];

/** The 5-tuple to trace (source port free: curl picks one). */
export interface TraceMatch {
  readonly src: string;
  readonly dst: string;
  readonly proto: 'tcp' | 'udp';
  readonly dport: number;
}

/** nft text of the trace table (priority raw − 1 = −301, before every other chain). */
export function traceTableText(m: TraceMatch): string {
  const sel = `ip saddr ${m.src} ip daddr ${m.dst} ${m.proto} dport ${m.dport} meta nftrace set 1`;
  return `table ip ${TRACE_TABLE} {\n\tchain pre {\n\t\ttype filter hook prerouting priority -301; policy accept;\n\t\t${sel}\n\t}\n\tchain out {\n\t\ttype filter hook output priority -301; policy accept;\n\t\t${sel}\n\t}\n}\n`;
}

/** A running trace: the table is loaded and `nft monitor trace` collects events. */
export class TraceSession {
  private out = '';
  private closed = false;

  private constructor(
    private readonly ns: string,
    private readonly child: ChildProcess,
  ) {
    child.stdout?.on('data', (d: Buffer) => {
      this.out += d.toString('utf8');
    });
  }

  /** Loads the trace table into `ns` and starts the monitor (waits until it listens). */
  static async open(ns: string, m: TraceMatch): Promise<TraceSession> {
    await nsExec(ns, ['nft', 'delete', 'table', 'ip', TRACE_TABLE]);
    await nsExecOk(ns, ['nft', '-f', '-'], { input: traceTableText(m) });
    const child = spawn('ip', ['netns', 'exec', ns, 'nft', '-a', 'monitor', 'trace'], { stdio: ['ignore', 'pipe', 'pipe'] });
    const session = new TraceSession(ns, child);
    await sleep(400);
    return session;
  }

  /** Waits until no new output came for `quietMs`, then returns everything collected. */
  async collect(quietMs = 400, maxMs = 5000): Promise<string> {
    const start = Date.now();
    let last = this.out.length;
    let stableSince = Date.now();
    while (Date.now() - start < maxMs) {
      await sleep(100);
      if (this.out.length !== last) {
        last = this.out.length;
        stableSince = Date.now();
      } else if (Date.now() - stableSince >= quietMs) break;
    }
    return this.out;
  }

  /** Stops the monitor (its pid only) and deletes the trace table. Safe to call twice. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.child.exitCode === null) {
      this.child.kill('SIGTERM');
      await new Promise((resolve) => {
        const t = setTimeout(resolve, 2000);
        this.child.once('exit', () => {
          clearTimeout(t);
          resolve(undefined);
        });
      });
    }
    await nsExec(this.ns, ['nft', 'delete', 'table', 'ip', TRACE_TABLE]);
  }
}

/** The nft ruleset without the trace table (the walk must not evaluate it). */
export function withoutTraceTable(r: NftRuleset): NftRuleset {
  return { tables: r.tables.filter((t) => t.name !== TRACE_TABLE) };
}

/** Captures the node through the real pipeline (LocalTransport in the netns → probes → snapshot) plus nft JSON. */
export async function captureInput(nodeNs: string): Promise<TraceInput> {
  const transport = new LocalTransport({ netns: nodeNs });
  const runs = await runProbes(transport, { ids: ['uname', 'ip-addr', 'ip-route', 'iptables-save', 'nft-json', 'conntrack'] });
  const snapshot = buildSnapshot({ runs, source: { kind: 'netns', label: `netns:${nodeNs}`, live: true }, capturedAt: new Date().toISOString() });
  const nftRun = runs.find((r) => r.id === 'nft-json');
  const nft = nftRun && nftRun.status === 'ok' ? parseNftJson(nftRun.result.stdout, 'nft-json').value : { tables: [] };
  return traceInputFromSnapshot(snapshot, withoutTraceTable(nft));
}

/** The traced passes of packets that start a flow (TCP SYN without ACK; every UDP packet). */
export function firstPackets(text: string): NftTracePass[] {
  const { value } = parseNftTrace(text, 'nft monitor trace');
  return splitTracePasses(value, TRACE_START_CHAINS).filter((p) => {
    const start = p.events[0];
    if (!start || start.kind !== 'packet' || !TRACE_START_CHAINS.includes(`${start.family} ${start.table ?? ''} ${start.chain ?? ''}`)) return false;
    const flags = start.fields['tcp flags'];
    return flags === undefined || flags === 'syn';
  });
}

/** The source port and entry the kernel saw at the trace chain, and the endpoint it DNATed to. */
export function passFacts(pass: NftTracePass): { sport: number; chain: string; endpoint: string | null } {
  const start = pass.events.find((e) => e.kind === 'packet')!;
  const f = start.fields;
  const sport = Number(f['tcp sport'] ?? f['udp sport'] ?? '0');
  let endpoint: string | null = null;
  for (const e of pass.events) {
    const m = e.kind === 'rule' && e.ruleText ? /dnat to (\S+)/.exec(e.ruleText) : null;
    if (m) endpoint = m[1]!;
  }
  return { sport, chain: start.chain ?? '', endpoint };
}

/** What one oracle comparison found. */
export interface OracleOutcome {
  readonly result: TraceResult;
  readonly differences: readonly string[];
  /** Both walks, for the failure message. */
  readonly report: string;
}

/** Walks the kernel's packet with nodescope (same branch) and compares with the kernel's events. */
export function compareWithKernel(input: TraceInput, pass: NftTracePass, m: TraceMatch, entry: TraceEntry): OracleOutcome {
  const facts = passFacts(pass);
  const spec = parsePacketArgs({ from: `${m.src}:${facts.sport}`, to: `${m.dst}:${m.dport}/${m.proto}`, entry });
  const result = walkPacket(input, spec, facts.endpoint ? { branch: { kind: 'endpoint', endpoint: facts.endpoint } } : {});
  const mine = kernelEventsOfWalk(result);
  const kernel = kernelEventsOfTrace(pass.events, [`ip ${TRACE_TABLE}`]);
  const differences = [...diffKernelEvents(mine, kernel), ...diffPacketsSeen(result, packetsOfTrace(pass.events, [`ip ${TRACE_TABLE}`]))];
  const report = [
    'kernel (nft monitor trace):',
    ...pass.events.map((e) => `  ${e.raw}`),
    'kernel events:',
    ...kernel.map((e) => `  ${formatKernelEvent(e)}`),
    'nodescope events:',
    ...mine.map((e) => `  ${formatKernelEvent(e)}`),
    'nodescope walk:',
    ...result.steps.map((s) => `  ${s.index} ${s.kind} ${s.hook ?? '-'} ${s.table ?? ''} ${s.chain ?? ''} #${s.ruleIndex ?? ''} h${s.handle ?? ''} ${s.matched === null ? '' : s.matched ? '✓' : '✗'} ${s.verdict ?? ''} :: ${s.reason}`),
    `verdict: ${result.verdict.kind}: ${result.verdict.reason}`,
  ].join('\n');
  return { result, differences, report };
}

/** A DNS query for `name` as UDP payload bytes (hex). */
export function dnsQueryHex(name: string, id = 4242): string {
  return dnsPacket.encode({ type: 'query', id, flags: dnsPacket.RECURSION_DESIRED, questions: [{ type: 'A', name }] }).toString('hex');
}

const UDP_SENDER = `
const dgram = require('node:dgram');
const [server, port, sport, hex, timeout] = process.argv.slice(1);
const s = dgram.createSocket('udp4');
const t = setTimeout(() => { s.close(); process.stdout.write('timeout'); process.exit(2); }, Number(timeout));
s.on('message', (m, r) => { clearTimeout(t); process.stdout.write(r.address + ':' + r.port); s.close(); });
s.bind(Number(sport), () => s.send(Buffer.from(hex, 'hex'), Number(port), server));
`;

/** Sends one UDP datagram from `sport` inside `ns` and waits for the reply; returns who answered (`ip:port`) or `timeout`. */
export async function sendUdp(ns: string, server: string, port: number, sport: number, hex: string, timeoutMs = 2000): Promise<string> {
  const r = await nsExec(ns, [process.execPath, '-e', UDP_SENDER, server, String(port), String(sport), hex, String(timeoutMs)], { timeoutMs: timeoutMs + 5000 });
  return r.stdout.trim();
}

/** One oracle scenario: the packet, how to send it for real, and what the kernel should make of it. */
export interface OracleScenario {
  readonly name: string;
  readonly entry: TraceEntry;
  readonly match: TraceMatch;
  /** Sends one round of real packets. */
  readonly send: (lab: LabHandle, m: TraceMatch) => Promise<void>;
  /** Runs before the snapshot and the trace (e.g. the first packet of a flow). */
  readonly prime?: (lab: LabHandle, m: TraceMatch) => Promise<void>;
  /** Endpoints that must each be reached (rounds repeat until all were seen). */
  readonly endpoints?: readonly string[];
  /** Endpoints that must never be reached. */
  readonly never?: readonly string[];
  readonly verdict: Readonly<Record<ProxyMode, VerdictKind>>;
  /** Every traced packet of a round counts (UDP), not only connection starts. */
  readonly allPackets?: boolean;
  /** Extra checks of each walk (the walk's text report is the message). */
  readonly check?: (outcome: OracleOutcome, mode: ProxyMode) => void;
  /** Adds to the captured input (e.g. xt_recent lists read from /proc). */
  readonly extend?: (lab: LabHandle, input: TraceInput) => Promise<TraceInput>;
}

/**
 * Runs one scenario against the lab's kernel: flushes conntrack, primes, loads the
 * trace table and starts the monitor, captures the node, then sends rounds of packets
 * (at most 6) and compares every traced connection start with nodescope's walk.
 * The trace table and the monitor are removed whatever happens.
 */
export async function runOracleScenario(lab: LabHandle, mode: ProxyMode, sc: OracleScenario): Promise<void> {
  const node = lab.names.node;
  await nsExec(node, ['conntrack', '-F']);
  if (sc.prime) await sc.prime(lab, sc.match);
  await sleep(100);
  const session = await TraceSession.open(node, sc.match);
  try {
    let input = await captureInput(node);
    if (sc.extend) input = await sc.extend(lab, input);
    const seen = new Set<string>();
    let compared = 0;
    for (let round = 0; round < 6; round++) {
      await sc.send(lab, sc.match);
      for (const pass of firstPackets(await session.collect())) {
        const facts = passFacts(pass);
        if (seen.has(`sport ${facts.sport}`)) continue;
        seen.add(`sport ${facts.sport}`);
        const outcome = compareWithKernel(input, pass, sc.match, sc.entry);
        expect(outcome.differences, outcome.report).toEqual([]);
        expect(outcome.result.verdict.kind, outcome.report).toBe(sc.verdict[mode]);
        sc.check?.(outcome, mode);
        if (facts.endpoint) {
          seen.add(`endpoint ${facts.endpoint}`);
          expect(sc.never ?? [], outcome.report).not.toContain(facts.endpoint);
        }
        compared++;
        if (!sc.allPackets && !sc.endpoints) break;
      }
      const missing = (sc.endpoints ?? []).filter((e) => !seen.has(`endpoint ${e}`));
      if (compared > 0 && missing.length === 0) break;
    }
    expect(compared, 'traced packets compared').toBeGreaterThan(0);
    const missing = (sc.endpoints ?? []).filter((e) => !seen.has(`endpoint ${e}`));
    expect(missing, 'endpoints the kernel never chose in 6 rounds').toEqual([]);
  } finally {
    await session.close();
  }
}

/**
 * The `-m recent` lists named in the node's iptables rules, read from
 * `/proc/net/xt_recent/NAME` (lines `src=ADDR ttl: … last_seen: JIFFIES …`).
 * `ageSeconds`: the test's own upper bound for how long ago the entries were seen.
 */
export async function readXtRecent(ns: string, names: readonly string[], ageSeconds: number | null): Promise<Record<string, { address: string; ageSeconds: number | null }[]>> {
  const out: Record<string, { address: string; ageSeconds: number | null }[]> = {};
  for (const name of names) {
    const r = await nsExec(ns, ['cat', `/proc/net/xt_recent/${name}`]);
    if (r.exitCode !== 0) continue;
    out[name] = [...r.stdout.matchAll(/^src=(\S+)/gm)].map((m) => ({ address: m[1]!, ageSeconds }));
  }
  return out;
}
