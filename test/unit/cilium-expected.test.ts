/**
 * What Cilium's agent would write for a Service on this node (src/analysis/cilium-expected.ts),
 * checked against Cilium's own expectation text for the same input: the `lb/maps-dump` blocks
 * of cilium/cilium pkg/loadbalancer/tests/testdata/*.txtar (main, 2026; the file's commit is
 * named per case), parsed by nodescope's maps-dump parser. Frontend IDs are not compared (the
 * agent numbers them as it reconciles).
 */
import { describe, expect, it } from 'vitest';
import { expectCiliumTable } from '../../src/analysis/cilium-expected.js';
import type { KubeProxyInput, ScenarioEndpoint, ScenarioService } from '../../src/analysis/lab-scenario-types.js';
import { formatFrontend, formatServiceFlags, type LbTable } from '../../src/model/cilium.js';
import { decodeCiliumLbMaps } from '../../src/parsers/bpftool-lb-decode.js';
import { encodeLbTable } from '../../src/parsers/bpftool-lb-encode.js';
import { parseCiliumMapsDump } from '../../src/parsers/cilium-maps-dump.js';
import { bpftoolJson } from './cilium-builders.js';

/** Each LB entry as one comparable line: frontend, type, count+qcount, flags, slot backends in order. */
function shape(t: LbTable): string[] {
  return t.services
    .map((s) => `${formatFrontend(s.frontend)} ${s.type} ${s.count}+${s.qcount} [${formatServiceFlags(s.flags ?? 0)}] ${s.slots.map((x) => `${x.backend?.ip}:${x.backend?.port}/${x.backend?.state}`).join(',')}`)
    .sort();
}

function mapsDump(text: string): LbTable {
  const r = parseCiliumMapsDump(text, 'txtar');
  expect(r.diagnostics).toEqual([]);
  return r.value;
}

function ep(ip: string, nodeName: string, extra: Partial<ScenarioEndpoint> = {}): ScenarioEndpoint {
  return { ip, nodeName, ready: true, serving: true, terminating: false, ...extra };
}

const ECHO: ScenarioService = {
  namespace: 'test',
  name: 'echo',
  type: 'LoadBalancer',
  clusterIP: '10.96.50.104',
  ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: 80 }],
  loadBalancerIPs: ['1.1.1.1'],
  externalTrafficPolicy: 'Local',
  internalTrafficPolicy: 'Local',
  endpoints: [ep('10.244.1.1', 'testnode'), ep('10.244.2.1', 'othernode')],
};

function input(services: ScenarioService[], extra: Partial<KubeProxyInput> = {}): KubeProxyInput {
  return { nodeName: 'testnode', nodeIPs: [], services, ...extra };
}

describe('traffic policies: trafficpolicy.txtar (cilium/cilium @ 68cb5ec6)', () => {
  it('iTP=eTP=Local: one scope, only the backend on this node, Local+InternalLocal on the ClusterIP too', () => {
    const want = mapsDump(`BE: ID=1 ADDR=10.244.1.1:80/TCP STATE=active
REV: ID=1 ADDR=1.1.1.1:80
REV: ID=2 ADDR=10.96.50.104:80
SVC: ID=1 ADDR=1.1.1.1:80/TCP SLOT=0 LBALG=undef AFFTimeout=0 COUNT=1 QCOUNT=0 FLAGS=LoadBalancer+Local+InternalLocal
SVC: ID=1 ADDR=1.1.1.1:80/TCP SLOT=1 BEID=1 COUNT=0 QCOUNT=0 FLAGS=LoadBalancer+Local+InternalLocal
SVC: ID=2 ADDR=10.96.50.104:80/TCP SLOT=0 LBALG=undef AFFTimeout=0 COUNT=1 QCOUNT=0 FLAGS=ClusterIP+Local+InternalLocal+non-routable
SVC: ID=2 ADDR=10.96.50.104:80/TCP SLOT=1 BEID=1 COUNT=0 QCOUNT=0 FLAGS=ClusterIP+Local+InternalLocal+non-routable
`);
    const got = expectCiliumTable(input([ECHO]));
    expect(shape(got.table)).toEqual(shape(want));
    expect(got.services.find((s) => s.service.type === 'ClusterIP')!.excluded.get('10.244.2.1:80')).toBe('on othernode, not this node (iTP=Local)');
  });

  it('eTP=Cluster, iTP=Local: the LB IP in two scopes — external with both backends, /i with the local one; two-scopes flag, not on the ClusterIP', () => {
    const want = mapsDump(`BE: ID=1 ADDR=10.244.1.1:80/TCP STATE=active
BE: ID=2 ADDR=10.244.2.1:80/TCP STATE=active
REV: ID=1 ADDR=1.1.1.1:80
REV: ID=2 ADDR=10.96.50.104:80
REV: ID=3 ADDR=1.1.1.1:80
SVC: ID=1 ADDR=1.1.1.1:80/TCP SLOT=0 LBALG=undef AFFTimeout=0 COUNT=2 QCOUNT=0 FLAGS=LoadBalancer+InternalLocal+two-scopes
SVC: ID=1 ADDR=1.1.1.1:80/TCP SLOT=1 BEID=1 COUNT=0 QCOUNT=0 FLAGS=LoadBalancer+InternalLocal+two-scopes
SVC: ID=1 ADDR=1.1.1.1:80/TCP SLOT=2 BEID=2 COUNT=0 QCOUNT=0 FLAGS=LoadBalancer+InternalLocal+two-scopes
SVC: ID=2 ADDR=10.96.50.104:80/TCP SLOT=0 LBALG=undef AFFTimeout=0 COUNT=1 QCOUNT=0 FLAGS=ClusterIP+InternalLocal+non-routable
SVC: ID=2 ADDR=10.96.50.104:80/TCP SLOT=1 BEID=1 COUNT=0 QCOUNT=0 FLAGS=ClusterIP+InternalLocal+non-routable
SVC: ID=3 ADDR=1.1.1.1:80/TCP/i SLOT=0 LBALG=undef AFFTimeout=0 COUNT=1 QCOUNT=0 FLAGS=LoadBalancer+InternalLocal+two-scopes
SVC: ID=3 ADDR=1.1.1.1:80/TCP/i SLOT=1 BEID=1 COUNT=0 QCOUNT=0 FLAGS=LoadBalancer+InternalLocal+two-scopes
`);
    expect(shape(expectCiliumTable(input([{ ...ECHO, externalTrafficPolicy: 'Cluster' }])).table)).toEqual(shape(want));
  });

  it('eTP=Local on a NodePort node without a local endpoint: the external scope empty (Cilium drops), /i keeps the cluster backends; wildcard non-routable, node address routable', () => {
    const svc: ScenarioService = { ...ECHO, type: 'NodePort', loadBalancerIPs: [], internalTrafficPolicy: 'Cluster', ports: [{ ...ECHO.ports[0]!, nodePort: 30080 }], endpoints: [ep('10.244.2.1', 'othernode')] };
    const got = expectCiliumTable(input([svc], { nodeIPs: ['192.168.49.2'] }));
    expect(shape(got.table)).toEqual([
      '0.0.0.0:30080/TCP NodePort 0+0 [NodePort, Local, two-scopes, non-routable] ',
      '0.0.0.0:30080/TCP/i NodePort 1+0 [NodePort, Local, two-scopes, non-routable] 10.244.2.1:80/active',
      '10.96.50.104:80/TCP ClusterIP 1+0 [ClusterIP, Local, non-routable] 10.244.2.1:80/active',
      '192.168.49.2:30080/TCP NodePort 0+0 [NodePort, Local, two-scopes] ',
      '192.168.49.2:30080/TCP/i NodePort 1+0 [NodePort, Local, two-scopes] 10.244.2.1:80/active',
    ]);
    expect(got.services.filter((s) => s.reason === 'no-local-external').map((s) => formatFrontend(s.service.frontend))).toEqual(['0.0.0.0:30080/TCP', '192.168.49.2:30080/TCP']);
  });

  it('an endpoint without nodeName counts as local (Cilium), unlike kube-proxy', () => {
    const got = expectCiliumTable(input([{ ...ECHO, endpoints: [ep('10.244.3.3', '')] }]));
    expect(got.services.every((s) => s.service.count === 1)).toBe(true);
  });
});

describe('terminating fallback (bpf_reconciler.go updateFrontend, KEP-1669)', () => {
  const svc: ScenarioService = { ...ECHO, type: 'ClusterIP', loadBalancerIPs: [], externalTrafficPolicy: 'Cluster', internalTrafficPolicy: 'Cluster', endpoints: [ep('10.244.0.112', 'testnode', { ready: false, terminating: true }), ep('10.244.0.113', 'testnode', { ready: false, terminating: true }), ep('10.244.0.114', 'testnode', { ready: false, serving: false, terminating: true }), ep('10.244.0.115', 'testnode', { ready: false, serving: false })] };

  it('no active backend: the serving terminating ones count as active, the non-serving one stays in qcount, a not-ready one gets no slot; the older agents\' form is the alternative', () => {
    const got = expectCiliumTable(input([svc]));
    expect(shape(got.table)).toEqual(['10.96.50.104:80/TCP ClusterIP 2+1 [ClusterIP, non-routable] 10.244.0.112:80/terminating,10.244.0.113:80/terminating,10.244.0.114:80/terminating']);
    const alt = got.services[0]!.undecided.map((u) => u.alternative && `${u.alternative.count}+${u.alternative.qcount}`);
    expect(alt).toEqual(['0+3']);
    expect(got.services[0]!.excluded.get('10.244.0.115:80')).toContain('maintenance');
  });

  it('with an active backend the terminating ones are only in qcount, and nothing is undecided (graceful-termination.txtar: COUNT=1 QCOUNT=1)', () => {
    const got = expectCiliumTable(input([{ ...svc, endpoints: [svc.endpoints[0]!, ep('10.244.0.113', 'testnode')] }]));
    expect(shape(got.table)).toEqual(['10.96.50.104:80/TCP ClusterIP 1+1 [ClusterIP, non-routable] 10.244.0.113:80/active,10.244.0.112:80/terminating']);
    expect(got.services[0]!.undecided).toEqual([]);
  });
});

describe('LoadBalancer IPs, externalIPs, source ranges, affinity', () => {
  it('ipMode Proxy: no frontend for that LB IP (conversions.go, KEP-1860); the VIP one stays', () => {
    const got = expectCiliumTable(input([{ ...ECHO, externalTrafficPolicy: 'Cluster', internalTrafficPolicy: 'Cluster', loadBalancerIPs: ['1.1.1.1', '2.2.2.2'], ipModeProxyIPs: ['2.2.2.2'] }]));
    expect(got.table.services.map((s) => formatFrontend(s.frontend))).toEqual(['10.96.50.104:80/TCP', '1.1.1.1:80/TCP']);
  });

  it('loadBalancerSourceRanges: check source-range on the LB frontend (master only), with the family\'s CIDRs; undecided on externalIPs and (all-types option) on the ClusterIP', () => {
    const got = expectCiliumTable(input([{ ...ECHO, externalTrafficPolicy: 'Cluster', internalTrafficPolicy: 'Cluster', externalIPs: ['192.168.49.100'], loadBalancerSourceRanges: ['10.0.0.0/8', ' fd00::/64'] }]));
    const by = new Map(got.services.map((s) => [s.service.type, s]));
    expect(formatServiceFlags(by.get('LoadBalancer')!.service.flags!)).toBe('LoadBalancer, check source-range');
    expect(by.get('LoadBalancer')!.service.slots.every((x) => formatServiceFlags(x.flags!) === 'LoadBalancer')).toBe(true);
    expect(by.get('LoadBalancer')!.sourceRanges).toEqual(['10.0.0.0/8']);
    expect(formatServiceFlags(by.get('ExternalIPs')!.service.flags!)).toBe('ExternalIPs');
    expect(by.get('ExternalIPs')!.undecided.map((u) => u.what)).toEqual([expect.stringContaining('externalIPs')]);
    expect(formatServiceFlags(by.get('ClusterIP')!.service.flags!)).toBe('ClusterIP, non-routable');
    expect(by.get('ClusterIP')!.undecided.map((u) => u.what)).toEqual([expect.stringContaining('--bpf-lb-source-range-all-types')]);
    const all = expectCiliumTable(input([{ ...ECHO, externalIPs: ['192.168.49.100'], loadBalancerSourceRanges: ['10.0.0.0/8'] }]), { sourceRangeAllTypes: true });
    expect(all.services.every((s) => formatServiceFlags(s.service.flags!).includes('check source-range'))).toBe(true);
  });

  it('ClientIP affinity: sessionAffinity flag and the timeout on the master', () => {
    const got = expectCiliumTable(input([{ ...ECHO, type: 'ClusterIP', loadBalancerIPs: [], externalTrafficPolicy: 'Cluster', internalTrafficPolicy: 'Cluster', sessionAffinity: { timeoutSeconds: 600 } }]));
    expect(formatServiceFlags(got.table.services[0]!.flags!)).toBe('ClusterIP, sessionAffinity, non-routable');
    expect(got.table.services[0]!.affinityTimeout).toBe(600);
  });
});

describe('topology (writer.go DefaultSelectBackends, only with --enable-service-topology)', () => {
  const zoned: ScenarioService = {
    ...ECHO, type: 'ClusterIP', loadBalancerIPs: [], externalTrafficPolicy: 'Cluster', internalTrafficPolicy: 'Cluster', trafficDistribution: 'PreferSameZone',
    endpoints: [ep('10.244.1.1', 'testnode', { zone: 'a', zoneHints: ['a'] }), ep('10.244.2.1', 'othernode', { zone: 'b', zoneHints: ['b'] })],
  };

  it('PreferSameZone with hints for this zone: all backends at the defaults, the hinted one when the option is on; unknown option → the hinted set is the alternative', () => {
    const inp = input([zoned], { nodeZone: 'a' });
    expect(expectCiliumTable(inp).table.services[0]!.count).toBe(2);
    expect(expectCiliumTable(inp, { serviceTopology: true }).table.services[0]!.slots.map((s) => s.backend?.ip)).toEqual(['10.244.1.1']);
    const u = expectCiliumTable(inp).services[0]!.undecided;
    expect(u.map((x) => x.what)).toEqual([expect.stringContaining('--enable-service-topology')]);
    expect(u[0]!.alternative!.slots.map((s) => s.backend?.ip)).toEqual(['10.244.1.1']);
    expect(expectCiliumTable(inp, { serviceTopology: false }).services[0]!.undecided).toEqual([]);
  });

  it('a candidate without hints: zone hints ignored even with the option on (the safeguard)', () => {
    const inp = input([{ ...zoned, endpoints: [...zoned.endpoints, ep('10.244.3.1', 'third', { zone: 'c' })] }], { nodeZone: 'a' });
    expect(expectCiliumTable(inp, { serviceTopology: true }).table.services[0]!.count).toBe(3);
  });

  it('PreferSameNode: the backends on this node when there is one, else all', () => {
    const same = { ...zoned, trafficDistribution: 'PreferSameNode' };
    expect(expectCiliumTable(input([same]), { serviceTopology: true }).table.services[0]!.slots.map((s) => s.backend?.ip)).toEqual(['10.244.1.1']);
    expect(expectCiliumTable(input([same], { nodeName: 'elsewhere' }), { serviceTopology: true }).table.services[0]!.count).toBe(2);
  });
});

describe('IPv6 (lb6) and the map encoder', () => {
  const v6: ScenarioService = {
    ...ECHO, clusterIP: 'fd00:10:96::50', loadBalancerIPs: ['2001:db8::1'], externalTrafficPolicy: 'Cluster', internalTrafficPolicy: 'Local',
    ports: [{ ...ECHO.ports[0]!, nodePort: 30080 }], endpoints: [ep('fd00:10:244:1::1', 'testnode'), ep('fd00:10:244:2::1', 'othernode')],
  };

  it('an IPv6 input: ClusterIP, the `::` surrogate and the node\'s IPv6 address, the LB IP, two scopes', () => {
    const got = expectCiliumTable(input([v6], { family: 'IPv6', nodeIPs: ['192.168.49.2', 'fd00:192:168:49::2'] }));
    expect(got.table.services.map((s) => formatFrontend(s.frontend))).toEqual([
      '[fd00:10:96::50]:80/TCP', '[::]:30080/TCP', '[fd00:192:168:49::2]:30080/TCP', '[::]:30080/TCP/i', '[fd00:192:168:49::2]:30080/TCP/i', '[2001:db8::1]:80/TCP', '[2001:db8::1]:80/TCP/i',
    ]);
    expect(got.services[0]!.excluded.get('[fd00:10:244:2::1]:80')).toContain('iTP=Local');
  });

  it('decode(encode(expected)) gives it back: internal scope and lb6 entries survive the real map layouts', () => {
    const table = expectCiliumTable(input([v6], { family: 'IPv6', nodeIPs: ['fd00:192:168:49::2'] })).table;
    const dumps = encodeLbTable(table).map((m) => ({ name: m.name, text: bpftoolJson(m.entries), origin: m.name }));
    const r = decodeCiliumLbMaps(dumps);
    expect(r.diagnostics).toEqual([]);
    expect(shape(r.value.table)).toEqual(shape(table));
  });
});
