import { describe, expect, it } from 'vitest';
import { COMPARE_MODES, compareModes, countLbTable, modeTotal, programmedBy, type ModeCount } from '../../src/analysis/compare-modes.js';
import { ciliumTableOf, coveringPrefix, kubeProxyInputOf } from '../../src/analysis/compare-modes-input.js';
import { generateIptablesRestore } from '../../src/analysis/kubeproxy-iptables.js';
import { generateNftablesRules } from '../../src/analysis/kubeproxy-nftables.js';
import type { KubeProxyInput, ScenarioService } from '../../src/analysis/lab-scenario-types.js';
import { formatFrontend } from '../../src/model/cilium.js';
import type { NodeSnapshot } from '../../src/model/snapshot.js';
import { parseK8sObjects } from '../../src/parsers/k8s-objects.js';
import { apiObjectsText } from '../lab/api-objects.js';
import { LAB_CILIUM_SCENARIO, labCiliumTable } from '../lab/cilium-scenario.js';
import { LAB_SCENARIO } from '../lab/scenario.js';
import { snapshotOf } from '../helpers/fixtures.js';

/** A ClusterIP Service with `n` ready endpoints on port 8080, changed by `overrides`. */
function service(n: number, overrides: Partial<ScenarioService> = {}): ScenarioService {
  return {
    namespace: 'demo',
    name: 'svc',
    type: 'ClusterIP',
    clusterIP: '10.96.7.7',
    ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: 8080 }],
    endpoints: Array.from({ length: n }, (_, i) => ({ ip: `10.244.0.${10 + i}`, nodeName: 'lab-node', ready: true, serving: true, terminating: false })),
    ...overrides,
  };
}

function input(services: ScenarioService[]): KubeProxyInput {
  return { nodeName: 'lab-node', nodeIPs: ['192.168.49.2'], clusterCIDR: '10.244.0.0/16', serviceCIDRs: ['10.96.0.0/12'], services };
}

function diff(a: ModeCount, b: ModeCount) {
  return { chains: a.chains - b.chains, rules: a.rules - b.rules, elements: a.elements - b.elements };
}

/** The lab-iptables snapshot with the API objects of another scenario (same node). */
async function withApi(text: string): Promise<NodeSnapshot> {
  const s = await snapshotOf('lab-iptables');
  return { ...s, api: { value: parseK8sObjects(text, 'test').value, diagnostics: [], probe: null, error: null } };
}

describe('what the node has equals what the generators write for its own mode', () => {
  it.each([
    ['lab-iptables', 'iptables'],
    ['lab-nftables', 'nftables'],
    ['lab-cilium', 'cilium'],
  ] as const)('%s: the %s count of the node is the generated one, chains, rules and elements alike', async (capture, mode) => {
    const cmp = compareModes(await snapshotOf(capture))!;
    const actual = cmp.actual.find((a) => a.mode === mode);
    expect(actual).toBeDefined();
    expect(actual!.count).toEqual(cmp.predicted[mode]);
    expect(modeTotal(actual!.count)).toBeGreaterThan(0);
  });

  it('the nftables count is of distinct set keys, as the kernel keeps them (kube-dns adds 10.96.0.10 to cluster-ips twice)', async () => {
    const cmp = compareModes(await snapshotOf('lab-nftables'))!;
    const dns = cmp.perService.find((p) => p.service === 'kube-system/kube-dns')!;
    // two service-ips elements (udp, tcp) and one cluster-ips element
    expect(dns.cost.nftables.elements).toBe(3);
  });
});

describe('the generators are fed what kube-proxy would read', () => {
  it('the API objects of the iptables capture give the lab scenario back: the same iptables-restore text', async () => {
    const s = await snapshotOf('lab-iptables');
    const { input } = kubeProxyInputOf(s, s.api!.value!);
    const options = { nfacct: false, randomFully: true };
    expect(generateIptablesRestore(input, options)).toBe(generateIptablesRestore(LAB_SCENARIO, options));
  });

  it('the nftables capture gives the same nft transaction (Service CIDR read from its cluster-ips-check rule)', async () => {
    const s = await snapshotOf('lab-nftables');
    const { input, notes } = kubeProxyInputOf(s, s.api!.value!);
    expect(generateNftablesRules(input)).toBe(generateNftablesRules(LAB_SCENARIO));
    expect(notes).toEqual([]);
  });

  it('the Cilium capture gives the LB table the lab wrote (same frontends, same backend slots and states)', async () => {
    const s = await snapshotOf('lab-cilium');
    const { input } = kubeProxyInputOf(s, s.api!.value!);
    const shape = (t: ReturnType<typeof labCiliumTable>) =>
      t.services.map((svc) => `${formatFrontend(svc.frontend)} ${svc.type} ${svc.count}+${svc.qcount} ${svc.slots.map((x) => `${x.backend!.ip}:${x.backend!.port}/${x.backend!.state}`).join(',')}`).sort();
    expect(shape(ciliumTableOf(input))).toEqual(shape(labCiliumTable()));
    expect(LAB_CILIUM_SCENARIO.services.length).toBeGreaterThan(0);
  });

  it('says what it inferred when the node does not show it (a Cilium node has no kube-proxy rules)', async () => {
    const s = await snapshotOf('lab-cilium');
    const { input, notes } = kubeProxyInputOf(s, s.api!.value!);
    expect(input.clusterCIDR).toBe(coveringPrefix(LAB_SCENARIO.nodes.map((n) => n.podCIDR)));
    expect(notes.find((n) => n.kind === 'cluster-cidr-inferred')).toMatchObject({ params: { cidr: input.clusterCIDR }, text: expect.stringContaining('cluster CIDR inferred') });
  });
});

describe('growth per Service and per endpoint', () => {
  it('base + every Service alone = all Services, in every mode', async () => {
    const cmp = compareModes(await snapshotOf('lab-iptables'))!;
    for (const m of COMPARE_MODES) {
      const sum = cmp.perService.reduce((n, p) => n + modeTotal(p.cost[m]), modeTotal(cmp.base[m]));
      expect(sum, m).toBe(modeTotal(cmp.predicted[m]));
    }
  });

  it('one more endpoint costs one chain and three rules in iptables, one chain and two rules in nftables, one slot and one backend in Cilium', () => {
    const one = programmedBy(input([service(2)]));
    const two = programmedBy(input([service(3)]));
    expect(diff(two.iptables, one.iptables)).toEqual({ chains: 1, rules: 3, elements: 0 });
    expect(diff(two.nftables, one.nftables)).toEqual({ chains: 1, rules: 2, elements: 0 });
    expect(diff(two.cilium, one.cilium)).toEqual({ chains: 0, rules: 0, elements: 2 });
  });

  it('a NodePort adds Cilium frontends (wildcard and node address) and an nftables service-nodeports element', () => {
    const cluster = programmedBy(input([service(2)]));
    const nodePort = programmedBy(input([service(2, { type: 'NodePort', ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: 8080, nodePort: 30080 }] })]));
    expect(nodePort.cilium.names.filter((n) => n.includes(':30080'))).toEqual(['0.0.0.0:30080/TCP (NodePort)', '192.168.49.2:30080/TCP (NodePort)']);
    expect(nodePort.nftables.elements - cluster.nftables.elements).toBe(1);
    expect(nodePort.iptables.names.some((n) => n.startsWith('KUBE-EXT-'))).toBe(true);
  });

  it('the Cilium entry count is what the map encoder writes', () => {
    const inp = input([service(3), service(1, { name: 'other', clusterIP: '10.96.7.8' })]);
    expect(countLbTable(ciliumTableOf(inp)).elements).toBe(programmedBy(inp).cilium.elements);
    expect(countLbTable(ciliumTableOf(inp)).maps).toEqual(programmedBy(inp).cilium.maps);
  });

  it('headless and ExternalName Services program nothing', async () => {
    const scenario = { ...LAB_SCENARIO, services: LAB_SCENARIO.services.filter((svc) => svc.clusterIP === 'None') };
    const cmp = compareModes(await withApi(apiObjectsText(scenario)))!;
    expect(cmp.services).toBe(0);
    for (const m of COMPARE_MODES) expect(cmp.predicted[m]).toEqual(cmp.base[m]);
  });

  it('limits the per-Service rows to the one asked for', async () => {
    const cmp = compareModes(await snapshotOf('lab-iptables'), { service: 'default/web' })!;
    expect(cmp.perService.map((p) => p.service)).toEqual(['default/web']);
    expect(cmp.perService[0]!.names.iptables.filter((n) => n.startsWith('KUBE-SEP-'))).toHaveLength(3);
  });
});

describe('without API objects', () => {
  it('there is nothing to compare', async () => {
    const s = await snapshotOf('lab-iptables');
    expect(compareModes({ ...s, api: null })).toBeNull();
  });
});

describe('coveringPrefix', () => {
  it.each([
    [['10.244.0.0/24', '10.244.1.0/24'], '10.244.0.0/23'],
    [['10.96.0.10', '10.96.12.34', '10.96.50.5'], '10.96.0.0/18'],
    [['192.168.1.7'], '192.168.1.7/32'],
    [['10.0.0.0/8', '192.168.0.0/16'], '0.0.0.0/0'],
    [['fd00::1'], undefined],
    [[], undefined],
  ])('%j → %s', (items, expected) => {
    expect(coveringPrefix(items)).toBe(expected);
  });
});
