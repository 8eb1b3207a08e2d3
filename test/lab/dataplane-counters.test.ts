/**
 * Lab: the counters nodescope reports for a Service are the kernel's.
 * iptables mode: after N HTTP requests through the ClusterIP, the KUBE-SEP DNAT
 * counters nodescope reports for `default/web` sum to N, and each equals what
 * `iptables-save -c` prints for that rule (read here with a plain regular expression,
 * independent of nodescope's parser). nftables mode: kube-proxy's rules carry no
 * counters, so nodescope derives per-endpoint counts from conntrack; they sum to N.
 */
import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { countByReplySource } from '../../src/analysis/conntrack-nat.js';
import { findTableByLabel, nftEndpointCounts } from '../../src/analysis/nft-view.js';
import { chainRows } from '../../src/analysis/rules-view.js';
import { iptablesServiceChains, nftServiceChains } from '../../src/analysis/service-dataplane.js';
import { loadSnapshot } from '../../src/collect/session.js';
import { LocalTransport } from '../../src/sources/local.js';
import { labAvailable } from '../helpers/lab.js';
import { labDown, labUp, nsExec, sendHttp, type LabHandle } from './lab.js';

const PREFIX = 'nsdc-';
const N = 12;
const labOk = labAvailable(['iptables-save', 'nft', 'conntrack', 'curl']);

async function snapshotOf(lab: LabHandle) {
  const transport = new LocalTransport({ netns: lab.names.node });
  const { snapshot } = await loadSnapshot({ transport, live: true, apiText: readFileSync(lab.apiObjectsPath, 'utf8') });
  return snapshot;
}

afterAll(async () => {
  if (labOk) await labDown({ prefix: PREFIX });
});

describe.runIf(labOk)('dataplane counters against the kernel', () => {
  it(`iptables: the KUBE-SEP DNAT counters of default/web sum to ${N} after ${N} requests, each as iptables-save -c says`, async () => {
    const lab = await labUp('iptables', { prefix: PREFIX });
    const before = await snapshotOf(lab);
    const tally = await sendHttp(lab.podNs('client'), 'http://10.96.12.34/', N);
    expect(tally.failures).toBe(0);
    const after = await snapshotOf(lab);

    const dnatPackets = (snapshot: typeof after) => {
      const ruleset = snapshot.iptables!.value!;
      const [svc] = iptablesServiceChains(ruleset, 'default', 'web');
      const seps = (chainRows(ruleset, 'nat', svc!.chain) ?? []).filter((r) => r.jumpTo?.startsWith('KUBE-SEP-')).map((r) => r.jumpTo!);
      return new Map(seps.map((sep) => [sep, (chainRows(ruleset, 'nat', sep) ?? []).find((r) => r.target.startsWith('DNAT'))!.packets!]));
    };
    const b = dnatPackets(before);
    const a = dnatPackets(after);
    expect(a.size).toBe(3);
    const deltas = [...a].map(([sep, p]) => p - (b.get(sep) ?? 0n));
    expect(deltas.reduce((s, d) => s + d, 0n)).toBe(BigInt(N));

    const save = (await nsExec(lab.names.node, ['iptables-save', '-c', '-t', 'nat'])).stdout;
    for (const [sep, packets] of a) {
      const line = new RegExp(`^\\[(\\d+):\\d+\\] -A ${sep} .*-j DNAT`, 'm').exec(save);
      // No traffic ran between the two reads, so the kernel's counter is still the one nodescope read.
      expect(BigInt(line![1]!), sep).toBe(packets);
    }
  });

  it(`nftables: the conntrack-derived counts of default/web's endpoints sum to ${N} after ${N} requests`, async () => {
    const lab = await labUp('nftables', { prefix: PREFIX });
    await nsExec(lab.names.node, ['conntrack', '-F']);
    const tally = await sendHttp(lab.podNs('client'), 'http://10.96.12.34/', N);
    expect(tally.failures).toBe(0);
    const snapshot = await snapshotOf(lab);
    const nft = snapshot.nft!.value!;
    const [svc] = nftServiceChains(nft, 'default', 'web');
    const table = findTableByLabel(nft, svc!.table)!;
    const counts = nftEndpointCounts(table, countByReplySource(snapshot.conntrack!.value!.entries));
    const web = [...counts].filter(([chain]) => chain.includes('-default/web/tcp/http__'));
    expect(web).toHaveLength(3);
    expect(web.reduce((s, [, n]) => s + n, 0)).toBe(N);
    // and endpoint by endpoint, as the web pods themselves counted the requests they answered
    const answered = new Map(lab.scenario.pods.filter((p) => p.role === 'web').map((p) => [p.ip, tally.byBody[p.name] ?? 0]));
    for (const [chain, n] of web) expect(n, chain).toBe(answered.get(/__([\d.]+)\/\d+$/.exec(chain)![1]!));
  });
});
