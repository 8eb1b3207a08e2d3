/**
 * `fleet diagnose` over a fleet bundle of generated nodes: each node's iptables-save is
 * what kube-proxy's generator (src/analysis/kubeproxy-iptables.ts) writes for the API the
 * node last saw — lab-node2 an older one (a stale web endpoint), lab-node3 one without
 * kube-dns — and kube-proxy's /metrics where a node serves them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubeProxyFreshness } from '../../src/analysis/proxy-freshness.js';
import { diagnoseFleet } from '../../src/fleet/diagnose.js';
import { fleetDiagnoseNode } from '../../src/fleet/node-diagnosis.js';
import { parsePrometheusText } from '../../src/parsers/prometheus-text.js';
import { fleetExitCode, fleetJson, fleetText } from '../../src/report/fleet.js';
import { STALE_ENDPOINT } from '../lab/fleet-lab.js';
import { SYNC, writeLabFleet } from '../helpers/fleet-fixtures.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'nodescope-fleet-diag-'));
  writeLabFleet(dir);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('fleet diagnose', () => {
  it('names exactly the two bad nodes and their Services, with the endpoints', async () => {
    const d = await diagnoseFleet(dir, { diagnose: fleetDiagnoseNode });
    expect(d.nodes.map((n) => [n.name, n.status])).toEqual([['lab-node', 'ok'], ['lab-node2', 'degraded'], ['lab-node3', 'broken'], ['lab-node9', 'failed']]);
    expect(d.counts).toEqual({ ok: 1, unknown: 0, degraded: 1, broken: 1, failed: 1 });
    // default/empty has no endpoint: broken on every node alike, the API's fault, not a node's.
    expect(d.services.map((s) => [`${s.namespace}/${s.name}`, s.verdict, s.scope])).toEqual([['kube-system/kube-dns', 'broken', 'nodes'], ['default/web', 'degraded', 'nodes'], ['default/empty', 'broken', 'api']]);
    const bad = d.services.flatMap((s) => Object.entries(s.nodes).filter(([, c]) => c.ownFault).map(([n, c]) => `${n} ${s.namespace}/${s.name} ${c.verdict}`));
    expect(bad.sort()).toEqual(['lab-node2 default/web degraded', 'lab-node3 kube-system/kube-dns broken']);
    const web2 = d.services.find((s) => s.name === 'web')!.nodes['lab-node2']!;
    expect(web2.findings.map((f) => [f.code, f.endpoint])).toEqual([['endpoint-extra', `${STALE_ENDPOINT}:8080`], ['endpoint-extra', `${STALE_ENDPOINT}:8080`]]);
    const web = d.services.find((s) => s.name === 'web')!;
    expect(web.divergent).toEqual([{ node: 'lab-node2', programmed: expect.arrayContaining([`${STALE_ENDPOINT}:8080`]), differsFromApi: true, differsFromMajority: true, stale: [`${STALE_ENDPOINT}:8080`], missing: [] }]);
    expect(web.majority).toEqual(['10.244.0.23:8080', '10.244.0.31:8080', '10.244.1.15:8080']);
    const dns = d.services.find((s) => s.name === 'kube-dns')!;
    expect(dns.nodes['lab-node3']!.findings.map((f) => [f.code, f.frontend])).toEqual([['frontend-missing', '10.96.0.10:53/UDP'], ['frontend-missing', '10.96.0.10:53/TCP']]);
    expect(dns.divergent.map((x) => [x.node, x.missing.length])).toEqual([['lab-node3', 2]]);
    expect(fleetExitCode(d)).toBe(1);
  });

  it('reads each node\'s kube-proxy freshness, or says why not', async () => {
    const d = await diagnoseFleet(dir, { diagnose: fleetDiagnoseNode });
    expect(d.nodes[0]!.freshness).toEqual({ source: 'kube-proxy-metrics', families: [{ family: null, lastSyncAt: new Date(SYNC * 1000).toISOString(), lastQueuedAt: new Date((SYNC - 1) * 1000).toISOString(), syncAgeSeconds: 12, pendingSeconds: null }] });
    expect(d.nodes[1]!.freshness).toEqual({ source: 'unknown', reason: "kube-proxy's metrics were not readable (failed: curl: (7) Failed to connect to 127.0.0.1 port 10249: Connection refused)" });
  });

  it('prints the matrix as text and the documented JSON', async () => {
    const d = await diagnoseFleet(dir, { diagnose: fleetDiagnoseNode });
    const text = fleetText(d);
    expect(text).toContain('4 nodes: 1 ok, 1 degraded, 1 broken, 1 failed');
    expect(text).toMatch(/^SERVICE\s+lab-node2\s+lab-node3\s+\(1 other node: all ok\)$/m);
    expect(text).toMatch(/^kube-system\/kube-dns\s+ok\s+broken$/m);
    expect(text).toContain('the same on every node (the API objects, not a node):\n  default/empty broken: ');
    expect(text).toContain(`lab-node2: backend set differs from the API and the majority (stale ${STALE_ENDPOINT}:8080)`);
    const json = JSON.parse(fleetJson(d));
    expect(Object.keys(json)).toEqual(['apiVersion', 'kind', 'capturedAt', 'cluster', 'counts', 'nodes', 'services']);
    expect([json['apiVersion'], json['kind']]).toEqual(['nodescope.dev/v1', 'FleetDiagnosis']);
    expect(json.nodes[0]).toMatchObject({ name: 'lab-node', status: 'ok', mode: 'iptables' });
    expect(json.services[1]).toMatchObject({ namespace: 'default', name: 'web', verdict: 'degraded', scope: 'nodes' });
    expect(json.services[1].nodes['lab-node2']).toMatchObject({ verdict: 'degraded', ownFault: true, findings: [{ layer: 'dataplane', code: 'endpoint-extra', endpoint: `${STALE_ENDPOINT}:8080` }, { code: 'endpoint-extra' }] });
    expect(json.services[1].nodes['lab-node']).toEqual({ verdict: 'ok', ownFault: false, findings: [] });
  });

  it('reads kube-proxy metrics per IP family and sees a pending change', () => {
    const text = 'kubeproxy_sync_proxy_rules_last_timestamp_seconds{ip_family="IPv4"} 1000\nkubeproxy_sync_proxy_rules_last_queued_timestamp_seconds{ip_family="IPv4"} 1010\nkubeproxy_sync_proxy_rules_last_timestamp_seconds{ip_family="IPv6"} 1005\nnot a sample line\n';
    const parsed = parsePrometheusText(text, 'm');
    expect(parsed.diagnostics.map((x) => x.line)).toEqual([4]);
    const f = kubeProxyFreshness(parsed.value, 1030_000);
    expect(f).toEqual({ source: 'kube-proxy-metrics', families: [
      { family: 'IPv4', lastSyncAt: new Date(1000_000).toISOString(), lastQueuedAt: new Date(1010_000).toISOString(), syncAgeSeconds: 30, pendingSeconds: 20 },
      { family: 'IPv6', lastSyncAt: new Date(1005_000).toISOString(), lastQueuedAt: null, syncAgeSeconds: 25, pendingSeconds: null },
    ] });
  });
});
