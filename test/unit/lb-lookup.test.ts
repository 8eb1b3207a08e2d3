/**
 * The LB pane's refresh by key (src/collect/lb-lookup.ts, map-refresh.ts): the lookups of the
 * frontends on screen are every entry the map holds for them, and what bpftool printed for
 * them (recorded on the real kernel, fixtures/cilium-maps/bpf-lb-lookup*.stdout) decides
 * between the snapshot as it was and the full read. The stdin lines are checked against the
 * catalog before anything runs.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { lookupPlan, lookupsUnchanged, MAX_LOOKUPS } from '../../src/collect/lb-lookup.js';
import { LOOKUP_PROBE, serviceMapsRefresh, ServiceMapDigests } from '../../src/collect/map-refresh.js';
import { formatFrontend, type LbTable } from '../../src/model/cilium.js';
import type { NodeSnapshot } from '../../src/model/snapshot.js';
import { catalog, probe } from '../../src/sources/catalog.js';
import { runProcess } from '../../src/sources/local.js';
import { runProbe, type ProbeRun } from '../../src/sources/probe-runner.js';
import type { ExecOptions, ExecResult, Transport } from '../../src/sources/transport.js';
import { fixtureDir, snapshotOf } from '../helpers/fixtures.js';

const PIN = '/tmp/r2bpf/tc/globals/cilium_lb4_services_v2';
const recorded = (name: string) => readFileSync(path.join(fixtureDir('cilium-maps'), name), 'utf8');
const SHOWN = ['0.0.0.0:30080/TCP', '10.96.0.10:53/TCP', '10.96.0.10:53/UDP'];

async function labTable(): Promise<{ snapshot: NodeSnapshot; table: LbTable }> {
  const snapshot = await snapshotOf('lab-cilium');
  return { snapshot, table: snapshot.lb!.value! };
}

/** A transport answering `bpftool -j batch file -` with `stdout` (exit `code`), and map dumps from the lab fixture; records what it ran. */
function answering(stdout: string, code: number, feedsStdin = true): { transport: Transport; ran: string[]; stdins: string[] } {
  const ran: string[] = [];
  const stdins: string[] = [];
  const transport: Transport = {
    kind: 'local',
    label: 'test',
    ...(feedsStdin ? { feedsStdin: true } : {}),
    exec: async (argv: readonly string[], o: ExecOptions): Promise<ExecResult> => {
      ran.push(argv.join(' '));
      if (o.stdin !== undefined) stdins.push(o.stdin);
      const dump = argv.includes('dump') ? readFileSync(path.join(fixtureDir('lab-cilium'), 'probes', `${argv[argv.length - 1]!.includes('lb6') ? 'bpf-lb6-services' : 'bpf-lb4-services'}.stdout`), 'utf8') : null;
      return { argv: [...argv], stdout: dump ?? stdout, stderr: '', exitCode: dump !== null ? 0 : code, startedAt: '2026-12-06T00:00:00.000Z', durationMs: 1 };
    },
    close: async () => undefined,
  };
  return { transport, ran, stdins };
}

/** The full read's runs of the service maps, as the session remembers them. */
function digestsOf(): ServiceMapDigests {
  const digests = new ServiceMapDigests();
  const run = (id: string, pin: string, file: string): ProbeRun => ({ id, argv: ['bpftool', '-j', 'map', 'dump', 'pinned', pin], status: 'ok', result: { argv: [], stdout: readFileSync(path.join(fixtureDir('lab-cilium'), 'probes', file), 'utf8'), stderr: '', exitCode: 0, startedAt: '', durationMs: 1 } });
  digests.remember([run('bpf-lb4-services', PIN, 'bpf-lb4-services.stdout'), run('bpf-lb6-services', PIN.replace('lb4', 'lb6'), 'bpf-lb6-services.stdout')]);
  return digests;
}

describe('the lookups of the frontends on screen', () => {
  it('are every entry the dump holds for those frontends (slot 0 and each backend slot), keyed as bpftool reads them', async () => {
    const { table } = await labTable();
    const plan = lookupPlan(table, SHOWN, { v4: PIN })!;
    // From the dump itself: an entry is a frontend's when its key is the frontend's but for the slot (bytes 6–7).
    const dump = JSON.parse(recorded('../lab-cilium/probes/bpf-lb4-services.stdout')) as { key: string[]; value: string[] }[];
    const hex = (b: readonly string[]) => b.map((x) => x.slice(2)).join(' ');
    const frontendOf = (key: readonly string[]) => hex([...key.slice(0, 6), ...key.slice(8)]);
    const slot0 = dump.filter((e) => e.key[6] === '0x00' && e.key[7] === '0x00');
    const shownKeys = new Set(slot0.filter((e) => SHOWN.includes(formatFrontend(table.services.find((s) => s.raw.startsWith(`key ${hex(e.key)} `))!.frontend))).map((e) => frontendOf(e.key)));
    const want = dump.filter((e) => shownKeys.has(frontendOf(e.key)));
    expect(shownKeys.size).toBe(3);
    expect(new Set(plan.lines)).toEqual(new Set(want.map((e) => `map lookup pinned ${PIN} key hex ${hex(e.key)}`)));
    expect(plan.lines.length).toBe(want.length);
    expect(new Map(plan.expected.map((e) => [e.key, e.value]))).toEqual(new Map(want.map((e) => [hex(e.key), hex(e.value)])));
    // Every line is one the catalog lets through.
    expect(plan.lines.every((l) => probe(LOOKUP_PROBE).stdinLine!.test(l))).toBe(true);
    expect(plan.lines.map((l) => `${l}\n`).join('')).toBe(recorded('bpf-lb-lookup.stdin'));
  });

  it('what bpftool printed on the real kernel for them is as read; a changed, missing, cut or odd answer is not', async () => {
    const { table } = await labTable();
    const plan = lookupPlan(table, SHOWN, { v4: PIN })!;
    const out = recorded('bpf-lb-lookup.stdout');
    expect(lookupsUnchanged(plan, out)).toBe(true);
    // A key the map no longer holds: bpftool stops there (`"output":null`, exit 254).
    expect(lookupsUnchanged(plan, recorded('bpf-lb-lookup-missing.stdout'))).toBe(false);
    const answers = JSON.parse(out) as { command: string[]; output: { key: string[]; value: string[] } }[];
    const edited = structuredClone(answers);
    edited[4]!.output.value[4] = edited[4]!.output.value[4] === '0x03' ? '0x04' : '0x03';
    expect(lookupsUnchanged(plan, JSON.stringify(edited))).toBe(false);
    expect(lookupsUnchanged(plan, JSON.stringify(answers.slice(0, -1)))).toBe(false);
    expect(lookupsUnchanged(plan, JSON.stringify([...answers.slice(1), answers[0]]))).toBe(false);
    expect(lookupsUnchanged(plan, out.slice(0, out.length - 10))).toBe(false);
    expect(lookupsUnchanged(plan, '')).toBe(false);
    expect(lookupsUnchanged(plan, JSON.stringify(answers.map((a) => ({ ...a, output: { ...a.output, value: 'x' } }))))).toBe(false);
  });

  it('are none (the maps dumped as before) for a table not read from the maps, a frontend not in it, an unknown pin or entry text, or too many', async () => {
    const { table } = await labTable();
    expect(lookupPlan({ ...table, source: 'bpf-lb-list' }, SHOWN, { v4: PIN })).toBeNull();
    expect(lookupPlan({ ...table, statesFrom: 'service-list' }, SHOWN, { v4: PIN })).toBeNull();
    expect(lookupPlan(table, [...SHOWN, '10.1.2.3:80/TCP'], { v4: PIN })).toBeNull();
    expect(lookupPlan(table, SHOWN, { v6: PIN })).toBeNull();
    // Two services with one frontend text (a table joined from two sources): not decidable by key.
    expect(lookupPlan({ ...table, services: [...table.services, table.services.find((s) => formatFrontend(s.frontend) === SHOWN[1])!] }, SHOWN, { v4: PIN })).toBeNull();
    const odd = { ...table, services: table.services.map((s, i) => (i === 0 ? { ...s, raw: `${s.raw}\nkey zz` } : s)) };
    expect(lookupPlan(odd, table.services.map((s) => formatFrontend(s.frontend)), { v4: PIN })).toBeNull();
    const many = { ...table, services: table.services.map((s, i) => (i === 0 ? { ...s, raw: Array.from({ length: MAX_LOOKUPS + 1 }, () => s.raw.split('\n')[0]).join('\n') } : s)) };
    expect(lookupPlan(many, [formatFrontend(table.services[0]!.frontend)], { v4: PIN })).toBeNull();
    expect(lookupPlan(table, [], { v4: PIN })).toEqual({ lines: [], expected: [] });
  });
});

describe('the LB pane refresh (serviceMapsRefresh)', () => {
  it('runs one bpftool with the lookups on stdin, and keeps the snapshot while they are as read', async () => {
    const { snapshot } = await labTable();
    const { transport, ran, stdins } = answering(recorded('bpf-lb-lookup.stdout'), 0);
    const got = await serviceMapsRefresh({ transport, params: {}, snapshot, digests: digestsOf(), frontends: SHOWN });
    expect(ran).toEqual(['bpftool -j batch file -']);
    expect(stdins).toEqual([recorded('bpf-lb-lookup.stdin')]);
    expect(got.kind).toBe('chain');
    if (got.kind !== 'chain') return;
    expect(got.snapshot.lb).toBe(snapshot.lb);
    expect(got.snapshot.probes.filter((p) => p.id === LOOKUP_PROBE)).toHaveLength(1);
  });

  it('asks for the full read when an entry on screen changed or is gone', async () => {
    const { snapshot } = await labTable();
    const { transport } = answering(recorded('bpf-lb-lookup-missing.stdout'), 254);
    const got = await serviceMapsRefresh({ transport, params: {}, snapshot, digests: digestsOf(), frontends: SHOWN });
    expect(got.kind === 'full' && got.reason).toBe(`${LOOKUP_PROBE}: failed`);
    const edited = recorded('bpf-lb-lookup.stdout').replace('"value":["0x00","0x00","0x00","0x00","0x02"', '"value":["0x00","0x00","0x00","0x00","0x03"');
    expect(edited).not.toBe(recorded('bpf-lb-lookup.stdout'));
    const other = answering(edited, 0);
    const changed = await serviceMapsRefresh({ transport: other.transport, params: {}, snapshot, digests: digestsOf(), frontends: SHOWN });
    expect(changed.kind === 'full' && changed.reason).toBe(`${LOOKUP_PROBE}: changed`);
  });

  it('dumps the service maps as before on a transport that cannot feed stdin, or with no frontends given', async () => {
    const { snapshot } = await labTable();
    for (const [feeds, frontends] of [
      [false, SHOWN],
      [true, undefined],
    ] as const) {
      const { transport, ran } = answering('', 0, feeds);
      const got = await serviceMapsRefresh({ transport, params: {}, snapshot, digests: digestsOf(), ...(frontends ? { frontends } : {}) });
      expect(ran.every((a) => /^bpftool -j map dump pinned \S+cilium_lb[46]_services_v2$/.test(a))).toBe(true);
      expect(ran.length).toBe(2);
      expect(got.kind).toBe('chain');
    }
  });
});

describe('a probe that reads stdin', () => {
  const spec = () => probe(LOOKUP_PROBE);
  const line = `map lookup pinned ${PIN} key hex 0a 60 00 0a 00 35 00 00 06 00 00 00`;

  it('runs nothing for a line its pattern refuses, a transport that cannot feed stdin, or no lines', async () => {
    const { transport, ran } = answering('[]', 0);
    await expect(runProbe(transport, spec(), {}, catalog(), { stdin: [`${line}; rm -rf /`] })).rejects.toThrow(/does not match/);
    await expect(runProbe(transport, spec(), {}, catalog(), { stdin: [line.replace('lookup', 'update')] })).rejects.toThrow(/does not match/);
    await expect(runProbe(transport, spec(), {}, catalog(), {})).rejects.toThrow(/given none/);
    await expect(runProbe(answering('[]', 0, false).transport, spec(), {}, catalog(), { stdin: [line] })).rejects.toThrow(/cannot feed stdin/);
    await expect(runProbe(transport, probe('uname'), {}, catalog(), { stdin: [line] })).rejects.toThrow(/declares no stdin/);
    expect(ran).toEqual([]);
    const ok = await runProbe(transport, spec(), {}, catalog(), { stdin: [line, line] });
    expect(ok.status).toBe('ok');
  });

  it('the local transport writes the lines to the command and closes its stdin', async () => {
    const r = await runProcess(['cat'], 10_000, Date.now, undefined, 'a line\nanother\n');
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe('a line\nanother\n');
    // A command that exits without reading it: no crash, its own exit.
    const early = await runProcess(['true'], 10_000, Date.now, undefined, 'x\n'.repeat(200_000));
    expect(early.exitCode).toBe(0);
  });
});
