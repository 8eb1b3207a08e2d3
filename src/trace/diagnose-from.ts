/**
 * `nodescope diagnose --from WHO` (issue 17, item 6): for each frontend of a Service, the
 * step engine's walk of a new connection from that client (src/trace/choose-engine.ts, the
 * walk `nodescope trace` prints), judged against the expectation: which endpoints it
 * reaches and through which rule, or which rule drops or rejects it, or what the walk could
 * not decide. One finding per frontend (layer `dataplane`, codes `from-*`), so "why not from
 * here" is one line with its proof. Every random branch of the Service chain is walked (up to
 * {@link MAX_BRANCHES}), each to its endpoint. A Pod on another node is not walked here: its
 * packets are rewritten on its own node. Pure (reads the snapshot only).
 */
import type { DiagnoseClient, Evidence, ExpectedFrontend, ExpectedService, Finding, FindingCode, Severity } from '../analysis/diagnose/index.js';
import { endpointKey, frontendKey } from '../analysis/diagnose/index.js';
import { joined, said, sayIn, saying, type Said, type SaidParam } from '../analysis/diagnose/say.js';
import { UserError } from '../errors.js';
import type { ApiObjects } from '../model/k8s.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import { parseAddress } from '../net/address.js';
import { traceFromSnapshot, type TraceCommandArgs } from './choose-engine.js';
import type { TraceResult, TraceStep } from './types.js';

/** Random branches walked per frontend at most (kube-proxy writes one per endpoint). */
export const MAX_BRANCHES = 16;

/**
 * What the walks need besides the Service: the snapshot, the client, the node address a
 * NodePort is walked to (null when the node has none known), whether the node's iptables
 * rules are iptables-legacy's (so a proof names the Rules pane's ruleset), and its proxy mode.
 */
export interface FromWalkContext {
  readonly snapshot: NodeSnapshot;
  readonly client: DiagnoseClient;
  readonly nodeIP: string | null;
  readonly legacyOnly: boolean;
  /** The node's proxy mode as detected: an IPVS node's rewrite is in IPVS, which the walk does not model. */
  readonly mode: string;
}

const KIND_WORDS: Readonly<Record<ExpectedFrontend['kind'], string>> = { clusterIP: 'ClusterIP', externalIP: 'externalIP', loadBalancer: 'LoadBalancer IP', nodePort: 'NodePort' };
const WALKED = new Set(['TCP', 'UDP', 'SCTP']);

/**
 * The node address a NodePort is walked to: the Node object's IPv4 InternalIP, else the
 * node's first global IPv4 address; null when neither is known.
 */
export function nodeAddressOf(snapshot: NodeSnapshot, api: ApiObjects | null): string | null {
  const node = api?.nodes.find((n) => n.meta.name === snapshot.meta.node);
  const internal = node?.addresses.find((a) => a.type === 'InternalIP' && parseAddress(a.address)?.family === 'ipv4');
  if (internal) return internal.address;
  for (const i of snapshot.addrs?.value ?? []) for (const a of i.addresses) if (a.family === 'inet' && a.scope === 'global') return a.local;
  return null;
}

/** The pane row of a step: a Rules pane rule (iptables, nft) or the LB pane frontend (Cilium). */
function stepEvidence(step: TraceStep | undefined, ctx: FromWalkContext, fe: string): Evidence | null {
  if (!step) return null;
  const text = step.ruleText ? { text: step.ruleText } : {};
  if (step.backend === 'iptables' && step.table && step.chain && step.ruleIndex) {
    const ruleset = step.xtables === 'legacy' || (step.xtables === undefined && ctx.legacyOnly) ? 'iptables-legacy' : 'iptables';
    return { pane: 'rules', ref: `${step.table} ${step.chain} #${step.ruleIndex}`, ...text, at: { ruleset, table: step.table, chain: step.chain, rule: step.ruleIndex - 1 } };
  }
  if (step.backend === 'nft' && step.table && step.chain && step.ruleIndex) {
    const table = `${step.family ?? 'ip'} ${step.table}`;
    return { pane: 'rules', ref: `${table} ${step.chain} #${step.ruleIndex}`, ...text, at: { ruleset: 'nft', table, chain: step.chain, rule: step.ruleIndex - 1 } };
  }
  if (step.backend === 'ebpf') return { pane: 'lb', ref: fe, ...text };
  return null;
}

/** The rule that rewrote the destination: the last matched rule at or before the first step whose header leaves `dst`. */
function dnatStep(r: TraceResult, dst: string): TraceStep | undefined {
  const i = r.steps.findIndex((s) => s.header.dst !== dst);
  if (i < 0) return undefined;
  for (let j = i; j >= 0; j--) {
    const s = r.steps[j]!;
    if ((s.kind === 'rule' && s.matched) || s.kind === 'map-lookup') return s;
  }
  return undefined;
}

/** One walk's outcome: reaches a good endpoint, a wrong one, is stopped, or cannot be decided. */
interface Outcome {
  readonly status: 'reaches' | 'wrong' | 'blocked' | 'unknown';
  readonly endpoint: string | null;
  readonly text: Said;
  readonly evidence: Evidence | null;
  readonly byDesign?: boolean;
}

interface Target {
  readonly exp: ExpectedFrontend;
  readonly svc: ExpectedService;
  readonly dst: string;
  /** Endpoints a client may rightly reach: the frontend's, and the ClusterIP's of the same port (kube-proxy sends Pods' and the node's traffic for eTP=Local frontends to every endpoint). */
  readonly good: ReadonlySet<string>;
}

function walk(ctx: FromWalkContext, t: Target, branch?: number): TraceResult | string {
  const { client, snapshot } = ctx;
  const args: TraceCommandArgs = {
    to: `${t.dst}:${t.exp.port}/${t.exp.protocol.toLowerCase()}`,
    ...(client.ip !== null ? { from: client.ip } : { entry: 'host' }),
    ...(branch !== undefined ? { branch: String(branch) } : {}),
    ...(snapshot.nft?.value ? { nft: snapshot.nft.value } : {}),
  };
  try {
    return traceFromSnapshot(snapshot, args);
  } catch (e) {
    if (e instanceof UserError) return e.message;
    throw e;
  }
}

/** The step that decided the verdict: the last rule that matched (or policy, map lookup) at or before the verdict's step. */
function decidingStep(r: TraceResult): TraceStep | undefined {
  for (let j = Math.min(r.verdict.step, r.steps.length - 1); j >= 0; j--) {
    const s = r.steps[j]!;
    if ((s.kind === 'rule' && s.matched) || s.kind === 'policy' || s.kind === 'map-lookup' || s.kind === 'unsupported') return s;
  }
  return undefined;
}

function judge(r: TraceResult, t: Target, ctx: FromWalkContext): Outcome {
  const fe = frontendKey(t.exp);
  const v = r.verdict;
  const at = stepEvidence(decidingStep(r), ctx, fe);
  if (v.kind === 'unsupported' || v.kind === 'unknown' || v.kind === 'ambiguous') {
    return { status: 'unknown', endpoint: null, text: said('dg.from.cannotDecide', { kind: v.kind, reason: v.reason }), evidence: at };
  }
  if (v.kind === 'dropped' || v.kind === 'rejected') {
    const how = v.kind === 'dropped' ? said('dg.from.dropped') : v.rejectWith ? said('dg.from.rejectedWith', { with: v.rejectWith }) : said('dg.from.rejected');
    const byDesign = v.kind === 'dropped' && t.exp.reason === 'no-local-external' && r.request.entry === 'external';
    return { status: 'blocked', endpoint: null, text: at ? said('dg.from.by', { how, ref: at.ref }) : said('dg.from.stopped', { how, reason: v.reason }), evidence: at, byDesign };
  }
  const fin = r.final;
  if (fin.dst === t.dst && fin.dport === t.exp.port) {
    return { status: 'blocked', endpoint: null, text: said('dg.from.notRewritten', { reason: v.reason }), evidence: at };
  }
  const ep = endpointKey({ ip: fin.dst, port: fin.dport ?? 0 });
  const via = stepEvidence(dnatStep(r, t.dst), ctx, fe);
  if (t.good.has(ep)) return { status: 'reaches', endpoint: ep, text: via ? said('dg.from.via', { endpoint: ep, ref: via.ref }) : said('dg.from.reachedBare', { endpoint: ep }), evidence: via };
  return { status: 'wrong', endpoint: ep, text: said(t.svc.apiEndpoints.has(fin.dst) ? 'dg.from.wrongOfService' : 'dg.from.wrongNoSlice', { endpoint: ep }), evidence: via };
}

function outcomesOf(ctx: FromWalkContext, t: Target): Outcome[] {
  const first = walk(ctx, t);
  if (typeof first === 'string') return [{ status: 'unknown', endpoint: null, text: said('dg.from.notWalked', { why: first }), evidence: null }];
  const out = [judge(first, t, ctx)];
  const split = first.steps.find((s) => s.branches && s.branches.length > 1 && s.matched !== false);
  const n = Math.min(split?.branches?.length ?? 1, MAX_BRANCHES);
  for (let i = 1; i < n; i++) {
    const r = walk(ctx, t, i);
    out.push(typeof r === 'string' ? { status: 'unknown', endpoint: null, text: said('dg.from.notWalked', { why: r }), evidence: null } : judge(r, t, ctx));
  }
  return out;
}

/** `a via R1, b via R2`, or `a, b via R` when one proof serves all (Cilium's LB entry). */
function reached(ok: readonly Outcome[]): SaidParam {
  const refs = new Set(ok.map((o) => o.evidence?.ref ?? ''));
  if (refs.size === 1 && ok.length > 1 && ok[0]!.evidence) return said('dg.from.via', { endpoint: joined(ok.map((o) => o.endpoint ?? '')), ref: ok[0]!.evidence.ref });
  return joined(ok.map((o) => o.text));
}

function findingOf(t: Target, outs: readonly Outcome[], ctx: FromWalkContext): Finding {
  const fe = frontendKey(t.exp);
  const head = t.dst !== t.exp.ip ? said('dg.from.headOn', { client: ctx.client.label, kind: KIND_WORDS[t.exp.kind], frontend: fe, address: t.dst }) : said('dg.from.head', { client: ctx.client.label, kind: KIND_WORDS[t.exp.kind], frontend: fe });
  const ok = outs.filter((o) => o.status === 'reaches');
  const bad = outs.filter((o) => o.status === 'wrong' || o.status === 'blocked');
  const unknown = outs.filter((o) => o.status === 'unknown');
  const counts = { ok: ok.length, all: outs.length };
  const evidence = [...new Map(outs.flatMap((o) => (o.evidence ? [[o.evidence.ref, o.evidence] as const] : []))).values()];
  const make = (code: FindingCode, severity: Severity, text: Said, endpoint?: string | null): Finding => ({
    layer: 'dataplane', code, severity, message: sayIn(text, 'en'), said: text, port: t.exp.portName || String(t.exp.port), frontend: fe, ...(endpoint ? { endpoint } : {}), evidence,
  });
  if (unknown.length > 0 && bad.length === 0) return make('from-unknown', 'unknown', said('dg.from.unknown', { head, why: unknown[0]!.text }));
  if (bad.length === 0) return make('from-reaches', 'info', said(outs.length > 1 ? 'dg.from.reachesBranches' : 'dg.from.reaches', { head, reached: reached(ok), ...counts }));
  const why = joined([...new Map(bad.map((o) => [sayIn(o.text, 'en'), o.text])).values()], '; ');
  if (bad.every((o) => o.byDesign)) return make('from-blocked', 'info', said('dg.from.byDesign', { head, why }));
  const endpoint = bad.find((o) => o.endpoint)?.endpoint ?? null;
  if (ok.length > 0) return make('from-partly', 'degraded', said('dg.from.partly', { head, reached: reached(ok), why, ...counts }), endpoint);
  return make('from-blocked', 'broken', unknown.length > 0 ? said('dg.from.blockedUndecided', { head, why, count: unknown.length }) : said('dg.from.blocked', { head, why }), endpoint);
}

/**
 * The `from-*` findings of one Service for the client of `ctx` (see the module comment):
 * one per frontend of the client's IP family, or one `from-unknown` for the Service when the
 * client cannot be walked on this node (a Pod of another node, a Pod without an IP). Never
 * throws on node data (a walk that cannot start is `from-unknown`, naming why).
 */
export function walkFromClient(svc: ExpectedService, ctx: FromWalkContext): Finding[] {
  const { client } = ctx;
  const whole = (text: Said): Finding[] => [{ layer: 'dataplane', code: 'from-unknown', severity: 'unknown', message: sayIn(text, 'en'), said: text, evidence: [] }];
  if (svc.frontends.length === 0) return [];
  if (client.kind === 'pod' && client.podNode !== undefined && client.podNode !== ctx.snapshot.meta.node) {
    return whole(said('dg.from.otherNode', { client: client.label, node: client.podNode }));
  }
  // The walk models netfilter and Cilium's BPF, not the IPVS table: "delivered locally" there would be a confident wrong answer.
  if (ctx.mode === 'ipvs') return whole(said('dg.from.ipvs', { client: client.label }));
  if (client.kind === 'pod' && client.ip === null) return whole(said('dg.from.noIp', { client: client.label }));
  const family = client.ip === null ? null : parseAddress(client.ip)?.family;
  const out: Finding[] = [];
  for (const exp of svc.frontends) {
    // `*` (kube-proxy) and Cilium's 0.0.0.0 surrogate: a NodePort on every node address.
    const anyAddress = exp.ip === '*' || exp.ip === '0.0.0.0';
    const dst = anyAddress ? ctx.nodeIP : exp.ip;
    if (dst !== null && family && parseAddress(dst)?.family !== family) continue;
    const fe = frontendKey(exp);
    const base = { layer: 'dataplane' as const, code: 'from-unknown' as const, severity: 'unknown' as const, port: exp.portName || String(exp.port), frontend: fe, evidence: [] };
    if (dst === null) {
      out.push({ ...base, ...saying('dg.from.noNodeIp', { client: client.label, frontend: fe }) });
      continue;
    }
    if (!WALKED.has(exp.protocol.toUpperCase())) {
      out.push({ ...base, ...saying('dg.from.protocol', { client: client.label, frontend: fe, protocol: exp.protocol }) });
      continue;
    }
    const clusterIP = svc.frontends.find((f) => f.kind === 'clusterIP' && f.protocol === exp.protocol && f.portName === exp.portName);
    const good = new Set([...exp.endpoints, ...(clusterIP?.endpoints ?? [])].map((e) => endpointKey(e)));
    const t: Target = { exp, svc, dst, good };
    out.push(findingOf(t, outcomesOf(ctx, t), ctx));
  }
  return out;
}
