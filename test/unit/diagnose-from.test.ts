/**
 * `nodescope diagnose --from WHO` (issue 17, item 6): each frontend walked from a client with
 * the step engine, on the shipped lab captures and on nodes whose rules the project's
 * generators wrote from a scenario (test/helpers/diagnose-scenario.ts).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { diagnoseSnapshot, resolveDiagnoseClient, type Diagnosis, type Finding } from '../../src/analysis/diagnose/index.js';
import { UserError } from '../../src/errors.js';
import type { NodeSnapshot } from '../../src/model/snapshot.js';
import { diagnoseOptionsOf, showDiagnose } from '../../src/report/diagnose.js';
import { snapshotOf } from '../helpers/fixtures.js';
import { endpointOf, generatedNode, RICH_SCENARIO, withService } from '../helpers/diagnose-scenario.js';
import type { LabScenario } from '../../src/analysis/lab-scenario-types.js';

const WEB = RICH_SCENARIO.services.find((s) => s.name === 'web')!;

/** RICH_SCENARIO plus iTP=Local with its only endpoint on lab-node2: unreachable from this node's Pods by design. */
const WITH_ITP: LabScenario = {
  ...RICH_SCENARIO,
  services: [...RICH_SCENARIO.services, { ...WEB, name: 'remote-internal', type: 'ClusterIP', clusterIP: '10.96.12.44', internalTrafficPolicy: 'Local', ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: 8080 }], endpoints: WEB.endpoints.filter((e) => e.nodeName !== 'lab-node') }],
};

function from(snapshot: NodeSnapshot, who: string, service?: string): Diagnosis {
  const { options } = diagnoseOptionsOf(snapshot, { from: who, ...(service ? { service } : {}) });
  return diagnoseSnapshot(snapshot, undefined, options);
}

const fromFindings = (d: Diagnosis, ref: string): Finding[] => (d.services.find((s) => `${s.namespace}/${s.name}` === ref)?.findings ?? []).filter((f) => f.code.startsWith('from-'));

describe('the shipped captures: every frontend of kube-dns reaches its endpoints from the client Pod, through the rule that rewrites it', () => {
  it.each([
    ['lab-iptables', 'nat KUBE-SEP-'],
    ['lab-nftables', 'ip kube-proxy endpoint-'],
    ['lab-cilium', '10.96.0.10:53/UDP'],
  ])('%s', async (name, proof) => {
    const d = from(await snapshotOf(name), 'default/client', 'kube-system/kube-dns');
    const f = fromFindings(d, 'kube-system/kube-dns');
    expect(f.map((x) => [x.code, x.severity, x.frontend])).toEqual([['from-reaches', 'info', '10.96.0.10:53/UDP'], ['from-reaches', 'info', '10.96.0.10:53/TCP']]);
    expect(f[0]!.message).toMatch(/^from default\/client: ClusterIP 10\.96\.0\.10:53\/UDP → reaches 10\.244\.0\.2:53.*10\.244\.0\.3:53.*\(2 of 2 branches\)$/);
    expect(f[0]!.message).toContain(`via ${proof}`);
    expect(f[0]!.evidence[0]!.ref).toContain(proof);
    expect(d.services[0]!.verdict).toBe('ok');
  });

  it('lab-iptables: the proof of a reached endpoint is the DNAT rule, with its place in the Rules pane', async () => {
    const d = from(await snapshotOf('lab-iptables'), '10.244.0.9', 'kube-system/kube-dns');
    const e = fromFindings(d, 'kube-system/kube-dns')[0]!.evidence[0]!;
    expect(e.text).toContain('DNAT --to-destination 10.244.0.2:53');
    expect(e.at).toMatchObject({ ruleset: 'iptables', table: 'nat', rule: 1 });
    expect(e.at?.chain).toMatch(/^KUBE-SEP-/);
  });

  it('default/empty (no endpoints): rejected by the REJECT rule from every client, broken', async () => {
    const snap = await snapshotOf('lab-iptables');
    for (const who of ['default/client', 'node', '192.168.49.1']) {
      const f = fromFindings(from(snap, who, 'default/empty'), 'default/empty');
      expect(f.map((x) => [x.code, x.severity])).toEqual([['from-blocked', 'broken']]);
      expect(f[0]!.message).toBe(`from ${who}: ClusterIP 10.96.50.5:80/TCP → rejected (icmp-port-unreachable) by filter KUBE-SERVICES #1`);
      expect(f[0]!.evidence[0]!.text).toContain('default/empty has no endpoints');
    }
  });
});

describe.each(['iptables', 'nftables'] as const)('%s: generated rules, walked from a client', (mode) => {
  let base: NodeSnapshot;
  beforeAll(async () => {
    base = await snapshotOf(mode === 'iptables' ? 'lab-iptables' : 'lab-nftables');
  });

  it('iTP=Local, its only endpoint on another node: dropped from the client Pod and from the node (broken, the DROP rule named); other Services keep their verdict', () => {
    const node = generatedNode(base, { mode, jumps: true, api: WITH_ITP });
    const plain = diagnoseSnapshot(node);
    for (const who of ['default/client', 'node']) {
      const d = from(node, who);
      const f = fromFindings(d, 'default/remote-internal');
      expect(f.map((x) => [x.code, x.severity, x.frontend])).toEqual([['from-blocked', 'broken', '10.96.12.44:80/TCP']]);
      expect(f[0]!.message).toMatch(new RegExp(`^from ${who}: ClusterIP 10\\.96\\.12\\.44:80/TCP → dropped by `));
      expect(f[0]!.evidence[0]!.pane).toBe('rules');
      expect(f[0]!.evidence[0]!.text).toMatch(mode === 'iptables' ? /remote-internal:http has no local endpoints.*-j DROP/ : /@no-endpoint-services/);
      const changed = d.services.filter((s) => plain.services.find((p) => p.name === s.name && p.namespace === s.namespace)?.verdict !== s.verdict).map((s) => s.name);
      // remote-internal is broken without --from too (the dataplane layer's local-policy-drop); sticky: see the next case.
      expect(changed).toEqual(mode === 'iptables' ? ['sticky'] : []);
    }
  });

  it('ClientIP affinity: iptables checks xt_recent lists first, which no capture here holds — unknown, naming the list; nftables decides', () => {
    const f = fromFindings(from(generatedNode(base, { mode, jumps: true }), 'default/client', 'default/sticky'), 'default/sticky');
    if (mode === 'iptables') {
      expect(f.map((x) => [x.code, x.severity])).toEqual([['from-unknown', 'unknown']]);
      expect(f[0]!.message).toMatch(/cannot decide \(unsupported\): -m recent --rcheck --name KUBE-SEP-\S+: the list's contents \(\/proc\/net\/xt_recent\/KUBE-SEP-\S+\) are not in the capture/);
    } else {
      expect(f.map((x) => [x.code, x.severity])).toEqual([['from-reaches', 'info']]);
    }
  });

  it('eTP=Local without a local endpoint: dropped from outside by design (info), while the client Pod reaches the remote endpoints (kube-proxy sends Pod traffic to every endpoint)', () => {
    const node = generatedNode(base, { mode, jumps: true });
    const outside = fromFindings(from(node, '192.168.49.1', 'default/remote-local'), 'default/remote-local');
    const nodePort = outside.find((f) => f.frontend === '*:30082/TCP')!;
    expect([nodePort.code, nodePort.severity]).toEqual(['from-blocked', 'info']);
    expect(nodePort.message).toContain('(on 192.168.49.2) → dropped by ');
    expect(nodePort.message).toContain('by design');
    const pod = fromFindings(from(node, 'default/client', 'default/remote-local'), 'default/remote-local').find((f) => f.frontend === '*:30082/TCP')!;
    expect([pod.code, pod.severity]).toEqual(['from-reaches', 'info']);
    expect(pod.message).toContain('reaches 10.244.1.15:8080');
  });

  it('a frontend with no rule (the ClusterIP of sticky moved in the rules): broken — iptables leaves it untranslated, nftables drops it as an unallocated ClusterIP', () => {
    const node = generatedNode(base, { mode, jumps: true, rules: withService(RICH_SCENARIO, 'sticky', (s) => ({ ...s, clusterIP: '10.96.12.49' })) });
    const f = fromFindings(from(node, 'default/client', 'default/sticky'), 'default/sticky');
    expect(f.map((x) => [x.code, x.severity, x.frontend])).toEqual([['from-blocked', 'broken', '10.96.12.42:80/TCP']]);
    expect(f[0]!.message).toContain(mode === 'iptables' ? '→ not rewritten: forwarded out eth0 to 10.96.12.42:80 via 192.168.49.1' : '→ dropped by ip kube-proxy cluster-ips-check #');
  });

  it('an extra endpoint for an address in no slice: some branches reach it, degraded, the address named', () => {
    const node = generatedNode(base, { mode, jumps: true, rules: withService(RICH_SCENARIO, 'web', (s) => ({ ...s, endpoints: [...s.endpoints, endpointOf('10.244.0.99')] })) });
    const f = fromFindings(from(node, 'default/client', 'default/web'), 'default/web').find((x) => x.frontend === '10.96.12.34:80/TCP')!;
    expect([f.code, f.severity, f.endpoint]).toEqual(['from-partly', 'degraded', '10.244.0.99:8080']);
    expect(f.message).toContain('(3 of 4 branches)');
    expect(f.message).toContain('10.244.0.99:8080 (an address in no EndpointSlice of the Service)');
  });
});

describe('who the client is', () => {
  it('a Pod by name, bare name, or IP; node; an outside address', async () => {
    const api = (await snapshotOf('lab-iptables')).api!.value!;
    expect(resolveDiagnoseClient('default/client', api)).toEqual({ kind: 'pod', label: 'default/client', ip: '10.244.0.9', pod: 'default/client', podNode: 'lab-node' });
    expect(resolveDiagnoseClient('client', api).label).toBe('default/client');
    expect(resolveDiagnoseClient('10.244.0.9', api).label).toBe('default/client');
    expect(resolveDiagnoseClient('node', api)).toEqual({ kind: 'node', label: 'node', ip: null });
    expect(resolveDiagnoseClient('192.168.49.1', api)).toEqual({ kind: 'address', label: '192.168.49.1', ip: '192.168.49.1' });
  });

  it('an unknown Pod name is a usage error listing close names; a name without API objects too', async () => {
    const api = (await snapshotOf('lab-iptables')).api!.value!;
    const err = (() => {
      try {
        resolveDiagnoseClient('default/clinet', api);
      } catch (e) {
        return e;
      }
      return null;
    })();
    expect(err).toBeInstanceOf(UserError);
    expect((err as UserError).message).toBe('--from default/clinet: no Pod of that name in the API objects');
    expect((err as UserError).hint).toContain('default/client');
    expect(() => resolveDiagnoseClient('client', null)).toThrow(/needs the API objects/);
  });

  it('a Pod of another node is not walked here: unknown, naming its node', async () => {
    const snap = await snapshotOf('lab-iptables');
    const pod = snap.api!.value!.pods.find((p) => p.nodeName === 'lab-node2' && !p.hostNetwork)!;
    const d = from(snap, `${pod.meta.namespace}/${pod.meta.name}`, 'default/web');
    const f = fromFindings(d, 'default/web');
    expect(f.map((x) => [x.code, x.severity])).toEqual([['from-unknown', 'unknown']]);
    expect(f[0]!.message).toContain('runs on node lab-node2');
    expect(d.services[0]!.verdict).toBe('unknown');
  });

  it('a source without the node addresses and routes: every frontend unknown, naming what is missing', async () => {
    const snap = await snapshotOf('lab-iptables');
    const bare: NodeSnapshot = { ...snap, addrs: null, routes: null };
    const f = fromFindings(from(bare, 'default/client', 'kube-system/kube-dns'), 'kube-system/kube-dns');
    expect(f.map((x) => [x.code, x.severity])).toEqual([['from-unknown', 'unknown'], ['from-unknown', 'unknown']]);
    expect(f[0]!.message).toContain('no addresses and routes of the node');
  });

  it('the report: a from line in the text, the resolved client in the JSON', async () => {
    const snap = await snapshotOf('lab-iptables');
    const text = showDiagnose(snap, 'text', { service: 'kube-system/kube-dns', from: 'client' }).out;
    expect(text).toContain('from default/client (10.244.0.9): every frontend walked from this client\n');
    const json = JSON.parse(showDiagnose(snap, 'json', { service: 'kube-system/kube-dns', from: 'client' }).out) as { from: unknown };
    expect(json.from).toEqual({ kind: 'pod', label: 'default/client', ip: '10.244.0.9', pod: 'default/client', podNode: 'lab-node' });
  });
});
