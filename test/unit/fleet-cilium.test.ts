/**
 * `fleet diagnose` over a fleet of Cilium nodes (kube-proxy replacement): each node's LB maps
 * hold what the agent would write for the API that node last saw (test/helpers/fleet-cilium-fixtures.ts)
 * — lab-node2 a web backend whose pod is gone, lab-node3 no kube-dns — read back through
 * nodescope's own map decoder. The fleet must name those two nodes, their Services and the
 * endpoints, from the Cilium backend sets; a slot naming a backend the map lacks is named.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ciliumBackends, ciliumExpectedBackends, missingBackend, programmedBackends } from '../../src/analysis/programmed-backends.js';
import { diagnoseFleet, type FleetDiagnosis } from '../../src/fleet/diagnose.js';
import { fleetDiagnoseNode } from '../../src/fleet/node-diagnosis.js';
import type { LbTable } from '../../src/model/cilium.js';
import type { Service } from '../../src/model/k8s.js';
import { fleetText } from '../../src/report/fleet.js';
import { writeCiliumFleet } from '../helpers/fleet-cilium-fixtures.js';
import { snapshotOfDir } from '../helpers/fixtures.js';
import { STALE_ENDPOINT } from '../lab/fleet-lab.js';

let dir: string;
let d: FleetDiagnosis;
beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'nodescope-fleet-cilium-'));
  writeCiliumFleet(dir);
  d = await diagnoseFleet(dir, { diagnose: fleetDiagnoseNode });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('fleet diagnose on Cilium nodes', () => {
  it('reads every node as Cilium and names exactly the two bad nodes, with the endpoints', () => {
    expect(d.nodes.map((n) => [n.name, n.mode, n.status])).toEqual([['lab-node', 'cilium', 'ok'], ['lab-node2', 'cilium', 'degraded'], ['lab-node3', 'cilium', 'broken']]);
    const web = d.services.find((s) => s.name === 'web')!;
    expect(web.divergent).toEqual([{ node: 'lab-node2', programmed: expect.arrayContaining([`${STALE_ENDPOINT}:8080`]), differsFromApi: true, differsFromMajority: true, stale: [`${STALE_ENDPOINT}:8080`], missing: [] }]);
    expect(web.majority).toEqual(['10.244.0.23:8080', '10.244.0.31:8080', '10.244.1.15:8080']);
    const dns = d.services.find((s) => s.name === 'kube-dns')!;
    expect(dns.divergent.map((x) => [x.node, x.stale, x.missing])).toEqual([['lab-node3', [], expect.arrayContaining([expect.stringMatching(/:53$/)])]]);
    expect(dns.divergent[0]!.missing).toEqual(dns.majority);
    const named = d.services.flatMap((s) => s.divergent.map((x) => `${x.node} ${s.namespace}/${s.name}`)).sort();
    expect(named).toEqual(['lab-node2 default/web', 'lab-node3 kube-system/kube-dns']);
    expect(fleetText(d)).toContain(`lab-node2: backend set differs from the API and the majority (stale ${STALE_ENDPOINT}:8080)`);
  });

  it('the Cilium backend set is the live slots of the ClusterIP frontends; a missing backend is named', async () => {
    const snap = await snapshotOfDir(path.join(dir, 'nodes', 'lab-node2'));
    const web = snap.api!.value!.services.find((s) => s.meta.name === 'web')!;
    const read = programmedBackends(snap, web);
    expect(read).toMatchObject({ kind: 'read', via: 'cilium', hasRules: true });
    expect(read.kind === 'read' && read.endpoints).toContain(`${STALE_ENDPOINT}:8080`);
    const lb = snap.lb!.value!;
    const first = lb.services.find((s) => s.frontend.ip === web.clusterIP)!;
    const broken: LbTable = { ...lb, services: lb.services.map((s) => (s === first ? { ...s, slots: s.slots.map((x, i) => (i === 0 ? { ...x, backendId: 777, backend: null } : x)) } : s)) };
    expect(ciliumBackends(broken, web).endpoints).toContain(missingBackend(777));
    // Slots after `count` (terminating, quarantined) take no new connection: not in the set.
    const fewer: LbTable = { ...lb, services: lb.services.map((s) => (s.frontend.ip === web.clusterIP ? { ...s, count: 1 } : s)) };
    expect(ciliumBackends(fewer, web).endpoints).toHaveLength(1);
    const none = { ...web, clusterIP: '10.96.99.99' } as Service;
    expect(ciliumBackends(lb, none)).toEqual({ endpoints: [], hasRules: false });
  });

  it("the expected set is the agent's: IPv4 ClusterIP frontends, endpoints with a share of new connections", () => {
    const fe = (over: object) => ({ kind: 'clusterIP' as const, ip: '10.96.0.1', port: 80, protocol: 'TCP', service: 'a/b', portName: null, outcome: 'endpoints' as const, affinitySeconds: null, evidence: [], problems: [], endpoints: [{ ip: '10.0.0.1', port: 8080, protocol: null, weight: 0.5, evidence: [] }, { ip: '10.0.0.2', port: 8080, protocol: null, weight: 0, evidence: [] }], ...over });
    expect(ciliumExpectedBackends([fe({}), fe({ kind: 'nodePort', endpoints: [{ ip: '10.0.0.9', port: 1, protocol: null, weight: 1, evidence: [] }] }), fe({ scope: 'internal', endpoints: [{ ip: '10.0.0.8', port: 1, protocol: null, weight: 1, evidence: [] }] }), fe({ ip: 'fd00::1' })])).toEqual(['10.0.0.1:8080']);
  });
});
