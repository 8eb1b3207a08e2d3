/**
 * Issue 19's iptables items against the real kernel, in one network namespace of its own:
 * both iptables backends loaded (iptables-legacy-restore and iptables-nft-restore), a real
 * `iptables-save` run with stderr merged while legacy tables exist, real xt_recent lists
 * after real traffic, real ipsets. Each snapshot is read through nodescope's own probes
 * (LocalTransport in the namespace), as `nodescope --netns` reads a node.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseIptablesSave } from '../../src/parsers/iptables-save.js';
import { showHead } from '../../src/report/header.js';
import { traceText } from '../../src/report/trace.js';
import { loadSnapshot } from '../../src/collect/session.js';
import { LocalTransport } from '../../src/sources/local.js';
import { walkPacket } from '../../src/trace/engine.js';
import { traceInputFromSnapshot } from '../../src/trace/input.js';
import { parsePacketArgs } from '../../src/trace/packet.js';
import { labAvailable } from '../helpers/lab.js';
import { nsExec, nsExecOk, run } from './exec.js';

const PREFIX = 'nsfi-';
const NS = `${PREFIX}node`;
const canRun = labAvailable(['ip', 'iptables-legacy-restore', 'iptables-nft-restore', 'iptables-nft-save', 'iptables-legacy-save', 'ipset', 'grep', 'curl', 'conntrack']);

const VIP = '10.96.0.1';
const NFT_EP = '10.0.0.5';
const LEGACY_EP = '10.0.0.6';

/** kube-proxy-shaped nat rules sending the VIP to `ep` (the two backends disagree on it). */
const natRules = (ep: string, sep: string) =>
  ['*nat', ':OUTPUT ACCEPT [0:0]', ':KUBE-SERVICES - [0:0]', `:${sep} - [0:0]`,
    '-A OUTPUT -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
    `-A KUBE-SERVICES -d ${VIP}/32 -p tcp -m comment --comment "default/kubernetes:https cluster IP" -m tcp --dport 443 -j ${sep}`,
    `-A ${sep} -p tcp -m comment --comment "default/kubernetes:https" -m tcp -j DNAT --to-destination ${ep}:6443`, 'COMMIT', ''].join('\n');

async function snapshot() {
  return (await loadSnapshot({ transport: new LocalTransport({ netns: NS }), live: true })).snapshot;
}

describe.skipIf(!canRun)('issue 19 iptables faults on the real kernel', () => {
  beforeAll(async () => {
    await run(['ip', 'netns', 'del', NS]);
    await run(['ip', 'netns', 'add', NS]).then((r) => expect(r.exitCode).toBe(0));
    await nsExecOk(NS, ['ip', 'link', 'set', 'lo', 'up']);
    await nsExecOk(NS, ['ip', 'link', 'add', 'd0', 'type', 'veth', 'peer', 'name', 'd1']);
    await nsExecOk(NS, ['ip', 'addr', 'add', '10.0.0.1/24', 'dev', 'd0']);
    await nsExecOk(NS, ['ip', 'link', 'set', 'd0', 'up']);
    await nsExecOk(NS, ['ip', 'link', 'set', 'd1', 'up']);
    await nsExecOk(NS, ['ip', 'route', 'add', 'default', 'via', '10.0.0.254', 'dev', 'd0']);
    await nsExecOk(NS, ['iptables-nft-restore'], { input: natRules(NFT_EP, 'KUBE-SEP-NFTNFTNFTNFTNFTN') });
    await nsExecOk(NS, ['iptables-legacy-restore'], { input: natRules(LEGACY_EP, 'KUBE-SEP-LEGACYLEGACYLEGA') });
  }, 60_000);
  afterAll(async () => {
    if (canRun) await run(['ip', 'netns', 'del', NS]);
  });

  it('kubernetes#109811: both backends loaded for real — the walk is ambiguous, with each candidate and tagged steps', async () => {
    const snap = await snapshot();
    expect(snap.iptables?.value?.generator?.backend).toBe('nf_tables');
    expect(snap.iptablesLegacy?.value?.generator?.backend).toBe('legacy');
    const input = traceInputFromSnapshot(snap);
    const spec = parsePacketArgs({ to: `${VIP}:443/tcp`, entry: 'host' });
    const r = walkPacket(input, spec);
    const text = traceText(r);
    expect(r.verdict.kind, text).toBe('ambiguous');
    expect(r.candidates?.map((c) => c.result.verdict.endpoint).sort(), text).toEqual([`${NFT_EP}:6443`, `${LEGACY_EP}:6443`]);
    // The kernel picked one of them (registration order): its conntrack entry's reply source is a candidate.
    await nsExec(NS, ['curl', '-s', '--max-time', '1', `https://${VIP}:443/`]);
    const ct = await nsExec(NS, ['conntrack', '-L', '-d', VIP, '-p', 'tcp']);
    const chosen = /dst=10\.96\.0\.1 sport=\d+ dport=443 .*?src=(\S+) dst=\S+ sport=(\d+)/.exec(ct.stdout);
    expect(chosen, ct.stdout + ct.stderr).not.toBeNull();
    expect(r.candidates?.map((c) => c.result.verdict.endpoint), ct.stdout).toContain(`${chosen![1]}:${chosen![2]}`);
    expect(text).toMatch(/output legacy nat\/KUBE-SERVICES #1/);
    expect(traceText(r.candidates![1]!.result)).toMatch(/output nft nat\/KUBE-SERVICES #1/);
    const legacyOnly = walkPacket(input, spec, { branch: { kind: 'endpoint', endpoint: `${LEGACY_EP}:6443` } });
    expect(legacyOnly.verdict.endpoint).toBe(`${LEGACY_EP}:6443`);
  }, 60_000);

  it('kubernetes#78443: a real iptables-save with stderr merged (2>&1) while legacy tables exist', async () => {
    const merged = await nsExec(NS, ['sh', '-c', 'iptables-nft-save -c 2>&1']);
    expect(merged.stdout).toContain('# Warning: iptables-legacy tables present');
    const whole = parseIptablesSave(merged.stdout, 'iptables-save', { family: 'ipv4' });
    expect(whole.diagnostics).toEqual([]);
    expect(whole.value.legacyTablesPresent).toBe(true);
    // Older iptables wrote the warning after the dump: into stdout's first block, mid-line.
    const out = await nsExec(NS, ['iptables-nft-save', '-c']);
    const at = out.stdout.indexOf(`${NFT_EP}:6443`) + NFT_EP.length;
    const cut = parseIptablesSave(out.stdout.slice(0, at) + out.stderr + out.stdout.slice(at), 'iptables-save', { family: 'ipv4' });
    expect(cut.diagnostics.map((d) => d.code)).toEqual(['stderr-merged', 'stderr-merged']);
    expect(cut.value.tables.flatMap((t) => t.chains.map((c) => c.name))).not.toContain(':6443');
    expect(cut.value.tables.flatMap((t) => t.chains.map((c) => c.name)).some((n) => /^\d+$/.test(n) || n.startsWith(':'))).toBe(false);
    // Read by the probe (stderr apart): the warning is in its stderr, and still a note.
    const snap = await snapshot();
    expect(snap.probes.find((p) => p.id === 'iptables-save')?.stderrTail).toContain('iptables-legacy tables present');
    expect(showHead(snap).notes?.join('\n')).toContain('iptables-legacy tables present');
  }, 60_000);

  it('-m recent: real xt_recent lists after real traffic are read by the probe and evaluated by the walk', async () => {
    await nsExecOk(NS, ['iptables-nft', '-A', 'INPUT', '-p', 'tcp', '--dport', '7777', '-m', 'recent', '--name', 'NSFI-SEEN', '--set']);
    await nsExecOk(NS, ['iptables-nft', '-A', 'INPUT', '-p', 'tcp', '--dport', '7778', '-m', 'recent', '--name', 'NSFI-SEEN', '--rcheck', '--seconds', '600', '-j', 'REJECT', '--reject-with', 'tcp-reset']);
    await nsExec(NS, ['curl', '-s', '--max-time', '1', 'http://10.0.0.1:7777/']); // refused, but INPUT saw its SYN
    const list = await nsExec(NS, ['cat', '/proc/net/xt_recent/NSFI-SEEN']);
    expect(list.stdout).toContain('src=10.0.0.1');
    const snap = await snapshot();
    expect(snap.xtRecent?.value?.lists['NSFI-SEEN']?.map((e) => e.address)).toEqual(['10.0.0.1']);
    expect(snap.xtRecent?.value?.hz).not.toBeNull();
    const r = walkPacket(traceInputFromSnapshot(snap), parsePacketArgs({ to: '10.0.0.1:7778/tcp', entry: 'host' }));
    expect(r.verdict.kind, traceText(r)).toBe('rejected');
    expect(r.verdict.rejectWith).toBe('tcp-reset');
    // From another source the list has no entry: the rule does not hold.
    const other = walkPacket(traceInputFromSnapshot(snap), parsePacketArgs({ from: '127.0.0.1', to: '127.0.0.1:7778/tcp', entry: 'host' }));
    expect(other.verdict.kind, traceText(other)).toBe('local');
  }, 60_000);

  it('-m set: a real ipset is read from ipset list and the walk matches its member only', async () => {
    await nsExecOk(NS, ['ipset', 'create', 'NSFI-CLUSTER-IP', 'hash:ip,port']);
    await nsExecOk(NS, ['ipset', 'add', 'NSFI-CLUSTER-IP', '10.0.0.9,tcp:80']);
    await nsExecOk(NS, ['iptables-nft', '-A', 'OUTPUT', '-m', 'set', '--match-set', 'NSFI-CLUSTER-IP', 'dst,dst', '-j', 'REJECT']);
    try {
      const snap = await snapshot();
      expect(snap.ipset?.value?.find((s) => s.name === 'NSFI-CLUSTER-IP')?.members?.map((m) => m.element)).toEqual(['10.0.0.9,tcp:80']);
      const input = traceInputFromSnapshot(snap);
      const hit = walkPacket(input, parsePacketArgs({ to: '10.0.0.9:80/tcp', entry: 'host' }));
      expect(hit.verdict.kind, traceText(hit)).toBe('rejected');
      expect(hit.verdict.rejectWith).toBe('icmp-port-unreachable');
      const miss = walkPacket(input, parsePacketArgs({ to: '10.0.0.9:81/tcp', entry: 'host' }));
      expect(miss.verdict.kind, traceText(miss)).toBe('sent');
    } finally {
      await nsExec(NS, ['iptables-nft', '-D', 'OUTPUT', '-m', 'set', '--match-set', 'NSFI-CLUSTER-IP', 'dst,dst', '-j', 'REJECT']);
      await nsExec(NS, ['ipset', 'destroy', 'NSFI-CLUSTER-IP']);
    }
  }, 60_000);
});
