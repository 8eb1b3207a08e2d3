import { describe, expect, it } from 'vitest';
import { parseCiliumStatus } from '../../src/parsers/cilium-status.js';
import { tabwrite } from '../../src/parsers/cilium-tabwriter.js';

/**
 * Status text as FormatStatusResponse writes it: `Key:\tvalue\tmore` lines through a tabwriter,
 * then (with --verbose) the details block through its own `tabwriter.NewWriter(w, 0, 0, 3, ' ', 0)`.
 */
function statusText(rows: readonly string[], details?: readonly string[]): string {
  let out = tabwrite(rows.map((r) => `${r}\n`).join(''), { minwidth: 2, padding: 3 });
  if (details) out += `KubeProxyReplacement Details:\n${tabwrite(details.map((d) => `${d}\n`).join(''), { minwidth: 0, padding: 3 })}`;
  return out;
}

const modernRows = [
  'KVStore:\tOk\tDisabled',
  'Kubernetes:\tOk\t1.31 (v1.31.0) [linux/amd64]',
  'KubeProxyReplacement:\tTrue\t[eth0   172.18.0.5 fc00:c111::5 fe80::42:acff:fe12:5 (Direct Routing), eth1 10.0.0.5]',
  'Host firewall:\tDisabled',
  'Cilium:\tOk   1.17.0-dev (v1.17.0-dev-0bc32ae110)',
  'Routing:\tNetwork: Tunnel [vxlan]\tHost: Legacy',
  'Masquerading:\tIPTables [IPv4: Enabled, IPv6: Enabled]',
];
const modernDetails = [
  '  Status:\tTrue',
  '  Socket LB:\tEnabled',
  '  Socket LB Tracing:\tDisabled',
  '  Socket LB Coverage:\tHostns-only',
  '  Devices:\teth0   172.18.0.5 (Direct Routing)',
  '  Mode:\tSNAT',
  '  Backend Selection:\tRandom',
  '  Session Affinity:\tEnabled',
  '  Services:',
  '  - ClusterIP:\tEnabled',
  '  - NodePort:\tEnabled (Range: 30000-32767) ',
  '  - LoadBalancer:\tEnabled ',
];

describe('cilium-dbg status text', () => {
  it('1.15+ --verbose: KPR True with devices, socket LB hostns-only, version, routing', () => {
    const r = parseCiliumStatus(`Defaulted container "cilium-agent" out of: cilium-agent\n${statusText(modernRows, modernDetails)}`, 't');
    expect(r.diagnostics).toEqual([]);
    expect(r.value).toMatchObject({
      version: '1.17.0-dev',
      versionDetail: 'v1.17.0-dev-0bc32ae110',
      agentState: 'Ok',
      kubeProxyReplacement: {
        mode: 'True',
        replaces: 'full',
        devices: [
          { name: 'eth0', ips: ['172.18.0.5', 'fc00:c111::5', 'fe80::42:acff:fe12:5'], directRouting: true },
          { name: 'eth1', ips: ['10.0.0.5'], directRouting: false },
        ],
      },
      socketLB: { enabled: true, hostNamespaceOnly: true, tracing: false },
      nodePort: { enabled: true, portMin: 30000, portMax: 32767, mode: 'SNAT', algorithm: 'Random' },
      hostRouting: 'Legacy',
      routingNetwork: 'Tunnel',
      tunnelProtocol: 'vxlan',
      masquerading: 'IPTables [IPv4: Enabled, IPv6: Enabled]',
    });
    expect(r.value.fields.find((f) => f.key === 'KubeProxyReplacement Details/Socket LB Coverage')?.value).toBe('Hostns-only');
  });

  it('non-verbose output leaves socket LB unknown', () => {
    const r = parseCiliumStatus(statusText(modernRows), 't');
    expect(r.value.socketLB).toEqual({ enabled: null, hostNamespaceOnly: null, tracing: null });
    expect(r.value.kubeProxyReplacement.mode).toBe('True');
  });

  it('1.10: Strict with one device, Host Routing line, controllers table ignored', () => {
    const rows = ['KubeProxyReplacement:\tStrict\t[ens2 10.194.69.137 (Direct Routing)]', 'Cilium:\tOk   1.10.3 (v1.10.3-4145278)', 'Host Routing:\tLegacy', 'Controller Status:\t30/30 healthy'];
    const text = `${statusText(rows)}  Name                      Last success   Last error   Count   Message\n  bpf-map-sync-cilium_lxc   6s ago         never        0       no error\n`;
    const r = parseCiliumStatus(text, 't');
    expect(r.diagnostics).toEqual([]);
    expect(r.value).toMatchObject({ version: '1.10.3', hostRouting: 'Legacy', kubeProxyReplacement: { mode: 'Strict', replaces: 'full', devices: [{ name: 'ens2', directRouting: true }] } });
  });

  it('1.7: features in brackets (HostReachableServices = socket LB) and no version', () => {
    const rows = ['KubeProxyReplacement:\tProbe\t[NodePort (SNAT, 30000-32767), ExternalIPs, HostReachableServices (TCP, UDP)]', 'Cilium:\tOk\tOK'];
    const r = parseCiliumStatus(statusText(rows), 't');
    expect(r.diagnostics).toEqual([]);
    expect(r.value).toMatchObject({ version: null, agentState: 'Ok', kubeProxyReplacement: { mode: 'Probe', replaces: 'partial', devices: [] }, socketLB: { enabled: true }, nodePort: { enabled: true, portMin: 30000, portMax: 32767 } });
  });

  it('KubeProxyReplacement False / Disabled mean kube-proxy still does the work', () => {
    expect(parseCiliumStatus(statusText(['KubeProxyReplacement:\tFalse']), 't').value.kubeProxyReplacement.replaces).toBe('none');
    expect(parseCiliumStatus(statusText(['KubeProxyReplacement:\tDisabled']), 't').value.kubeProxyReplacement.replaces).toBe('none');
  });

  it('reports lines it does not understand and a missing KubeProxyReplacement line', () => {
    const r = parseCiliumStatus('this is not status\nKubeProxyReplacement:   Sometimes\n', 't');
    expect(r.diagnostics.map((d) => [d.code, d.line])).toEqual([
      ['unknown-line', 1],
      ['unknown-value', 2],
      ['no-kpr', 0],
    ]);
  });
});

describe('cilium-dbg status -o json', () => {
  const doc = {
    cilium: { state: 'Ok', msg: '1.16.3 (v1.16.3-f2217191)' },
    'kube-proxy-replacement': {
      mode: 'True',
      devices: ['eth0'],
      deviceList: [{ name: 'eth0', ip: ['192.168.49.2', 'fe80::1'] }],
      directRoutingDevice: 'eth0',
      features: { socketLB: { enabled: true }, socketLBTracing: { enabled: true }, nodePort: { enabled: true, mode: 'SNAT', algorithm: 'Random', portMin: 30000, portMax: 32767 } },
    },
    routing: { 'intra-host-routing-mode': 'BPF', 'inter-host-routing-mode': 'Native' },
    masquerading: { enabled: true, mode: 'BPF' },
  };

  it('reads mode, devices, socket LB (bpfSocketLBHostnsOnly omitted = false), routing', () => {
    const r = parseCiliumStatus(JSON.stringify(doc, null, 2), 't');
    expect(r.diagnostics).toEqual([]);
    expect(r.value).toMatchObject({
      version: '1.16.3',
      kubeProxyReplacement: { mode: 'True', replaces: 'full', devices: [{ name: 'eth0', ips: ['192.168.49.2', 'fe80::1'], directRouting: true }] },
      socketLB: { enabled: true, hostNamespaceOnly: false, tracing: true },
      nodePort: { enabled: true, portMin: 30000, portMax: 32767 },
      hostRouting: 'BPF',
      routingNetwork: 'Native',
      masquerading: 'BPF',
    });
  });

  it('bpfSocketLBHostnsOnly true, and older agents with hostReachableServices', () => {
    const hostns = { ...doc, 'kube-proxy-replacement': { ...doc['kube-proxy-replacement'], features: { socketLB: { enabled: true }, bpfSocketLBHostnsOnly: true } } };
    expect(parseCiliumStatus(JSON.stringify(hostns), 't').value.socketLB).toMatchObject({ enabled: true, hostNamespaceOnly: true });
    const old = { 'kube-proxy-replacement': { mode: 'Strict', features: { hostReachableServices: { enabled: true, protocols: ['TCP'] } } }, 'host-routing': { mode: 'Legacy' } };
    expect(parseCiliumStatus(JSON.stringify(old), 't').value).toMatchObject({ socketLB: { enabled: true, hostNamespaceOnly: null }, hostRouting: 'Legacy', kubeProxyReplacement: { replaces: 'full' } });
  });

  it('invalid JSON is one error, nothing thrown', () => {
    expect(parseCiliumStatus('{"cilium": ', 't').diagnostics.map((d) => d.code)).toEqual(['invalid-json']);
  });
});
