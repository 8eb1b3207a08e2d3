import { beforeAll, describe, expect, it } from 'vitest';
import { diagnoseExitStatus, diagnoseSnapshot, type Diagnosis, type Finding } from '../../src/analysis/diagnose/index.js';
import type { NodeSnapshot } from '../../src/model/snapshot.js';
import { snapshotOf } from '../helpers/fixtures.js';
import { ipvsSnapshot } from '../helpers/ipvs-fixtures.js';
import { parseIptablesSave } from '../../src/parsers/iptables-save.js';
import { diagnoseOptionsOf } from '../../src/report/diagnose.js';
import { endpointOf, generatedNode, RICH_SCENARIO, withService } from '../helpers/diagnose-scenario.js';

function verdicts(d: Diagnosis): Record<string, string> {
  return Object.fromEntries(d.services.map((s) => [`${s.namespace}/${s.name}`, s.verdict]));
}

function findingsOf(d: Diagnosis, ref: string): readonly Finding[] {
  return d.services.find((s) => `${s.namespace}/${s.name}` === ref)?.findings ?? [];
}

/** Every Service other than `except` keeps the verdict it has on the healthy node. */
function othersUnchanged(d: Diagnosis, healthy: Diagnosis, except: string): void {
  const now = verdicts(d);
  for (const [ref, v] of Object.entries(verdicts(healthy))) if (ref !== except) expect([ref, now[ref]]).toEqual([ref, v]);
}

describe('the shipped fixtures (real lab captures): one verdict per Service', () => {
  it.each(['lab-iptables', 'lab-nftables', 'lab-cilium'])('%s: every Service with endpoints is ok, default/empty is broken by its endpoints, exit 1', async (name) => {
    const d = diagnoseSnapshot(await snapshotOf(name));
    const v = verdicts(d);
    expect(v['default/web']).toBe('ok');
    expect(v['kube-system/kube-dns']).toBe('ok');
    expect(v['default/web-headless']).toBe('ok');
    expect(v['default/empty']).toBe('broken');
    expect(findingsOf(d, 'default/empty').map((f) => f.code)).toContain('no-ready-endpoints');
    expect(findingsOf(d, 'default/empty').find((f) => f.code === 'selector-matches-nothing')?.layer).toBe('api');
    // Cilium's own conntrack is not compared: said, as info.
    expect(d.header.nodeFindings.map((f) => `${f.code} ${f.severity}`)).toEqual(name === 'lab-cilium' ? ['conntrack-not-read info'] : []);
    expect(d.header.dataplane).toBe(name.slice(4));
    expect(diagnoseExitStatus(d)).toBe(1);
  });

  it('default/empty alone: --service narrows the Services, and the JSON is plain data', async () => {
    const d = diagnoseSnapshot(await snapshotOf('lab-iptables'), undefined, { service: 'default/web' });
    expect(d.services.map((s) => s.name)).toEqual(['web']);
    expect(JSON.parse(JSON.stringify(d))).toEqual(d);
    expect(diagnoseExitStatus(d)).toBe(0);
  });
});

describe.each(['iptables', 'nftables'] as const)('%s: expected against actual, endpoint by endpoint (generated rules)', (mode) => {
  let base: NodeSnapshot;
  let healthy: Diagnosis;
  beforeAll(async () => {
    base = await snapshotOf(mode === 'iptables' ? 'lab-iptables' : 'lab-nftables');
    healthy = diagnoseSnapshot(generatedNode(base, { mode }));
  });

  it('rules generated from the same API objects: every Service with endpoints ok; eTP=Local without a local endpoint is kube-proxy dropping by design (info)', () => {
    expect(healthy.header.dataplane).toBe(mode);
    const v = verdicts(healthy);
    for (const name of ['web', 'web-local', 'remote-local', 'sticky', 'ext', 'web-headless']) expect([name, v[`default/${name}`]]).toEqual([name, 'ok']);
    expect(v['kube-system/kube-dns']).toBe('ok');
    const drop = findingsOf(healthy, 'default/remote-local').filter((f) => f.code === 'local-policy-drop');
    expect(drop.map((f) => f.frontend)).toEqual(['*:30082/TCP']);
    expect(drop[0]!.severity).toBe('info');
    expect(drop[0]!.message).toContain('by design');
    expect(healthy.header.nodeFindings).toEqual([]);
  });

  it('an endpoint the API has and the node lacks (API changed, node not synced): endpoint-missing on every frontend of the Service', () => {
    const api = withService(RICH_SCENARIO, 'web', (s) => ({ ...s, endpoints: [...s.endpoints, endpointOf('10.244.0.40')] }));
    const d = diagnoseSnapshot(generatedNode(base, { mode, api, rules: RICH_SCENARIO }));
    const missing = findingsOf(d, 'default/web').filter((f) => f.code === 'endpoint-missing');
    expect(missing.map((f) => [f.frontend, f.endpoint])).toEqual([['10.96.12.34:80/TCP', '10.244.0.40:8080'], ['*:30080/TCP', '10.244.0.40:8080']]);
    expect(verdicts(d)['default/web']).toBe('degraded');
    othersUnchanged(d, healthy, 'default/web');
  });

  it('an endpoint the node has in no EndpointSlice: named by its Pod when the API knows it, else "unknown address"', () => {
    const rules = withService(RICH_SCENARIO, 'sticky', (s) => ({ ...s, endpoints: [...s.endpoints, endpointOf('client'), endpointOf('10.244.0.99')] }));
    const d = diagnoseSnapshot(generatedNode(base, { mode, rules }));
    const extra = findingsOf(d, 'default/sticky').filter((f) => f.code === 'endpoint-extra');
    // kube-proxy sorts endpoints as `ip:port` strings: .99 before .9:
    expect(extra.map((f) => f.endpoint)).toEqual(['10.244.0.99:8080', '10.244.0.9:8080']);
    expect(extra[1]!.message).toContain('Pod default/client');
    expect(extra[0]!.message).toContain('unknown address');
    expect(extra[0]!.evidence[0]!.pane).toBe('rules');
    othersUnchanged(d, healthy, 'default/sticky');
  });

  it('a wrong DNAT port: wrong-target-port naming the endpoint and its rule', () => {
    const d = diagnoseSnapshot(generatedNode(base, { mode, edit: (t) => t.replace(/10\.244\.0\.2:53\b/g, '10.244.0.2:5353') }));
    const wrong = findingsOf(d, 'kube-system/kube-dns').filter((f) => f.code === 'wrong-target-port');
    expect(wrong.map((f) => [f.frontend, f.endpoint])).toEqual([['10.96.0.10:53/UDP', '10.244.0.2:53'], ['10.96.0.10:53/TCP', '10.244.0.2:53']]);
    expect(wrong[0]!.evidence[0]!.text).toContain('5353');
    othersUnchanged(d, healthy, 'kube-system/kube-dns');
  });

  it('a slice endpoint marked not ready that the node still programs: endpoint-not-ready', () => {
    const api = withService(RICH_SCENARIO, 'web', (s) => ({ ...s, endpoints: s.endpoints.map((e) => (e.ip === '10.244.0.31' ? { ...e, ready: false, serving: false } : e)) }));
    const d = diagnoseSnapshot(generatedNode(base, { mode, api, rules: RICH_SCENARIO }));
    const f = findingsOf(d, 'default/web').filter((x) => x.code === 'endpoint-not-ready');
    expect(f.map((x) => x.endpoint)).toEqual(['10.244.0.31:8080', '10.244.0.31:8080']);
    expect(f.every((x) => x.severity === 'degraded')).toBe(true);
  });

  it('a sessionAffinity timeout different from the Service: affinity-differs', () => {
    const api = withService(RICH_SCENARIO, 'sticky', (s) => ({ ...s, sessionAffinity: { timeoutSeconds: 300 } }));
    const d = diagnoseSnapshot(generatedNode(base, { mode, api, rules: RICH_SCENARIO }));
    const f = findingsOf(d, 'default/sticky').filter((x) => x.code === 'affinity-differs');
    expect(f.map((x) => x.message)).toEqual(['10.96.12.42:80/TCP: the node keeps ClientIP affinity for 600 s, the Service asks for ClientIP affinity for 300 s']);
  });

  it('no endpoint rule left for a frontend: broken, and the frontend named', () => {
    const rules = withService(RICH_SCENARIO, 'web', (s) => ({ ...s, endpoints: [] }));
    const d = diagnoseSnapshot(generatedNode(base, { mode, rules }));
    expect(verdicts(d)['default/web']).toBe('broken');
    expect(findingsOf(d, 'default/web').filter((f) => f.code === 'frontend-rejects').map((f) => f.frontend)).toEqual(['10.96.12.34:80/TCP', '*:30080/TCP']);
    othersUnchanged(d, healthy, 'default/web');
  });

  it('eTP=Local in the API, the node still sends NodePort traffic to every endpoint: endpoint-extra with the reason from the expectation (issue 21)', () => {
    const rules = withService(RICH_SCENARIO, 'web-local', (s) => ({ ...s, externalTrafficPolicy: 'Cluster' }));
    const d = diagnoseSnapshot(generatedNode(base, { mode, rules }));
    const f = findingsOf(d, 'default/web-local').filter((x) => x.code === 'endpoint-extra');
    expect(f.map((x) => [x.frontend, x.endpoint])).toEqual([['*:30081/TCP', '10.244.1.15:8080']]);
    expect(f[0]!.message).toContain('on lab-node2, not this node');
    othersUnchanged(d, healthy, 'default/web-local');
  });

  it('a frontend the API does not have: frontend-unexpected on the Service its rule names', () => {
    const rules = withService(RICH_SCENARIO, 'ext', (s) => ({ ...s, externalIPs: ['192.168.49.100', '192.168.49.101'] }));
    const d = diagnoseSnapshot(generatedNode(base, { mode, rules }));
    const f = findingsOf(d, 'default/ext').filter((x) => x.code === 'frontend-unexpected');
    expect(f.map((x) => x.frontend)).toEqual(['192.168.49.101:80/TCP']);
    othersUnchanged(d, healthy, 'default/ext');
  });
});

describe('weights', () => {
  it('iptables: a deleted endpoint rule leaves a --probability cascade that is not even', async () => {
    const base = await snapshotOf('lab-iptables');
    const d = diagnoseSnapshot(generatedNode(base, { mode: 'iptables', edit: (t) => t.replace(/^-A KUBE-SVC-\S+ -m comment --comment "default\/web:http -> 10\.244\.0\.31:8080".*\n/m, '') }));
    const codes = findingsOf(d, 'default/web').map((f) => `${f.code} ${f.frontend} ${f.endpoint ?? ''}`.trim());
    expect(codes).toContain('endpoint-missing 10.96.12.34:80/TCP 10.244.0.31:8080');
    const w = findingsOf(d, 'default/web').find((f) => f.code === 'wrong-weights')!;
    expect(w.message).toContain('10.244.0.23:8080 33.3%, 10.244.1.15:8080 66.7%');
  });

  it('nftables: numgen mod N larger than the elements leaves a share unmapped', async () => {
    const base = await snapshotOf('lab-nftables');
    const d = diagnoseSnapshot(generatedNode(base, { mode: 'nftables', edit: (t) => t.replace(/(service-\S+-default\/web\/tcp\/http numgen random mod )3/, '$14') }));
    const w = findingsOf(d, 'default/web').filter((f) => f.code === 'wrong-weights');
    expect(w.map((f) => f.frontend)).toEqual(['10.96.12.34:80/TCP', '*:30080/TCP']);
    expect(w[0]!.message).toContain('25.0%');
  });
});

describe('leftovers of another mode, two iptables backends', () => {
  it('KUBE-* chains on an nftables node: leftover-rules on each Service they name, nothing else changes', async () => {
    const base = await snapshotOf('lab-nftables');
    const healthy = diagnoseSnapshot(generatedNode(base, { mode: 'nftables' }));
    const old = withService(RICH_SCENARIO, 'web', (s) => ({ ...s, endpoints: s.endpoints.slice(0, 1) }));
    const d = diagnoseSnapshot(generatedNode(base, { mode: 'nftables', leftoverIptables: { ...old, services: old.services.filter((s) => s.name === 'web') } }));
    expect(d.header.dataplane).toBe('nftables');
    const f = findingsOf(d, 'default/web').filter((x) => x.code === 'leftover-rules');
    expect(f).toHaveLength(1);
    expect(f[0]!.evidence.some((e) => e.ref.startsWith('nat KUBE-'))).toBe(true);
    othersUnchanged(d, healthy, 'default/web');
  });

  it('iptables-legacy and iptables-nft disagreeing for a frontend: legacy-nft-disagree naming both', async () => {
    const base = await snapshotOf('lab-iptables');
    const healthy = diagnoseSnapshot(generatedNode(base, { mode: 'iptables' }));
    const legacy = withService(RICH_SCENARIO, 'web', (s) => ({ ...s, endpoints: s.endpoints.slice(0, 2) }));
    const d = diagnoseSnapshot(generatedNode(base, { mode: 'iptables', legacy }));
    const f = findingsOf(d, 'default/web').filter((x) => x.code === 'legacy-nft-disagree');
    expect(f.map((x) => x.frontend)).toEqual(['10.96.12.34:80/TCP', '*:30080/TCP']);
    expect(f[0]!.message).toContain('iptables-legacy to 10.244.0.23:8080, 10.244.0.31:8080');
    othersUnchanged(d, healthy, 'default/web');
  });
});

describe('never guessed: unknown names what is missing', () => {
  it('no API objects: no Service judged, the header says why, exit 2', async () => {
    const s = await snapshotOf('lab-iptables');
    const d = diagnoseSnapshot({ ...s, api: null });
    expect(d.services).toEqual([]);
    expect(d.header.nodeFindings.map((f) => [f.code, f.severity])).toEqual([['no-api-objects', 'unknown']]);
    expect(diagnoseExitStatus(d)).toBe(2);
  });

  it('the rules not read (probe failed): every programmed Service unknown, the API facts kept', async () => {
    const s = await snapshotOf('lab-iptables');
    const d = diagnoseSnapshot({ ...s, iptables: { value: null, diagnostics: [], probe: null, error: 'iptables-save: exit 1' } });
    const v = verdicts(d);
    expect(v['default/web']).toBe('unknown');
    expect(v['default/empty']).toBe('broken');
    expect(v['default/web-headless']).toBe('ok');
    expect(findingsOf(d, 'default/web')[0]!.message).toMatch(/not compared/);
  });

  it('an IPVS node (kube-proxy --proxy-mode=ipvs: ipset rules in nat, virtual servers in ipvsadm): every proxied Service unknown naming IPVS; the API layer still judged; --from does not walk it either', async () => {
    const base = await ipvsSnapshot();
    // pkg/proxy/ipvs/proxier.go writeIptablesRules: nat sends Service traffic through ipsets to IPVS, no per-Service chains.
    const nat = ['# Generated by iptables-save v1.8.4 on Mon Jan  1 00:00:00 2024', '*nat', ':PREROUTING ACCEPT [0:0]', ':OUTPUT ACCEPT [0:0]', ':KUBE-SERVICES - [0:0]', ':KUBE-MARK-MASQ - [0:0]', ':KUBE-NODE-PORT - [0:0]',
      '-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES', '-A OUTPUT -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
      '-A KUBE-SERVICES -m addrtype --dst-type LOCAL -j KUBE-NODE-PORT', '-A KUBE-SERVICES -m set --match-set KUBE-CLUSTER-IP dst,dst -j ACCEPT', 'COMMIT', ''].join('\n');
    const s: NodeSnapshot = { ...base, iptables: { value: parseIptablesSave(nat, 'iptables-save').value, diagnostics: [], probe: null, error: null } };
    const d = diagnoseSnapshot(s, undefined, diagnoseOptionsOf(s, { from: 'default/client' }).options);
    expect([d.header.mode, d.header.dataplane]).toEqual(['ipvs', 'none']);
    expect(d.header.nodeFindings.map((f) => [f.code, f.severity, f.message])).toEqual([['dataplane-not-read', 'unknown', 'the node runs kube-proxy in IPVS mode, which diagnose does not compare yet']]);
    expect(verdicts(d)).toEqual({ 'default/empty': 'broken', 'default/web': 'unknown', 'default/web-headless': 'ok', 'kube-system/kube-dns': 'unknown' });
    for (const ref of ['default/web', 'kube-system/kube-dns']) {
      expect(findingsOf(d, ref).map((f) => [f.code, f.severity])).toEqual([['dataplane-not-read', 'unknown'], ['from-unknown', 'unknown']]);
      expect(findingsOf(d, ref)[0]!.message).toBe('not compared: the node runs kube-proxy in IPVS mode, which diagnose does not compare yet');
      expect(findingsOf(d, ref)[1]!.message).toContain('IPVS mode, whose virtual servers the walk does not model');
    }
    // empty is broken by the endpoints layer, so the exit status says "found"; web alone cannot be decided: 2.
    expect(diagnoseExitStatus(d)).toBe(1);
    expect(diagnoseExitStatus(diagnoseSnapshot(s, undefined, { service: 'default/web' }))).toBe(2);
  });
});

describe('Cilium: the LB maps against the encoder expectation', () => {
  type Lb = NonNullable<NonNullable<NodeSnapshot['lb']>['value']>;
  const withLb = (s: NodeSnapshot, change: (lb: Lb) => Lb): NodeSnapshot => ({ ...s, lb: { ...s.lb!, value: change(s.lb!.value!) } });

  it('an extra backend in the backends map with a slot of the web ClusterIP: endpoint-extra and the slot count, nothing else changes', async () => {
    const s = await snapshotOf('lab-cilium');
    const healthy = diagnoseSnapshot(s);
    const d = diagnoseSnapshot(withLb(s, (lb) => {
      const backend = { id: 99, ip: '10.244.0.99', port: 8080, protocol: 'TCP' as const, state: 'active' as const, weight: null, clusterId: 0, zone: 0, nodeName: null };
      return {
        ...lb,
        backends: [...lb.backends, backend],
        services: lb.services.map((svc) => (svc.frontend.ip === '10.96.12.34' ? { ...svc, count: (svc.count ?? 0) + 1, slots: [...svc.slots, { slot: svc.slots.length + 1, backendId: 99, backend, flags: svc.flags }] } : svc)),
      };
    }));
    const f = findingsOf(d, 'default/web');
    expect(f.filter((x) => x.code === 'endpoint-extra').map((x) => [x.frontend, x.endpoint])).toEqual([['10.96.12.34:80/TCP', '10.244.0.99:8080']]);
    expect(f.find((x) => x.code === 'endpoint-extra')!.message).toContain('unknown address');
    expect(f.some((x) => x.code === 'cilium-slot-count' && x.frontend === '10.96.12.34:80/TCP')).toBe(true);
    expect(verdicts(d)['default/web']).toBe('degraded');
    othersUnchanged(d, healthy, 'default/web');
  });

  it('a backend in maintenance: cilium-backend-state naming it', async () => {
    const s = await snapshotOf('lab-cilium');
    const d = diagnoseSnapshot(withLb(s, (lb) => ({
      ...lb,
      services: lb.services.map((svc) => ({ ...svc, slots: svc.slots.map((sl) => (sl.backend?.ip === '10.244.0.2' ? { ...sl, backend: { ...sl.backend, state: 'maintenance' as const } } : sl)) })),
    })));
    const f = findingsOf(d, 'kube-system/kube-dns').filter((x) => x.code === 'cilium-backend-state');
    expect(f.map((x) => x.endpoint)).toEqual(['10.244.0.2:53', '10.244.0.2:53']);
  });

  it("the agent's service list disagreeing with the maps: cilium-listing-disagrees on that frontend", async () => {
    const s = await snapshotOf('lab-cilium');
    const d = diagnoseSnapshot(withLb(s, (lb) => ({ ...lb, disagreements: [{ frontend: '10.96.0.10:53/UDP', message: 'service list shows 1 backend, the maps 2' }] })));
    const f = findingsOf(d, 'kube-system/kube-dns').filter((x) => x.code === 'cilium-listing-disagrees');
    expect(f.map((x) => [x.frontend, x.severity])).toEqual([['10.96.0.10:53/UDP', 'degraded']]);
  });
});

describe('conntrack: flows the rules no longer decide', () => {
  it('a stale UDP entry after a Pod swap (coredns 10.244.0.2 → 10.244.0.4): the Service, frontend and old endpoint, kube-proxy 1.31 cleanup said, the conntrack -D command', async () => {
    const base = await snapshotOf('lab-iptables');
    const swap = withService(RICH_SCENARIO, 'kube-dns', (s) => ({ ...s, endpoints: s.endpoints.map((e) => (e.ip === '10.244.0.2' ? { ...e, ip: '10.244.0.4' } : e)) }));
    const healthy = diagnoseSnapshot(generatedNode(base, { mode: 'iptables' }));
    const d = diagnoseSnapshot(generatedNode(base, { mode: 'iptables', api: swap, rules: swap }));
    const f = findingsOf(d, 'kube-system/kube-dns').filter((x) => x.layer === 'conntrack');
    expect(f.map((x) => [x.code, x.frontend, x.endpoint])).toEqual([['conntrack-stale-endpoint', '10.96.0.10:53/UDP', '10.244.0.2:53']]);
    expect(f[0]!.message).toContain('conntrack -D -p udp --orig-dst 10.96.0.10 --orig-port-dst 53 --dst-nat 10.244.0.2');
    expect(f[0]!.message).toContain('kube-proxy v1.31.0 clears it only when it sees the endpoint go');
    expect(f[0]!.evidence[0]!.pane).toBe('conntrack');
    expect(findingsOf(d, 'kube-system/kube-dns').filter((x) => x.layer === 'dataplane')).toEqual([]);
    othersUnchanged(d, healthy, 'kube-system/kube-dns');
  });

  it('closed TCP flows (TIME_WAIT) to a swapped web Pod are not findings', async () => {
    const base = await snapshotOf('lab-iptables');
    const swap = withService(RICH_SCENARIO, 'web', (s) => ({ ...s, endpoints: s.endpoints.map((e) => (e.ip === '10.244.0.31' ? { ...e, ip: '10.244.0.32' } : e)) }));
    const d = diagnoseSnapshot(generatedNode(base, { mode: 'iptables', api: swap, rules: swap }));
    expect(findingsOf(d, 'default/web').filter((x) => x.layer === 'conntrack')).toEqual([]);
  });
});

describe("kube-proxy's conntrack cleanup by version (kubernetes#126130, #127318, #139628)", () => {
  it.each([
    ['tcp', 'stale', { text: 'v1.33.1', minor: 33 }, true, 'never clears TCP'],
    ['udp', 'stale', null, true, 'unknown'],
    ['udp', 'stale', { text: 'v1.30.2', minor: 30 }, true, 'event based'],
    ['udp', 'untranslated', { text: 'v1.30.2', minor: 30 }, true, 'first endpoint'],
    ['udp', 'stale', { text: 'v1.32.0', minor: 32 }, true, 'next sync'],
    ['udp', 'stale', { text: 'v1.33.0', minor: 33 }, false, 'kubernetes#139628'],
  ] as const)('%s %s on %j (endpoints: %s): %s', async (proto, kind, version, hasEndpoints, words) => {
    const { cleanupSays } = await import('../../src/analysis/diagnose/layer-conntrack.js');
    expect(cleanupSays(proto, kind, version, hasEndpoints)).toContain(words);
  });
});
