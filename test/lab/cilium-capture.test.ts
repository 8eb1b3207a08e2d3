/**
 * The node lab in Cilium mode, read the way `nodescope capture --netns … --bpf-root …` reads
 * a node: the real probe runner through `LocalTransport({netns})`, bpftool dumping the maps
 * the lab pinned, the snapshot built from what the probes printed. Every frontend → backend
 * pair must be the one the lab wrote, every frontend must find its Service in the API
 * objects, and mode detection must say Cilium with 0 KUBE- chains. `labDown` must remove
 * the maps, the bpffs and the namespaces.
 */
import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allDiagnostics, buildSnapshot } from '../../src/collect/build-snapshot.js';
import { buildLbView, type LbView } from '../../src/analysis/lb-view.js';
import { countChains, detectProxyMode } from '../../src/analysis/proxy-mode.js';
import { formatFrontend, type LbTable } from '../../src/model/cilium.js';
import { joinHostPort } from '../../src/net/address.js';
import type { NodeSnapshot } from '../../src/model/snapshot.js';
import { LocalTransport } from '../../src/sources/local.js';
import { runProbes } from '../../src/sources/probe-runner.js';
import { labAvailable } from '../helpers/lab.js';
import { bpffsMounted } from './cilium-maps.js';
import { labBpffs } from './cilium-mode.js';
import { ciliumServicesOf, labCiliumTable } from './cilium-scenario.js';
import { existingNamespaces } from './topology.js';
import { labDown, labUp, nsExec, type LabHandle } from './lab.js';

const PREFIX = 'nscc-';
const available = labAvailable(['bpftool', 'ip', 'iptables-restore', 'nft', 'conntrack', 'dnsmasq', 'curl']);

/** `frontend Service #id count+qcount → slot:backend(state)` lines, sorted. */
const pairsOfView = (v: LbView) =>
  v.frontends.map((f) => `${f.address} ${f.service?.namespace}/${f.service?.name} #${f.revNatId} ${f.count}+${f.qcount} → ${f.backends.map((b) => `${b.slot}:${b.address}(${b.state})`).join(' ')}`).sort();
const pairsOfTable = (t: LbTable) =>
  t.services.map((s) => `${formatFrontend(s.frontend)} ${s.name} #${s.id} ${s.count}+${s.qcount} → ${s.slots.map((sl) => `${sl.slot}:${sl.backend ? joinHostPort(sl.backend.ip, sl.backend.port) : '?'}(${sl.backend?.state})`).join(' ')}`).sort();

describe.skipIf(!available)('Cilium mode of the node lab, captured through the netns transport', () => {
  let lab: LabHandle;
  let snapshot: NodeSnapshot;
  let wrote: LbTable;

  beforeAll(async () => {
    lab = await labUp('cilium', { prefix: PREFIX });
    wrote = labCiliumTable(ciliumServicesOf(lab.scenario), lab.scenario.nodeIPs);
    const transport = new LocalTransport({ netns: lab.names.node });
    const runs = await runProbes(transport, { params: { bpfRoot: lab.bpfRoot ?? undefined } });
    snapshot = buildSnapshot({
      runs,
      apiText: readFileSync(lab.apiObjectsPath, 'utf8'),
      source: { kind: transport.kind, label: transport.label, live: true },
      capturedAt: new Date().toISOString(),
    });
  }, 180_000);

  afterAll(async () => {
    await labDown({ prefix: PREFIX });
  }, 60_000);

  it('pins the maps under its own bpffs, which the node namespace sees', () => {
    expect(lab.bpfRoot).toBe(`/run/nodescope-lab/${PREFIX}/bpffs/tc/globals`);
    expect(snapshot.lbMapsRead).toEqual(['cilium_lb4_services_v2', 'cilium_lb4_backends_v3', 'cilium_lb4_reverse_nat', 'cilium_lb6_services_v2', 'cilium_lb6_backends_v3', 'cilium_lb6_reverse_nat']);
    expect(snapshot.lb?.diagnostics).toEqual([]);
  });

  it('has no kube-proxy rules, only CILIUM_ chains and cilium_host, and mode detection says Cilium', () => {
    expect(countChains(snapshot.iptables?.value, 'KUBE-')).toBe(0);
    expect(countChains(snapshot.iptables?.value, 'CILIUM_')).toBe(10);
    expect(snapshot.nft?.value?.tables.map((t) => `${t.family} ${t.name}`)).not.toContain('ip kube-proxy');
    expect(snapshot.addrs?.value?.map((i) => i.ifname)).toEqual(expect.arrayContaining(['cilium_host', 'cilium_net']));
    const mode = detectProxyMode(snapshot);
    expect(mode.mode).toBe('cilium');
    const slots = wrote.services.reduce((n, s) => n + s.slots.length, 0);
    expect(mode.evidence.slice(0, 2)).toEqual(['Cilium KPR: 0 KUBE- chains', `cilium_lb4_services_v2: ${wrote.services.length} frontends + ${slots} backend slots = ${wrote.services.length + slots} entries`]);
    expect(allDiagnostics(snapshot).filter((d) => d.severity === 'error')).toEqual([]);
  });

  it('every frontend → backend pair is the one the lab wrote, with the Service the API objects name', () => {
    const view = buildLbView(snapshot);
    expect(view.status).toBe('ready');
    expect(view.source).toMatchObject({ kind: 'bpf-maps', agent: 'not-asked' });
    expect(pairsOfView(view)).toEqual(pairsOfTable(wrote));
  });

  it('backends carry their node and EndpointSlice conditions: the terminating one is on lab-node2, not ready, serving', () => {
    const view = buildLbView(snapshot);
    const endpoints = lab.scenario.services.flatMap((s) => s.endpoints);
    for (const f of view.frontends) {
      for (const b of f.backends) {
        const ep = endpoints.find((e) => b.address?.startsWith(`${e.ip}:`));
        expect(b.nodeName).toBe(ep?.nodeName);
        expect(b.conditions).toEqual({ ready: ep?.ready, serving: ep?.serving, terminating: ep?.terminating });
        expect(b.state).toBe(ep?.ready ? 'active' : 'terminating');
      }
    }
    expect(view.frontends.flatMap((f) => f.backends).filter((b) => b.state === 'terminating').map((b) => b.nodeName)).toEqual(['lab-node2', 'lab-node2', 'lab-node2']);
  });

  it('down removes the maps, the bpffs, the rules and every namespace, the added api pod included', async () => {
    const pin = `${lab.bpfRoot}/cilium_lb4_services_v2`;
    expect((await nsExec(lab.names.node, ['bpftool', '-j', 'map', 'show', 'pinned', pin])).exitCode).toBe(0);
    await labDown({ prefix: PREFIX });
    expect(bpffsMounted(labBpffs(lab.names))).toBe(false);
    expect(existsSync(lab.stateDir)).toBe(false);
    const left = await existingNamespaces();
    expect(Object.values(lab.names.pods).filter((ns) => left.has(ns))).toEqual([]);
    expect(left.has(lab.names.node)).toBe(false);
    expect(lab.names.pods['api-1']).toBe(`${PREFIX}api-1`);
  }, 60_000);
});
