/**
 * The node lab on the real kernel: for each proxy mode, real traffic from real
 * namespaces must go through the rules kube-proxy would write.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { labAvailable } from '../helpers/lab.js';
import { run } from './exec.js';
import {
  LAB_SCENARIO,
  dnsQuery,
  httpGet,
  httpProbe,
  labDown,
  labStatus,
  labUp,
  nsExec,
  sendHttp,
  type LabHandle,
  type ProxyMode,
} from './lab.js';
import { LAB_STATE_ROOT } from './names.js';
import { alive } from './processes.js';
import { LAB_BIN_DIR } from './servers.js';
import { existingNamespaces } from './topology.js';

const PREFIX = 'nslt-';
const canRun = labAvailable(['ip', 'nft', 'iptables-restore', 'curl', 'dnsmasq', 'conntrack', 'sysctl']);

const webPods = LAB_SCENARIO.pods.filter((p) => p.role === 'web').map((p) => p.name).sort();
const web = LAB_SCENARIO.services.find((s) => s.name === 'web');
const webPort = web?.ports[0];
const clusterIP = web?.clusterIP ?? '';
const nodeIP = LAB_SCENARIO.nodeIPs[0] ?? '';
const dnsIP = LAB_SCENARIO.services.find((s) => s.name === 'kube-dns')?.clusterIP ?? '';
const emptyIP = LAB_SCENARIO.services.find((s) => s.name === 'empty')?.clusterIP ?? '';
const domain = LAB_SCENARIO.clusterDomain;

describe.each<ProxyMode>(['iptables', 'nftables'])('node lab in %s mode', (mode) => {
  let lab: LabHandle;
  let pidsSeen: number[] = [];

  beforeAll(async () => {
    if (!canRun) return;
    lab = await labUp(mode, { prefix: PREFIX });
    pidsSeen = (await labStatus({ prefix: PREFIX })).processes.map((p) => p.pid);
  });
  afterAll(async () => {
    if (canRun) await labDown({ prefix: PREFIX });
  });

  it.runIf(canRun)('loaded the rules of this mode only', async () => {
    const nft = await nsExec(lab.names.node, ['nft', 'list', 'tables']);
    const tables = nft.stdout.split('\n').filter((l) => l.startsWith('table '));
    expect(tables).toEqual(mode === 'nftables' ? ['table ip kube-proxy'] : ['table ip filter', 'table ip nat']);
  });

  it.runIf(canRun)('answers from each of the three web endpoints through the ClusterIP', async () => {
    const tally = await sendHttp(lab.podNs('client'), `http://${clusterIP}:${webPort?.port}/`, 60);
    expect(tally.failures).toBe(0);
    expect(Object.keys(tally.byBody).sort()).toEqual(webPods);
    // Each decision was DNATed by the node's kernel: conntrack holds ClusterIP tuples replied by pods.
    const ct = await nsExec(lab.names.node, ['conntrack', '-L', '-p', 'tcp', '--orig-dst', clusterIP]);
    const replySources = new Set([...ct.stdout.matchAll(/dst=\S+ sport=\d+ dport=\d+ .*?src=(\S+) dst=/g)].map((m) => m[1]));
    expect([...replySources].sort()).toEqual(web?.endpoints.map((e) => e.ip).sort());
  });

  it.runIf(canRun)('answers NodePort traffic from outside the cluster, masqueraded to the node IP', async () => {
    const outside = lab.names.outside;
    const body = await httpGet(outside, `http://${nodeIP}:${webPort?.nodePort}/`);
    expect(webPods).toContain(body.trim());
    const seenAs = await httpGet(outside, `http://${nodeIP}:${webPort?.nodePort}/remote`);
    expect(seenAs.trim().split(':')[0]).toBe(nodeIP);
  });

  it.runIf(canRun)('answers DNS through the kube-dns ClusterIP over UDP and TCP', async () => {
    const udp = await dnsQuery(lab.podNs('client'), `web.default.svc.${domain}`, dnsIP);
    expect(udp.rcode).toBe('NOERROR');
    expect(udp.from).toBe(`${dnsIP}:53`); // reply un-DNATed back to the ClusterIP
    expect(udp.answers.map((a) => a.data)).toEqual([clusterIP]);
    const tcp = await dnsQuery(lab.podNs('client'), `web-headless.default.svc.${domain}`, dnsIP, { tcp: true });
    expect(tcp.answers.map((a) => a.data).sort()).toEqual(web?.endpoints.map((e) => e.ip).sort());
    const missing = await dnsQuery(lab.podNs('client'), `nope.default.svc.${domain}`, dnsIP);
    expect(missing.rcode).toBe('NXDOMAIN');
  });

  it.runIf(canRun)('rejects the Service without endpoints quickly (connection refused)', async () => {
    const probe = await httpProbe(lab.podNs('client'), `http://${emptyIP}/`, { timeoutMs: 3000 });
    expect(probe.exitCode).toBe(7);
    expect(probe.durationMs).toBeLessThan(1500);
  });

  it.runIf(canRun)('wrote the API objects of the scenario', () => {
    const list = JSON.parse(readFileSync(lab.apiObjectsPath, 'utf8')) as {
      kind: string;
      items: { kind: string; metadata: { name: string; labels?: Record<string, string> }; endpoints?: unknown }[];
    };
    expect(list.kind).toBe('List');
    const kinds = list.items.map((i) => i.kind);
    expect(kinds.filter((k) => k === 'Service')).toHaveLength(LAB_SCENARIO.services.length);
    expect(kinds.filter((k) => k === 'EndpointSlice')).toHaveLength(LAB_SCENARIO.services.length);
    expect(kinds.filter((k) => k === 'Pod')).toHaveLength(LAB_SCENARIO.pods.length);
    expect(kinds.filter((k) => k === 'Node')).toHaveLength(LAB_SCENARIO.nodes.length);
    const slice = list.items.find((i) => i.kind === 'EndpointSlice' && i.metadata.labels?.['kubernetes.io/service-name'] === 'web');
    expect(slice?.metadata.labels?.['endpointslice.kubernetes.io/managed-by']).toBe('endpointslice-controller.k8s.io');
  });

  it.runIf(canRun)('down leaves no namespaces and no processes', async () => {
    expect(pidsSeen.length).toBe(LAB_SCENARIO.pods.filter((p) => p.role !== 'client').length);
    const r = await labDown({ prefix: PREFIX });
    expect(r.namespaces).toHaveLength(lab.names.all.length);
    const existing = await existingNamespaces();
    expect(lab.names.all.filter((ns) => existing.has(ns))).toEqual([]);
    expect(pidsSeen.filter(alive)).toEqual([]);
    const state = await run(['ls', lab.stateDir]);
    expect(state.exitCode).not.toBe(0);
    // The helper scripts are shared: gone with the last instance, kept while another prefix runs.
    const others = existsSync(LAB_STATE_ROOT) ? readdirSync(LAB_STATE_ROOT).filter((e) => e !== 'bin') : [];
    if (others.length === 0) expect(existsSync(LAB_STATE_ROOT), `${LAB_STATE_ROOT} left behind`).toBe(false);
    else expect(existsSync(LAB_BIN_DIR), `instances still up: ${others.join(' ')}`).toBe(true);
  });
});
