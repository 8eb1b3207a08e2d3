/**
 * `nodescope trace --from IP[:PORT] --to IP:PORT/PROTO [--entry pod|host|external]
 * [--endpoint IP:PORT | --branch N] [--flags syn,ack] [--mark 0x4000] -o text|json`:
 * step mode for one packet over a snapshot.
 *
 * JSON document (stable): the head fields of `show` (`node, kernel, source, live,
 * capturedAt, mode, evidence`), then
 * `request: {entry, entryInferred, entryReason, branch, packet}`,
 * `steps: [{index, kind, backend, hook, family, table, chain, priority, ruleIndex, handle,
 * ruleText, matched, verdict, reason, header, counters: {packets, bytes} | null,
 * branches: [{index, probability, target, endpoint, ruleIndex, chosen}] | null}]`,
 * `verdict: {kind, reason, step, oif, nexthop, endpoint}`, `final` (the header as it
 * leaves), `conntrack: {proto, original, reply, state, dnat, snat, existing, text} | null`,
 * `reply: {sent, received, reason} | null`, `notes: [...]`. A header is `{family, proto,
 * src, dst, sport, dport, icmpType, icmpCode, icmpId, tcpFlags, mark, iif, oif, ct,
 * randomSport}`; counters are decimal strings (64-bit exact); probabilities 0–1.
 */
import type { NodeSnapshot } from '../model/snapshot.js';
import { branchLines, formatHeader, stepLine, stepNumber, tupleText } from '../trace/describe.js';
import { traceFromSnapshot, type TraceCommandArgs } from '../trace/choose-engine.js';
import type { TraceResult } from '../trace/types.js';
import { withExpectation } from '../trace/with-expectation.js';
import { headText, showHead } from './header.js';
import { toJson } from '../text/json.js';
import { terminalSafe } from '../text/terminal-safe.js';

/** The walk as text: one line per step, then verdict, final packet, conntrack entry and reply. */
export function traceText(r: TraceResult): string {
  const lines: string[] = [];
  const req = r.request;
  lines.push(`packet ${formatHeader(req.packet)}`);
  lines.push(`entry ${req.entry}${req.entryInferred ? ' (inferred)' : ''}: ${req.entryReason}`);
  if (req.branch) lines.push(`branch: ${req.branch}`);
  lines.push('');
  for (const s of r.steps) {
    lines.push(`${String(stepNumber(s)).padStart(3)} ${stepLine(s)}`);
    if (s.backend === 'ebpf' && s.ruleText) lines.push(`      ${s.ruleText}`);
    if (s.branches && s.matched !== false) for (const b of branchLines(s.branches)) lines.push(`      ${b}`);
  }
  lines.push('');
  lines.push(`verdict: ${r.verdict.kind}${r.verdict.rejectWith ? ` (${r.verdict.rejectWith})` : ''}: ${r.verdict.reason}`);
  for (const c of r.candidates ?? []) {
    const v = c.result.verdict;
    lines.push(`  candidate (${c.order}): ${v.kind}${v.endpoint ? ` → ${v.endpoint}` : ''}${v.rejectWith ? ` (${v.rejectWith})` : ''}: ${v.reason}`);
  }
  lines.push(`leaves as: ${formatHeader(r.final)}`);
  if (r.conntrack) lines.push(`conntrack${r.conntrack.existing ? ' (existing)' : ''}: ${r.conntrack.text}`);
  if (r.reply) lines.push(`reply: ${tupleText(r.reply.sent)} arrives as ${tupleText(r.reply.received)}: ${r.reply.reason}`);
  for (const n of r.notes) lines.push(`note: ${n}`);
  // Each entry is one line: a chain name or comment from the node stays on it.
  return `${lines.map((l) => terminalSafe(l)).join('\n')}\n`;
}

/** The walk as the stable JSON document described in the module comment. */
export function traceJson(r: TraceResult): unknown {
  return {
    request: r.request,
    steps: r.steps,
    verdict: r.verdict,
    final: r.final,
    conntrack: r.conntrack,
    reply: r.reply,
    notes: r.notes,
    ...(r.candidates ? { candidates: r.candidates.map((c) => ({ order: c.order, verdict: c.result.verdict, final: c.result.final, steps: c.result.steps })) } : {}),
  };
}

/**
 * Runs `nodescope trace` over `snapshot` and returns the document (`args.output`, default
 * text). Throws {@link UserError} for arguments to fix (addresses, ports, protocol,
 * entry, branch) and when the snapshot lacks the node's addresses and routes.
 */
export function runTraceCommand(snapshot: NodeSnapshot, args: TraceCommandArgs): string {
  const result = withExpectation(snapshot, traceFromSnapshot(snapshot, args));
  if (args.output === 'json') return toJson({ ...showHead(snapshot), ...(traceJson(result) as object) });
  return headText(showHead(snapshot)) + traceText(result);
}
