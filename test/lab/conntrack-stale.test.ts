/**
 * Lab: the Conntrack pane's data from the real kernel, and a stale entry made for real.
 *
 * 1. After N HTTP requests (client pod → web ClusterIP, each a new connection) and M DNS
 *    queries (client pod → kube-dns ClusterIP, UDP, each from a new source port),
 *    nodescope (LocalTransport in the node namespace, the catalog's probes,
 *    buildSnapshot with the lab's API objects) lists exactly those flows, each with the
 *    endpoint the lab's servers say answered it: the web server answers its pod name
 *    (matched to the request by curl's local port), each dnsmasq logs the unique name it
 *    was asked (matched to the query by the name, sent from a known port).
 * 2. One UDP flow to kube-dns is kept alive from a fixed source port and lands on
 *    coredns-2 (10.244.0.3). That pod is replaced by one with a new IP (10.244.0.4, new
 *    namespace and veth), the EndpointSlice and kube-proxy's rules follow — but conntrack
 *    is not flushed, which is exactly kube-proxy's stale-UDP bug class: the old entry keeps
 *    DNATing the flow to 10.244.0.3, and its queries go unanswered. nodescope must flag
 *    that entry as stale (pointing at 10.244.0.3:53, kube-system/kube-dns) and no other.
 */
import React from 'react';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { conntrackRow, conntrackView, DEFAULT_CONNTRACK_SORT, type ConntrackRowView, type ConntrackView } from '../../src/analysis/conntrack-view.js';
import type { ScenarioPod } from '../../src/analysis/lab-scenario-types.js';
import type { NodeSnapshot } from '../../src/model/snapshot.js';
import { ConntrackPane } from '../../src/ui/panes/ConntrackPane.js';
import { labAvailable } from '../helpers/lab.js';
import { renderAt } from '../helpers/render.js';
import { apiObjectsText } from './api-objects.js';
import {
  dnsFromPort,
  httpExchanges,
  queriesSeen,
  readNode,
  reloadRulesKeepingConntrack,
  removeMovedPod,
  replaceDnsPod,
  scenarioWithMovedPod,
  senderLog,
  startFixedPortSender,
  type MovedPod,
} from './conntrack-stale-helpers.js';
import { LAB_SCENARIO, labDown, labUp, nsExecOk, type LabHandle, type ProxyMode } from './lab.js';
import { stopProcess } from './processes.js';

const PREFIX = 'nscs-';
const MOVED_NS = `${PREFIX}coredns-2-new`;
const canRun = labAvailable(['ip', 'nft', 'iptables-restore', 'curl', 'dnsmasq', 'conntrack', 'sysctl']);

const HTTP_REQUESTS = 9;
const DNS_QUERIES = 6;
const FIXED_PORTS = Array.from({ length: 30 }, (_, i) => 45053 + i);
const ZONE = LAB_SCENARIO.clusterDomain;

const pod = (key: string): ScenarioPod => LAB_SCENARIO.pods.find((p) => p.key === key)!;
const web = LAB_SCENARIO.services.find((s) => s.name === 'web')!;
const dnsVip = LAB_SCENARIO.services.find((s) => s.name === 'kube-dns')!.clusterIP;
const client = pod('client');
const oldDns = pod('coredns-2');
const newDns: ScenarioPod = { ...oldDns, ip: '10.244.0.4', name: 'coredns-5d78c9869d-w8p3z' };
const podByIp = new Map(LAB_SCENARIO.pods.map((p) => [p.ip, p]));

function rows(view: ConntrackView): ConntrackRowView[] {
  return [...view.order].map((i) => conntrackRow(view.index, i));
}

function viewOf(snapshot: NodeSnapshot): ConntrackView {
  return conntrackView(snapshot, { sort: DEFAULT_CONNTRACK_SORT, filter: '', service: null });
}

describe.each<ProxyMode>(['iptables', 'nftables'])('conntrack entries of real flows, %s mode', (mode) => {
  let lab: LabHandle;
  let moved: MovedPod | null = null;
  let dnsLogs: Record<string, string>;

  beforeAll(async () => {
    if (!canRun) return;
    await removeMovedPod(MOVED_NS, null);
    lab = await labUp(mode, { prefix: PREFIX });
    dnsLogs = Object.fromEntries(['coredns-1', 'coredns-2'].map((k) => [k, `${lab.stateDir}/dns-${k}.log`]));
  });
  afterAll(async () => {
    if (!canRun) return;
    await removeMovedPod(MOVED_NS, moved?.dns.pid ?? null);
    await labDown({ prefix: PREFIX });
  });

  it.runIf(canRun)('lists exactly the flows sent, each with the endpoint that answered it', async () => {
    await nsExecOk(lab.names.node, ['conntrack', '-F']);
    const http = await httpExchanges(lab.podNs('client'), `http://${web.clusterIP}:${web.ports[0]!.port}/`, HTTP_REQUESTS);
    const tag = `${mode}-${process.pid}`;
    const dns: { sport: number; name: string }[] = [];
    for (let i = 0; i < DNS_QUERIES; i++) {
      const name = `q${i}-${tag}.flows.${ZONE}`;
      const r = await dnsFromPort(lab.names, lab.podNs('client'), dnsVip, name);
      expect([r.from, r.rcode]).toEqual([`${dnsVip}:53`, 3]); // NXDOMAIN from the ClusterIP: the dnsmasq's own zone
      dns.push({ sport: r.sport, name });
    }
    // Who answered, as the servers saw it: the web body, the dnsmasq query logs.
    const seenBy = new Map<string, string>();
    for (const [key, log] of Object.entries(dnsLogs)) for (const name of await queriesSeen(log, client.ip)) seenBy.set(name, pod(key).ip);

    const view = viewOf(await readNode(lab.names, apiObjectsText(LAB_SCENARIO)));
    const all = rows(view);
    expect(all).toHaveLength(HTTP_REQUESTS + DNS_QUERIES);
    expect(view.summary).toMatchObject({ total: HTTP_REQUESTS + DNS_QUERIES, stale: 0 });
    const got = all.map((r) => [r.entry.proto, r.entry.orig.sport, r.nat.text, r.service, r.via, r.status].join(' ')).sort();
    const want = [
      ...http.map((h) => {
        const ep = LAB_SCENARIO.pods.find((p) => p.name === h.pod)!;
        return ['tcp', h.sport, `${client.ip}:${h.sport} → ${web.clusterIP}:80 ⇒ ${ep.ip}:8080`, 'default/web', 'vip', 'ok'].join(' ');
      }),
      ...dns.map((d) => {
        const ep = seenBy.get(d.name);
        expect(ep, d.name).toBeDefined();
        return ['udp', d.sport, `${client.ip}:${d.sport} → ${dnsVip}:53 ⇒ ${ep}:53`, 'kube-system/kube-dns', 'vip', 'ok'].join(' ');
      }),
    ].sort();
    expect(got).toEqual(want);
    // Real kernel state: TCP closed (TIME_WAIT), counters on (the lab sets nf_conntrack_acct=1).
    for (const r of all.filter((x) => x.entry.proto === 'tcp')) expect([r.entry.state, r.entry.flags]).toEqual(['TIME_WAIT', ['ASSURED']]);
    for (const r of all) expect(r.packets?.reply).toBeGreaterThan(0n);
    expect(view.summary.count).toBe(HTTP_REQUESTS + DNS_QUERIES);
  });

  it.runIf(canRun)('flags the one entry still pointing at a replaced CoreDNS pod as stale, and no other', async () => {
    await nsExecOk(lab.names.node, ['conntrack', '-F']);
    const ns = lab.podNs('client');
    // Find a fixed source port whose flow kube-proxy's random choice sends to coredns-2.
    let fixed = 0;
    for (const port of FIXED_PORTS) {
      const name = `probe-${port}-${mode}-${process.pid}.stale.${ZONE}`;
      await dnsFromPort(lab.names, ns, dnsVip, name, port);
      if ((await queriesSeen(dnsLogs['coredns-2']!, client.ip)).includes(name)) {
        fixed = port;
        break;
      }
    }
    expect(fixed, 'no port of 30 reached coredns-2').not.toBe(0);
    const sender = await startFixedPortSender(lab.names, ns, dnsVip, `kube-dns.kube-system.svc.${ZONE}`, fixed);
    try {
      await expect.poll(async () => (await senderLog(sender)).replies.length, { timeout: 5000 }).toBeGreaterThanOrEqual(2);
      expect((await senderLog(sender)).bound).toBe(fixed);

      // The rollout: new pod with a new IP, EndpointSlice updated, kube-proxy rules resynced, conntrack untouched.
      const scenario = scenarioWithMovedPod(LAB_SCENARIO, oldDns.key, newDns.ip, newDns.name);
      moved = await replaceDnsPod(lab.names, scenario, oldDns, newDns, MOVED_NS);
      await reloadRulesKeepingConntrack(lab.names, scenario, mode);
      const resynced = Date.now();
      await new Promise((r) => setTimeout(r, 1500));

      // The old flow is blackholed: sent on, never answered again.
      const log = await senderLog(sender);
      expect(log.sent.filter((t) => t > resynced + 300).length).toBeGreaterThan(3);
      expect(log.replies.filter((r) => r.t > resynced + 300)).toEqual([]);
      // A new flow reaches a current endpoint (coredns-1 or the new pod).
      const freshName = `fresh-${mode}-${process.pid}.stale.${ZONE}`;
      const fresh = await dnsFromPort(lab.names, ns, dnsVip, freshName);
      expect(fresh.from).toBe(`${dnsVip}:53`);
      const freshBy = (await queriesSeen(dnsLogs['coredns-1']!, client.ip)).includes(freshName) ? pod('coredns-1').ip : newDns.ip;
      if (freshBy === newDns.ip) expect(await queriesSeen(moved.dns.log, client.ip)).toContain(freshName);

      const snapshot = await readNode(lab.names, apiObjectsText(scenario));
      const view = viewOf(snapshot);
      const all = rows(view);
      const stale = all.filter((r) => r.status === 'stale');
      expect(stale.map((r) => [r.entry.proto, r.entry.orig.sport, r.service, r.staleReason, r.pointsAt])).toEqual([
        ['udp', fixed, 'kube-system/kube-dns', 'endpoint-gone', { ip: oldDns.ip, port: 53 }],
      ]);
      expect(view.summary.stale).toBe(1);
      // It still counts the queries sent after the resync: more original packets than replies.
      expect(stale[0]!.packets!.orig).toBeGreaterThan(stale[0]!.packets!.reply);
      // Every other entry is a probe that went to coredns-1, or the fresh query: all current.
      const others = all.filter((r) => r.status !== 'stale');
      expect(others.every((r) => r.status === 'ok' && r.service === 'kube-system/kube-dns')).toBe(true);
      expect(others.map((r) => r.nat.answeredBy.ip).sort()).toEqual([...Array(others.length - 1).fill(pod('coredns-1').ip), freshBy].sort());
      expect(podByIp.get(stale[0]!.nat.answeredBy.ip)?.key).toBe('coredns-2');

      // The pane says it, on the stale row.
      const at = all.indexOf(stale[0]!);
      const r = renderAt(React.createElement(ConntrackPane, { data: view, elapsedSeconds: 0, cursor: at, width: 120, height: 24, focused: true, lang: 'en' }), 120);
      const frame = r.frame();
      r.unmount();
      expect(frame).toContain(`stale: points at ${oldDns.ip}:53, not an endpoint of kube-system/kube-dns`);
      expect(frame).toMatch(new RegExp(`^stale\\s+udp\\s+\\d+ kube-system/kube-dns\\s+${client.ip.replaceAll('.', '\\.')}:${fixed} → `, 'm'));
      expect(frame.split('\n')[0]).toContain('1 stale');
    } finally {
      await stopProcess(lab.names, sender);
    }
  });
});
