/**
 * The conntrack layer: flows of the node's conntrack table to a Service frontend that the
 * rules no longer decide, because conntrack answers before the rules for every packet after
 * the first — entries DNAT'ed to an address that is no longer an endpoint (a Pod swapped),
 * flows to a VIP that were never translated (sent before the rules existed), and UDP flows
 * refreshed without a reply. For each: whether kube-proxy's own cleanup would clear it for the
 * node's Kubernetes version, and the `conntrack -D …` command that would (printed, never run).
 *
 * kube-proxy's cleanup (pkg/proxy/conntrack): only UDP is ever cleared (TCP flows end with a
 * reset or their timeout). Up to 1.31 it is event based: entries of a removed UDP endpoint are
 * deleted when kube-proxy sees the removal (`conntrack -D --orig-dst VIP --dst-nat EP -p udp`),
 * and untranslated UDP flows when a Service gets its first endpoint. From 1.32 a reconciler
 * (kubernetes#126130, #127318) deletes on every sync the UDP entries of a Service whose DNAT
 * target is not a serving endpoint, but skips Services without endpoints (kubernetes#139628,
 * fixed by #139629). Pure.
 */
import type { ConntrackEntry } from '../../model/conntrack.js';
import type { ApiObjects } from '../../model/k8s.js';
import type { ExpectedService } from './expect.js';
import { said, sayIn, saying, type Said } from './say.js';
import type { Evidence, Finding, FindingCode } from './types.js';

/** The node's Kubernetes minor version as its Node object reports it (kubelet's; kube-proxy runs the same minor), or null. */
export function nodeMinorVersion(objects: ApiObjects, node: string): { text: string; minor: number } | null {
  const n = objects.nodes.find((x) => x.meta.name === node);
  const status = n?.raw['status'];
  const info = status && typeof status === 'object' && !Array.isArray(status) ? (status as Record<string, unknown>)['nodeInfo'] : undefined;
  const v = info && typeof info === 'object' ? ((info as Record<string, unknown>)['kubeProxyVersion'] || (info as Record<string, unknown>)['kubeletVersion']) : undefined;
  const m = typeof v === 'string' ? /^v?1\.(\d+)\./.exec(v) : null;
  return m && typeof v === 'string' ? { text: v, minor: Number(m[1]) } : null;
}

/** What kube-proxy's cleanup does with one kind of stale UDP/TCP flow on a node of `version`. */
export function cleanupSays(proto: string, kind: 'stale' | 'untranslated', version: { text: string; minor: number } | null, hasEndpoints: boolean): string {
  return sayIn(cleanupSaid(proto, kind, version, hasEndpoints), 'en');
}

/** {@link cleanupSays} as a phrase of the i18n tables. */
export function cleanupSaid(proto: string, kind: 'stale' | 'untranslated', version: { text: string; minor: number } | null, hasEndpoints: boolean): Said {
  if (proto !== 'udp') return said('dg.ct.tcp', { proto: proto.toUpperCase() });
  if (version === null) return said('dg.ct.noVersion');
  if (version.minor < 32) return said(kind === 'stale' ? 'dg.ct.oldStale' : 'dg.ct.oldUntranslated', { version: version.text });
  if (!hasEndpoints) return said('dg.ct.noEndpoints', { version: version.text });
  return said('dg.ct.reconciler', { version: version.text });
}

interface Target {
  readonly svc: ExpectedService;
  readonly frontend: string;
  readonly port: string;
}

/** The frontends to look flows up by: `proto ip port` (NodePorts on each node IP). */
function frontendIndex(services: readonly ExpectedService[], nodeIPs: readonly string[]): Map<string, Target> {
  const out = new Map<string, Target>();
  for (const svc of services) {
    for (const f of svc.frontends) {
      const t: Target = { svc, frontend: `${f.ip}:${f.port}/${f.protocol}`, port: f.portName || String(f.port) };
      const proto = f.protocol.toLowerCase();
      if (f.ip === '*') for (const ip of nodeIPs) out.set(`${proto} ${ip} ${f.port}`, t);
      else out.set(`${proto} ${f.ip} ${f.port}`, t);
    }
  }
  return out;
}

/** The last index per Services list (a fleet finishes many nodes from one rules diagnosis). */
const indexMemo = new WeakMap<readonly ExpectedService[], { readonly ips: string; readonly index: Map<string, Target> }>();

/** {@link frontendIndex}, remembered for the same `services` array and node IPs. */
function frontendIndexOf(services: readonly ExpectedService[], nodeIPs: readonly string[]): Map<string, Target> {
  const ips = nodeIPs.join(' ');
  const known = indexMemo.get(services);
  if (known?.ips === ips) return known.index;
  const index = frontendIndex(services, nodeIPs);
  indexMemo.set(services, { ips, index });
  return index;
}

function flowRef(e: ConntrackEntry): Evidence {
  const o = e.orig;
  const r = e.reply;
  return { pane: 'conntrack', ref: `${e.proto} ${o.src}:${o.sport ?? ''} → ${o.dst}:${o.dport ?? ''} ⇒ ${r.src}:${r.sport ?? ''}`, text: e.raw };
}

interface Group {
  readonly target: Target;
  readonly code: FindingCode;
  readonly proto: string;
  readonly vip: string;
  readonly vport: number | undefined;
  readonly endpoint: string;
  count: number;
  readonly evidence: Evidence[];
}

function groupFinding(g: Group, version: { text: string; minor: number } | null): Finding {
  const hasEndpoints = g.target.svc.apiEndpoints.size > 0;
  const port = g.vport !== undefined ? ` --orig-port-dst ${g.vport}` : '';
  const flows = said('dg.ctFlows', { count: g.count, proto: g.proto.toUpperCase() });
  let text: ReturnType<typeof saying>;
  if (g.code === 'conntrack-stale-endpoint') {
    const command = `conntrack -D -p ${g.proto} --orig-dst ${g.vip}${port} --dst-nat ${g.endpoint.replace(/:\d+$/, '')}`;
    text = saying('dg.ctStale', { flows, frontend: g.target.frontend, endpoint: g.endpoint, cleanup: cleanupSaid(g.proto, 'stale', version, hasEndpoints), command });
  } else if (g.code === 'conntrack-untranslated') {
    const command = `conntrack -D -p ${g.proto} --orig-dst ${g.vip}${port} --reply-src ${g.vip}`;
    text = saying('dg.ctUntranslated', { flows, frontend: g.target.frontend, cleanup: cleanupSaid(g.proto, 'untranslated', version, hasEndpoints), command });
  } else {
    text = saying('dg.ctUnreplied', { flows, frontend: g.target.frontend, endpoint: g.endpoint });
  }
  return {
    layer: 'conntrack',
    code: g.code,
    severity: g.code === 'conntrack-udp-unreplied' ? 'info' : 'degraded',
    ...text,
    port: g.target.port,
    frontend: g.target.frontend,
    ...(g.code !== 'conntrack-untranslated' ? { endpoint: g.endpoint } : {}),
    evidence: g.evidence,
  };
}

/**
 * The conntrack findings per Service (`ns/name`), from one pass over the table's entries with
 * a Map lookup each. `version`: the node's Kubernetes version ({@link nodeMinorVersion}).
 */
export function conntrackFindings(entries: readonly ConntrackEntry[], services: readonly ExpectedService[], nodeIPs: readonly string[], version: { text: string; minor: number } | null): Map<string, Finding[]> {
  const index = frontendIndexOf(services, nodeIPs);
  const groups = new Map<string, Group>();
  for (const e of entries) {
    const o = e.orig;
    const target = index.get(`${e.proto} ${o.dst} ${o.dport ?? ''}`);
    // A closed TCP flow (TIME_WAIT, CLOSE) carries no more traffic: nothing to clear.
    if (!target || e.state === 'TIME_WAIT' || e.state === 'CLOSE') continue;
    const translated = e.reply.src !== o.dst || e.reply.sport !== o.dport;
    let code: FindingCode | null = null;
    const endpoint = `${e.reply.src}:${e.reply.sport ?? ''}`;
    if (!translated) code = 'conntrack-untranslated';
    else if (!target.svc.apiEndpoints.has(e.reply.src)) code = 'conntrack-stale-endpoint';
    else if (e.proto === 'udp' && e.flags.includes('UNREPLIED')) code = 'conntrack-udp-unreplied';
    if (code === null) continue;
    const k = `${target.svc.namespace}/${target.svc.name} ${code} ${target.frontend} ${translated ? endpoint : ''}`;
    let g = groups.get(k);
    if (!g) {
      g = { target, code, proto: e.proto, vip: o.dst, vport: o.dport, endpoint, count: 0, evidence: [] };
      groups.set(k, g);
    }
    g.count++;
    if (g.evidence.length < 3) g.evidence.push(flowRef(e));
  }
  const out = new Map<string, Finding[]>();
  for (const g of groups.values()) {
    const k = `${g.target.svc.namespace}/${g.target.svc.name}`;
    const list = out.get(k) ?? [];
    list.push(groupFinding(g, version));
    out.set(k, list);
  }
  return out;
}
