/**
 * The dataplane layer's comparison, endpoint by endpoint: each frontend a Service should have
 * (src/analysis/diagnose/expect.ts) against the one the node has (read-iptables.ts,
 * read-nftables.ts, read-cilium.ts), in one shape for every dataplane. Frontends are matched
 * by `ip:port/PROTO` and endpoints by `ip:port` (Map lookups: no pairwise scans). Pure.
 */
import type { ApiEndpointFacts, ExpectedFrontend } from './expect.js';
import { endpointKey, frontendKey, type ProgrammedEndpoint, type ProgrammedFrontend } from './frontends.js';
import { said, saying, type SaidParam } from './say.js';
import type { Evidence, Finding, FindingCode, Severity } from './types.js';
import type { MessageKey } from '../../text/i18n.js';


/** What the comparer needs besides the two frontends. */
export interface CompareContext {
  /** This Service's endpoint addresses in its EndpointSlices. */
  readonly apiEndpoints: ReadonlyMap<string, ApiEndpointFacts>;
  /** Every Pod IP the API knows → `ns/name`. */
  readonly podsByIp: ReadonlyMap<string, string>;
  readonly dataplane: 'iptables' | 'nftables' | 'cilium';
}

/** Weights further than this from the even share are wrong (kube-proxy prints 10 decimals). */
const WEIGHT_TOLERANCE = 1e-3;

function finding(code: FindingCode, severity: Severity, key: MessageKey, params: Readonly<Record<string, SaidParam>>, f: ProgrammedFrontend, extra: { endpoint?: string; evidence?: readonly Evidence[] } = {}): Finding {
  return {
    layer: 'dataplane',
    code,
    severity,
    ...saying(key, { frontend: frontendKey(f), ...params }),
    port: f.portName || String(f.port),
    frontend: frontendKey(f),
    ...(extra.endpoint ? { endpoint: extra.endpoint } : {}),
    evidence: extra.evidence ?? f.evidence,
  };
}

function percent(w: number | null): string {
  return w === null ? '?' : `${(w * 100).toFixed(1)}%`;
}

/** Findings of a frontend that should rewrite nothing (reject or drop). */
function compareNoEndpoints(exp: ExpectedFrontend, act: ProgrammedFrontend, ctx: CompareContext): Finding[] {
  if (act.outcome === 'endpoints' && act.endpoints.length > 0) {
    return act.endpoints.map((e) => extraEndpoint(exp, act, e, ctx));
  }
  if (act.outcome === exp.outcome || (act.outcome === 'endpoints' && exp.reason === 'no-local-external')) {
    if (exp.reason === 'no-local-external') {
      return [finding('local-policy-drop', 'info', 'dg.etpDrop', {}, exp, { evidence: act.evidence })];
    }
    if (exp.reason === 'no-local-internal') {
      return [finding('local-policy-drop', 'broken', 'dg.itpDrop', {}, exp, { evidence: act.evidence })];
    }
    return [];
  }
  const what = said(act.outcome === 'endpoints' ? 'dg.part.noRule' : act.outcome === 'reject' ? 'dg.part.rejectsIt' : 'dg.part.dropsIt');
  return [finding(act.outcome === 'reject' ? 'frontend-rejects' : 'frontend-drops', 'degraded', exp.outcome === 'reject' ? 'dg.shouldReject' : 'dg.shouldDrop', { what }, exp, { evidence: act.evidence })];
}

function extraEndpoint(exp: ExpectedFrontend, act: ProgrammedFrontend, e: ProgrammedEndpoint, ctx: CompareContext): Finding {
  const ep = endpointKey(e);
  const api = ctx.apiEndpoints.get(e.ip);
  const evidence = e.evidence.length > 0 ? e.evidence : act.evidence;
  if (api && !api.ready && !(api.serving && api.terminating)) {
    return finding('endpoint-not-ready', 'degraded', api.serving ? 'dg.notReady' : 'dg.notReadyNotServing', { endpoint: ep }, exp, { endpoint: ep, evidence });
  }
  if (api) {
    const why = exp.excluded?.get(ep) ?? said('dg.extraOfService.default');
    return finding('endpoint-extra', 'degraded', 'dg.extraOfService', { endpoint: ep, why }, exp, { endpoint: ep, evidence });
  }
  const pod = ctx.podsByIp.get(e.ip);
  return finding('endpoint-extra', 'degraded', pod ? 'dg.extraPod' : 'dg.extraUnknown', { endpoint: ep, ...(pod ? { pod } : {}) }, exp, { endpoint: ep, evidence });
}

function compareWeights(exp: ExpectedFrontend, act: ProgrammedFrontend, ctx: CompareContext): Finding[] {
  const live = act.endpoints.filter((e) => ctx.dataplane !== 'cilium' || (e.weight ?? 0) > 0);
  if (live.length === 0 || live.some((e) => e.weight === null)) return [];
  const even = 1 / live.length;
  const off = live.filter((e) => Math.abs((e.weight ?? 0) - even) > WEIGHT_TOLERANCE);
  const total = live.reduce((s, e) => s + (e.weight ?? 0), 0);
  if (off.length === 0 && Math.abs(total - 1) <= WEIGHT_TOLERANCE) return [];
  const how = said(ctx.dataplane === 'iptables' ? 'dg.how.iptables' : ctx.dataplane === 'nftables' ? 'dg.how.nftables' : 'dg.how.cilium');
  const shares = live.map((e) => `${endpointKey(e)} ${percent(e.weight)}`).join(', ');
  return [finding('wrong-weights', 'degraded', 'dg.weights', { how, shares, even: percent(even) }, exp, { evidence: live.flatMap((e) => e.evidence.slice(0, 1)) })];
}

/** Findings of a frontend that should send clients to endpoints. */
function compareEndpoints(exp: ExpectedFrontend, act: ProgrammedFrontend, ctx: CompareContext): Finding[] {
  if (act.outcome !== 'endpoints') {
    const code = act.outcome === 'reject' ? 'frontend-rejects' : 'frontend-drops';
    return [finding(code, 'broken', act.outcome === 'reject' ? 'dg.nodeRejects' : 'dg.nodeDrops', { count: exp.endpoints.length }, exp, { evidence: act.evidence })];
  }
  const out: Finding[] = [];
  const actual = new Map(act.endpoints.map((e) => [endpointKey(e), e]));
  const expected = new Map(exp.endpoints.map((e) => [endpointKey(e), e]));
  const actualIps = new Map(act.endpoints.map((e) => [e.ip, e]));
  const wrongPort = new Set<string>();
  for (const [k, e] of expected) {
    if (actual.has(k)) continue;
    const other = actualIps.get(e.ip);
    if (other && !expected.has(endpointKey(other))) {
      wrongPort.add(endpointKey(other));
      out.push(finding('wrong-target-port', 'degraded', 'dg.wrongPort', { ip: e.ip, port: other.port, target: e.port }, exp, { endpoint: k, evidence: other.evidence }));
    } else {
      out.push(finding('endpoint-missing', 'degraded', 'dg.missing', { endpoint: k }, exp, { endpoint: k, evidence: act.evidence }));
    }
  }
  for (const [k, e] of actual) {
    if (expected.has(k)) {
      if (e.protocol !== null && e.protocol !== exp.protocol && ctx.dataplane !== 'cilium') {
        out.push(finding('wrong-protocol', 'degraded', 'dg.wrongProtocol', { endpoint: k, protocol: e.protocol, expected: exp.protocol }, exp, { endpoint: k, evidence: e.evidence }));
      }
      continue;
    }
    if (!wrongPort.has(k)) out.push(extraEndpoint(exp, act, e, ctx));
  }
  out.push(...compareWeights(exp, act, ctx));
  if (exp.affinitySeconds !== act.affinitySeconds) {
    const affinity = (s: number | null) => (s === null ? said('dg.affinity.none') : said('dg.affinity.seconds', { seconds: s }));
    out.push(finding('affinity-differs', 'degraded', 'dg.affinity', { node: affinity(act.affinitySeconds), api: affinity(exp.affinitySeconds) }, exp, { evidence: act.evidence }));
  }
  const reaching = act.endpoints.filter((e) => (e.weight === null || e.weight > 0) && expected.has(endpointKey(e)) && (e.protocol === null || e.protocol === exp.protocol || ctx.dataplane === 'cilium'));
  if (reaching.length === 0) {
    out.push(finding('frontend-no-ready-endpoint', 'broken', 'dg.noReachable', { programmed: act.endpoints.length, expected: exp.endpoints.length }, exp, { evidence: act.evidence }));
  }
  return out;
}

/**
 * True when the node's frontend is exactly the expected one: same outcome and affinity, the
 * same endpoints in the same order (kube-proxy's `ip:port` order, Cilium's slot order), each
 * with its even share. The common case, checked without building an index.
 */
function sameAsExpected(exp: ExpectedFrontend, act: ProgrammedFrontend, ctx: CompareContext): boolean {
  if (act.outcome !== exp.outcome || act.affinitySeconds !== exp.affinitySeconds || act.endpoints.length !== exp.endpoints.length) return false;
  if (exp.outcome !== 'endpoints' || exp.endpoints.length === 0) return false;
  for (let i = 0; i < exp.endpoints.length; i++) {
    const e = exp.endpoints[i]!;
    const a = act.endpoints[i]!;
    if (a.ip !== e.ip || a.port !== e.port || a.weight === null || e.weight === null || Math.abs(a.weight - e.weight) > WEIGHT_TOLERANCE) return false;
    if (ctx.dataplane !== 'cilium' && a.protocol !== null && a.protocol !== exp.protocol) return false;
  }
  return true;
}

/**
 * The dataplane findings of one expected frontend against the node's frontend of the same key
 * (`act`, undefined when the node has none). A frontend whose reading hit something not
 * understood gives one `unknown` finding and nothing else.
 */
export function compareFrontend(exp: ExpectedFrontend, act: ProgrammedFrontend | undefined, ctx: CompareContext): Finding[] {
  if (!act) {
    if (exp.outcome === 'endpoints') return [finding('frontend-missing', 'broken', 'dg.frontendMissing', {}, exp)];
    if (exp.reason === 'no-local-external') return [finding('local-policy-drop', 'info', 'dg.etpDropShort', {}, exp)];
    return [finding('frontend-missing', 'degraded', exp.outcome === 'reject' ? 'dg.frontendMissingReject' : 'dg.frontendMissingDrop', { reason: exp.reason }, exp)];
  }
  if (act.problems.length === 0 && sameAsExpected(exp, act, ctx)) return [];
  if (act.problems.length > 0) {
    return [finding('dataplane-not-understood', 'unknown', 'dg.notUnderstood', { problems: act.problems.join('; ') }, exp, { evidence: act.evidence })];
  }
  return exp.outcome === 'endpoints' ? compareEndpoints(exp, act, ctx) : compareNoEndpoints(exp, act, ctx);
}
