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
import { branchLines, formatHeader, stepHook, stepLine, stepMark, stepNumber, stepPlace, tupleText } from '../trace/describe.js';
import { traceFromSnapshot, type TraceCommandArgs } from '../trace/choose-engine.js';
import type { TraceResult, TraceStep } from '../trace/types.js';
import { withExpectation } from '../trace/with-expectation.js';
import { headText, showHead } from './header.js';
import { toDocument } from '../text/document.js';
import { terminalSafe } from '../text/terminal-safe.js';
import { t, tf, type Lang, type MessageKey } from '../text/i18n.js';
import { saidText, whyPieces, whyText } from '../text/why.js';

/** A verdict kind in `lang`: the kind itself in English (`forwarded`), the Step pane's words otherwise. */
function verdictWord(lang: Lang, kind: string): string {
  return lang === 'en' ? kind : t(lang, `step.verdict.${kind}` as MessageKey) ?? kind;
}

/** {@link stepLine} in `lang`: a kernel station's kind (`routing`, `final`) in the Step pane's words, the reason translated. */
function stepLineIn(lang: Lang, s: TraceStep): string {
  const place = s.table !== null && s.chain !== null ? stepPlace(s) : `${stepHook(s)} ${t(lang, `step.kind.${s.kind}`)}`.trim();
  const verdict = s.verdict && s.kind !== 'final' ? ` ${whyText(lang, s.verdict)}` : '';
  return `${place} ${stepMark(s)}${verdict}: ${saidText(lang, s.said, s.reason)}`;
}

/**
 * The walk as text in `lang` (default `en`): one line per step, then verdict, final packet,
 * conntrack entry and reply. The engine's sentences go through src/text/why.ts as in the
 * Step pane; rule text and names stay as the node wrote them.
 */
export function traceText(r: TraceResult, lang: Lang = 'en'): string {
  const why = (text: string) => whyText(lang, text);
  const lines: string[] = [];
  const req = r.request;
  lines.push(tf(lang, 'cli.trace.packet', { packet: why(formatHeader(req.packet)) }));
  lines.push(tf(lang, req.entryInferred ? 'cli.trace.entryInferred' : 'cli.trace.entry', { entry: lang === 'en' ? req.entry : t(lang, `step.entry.${req.entry}`), reason: why(req.entryReason) }));
  if (req.branch) lines.push(tf(lang, 'cli.trace.branch', { branch: req.branch }));
  lines.push('');
  for (const s of r.steps) {
    lines.push(`${String(stepNumber(s)).padStart(3)} ${lang === 'en' ? stepLine(s) : stepLineIn(lang, s)}`);
    if (s.backend === 'ebpf' && s.ruleText) lines.push(`      ${whyPieces(lang, s.ruleText)}`);
    if (s.branches && s.matched !== false) for (const b of branchLines(s.branches)) lines.push(`      ${b}`);
  }
  lines.push('');
  lines.push(tf(lang, 'cli.trace.verdict', { verdict: `${verdictWord(lang, r.verdict.kind)}${r.verdict.rejectWith ? ` (${r.verdict.rejectWith})` : ''}`, reason: saidText(lang, r.verdict.said, r.verdict.reason) }));
  for (const c of r.candidates ?? []) {
    const v = c.result.verdict;
    lines.push(tf(lang, 'cli.trace.candidate', { order: c.order, verdict: `${verdictWord(lang, v.kind)}${v.endpoint ? ` → ${v.endpoint}` : ''}${v.rejectWith ? ` (${v.rejectWith})` : ''}`, reason: saidText(lang, v.said, v.reason) }));
  }
  lines.push(tf(lang, 'cli.trace.leaves', { packet: why(formatHeader(r.final)) }));
  if (r.conntrack) lines.push(tf(lang, r.conntrack.existing ? 'cli.trace.conntrackExisting' : 'cli.trace.conntrack', { entry: whyPieces(lang, r.conntrack.text) }));
  if (r.reply) lines.push(tf(lang, 'cli.trace.reply', { sent: tupleText(r.reply.sent), received: tupleText(r.reply.received), reason: why(r.reply.reason) }));
  for (const n of r.notes) lines.push(tf(lang, 'cli.note', { note: why(n) }));
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
export function runTraceCommand(snapshot: NodeSnapshot, args: TraceCommandArgs, lang: Lang = 'en'): string {
  const result = withExpectation(snapshot, traceFromSnapshot(snapshot, args));
  if (args.output === 'json' || args.output === 'yaml') return toDocument('Trace', { ...showHead(snapshot), ...(traceJson(result) as object) }, args.output);
  return headText(showHead(snapshot), lang) + traceText(result, lang);
}
