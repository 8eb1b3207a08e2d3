/**
 * What a Cilium node's LB table does with each frontend (the `cilium_lb4_services_v2` master
 * entry and its backend slots, joined with `cilium_lb4_backends_v3`), in the common frontend
 * shape, plus the Cilium-only findings: backends in a state other than `active`, slot counts
 * that differ from the backends the API gives, backends no slot uses, and where the agent's
 * `service list` and the BPF maps disagree (`LbTable.disagreements`,
 * src/analysis/cilium-listings.ts). Layout: Cilium pkg/loadbalancer, bpf/lib/lb.h. Pure.
 */
import type { LbTable } from '../../model/cilium.js';
import { formatServiceFlags, SVC_FLAG } from '../../model/cilium.js';
import { lbServiceFrontend, type CiliumExpectedFrontend, type ExpectedAlternative, type ExpectedFrontend } from './expect.js';
import { endpointKey, frontendKey, type ProgrammedFrontend } from './frontends.js';
import { joined, said, saying, type Said } from './say.js';
import type { Finding } from './types.js';

/** Every frontend of the LB table, lb4 and lb6, both scopes (the internal one keyed with `/i`). */
export function readCiliumFrontends(table: LbTable): ProgrammedFrontend[] {
  return table.services.map(lbServiceFrontend);
}

/** The flag bits diagnose compares: the ones the API decides (traffic policies, affinity, source ranges). */
const POLICY_FLAGS = SVC_FLAG.extLocalScope | SVC_FLAG.intLocalScope | SVC_FLAG.twoScopes | SVC_FLAG.sessionAffinity | SVC_FLAG.sourceRange;

/**
 * Which expectation of a Cilium frontend to compare with: the main one, or the alternative
 * (an agent option or release nodescope did not read) the node's entry equals exactly, said
 * in an `info` finding. When none equals it, the main one, and the findings then say what
 * the expectation depended on. `same`: whether two frontends compare equal (no findings).
 */
export function pickCiliumExpectation(exp: CiliumExpectedFrontend, act: ProgrammedFrontend | undefined, same: (e: ExpectedFrontend) => boolean): { exp: ExpectedFrontend; findings: Finding[] } {
  const withEndpoints = exp.alternatives.filter((a) => a.frontend !== null);
  if (!act || withEndpoints.length === 0 || same(exp)) return { exp, findings: [] };
  const fe = frontendKey(exp);
  const port = exp.portName || String(exp.port);
  for (const alt of withEndpoints) {
    const e: ExpectedFrontend = { ...alt.frontend!, reason: alt.frontend!.outcome === 'endpoints' ? 'endpoints' : exp.reason, excluded: exp.excluded };
    if (same(e)) return { exp: e, findings: [{ layer: 'dataplane', code: 'cilium-expectation-undecided', severity: 'info', ...saying('dg.ciliumOtherCase', { frontend: fe, what: undecidedSaid(alt) }), port, frontend: fe, evidence: act.evidence }] };
  }
  const what = joined(withEndpoints.map(undecidedSaid), '; ');
  return { exp, findings: [{ layer: 'dataplane', code: 'cilium-expectation-undecided', severity: 'info', ...saying('dg.ciliumDefaults', { frontend: fe, what }), port, frontend: fe, evidence: act.evidence }] };
}

/** What an unread option or release is, as a phrase of the i18n tables. */
function undecidedSaid(a: ExpectedAlternative): Said {
  if (a.kind !== 'topology') return said(`dg.cu.${a.kind}`);
  const r = a.rule;
  return said('dg.cu.topology', { rule: r ? (r.kind === 'hinted' ? said('dg.cu.rule.hinted', { zone: r.zone }) : said('dg.cu.rule.sameNode', { node: r.node })) : (a.topology ?? '') });
}

function flagWords(bits: number): string {
  const words: [number, string][] = [[SVC_FLAG.extLocalScope, 'Local'], [SVC_FLAG.intLocalScope, 'InternalLocal'], [SVC_FLAG.twoScopes, 'two-scopes'], [SVC_FLAG.sessionAffinity, 'sessionAffinity'], [SVC_FLAG.sourceRange, 'check source-range']];
  const out = words.filter(([b]) => bits & b).map(([, w]) => w);
  return out.length > 0 ? out.join(', ') : 'none';
}

/**
 * The policy flags of a Cilium frontend against the expected ones (`Local`, `InternalLocal`,
 * `two-scopes`, `sessionAffinity`, `check source-range`), leaving out bits an unread option
 * decides. Nothing when the source carries no flags (a listing without them).
 */
export function ciliumFlagFindings(exp: CiliumExpectedFrontend, act: ProgrammedFrontend): Finding[] {
  if (exp.flags === undefined || exp.flags === null || act.flags === undefined || act.flags === null) return [];
  const undecided = exp.alternatives.reduce((m, a) => m | a.flagMask, 0);
  const mask = POLICY_FLAGS & ~undecided;
  const want = exp.flags & mask;
  const have = act.flags & mask;
  if (want === have) return [];
  const fe = frontendKey(exp);
  const missing = flagWords(want & ~have);
  const extra = flagWords(have & ~want);
  const lacks = missing !== 'none' ? said('dg.ciliumFlags.lacks', { flags: missing }) : undefined;
  const has = extra !== 'none' ? said('dg.ciliumFlags.has', { flags: extra }) : undefined;
  const parts = lacks && has ? said('dg.ciliumFlags.both', { lacks, has }) : (lacks ?? has)!;
  return [{ layer: 'dataplane', code: 'cilium-flags-differ', severity: 'degraded', ...saying('dg.ciliumFlags', { frontend: fe, parts, have: formatServiceFlags(act.flags), want: formatServiceFlags(exp.flags) }), port: exp.portName || String(exp.port), frontend: fe, evidence: act.evidence }];
}

/** Cilium findings of one frontend the node has, against the one expected (same key). */
export function ciliumFrontendFindings(exp: ProgrammedFrontend, act: ProgrammedFrontend): Finding[] {
  const out: Finding[] = [];
  const fe = frontendKey(act);
  const port = exp.portName || String(exp.port);
  for (const e of act.endpoints) {
    if (e.state && e.state !== 'active' && e.state !== 'terminating') {
      out.push({ layer: 'dataplane', code: 'cilium-backend-state', severity: 'degraded', ...saying('dg.ciliumState', { frontend: fe, endpoint: endpointKey(e), state: e.state }), port, frontend: fe, endpoint: endpointKey(e), evidence: act.evidence });
    }
  }
  const live = (f: ProgrammedFrontend) => f.endpoints.filter((e) => (e.weight ?? 0) > 0).length;
  if (live(exp) !== live(act) || exp.endpoints.length !== act.endpoints.length) {
    out.push({ layer: 'dataplane', code: 'cilium-slot-count', severity: 'degraded', ...saying('dg.ciliumSlots', { frontend: fe, live: live(act), slots: act.endpoints.length, apiLive: live(exp), apiSlots: exp.endpoints.length }), port, frontend: fe, evidence: act.evidence });
  }
  return out;
}

/** Backends of the backend map that no service slot uses (`ip:port/PROTO`): leftovers of deleted endpoints or a hand-made entry. */
export function orphanBackends(table: LbTable): Finding[] {
  if (table.backends.length === 0) return [];
  const used = new Set<number>();
  for (const s of table.services) for (const slot of s.slots) if (slot.backendId !== null) used.add(slot.backendId);
  return table.backends
    .filter((b) => b.id !== null && !used.has(b.id))
    .map((b) => ({
      layer: 'dataplane' as const,
      code: 'endpoint-extra' as const,
      severity: 'info' as const,
      ...saying('dg.ciliumOrphan', { id: b.id ?? '?', address: `${b.ip}:${b.port}/${b.protocol ?? 'ANY'}` }),
      endpoint: `${b.ip}:${b.port}`,
      evidence: [{ pane: 'lb' as const, ref: `backend ${b.id}` }],
    }));
}

/** The agent's listing against the BPF maps, per frontend key (`ip:port/PROTO`). */
export function listingDisagreements(table: LbTable): Map<string, Finding> {
  const out = new Map<string, Finding>();
  for (const d of table.disagreements ?? []) {
    const key = d.frontend.replace(/\/i$/, '');
    out.set(key, { layer: 'dataplane', code: 'cilium-listing-disagrees', severity: 'degraded', ...saying('dg.ciliumListing', { frontend: d.frontend, message: d.message }), frontend: key, evidence: [{ pane: 'lb', ref: key }] });
  }
  return out;
}
