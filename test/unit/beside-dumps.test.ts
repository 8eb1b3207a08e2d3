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
import { lazyLbJoins } from '../../src/collect/lb-lazy.js';
import { lbCountOf } from '../../src/parsers/bpftool-lb-count.js';
import { showRules } from '../../src/report/rules.js';
import { firstStageIds, partStageIds, planOf } from '../../src/collect/planned-runs.js';
import { loadSnapshot } from '../../src/collect/session.js';
import { runProbes, type ProbeRun } from '../../src/sources/probe-runner.js';
import { ReplayTransport } from '../../src/sources/replay.js';
import type { ExecOptions, ExecResult, Transport } from '../../src/sources/transport.js';
import { fixtureDir } from '../helpers/fixtures.js';

const temp = mkdtempSync(path.join(tmpdir(), 'nodescope-beside-'));
afterAll(() => rmSync(temp, { recursive: true, force: true }));

/** A replay seen as a live node (not a ReplayTransport: the live load's path), `hold` delaying some probes. */
function asLive(dir: string, hold?: (argv: readonly string[]) => Promise<void> | undefined, log?: string[]): Transport {
  const replay = new ReplayTransport(dir);
  return {
    kind: 'local',
    label: 'as-live',
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

  it('starts the transport’s off-thread reader before any planned probe runs', async () => {
    const dir = fixtureDir('lab-cilium');
    const log: string[] = [];
    const transport = { ...asLive(dir, undefined, log), prepareOffThread: () => log.push('prepare') };
    const first = await runProbes(transport, { ids: firstStageIds() });
    log.length = 0;
    await runPlannedBeside(transport, planOf(transport, first), partStageIds(), {}, { text: readFileSync(path.join(dir, 'api.json'), 'utf8'), origin: 'api.json' });
    expect(log[0]).toBe('prepare');
    expect(log.filter((l) => l === 'prepare')).toHaveLength(1);
    expect(log.some((l) => l.startsWith('start bpftool -j map'))).toBe(true);
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

describe('the LB dumps tallied beside the dumps (countOnly: show rules)', () => {
  for (const { label, dir } of captures()) {
    it(`tallies each LB map run, decodes none, and the build prints what the eager build prints: ${label}`, async () => {
      const transport = asLive(dir);
      const apiText = readFileSync(path.join(dir, 'api.json'), 'utf8');
      const first = await runProbes(transport, { ids: firstStageIds() });
      const planned = await runPlannedBeside(transport, planOf(transport, first), partStageIds(), {}, { text: apiText, origin: 'api.json' }, true);
      const maps = planned.runs.filter(isLbMapRun);
      for (const run of maps) expect(planned.early.lbTallies?.get(run), run.id).not.toBeNull();
      for (const run of maps) expect(planned.early.lbTallies?.get(run), run.id).toBeDefined();
      for (const run of maps) expect(planned.early.lbMaps?.get(run), run.id).toBeUndefined();
      const input: SnapshotInput = { runs: [...first, ...planned.runs], apiText, apiOrigin: 'api.json', source: { kind: 'local', label: 'as-live', live: true }, capturedAt: '2026-12-06T00:00:00.000Z' };
      const before = lazyLbJoins.count;
      const counted = buildSnapshot({ ...input, lazyLb: true, early: planned.early });
      const eager = buildSnapshot(input);
      const outputs = (snapshot: typeof eager) => ['json', 'text', 'yaml'].map((f) => showRules(snapshot, f as 'json'));
      expect(outputs(counted)).toEqual(outputs(eager));
      expect(lazyLbJoins.count).toBe(before);
      if (maps.length > 0) expect(lbCountOf(counted.lb!)).toBeDefined();
      expect(counted.lb?.diagnostics ?? null).toEqual(eager.lb?.diagnostics ?? null);
      expect(counted.lb?.value ?? null).toEqual(eager.lb?.value ?? null);
    });
  }

  it('decodes a run whose tally is null (not the usual shape), beside the dumps as before', async () => {
    const runs = await runProbes(asLive(fixtureDir('lab-cilium')), { ids: ['bpf-lb4-services', 'bpf-lb4-backends'] });
    const [services, backends] = runs;
    const pretty = { ...services!, result: { ...services!.result, stdout: JSON.stringify(JSON.parse(services!.result.stdout), null, 2) } };
    const decodes = new LbDecodesBeside(false, true);
    decodes.onRun(pretty);
    decodes.onRun(backends!);
    decodes.flush();
    expect(decodes.lbTallies.get(pretty)).toBeNull();
    expect(decodes.lbMaps.get(pretty)).toBeDefined();
    expect(decodes.lbTallies.get(backends!)).not.toBeNull();
    expect(decodes.lbMaps.get(backends!)).toBeUndefined();
    expect(decodes.decoded).toBe(1);
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
