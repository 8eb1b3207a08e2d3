/**
 * `cilium-dbg status [--verbose]` (older `cilium status`), text or `-o json`, reduced to what
 * decides where Service packets are rewritten: kube-proxy replacement, socket LB, NodePort,
 * host routing, masquerading, and the agent version.
 *
 * Format source: cilium/cilium `pkg/client/client.go` `FormatStatusResponse` (a `Key:\tvalue`
 * line per component through a tabwriter; `--verbose` adds the indented
 * `KubeProxyReplacement Details:` block) and `api/v1/models` `StatusResponse`,
 * `KubeProxyReplacement` (`mode`, `deviceList`, `features.socketLB`,
 * `features.bpfSocketLBHostnsOnly`), `Routing`. Before 1.7 the KubeProxyReplacement line
 * listed features (`Strict [NodePort (SNAT, 30000-32767), ExternalIPs, HostReachableServices (TCP, UDP)]`);
 * host-reachable services was socket LB's old name. Examples checked against agent output
 * quoted in cilium/cilium issues #14927, #17454, #17636, #24160, #26758 and PRs #10059, #35542.
 */
import type { Diagnostic, ParseResult } from '../model/diagnostics.js';
import { diagnostic } from '../model/diagnostics.js';
import type { CiliumStatus, KprDevice, KubeProxyReplacementMode } from '../model/cilium.js';
import { canonicalIp } from './cilium-addr.js';
import { isKubectlNotice, textLines } from './cilium-columns.js';
import { bool, looksLikeJson, obj, parseJsonDocument, str } from './cilium-json.js';

type Mutable<T> = { -readonly [K in keyof T]: T[K] extends readonly unknown[] ? T[K] : T[K] extends object ? Mutable<T[K]> : T[K] };

const MODES: readonly KubeProxyReplacementMode[] = ['True', 'False', 'Strict', 'Probe', 'Partial', 'Disabled'];
const FEATURE_WORDS = /^(NodePort|ExternalIPs|HostReachableServices|HostPort|SessionAffinity|GracefulTermination|SocketLB)\b/;
const DETAILS = 'KubeProxyReplacement Details';

function emptyStatus(raw: string): Mutable<CiliumStatus> {
  return {
    version: null,
    versionDetail: null,
    agentState: null,
    kubeProxyReplacement: { mode: null, replaces: null, devices: [] },
    socketLB: { enabled: null, hostNamespaceOnly: null, tracing: null },
    nodePort: { enabled: null, portMin: null, portMax: null, mode: null, algorithm: null },
    hostRouting: null,
    routingNetwork: null,
    tunnelProtocol: null,
    masquerading: null,
    fields: [],
    raw,
  };
}

function replaces(mode: KubeProxyReplacementMode | null): CiliumStatus['kubeProxyReplacement']['replaces'] {
  if (mode === null) return null;
  return mode === 'True' || mode === 'Strict' ? 'full' : mode === 'Probe' || mode === 'Partial' ? 'partial' : 'none';
}

/** `eth0 192.168.49.2 fe80::1 (Direct Routing)` → device. */
function device(text: string): KprDevice | null {
  const direct = text.endsWith('(Direct Routing)');
  const words = text.replace(/\(Direct Routing\)$/, '').trim().split(/\s+/);
  const name = words.shift();
  const ips = words.map((w) => canonicalIp(w));
  if (!name || ips.some((x) => x === null)) return null;
  return { name, ips: ips as string[], directRouting: direct };
}

/** Splits `a, b (x, y), c` on commas outside parentheses. */
function splitList(text: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (const c of text) {
    if (c === '(') depth++;
    if (c === ')') depth--;
    if (c === ',' && depth === 0) {
      out.push(cur.trim());
      cur = '';
    } else cur += c;
  }
  if (cur.trim() !== '') out.push(cur.trim());
  return out;
}

const enabled = (v: string): boolean | null => (/^Enabled\b/.test(v) ? true : /^Disabled\b/.test(v) ? false : null);

function applyTopLevel(s: Mutable<CiliumStatus>, key: string, value: string): boolean {
  switch (key) {
    case 'Cilium': {
      const m = /^(\S+)\s+(\d+\.\d+\.\d+\S*)(?:\s+\(([^)]*)\))?/.exec(value);
      s.agentState = value.split(/\s+/)[0] ?? null;
      if (m) {
        s.version = m[2] ?? null;
        s.versionDetail = m[3] ?? null;
      }
      return true;
    }
    case 'KubeProxyReplacement': {
      const m = /^(\S+)(?:\s+\[(.*)\])?\s*$/.exec(value);
      const mode = (MODES as readonly string[]).includes(m?.[1] ?? '') ? (m?.[1] as KubeProxyReplacementMode) : null;
      if (m === null || mode === null) return false;
      s.kubeProxyReplacement.mode = mode;
      s.kubeProxyReplacement.replaces = replaces(mode);
      const items = splitList(m[2] ?? '');
      if (items.length > 0 && FEATURE_WORDS.test(items[0] ?? '')) {
        const hrs = items.find((i) => i.startsWith('HostReachableServices'));
        s.socketLB.enabled ??= hrs !== undefined;
        const np = items.find((i) => i.startsWith('NodePort'));
        const range = /(\d+)-(\d+)/.exec(np ?? '');
        s.nodePort.enabled ??= np !== undefined;
        if (range) [s.nodePort.portMin, s.nodePort.portMax] = [Number(range[1]), Number(range[2])];
      } else {
        const devices = items.map(device);
        if (devices.some((d) => d === null)) return false;
        s.kubeProxyReplacement.devices = devices as KprDevice[];
      }
      return true;
    }
    case 'Host Routing':
      s.hostRouting = value === 'BPF' || value === 'Legacy' ? value : null;
      return s.hostRouting !== null;
    case 'Routing': {
      const m = /^Network: (Tunnel|Native)(?: \[([^\]]*)\])?\s+Host: (BPF|Legacy)\s*$/.exec(value);
      if (!m) return false;
      s.routingNetwork = m[1] as 'Tunnel' | 'Native';
      s.tunnelProtocol = m[2] ?? null;
      s.hostRouting = m[3] as 'BPF' | 'Legacy';
      return true;
    }
    case 'Masquerading':
      s.masquerading = value;
      return true;
    default:
      return true; // other components are kept in `fields` only
  }
}

function applyDetail(s: Mutable<CiliumStatus>, key: string, value: string): void {
  if (key === 'Socket LB') s.socketLB.enabled = enabled(value);
  else if (key === 'Socket LB Tracing') s.socketLB.tracing = enabled(value);
  else if (key === 'Socket LB Coverage') s.socketLB.hostNamespaceOnly = value === 'Hostns-only' ? true : value === 'Full' ? false : null;
  else if (key === 'Mode') s.nodePort.mode = value;
  else if (key === 'Backend Selection') s.nodePort.algorithm = value;
  else if (key === '- NodePort') {
    s.nodePort.enabled = enabled(value);
    const range = /Range: (\d+)-(\d+)/.exec(value);
    if (range) [s.nodePort.portMin, s.nodePort.portMax] = [Number(range[1]), Number(range[2])];
  }
}

/** Parses `cilium-dbg status` text (plain or `--verbose`) or `-o json`. Never throws. */
export function parseCiliumStatus(text: string, origin: string): ParseResult<CiliumStatus> {
  if (looksLikeJson(text)) return parseJson(text, origin);
  const diags: Diagnostic[] = [];
  const s = emptyStatus(text);
  let section: string | null = null;
  textLines(text).forEach((line, i) => {
    if (line.trim() === '' || isKubectlNotice(line)) return;
    if (/^\s/.test(line)) {
      if (section === DETAILS) {
        const m = /^\s+(-?\s?[A-Za-z][A-Za-z0-9 /]*?):\s*(.*?)\s*$/.exec(line);
        if (m) {
          s.fields = [...s.fields, { key: `${DETAILS}/${m[1]}`, value: m[2] ?? '' }];
          applyDetail(s, m[1] ?? '', m[2] ?? '');
        }
      }
      return; // indented lines belong to a section (controllers, addresses, cluster health): kept in raw
    }
    const m = /^([A-Za-z][A-Za-z0-9 /()._-]*?):(?:\s+(.*?))?\s*$/.exec(line);
    if (!m) {
      diags.push(diagnostic('warning', origin, i + 1, line, 'unknown-line', 'not a "Key: value" status line'));
      return;
    }
    const key = m[1] ?? '';
    const value = m[2] ?? '';
    section = key;
    s.fields = [...s.fields, { key, value }];
    if (!applyTopLevel(s, key, value)) diags.push(diagnostic('warning', origin, i + 1, line, 'unknown-value', `${key} value not understood`));
  });
  if (s.kubeProxyReplacement.mode === null) diags.push(diagnostic('info', origin, 0, '', 'no-kpr', 'no KubeProxyReplacement line'));
  return { value: s, diagnostics: diags };
}

function parseJson(text: string, origin: string): ParseResult<CiliumStatus> {
  const diags: Diagnostic[] = [];
  const s = emptyStatus(text);
  const parsed = parseJsonDocument(text, origin, diags);
  if (parsed === undefined) return { value: s, diagnostics: diags };
  const doc = obj(parsed);
  const cilium = obj(doc?.cilium);
  if (cilium) applyTopLevel(s, 'Cilium', `${str(cilium.state) ?? ''} ${str(cilium.msg) ?? ''}`.trim());
  const kpr = obj(doc?.['kube-proxy-replacement']);
  const mode = str(kpr?.mode);
  if (mode !== null && (MODES as readonly string[]).includes(mode)) {
    s.kubeProxyReplacement.mode = mode as KubeProxyReplacementMode;
    s.kubeProxyReplacement.replaces = replaces(s.kubeProxyReplacement.mode);
  } else if (kpr) diags.push(diagnostic('warning', origin, 0, String(mode), 'unknown-value', 'kube-proxy-replacement.mode not understood'));
  const direct = str(kpr?.directRoutingDevice);
  s.kubeProxyReplacement.devices = (Array.isArray(kpr?.deviceList) ? kpr.deviceList : []).flatMap((d) => {
    const o = obj(d);
    const name = str(o?.name);
    const ips = (Array.isArray(o?.ip) ? o.ip : []).map((x) => canonicalIp(String(x))).filter((x): x is string => x !== null);
    return name === null ? [] : [{ name, ips, directRouting: name === direct }];
  });
  const f = obj(kpr?.features);
  const socketLB = obj(f?.socketLB);
  if (socketLB) {
    s.socketLB.enabled = bool(socketLB.enabled) ?? false;
    s.socketLB.hostNamespaceOnly = bool(f?.bpfSocketLBHostnsOnly) ?? false; // omitempty: absent means false
  } else if (obj(f?.hostReachableServices)) s.socketLB.enabled = bool(obj(f?.hostReachableServices)?.enabled);
  s.socketLB.tracing = bool(obj(f?.socketLBTracing)?.enabled);
  const np = obj(f?.nodePort);
  if (np) {
    s.nodePort.enabled = bool(np.enabled);
    s.nodePort.mode = str(np.mode);
    s.nodePort.algorithm = str(np.algorithm);
    s.nodePort.portMin = typeof np.portMin === 'number' ? np.portMin : null;
    s.nodePort.portMax = typeof np.portMax === 'number' ? np.portMax : null;
  }
  const routing = obj(doc?.routing);
  const intra = str(routing?.['intra-host-routing-mode']) ?? str(obj(doc?.['host-routing'])?.mode);
  s.hostRouting = intra === 'BPF' || intra === 'Legacy' ? intra : null;
  const inter = str(routing?.['inter-host-routing-mode']);
  s.routingNetwork = inter === 'Tunnel' || inter === 'Native' ? inter : null;
  s.tunnelProtocol = str(routing?.['tunnel-protocol']);
  const masq = obj(doc?.masquerading);
  if (masq) s.masquerading = bool(masq.enabled) ? (str(masq.mode) ?? 'Enabled') : 'Disabled';
  if (s.kubeProxyReplacement.mode === null) diags.push(diagnostic('info', origin, 0, '', 'no-kpr', 'no kube-proxy-replacement object'));
  return { value: s, diagnostics: diags };
}
