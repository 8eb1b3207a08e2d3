/**
 * Issue 23 item 4: a replay's conntrack table parsed on a worker thread
 * (src/collect/worker-parse.ts, parse-worker.ts) gives the snapshot the in-process parse
 * gives, field for field (`toPlain`), with the conntrack pane's classification computed in
 * the worker; a worker that fails leaves the parse to the main thread with a warning.
 * The worker runs tsc's output (dist/src/collect/parse-worker.js): build first.
 */
import { appendFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { buildFirstSnapshot, completeSnapshot, piecedProbes, type SnapshotInput } from '../../src/collect/build-snapshot.js';
import { parseWorkerPolicy, parseWorkerUrl, startsBesideRules } from '../../src/collect/worker-parse.js';
import { firstStageIds } from '../../src/collect/planned-runs.js';
import { conntrackEntryCount } from '../../src/model/conntrack-ids.js';
import { buildConntrackIndex, conntrackIndex, conntrackTargetColumns, conntrackTargets } from '../../src/analysis/conntrack-index.js';
import { toPlain } from '../../src/model/plain.js';
import type { NodeSnapshot } from '../../src/model/snapshot.js';
import { parseConntrack } from '../../src/parsers/conntrack.js';
import { decodeConntrack, encodeConntrack } from '../../src/parsers/conntrack-transfer.js';
import { runProbes, type ProbeRun } from '../../src/sources/probe-runner.js';
import { ReplayTransport } from '../../src/sources/replay.js';
import { generateWorld, writeModeBundle, type GenMode } from '../../bench/gen/capture.js';
import { parseConntrackReference } from '../../src/parsers/conntrack.js';
import { plainConntrackEntry } from '../../src/model/conntrack.js';
import { copyFixture } from '../helpers/fixtures.js';

/** Lines of other shapes than the lab's: big counters, a kept text, IPv6, ICMP (general parser), mark/use in extras, an event. */
const VARIED = [
  'ipv4     2 tcp      6 431999 ESTABLISHED src=10.244.0.9 dst=10.96.0.10 sport=40000 dport=53 packets=99999999999 bytes=123456789012345 src=10.244.0.3 dst=10.244.0.9 sport=53 dport=40000 packets=3000 bytes=2000000 [ASSURED] mark=0 use=1',
  'ipv4     2 udp      17 29 src=10.244.0.9 dst=10.96.0.10 sport=40001 dport=53  src=10.244.0.3 dst=10.244.0.9 sport=53 dport=40001 mark=0 use=1',
  'ipv6     10 tcp      6 100 SYN_SENT src=fd00::9 dst=fd00:96::a sport=40002 dport=80 [UNREPLIED] src=fd00::3 dst=fd00::9 sport=80 dport=40002 mark=7 use=3',
  'ipv4     2 icmp     1 29 src=10.244.0.9 dst=10.96.0.10 type=8 code=0 id=7 src=10.96.0.10 dst=10.244.0.9 type=0 code=0 id=7 mark=0 use=1',
  'tcp      6 100 ESTABLISHED src=10.244.0.9 dst=10.96.0.10 sport=40003 dport=53 src=10.244.0.3 dst=10.244.0.9 sport=53 dport=40003 [ASSURED] mark=0 secmark=5 zone=2 use=9 id=12345',
  ' [NEW] tcp      6 120 SYN_SENT src=10.244.0.9 dst=10.96.0.10 sport=40004 dport=53 [UNREPLIED] src=10.244.0.3 dst=10.244.0.9 sport=53 dport=40004',
  'conntrack v1.4.7 (conntrack-tools): 21 flow entries have been shown.',
];

/** A copy of fixture `name` whose conntrack capture has {@link VARIED} appended; its staged-load input read in pieces, as a replay session reads it. */
async function variedInput(name: string): Promise<SnapshotInput> {
  return variedInputOf(copyFixture(name), name);
}

/** The bundle in `dir` with {@link VARIED} (and `more` lines) appended to its conntrack capture; its staged-load input read in pieces. */
async function variedInputOf(dir: string, name: string, more: readonly string[] = []): Promise<SnapshotInput> {
  appendFileSync(path.join(dir, 'probes', 'conntrack.stdout'), `${[...VARIED, ...more].join('\n')}\n`);
  const transport = new ReplayTransport(dir);
  const runs = await runProbes(transport, { stdoutAsPieces: piecedProbes() });
  const apiText = transport.apiText();
  return { runs, ...(apiText !== undefined ? { apiText } : {}), source: { kind: 'replay', label: name, live: false }, capturedAt: runs[0]!.result.startedAt };
}

/** The snapshot with every conntrack entry, event and tuple as plain data (compact classes are not plain). */
function plainCt(s: NodeSnapshot): unknown {
  const ct = s.conntrack?.value;
  if (!ct) return s;
  return { ...s, conntrack: { ...s.conntrack, value: { ...ct, entries: ct.entries.map(toPlain), events: ct.events?.map(toPlain) } } };
}

describe('conntrack table on a parse worker', () => {
  it('finds the worker script (tsc output); NODESCOPE_PARSE_WORKERS=1 is on, =0 off, else beside a long nft -j rules stage', () => {
    expect(parseWorkerUrl()?.pathname).toMatch(/parse-worker\.js$/);
    expect(parseWorkerPolicy({})).toBe('beside-long-rules');
    expect(parseWorkerPolicy({ NODESCOPE_PARSE_WORKERS: '1' })).toBe('on');
    expect(parseWorkerPolicy({ NODESCOPE_PARSE_WORKERS: '0' })).toBe('off');
    expect(parseWorkerPolicy({ NODESCOPE_PARSE_WORKERS: 'yes' })).toBe('beside-long-rules');
  });

  it('startsBesideRules: by default only for an ok nft-json run of at least minBytes (by its file or its text); enabled or the environment decide otherwise', async () => {
    const transport = new ReplayTransport(copyFixture('lab-nftables'));
    const [run] = await runProbes(transport, { ids: ['nft-json'], stdoutAsPieces: piecedProbes() });
    expect(run!.status).toBe('ok');
    expect(run!.result.stdoutPath).toBeDefined();
    expect([startsBesideRules({ minBytes: 1000 }, run, {}), startsBesideRules({ minBytes: 1_000_000 }, run, {}), startsBesideRules({}, run, {})]).toEqual([true, false, false]);
    const [plain] = await runProbes(new ReplayTransport(copyFixture('lab-nftables')), { ids: ['nft-json'] });
    expect(plain!.result.stdoutPath).toBeUndefined();
    expect([startsBesideRules({ minBytes: 1000 }, plain, {}), startsBesideRules({ minBytes: 1_000_000 }, plain, {})]).toEqual([true, false]);
    // No nft -j text (an iptables node), or a failed one: not by default.
    expect(startsBesideRules({ minBytes: 0 }, undefined, {})).toBe(false);
    expect(startsBesideRules({ minBytes: 0 }, { ...plain!, status: 'failed' } as ProbeRun, {})).toBe(false);
    // enabled, then the environment, override the size.
    expect(startsBesideRules({ enabled: true }, undefined, {})).toBe(true);
    expect(startsBesideRules({ enabled: false, minBytes: 0 }, plain, {})).toBe(false);
    expect(startsBesideRules({}, undefined, { NODESCOPE_PARSE_WORKERS: '1' })).toBe(true);
    expect(startsBesideRules({ minBytes: 0 }, plain, { NODESCOPE_PARSE_WORKERS: '0' })).toBe(false);
    expect(startsBesideRules({ enabled: true }, undefined, { NODESCOPE_PARSE_WORKERS: '0' })).toBe(true);
  });

  it('columns codec: encoded, cloned as postMessage does, decoded: the same table field for field', () => {
    const text = `${VARIED.join('\n')}\n`;
    const parsed = parseConntrack(text, 'conntrack');
    expect(parsed.value.entries.length).toBe(5);
    expect(parsed.value.events?.length).toBe(1);
    const { encoded, transfer } = encodeConntrack(parsed);
    const back = decodeConntrack(structuredClone(encoded, { transfer }))!;
    expect(back.value.entries.map(toPlain)).toEqual(parsed.value.entries.map(toPlain));
    expect(back.value.events?.map(toPlain)).toEqual(parsed.value.events?.map(toPlain));
    expect(back.value.trailers).toEqual(parsed.value.trailers);
    expect(back.value.reportedCount).toBe(21);
    expect(back.diagnostics).toEqual(parsed.diagnostics);
    // Same raw text and counters through the getters (the big ones as bigints).
    expect(back.value.entries[0]!.orig.packets).toBe(99999999999n);
    expect(back.value.entries.map((e) => e.raw)).toEqual(parsed.value.entries.map((e) => e.raw));
  });

  it.each(['lab-iptables', 'lab-nftables', 'lab-cilium'])('%s: the worker-parsed snapshot equals the in-process one, and its classification primes the pane index', async (name) => {
    const input = await variedInput(name);
    const inProcess = await completeSnapshot(input, buildFirstSnapshot(input));
    const first = buildFirstSnapshot(input);
    const viaWorker = await completeSnapshot(input, first, { workers: { enabled: true, minBytes: 0 } });
    expect(plainCt(viaWorker)).toEqual(plainCt(inProcess));
    expect(viaWorker.conntrack?.diagnostics.some((d) => d.code === 'parse-worker-failed')).toBe(false);
    // Not the main thread's objects: the entries were made again from the worker's columns.
    expect(viaWorker.conntrack!.value!.entries).not.toBe(inProcess.conntrack!.value!.entries);
    const targets = conntrackTargets(viaWorker);
    const fresh = buildConntrackIndex(viaWorker.conntrack!.value!.entries, targets.services, targets.nodeAddresses);
    const primed = conntrackIndex(viaWorker);
    expect([...primed.serviceOf]).toEqual([...fresh.serviceOf]);
    expect([...primed.codeOf]).toEqual([...fresh.codeOf]);
    expect(primed.staleCount).toBe(fresh.staleCount);
    expect(primed.services).toEqual(fresh.services);
    expect([...primed.serviceOf].some((s) => s >= 0)).toBe(true);
  });

  it.each(['iptables', 'nftables', 'cilium'] as const)(
    'generated %s capture (bench/gen, 6,000 flows and odd lines): the worker\'s byte parse equals the in-process parse, the string reference and its classification',
    { timeout: 120_000 },
    async (mode: GenMode) => {
      const dir = mkdtempSync(path.join(os.tmpdir(), `nodescope-worker-gen-${mode}-`));
      writeModeBundle(generateWorld({ services: 200, endpoints: 3, seed: `worker-${mode}`, modes: [mode], conntrack: 6000 }), mode, dir);
      // Two lines no parser takes: diagnostics (line number, text, origin) to compare too.
      const input = await variedInputOf(dir, mode, ['tcp 6 not a conntrack line', 'ipv4     2 tcp      6 431999 ESTABLISHED src=10.244.0.9']);
      const inProcess = await completeSnapshot(input, buildFirstSnapshot(input), { workers: { enabled: false } });
      const viaWorker = await completeSnapshot(input, buildFirstSnapshot(input), { workers: { enabled: true, minBytes: 0 } });
      expect(viaWorker.conntrack?.diagnostics.some((d) => d.code === 'parse-worker-failed')).toBe(false);
      expect(viaWorker.conntrack!.value!.entries).not.toBe(inProcess.conntrack!.value!.entries);
      expect(plainCt(viaWorker)).toEqual(plainCt(inProcess));
      // The old string parse of the same file, every entry and diagnostic (the reference of the byte reader).
      const reference = parseConntrackReference(readFileSync(path.join(dir, 'probes', 'conntrack.stdout'), 'utf8'), 'conntrack');
      expect(conntrackEntryCount(viaWorker.conntrack!.value!)).toBe(6000 + 5);
      expect(viaWorker.conntrack!.value!.entries.map(plainConntrackEntry)).toEqual(reference.value.entries.map(plainConntrackEntry));
      expect(viaWorker.conntrack!.value!.events?.map(toPlain)).toEqual(reference.value.events?.map(toPlain));
      expect(viaWorker.conntrack!.diagnostics).toEqual(reference.diagnostics);
      expect(reference.diagnostics.length).toBeGreaterThan(0);
      // The worker's classification (primed) equals one made on the main thread from the entries.
      const targets = conntrackTargets(viaWorker);
      const fresh = buildConntrackIndex(inProcess.conntrack!.value!.entries, targets.services, targets.nodeAddresses);
      const primed = conntrackIndex(viaWorker);
      expect([...primed.serviceOf]).toEqual([...fresh.serviceOf]);
      expect([...primed.codeOf]).toEqual([...fresh.codeOf]);
      expect(primed.staleCount).toBe(fresh.staleCount);
      expect([...primed.serviceOf].filter((x) => x >= 0).length).toBeGreaterThan(1000);
    },
  );

  it.each([
    ['lab-nftables', true, 1000, true],
    ['lab-iptables', true, 0, true],
    ['lab-cilium', true, 0, true],
    ['lab-nftables', undefined, 1000, true],
    ['lab-nftables', undefined, 1_000_000, false],
  ] as const)('%s, enabled %s, from %i bytes: the worker starts before the rules\' stage (%s), else the flows are parsed on the main thread; read once', async (name, enabled, minBytes, worker) => {
    const transport = new ReplayTransport(copyFixture(name));
    const runs = await runProbes(transport, { ids: firstStageIds(), stdoutAsPieces: piecedProbes() });
    const apiText = transport.apiText();
    const input: SnapshotInput = { runs, ...(apiText !== undefined ? { apiText } : {}), source: { kind: 'replay', label: name, live: false }, capturedAt: runs[0]!.result.startedAt };
    // The worker's run is read just before the worker starts: when it was read tells when the worker started.
    const asked: string[] = [];
    const fetchRuns = (ids: readonly string[]) => (asked.push(...ids), runProbes(transport, { ids: [...ids], stdoutAsPieces: piecedProbes() }));
    // Whether the worker's run was read when the rules' stage was published (its parse done).
    let readBeforeRulesParsed: boolean | undefined;
    const onProgress = () => (readBeforeRulesParsed ??= asked.includes('conntrack'));
    // A worker script that always fails: a worker that started leaves its warning (and the main thread's parse).
    const broken = path.join(mkdtempSync(path.join(os.tmpdir(), 'nodescope-worker-')), 'broken-worker.mjs');
    writeFileSync(broken, "throw new Error('worker broke on purpose');\n");
    const workers = { ...(enabled === undefined ? {} : { enabled }), minBytes };
    const done = await completeSnapshot(input, buildFirstSnapshot(input), { fetchRuns, onProgress, workers });
    expect(asked.filter((id) => id === 'conntrack')).toEqual(['conntrack']);
    expect(readBeforeRulesParsed).toBe(worker);
    expect(done.conntrack!.diagnostics.some((d) => d.code === 'parse-worker-failed')).toBe(false);
    expect(conntrackEntryCount(done.conntrack!.value!)).toBeGreaterThan(0);
    const probed = await completeSnapshot(input, buildFirstSnapshot(input), { fetchRuns, workers: { ...workers, script: pathToFileURL(broken) } });
    expect(probed.conntrack!.diagnostics.some((d) => d.code === 'parse-worker-failed')).toBe(worker);
    expect(probed.conntrack!.value!.entries.map(toPlain)).toEqual(done.conntrack!.value!.entries.map(toPlain));
  });

  it('workers off (enabled: false, or a table below minBytes): no worker starts, the main thread\'s parse equals the worker\'s', async () => {
    const input = await variedInput('lab-nftables');
    // A worker script that always fails: a worker that started would leave its warning.
    const broken = path.join(mkdtempSync(path.join(os.tmpdir(), 'nodescope-worker-')), 'broken-worker.mjs');
    writeFileSync(broken, "throw new Error('worker broke on purpose');\n");
    const script = pathToFileURL(broken);
    const off = await completeSnapshot(input, buildFirstSnapshot(input), { workers: { enabled: false, minBytes: 0, script } });
    const small = await completeSnapshot(input, buildFirstSnapshot(input), { workers: { enabled: true, minBytes: 1 << 30, script } });
    const failed = await completeSnapshot(input, buildFirstSnapshot(input), { workers: { enabled: true, minBytes: 0, script } });
    const on = await completeSnapshot(input, buildFirstSnapshot(input), { workers: { enabled: true, minBytes: 0 } });
    expect(failed.conntrack!.diagnostics.some((d) => d.code === 'parse-worker-failed')).toBe(true);
    for (const s of [off, small, on]) expect(s.conntrack!.diagnostics.some((d) => d.code === 'parse-worker-failed')).toBe(false);
    expect(plainCt(off)).toEqual(plainCt(on));
    expect(plainCt(small)).toEqual(plainCt(on));
  });

  it('targets the columns do not hold (a port as text) reach the worker as objects: its classification still equals the main thread\'s', async () => {
    const input = await variedInput('lab-nftables');
    const first = buildFirstSnapshot(input);
    const api = first.api!.value!;
    const services = api.services.map((s) => ({ ...s, ports: s.ports.map((p) => ({ ...p, port: String(p.port) as never })) }));
    const edited: NodeSnapshot = { ...first, api: { ...first.api!, value: { ...api, services } } };
    expect(conntrackTargetColumns(edited)).toBeUndefined();
    const viaWorker = await completeSnapshot(input, edited, { workers: { enabled: true, minBytes: 0 } });
    expect(viaWorker.conntrack?.diagnostics.some((d) => d.code === 'parse-worker-failed')).toBe(false);
    const targets = conntrackTargets(viaWorker);
    const fresh = buildConntrackIndex(viaWorker.conntrack!.value!.entries, targets.services, targets.nodeAddresses);
    const primed = conntrackIndex(viaWorker);
    expect([...primed.serviceOf]).toEqual([...fresh.serviceOf]);
    expect([...primed.codeOf]).toEqual([...fresh.codeOf]);
    expect(primed.services).toEqual(fresh.services);
    expect([...primed.serviceOf].some((x) => x >= 0)).toBe(true);
  });

  it('a worker that fails leaves the parse to the main thread, with a parse-worker-failed warning', async () => {
    const input = await variedInput('lab-iptables');
    const broken = path.join(mkdtempSync(path.join(os.tmpdir(), 'nodescope-worker-')), 'broken-worker.mjs');
    writeFileSync(broken, "throw new Error('worker broke on purpose');\n");
    const done = await completeSnapshot(input, buildFirstSnapshot(input), { workers: { enabled: true, minBytes: 0, script: pathToFileURL(broken) } });
    const expected = await completeSnapshot(input, buildFirstSnapshot(input));
    const warning = done.conntrack!.diagnostics.find((d) => d.code === 'parse-worker-failed');
    expect(warning?.severity).toBe('warning');
    expect(warning?.message).toContain('worker broke on purpose');
    expect(done.conntrack!.diagnostics.filter((d) => d !== warning)).toEqual(expected.conntrack!.diagnostics);
    expect(done.conntrack!.value!.entries.map(toPlain)).toEqual(expected.conntrack!.value!.entries.map(toPlain));
  });
});
