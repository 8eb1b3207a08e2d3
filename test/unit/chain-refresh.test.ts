/** Refreshing the chain on screen alone: the listing of one chain spliced into the ruleset, its rates, the cheap check (issue 23). */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { chainProbe, oneChainRates, rulesetCheckFingerprint, spliceIptablesChain, type ChainFocus } from '../../src/collect/chain-refresh.js';
import { focusedRefresh, nftChainWithoutCounters } from '../../src/collect/focused-refresh.js';
import type { NodeSnapshot } from '../../src/model/snapshot.js';
import { parseNftJson } from '../../src/parsers/nft-json.js';
import { findChain } from '../../src/model/iptables.js';
import { parseIptablesSave } from '../../src/parsers/iptables-save.js';
import { waitedChildrenTicks } from '../../src/sources/child-cpu.js';
import { runProbes, type ProbeRun } from '../../src/sources/probe-runner.js';
import type { ExecOptions, ExecResult, Transport } from '../../src/sources/transport.js';

const SAVE = readFileSync('fixtures/lab-iptables/probes/iptables-save.stdout', 'utf8');
const SVC = 'KUBE-SVC-CDGGSHYLG3RE2FKL';
// What `iptables -t nat -S KUBE-SVC-… -v` prints for that chain (iptables 1.8.9: `-c P B` before the target).
const listing = (p: [number, number, number, number]) => `-N ${SVC}
-A ${SVC} ! -s 10.244.0.0/16 -d 10.96.12.34/32 -p tcp -m comment --comment "default/web:http cluster IP" -m tcp --dport 80 -c ${p[0]} 0 -j KUBE-MARK-MASQ
-A ${SVC} -m comment --comment "default/web:http -> 10.244.0.23:8080" -m statistic --mode random --probability 0.33333333349 -c ${p[1]} 240 -j KUBE-SEP-HTGX6Y3VMDFRAGMF
-A ${SVC} -m comment --comment "default/web:http -> 10.244.0.31:8080" -m statistic --mode random --probability 0.50000000000 -c ${p[2]} 180 -j KUBE-SEP-QSDSUS5CRVC6GVQH
-A ${SVC} -m comment --comment "default/web:http -> 10.244.1.15:8080" -c ${p[3]} 300 -j KUBE-SEP-ETAUCAD6D4I25BHK
`;

describe('chain refresh', () => {
  const ruleset = parseIptablesSave(SAVE, 'iptables-save', { family: 'ipv4' }).value!;

  it('names the probe and parameters of the open chain; none for the legacy backend', () => {
    expect(chainProbe({ ruleset: 'iptables', table: 'nat', chain: SVC })).toEqual({ id: 'iptables-chain', params: { table: 'nat', chain: SVC } });
    expect(chainProbe({ ruleset: 'nft', table: 'ip kube-proxy', chain: 'services' })).toEqual({ id: 'nft-chain', params: { nftFamily: 'ip', nftTable: 'kube-proxy', nftChain: 'services' } });
    expect(chainProbe({ ruleset: 'iptables-legacy', table: 'nat', chain: SVC })).toBeNull();
  });

  it('splices the re-read chain in, keeps every other chain as it was, and rates its rules', () => {
    const spliced = spliceIptablesChain(ruleset, 'nat', SVC, listing([0, 14, 3, 25]), 'iptables-chain')!;
    expect(spliced.changed).toBe(false);
    const fresh = findChain(spliced.ruleset, 'nat', SVC)!;
    expect(fresh.rules.map((r) => r.counters?.packets)).toEqual([0n, 14n, 3n, 25n]);
    // Every other chain is the very object shown before.
    expect(findChain(spliced.ruleset, 'nat', 'KUBE-SERVICES')).toBe(findChain(ruleset, 'nat', 'KUBE-SERVICES'));
    expect(findChain(ruleset, 'nat', SVC)!.rules.map((r) => r.counters?.packets)).toEqual([0n, 4n, 3n, 5n]);
    const rates = oneChainRates('nat', findChain(ruleset, 'nat', SVC)!, fresh, 2);
    expect([...rates.values()]).toEqual([0, 5, 0, 10]);
    expect(rates.has(`nat/KUBE-SERVICES#0`)).toBe(false);
  });

  it('says the chain changed when a rule was added to it (a full read follows)', () => {
    const added = `${listing([0, 4, 3, 5])}-A ${SVC} -c 0 0 -j KUBE-SEP-NEWNEWNEWNEWNEW1\n`;
    expect(spliceIptablesChain(ruleset, 'nat', SVC, added, 'iptables-chain')!.changed).toBe(true);
    expect(spliceIptablesChain(ruleset, 'nat', 'KUBE-NOPE', listing([0, 0, 0, 0]), 'iptables-chain')).toBeNull();
  });

  it('fingerprints the cheap check, and knows nothing when a check probe failed', () => {
    const r = (stdout: string, status: ProbeRun['status'] = 'ok'): ProbeRun => ({ id: 'x', argv: ['x'], status, result: { argv: ['x'], stdout, stderr: '', exitCode: 0, startedAt: '', durationMs: 0 } });
    expect(rulesetCheckFingerprint([r('a'), r('b')])).toBe(rulesetCheckFingerprint([r('a'), r('b')]));
    expect(rulesetCheckFingerprint([r('a'), r('b')])).not.toBe(rulesetCheckFingerprint([r('a'), r('b\nchain c')]));
    expect(rulesetCheckFingerprint([r('a'), r('', 'failed')])).toBeNull();
  });
});

describe('probe runner', () => {
  it('never runs two heavy probes at once, and runs light ones beside them', async () => {
    let heavyInFlight = 0;
    let maxHeavy = 0;
    let lightDuringHeavy = 0;
    const heavy = new Set(['iptables-save', 'ip6tables-save', 'nft-json', 'nft-text', 'conntrack', 'iptables-legacy-save']);
    const transport: Transport = {
      kind: 'local',
      label: 'fake',
      exec: async (argv: readonly string[], _o: ExecOptions): Promise<ExecResult> => {
        const isHeavy = heavy.has(argv[0]!) || (argv[0] === 'nft' && argv.includes('ruleset')) || (argv[0] === 'conntrack' && argv[1] === '-L');
        if (isHeavy) maxHeavy = Math.max(maxHeavy, ++heavyInFlight);
        else if (heavyInFlight > 0) lightDuringHeavy++;
        await new Promise((r) => setTimeout(r, isHeavy ? 5 : 1));
        if (isHeavy) heavyInFlight--;
        return { argv, stdout: '', stderr: '', exitCode: 0, startedAt: '', durationMs: 1 };
      },
      close: async () => {},
    };
    const runs = await runProbes(transport, { ids: ['uname', 'iptables-save', 'ip6tables-save', 'nft-json', 'nft-text', 'conntrack', 'ip-addr', 'ip-route', 'conntrack-max'] });
    expect(runs.map((r) => r.id)).toEqual(['uname', 'iptables-save', 'ip6tables-save', 'nft-json', 'nft-text', 'ip-addr', 'ip-route', 'conntrack', 'conntrack-max']);
    expect(maxHeavy).toBe(1);
    expect(lightDuringHeavy).toBeGreaterThan(0);
  });

  it('reads the waited-for children\'s CPU ticks from /proc/self/stat (fields 16 and 17), command names with spaces too', () => {
    const stat = '4242 (node a) b) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 40 7 3 20 0 11 0 100 0 0';
    expect(waitedChildrenTicks(stat)).toBe(10);
    expect(waitedChildrenTicks()).toBeGreaterThanOrEqual(0);
  });
});

describe('focused refresh of an nftables chain', () => {
  const text = readFileSync('fixtures/lab-nftables/probes/nft-json.stdout', 'utf8');
  const nft = parseNftJson(text, 'nft-json');
  const snapshot = { probes: [], nft } as unknown as NodeSnapshot;
  const kubeProxy = (chain: string): ChainFocus => ({ ruleset: 'nft', table: 'ip kube-proxy', chain });
  const tables = 'table ip kube-proxy {\n}\n';
  /** A transport that answers the check with `tables` and counts what it ran. */
  function node(): { transport: Transport; ran: string[] } {
    const ran: string[] = [];
    const transport: Transport = {
      kind: 'local',
      label: 'fake',
      exec: async (argv: readonly string[]): Promise<ExecResult> => {
        ran.push(argv.join(' '));
        return { argv, stdout: argv.includes('flowtables') ? tables : '', stderr: '', exitCode: 0, startedAt: '', durationMs: 1 };
      },
      close: async () => {},
    };
    return { transport, ran };
  }
  const check: ProbeRun = { id: 'nft-tables', argv: ['nft'], status: 'ok', result: { argv: ['nft'], stdout: tables, stderr: '', exitCode: 0, startedAt: '', durationMs: 0 } };

  it('knows kube-proxy\'s chains keep no counters, and says nothing of a chain it does not hold', () => {
    expect(nftChainWithoutCounters(snapshot, kubeProxy('services'))).toBe(true);
    expect(nftChainWithoutCounters(snapshot, kubeProxy('no-such-chain'))).toBe(false);
    expect(nftChainWithoutCounters(snapshot, { ruleset: 'nft', table: 'inet other', chain: 'services' })).toBe(false);
  });

  it('runs the cheap check alone for a counterless chain and keeps the snapshot; a changed check asks for the full read', async () => {
    const { transport, ran } = node();
    const same = await focusedRefresh({ transport, params: {}, focus: kubeProxy('services'), snapshot, fingerprint: rulesetCheckFingerprint([check]), elapsedSeconds: 2 });
    expect(ran).toEqual(['nft list flowtables']);
    expect(same.kind === 'chain' && same.checkOnly && same.snapshot === snapshot).toBe(true);
    const other = await focusedRefresh({ transport, params: {}, focus: kubeProxy('services'), snapshot, fingerprint: 'an older fingerprint', elapsedSeconds: 2 });
    expect(other).toMatchObject({ kind: 'full', reason: 'tables or chains changed' });
  });
});
