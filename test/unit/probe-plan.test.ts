/** The probe plan: cheap detection probes decide which heavy dumps a node's mode needs (issue 23). */
import { describe, expect, it } from 'vitest';
import { fallbackProbes, nftTableNames, plannedIds, planProbes } from '../../src/collect/probe-plan.js';
import { checkAskedProbes, partStageIds } from '../../src/collect/planned-runs.js';
import type { ProbeRun, ProbeStatus } from '../../src/sources/probe-runner.js';
import { catalog } from '../../src/sources/catalog.js';
import { buildSnapshot } from '../../src/collect/build-snapshot.js';
import { detectProxyMode } from '../../src/analysis/proxy-mode.js';

function run(id: string, stdout: string, status: ProbeStatus = 'ok', argv: string[] = [id]): ProbeRun {
  return { id, argv, status, result: { argv, stdout, stderr: '', exitCode: status === 'ok' ? 0 : 1, startedAt: '2026-12-05T00:00:00.000Z', durationMs: 1, ...(status === 'missing' ? { missing: true } : {}) } };
}

const runsOf = (...runs: ProbeRun[]) => new Map(runs.map((r) => [r.id, r]));
const version = run('iptables-version', 'iptables v1.8.9 (nf_tables)\n');
const addrs = (...names: string[]) => run('ip-addr', JSON.stringify(names.map((ifname) => ({ ifname }))));
const skippedIds = (plan: ReturnType<typeof planProbes>) => plan.skipped.map((s) => s.id).sort();

describe('probe plan', () => {
  it('reads `nft list tables` lines as family and name', () => {
    expect(nftTableNames(run('nft-tables', 'table ip nat\ntable ip6 kube-proxy\n\n'))).toEqual(['ip nat', 'ip6 kube-proxy']);
    expect(nftTableNames(run('nft-tables', '', 'failed'))).toBeNull();
  });

  it('reads `nft list flowtables` table headers (with any flowtable inside) as family and name', () => {
    const text = 'table ip nat {\n}\ntable inet fw {\n\tflowtable ft {\n\t\thook ingress priority filter\n\t\tdevices = { eth0 }\n\t}\n}\ntable ip6 kube-proxy {\n}\n';
    expect(nftTableNames(run('nft-tables', text))).toEqual(['ip nat', 'inet fw', 'ip6 kube-proxy']);
  });

  it('on an iptables-nft node skips the whole nft listings and the kube-proxy tables, keeps iptables-save', () => {
    const plan = planProbes(runsOf(version, run('nft-tables', 'table ip filter\ntable ip nat\ntable ip mangle\n'), addrs('lo', 'eth0'), run('bpf-pinned', '', 'failed', ['ls', '/sys/fs/bpf/tc/globals'])));
    const ids = skippedIds(plan);
    expect(ids).toEqual(expect.arrayContaining(['nft-json', 'nft-text', 'nft-json-kube-proxy', 'nft-json-kube-proxy6', 'ip6tables-save', 'ipvsadm', 'ipvsadm-stats', 'bpf-lb4-services']));
    expect(ids).not.toContain('iptables-save');
    expect(plan.skipped.find((s) => s.id === 'nft-json')!.reason).toMatch(/only iptables-nft tables/);
    expect(plannedIds(plan, partStageIds())).toEqual(expect.arrayContaining(['iptables-save', 'conntrack']));
  });

  it('on an nftables node lists kube-proxy\'s tables alone and no iptables-save of an absent table', () => {
    const plan = planProbes(runsOf(version, run('nft-tables', 'table ip kube-proxy\ntable ip6 kube-proxy\n'), addrs('lo')));
    const ids = skippedIds(plan);
    expect(ids).toEqual(expect.arrayContaining(['nft-json', 'nft-text', 'iptables-save', 'ip6tables-save']));
    expect(ids).not.toContain('nft-json-kube-proxy');
    expect(ids).not.toContain('nft-json-kube-proxy6');
    expect(plan.skipped.find((s) => s.id === 'iptables-save')!.reason).toMatch(/no IPv4 table/);
  });

  it('keeps iptables-save on an nftables node whose iptables-nft nat table exists (a mode switch half done)', () => {
    const ids = skippedIds(planProbes(runsOf(version, run('nft-tables', 'table ip kube-proxy\ntable ip nat\n'))));
    expect(ids).not.toContain('iptables-save');
    expect(ids).toContain('nft-json');
  });

  it('keeps the whole nft -j ruleset when nftables holds tables iptables-save cannot read', () => {
    const ids = skippedIds(planProbes(runsOf(version, run('nft-tables', 'table ip nat\ntable inet firewalld\n'))));
    expect(ids).not.toContain('nft-json');
    expect(ids).toContain('nft-text');
  });

  it('decides nothing from a detection probe that did not answer (a capture made before the plan)', () => {
    const ids = skippedIds(planProbes(runsOf(run('nft-tables', '', 'missing'), run('bpf-pinned', '', 'missing'))));
    expect(ids).toEqual(['nft-json-kube-proxy', 'nft-json-kube-proxy6']);
  });

  it('keeps Cilium\'s map dumps when the pin directory holds them, and ipvsadm with kube-ipvs0', () => {
    const ids = skippedIds(planProbes(runsOf(run('bpf-pinned', 'cilium_lb4_services_v2\ncilium_lb4_backends_v3\n', 'ok', ['ls', '/x']), addrs('kube-ipvs0'))));
    expect(ids.filter((id) => id.startsWith('bpf-lb') || id.startsWith('ipvsadm'))).toEqual([]);
  });

  it('never skips what --probe asks for', () => {
    const plan = planProbes(runsOf(version, run('nft-tables', 'table ip nat\n')), new Set(['nft-json']));
    expect(skippedIds(plan)).not.toContain('nft-json');
    expect(skippedIds(plan)).toContain('nft-text');
    expect(() => checkAskedProbes(['nft-json'])).not.toThrow();
    expect(() => checkAskedProbes(['nope'])).toThrow(/--probe nope/);
  });

  it('falls back to nft list ruleset text when every nft -j probe failed', () => {
    const plan = planProbes(runsOf(version, run('nft-tables', 'table ip kube-proxy\n')));
    expect(fallbackProbes(plan, runsOf(run('nft-json-kube-proxy', '', 'failed')))).toEqual(['nft-text']);
    expect(fallbackProbes(plan, runsOf(run('nft-json-kube-proxy', '{}')))).toEqual([]);
  });

  it('marks every dump heavy and every detection probe light and first-stage', () => {
    const heavy = catalog().probes.filter((p) => p.heavy).map((p) => p.id);
    expect(heavy).toEqual(expect.arrayContaining(['iptables-save', 'nft-json', 'nft-text', 'nft-json-kube-proxy', 'conntrack']));
    for (const p of catalog().probes.filter((x) => x.detect)) expect(p.heavy || p.part !== undefined || p.onDemand, p.id).toBe(false);
  });

  it('says unknown, not none, when no KUBE- chain is in iptables but nftables timed out (a big nftables node under load)', () => {
    const timedOut: ProbeRun = { ...run('nft-json', '', 'timeout'), result: { ...run('nft-json', '', 'timeout').result, timedOut: true, exitCode: null } };
    const snapshot = buildSnapshot({ runs: [run('iptables-save', '# Generated by iptables-save v1.8.9 (nf_tables) on x\n'), timedOut], source: { kind: 'local', label: 't', live: true }, capturedAt: '2026-12-05T00:00:00.000Z' });
    const mode = detectProxyMode(snapshot);
    expect(mode.mode).toBe('unknown');
    expect(mode.unconfirmed).toEqual({ reason: 'notRead', probe: 'nft-json' });
  });
});
