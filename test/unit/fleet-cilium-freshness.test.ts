/**
 * How fresh a Cilium node's LB maps are (issue 18): the agent's own word in
 * `cilium-dbg status --verbose` (API watch, failing controllers) and the StateDB frontends'
 * reconciliation status (`Pending` until the BPF maps hold a change), read from each node's
 * bundle by `fleet diagnose`, in its JSON and text; `unknown` with the reason where the
 * agent could not be read.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ciliumFreshness, freshnessBrief, freshnessText } from '../../src/analysis/proxy-freshness.js';
import { diagnoseFleet, type FleetDiagnosis } from '../../src/fleet/diagnose.js';
import { fleetDiagnoseNode } from '../../src/fleet/node-diagnosis.js';
import { parseAgeText, parseCiliumAgentFacts } from '../../src/parsers/cilium-controllers.js';
import { parseCiliumStateDbTables } from '../../src/parsers/cilium-statedb.js';
import { fleetJson, fleetText } from '../../src/report/fleet.js';
import { frontendsText, statusText, type FrontendRow } from '../helpers/cilium-agent-text.js';
import { writeCiliumFleet } from '../helpers/fleet-cilium-fixtures.js';

const HEALTHY = [
  ['cilium-health-ep', '14s ago', 'never', 0, 'no error'],
  ['sync-host-ips', '32s ago', 'never', 0, 'no error'],
] as const;
const WEB = '10.244.0.23:8080/TCP, 10.244.0.31:8080/TCP, 10.244.1.15:8080/TCP';
const rows = (webStatus: string, webSince: string): FrontendRow[] => [
  ['10.96.0.10:53/UDP', 'ClusterIP', 'kube-system/kube-dns', 'dns', '10.244.0.40:53/UDP', 'Done', '3h', ''],
  ['10.96.12.34:80/TCP', 'ClusterIP', 'default/web', 'http', WEB, webStatus, webSince, ''],
];

let dir: string;
let d: FleetDiagnosis;
beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'nodescope-fleet-cfresh-'));
  writeCiliumFleet(dir, {
    'lab-node': { status: statusText('Ok   1.34 (v1.34.2) [linux/amd64]', HEALTHY), frontends: frontendsText(rows('Done', '5m2s')) },
    'lab-node2': {
      status: statusText('Failure   Get "https://10.96.0.1:443/version": dial tcp 10.96.0.1:443: i/o timeout', [...HEALTHY, ['k8s-heartbeat', '4m0s ago', '12s ago', 9, 'context deadline exceeded']]),
      frontends: frontendsText(rows('Pending', '3m5s')),
    },
  });
  d = await diagnoseFleet(dir, { diagnose: fleetDiagnoseNode });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the age words of Cilium texts', () => {
  it("reads Go's Duration.String() and Kubernetes' HumanDuration, with or without ` ago`", () => {
    expect(['14s ago', '4h40m3s ago', '4m0s', '3m5s', '2d3h', '1y20d', '1.5s', '0s', '250ms'].map(parseAgeText)).toEqual([14, 16803, 240, 185, 183600, 365 * 86400 + 20 * 86400, 1.5, 0, 0.25]);
    expect(['never', '<invalid>', '', '5 m', 'ago'].map(parseAgeText)).toEqual([null, null, null, null, null]);
  });
});

describe('cilium-dbg status --verbose: the agent facts', () => {
  it('reads the API watch, the controller counts and rows with their ages, and leaves other lines alone', () => {
    const r = parseCiliumAgentFacts(statusText('Failure   dial tcp 10.96.0.1:443: i/o timeout', [...HEALTHY, ['k8s-heartbeat', 'never', '12s ago', 9, 'context deadline exceeded']]), 's');
    expect(r.diagnostics).toEqual([]);
    expect(r.value.kubernetes).toEqual({ state: 'Failure', message: 'dial tcp 10.96.0.1:443: i/o timeout' });
    expect([r.value.controllersHealthy, r.value.controllersTotal]).toEqual([2, 3]);
    expect(r.value.controllers).toEqual([
      { name: 'cilium-health-ep', lastSuccessSeconds: 14, lastErrorSeconds: null, failures: 0, message: 'no error' },
      { name: 'k8s-heartbeat', lastSuccessSeconds: null, lastErrorSeconds: 12, failures: 9, message: 'context deadline exceeded' },
      { name: 'sync-host-ips', lastSuccessSeconds: 32, lastErrorSeconds: null, failures: 0, message: 'no error' },
    ]);
  });

  it('Stale status entries are kept; a row it cannot read is reported by line', () => {
    const text = 'Kubernetes:   Ok   1.34\nStale status:   "k8s" since 2026-12-05T10:00:00Z, "kvstore" since 2026-12-05T09:59:00Z\nController Status:   1/1 healthy\n  Name   Last success   Last error   Count   Message\n  a      1s ago         never        x       no error\n';
    const r = parseCiliumAgentFacts(text, 's');
    expect(r.value.stale).toEqual(['"k8s" since 2026-12-05T10:00:00Z', '"kvstore" since 2026-12-05T09:59:00Z']);
    expect(r.diagnostics.map((x) => [x.code, x.line])).toEqual([['bad-row', 5]]);
  });
});

describe('StateDB frontends', () => {
  it('a backend list cut at five (`+ N more ...`) keeps the five and counts the rest', () => {
    const five = ['10.0.0.1', '10.0.0.2', '10.0.0.3', '10.0.0.4', '10.0.0.5'].map((ip) => `${ip}:80/TCP`).join(', ');
    const r = parseCiliumStateDbTables(frontendsText([['10.96.0.1:80/TCP', 'ClusterIP', 'a/b', '', `${five} + 3 more ...`, 'Done', '1m', '']]), 't');
    expect(r.diagnostics).toEqual([]);
    expect(r.value.frontends[0]).toMatchObject({ backendsNotShown: 3, status: 'Done', since: '1m' });
    expect(r.value.frontends[0]!.backends).toHaveLength(5);
  });
});

describe('fleet diagnose: Cilium freshness per node', () => {
  it('says each node\'s freshness from its agent, or why it is unknown', () => {
    const [n1, n2, n3] = d.nodes;
    expect(n1!.freshness).toEqual({
      source: 'cilium',
      agent: { kubernetes: { state: 'Ok', message: '1.34 (v1.34.2) [linux/amd64]' }, stale: [], controllersHealthy: 2, controllersTotal: 2, controllersFailing: [] },
      frontends: { total: 2, done: 2, pending: 0, refreshing: 0, error: 0, oldestPendingSeconds: null, lastChangeSeconds: 302, errors: [] },
    });
    expect(n2!.freshness).toMatchObject({ source: 'cilium', agent: { kubernetes: { state: 'Failure' }, controllersFailing: [{ name: 'k8s-heartbeat', failures: 9, lastSuccessSeconds: 240 }] }, frontends: { pending: 1, oldestPendingSeconds: 185 } });
    expect(n3!.freshness).toEqual({ source: 'unknown', reason: expect.stringMatching(/^cilium-dbg status was not readable \(failed: Error: .*cilium\.sock.*\); the agent's StateDB frontends were not readable \(failed: /) });
    expect(d.nodes.map((n) => freshnessBrief(n.freshness))).toEqual([{ kind: 'synced', seconds: 302 }, { kind: 'pending', seconds: 185 }, { kind: 'unknown' }]);
  });

  it('the JSON carries it under nodes[].freshness and the text says it in one line', () => {
    const json = JSON.parse(fleetJson(d));
    expect(json.nodes[1].freshness).toMatchObject({ source: 'cilium', frontends: { pending: 1 } });
    const text = fleetText(d);
    expect(text).toContain('Cilium: API watch Ok; controllers 2/2 healthy; LB frontends: 2 done; last change 302 s before capture');
    expect(text).toContain('Cilium: API watch Failure (Get "https://10.96.0.1:443/version": dial tcp 10.96.0.1:443: i/o timeout); controllers 2/3 healthy (failing: k8s-heartbeat ×9); LB frontends: 1 done, 1 pending (oldest 185 s)');
  });

  it('one source read is enough; the other is named as unread', () => {
    const f = ciliumFreshness('cilium-dbg status was not readable (timeout)', parseCiliumStateDbTables(frontendsText(rows('Error', '10s').map((r) => [...r.slice(0, 7), r[5] === 'Error' ? 'map full' : ''] as unknown as FrontendRow)), 't').value.frontends);
    expect(f).toMatchObject({ source: 'cilium', agent: null, agentUnread: 'cilium-dbg status was not readable (timeout)', frontends: { error: 1, errors: [{ frontend: '10.96.12.34:80/TCP', error: 'map full' }] } });
    expect(freshnessBrief(f)).toEqual({ kind: 'errors', count: 1 });
    expect(freshnessText(f)).toContain('agent status unknown: cilium-dbg status was not readable (timeout)');
  });
});
