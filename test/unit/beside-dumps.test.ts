/**
 * The live load's parses beside the dumps (src/collect/beside-dumps.ts, early-parse.ts) and the
 * heavy dumps' hint to read them off the main thread (`readOffThread`): the snapshot built with
 * the early parses equals the one built without them (the old path, kept as the reference) on
 * the lab captures of fixtures/ and a generated Cilium capture (bench/gen), and the API parse
 * runs while the mode's first dump is in flight.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateWorld, writeModeBundle } from '../../bench/gen/capture.js';
import { buildSnapshot, type SnapshotInput } from '../../src/collect/build-snapshot.js';
import { LbDecodesBeside, runPlannedBeside } from '../../src/collect/beside-dumps.js';
import { earlyApi, earlyApiOf, isLbMapRun } from '../../src/collect/early-parse.js';
import { firstStageIds, partStageIds, planOf } from '../../src/collect/planned-runs.js';
import { loadSnapshot } from '../../src/collect/session.js';
import { runProbes, type ProbeRun } from '../../src/sources/probe-runner.js';
import { ReplayTransport } from '../../src/sources/replay.js';
import type { ExecOptions, ExecResult, Transport } from '../../src/sources/transport.js';
import { fixtureDir } from '../helpers/fixtures.js';

const temp = mkdtempSync(path.join(tmpdir(), 'nodescope-beside-'));
afterAll(() => rmSync(temp, { recursive: true, force: true }));

/** A replay seen as a live node (not a ReplayTransport: the live load's path), `hold` delaying some probes. */
function asLive(dir: string, hold?: (argv: readonly string[]) => Promise<void> | undefined, log?: string[], queuesRuns = false): Transport {
  const replay = new ReplayTransport(dir);
  return {
    kind: 'local',
    label: 'as-live',
    ...(queuesRuns ? { queuesRuns } : {}),
    async exec(argv: readonly string[], options: ExecOptions): Promise<ExecResult> {
      log?.push(`start ${argv.join(' ')}`);
      await hold?.(argv);
      const r = await replay.exec(argv, options);
      log?.push(`end ${argv.join(' ')}`);
      return r;
    },
    close: async () => {},
  };
}

const captures = (): { label: string; dir: string }[] => {
  const gen = path.join(temp, 'gen-cilium');
  writeModeBundle(generateWorld({ services: 150, endpoints: 3, seed: 'beside', modes: ['cilium'], conntrack: 10 }), 'cilium', gen);
  return [...['lab-cilium', 'lab-iptables', 'lab-nftables'].map((name) => ({ label: name, dir: fixtureDir(name) })), { label: 'generated cilium', dir: gen }];
};

const bigints = (_key: string, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v);

async function besideRead(dir: string) {
  const transport = asLive(dir);
  const apiText = readFileSync(path.join(dir, 'api.json'), 'utf8');
  const first = await runProbes(transport, { ids: firstStageIds() });
  const planned = await runPlannedBeside(transport, planOf(transport, first), partStageIds(), {}, { text: apiText, origin: 'api.json' });
  const input: SnapshotInput = { runs: [...first, ...planned.runs], apiText, apiOrigin: 'api.json', source: { kind: 'local', label: 'as-live', live: true }, capturedAt: '2026-12-06T00:00:00.000Z' };
  return { input, planned };
}

describe('parses beside the dumps', () => {
  for (const { label, dir } of captures()) {
    it(`builds the same snapshot as the build that parses everything itself: ${label}`, async () => {
      const { input, planned } = await besideRead(dir);
      // The reference: the old path, every parse in the build.
      const reference = buildSnapshot(input);
      const early = buildSnapshot({ ...input, early: planned.early });
      expect(early).toEqual(reference);
      expect(JSON.stringify(early, bigints)).toBe(JSON.stringify(reference, bigints));
      // The early parses were made, and taken (not parsed again): the API one, and one per LB map read.
      expect(planned.early.api?.text).toBe(input.apiText);
      const maps = planned.runs.filter(isLbMapRun);
      if (label.includes('cilium')) expect(maps.length).toBeGreaterThan(0);
      for (const run of maps) expect(planned.early.lbMaps?.get(run), run.id).toBeDefined();
    });
  }

  it('loadSnapshot of a live source takes this path, and equals the build of its runs without the early parses', async () => {
    const dir = fixtureDir('lab-cilium');
    const apiText = readFileSync(path.join(dir, 'api.json'), 'utf8');
    const a = await loadSnapshot({ transport: asLive(dir), live: true, apiText, apiOrigin: 'api.json', parts: ['lb', 'iptables', 'iptablesLegacy'] });
    const reference = buildSnapshot({ runs: a.runs, apiText, apiOrigin: 'api.json', source: a.snapshot.meta.source, capturedAt: a.snapshot.meta.capturedAt, skipped: a.plan.skipped });
    expect(a.snapshot.lb?.value?.services.length).toBeGreaterThan(0);
    expect(a.snapshot).toEqual(reference);
  });

  it('parses the API objects while the mode’s first dump runs (the dump waits for the parse)', async () => {
    const dir = fixtureDir('lab-cilium');
    const apiText = readFileSync(path.join(dir, 'api.json'), 'utf8');
    const log: string[] = [];
    let parsed: () => void = () => {};
    const apiRead = new Promise<void>((resolve) => (parsed = resolve));
    // The mode's dumps end only once the API text was taken for its parse: the old order (the
    // parse after the dumps) never ends. The legacy tables are not held (not what it waits for).
    const mainDump = (argv: readonly string[]) => ['iptables-save -c', 'ip6tables-save -c', 'nft -j list ruleset', 'bpftool -j map', 'conntrack -L'].some((p) => argv.join(' ').startsWith(p));
    const transport = asLive(dir, (argv) => (mainDump(argv) ? apiRead : undefined), log);
    const first = await runProbes(transport, { ids: firstStageIds() });
    const api = {
      get text() {
        log.push('api parse');
        parsed();
        return apiText;
      },
      origin: 'api.json',
    };
    const planned = await runPlannedBeside(transport, planOf(transport, first), partStageIds(), {}, api);
    const at = (entry: string) => log.findIndex((l) => l.startsWith(entry));
    const firstMain = log.find((l) => l.startsWith('start') && mainDump(l.split(' ').slice(1)))!;
    expect(at('api parse')).toBeGreaterThan(log.indexOf(firstMain));
    expect(at('api parse')).toBeLessThan(log.indexOf(firstMain.replace('start', 'end')));
    expect(planned.early.api?.result.value.services.length).toBeGreaterThan(0);
  });

  it('with a transport that queues the dumps, asks for every dump before the API parse (no dump waits for it)', async () => {
    const dir = fixtureDir('lab-cilium');
    const apiText = readFileSync(path.join(dir, 'api.json'), 'utf8');
    const log: string[] = [];
    let parsed: () => void = () => {};
    const apiRead = new Promise<void>((resolve) => (parsed = resolve));
    const heavy = (argv: readonly string[]) => ['iptables-legacy-save', 'bpftool -j map dump'].some((p) => argv.join(' ').startsWith(p));
    // Every heavy dump is held until the API text was taken: a runner that awaited each dump
    // before asking for the next (the dumps waiting for the parse) would never ask for the second.
    const transport = asLive(dir, (argv) => (heavy(argv) ? apiRead : undefined), log, true);
    const first = await runProbes(transport, { ids: firstStageIds() });
    const api = {
      get text() {
        log.push('api parse');
        parsed();
        return apiText;
      },
      origin: 'api.json',
    };
    const planned = await runPlannedBeside(transport, planOf(transport, first), partStageIds(), {}, api);
    const parseAt = log.indexOf('api parse');
    const starts = log.flatMap((l, i) => (l.startsWith('start') ? [[l, i] as const] : []));
    const heavyStarts = starts.filter(([l]) => heavy(l.slice(6).split(' ')));
    expect(heavyStarts.length).toBeGreaterThanOrEqual(5);
    // Every probe of the stage (heavy or light) was asked for before the parse took the loop.
    const stageStart = starts.findIndex(([l]) => l.includes('iptables-legacy-save'));
    expect(starts.slice(stageStart).every(([, i]) => i < parseAt)).toBe(true);
    expect(planned.early.api?.result.value.services.length).toBeGreaterThan(0);
    // The same runs as the runner's one-by-one order.
    const plain = await runPlannedBeside(asLive(dir), planOf(transport, first), partStageIds(), {}, { text: apiText, origin: 'api.json' });
    expect(planned.runs.map((r) => [r.id, r.status, r.result.stdout])).toEqual(plain.runs.map((r) => [r.id, r.status, r.result.stdout]));
  });

  it('takes an early parse only for the input it is the parse of', () => {
    const api = earlyApi('{"kind":"List","items":[]}', 'a.json');
    expect(earlyApiOf({ api }, '{"kind":"List","items":[]}', 'a.json')).toBe(api.result);
    expect(earlyApiOf({ api }, '{"kind":"List","items": []}', 'a.json')).toBeUndefined();
    expect(earlyApiOf({ api }, '{"kind":"List","items":[]}', 'b.json')).toBeUndefined();
    expect(earlyApiOf(undefined, '', 'a.json')).toBeUndefined();
  });

  it('ignores an early API parse of another text (the build parses its own)', async () => {
    const { input } = await besideRead(fixtureDir('lab-cilium'));
    const other = earlyApi('{"kind":"List","items":[]}', 'api.json');
    expect(other.result.value.services).toEqual([]);
    expect(buildSnapshot({ ...input, early: { api: other } })).toEqual(buildSnapshot(input));
  });

  it('decodes an LB map run a turn after it ends, held ones at flush, and no other run', async () => {
    const dir = fixtureDir('lab-cilium');
    const runs = await runProbes(asLive(dir), { ids: ['bpf-lb4-services', 'bpf-lb4-backends', 'uname'] });
    const held = new LbDecodesBeside(false);
    for (const run of runs) held.onRun(run);
    expect(held.decoded).toBe(0);
    held.flush();
    expect(held.decoded).toBe(2);
    expect(held.lbMaps.get(runs.find((r) => r.id === 'uname')!)).toBeUndefined();
    const services = runs.find((r) => r.id === 'bpf-lb4-services')!;
    const free = new LbDecodesBeside();
    free.onRun(services);
    expect(free.decoded).toBe(0);
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    expect(free.decoded).toBe(1);
    expect(free.lbMaps.get(services)).toEqual(held.lbMaps.get(services));
  });
});

describe('runProbes heavyOffThread', () => {
  it('passes the hint to heavy probes only', async () => {
    const seen: [string, boolean][] = [];
    const transport: Transport = {
      kind: 'local',
      label: 'spy',
      exec: async (argv, options) => {
        seen.push([argv[0]!, options.readOffThread === true]);
        return { argv, stdout: '', stderr: '', exitCode: 0, startedAt: '', durationMs: 0 };
      },
      close: async () => {},
    };
    const runs: ProbeRun[] = await runProbes(transport, { ids: ['uname', 'bpf-lb4-services'], heavyOffThread: true, params: { bpfRoot: '/sys/fs/bpf/tc/globals' } });
    expect(runs.map((r) => r.id)).toEqual(expect.arrayContaining(['uname', 'bpf-lb4-services']));
    expect(Object.fromEntries(seen)).toEqual({ uname: false, bpftool: true });
  });
});

describe('runProbes with a transport that queues runs', () => {
  it('asks for every heavy dump at once, queued, and the light probes as before', async () => {
    const seen: { argv0: string; queued: boolean }[] = [];
    let asked = 0;
    let all: () => void = () => {};
    const allAsked = new Promise<void>((resolve) => (all = resolve));
    const ids = ['uname', 'bpf-lb4-services', 'bpf-lb4-backends', 'bpf-lb6-services'];
    const transport: Transport = {
      kind: 'local',
      label: 'spy',
      queuesRuns: true,
      exec: async (argv, options) => {
        seen.push({ argv0: argv[0]!, queued: options.queued === true });
        // A heavy dump ends only once all three were asked for: one at a time would never end.
        if (options.readOffThread && ++asked === 3) all();
        if (options.readOffThread) await allAsked;
        return { argv, stdout: '', stderr: '', exitCode: 0, startedAt: '', durationMs: 0 };
      },
      close: async () => {},
    };
    const runs = await runProbes(transport, { ids, heavyOffThread: true, params: { bpfRoot: '/sys/fs/bpf/tc/globals' } });
    expect(runs.map((r) => r.id).sort()).toEqual([...ids].sort());
    expect(seen.filter((s) => s.argv0 === 'bpftool').map((s) => s.queued)).toEqual([true, true, true]);
    expect(seen.filter((s) => s.argv0 !== 'bpftool').every((s) => !s.queued)).toBe(true);
    // Without heavyOffThread, or on a transport that does not queue: nothing is queued.
    seen.length = 0;
    asked = -100;
    await runProbes({ ...transport, exec: async (argv, options) => (seen.push({ argv0: argv[0]!, queued: options.queued === true }), { argv, stdout: '', stderr: '', exitCode: 0, startedAt: '', durationMs: 0 }) }, { ids, params: { bpfRoot: '/x' } });
    await runProbes({ ...transport, queuesRuns: false, exec: async (argv, options) => (seen.push({ argv0: argv[0]!, queued: options.queued === true }), { argv, stdout: '', stderr: '', exitCode: 0, startedAt: '', durationMs: 0 }) }, { ids, heavyOffThread: true, params: { bpfRoot: '/x' } });
    expect(seen.length).toBe(8);
    expect(seen.some((s) => s.queued)).toBe(false);
  });
});
