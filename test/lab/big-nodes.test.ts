/**
 * Lab (issue 23, big nodes live): what nodescope runs on a node is what the node's mode
 * needs. `capture` of the iptables lab (iptables-nft tables only) runs no whole nft listing,
 * and says so in its manifest; of the nftables lab, no iptables-save (no iptables-nft table
 * there), only kube-proxy's table listed. A live refresh with a chain open re-reads that
 * chain alone while nothing changed, the whole ruleset once a rule is added to it (a new
 * Service), and at the periodic full read for a rule added elsewhere. Every
 * command run is recorded by wrapping the real netns transport (the kernel answers).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { captureBundle } from '../../src/collect/capture.js';
import { nftTableNames } from '../../src/collect/probe-plan.js';
import { Session } from '../../src/collect/session.js';
import { findChain } from '../../src/model/iptables.js';
import type { BundleManifest } from '../../src/sources/bundle.js';
import { LocalTransport } from '../../src/sources/local.js';
import { runProbes } from '../../src/sources/probe-runner.js';
import type { ExecOptions, ExecResult, Transport } from '../../src/sources/transport.js';
import { labAvailable } from '../helpers/lab.js';
import { sessionUntil } from '../helpers/session-wait.js';
import { labDown, labUp, nsExec, nsExecOk, type LabHandle } from './lab.js';
import { LB_MAPS_FOCUS } from '../../src/collect/map-refresh.js';
import { formatFrontend } from '../../src/model/cilium.js';
import { sendHttp } from './traffic.js';

const PREFIX = 'nsbn-';
const labOk = labAvailable(['iptables-save', 'iptables', 'nft', 'conntrack']);
const ciliumOk = labAvailable(['iptables-restore', 'nft', 'conntrack', 'bpftool', 'mount', 'umount']);

/** Packets per rule of `chain` as iptables itself counts them (`iptables -t nat -L CHAIN -v -x -n`). */
async function iptablesOwnPackets(netns: string, chain: string): Promise<bigint[]> {
  const out = await nsExec(netns, ['iptables', '-t', 'nat', '-L', chain, '-v', '-x', '-n']);
  return out.stdout.split('\n').slice(2).filter((l) => l.trim() !== '').map((l) => BigInt(l.trim().split(/\s+/)[0]!));
}

/**
 * The netns transport, recording every argv it runs (without the `ip netns exec` prefix) and
 * the stdin it fed. `feedsStdin` false: a transport that cannot (kubectl-debug's).
 */
function recording(netns: string, feedsStdin = false): { transport: Transport; ran: string[][]; stdins: string[] } {
  const inner = new LocalTransport({ netns });
  const ran: string[][] = [];
  const stdins: string[] = [];
  const transport: Transport = {
    kind: inner.kind,
    label: inner.label,
    ...(feedsStdin ? { feedsStdin: true } : {}),
    exec: (argv: readonly string[], o: ExecOptions): Promise<ExecResult> => {
      ran.push([...argv]);
      if (o.stdin !== undefined) stdins.push(o.stdin);
      return inner.exec(argv, o);
    },
    close: () => inner.close(),
  };
  return { transport, ran, stdins };
}

const joined = (ran: readonly string[][]) => ran.map((a) => a.join(' '));
const dirs: string[] = [];

async function capture(lab: LabHandle): Promise<{ manifest: BundleManifest; ran: string[] }> {
  const { transport, ran } = recording(lab.names.node);
  const dir = mkdtempSync(path.join(tmpdir(), 'nodescope-bignodes-'));
  dirs.push(dir);
  const manifest = await captureBundle({ transport, live: true, apiText: readFileSync(lab.apiObjectsPath, 'utf8'), apiOrigin: 'api.json' }, dir, { dns: false });
  return { manifest, ran: joined(ran) };
}


/** One refresh, awaited: the commands it ran and what it read. */
async function refreshOnce(session: Session, ran: string[][], all = false): Promise<string[]> {
  const from = ran.length;
  session.refreshNow(all);
  await sessionUntil(session, () => !session.getState().refreshing);
  return joined(ran.slice(from));
}

afterAll(async () => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  if (labOk) await labDown({ prefix: PREFIX });
}, 60_000);

describe.runIf(labOk)('big nodes: the probe plan and the focused refresh on the lab', () => {
  it('capture of the iptables lab runs no whole nft listing, and its manifest says what it skipped and what each probe cost', async () => {
    const lab = await labUp('iptables', { prefix: PREFIX });
    const { manifest, ran } = await capture(lab);
    expect(ran).not.toContain('nft -j list ruleset');
    expect(ran).not.toContain('nft list ruleset');
    expect(ran).toContain('nft list flowtables');
    expect(ran).not.toContain('nft list tables');
    const ids = manifest.probes.map((p) => p.id);
    expect(ids).toContain('iptables-save');
    expect(ids).not.toContain('nft-json');
    expect(ids).not.toContain('nft-text');
    expect(manifest.skipped?.find((s) => s.id === 'nft-json')?.reason).toMatch(/only iptables-nft tables/);
    expect(manifest.skipped?.map((s) => s.id)).toEqual(expect.arrayContaining(['nft-json', 'nft-text', 'nft-json-kube-proxy']));
    const save = manifest.probes.find((p) => p.id === 'iptables-save')!;
    expect(save.status).toBe('ok');
    expect(save.durationMs).toBeGreaterThanOrEqual(0);
    expect(typeof save.cpuMs).toBe('number');
  }, 180_000);

  it('the table names read by the cheap check (`nft list flowtables`) are the ones `nft list tables` names, an empty table too', async () => {
    const lab = await labUp('iptables', { prefix: PREFIX });
    const ns = lab.names.node;
    await nsExecOk(ns, ['nft', 'add', 'table', 'inet', 'bignodes-ft']);
    try {
      const { transport } = recording(ns);
      const [check] = await runProbes(transport, { ids: ['nft-tables'] });
      const listed = (await nsExecOk(ns, ['nft', 'list', 'tables'])).stdout;
      const names = listed.split('\n').filter((l) => l.startsWith('table ')).map((l) => l.slice('table '.length).trim());
      expect(names).toEqual(expect.arrayContaining(['ip nat', 'inet bignodes-ft']));
      expect(nftTableNames(check)?.sort()).toEqual(names.sort());
    } finally {
      await nsExecOk(ns, ['nft', 'delete', 'table', 'inet', 'bignodes-ft']);
    }
  }, 180_000);

  it('capture of the nftables lab lists kube-proxy\'s table alone and runs no iptables-save', async () => {
    const lab = await labUp('nftables', { prefix: PREFIX });
    const { manifest, ran } = await capture(lab);
    expect(ran.filter((a) => a.startsWith('iptables-save') || a.startsWith('ip6tables-save'))).toEqual([]);
    expect(ran).toContain('nft -j list table ip kube-proxy');
    expect(ran).not.toContain('nft -j list ruleset');
    const ids = manifest.probes.map((p) => p.id);
    expect(ids).toContain('nft-json-kube-proxy');
    expect(manifest.probes.find((p) => p.id === 'nft-json-kube-proxy')!.status).toBe('ok');
    expect(manifest.skipped?.find((s) => s.id === 'iptables-save')?.reason).toMatch(/no IPv4 table/);
  }, 180_000);

  it('a refresh re-reads only the open chain while nothing changed, and the whole ruleset after a rule is added', async () => {
    const lab = await labUp('iptables', { prefix: PREFIX });
    const { transport, ran } = recording(lab.names.node);
    const session = new Session({ transport, live: true, apiText: readFileSync(lab.apiObjectsPath, 'utf8'), intervalMs: 3_600_000, fullReadEvery: 3 });
    try {
      await session.start();
      session.focus({ ruleset: 'iptables', table: 'nat', chain: 'KUBE-SERVICES' });
      const quiet = await refreshOnce(session, ran);
      expect(session.lastRefreshKind()).toBe('chain');
      expect(quiet.sort()).toEqual(['iptables -t nat -S KUBE-SERVICES -v', 'nft list flowtables']);
      expect(session.getState().error).toBeNull();

      // What kube-proxy does for a new Service: a new chain, and a rule in KUBE-SERVICES jumping to it.
      await nsExecOk(lab.names.node, ['iptables', '-t', 'nat', '-N', 'KUBE-SVC-BIGNODESTEST0001']);
      await nsExecOk(lab.names.node, ['iptables', '-t', 'nat', '-A', 'KUBE-SVC-BIGNODESTEST0001', '-j', 'RETURN']);
      await nsExecOk(lab.names.node, ['iptables', '-t', 'nat', '-I', 'KUBE-SERVICES', '1', '-d', '10.96.99.99/32', '-p', 'tcp', '--dport', '81', '-j', 'KUBE-SVC-BIGNODESTEST0001']);
      const changed = await refreshOnce(session, ran);
      expect(session.lastRefreshKind()).toBe('full');
      expect(changed).toContain('iptables-save -c');
      const ruleset = session.getState().snapshot!.iptables!.value!;
      expect(findChain(ruleset, 'nat', 'KUBE-SVC-BIGNODESTEST0001')?.rules).toHaveLength(1);
      expect(findChain(ruleset, 'nat', 'KUBE-SERVICES')!.rules[0]!.raw).toContain('10.96.99.99');

      // A rule added to a chain not on screen: the open chain alone until the periodic full read (every 3rd here).
      await nsExecOk(lab.names.node, ['iptables', '-t', 'nat', '-A', 'KUBE-SVC-BIGNODESTEST0001', '-j', 'RETURN']);
      expect(await refreshOnce(session, ran)).not.toContain('iptables-save -c');
      expect(session.lastRefreshKind()).toBe('chain');
      expect(await refreshOnce(session, ran)).not.toContain('iptables-save -c');
      expect(await refreshOnce(session, ran)).not.toContain('iptables-save -c');
      expect(await refreshOnce(session, ran)).toContain('iptables-save -c');
      expect(session.lastRefreshKind()).toBe('full');
      expect(findChain(session.getState().snapshot!.iptables!.value!, 'nat', 'KUBE-SVC-BIGNODESTEST0001')?.rules).toHaveLength(2);
      expect(session.getState().fullReadAt).toBe(session.getState().dataAt);
    } finally {
      await session.stop();
    }
  }, 180_000);
  it('a refresh of a per-Service chain reads that chain alone, and its counters are the ones iptables shows after real traffic', async () => {
    const lab = await labUp('iptables', { prefix: PREFIX });
    const { transport, ran } = recording(lab.names.node);
    const session = new Session({ transport, live: true, apiText: readFileSync(lab.apiObjectsPath, 'utf8'), intervalMs: 3_600_000 });
    try {
      await session.start();
      const nat = () => session.getState().snapshot!.iptables!.value!;
      const web = findChain(nat(), 'nat', 'KUBE-SERVICES')!.rules.find((r) => r.raw.includes('default/web:http cluster IP'))!;
      const chain = /-j (KUBE-SVC-\S+)/.exec(web.raw)![1]!;
      session.focus({ ruleset: 'iptables', table: 'nat', chain });
      const tally = await sendHttp(lab.podNs('client'), 'http://10.96.12.34/', 8);
      expect(tally.failures).toBe(0);
      const read = await refreshOnce(session, ran);
      expect(session.lastRefreshKind()).toBe('chain');
      // Not KUBE-SERVICES (~10,000 rules on a big node): the open chain's listing and the table-name check.
      expect(read.sort()).toEqual([`iptables -t nat -S ${chain} -v`, 'nft list flowtables']);
      const shown = findChain(nat(), 'nat', chain)!.rules.map((r) => r.counters!.packets);
      expect(shown).toEqual(await iptablesOwnPackets(lab.names.node, chain));
      expect(shown.reduce((a, b) => a + b, 0n)).toBeGreaterThanOrEqual(8n);
      // The probe's node CPU is known (the cost rule stretches on it): far from a full read's.
      const probe = session.getState().snapshot!.probes.find((p) => p.id === 'iptables-chain')!;
      expect(probe.cpuMs).toBeTypeOf('number');
    } finally {
      await session.stop();
    }
  }, 180_000);

  it('on the nftables lab a refresh of kube-proxy\'s counterless chain runs the check alone; a chain with counters is re-read; a rewrite shows at the periodic full read, a new table at once', async () => {
    const lab = await labUp('nftables', { prefix: PREFIX });
    const { transport, ran } = recording(lab.names.node);
    const session = new Session({ transport, live: true, apiText: readFileSync(lab.apiObjectsPath, 'utf8'), intervalMs: 3_600_000, fullReadEvery: 3 });
    const services = () => session.getState().snapshot!.nft!.value!.tables.find((t) => t.family === 'ip' && t.name === 'kube-proxy')!.chains.find((c) => c.name === 'services')!;
    try {
      await session.start();
      expect(services().rules.every((r) => !r.counters)).toBe(true);
      session.focus({ ruleset: 'nft', table: 'ip kube-proxy', chain: 'services' });
      const readAt = session.getState().dataAt;
      const quiet = await refreshOnce(session, ran);
      expect(session.lastRefreshKind()).toBe('check');
      expect(quiet).toEqual(['nft list flowtables']);
      // Nothing of the chain was read: the data is as old as the full read.
      expect(session.getState().dataAt).toBe(readAt);
      // The `r` key reads everything at once, the slow table too; then the check alone again.
      expect(await refreshOnce(session, ran, true)).toContain('nft -j list table ip kube-proxy');
      expect(session.lastRefreshKind()).toBe('full');
      expect(await refreshOnce(session, ran)).toEqual(['nft list flowtables']);

      // A rule written into the open chain: unseen by the check, shown by the periodic full read (every 3rd here).
      await nsExecOk(lab.names.node, ['nft', 'insert', 'rule', 'ip', 'kube-proxy', 'services', 'ip', 'daddr', '10.96.99.99', 'tcp', 'dport', '81', 'drop']);
      expect(await refreshOnce(session, ran)).toEqual(['nft list flowtables']);
      expect(await refreshOnce(session, ran)).toEqual(['nft list flowtables']);
      expect(await refreshOnce(session, ran)).toContain('nft -j list table ip kube-proxy');
      expect(session.lastRefreshKind()).toBe('full');
      expect(JSON.stringify(services().rules[0])).toContain('10.96.99.99');

      // A chain whose rules count is re-read by itself, and a rewrite of it calls the full read at once.
      await nsExecOk(lab.names.node, ['nft', 'add', 'chain', 'ip', 'kube-proxy', 'bignodes-counted']);
      await nsExecOk(lab.names.node, ['nft', 'add', 'rule', 'ip', 'kube-proxy', 'bignodes-counted', 'counter', 'accept']);
      for (let i = 0; i < 3; i++) expect(await refreshOnce(session, ran)).toEqual(['nft list flowtables']);
      expect(await refreshOnce(session, ran)).toContain('nft -j list table ip kube-proxy');
      session.focus({ ruleset: 'nft', table: 'ip kube-proxy', chain: 'bignodes-counted' });
      expect((await refreshOnce(session, ran)).sort()).toEqual(['nft -j list chain ip kube-proxy bignodes-counted', 'nft list flowtables']);
      expect(session.lastRefreshKind()).toBe('chain');
      await nsExecOk(lab.names.node, ['nft', 'add', 'rule', 'ip', 'kube-proxy', 'bignodes-counted', 'counter', 'drop']);
      expect(await refreshOnce(session, ran)).toContain('nft -j list table ip kube-proxy');

      // A table that came: the check sees it at the next refresh, even on a counterless chain.
      session.focus({ ruleset: 'nft', table: 'ip kube-proxy', chain: 'services' });
      await nsExecOk(lab.names.node, ['nft', 'add', 'table', 'inet', 'bignodes-new']);
      expect(await refreshOnce(session, ran)).toContain('nft -j list table ip kube-proxy');
      expect(session.lastRefreshKind()).toBe('full');
    } finally {
      await session.stop();
      await nsExecOk(lab.names.node, ['nft', 'delete', 'table', 'inet', 'bignodes-new']).catch(() => undefined);
    }
  }, 180_000);
});

describe.runIf(ciliumOk)('big nodes: the LB pane\'s refresh on the Cilium lab (real BPF maps)', () => {
  it('looks up the entries of the frontends on screen in one bpftool while they are as read, and reads every LB map once one changed', async () => {
    const lab = await labUp('cilium', { prefix: PREFIX });
    const { transport, ran, stdins } = recording(lab.names.node, true);
    const root = lab.bpfRoot!;
    const pin = `${root}/cilium_lb4_services_v2`;
    const session = new Session({ transport, live: true, apiText: readFileSync(lab.apiObjectsPath, 'utf8'), intervalMs: 3_600_000, params: { bpfRoot: root } });
    try {
      await session.start();
      const services = session.getState().snapshot!.lb!.value!.services;
      // Two frontends with backend slots on screen: their slot 0 and every backend slot are looked up.
      const shown = services.filter((s) => s.slots.length > 0).slice(0, 2);
      expect(shown.length).toBe(2);
      const frontends = shown.map((s) => formatFrontend(s.frontend));
      session.focus({ ...LB_MAPS_FOCUS, frontends });
      const quiet = await refreshOnce(session, ran);
      expect(session.lastRefreshKind()).toBe('chain');
      expect(quiet).toEqual(['bpftool -j batch file -']);
      const lines = stdins[stdins.length - 1]!.trimEnd().split('\n');
      expect(lines.length).toBe(shown.reduce((n, s) => n + 1 + s.slots.length, 0));
      expect(lines.every((l) => l.startsWith(`map lookup pinned ${pin} key hex `))).toBe(true);

      // A change off screen (another frontend's slot 0 rewritten): not seen by the lookups.
      const dump = () => nsExecOk(lab.names.node, ['bpftool', '-j', 'map', 'dump', 'pinned', pin]).then((r) => JSON.parse(r.stdout) as { key: string[]; value: string[] }[]);
      const hex = (b: readonly string[]) => b.map((x) => x.replace(/^0x/, ''));
      const keyOf = (line: string) => line.slice(line.indexOf(' key hex ') + ' key hex '.length);
      const onScreen = new Set(lines.map(keyOf));
      const entries = await dump();
      const elsewhere = entries.find((e) => !onScreen.has(hex(e.key).join(' ')) && e.key[6] === '0x00' && e.key[7] === '0x00')!;
      const bumped = (v: readonly string[]) => [...hex(v).slice(0, 10), (Number.parseInt(hex(v)[10]!, 16) ^ 1).toString(16).padStart(2, '0'), ...hex(v).slice(11)];
      await nsExecOk(lab.names.node, ['bpftool', 'map', 'update', 'pinned', pin, 'key', 'hex', ...hex(elsewhere.key), 'value', 'hex', ...bumped(elsewhere.value)]);
      expect(await refreshOnce(session, ran)).toEqual(['bpftool -j batch file -']);
      expect(session.lastRefreshKind()).toBe('chain');

      // An entry on screen changed (slot 0's value: the update cilium-agent makes when a backend comes or goes).
      const first = entries.find((e) => hex(e.key).join(' ') === keyOf(lines[0]!))!;
      await nsExecOk(lab.names.node, ['bpftool', 'map', 'update', 'pinned', pin, 'key', 'hex', ...hex(first.key), 'value', 'hex', ...bumped(first.value)]);
      const changed = await refreshOnce(session, ran);
      expect(session.lastRefreshKind()).toBe('full');
      expect(changed).toContain(`bpftool -j map dump pinned ${root}/cilium_lb4_backends_v3`);
      expect(changed).toContain(`bpftool -j map dump pinned ${pin}`);
      // The full read's table holds the maps as they are now: the lookups agree with it again.
      expect(await refreshOnce(session, ran)).toEqual(['bpftool -j batch file -']);
      expect(session.lastRefreshKind()).toBe('chain');

      // A backend slot on screen gone (bpftool stops at the missing key): the full read.
      const slotLine = lines.find((l) => keyOf(l).split(' ').slice(6, 8).join(' ') !== '00 00')!;
      await nsExecOk(lab.names.node, ['bpftool', 'map', 'delete', 'pinned', pin, 'key', 'hex', ...keyOf(slotLine).split(' ')]);
      expect(await refreshOnce(session, ran)).toContain(`bpftool -j map dump pinned ${pin}`);
      expect(session.lastRefreshKind()).toBe('full');
    } finally {
      await session.stop();
    }
  }, 240_000);

  it('re-dumps the service maps alone while they print the same, and every LB map once one changed', async () => {
    const lab = await labUp('cilium', { prefix: PREFIX });
    const { transport, ran } = recording(lab.names.node);
    const root = lab.bpfRoot!;
    const session = new Session({ transport, live: true, apiText: readFileSync(lab.apiObjectsPath, 'utf8'), intervalMs: 3_600_000, params: { bpfRoot: root } });
    const slots = () => session.getState().snapshot!.lb!.value!.services.reduce((n, s) => n + 1 + s.slots.length, 0);
    try {
      await session.start();
      expect(session.getState().snapshot!.lbMapsRead).toContain('cilium_lb4_services_v2');
      session.focus(LB_MAPS_FOCUS);
      const before = slots();
      const quiet = await refreshOnce(session, ran);
      expect(session.lastRefreshKind()).toBe('chain');
      expect(quiet).toContain(`bpftool -j map dump pinned ${root}/cilium_lb4_services_v2`);
      expect(quiet.every((c) => /^bpftool -j map dump pinned \S+\/cilium_lb[46]_services_v2$/.test(c))).toBe(true);

      // One entry of the service map gone (what cilium-agent does when a backend slot goes).
      const pin = `${root}/cilium_lb4_services_v2`;
      const entries = JSON.parse((await nsExecOk(lab.names.node, ['bpftool', '-j', 'map', 'dump', 'pinned', pin])).stdout) as { key: string[] }[];
      // A backend slot's entry (lb4_key: address 4, dport 2, backend_slot 2 bytes…), not a frontend's slot 0: hash order varies per map.
      const slot = entries.find((e) => e.key[6] !== '0x00' || e.key[7] !== '0x00')!;
      const key = slot.key.map((b) => b.replace(/^0x/, ''));
      await nsExecOk(lab.names.node, ['bpftool', 'map', 'delete', 'pinned', pin, 'key', 'hex', ...key]);
      const changed = await refreshOnce(session, ran);
      expect(session.lastRefreshKind()).toBe('full');
      expect(changed).toContain(`bpftool -j map dump pinned ${root}/cilium_lb4_backends_v3`);
      expect(changed).toContain(`bpftool -j map dump pinned ${root}/cilium_lb4_reverse_nat`);
      // The table the full read made is the maps' as they are now: the entry is gone from it.
      expect(slots()).toBe(before - 1);
      expect(await refreshOnce(session, ran)).toContain(`bpftool -j map dump pinned ${pin}`);
      expect(session.lastRefreshKind()).toBe('chain');
    } finally {
      await session.stop();
    }
  }, 180_000);
});
