/**
 * Issue 21 on the real kernel: two Services loaded as kube-proxy would program them on the
 * lab node (rules from nodescope's generators, src/analysis/kubeproxy-*.ts) — `near` with
 * PreferSameNode hints (one endpoint on this node hinted for it, one on lab-node2 hinted for
 * lab-node2) and `itp-local` with internalTrafficPolicy Local and its only endpoint on
 * lab-node2 — in iptables and nftables mode, IPv4 and IPv6. One SYN from the client pod to
 * each ClusterIP crosses the node while `nft monitor trace` runs; nodescope's walk of the
 * same packet must equal the kernel's, reach the local endpoint for `near` and be dropped for
 * `itp-local` (what the expectation says: src/analysis/node-expectation.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateIptablesRestore } from '../../src/analysis/kubeproxy-iptables.js';
import { generateNftablesRules } from '../../src/analysis/kubeproxy-nftables.js';
import type { KubeProxyInput, LabScenario, ScenarioEndpoint, ScenarioService } from '../../src/analysis/lab-scenario-types.js';
import { expectPorts } from '../../src/analysis/node-expectation.js';
import { loadSnapshot } from '../../src/collect/session.js';
import { captureKernelTrace, type LiveTraceMatch } from '../../src/collect/live-trace.js';
import { compareLiveTrace, liveTraceText } from '../../src/report/trace-live.js';
import { LocalTransport } from '../../src/sources/local.js';
import type { TraceCommandArgs } from '../../src/trace/choose-engine.js';
import { formatKernelEvent } from '../../src/trace/kernel-trace.js';
import { labAvailable } from '../helpers/lab.js';
import { LAB_SCENARIO, labDown, labUp, loadProxyRules, nsExec, nsExecOk, type LabHandle } from './lab.js';
import { caliName } from './names.js';

const PREFIX = 'nstopo-';
const canRun = labAvailable(['ip', 'nft', 'iptables-restore', 'ip6tables-restore', 'curl', 'conntrack', 'timeout']);

const NODE = LAB_SCENARIO.nodeName;
const NODE2 = LAB_SCENARIO.nodes.find((n) => n.name !== NODE)!.name;
const pod = (key: string) => LAB_SCENARIO.pods.find((p) => p.key === key)!;
const client = pod('client');
const web1 = pod('web-1');
const web3 = pod('web-3');
const TARGET = web1.httpPort ?? 8080;
const PORT = 80;

const V6 = { client: 'fd00:10:244::9', web1: 'fd00:10:244::23', web3: 'fd00:10:244:1::15', near: 'fd00:10:96::7001', local: 'fd00:10:96::7002', gateway: (n: number) => `fd00:ffff::${n}` };

function svc(name: string, clusterIP: string, endpoints: ScenarioEndpoint[], more: Partial<ScenarioService> = {}): ScenarioService {
  return {
    namespace: 'default', name, type: 'ClusterIP', clusterIP, selector: { app: name },
    ports: [{ name: 'http', protocol: 'TCP', port: PORT, targetPort: TARGET }], trafficDistribution: 'PreferSameNode', endpoints, ...more,
  };
}
const ep = (ip: string, nodeName: string, hinted: boolean): ScenarioEndpoint =>
  ({ ip, nodeName, ready: true, serving: true, terminating: false, ...(hinted ? { nodeHints: [nodeName] } : {}) });

const nearV4 = svc('near', '10.96.70.1', [ep(web1.ip, NODE, true), ep(web3.ip, NODE2, true)]);
const localV4 = svc('itp-local', '10.96.70.2', [ep(web3.ip, NODE2, false)], { internalTrafficPolicy: 'Local', trafficDistribution: undefined });
const SCENARIO: LabScenario = { ...LAB_SCENARIO, services: [...LAB_SCENARIO.services, nearV4, localV4] };
const V6_INPUT: KubeProxyInput = {
  nodeName: NODE, family: 'IPv6', nodeIPs: [V6.gateway(1)], clusterCIDR: 'fd00:10:244::/56', serviceCIDRs: ['fd00:10:96::/112'],
  services: [
    svc('near', V6.near, [ep(V6.web1, NODE, true), ep(V6.web3, NODE2, true)]),
    svc('itp-local', V6.local, [ep(V6.web3, NODE2, false)], { internalTrafficPolicy: 'Local', trafficDistribution: undefined }),
  ],
};

/** IPv6 for one pod: its address, the node-side gateway address on its veth, routes both ways (as ipv6-trace.test.ts). */
async function addPodIpv6(lab: LabHandle, key: string, addr: string, n: number): Promise<void> {
  const podNs = lab.podNs(key);
  const cali = caliName(pod(key));
  await nsExecOk(lab.names.node, ['ip', '-6', 'addr', 'add', `${V6.gateway(n)}/128`, 'dev', cali, 'nodad']);
  await nsExecOk(lab.names.node, ['ip', '-6', 'route', 'add', `${addr}/128`, 'dev', cali]);
  await nsExecOk(podNs, ['ip', '-6', 'addr', 'add', `${addr}/128`, 'dev', 'eth0', 'nodad']);
  await nsExecOk(podNs, ['ip', '-6', 'route', 'add', `${V6.gateway(n)}/128`, 'dev', 'eth0']);
  await nsExecOk(podNs, ['ip', '-6', 'route', 'add', 'default', 'via', V6.gateway(n), 'dev', 'eth0']);
}

async function load(lab: LabHandle, argv: string[], text: string): Promise<void> {
  const r = await nsExec(lab.names.node, argv, { input: text });
  expect(r.exitCode, r.stderr).toBe(0);
}

/** One SYN from the client to `clusterIP`:80 under the kernel trace, compared with nodescope's walk. */
async function traceOnce(lab: LabHandle, family: 'ip' | 'ip6', src: string, clusterIP: string) {
  const node = lab.names.node;
  await nsExec(node, ['conntrack', '-F']);
  const transport = new LocalTransport({ netns: node });
  const { snapshot } = await loadSnapshot({ transport, live: true });
  const match: LiveTraceMatch = { l3: family, src, dst: clusterIP, proto: 'tcp', sport: null, dport: PORT };
  const host = family === 'ip6' ? `[${clusterIP}]` : clusterIP;
  const capture = await captureKernelTrace({
    transport, match, allowTrace: true, seconds: 3,
    onListening: async () => {
      await nsExec(lab.podNs('client'), ['curl', '-s', '-m', '1', '-o', '/dev/null', `http://${host}:${PORT}/`]);
    },
  });
  expect(capture.removed).toBe(true);
  const args: TraceCommandArgs = { to: `${host}:${PORT}/tcp`, from: src, ...(snapshot.nft?.value ? { nft: snapshot.nft.value } : {}) };
  return compareLiveTrace(snapshot, args, match, capture, 3);
}

function expectSameWalk(c: Awaited<ReturnType<typeof traceOnce>>): string {
  const text = liveTraceText(c);
  expect(c.rows.length, text).toBeGreaterThan(2);
  expect(c.differences, text).toEqual([]);
  expect(c.rows.filter((r) => !r.same).map((r) => formatKernelEvent((r.kernel ?? r.nodescope)!)), text).toEqual([]);
  return text;
}

describe('what the generators were given, as the expectation says it', () => {
  it('near: only the endpoint hinted for this node; itp-local: DROP', () => {
    const input = { nodeName: NODE, nodeIPs: [], services: [] };
    const [near] = expectPorts(nearV4, input);
    expect(near!.cluster.endpoints.map((e) => e.hostPort)).toEqual([`${web1.ip}:${TARGET}`]);
    expect(near!.cluster.excluded.map((e) => e.reasons[0]!.code)).toEqual(['not-hinted-node']);
    expect(expectPorts(localV4, input)[0]!.cluster.verdict).toBe('drop');
  });
});

describe.skipIf(!canRun)('PreferSameNode and iTP=Local on the real kernel: nodescope\'s walk equals nft monitor trace', () => {
  let lab: LabHandle;

  beforeAll(async () => {
    lab = await labUp('nftables', { prefix: PREFIX, scenario: SCENARIO });
    await nsExecOk(lab.names.node, ['sysctl', '-q', '-w', 'net.ipv6.conf.all.forwarding=1']);
    await addPodIpv6(lab, 'client', V6.client, 1);
    await addPodIpv6(lab, 'web-1', V6.web1, 2);
  }, 120_000);
  afterAll(async () => {
    if (canRun) await labDown({ prefix: PREFIX });
  }, 60_000);

  for (const mode of ['nftables', 'iptables'] as const) {
    describe(`${mode} mode`, () => {
      beforeAll(async () => {
        await loadProxyRules(lab.names, SCENARIO, mode);
        if (mode === 'nftables') await load(lab, ['nft', '-f', '-'], generateNftablesRules(V6_INPUT));
        else await load(lab, ['ip6tables-restore'], generateIptablesRestore(V6_INPUT, { includeJumpRules: true, nfacct: false, randomFully: true }));
      }, 60_000);

      it('IPv4 PreferSameNode: DNAT to the endpoint on this node', async () => {
        const c = await traceOnce(lab, 'ip', client.ip, nearV4.clusterIP);
        const text = expectSameWalk(c);
        expect(c.facts?.endpoint, text).toBe(`${web1.ip}:${TARGET}`);
        expect(c.walk?.verdict.kind, text).toBe('forwarded');
      }, 60_000);

      it('IPv4 iTP=Local without a local endpoint: dropped', async () => {
        const c = await traceOnce(lab, 'ip', client.ip, localV4.clusterIP);
        const text = expectSameWalk(c);
        expect(c.walk?.verdict.kind, text).toBe('dropped');
      }, 60_000);

      it('IPv6 PreferSameNode: DNAT to the endpoint on this node', async () => {
        const c = await traceOnce(lab, 'ip6', V6.client, V6.near);
        const text = expectSameWalk(c);
        expect(c.facts?.endpoint, text).toBe(`[${V6.web1}]:${TARGET}`);
        expect(text).toContain(mode === 'nftables' ? 'ip6 kube-proxy' : 'KUBE-SEP-');
        expect(c.walk?.verdict.kind, text).toBe('forwarded');
      }, 60_000);

      it('IPv6 iTP=Local without a local endpoint: dropped', async () => {
        const c = await traceOnce(lab, 'ip6', V6.client, V6.local);
        const text = expectSameWalk(c);
        expect(c.walk?.verdict.kind, text).toBe('dropped');
      }, 60_000);
    });
  }
});
