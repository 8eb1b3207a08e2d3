/**
 * The capture generator (bench/gen): the same seed gives the same bytes; what it writes is
 * consistent (every Service's rules, maps and flows lead to its endpoints, counters add
 * up); and nodescope's own parsers read every file without a diagnostic, through the same
 * replay path `nodescope --replay` uses.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateWorld, modeOutputs, writeGeneratedBundles, type GenOptions } from '../../bench/gen/capture.js';
import { generateScenario } from '../../bench/gen/scenario.js';
import { allDiagnostics } from '../../src/collect/build-snapshot.js';
import { categorizeEndpoints, serviceToPorts } from '../../src/analysis/kubeproxy-serviceports.js';
import { iptablesEndpointChain, iptablesServiceChain } from '../../src/analysis/kubeproxy-names.js';
import { findChain, type IptablesRuleset } from '../../src/model/iptables.js';
import { findMap, findTable } from '../../src/model/nftables.js';
import { decodeCiliumLbMaps } from '../../src/parsers/bpftool-lb-decode.js';
import { parseConntrack } from '../../src/parsers/conntrack.js';
import { parseIptablesSave } from '../../src/parsers/iptables-save.js';
import { parseK8sObjects } from '../../src/parsers/k8s-objects.js';
import { parseNftJson } from '../../src/parsers/nft-json.js';
import { parseNftText } from '../../src/parsers/nft-text.js';
import { loadSnapshot } from '../../src/collect/session.js';
import { ReplayTransport } from '../../src/sources/replay.js';

const options = (over: Partial<GenOptions> = {}): GenOptions => ({
  services: 60,
  endpoints: 3,
  // A seed whose 60 Services include every case: no endpoints (ClusterIP and NodePort), UDP, terminating endpoints.
  seed: 's9',
  modes: ['iptables', 'nftables', 'cilium'],
  conntrack: 400,
  ...over,
});

const tmp: string[] = [];
afterAll(() => {
  for (const d of tmp) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const d = mkdtempSync(path.join(os.tmpdir(), 'nodescope-gen-'));
  tmp.push(d);
  return d;
}

function filesOf(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const e of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (e.isFile()) {
      const full = path.join(e.parentPath, e.name);
      out.set(path.relative(dir, full), readFileSync(full, 'utf8'));
    }
  }
  return out;
}

const world = generateWorld(options());
const outputs = {
  iptables: modeOutputs(world, 'iptables'),
  nftables: modeOutputs(world, 'nftables'),
  cilium: modeOutputs(world, 'cilium'),
};
/** Every proxied Service port with the endpoints kube-proxy uses for it. */
const ports = serviceToPorts(world.scenario).map((p) => ({ port: p, endpoints: categorizeEndpoints(p).clusterEndpoints }));

describe('generated scenario', () => {
  it('is the same for the same seed and different for another', () => {
    const size = { services: 200, endpoints: 4, seed: 'a' };
    expect(generateScenario(size)).toEqual(generateScenario(size));
    expect(generateScenario({ ...size, seed: 'b' })).not.toEqual(generateScenario(size));
  });

  it('has the requested Services (plus kubernetes and kube-dns) with unique ClusterIPs and endpoint addresses', () => {
    const s = generateScenario({ services: 3000, endpoints: 5, seed: 'u' });
    expect(s.services).toHaveLength(3002);
    expect(new Set(s.services.map((x) => x.clusterIP)).size).toBe(3002);
    const eps = s.services.flatMap((x) => x.endpoints.map((e) => e.ip));
    expect(new Set(eps).size).toBe(eps.length);
    const sized = s.services.slice(2).filter((x) => x.endpoints.length > 0);
    expect(sized.every((x) => x.endpoints.length === 5)).toBe(true);
    expect(sized.length).toBeGreaterThan(2900);
  });

  it('refuses sizes it cannot lay out', () => {
    expect(() => generateScenario({ services: -1, endpoints: 1, seed: 'x' })).toThrow(RangeError);
    expect(() => generateScenario({ services: 1, endpoints: 1, seed: 'x', nodes: 9 })).toThrow(RangeError);
  });
});

describe('determinism', () => {
  it('writes byte-identical bundles for the same seed', () => {
    const a = tempDir();
    const b = tempDir();
    writeGeneratedBundles(a, options());
    writeGeneratedBundles(b, options());
    const fa = filesOf(a);
    const fb = filesOf(b);
    expect([...fa.keys()].sort()).toEqual([...fb.keys()].sort());
    expect(fa.size).toBeGreaterThan(30);
    for (const [name, text] of fa) expect(fb.get(name), name).toBe(text);
  });

  it('changes the outputs with the seed', () => {
    const other = modeOutputs(generateWorld(options({ seed: 'other' })), 'iptables');
    expect(other.get('iptables-save')).not.toBe(outputs.iptables.get('iptables-save'));
    expect(other.get('conntrack')).not.toBe(outputs.iptables.get('conntrack'));
  });
});

describe('iptables-save consistency', () => {
  const parsed = parseIptablesSave(outputs.iptables.get('iptables-save')!, 'iptables-save', { family: 'ipv4' });
  const ipt: IptablesRuleset = parsed.value;
  const packets = (table: 'nat' | 'filter', chain: string, target: string): bigint =>
    (findChain(ipt, table, chain)?.rules ?? []).filter((r) => r.target?.name === target).reduce((n, r) => n + (r.counters?.packets ?? 0n), 0n);

  it('parses without diagnostics', () => {
    expect(parsed.diagnostics).toEqual([]);
    expect(ipt.generator?.backend).toBe('nf_tables');
  });

  it('gives every Service port with endpoints a KUBE-SVC chain leading to one DNATing KUBE-SEP per endpoint', () => {
    for (const { port, endpoints } of ports) {
      const svc = iptablesServiceChain('KUBE-SVC-', port.svcPortName, port.protocol);
      if (endpoints.length === 0) {
        expect(findChain(ipt, 'nat', svc), svc).toBeUndefined();
        continue;
      }
      const seps = (findChain(ipt, 'nat', svc)?.rules ?? []).map((r) => r.target?.name ?? '').filter((t) => t.startsWith('KUBE-SEP-'));
      expect(seps).toEqual(endpoints.map((ep) => iptablesEndpointChain(port.svcPortName, port.protocol, ep.hostPort)));
      endpoints.forEach((ep, i) => {
        const dnat = findChain(ipt, 'nat', seps[i]!)?.rules.find((r) => r.target?.name === 'DNAT');
        expect(dnat?.target?.options[0]?.values).toEqual([ep.hostPort]);
      });
    }
  });

  it('REJECTs the Services without endpoints in filter KUBE-SERVICES', () => {
    const empty = ports.filter((p) => p.endpoints.length === 0);
    expect(empty.length).toBeGreaterThan(0);
    const rejected = (findChain(ipt, 'filter', 'KUBE-SERVICES')?.rules ?? []).filter((r) => r.target?.name === 'REJECT').map((r) => r.destination?.value);
    expect(rejected.sort()).toEqual(empty.map((p) => `${p.port.clusterIP}/32`).sort());
  });

  it('has counters that add up: ClusterIP + NodePort connections = the endpoint branches = the DNATs', () => {
    let checked = 0;
    for (const { port, endpoints } of ports) {
      if (endpoints.length === 0) continue;
      const svc = iptablesServiceChain('KUBE-SVC-', port.svcPortName, port.protocol);
      const ext = iptablesServiceChain('KUBE-EXT-', port.svcPortName, port.protocol);
      const entering = packets('nat', 'KUBE-SERVICES', svc) + packets('nat', 'KUBE-NODEPORTS', ext);
      const seps = endpoints.map((ep) => iptablesEndpointChain(port.svcPortName, port.protocol, ep.hostPort));
      const branches = seps.reduce((n, s) => n + packets('nat', svc, s), 0n);
      const dnats = seps.reduce((n, s) => n + packets('nat', s, 'DNAT'), 0n);
      expect(branches, port.svcPortName).toBe(entering);
      expect(dnats, port.svcPortName).toBe(branches);
      expect(entering).toBeGreaterThan(0n);
      checked++;
    }
    expect(checked).toBeGreaterThan(50);
  });
});

describe('nftables listing consistency', () => {
  const json = parseNftJson(outputs.nftables.get('nft-json')!, 'nft-json');
  const text = parseNftText(outputs.nftables.get('nft-text')!, 'nft-text');

  it('parses, as JSON and as text, without diagnostics and to the same ruleset', () => {
    expect(json.diagnostics).toEqual([]);
    expect(text.diagnostics).toEqual([]);
    const rules = (r: typeof json.value) => r.tables.flatMap((t) => t.chains.flatMap((c) => c.rules.map((x) => `${c.name}: ${JSON.stringify(x.statements)}`)));
    const elements = (r: typeof json.value) => r.tables.flatMap((t) => t.sets.map((x) => `${x.name}: ${JSON.stringify(x.elements)}`));
    expect(rules(text.value)).toEqual(rules(json.value));
    expect(elements(text.value)).toEqual(elements(json.value));
    expect(rules(json.value).length).toBeGreaterThan(300);
  });

  it('maps every ClusterIP with endpoints to a service chain whose numgen spreads over its endpoints', () => {
    const table = findTable(json.value, 'ip', 'kube-proxy')!;
    const serviceIps = findMap(table, 'service-ips')!;
    expect(serviceIps.elements).toHaveLength(ports.filter((p) => p.endpoints.length > 0).length);
    for (const { port, endpoints } of ports) {
      if (endpoints.length === 0) continue;
      const chain = table.chains.find((c) => c.name.startsWith('service-') && c.name.endsWith(`-${port.service.namespace}/${port.service.name}/${port.protocol}/${port.port.name}`));
      expect(chain?.rules.at(-1)?.raw, port.svcPortName).toContain(`numgen random mod ${endpoints.length} vmap`);
      for (const ep of endpoints) expect(table.chains.some((c) => c.rules.some((r) => r.raw.endsWith(`dnat to ${ep.hostPort}`)))).toBe(true);
    }
  });
});

describe('Cilium maps consistency', () => {
  const dumps = [...outputs.cilium].filter(([id]) => id.startsWith('bpf-lb')).map(([id, text]) => {
    const map = { 'bpf-lb4-services': 'cilium_lb4_services_v2', 'bpf-lb4-backends': 'cilium_lb4_backends_v3', 'bpf-lb4-reverse-nat': 'cilium_lb4_reverse_nat', 'bpf-lb6-services': 'cilium_lb6_services_v2', 'bpf-lb6-backends': 'cilium_lb6_backends_v3', 'bpf-lb6-reverse-nat': 'cilium_lb6_reverse_nat' }[id]!;
    return { name: map, text, origin: id };
  });
  const decoded = decodeCiliumLbMaps(dumps);

  it('decodes without diagnostics to one ClusterIP frontend per Service port, slots = its endpoints', () => {
    expect(decoded.diagnostics).toEqual([]);
    const table = decoded.value.table;
    for (const { port } of ports) {
      const fe = table.services.find((s) => s.frontend.ip === port.clusterIP && s.frontend.port === port.port.port && s.frontend.protocol === port.port.protocol);
      const serving = port.endpoints.filter((e) => e.ready || (e.serving && e.terminating));
      expect(fe?.slots.map((s) => `${s.backend?.ip}:${s.backend?.port}`).sort(), port.svcPortName).toEqual(serving.map((e) => e.hostPort).sort());
    }
  });
});

describe('conntrack consistency', () => {
  const byClusterIP = new Map(ports.map((p) => [`${p.port.clusterIP}:${p.port.port.port}`, p]));
  const byNodePort = new Map(ports.filter((p) => p.port.nodePort).map((p) => [p.port.nodePort, p]));

  it('parses without diagnostics, and every flow is answered by an endpoint of the Service it was sent to', () => {
    const ct = parseConntrack(outputs.iptables.get('conntrack')!, 'conntrack');
    expect(ct.diagnostics).toEqual([]);
    expect(ct.value.entries).toHaveLength(400);
    for (const e of ct.value.entries) {
      const p = byClusterIP.get(`${e.orig.dst}:${e.orig.dport}`) ?? byNodePort.get(e.orig.dport ?? -1);
      expect(p, e.raw).toBeDefined();
      expect(p!.endpoints.map((x) => x.hostPort)).toContain(`${e.reply.src}:${e.reply.sport}`);
    }
  });

  it('shows no NAT in Cilium mode (the socket LB picked the backend before the packet existed)', () => {
    const ct = parseConntrack(outputs.cilium.get('conntrack')!, 'conntrack');
    expect(ct.value.entries.every((e) => e.orig.dst === e.reply.src && e.orig.dport === e.reply.sport)).toBe(true);
  });
});

describe('API objects and replay', () => {
  it('lists every Service and its EndpointSlice without diagnostics', () => {
    const api = parseK8sObjects(world.apiText, 'api.json');
    expect(api.diagnostics).toEqual([]);
    expect(api.value.services).toHaveLength(world.scenario.services.length);
    expect(api.value.endpointSlices).toHaveLength(world.scenario.services.length);
  });

  it('opens with --replay: every probe parsed, no diagnostic but the probes a generated node does not have', async () => {
    const dir = tempDir();
    for (const bundle of writeGeneratedBundles(dir, options({ services: 20 }))) {
      const transport = new ReplayTransport(bundle);
      const { snapshot } = await loadSnapshot({ transport, live: false, apiText: transport.apiText()!, apiOrigin: 'api.json' });
      const notProbeFailures = allDiagnostics(snapshot).filter((d) => d.code !== 'probe-failed');
      expect(notProbeFailures, bundle).toEqual([]);
      expect(snapshot.meta.node).toBe('gen-node-0');
      expect(snapshot.conntrack?.value?.entries).toHaveLength(400);
    }
  });
});
