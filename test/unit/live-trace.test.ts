import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { BugError, UserError } from '../../src/errors.js';
import { parseNftTrace, splitTracePasses } from '../../src/parsers/nft-trace.js';
import { alignEvents } from '../../src/report/trace-live.js';
import { runLiveTraceCommand } from '../../src/report/trace-live.js';
import { catalog, probe } from '../../src/sources/catalog.js';
import { runProbe, runProbes } from '../../src/sources/probe-runner.js';
import type { ExecOptions, ExecResult, Transport, TransportKind } from '../../src/sources/transport.js';
import type { KernelEvent } from '../../src/trace/kernel-trace.js';
import { currentRun } from '../../src/run-record.js';
import { captureKernelTrace, liveTraceStartChains, passFacts, traceSeconds, traceTableName, traceTablesListed, type LiveTraceMatch } from '../../src/collect/live-trace.js';

// This process's run record (src/run-record.ts) in a directory of its own, and its table.
let TABLE = '';
beforeAll(async () => {
  process.env['XDG_STATE_HOME'] = mkdtempSync(path.join(tmpdir(), 'nodescope-lt-state-'));
  TABLE = traceTableName((await currentRun()).id);
});
import type { NodeSnapshot } from '../../src/model/snapshot.js';
import { captureWords, englishLeft, latinWords } from '../helpers/english.js';
import { snapshotOf } from '../helpers/fixtures.js';

/** A transport that records every argv and answers from `reply`. */
function recorder(kind: TransportKind = 'netns', reply: (argv: readonly string[]) => Partial<ExecResult> = () => ({})) {
  const seen: string[][] = [];
  const t: Transport = {
    kind,
    label: `${kind}:test`,
    async exec(argv: readonly string[], options: ExecOptions): Promise<ExecResult> {
      void options;
      seen.push([...argv]);
      return { argv: [...argv], stdout: '', stderr: '', exitCode: 0, startedAt: '2024-01-01T00:00:00.000Z', durationMs: 1, ...reply(argv) };
    },
    async close() {},
  };
  return { t, seen };
}

const isWrite = (argv: readonly string[]) => argv.includes('add') || argv.includes('delete') || argv.includes('monitor');

const match = (over: Partial<LiveTraceMatch> = {}): LiveTraceMatch => ({ l3: 'ip', src: '10.244.0.9', dst: '10.96.12.34', proto: 'tcp', sport: null, dport: 80, ...over });

/** `nft monitor trace` lines of one packet: start in the trace table, then `rest` (`table chain what`). */
function traceLines(id: string, sport: number, rest: readonly string[], flags = 'syn'): string {
  const pkt = `ip saddr 10.244.0.9 ip daddr 10.96.12.34 tcp sport ${sport} tcp dport 80 tcp flags == ${flags}`;
  return [`trace id ${id} inet ${TABLE} pre packet: iif "veth0" ${pkt}`, `trace id ${id} inet ${TABLE} pre rule ip saddr 10.244.0.9 meta nftrace set 1 # handle 4 (verdict continue)`, `trace id ${id} inet ${TABLE} pre policy accept`, ...rest.map((r) => `trace id ${id} ip ${r}`)].join('\n') + '\n';
}

const ev = (chain: string, handle: number | null, verdict: string, kind: 'rule' | 'policy' = 'rule'): KernelEvent => ({ kind, family: 'ip', table: 'nat', chain, handle, ruleText: null, verdict });

describe('write guard of the probe runner', () => {
  it('refuses a readOnly: false probe without allowWrites and executes nothing', async () => {
    const { t, seen } = recorder();
    await expect(runProbe(t, probe('trace-table-add'))).rejects.toBeInstanceOf(BugError);
    await expect(runProbes(t, { ids: ['uname', 'trace-table-delete'] })).rejects.toBeInstanceOf(BugError);
    expect(seen.filter(isWrite)).toEqual([]);
    const run = await runProbe(t, probe('trace-table-add'), { traceTable: 'nodescope-trace-0123456789ab' }, catalog(), { allowWrites: true });
    expect(run.argv).toEqual(['nft', 'add', 'table', 'inet', 'nodescope-trace-0123456789ab']);
    // The table name is a parameter with its own pattern: nothing else can be deleted through it.
    await expect(runProbe(t, probe('trace-table-delete'), { traceTable: 'filter' }, catalog(), { allowWrites: true })).rejects.toBeInstanceOf(UserError);
  });

  it('declares every writing probe on demand, so captures and refreshes never run one', async () => {
    const writers = catalog().probes.filter((p) => !p.readOnly);
    expect(writers.map((p) => p.id).sort()).toEqual(['trace-chain-add', 'trace-monitor', 'trace-rule-add', 'trace-table-add', 'trace-table-delete']);
    for (const p of writers) expect(p.onDemand, p.id).toBe(true);
    const { t, seen } = recorder();
    await runProbes(t);
    expect(seen.length).toBeGreaterThan(5);
    expect(seen.filter(isWrite)).toEqual([]);
  });

  it('validates every value of the trace rule against the catalog patterns', async () => {
    const { t, seen } = recorder();
    const params = { traceChain: 'pre', traceL3: 'ip', traceSrc: '10.0.0.1; reboot', traceDst: '10.0.0.2', traceProto: 'tcp', traceDport: '80' };
    await expect(runProbe(t, probe('trace-rule-add'), params, catalog(), { allowWrites: true })).rejects.toBeInstanceOf(UserError);
    expect(seen).toEqual([]);
  });
});

describe('captureKernelTrace', () => {
  it('refuses without --allow-trace and on a replay source, writing nothing', async () => {
    const a = recorder();
    await expect(captureKernelTrace({ transport: a.t, match: match(), allowTrace: false, seconds: 1, settleMs: 0 })).rejects.toBeInstanceOf(UserError);
    const b = recorder('replay');
    await expect(captureKernelTrace({ transport: b.t, match: match(), allowTrace: true, seconds: 1, settleMs: 0 })).rejects.toBeInstanceOf(UserError);
    expect([...a.seen, ...b.seen]).toEqual([]);
  });

  it('the trace command without the flag executes no argv at all', async () => {
    const { t, seen } = recorder();
    await expect(runLiveTraceCommand({ transport: t, snapshot: {} as NodeSnapshot, args: { from: '10.244.0.9', to: '10.96.12.34:80/tcp' }, allowTrace: false, seconds: 1 })).rejects.toBeInstanceOf(UserError);
    expect(seen).toEqual([]);
  });

  it('adds the table, chains and rules for the 5-tuple, monitors for the bound, deletes the table, returns the passes', async () => {
    const text = traceLines('0000000a', 40000, ['nat KUBE-SERVICES rule ip daddr 10.96.12.34 # handle 9 (verdict jump KUBE-SVC-X)']);
    const { t, seen } = recorder('netns', (argv) => (argv.includes('monitor') ? { stdout: text, exitCode: 124 } : {}));
    const cap = await captureKernelTrace({ transport: t, match: match({ sport: 40000 }), allowTrace: true, seconds: 3, settleMs: 0 });
    expect(seen.map((a) => a.slice(0, 4).join(' '))).toEqual([
      'nft list flowtables',
      'nft add table inet',
      'nft add chain inet',
      'nft add chain inet',
      'nft add rule inet',
      'nft add rule inet',
      'timeout 3 nft -a',
      'nft delete table inet',
    ]);
    expect(seen[1]![4]).toBe(TABLE);
    expect(cap.table).toBe(TABLE);
    expect(seen[2]![6]).toBe('{ type filter hook prerouting priority -301 ; policy accept ; }');
    expect(seen[4]!.slice(5).join(' ')).toBe('pre ip saddr 10.244.0.9 ip daddr 10.96.12.34 tcp sport 40000 tcp dport 80 meta nftrace set 1');
    expect(seen[5]!.slice(5, 6)).toEqual(['out']);
    expect(cap.removed).toBe(true);
    expect(cap.passes).toHaveLength(1);
    expect(passFacts(cap.passes[0]!)).toEqual({ sport: 40000, chain: 'pre', endpoint: null, tcpFlags: 'syn' });
  });

  it('deletes the table when the run fails after it was added', async () => {
    const { t, seen } = recorder();
    const run = captureKernelTrace({
      transport: t, match: match(), allowTrace: true, seconds: 1, settleMs: 0,
      onListening: () => { throw new Error('traffic generator failed'); },
    });
    await expect(run).rejects.toThrow('traffic generator failed');
    expect(seen.at(-1)).toEqual(['nft', 'delete', 'table', 'inet', TABLE]);
    expect(seen.findIndex((a) => a.includes('add'))).toBeGreaterThan(0);
  });

  it('stops with a UserError naming nft when the table cannot be added, and still deletes', async () => {
    const { t, seen } = recorder('netns', (argv) => (argv[1] === 'add' ? { exitCode: 1, stderr: 'Error: Could not process rule: Operation not permitted' } : {}));
    await expect(captureKernelTrace({ transport: t, match: match(), allowTrace: true, seconds: 1, settleMs: 0 })).rejects.toBeInstanceOf(UserError);
    expect(seen.at(-1)).toEqual(['nft', 'delete', 'table', 'inet', TABLE]);
    expect(seen.some((a) => a.includes('monitor'))).toBe(false);
  });
});

describe('trace tables on the node', () => {
  it('reads only nodescope trace table names from the table listing (hostile names ignored)', () => {
    const text = 'table ip filter\ntable inet nodescope-trace-0123456789ab\ntable inet nodescope-trace\ntable inet nodescope-trace-../x\ntable ip nodescope-trace-0123456789ab\n  table inet nodescope-trace-ffffffffffff\n';
    expect(traceTablesListed(text)).toEqual(['nodescope-trace-0123456789ab', 'nodescope-trace', 'nodescope-trace-ffffffffffff']);
    expect(traceTablesListed('table ip nat {\n}\ntable inet nodescope-trace-0123456789ab {\n}\ntable inet nodescope-trace-{x {\n}\n')).toEqual(['nodescope-trace-0123456789ab']);
  });

  it("leaves another run's table alone when this machine has no record of it, and says so", async () => {
    const other = 'nodescope-trace-0123456789ab';
    const { t, seen } = recorder('netns', (argv) => (argv[1] === 'list' ? { stdout: `table inet ${other}\n` } : {}));
    const notices: string[] = [];
    const cap = await captureKernelTrace({ transport: t, match: match(), allowTrace: true, seconds: 1, settleMs: 0, onNotice: (m) => notices.push(m) });
    expect(seen.filter((a) => a.includes(other))).toEqual([]);
    expect(cap.stale.map((s) => [s.table, s.state, s.removed])).toEqual([[other, 'unknown', false]]);
    expect(notices).toEqual([expect.stringContaining(`left the trace table inet ${other} on netns:test alone: its run 0123456789ab is not recorded on this machine`)]);
  });
});

describe('reading the kernel pass', () => {
  it('takes the endpoint from a dnat rule, else from the first rewritten packet line', () => {
    const dnat = traceLines('00000001', 41000, ['nat KUBE-SEP-A rule meta l4proto tcp dnat to 10.244.1.5:8080 # handle 30 (verdict accept)']);
    const moved = traceLines('00000002', 41001, ['filter FORWARD packet: iif "veth0" oif "eth0" ip saddr 10.244.0.9 ip daddr 10.244.2.7 tcp sport 41001 tcp dport 8080']);
    const facts = [dnat, moved].map((t) => passFacts(splitTracePasses(parseNftTrace(t, 't').value, [...liveTraceStartChains(TABLE)])[0]!));
    expect(facts.map((f) => f.endpoint)).toEqual(['10.244.1.5:8080', '10.244.2.7:8080']);
  });

  it('aligns the two walks, marking events only one side has', () => {
    const a = ev('KUBE-SERVICES', 9, 'jump KUBE-SVC-X');
    const b = ev('KUBE-SVC-X', 12, 'jump KUBE-SEP-A');
    const c = ev('KUBE-SEP-A', 30, 'accept');
    const rows = alignEvents([a, b, c], [a, c]);
    expect(rows.map((r) => [r.kernel?.handle ?? null, r.nodescope?.handle ?? null, r.same])).toEqual([[9, 9, true], [12, null, false], [30, 30, true]]);
  });

  it('accepts --trace-seconds 1 to 60 only', () => {
    expect([traceSeconds(undefined), traceSeconds('3')]).toEqual([10, 3]);
    for (const bad of ['0', '61', 'x', '1;reboot']) expect(() => traceSeconds(bad)).toThrow(UserError);
  });
});

describe('trace --allow-trace --lang ja: the comparison text', () => {
  const run = async (monitor: string, lang: 'en' | 'ja') => {
    const { t } = recorder('netns', (argv) => (argv.includes('monitor') ? { stdout: monitor, exitCode: 124 } : {}));
    const snapshot = await snapshotOf('lab-iptables');
    return runLiveTraceCommand({ transport: t, snapshot, args: { from: '10.244.0.9', to: '10.96.12.34:80/tcp', endpoint: '10.244.0.23:8080' }, allowTrace: true, seconds: 3, settleMs: 0, lang });
  };

  it('has no English left: head, columns, differences, notes, the walk; English unchanged', async () => {
    // An ACK mid-stream, one rule the walk does not take: a note and differences to say.
    const monitor = traceLines('0000000b', 40001, ['nat KUBE-SERVICES rule ip daddr 10.96.12.34 # handle 9 (verdict jump KUBE-SVC-X)'], 'ack');
    const ja = await run(monitor, 'ja');
    expect(ja).toMatch(/^カーネルによる 10\.244\.0\.9 → 10\.96\.12\.34:80\/tcp のトレース: /m);
    expect(ja).toMatch(/^ {4}カーネル（"nft monitor trace"）\s+\| nodescope（シミュレーション）$/m);
    expect(ja).toMatch(/^相違点（\d+ 件）:$/m);
    expect(ja).toMatch(/^注: トレースした最初のパケットは接続開始ではありません（tcp フラグ ack）/m);
    expect(ja).toMatch(/^nodescope の経路:$/m);
    const data = new Set([...captureWords('lab-iptables'), ...latinWords(monitor)]);
    expect(englishLeft(ja, data).map((w) => `${w.word}: ${w.line}`)).toEqual([]);
    const en = await run(monitor, 'en');
    expect(en).toMatch(/^kernel trace of 10\.244\.0\.9 → 10\.96\.12\.34:80\/tcp: 1 packet traced in 3 s; table inet \S+ removed$/m);
    expect(en).toMatch(/^note: the first traced packet is not a connection start \(tcp flags ack\); nodescope walks it as sent$/m);
    expect(en).toMatch(/^differences \(\d+\):$/m);
  });

  it('says in Japanese that nothing was traced', async () => {
    const ja = await run('', 'ja');
    expect(ja).toMatch(/^注: カーネルは 3 秒間に 10\.244\.0\.9 → 10\.96\.12\.34:80\/tcp のパケットをトレースしませんでした/m);
    expect(englishLeft(ja, captureWords('lab-iptables'))).toEqual([]);
  });
});
