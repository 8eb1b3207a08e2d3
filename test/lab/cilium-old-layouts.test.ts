/**
 * Issue 19 item 2, on real BPF maps: a node of the Cilium 1.9/1.10 era (cilium#13243) pins its
 * backends as `cilium_lb4_backends` (2-byte backend ids; ports in network order) and stores
 * rev-NAT ids big-endian. The lab creates those maps with bpftool in that layout, nodescope's
 * own probes read them through the local transport (the v3 and v2 pin names fail, the old one
 * answers), and the walk must reach the right backend port. A backend map whose value size no
 * Cilium version used must make the walk `unknown`, never "backend not in map: dropped".
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { labAvailable } from '../helpers/lab.js';
import { fixtureDir } from '../helpers/fixtures.js';
import { ensureBpffs } from './cilium-maps.js';
import { buildSnapshot } from '../../src/collect/build-snapshot.js';
import { LocalTransport } from '../../src/sources/local.js';
import { ReplayTransport } from '../../src/sources/replay.js';
import { loadSnapshot } from '../../src/collect/session.js';
import { runProbes, type ProbeRun } from '../../src/sources/probe-runner.js';
import { traceFromSnapshot } from '../../src/trace/choose-engine.js';

/** This file's own names: the pin directory below carries it (no netns is made here). */
const PREFIX = 'nsol-';
const ROOT = `/sys/fs/bpf/nodescope-lab-${PREFIX}old/tc/globals`;
const available = labAvailable(['bpftool']);

function run(argv: string[]): string {
  const r = spawnSync(argv[0]!, argv.slice(1), { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${argv.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

const hex = (bytes: number[]) => bytes.map((b) => b.toString(16).padStart(2, '0')).join(' ');
const be16 = (n: number) => [n >> 8, n & 255];
const le16 = (n: number) => [n & 255, n >> 8];
const le32 = (n: number) => [n & 255, (n >> 8) & 255, (n >> 16) & 255, n >>> 24];
const ip4 = (ip: string) => ip.split('.').map(Number);

/** One map: name, key/value sizes in bytes, entries as byte arrays. */
interface OldMap {
  readonly name: string;
  readonly key: number;
  readonly value: number;
  readonly entries: readonly [number[], number[]][];
}

/**
 * 10.96.12.34:80/TCP, rev-NAT id 258 (0x0102: a little-endian reading would be 513), two active
 * backends 10.244.0.23:8080 and 10.244.0.31:8080 with ids 7 and 9 (8080 = 0x1f90).
 */
function oldEraMaps(backendValueSize: 8 | 10): OldMap[] {
  const vip = ip4('10.96.12.34');
  const svcKey = (slot: number) => [...vip, ...be16(80), ...le16(slot), 6, 0, 0, 0];
  // lb4_service (1.9): backend_id u32 (slot ≥1) / 0, count u16, rev_nat_index be16, flags, flags2, pad u16
  const svcValue = (backendId: number, count: number) => [...le32(backendId), ...le16(count), ...be16(258), 0x00, 0x00, 0, 0];
  const beValue = (ip: string, port: number) => [...ip4(ip), ...be16(port), 6, 0, ...(backendValueSize === 10 ? [0, 0] : [])];
  return [
    { name: 'cilium_lb4_services_v2', key: 12, value: 12, entries: [[svcKey(0), svcValue(0, 2)], [svcKey(1), svcValue(7, 0)], [svcKey(2), svcValue(9, 0)]] },
    { name: 'cilium_lb4_backends', key: 2, value: backendValueSize, entries: [[le16(7), beValue('10.244.0.23', 8080)], [le16(9), beValue('10.244.0.31', 8080)]] },
    { name: 'cilium_lb4_reverse_nat', key: 2, value: 6, entries: [[be16(258), [...vip, ...be16(80)]]] },
  ];
}

function createMaps(maps: readonly OldMap[]): void {
  ensureBpffs('/sys/fs/bpf');
  removeMaps();
  mkdirSync(ROOT, { recursive: true });
  const work = mkdtempSync(path.join(os.tmpdir(), 'nodescope-oldmaps-'));
  try {
    const cmds: string[] = [];
    for (const m of maps) {
      const pin = path.join(ROOT, m.name);
      run(['bpftool', 'map', 'create', pin, 'type', 'hash', 'key', String(m.key), 'value', String(m.value), 'entries', '64', 'name', m.name]);
      for (const [k, v] of m.entries) cmds.push(`map update pinned ${pin} key hex ${hex(k)} value hex ${hex(v)}`);
    }
    writeFileSync(path.join(work, 'batch'), `${cmds.join('\n')}\n`);
    run(['bpftool', 'batch', 'file', path.join(work, 'batch')]);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

function removeMaps(): void {
  try {
    for (const f of readdirSync(ROOT)) rmSync(path.join(ROOT, f), { force: true });
  } catch {
    // nothing pinned yet
  }
  for (let dir = ROOT; dir.startsWith('/sys/fs/bpf/'); dir = path.dirname(dir)) {
    try {
      rmdirSync(dir);
    } catch {
      break;
    }
  }
}

/** lab-cilium's node (addresses, routes, API objects) with its LB map runs replaced by live reads of ROOT. */
async function snapshotWithLiveMaps() {
  const replay = new ReplayTransport(fixtureDir('lab-cilium'));
  const { runs } = await loadSnapshot({ transport: replay, live: false, apiText: replay.apiText()! });
  const ids = ['bpf-lb4-services', 'bpf-lb4-backends', 'bpf-lb4-reverse-nat'];
  const live: ProbeRun[] = await runProbes(new LocalTransport(), { ids, params: { bpfRoot: ROOT } });
  const others = runs.filter((r) => !/^bpf-lb[46]-/.test(r.id));
  return { live, snapshot: buildSnapshot({ runs: [...others, ...live], apiText: replay.apiText()!, source: { kind: 'local', label: 'local', live: true }, capturedAt: runs[0]!.result.startedAt }) };
}

describe.skipIf(!available)('cilium#13243: Cilium 1.9/1.10 LB maps (2-byte backend ids, big-endian ports and rev-NAT ids) in the kernel', () => {
  afterAll(() => removeMaps());

  it('the probe falls back to the old pin name, decodes it and the walk reaches the backend port', async () => {
    createMaps(oldEraMaps(8));
    const { live, snapshot } = await snapshotWithLiveMaps();
    const backends = live.find((r) => r.id === 'bpf-lb4-backends')!;
    expect(backends.status).toBe('ok');
    expect(backends.argv.at(-1)).toBe(`${ROOT}/cilium_lb4_backends`);
    expect(snapshot.lb?.diagnostics.filter((d) => d.severity !== 'info')).toEqual([]);
    const svc = snapshot.lb?.value?.services.find((s) => s.frontend.ip === '10.96.12.34');
    expect(svc).toMatchObject({ id: 258, count: 2, frontend: { port: 80, protocol: 'TCP' } });
    expect(snapshot.lb?.value?.revNats).toEqual([{ id: 258, ip: '10.96.12.34', port: 80 }]);
    const r = traceFromSnapshot(snapshot, { to: '10.96.12.34:80/tcp', entry: 'pod', from: '10.244.0.23', endpoint: '10.244.0.31:8080' });
    expect(r.verdict.kind).toBe('forwarded');
    expect(r.verdict.endpoint).toBe('10.244.0.31:8080');
  });

  it('a backend map in no known layout: the walk is `unknown`, never "backend not in map: dropped"', async () => {
    createMaps(oldEraMaps(10));
    const { snapshot } = await snapshotWithLiveMaps();
    expect(snapshot.lb?.value?.unreadable?.map((u) => [u.map, u.entries])).toEqual([['cilium_lb4_backends', 2]]);
    const r = traceFromSnapshot(snapshot, { to: '10.96.12.34:80/tcp', entry: 'pod', from: '10.244.0.23' });
    expect(r.verdict.kind).toBe('unknown');
    expect(r.verdict.reason).toMatch(/cilium_lb4_backends holds 2 entries no known layout decodes/);
    expect(r.steps.map((s) => s.reason).join('\n')).not.toMatch(/dropped/);
  });
});
