/**
 * diagnose on Cilium nodes against what Cilium's agent would write (src/analysis/cilium-expected.ts):
 * the lab Cilium capture's node with API objects from a generated scenario and LB maps encoded
 * from an LB table, then decoded by nodescope's own map reader — "the API says A, the maps hold
 * B". Also IPv6 frontends on an iptables node (ip6tables) and a Cilium node (lb6).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { expectCiliumTable, type CiliumAgentOptions } from '../../src/analysis/cilium-expected.js';
import { kubeProxyInputOf } from '../../src/analysis/compare-modes-input.js';
import { diagnoseSnapshot, type Diagnosis, type Finding } from '../../src/analysis/diagnose/index.js';
import { findingMessage } from '../../src/analysis/diagnose/say.js';
import { generateIptablesRestore } from '../../src/analysis/kubeproxy-iptables.js';
import type { KubeProxyInput, LabScenario, ScenarioService } from '../../src/analysis/lab-scenario-types.js';
import type { LbTable } from '../../src/model/cilium.js';
import type { NodeSnapshot, Parsed } from '../../src/model/snapshot.js';
import { decodeCiliumLbMaps } from '../../src/parsers/bpftool-lb-decode.js';
import { encodeLbTable } from '../../src/parsers/bpftool-lb-encode.js';
import { parseIptablesSave } from '../../src/parsers/iptables-save.js';
import { parseK8sObjects } from '../../src/parsers/k8s-objects.js';
import { dualStackLbTable } from '../helpers/dual-stack.js';
import { snapshotOf } from '../helpers/fixtures.js';
import { RICH_SCENARIO, withService } from '../helpers/diagnose-scenario.js';
import { apiObjectsText } from '../lab/api-objects.js';
import { bpftoolJson } from './cilium-builders.js';

function parsed<T>(value: T): Parsed<T> {
  return { value, diagnostics: [], probe: null, error: null };
}

function findingsOf(d: Diagnosis, ref: string): readonly Finding[] {
  return d.services.find((s) => `${s.namespace}/${s.name}` === ref)?.findings ?? [];
}

function verdictOf(d: Diagnosis, ref: string): string | undefined {
  return d.services.find((s) => `${s.namespace}/${s.name}` === ref)?.verdict;
}

/** The table through the real map layouts: encoded as bpftool prints the pinned maps, decoded by nodescope. */
function throughMaps(table: LbTable): LbTable {
  const r = decodeCiliumLbMaps(encodeLbTable(table).map((m) => ({ name: m.name, text: bpftoolJson(m.entries), origin: m.name })));
  expect(r.diagnostics).toEqual([]);
  return r.value.table;
}

const tableFor = dualStackLbTable;

/** The Cilium capture's node with the API objects of `api` (and an IPv6 input) and LB maps holding `table`. */
function ciliumNode(base: NodeSnapshot, api: LabScenario, table: (s: NodeSnapshot) => LbTable, v6?: KubeProxyInput): NodeSnapshot {
  const withApi: NodeSnapshot = { ...base, api: parsed(parseK8sObjects(apiObjectsText(api, v6), 'api').value) };
  return { ...withApi, lb: parsed(throughMaps(table(withApi))) };
}

const inputOf = (s: NodeSnapshot): KubeProxyInput => kubeProxyInputOf(s, s.api!.value!).input;

const LOCAL_SCENARIO: LabScenario = {
  ...RICH_SCENARIO,
  services: [
    ...RICH_SCENARIO.services,
    { ...RICH_SCENARIO.services.find((s) => s.name === 'web')!, name: 'itp-local', type: 'ClusterIP', clusterIP: '10.96.12.44', internalTrafficPolicy: 'Local', ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: 8080 }] },
    { ...RICH_SCENARIO.services.find((s) => s.name === 'ext')!, name: 'proxied', clusterIP: '10.96.12.45', loadBalancerIPs: ['192.168.49.201'], ipModeProxyIPs: ['192.168.49.201'], externalIPs: [], ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: 8080, nodePort: 30085 }] },
  ],
};

describe('Cilium node: expected against the maps, Local policies, ipMode, flags', () => {
  let base: NodeSnapshot;
  let healthy: Diagnosis;
  beforeAll(async () => {
    base = await snapshotOf('lab-cilium');
    healthy = diagnoseSnapshot(ciliumNode(base, LOCAL_SCENARIO, (s) => expectCiliumTable(inputOf(s)).table));
  });

  it('maps written as the agent would: every Service with endpoints ok; eTP=Local with no local endpoint is an info drop; the two-scope /i entries are matched, not unexpected', () => {
    expect(healthy.header.dataplane).toBe('cilium');
    for (const name of ['web', 'web-local', 'sticky', 'ext', 'itp-local', 'proxied']) expect([name, verdictOf(healthy, `default/${name}`)]).toEqual([name, 'ok']);
    const drops = findingsOf(healthy, 'default/remote-local').filter((f) => f.code === 'local-policy-drop');
    expect(drops.map((f) => [f.frontend, f.severity])).toEqual([['0.0.0.0:30082/TCP', 'info'], ['192.168.49.2:30082/TCP', 'info']]);
    expect(healthy.services.flatMap((s) => s.findings).filter((f) => f.code === 'frontend-unexpected')).toEqual([]);
  });

  it('an agent that ignores iTP=Local (all backends, no InternalLocal flag): endpoint-extra naming why, cilium-flags-differ, degraded; nothing else changes', () => {
    const d = diagnoseSnapshot(ciliumNode(base, LOCAL_SCENARIO, (s) => {
      const wrong = inputOf(s);
      return expectCiliumTable({ ...wrong, services: wrong.services.map((x) => (x.name === 'itp-local' ? { ...x, internalTrafficPolicy: 'Cluster' as const } : x)) }).table;
    }));
    const f = findingsOf(d, 'default/itp-local');
    expect(f.filter((x) => x.code === 'endpoint-extra').map((x) => [x.frontend, x.endpoint])).toEqual([['10.96.12.44:80/TCP', '10.244.1.15:8080']]);
    expect(f.find((x) => x.code === 'endpoint-extra')!.message).toContain('iTP=Local');
    expect(f.filter((x) => x.code === 'cilium-flags-differ').map((x) => x.message)).toEqual([expect.stringContaining('lacks InternalLocal')]);
    // The same finding in Japanese: the flag names stay, the sentence is Japanese.
    const ja = f.filter((x) => x.code === 'cilium-flags-differ').map((x) => findingMessage(x, 'ja'));
    expect(ja).toEqual([expect.stringMatching(/LB エントリは InternalLocal が欠けています（.*、期待値 .*）$/)]);
    expect(verdictOf(d, 'default/itp-local')).toBe('degraded');
    for (const s of healthy.services) if (s.name !== 'itp-local') expect([s.name, verdictOf(d, `${s.namespace}/${s.name}`)]).toEqual([s.name, s.verdict]);
  });

  it('an LB IP with ipMode Proxy programmed anyway: frontend-unexpected on that address only (a node finding: the maps name no Service)', () => {
    const d = diagnoseSnapshot(ciliumNode(base, LOCAL_SCENARIO, (s) => {
      const wrong = inputOf(s);
      return expectCiliumTable({ ...wrong, services: wrong.services.map((x) => (x.name === 'proxied' ? { ...x, ipModeProxyIPs: [] } : x)) }).table;
    }));
    // The pinned maps name no Service: the extra frontend is a node finding.
    expect(d.header.nodeFindings.filter((x) => x.code === 'frontend-unexpected').map((x) => x.frontend)).toEqual(['192.168.49.201:80/TCP']);
    expect(healthy.header.nodeFindings.filter((x) => x.code === 'frontend-unexpected')).toEqual([]);
  });

  it('topology: PreferSameZone with hints; maps written with --enable-service-topology are what Cilium does with that option (info, ok), the defaults too (ok, nothing said)', () => {
    const zoned = withService(LOCAL_SCENARIO, 'web', (s: ScenarioService) => ({
      ...s,
      trafficDistribution: 'PreferSameZone',
      endpoints: s.endpoints.map((e) => ({ ...e, zone: e.nodeName === 'lab-node' ? 'zone-a' : 'zone-b', zoneHints: [e.nodeName === 'lab-node' ? 'zone-a' : 'zone-b'] })),
    }));
    const zonedNodes = { ...zoned, nodes: zoned.nodes.map((n) => ({ ...n, zone: n.name === 'lab-node' ? 'zone-a' : 'zone-b' })) };
    const on = diagnoseSnapshot(ciliumNode(base, zonedNodes, (s) => expectCiliumTable(inputOf(s), { serviceTopology: true }).table));
    expect(inputOf(ciliumNode(base, zonedNodes, () => ({ source: 'bpf-maps', services: [], backends: [], revNats: [] }))).nodeZone).toBe('zone-a');
    expect(findingsOf(on, 'default/web').filter((x) => x.code === 'cilium-expectation-undecided').map((x) => x.message)).toEqual([
      expect.stringContaining('--enable-service-topology'), expect.stringContaining('--enable-service-topology'), expect.stringContaining('--enable-service-topology'),
    ]);
    const undecidedJa = findingsOf(on, 'default/web').filter((x) => x.code === 'cilium-expectation-undecided').map((x) => findingMessage(x, 'ja'));
    // The topology rule inside the parentheses is in Japanese too, the English stays in `message`.
    for (const m of undecidedJa) expect(m).toMatch(/もう一方の場合に Cilium が書く内容と一致します: エージェントが --enable-service-topology 付きで動いているかは読めていません（付いていれば: zone-a 向けのヒントがあるもの）/);
    for (const m of undecidedJa) expect(m).not.toContain('hinted for');
    for (const f of findingsOf(on, 'default/web').filter((x) => x.code === 'cilium-expectation-undecided')) expect(f.message).toContain('(with it: hinted for zone-a)');
    expect(verdictOf(on, 'default/web')).toBe('ok');
    const off = diagnoseSnapshot(ciliumNode(base, zonedNodes, (s) => expectCiliumTable(inputOf(s), { serviceTopology: false }).table));
    expect(findingsOf(off, 'default/web').filter((x) => x.severity !== 'info')).toEqual([]);
  });
});

const V6_WEB: ScenarioService = {
  ...RICH_SCENARIO.services.find((s) => s.name === 'web')!,
  clusterIP: 'fd00:10:96::1234',
  endpoints: [
    { ip: 'fd00:10:244::23', nodeName: 'lab-node', ready: true, serving: true, terminating: false },
    { ip: 'fd00:10:244:1::15', nodeName: 'lab-node2', ready: true, serving: true, terminating: false },
  ],
};

function v6Input(services: ScenarioService[]): KubeProxyInput {
  return { nodeName: 'lab-node', family: 'IPv6', nodeIPs: ['fd00:192:168:49::2'], clusterCIDR: 'fd00:10:244::/56', serviceCIDRs: ['fd00:10:96::/112'], services };
}

describe('IPv6 frontends (dual-stack web)', () => {
  it('Cilium: the lb6 entries of the dual-stack Service are expected and compared; a missing IPv6 backend is found on the IPv6 ClusterIP', async () => {
    const base = await snapshotOf('lab-cilium');
    const v6 = v6Input([V6_WEB]);
    const good = diagnoseSnapshot(ciliumNode(base, RICH_SCENARIO, (s) => tableFor([inputOf(s), v6]), v6));
    expect(verdictOf(good, 'default/web')).toBe('ok');
    expect(findingsOf(good, 'default/web').filter((f) => f.frontend?.startsWith('['))).toEqual([]);
    const broken = diagnoseSnapshot(ciliumNode(base, RICH_SCENARIO, (s) => tableFor([inputOf(s), v6Input([{ ...V6_WEB, endpoints: V6_WEB.endpoints.slice(0, 1) }])]), v6));
    expect(findingsOf(broken, 'default/web').filter((f) => f.code === 'endpoint-missing').map((f) => [f.frontend, f.endpoint])).toContainEqual(['[fd00:10:96::1234]:80/TCP', '[fd00:10:244:1::15]:8080']);
  });

  it('iptables: ip6tables rules of the IPv6 proxier are read and compared; `[::]:port` is the NodePort on every IPv6 address; without ip6tables-save the IPv6 frontends are unknown, never ok', async () => {
    const base = await snapshotOf('lab-iptables');
    const v6 = v6Input([V6_WEB]);
    const api = parsed(parseK8sObjects(apiObjectsText(RICH_SCENARIO, v6), 'api').value);
    const ipt = (s: KubeProxyInput) => parsed(parseIptablesSave(generateIptablesRestore(s, { nfacct: false, randomFully: true }), 'iptables-save').value);
    const node: NodeSnapshot = { ...base, api, iptables: ipt(RICH_SCENARIO), ip6tables: ipt(v6), nft: null, lb: null };
    const d = diagnoseSnapshot(node);
    expect(verdictOf(d, 'default/web')).toBe('ok');
    const wrong = diagnoseSnapshot({ ...node, ip6tables: ipt(v6Input([{ ...V6_WEB, endpoints: V6_WEB.endpoints.slice(1) }])) });
    expect(findingsOf(wrong, 'default/web').filter((f) => f.code === 'endpoint-missing').map((f) => f.frontend)).toEqual(['[fd00:10:96::1234]:80/TCP', '[::]:30080/TCP']);
    const unread = diagnoseSnapshot({ ...node, ip6tables: null });
    expect(verdictOf(unread, 'default/web')).toBe('unknown');
    expect(findingsOf(unread, 'default/web').filter((f) => f.code === 'dataplane-not-read').map((f) => f.frontend)).toEqual(['[fd00:10:96::1234]:80/TCP', '[::]:30080/TCP']);
  });
});
