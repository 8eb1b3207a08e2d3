/**
 * kube-proxy's `CategorizeEndpoints` with topology (src/analysis/kubeproxy-serviceports.ts)
 * against kube-proxy's own expectations: the cases of `TestCategorizeEndpoints`
 * (kubernetes pkg/proxy/topology_test.go; the zone-hint, traffic-policy and terminating
 * cases are kept in release-1.35, where the hints annotation no longer gates them), and
 * the PreferSameNode rules of release-1.35 pkg/proxy/topology.go `topologyModeFromHints`
 * (PreferSameTrafficDistribution GA). Each case names the upstream case it mirrors.
 */
import { describe, expect, it } from 'vitest';
import type { KubeProxyInput, ScenarioEndpoint, ScenarioService } from '../../src/analysis/lab-scenario-types.js';
import { categorizeEndpoints, serviceToPorts } from '../../src/analysis/kubeproxy-serviceports.js';

interface Case {
  readonly name: string;
  readonly zone?: string;
  readonly svc?: Partial<ScenarioService>;
  readonly endpoints: readonly (Partial<ScenarioEndpoint> & { ip: string })[];
  readonly cluster: readonly string[] | null;
  readonly local: readonly string[] | null;
  readonly all?: readonly string[];
  readonly hasAny?: boolean;
}

const NODE = 'test-node';

function categorize(c: Case) {
  const service: ScenarioService = {
    namespace: 'ns', name: 'svc', type: 'ClusterIP', clusterIP: '172.30.0.1',
    ports: [{ name: 'p80', protocol: 'TCP', port: 80, targetPort: 80, ...(c.svc?.type === 'NodePort' ? { nodePort: 30080 } : {}) }],
    ...c.svc,
    endpoints: c.endpoints.map((e) => ({ ready: true, serving: e.ready ?? true, terminating: false, ...e })),
  };
  const input: KubeProxyInput = { nodeName: NODE, ...(c.zone !== undefined ? { nodeZone: c.zone } : {}), nodeIPs: [], services: [service] };
  return categorizeEndpoints(serviceToPorts(input)[0]!);
}

const hp = (eps: readonly { hostPort: string }[]) => eps.map((e) => e.hostPort).sort();
const local = (ip: string, more: Partial<ScenarioEndpoint> = {}) => ({ ip, nodeName: NODE, ...more });
const z = (ip: string, ...zones: string[]) => ({ ip, zoneHints: zones });
const ETP_LOCAL = { type: 'NodePort', externalTrafficPolicy: 'Local' } as const;

const CASES: readonly Case[] = [
  {
    name: 'normal endpoint filtering (upstream "hints enabled, hints annotation == auto")',
    zone: 'zone-a', endpoints: [z('10.1.2.3', 'zone-a'), z('10.1.2.4', 'zone-b'), z('10.1.2.5', 'zone-c'), z('10.1.2.6', 'zone-a')],
    cluster: ['10.1.2.3:80', '10.1.2.6:80'], local: null,
  },
  {
    name: 'externalTrafficPolicy: Local, topology ignored for Local endpoints',
    zone: 'zone-a', svc: ETP_LOCAL,
    endpoints: [local('10.1.2.3', { zoneHints: ['zone-a'] }), local('10.1.2.4', { zoneHints: ['zone-b'] }), z('10.1.2.5', 'zone-c'), z('10.1.2.6', 'zone-a')],
    cluster: ['10.1.2.3:80', '10.1.2.6:80'], local: ['10.1.2.3:80', '10.1.2.4:80'], all: ['10.1.2.3:80', '10.1.2.4:80', '10.1.2.6:80'],
  },
  {
    name: 'internalTrafficPolicy: Local, topology ignored for Local endpoints',
    zone: 'zone-a', svc: { type: 'NodePort', internalTrafficPolicy: 'Local' },
    endpoints: [local('10.1.2.3', { zoneHints: ['zone-a'] }), local('10.1.2.4', { zoneHints: ['zone-b'] }), z('10.1.2.5', 'zone-c'), z('10.1.2.6', 'zone-a')],
    cluster: ['10.1.2.3:80', '10.1.2.6:80'], local: ['10.1.2.3:80', '10.1.2.4:80'], all: ['10.1.2.3:80', '10.1.2.4:80', '10.1.2.6:80'],
  },
  { name: 'empty node labels', zone: undefined, endpoints: [z('10.1.2.3', 'zone-a')], cluster: ['10.1.2.3:80'], local: null },
  { name: 'empty zone label', zone: '', endpoints: [z('10.1.2.3', 'zone-a')], cluster: ['10.1.2.3:80'], local: null },
  { name: 'node in different zone, no endpoint filtering', zone: 'zone-b', endpoints: [z('10.1.2.3', 'zone-a')], cluster: ['10.1.2.3:80'], local: null },
  {
    name: 'unready endpoint',
    zone: 'zone-a', endpoints: [z('10.1.2.3', 'zone-a'), z('10.1.2.4', 'zone-b'), z('10.1.2.5', 'zone-c'), { ...z('10.1.2.6', 'zone-a'), ready: false }],
    cluster: ['10.1.2.3:80'], local: null,
  },
  {
    name: 'only unready endpoints in same zone (should not filter)',
    zone: 'zone-a',
    endpoints: [{ ...z('10.1.2.3', 'zone-a'), ready: false }, z('10.1.2.4', 'zone-b'), z('10.1.2.5', 'zone-c'), { ...z('10.1.2.6', 'zone-a'), ready: false }],
    cluster: ['10.1.2.4:80', '10.1.2.5:80'], local: null,
  },
  {
    name: 'missing hints, no filtering applied',
    zone: 'zone-a', endpoints: [z('10.1.2.3', 'zone-a'), z('10.1.2.4', 'zone-b'), { ip: '10.1.2.5' }, z('10.1.2.6', 'zone-a')],
    cluster: ['10.1.2.3:80', '10.1.2.4:80', '10.1.2.5:80', '10.1.2.6:80'], local: null,
  },
  {
    name: 'multiple hints per endpoint, filtering includes any endpoint with zone included',
    zone: 'zone-c',
    endpoints: [z('10.1.2.3', 'zone-a', 'zone-b', 'zone-c'), z('10.1.2.4', 'zone-b', 'zone-c'), z('10.1.2.5', 'zone-b', 'zone-d'), z('10.1.2.6', 'zone-c')],
    cluster: ['10.1.2.3:80', '10.1.2.4:80', '10.1.2.6:80'], local: null,
  },
  {
    name: 'conflicting topology and localness require merging allEndpoints',
    zone: 'zone-a', svc: ETP_LOCAL,
    endpoints: [local('10.0.0.0', { zoneHints: ['zone-a'] }), local('10.0.0.1', { zoneHints: ['zone-b'] }), z('10.0.0.2', 'zone-a'), z('10.0.0.3', 'zone-b')],
    cluster: ['10.0.0.0:80', '10.0.0.2:80'], local: ['10.0.0.0:80', '10.0.0.1:80'], all: ['10.0.0.0:80', '10.0.0.1:80', '10.0.0.2:80'],
  },
  { name: 'internalTrafficPolicy: Local, with empty endpoints', svc: { internalTrafficPolicy: 'Local' }, endpoints: [], cluster: [], local: [], hasAny: false },
  {
    name: 'internalTrafficPolicy: Local, but all endpoints are remote',
    svc: { internalTrafficPolicy: 'Local' }, endpoints: [{ ip: '10.0.0.0' }, { ip: '10.0.0.1' }], cluster: [], local: [], hasAny: true,
  },
  {
    name: 'internalTrafficPolicy: Local, all endpoints are local',
    svc: { internalTrafficPolicy: 'Local' }, endpoints: [local('10.0.0.0'), local('10.0.0.1')], cluster: [], local: ['10.0.0.0:80', '10.0.0.1:80'],
  },
  {
    name: 'internalTrafficPolicy: Local, some endpoints are local',
    svc: { internalTrafficPolicy: 'Local' }, endpoints: [local('10.0.0.0'), { ip: '10.0.0.1' }], cluster: [], local: ['10.0.0.0:80'],
  },
  {
    name: 'Cluster traffic policy, endpoints not Ready (terminating fallback, KEP-1669)',
    endpoints: [{ ip: '10.0.0.0', ready: false, serving: true, terminating: true }, { ip: '10.0.0.1', ready: false, serving: true, terminating: true }],
    cluster: ['10.0.0.0:80', '10.0.0.1:80'], local: null,
  },
  {
    name: 'Cluster traffic policy, some endpoints are Ready',
    endpoints: [{ ip: '10.0.0.0', ready: false, serving: true, terminating: true }, { ip: '10.0.0.1' }], cluster: ['10.0.0.1:80'], local: null,
  },
  {
    name: 'Cluster traffic policy, all endpoints are terminating and not serving',
    endpoints: [{ ip: '10.0.0.0', ready: false, serving: false, terminating: true }, { ip: '10.0.0.1', ready: false, serving: false, terminating: true }],
    cluster: [], local: null, hasAny: false,
  },
  {
    name: 'iTP: Local, eTP: Cluster, some endpoints local',
    svc: { type: 'NodePort', internalTrafficPolicy: 'Local', externalTrafficPolicy: 'Cluster' },
    endpoints: [local('10.0.0.0'), { ip: '10.0.0.1' }], cluster: ['10.0.0.0:80', '10.0.0.1:80'], local: ['10.0.0.0:80'], all: ['10.0.0.0:80', '10.0.0.1:80'],
  },
  {
    name: 'iTP: Cluster, eTP: Local, some endpoints local',
    svc: ETP_LOCAL, endpoints: [local('10.0.0.0'), { ip: '10.0.0.1' }], cluster: ['10.0.0.0:80', '10.0.0.1:80'], local: ['10.0.0.0:80'], all: ['10.0.0.0:80', '10.0.0.1:80'],
  },
  {
    name: 'iTP: Local, eTP: Local, all local endpoints terminating: local falls back to them',
    svc: { type: 'NodePort', internalTrafficPolicy: 'Local', externalTrafficPolicy: 'Local' },
    endpoints: [local('10.0.0.0', { ready: false, serving: true, terminating: true }), { ip: '10.0.0.1' }],
    cluster: ['10.0.0.1:80'], local: ['10.0.0.0:80'], all: ['10.0.0.0:80', '10.0.0.1:80'],
  },
  // PreferSameNode (release-1.35 topology.go: node hints first, then zone hints, then none).
  {
    name: 'PreferSameNode: every ready endpoint has a node hint, one for this node',
    zone: 'zone-a',
    endpoints: [{ ip: '10.0.0.1', nodeHints: [NODE], zoneHints: ['zone-a'] }, { ip: '10.0.0.2', nodeHints: ['other'], zoneHints: ['zone-a'] }],
    cluster: ['10.0.0.1:80'], local: null,
  },
  {
    name: 'PreferSameNode: no node hint for this node falls back to zone hints',
    zone: 'zone-a',
    endpoints: [{ ip: '10.0.0.1', nodeHints: ['n1'], zoneHints: ['zone-a'] }, { ip: '10.0.0.2', nodeHints: ['n2'], zoneHints: ['zone-b'] }],
    cluster: ['10.0.0.1:80'], local: null,
  },
  {
    name: 'PreferSameNode: a ready endpoint without node hint ignores node hints',
    zone: 'zone-x',
    endpoints: [{ ip: '10.0.0.1', nodeHints: [NODE] }, { ip: '10.0.0.2' }],
    cluster: ['10.0.0.1:80', '10.0.0.2:80'], local: null,
  },
  {
    name: 'PreferSameNode: unready endpoints do not need a node hint',
    endpoints: [{ ip: '10.0.0.1', nodeHints: [NODE] }, { ip: '10.0.0.2', ready: false, serving: false }],
    cluster: ['10.0.0.1:80'], local: null,
  },
];

describe('categorizeEndpoints with topology (kube-proxy TestCategorizeEndpoints, release-1.35)', () => {
  it.each(CASES)('$name', (c) => {
    const r = categorize(c);
    expect(hp(r.clusterEndpoints)).toEqual(c.cluster ?? []);
    expect(hp(r.localEndpoints)).toEqual(c.local ?? []);
    expect(hp(r.allLocallyReachableEndpoints)).toEqual([...(c.all ?? (c.local && c.local.length > 0 ? c.local : c.cluster) ?? [])].sort());
    expect(r.hasAnyEndpoints).toBe(c.hasAny ?? (c.cluster ?? []).length + (c.local ?? []).length > 0);
  });

  it('says which hints it followed and why it ignored others', () => {
    const r1 = categorize({ name: '', zone: 'zone-a', endpoints: [{ ip: '10.0.0.1', nodeHints: ['n1'], zoneHints: ['zone-a'] }, { ip: '10.0.0.2', nodeHints: ['n2'], zoneHints: ['zone-b'] }], cluster: null, local: null });
    expect([r1.topologyMode, r1.topologyFallbacks]).toEqual(['PreferSameZone', ['no-hint-for-node']]);
    const r2 = categorize({ name: '', zone: '', endpoints: [z('10.0.0.1', 'zone-a')], cluster: null, local: null });
    expect([r2.topologyMode, r2.topologyFallbacks]).toEqual(['', ['node-zone-unset']]);
    const r3 = categorize({ name: '', zone: 'zone-a', endpoints: [z('10.0.0.1', 'zone-a'), { ip: '10.0.0.2' }], cluster: null, local: null });
    expect([r3.topologyMode, r3.topologyFallbacks]).toEqual(['', ['zone-hint-missing']]);
    const r4 = categorize({ name: '', endpoints: [{ ip: '10.0.0.1', ready: false, serving: true, terminating: true }], cluster: null, local: null });
    expect([r4.clusterTerminatingFallback, r4.topologyMode]).toEqual([true, '']);
  });
});
