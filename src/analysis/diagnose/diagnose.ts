/**
 * `diagnoseSnapshot`: one verdict per Service on one node (issue 17) — the API and endpoints
 * layers (layer-api.ts), then every frontend the node should serve compared endpoint by
 * endpoint with what its dataplane does (expect.ts against read-*.ts, compare-frontends.ts),
 * leftovers of other proxy modes (leftovers.ts), and the verdict folded from the findings
 * (verdict.ts). Reads the snapshot only: never a probe, never the UI. Every lookup is by key
 * (Maps built once), so 10,000 Services cost a pass over them. Pure.
 */
import type { ApiObjects } from '../../model/k8s.js';
import type { NodeSnapshot } from '../../model/snapshot.js';
import { compareFrontend, type CompareContext } from './compare-frontends.js';
import { readNodeDataplane, type NodeDataplane } from './dataplane.js';
import { buildExpectation, type CiliumExpectedFrontend, type ExpectedService } from './expect.js';
import { nodeAddressesOf } from '../compare-modes-input.js';
import { frontendKey } from './frontends.js';
import { apiFindings, podsByNamespace } from './layer-api.js';
import { legacyDisagreement, leftoverEvidence } from './leftovers.js';
import { conntrackFindings, nodeMinorVersion } from './layer-conntrack.js';
import { ciliumFlagFindings, ciliumFrontendFindings, listingDisagreements, orphanBackends, pickCiliumExpectation } from './read-cilium.js';
import { said, sayIn, saying } from './say.js';
import type { Diagnosis, DiagnosisHeader, DnsLayer, Finding, ServiceDiagnosis } from './types.js';
import { countVerdicts, foldVerdict } from './verdict.js';

/**
 * What to diagnose: `service` (`ns/name`) limits the Services (node findings stay). `walk`:
 * findings of a layer the caller computes per Service from its expectation — the walks from
 * a client (`--from`, src/trace/diagnose-from.ts), which this room may not import — called
 * once per chosen Service; they fold into its verdict like any other.
 */
export interface DiagnoseOptions {
  readonly service?: string;
  readonly walk?: (svc: ExpectedService) => readonly Finding[];
  /** The DNS layer, read by the caller from recorded answers (default: not checked). */
  readonly dns?: DnsLayer;
}

const NO_DNS = said('dg.dns.notGiven');

function dnsHeader(dns: DnsLayer | undefined): DiagnosisHeader['dns'] {
  if (!dns) return { checked: false, reason: sayIn(NO_DNS, 'en'), said: NO_DNS };
  return dns.checked ? { checked: true, zone: dns.zone } : { checked: false, reason: dns.reason, ...(dns.said ? { said: dns.said } : {}) };
}

function podsByIpOf(objects: ApiObjects): Map<string, string> {
  const out = new Map<string, string>();
  for (const p of objects.pods) {
    if (p.hostNetwork) continue;
    for (const ip of p.podIPs) out.set(ip, `${p.meta.namespace}/${p.meta.name}`);
  }
  return out;
}

interface Shared {
  readonly dp: NodeDataplane;
  readonly podsByIp: ReadonlyMap<string, string>;
  readonly matched: Set<string>;
  readonly leftovers: ReturnType<typeof leftoverEvidence>;
  readonly disagreements: ReturnType<typeof listingDisagreements>;
}

function dataplaneFindings(svc: ExpectedService, shared: Shared): Finding[] {
  const { dp } = shared;
  if (svc.unsupported) return [{ layer: 'dataplane', code: 'dataplane-not-understood', severity: 'unknown', ...saying('dg.notCompared', { why: svc.unsupported }), evidence: [] }];
  if (svc.frontends.length === 0) return [];
  if (dp.problem !== null || dp.dataplane === null) return [{ layer: 'dataplane', code: 'dataplane-not-read', severity: 'unknown', ...saying('dg.notCompared', { why: dp.problemSaid ?? said('dg.noDataplane') }), evidence: [] }];
  const ctx: CompareContext = { apiEndpoints: svc.apiEndpoints, podsByIp: shared.podsByIp, dataplane: dp.dataplane };
  const out: Finding[] = [];
  for (const f of svc.frontends) {
    const key = frontendKey(f);
    const act = dp.frontends.byKey.get(key);
    shared.matched.add(key);
    if (dp.v6Problem !== null && f.ip.includes(':')) {
      out.push({ layer: 'dataplane', code: 'dataplane-not-read', severity: 'unknown', ...saying('dg.frontendNotCompared', { frontend: key, why: dp.v6ProblemSaid ?? dp.v6Problem }), port: f.portName || String(f.port), frontend: key, evidence: [] });
      continue;
    }
    if (dp.dataplane === 'cilium' && 'alternatives' in f) {
      const c = f as CiliumExpectedFrontend;
      const picked = pickCiliumExpectation(c, act, (e) => compareFrontend(e, act, ctx).length === 0);
      out.push(...compareFrontend(picked.exp, act, ctx), ...picked.findings);
      if (act) out.push(...ciliumFrontendFindings(picked.exp, act), ...ciliumFlagFindings(c, act));
    } else out.push(...compareFrontend(f, act, ctx));
    const dis = shared.disagreements.get(key);
    if (dis) out.push({ ...dis, port: f.portName || String(f.port) });
    if (dp.legacy) {
      const l = legacyDisagreement(key, act, dp.legacy, f.portName || String(f.port));
      if (l) out.push(l);
    }
  }
  return out;
}

function dnsOf(dns: DnsLayer | undefined, svc: ExpectedService): readonly Finding[] {
  return dns?.checked ? (dns.findings.get(`${svc.namespace}/${svc.name}`) ?? []) : [];
}

function leftoverFinding(ref: string, shared: Shared, current: string | null): Finding | null {
  const left = shared.leftovers.get(ref);
  if (!left) return null;
  return {
    layer: 'dataplane',
    code: 'leftover-rules',
    severity: 'degraded',
    ...saying('dg.leftover', { mode: left.mode, current: current ?? said('dg.leftover.other') }),
    evidence: left.evidence,
  };
}

/** Frontends the node has that no expected frontend matched, per Service (`''`: names none). */
function unexpectedFrontends(shared: Shared): Map<string, Finding[]> {
  const out = new Map<string, Finding[]>();
  for (const [key, f] of shared.dp.frontends.byKey) {
    if (shared.matched.has(key)) continue;
    const k = f.service ?? '';
    const list = out.get(k) ?? [];
    const verb = said(f.outcome === 'endpoints' ? 'dg.verb.endpoints' : f.outcome === 'reject' ? 'dg.verb.reject' : 'dg.verb.drop');
    const text = f.service ? saying('dg.unexpectedFor', { frontend: key, verb, service: f.service }) : saying('dg.unexpected', { frontend: key, verb });
    list.push({ layer: 'dataplane', code: 'frontend-unexpected', severity: 'degraded', ...text, port: f.portName ?? String(f.port), frontend: key, evidence: f.evidence });
    out.set(k, list);
  }
  return out;
}

/**
 * The part of a node's diagnosis made from its rules and the API objects (every layer but
 * conntrack): what {@link finishDiagnosis} completes with the node's conntrack table. Per
 * Service, `before` holds the API, endpoints, dataplane, `--from` walk and DNS findings, `after` the leftover and
 * unexpected-frontend ones (the conntrack findings go between). `flows`: what the conntrack
 * layer compares against (null on Cilium, whose own conntrack is not compared yet).
 */
export interface RulesDiagnosis {
  readonly header: Pick<DiagnosisHeader, 'node' | 'mode' | 'dataplane' | 'dns'>;
  readonly services: readonly { readonly svc: ExpectedService; readonly before: readonly Finding[]; readonly after: readonly Finding[] }[];
  /** Node findings before the conntrack one (the dataplane not read) and after it (no Service's). */
  readonly nodeBefore: readonly Finding[];
  readonly nodeAfter: readonly Finding[];
  readonly flows: { readonly services: readonly ExpectedService[] } | null;
}

/**
 * The rules part of {@link diagnoseSnapshot} (see {@link RulesDiagnosis}): a function of the
 * snapshot's rules parts, interface names and nftables table names, and of the API objects as
 * seen from the snapshot's node (its local endpoints, zone; node IPs on Cilium). Pure.
 */
export function diagnoseRules(snapshot: NodeSnapshot, api: ApiObjects, options: DiagnoseOptions = {}): RulesDiagnosis {
  const dp = readNodeDataplane(snapshot);
  const header = { node: snapshot.meta.node, mode: dp.mode, dataplane: dp.dataplane ?? ('none' as const), dns: dnsHeader(options.dns) };
  const expectation = buildExpectation(snapshot, api, dp.dataplane === 'cilium' ? 'cilium' : 'kube-proxy');
  const lb = snapshot.lb?.value;
  const shared: Shared = {
    dp,
    podsByIp: podsByIpOf(api),
    matched: new Set(),
    leftovers: leftoverEvidence(snapshot, dp),
    disagreements: lb && dp.dataplane === 'cilium' ? listingDisagreements(lb) : new Map(),
  };
  const pods = podsByNamespace(api);
  const chosen = expectation.services.filter((s) => options.service === undefined || `${s.namespace}/${s.name}` === options.service);
  const perService = chosen.map((svc) => {
    const before = [...apiFindings(svc.row, svc.endpoints, pods.get(svc.namespace) ?? []), ...dataplaneFindings(svc, shared), ...(options.walk?.(svc) ?? []), ...dnsOf(options.dns, svc)];
    const left = leftoverFinding(`${svc.namespace}/${svc.name}`, shared, dp.dataplane);
    return { svc, before, after: left ? [left] : [] };
  });
  // Every expected frontend is matched first (all Services), so a frontend is unexpected only when no Service claims it.
  if (options.service !== undefined) for (const s of expectation.services) for (const f of s.frontends) shared.matched.add(frontendKey(f));
  const unexpected = dp.problem === null ? unexpectedFrontends(shared) : new Map<string, Finding[]>();
  const services = perService.map(({ svc, before, after }) => ({ svc, before, after: [...after, ...(unexpected.get(`${svc.namespace}/${svc.name}`) ?? [])] }));
  const known = new Set(expectation.services.map((s) => `${s.namespace}/${s.name}`));
  const nodeBefore: Finding[] = dp.problem === null ? [] : [{ layer: 'dataplane', code: 'dataplane-not-read', severity: 'unknown', message: dp.problem, ...(dp.problemSaid ? { said: dp.problemSaid } : {}), evidence: [] }];
  const nodeAfter: Finding[] = [];
  if (options.service === undefined) {
    for (const [k, list] of unexpected) if (!known.has(k)) nodeAfter.push(...list);
    for (const [k] of shared.leftovers) {
      if (known.has(k)) continue;
      const f = leftoverFinding(k, shared, dp.dataplane);
      if (f) nodeAfter.push({ ...f, ...saying('dg.leftoverOf', { ref: k || said('dg.leftoverOf.none'), message: f.said ?? f.message }) });
    }
    if (lb && dp.dataplane === 'cilium') nodeAfter.push(...orphanBackends(lb));
  }
  return { header, services, nodeBefore, nodeAfter, flows: dp.dataplane === 'cilium' ? null : { services: chosen } };
}

/**
 * Completes a {@link RulesDiagnosis} with the conntrack layer of `snapshot`'s node (its
 * conntrack table, node IPs and the node's Kubernetes version in `api`): the same result as
 * {@link diagnoseSnapshot} gives for that snapshot. The header names `snapshot`'s node. Pure.
 */
export function finishDiagnosis(rules: RulesDiagnosis, snapshot: NodeSnapshot, api: ApiObjects): Diagnosis {
  const ct = snapshot.conntrack?.value;
  const flows = ct && rules.flows ? conntrackFindings(ct.entries, rules.flows.services, nodeAddressesOf(snapshot, api).ips, nodeMinorVersion(api, snapshot.meta.node)) : new Map<string, Finding[]>();
  const services: ServiceDiagnosis[] = rules.services.map(({ svc, before, after }) => {
    const found = flows.size > 0 ? flows.get(`${svc.namespace}/${svc.name}`) : undefined;
    // Most Services have no flow and no leftover: their findings array is shared, not copied.
    const all = found === undefined && after.length === 0 ? before : [...before, ...(found ?? []), ...after];
    return { namespace: svc.namespace, name: svc.name, verdict: foldVerdict(all), findings: all };
  });
  const nodeFindings: Finding[] = [...rules.nodeBefore];
  if (!ct || !rules.flows) {
    const error = snapshot.conntrack?.error;
    const why = !rules.flows ? said('dg.ctCilium') : error ? said('dg.ctUnreadWhy', { error }) : said('dg.ctUnread');
    nodeFindings.push({ layer: 'conntrack', code: 'conntrack-not-read', severity: 'info', ...saying('dg.ctNotRead', { why }), evidence: [] });
  }
  nodeFindings.push(...rules.nodeAfter);
  return { header: { ...rules.header, node: snapshot.meta.node, services: services.length, counts: countVerdicts(services), nodeFindings }, services };
}

/**
 * The diagnosis of one node: every Service of `api` (default: the snapshot's API objects)
 * with its verdict and findings, and a header naming the node, the dataplane compared and the
 * findings of no Service. Without API objects, no Service can be judged: the header says so
 * and `services` is empty (exit status 2). Never throws on node data.
 */
export function diagnoseSnapshot(snapshot: NodeSnapshot, api: ApiObjects | null = snapshot.api?.value ?? null, options: DiagnoseOptions = {}): Diagnosis {
  if (!api) {
    const dp = readNodeDataplane(snapshot);
    const header = { node: snapshot.meta.node, mode: dp.mode, dataplane: dp.dataplane ?? ('none' as const), dns: dnsHeader(options.dns) };
    const why = snapshot.api?.error ?? said('dg.noApi.default');
    const nodeFindings: Finding[] = [{ layer: 'api', code: 'no-api-objects', severity: 'unknown', ...saying('dg.noApi', { why }), evidence: [] }];
    return { header: { ...header, services: 0, counts: countVerdicts([]), nodeFindings }, services: [] };
  }
  return finishDiagnosis(diagnoseRules(snapshot, api, options), snapshot, api);
}
