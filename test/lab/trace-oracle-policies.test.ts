/**
 * Step mode against the kernel for Service traffic policies, on the lab scenario plus
 * three Services (test/lab/trace-oracle-scenario.ts, own lab prefix): NodePort with
 * `externalTrafficPolicy: Local` (only this node's endpoints), the same with no local
 * endpoint (outside traffic dropped), and `sessionAffinity: ClientIP` (first connection
 * random, the next one sticks — iptables `-m recent` lists read from /proc, nft affinity
 * sets from the ruleset).
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { labAvailable } from '../helpers/lab.js';
import { httpProbe, labDown, labUp, sendHttp, type LabHandle, type ProxyMode } from './lab.js';
import { POLICY_SCENARIO } from './trace-oracle-scenario.js';
import { readXtRecent, runOracleScenario, type OracleScenario } from './trace-oracle-kit.js';

const PREFIX = 'nstp-';
const canRun = labAvailable(['ip', 'nft', 'iptables-restore', 'curl', 'dnsmasq', 'conntrack', 'sysctl']);

const svc = (name: string) => POLICY_SCENARIO.services.find((s) => s.name === name)!;
const pod = (key: string) => POLICY_SCENARIO.pods.find((p) => p.key === key)!;
const nodeIP = POLICY_SCENARIO.nodeIPs[0]!;
const local = svc('web-local');
const remoteOnly = svc('web-remote-only');
const sticky = svc('web-sticky');
const ep = (key: string) => `${pod(key).ip}:8080`;

/** Names of the `-m recent` lists in the node's iptables rules. */
function recentNames(rulesText: string): string[] {
  return [...new Set([...rulesText.matchAll(/-m recent --name (\S+)/g)].map((m) => m[1]!))];
}

let stickySince = 0;

const SCENARIOS: readonly OracleScenario[] = [
  {
    name: 'externalTrafficPolicy Local: outside traffic reaches only this node\'s endpoints',
    entry: 'external',
    match: { src: POLICY_SCENARIO.outsideIP, dst: nodeIP, proto: 'tcp', dport: local.ports[0]!.nodePort! },
    send: async (lab, m) => {
      await sendHttp(lab.names.outside, `http://${m.dst}:${m.dport}/`, 6, { timeoutMs: 2000 });
    },
    endpoints: [ep('web-1'), ep('web-2')],
    never: [ep('web-3')],
    // The client address is kept (no masquerade) for ETP=Local.
    check: ({ result, report }) => expect(result.final.src, report).toBe(POLICY_SCENARIO.outsideIP),
    verdict: { iptables: 'forwarded', nftables: 'forwarded' },
  },
  {
    name: 'externalTrafficPolicy Local without a local endpoint: outside traffic is dropped',
    entry: 'external',
    match: { src: POLICY_SCENARIO.outsideIP, dst: nodeIP, proto: 'tcp', dport: remoteOnly.ports[0]!.nodePort! },
    send: async (lab, m) => {
      const p = await httpProbe(lab.names.outside, `http://${m.dst}:${m.dport}/`, { timeoutMs: 1000 });
      expect(p.exitCode).toBe(28); // timed out: the kernel dropped it
    },
    // kubernetes#66354: the drop says why, quoting kube-proxy's DROP rule comment (iptables) or its
    // no-endpoint-nodeports map element (nftables, issue 19).
    check: ({ result, report }, mode) =>
      expect(result.verdict.reason, report).toContain(mode === 'iptables'
        ? '("default/web-remote-only:http has no local endpoints")'
        : 'drop ("default/web-remote-only:http" in @no-endpoint-nodeports: has no local endpoints (traffic policy Local))'),
    verdict: { iptables: 'dropped', nftables: 'dropped' },
  },
  {
    name: 'sessionAffinity ClientIP: the first connection is a random choice',
    entry: 'pod',
    match: { src: pod('client').ip, dst: sticky.clusterIP, proto: 'tcp', dport: 80 },
    send: async (lab, m) => {
      stickySince = Date.now();
      await sendHttp(lab.podNs('client'), `http://${m.dst}:${m.dport}/`, 1, { timeoutMs: 2000 });
    },
    extend: async (lab, input) => ({ ...input, xtRecent: await readXtRecent(lab.names.node, recentNames(readFileSync(lab.rulesFile, 'utf8')), null) }),
    check: ({ result, report }) => expect(result.steps.some((s) => s.branches), report).toBe(true),
    verdict: { iptables: 'forwarded', nftables: 'forwarded' },
  },
  {
    name: 'sessionAffinity ClientIP: the next connection sticks to the same endpoint',
    entry: 'pod',
    match: { src: pod('client').ip, dst: sticky.clusterIP, proto: 'tcp', dport: 80 },
    send: async (lab, m) => {
      await sendHttp(lab.podNs('client'), `http://${m.dst}:${m.dport}/`, 1, { timeoutMs: 2000 });
    },
    extend: async (lab, input) => {
      // The lists hold the client since the previous scenario: at most this long ago.
      const age = Math.ceil((Date.now() - stickySince) / 1000) + 1;
      return { ...input, xtRecent: await readXtRecent(lab.names.node, recentNames(readFileSync(lab.rulesFile, 'utf8')), age) };
    },
    check: ({ result, report }) => expect(result.steps.some((s) => s.branches && s.matched), report).toBe(false),
    verdict: { iptables: 'forwarded', nftables: 'forwarded' },
  },
];

describe.each<ProxyMode>(['iptables', 'nftables'])('traffic policies against nft monitor trace, %s mode', (mode) => {
  let lab: LabHandle;

  beforeAll(async () => {
    if (!canRun) return;
    lab = await labUp(mode, { prefix: PREFIX, scenario: POLICY_SCENARIO });
  });
  afterAll(async () => {
    if (canRun) await labDown({ prefix: PREFIX, scenario: POLICY_SCENARIO });
  });

  it.runIf(canRun).each(SCENARIOS)('$name', async (sc) => {
    await runOracleScenario(lab, mode, sc);
  });
});
