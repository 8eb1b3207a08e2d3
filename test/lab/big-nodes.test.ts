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
import { labDown, labUp, nsExecOk, type LabHandle } from './lab.js';

const PREFIX = 'nsbn-';
const labOk = labAvailable(['iptables-save', 'iptables', 'nft', 'conntrack']);

/** The netns transport, recording every argv it runs (without the `ip netns exec` prefix). */
function recording(netns: string): { transport: Transport; ran: string[][] } {
  const inner = new LocalTransport({ netns });
  const ran: string[][] = [];
  const transport: Transport = {
    kind: inner.kind,
    label: inner.label,
    exec: (argv: readonly string[], o: ExecOptions): Promise<ExecResult> => {
      ran.push([...argv]);
      return inner.exec(argv, o);
    },
    close: () => inner.close(),
  };
  return { transport, ran };
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

function waitFor(session: Session, predicate: () => boolean): Promise<void> {
  return new Promise((resolve) => {
    if (predicate()) return resolve();
    const off = session.subscribe(() => {
      if (predicate()) {
        off();
        resolve();
      }
    });
  });
}

/** One refresh, awaited: the commands it ran and what it read. */
async function refreshOnce(session: Session, ran: string[][], all = false): Promise<string[]> {
  const from = ran.length;
  session.refreshNow(all);
  await waitFor(session, () => !session.getState().refreshing);
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
