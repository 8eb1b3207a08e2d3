/**
 * The `kube-proxy-metrics` probe end to end: a lab node namespace with kube-proxy's rules and,
 * on 127.0.0.1:10249 inside it, a tiny HTTP server answering `/metrics` with a recorded
 * kube-proxy metrics text (its sync timestamps set relative to now). The real binary captures
 * the namespace (`capture --netns`: curl inside it), and `fleet diagnose` reads the node's
 * freshness from the bundle: the last sync and the change queued after it, per IP family.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateIptablesRestore } from '../../src/analysis/kubeproxy-iptables.js';
import { FLEET_FORMAT_VERSION, writeFleetManifest } from '../../src/fleet/bundle.js';
import { labAvailable } from '../helpers/lab.js';
import { runBinary } from '../helpers/run-binary.js';
import { nsExec, nsExecOk, run, runOk, sleep } from './exec.js';
import { FLEET_SCENARIO, fleetApiObjects } from './fleet-lab.js';

const PREFIX = 'nsfm-';
const NS = `${PREFIX}lab-node`;
const canRun = labAvailable(['ip', 'iptables-restore', 'curl', 'python3']);
let dir: string;
let server: ChildProcess | null = null;
const now = Math.floor(Date.now() / 1000);
const SYNC = now - 30;
const QUEUED = now - 5;

/** A kube-proxy /metrics excerpt as a dual-stack kube-proxy (v1.31) serves it, timestamps filled in. */
function metricsText(): string {
  return [
    '# HELP kubeproxy_network_programming_duration_seconds [ALPHA] In Cluster Network Programming Latency in seconds',
    '# TYPE kubeproxy_network_programming_duration_seconds histogram',
    'kubeproxy_network_programming_duration_seconds_bucket{le="0.25"} 12',
    'kubeproxy_network_programming_duration_seconds_bucket{le="+Inf"} 40',
    'kubeproxy_network_programming_duration_seconds_sum 61.5',
    'kubeproxy_network_programming_duration_seconds_count 40',
    '# HELP kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds [ALPHA] The last time a sync of proxy rules was queued',
    '# TYPE kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds gauge',
    `kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds{ip_family="IPv4"} ${QUEUED}.25`,
    `kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds{ip_family="IPv6"} ${SYNC - 60}`,
    '# HELP kubeproxy_sync_proxy_rules_last_timestamp_seconds [ALPHA] The last time proxy rules were successfully synced',
    '# TYPE kubeproxy_sync_proxy_rules_last_timestamp_seconds gauge',
    `kubeproxy_sync_proxy_rules_last_timestamp_seconds{ip_family="IPv4"} ${SYNC}.5`,
    `kubeproxy_sync_proxy_rules_last_timestamp_seconds{ip_family="IPv6"} ${SYNC}.5`,
    '# HELP process_start_time_seconds Start time of the process since unix epoch in seconds.',
    '# TYPE process_start_time_seconds gauge',
    `process_start_time_seconds ${now - 86400}`,
    '',
  ].join('\n');
}

const cli = (args: string[]) => runBinary(args, dir);

beforeAll(async () => {
  if (!canRun) return;
  await run(['ip', 'netns', 'del', NS]);
  dir = mkdtempSync(path.join(tmpdir(), 'nodescope-fleet-metrics-'));
  writeFileSync(path.join(dir, 'metrics'), metricsText());
  await runOk(['ip', 'netns', 'add', NS]);
  await nsExecOk(NS, ['ip', 'link', 'set', 'lo', 'up']);
  await nsExecOk(NS, ['iptables-restore'], { input: generateIptablesRestore({ ...FLEET_SCENARIO, nodeName: 'lab-node', nodeIPs: ['192.168.49.2'] }, { includeJumpRules: true, nfacct: false, randomFully: true }) });
  // `python3 -m http.server` serves DIR/metrics at /metrics: kube-proxy's address and path.
  server = spawn('ip', ['netns', 'exec', NS, 'python3', '-m', 'http.server', '10249', '--bind', '127.0.0.1', '--directory', dir], { stdio: 'ignore' });
  for (let i = 0; i < 50; i++) {
    if ((await nsExec(NS, ['curl', '-sS', '--max-time', '1', 'http://127.0.0.1:10249/metrics'])).exitCode === 0) break;
    await sleep(200);
  }
}, 60_000);

afterAll(async () => {
  if (!canRun) return;
  if (server?.pid) server.kill('SIGTERM');
  await run(['ip', 'netns', 'del', NS]);
  rmSync(dir, { recursive: true, force: true });
}, 30_000);

describe.runIf(canRun)('kube-proxy /metrics freshness, end to end', () => {
  it('the probe reads the served metrics inside the node namespace and fleet diagnose says the sync and the pending change per family', async () => {
    const fleet = path.join(dir, 'fleet');
    const apiFile = path.join(dir, 'api.json');
    writeFileSync(apiFile, JSON.stringify(fleetApiObjects()));
    const r = await cli(['capture', '--netns', NS, '--api-file', apiFile, '--no-dns', '-o', path.join(fleet, 'nodes', 'lab-node')]);
    expect(r.code, r.stderr).toBe(0);
    const manifest = JSON.parse(readFileSync(path.join(fleet, 'nodes', 'lab-node', 'manifest.json'), 'utf8')) as { probes: { id: string; status: string; startedAt: string }[] };
    const probe = manifest.probes.find((p) => p.id === 'kube-proxy-metrics')!;
    expect(probe.status).toBe('ok');
    expect(readFileSync(path.join(fleet, 'nodes', 'lab-node', 'probes', 'kube-proxy-metrics.stdout'), 'utf8')).toBe(metricsText());
    writeFileSync(path.join(fleet, 'api.json'), JSON.stringify(fleetApiObjects()));
    writeFleetManifest(fleet, { formatVersion: FLEET_FORMAT_VERSION, capturedAt: new Date().toISOString(), via: 'node-debug-pod', nodes: [{ name: 'lab-node', dir: 'nodes/lab-node', status: 'ok' }] });
    const d = await cli(['fleet', 'diagnose', fleet, '-o', 'json']);
    expect(d.stderr).toBe('');
    const at = Date.parse(probe.startedAt) / 1000;
    const round = (s: number) => Math.round(s * 10) / 10;
    const json = JSON.parse(d.stdout) as { nodes: { freshness: unknown }[] };
    expect(json.nodes[0]!.freshness).toEqual({
      source: 'kube-proxy-metrics',
      families: [
        { family: 'IPv4', lastSyncAt: new Date((SYNC + 0.5) * 1000).toISOString(), lastQueuedAt: new Date((QUEUED + 0.25) * 1000).toISOString(), syncAgeSeconds: round(at - SYNC - 0.5), pendingSeconds: round(at - QUEUED - 0.25) },
        { family: 'IPv6', lastSyncAt: new Date((SYNC + 0.5) * 1000).toISOString(), lastQueuedAt: new Date((SYNC - 60) * 1000).toISOString(), syncAgeSeconds: round(at - SYNC - 0.5), pendingSeconds: null },
      ],
    });
    const text = await cli(['fleet', 'diagnose', fleet, '-o', 'text']);
    expect(text.stdout).toMatch(/IPv4: synced \d+(\.\d)? s before capture, a change pending \d+(\.\d)? s; IPv6: synced \d+(\.\d)? s before capture/);
  }, 120_000);
});
