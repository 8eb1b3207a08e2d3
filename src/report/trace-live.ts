/**
 * `nodescope trace … --allow-trace`: the kernel's walk (`nft monitor trace`) beside
 * nodescope's walk of the same packet, marking where they differ.
 *
 * Text: the head of `show`, what was traced, then one row per event — kernel on the
 * left, nodescope on the right, `≠` in front of a row where they differ (an event one
 * side lacks shows as `-`), then the differences in words (`diffKernelEvents`,
 * `diffPacketsSeen`) and nodescope's whole walk (`traceText`).
 *
 * JSON document: the head fields of `show`, then `traced: {seconds, packets, table,
 * removed, chain, sport, endpoint, raw: [lines]}`, `rows: [{kernel, nodescope, same}]`
 * (events as `formatKernelEvent` prints them, null for a side that lacks one),
 * `differences: [text]`, `walk` (the `trace -o json` document) or null when nothing was
 * traced, `notes: [text]`.
 */
import stringWidth from 'string-width';
import type { NodeSnapshot } from '../model/snapshot.js';
import { diffKernelEvents, diffPacketsSeen, formatKernelEvent, kernelEventsOfTrace, kernelEventsOfWalk, packetsOfTrace, type KernelEvent } from '../trace/kernel-trace.js';
import { captureKernelTrace, chosenPass, liveTraceMatch, liveTraceSkip, traceTablesIn, withoutTraceTables, passFacts, type KernelTraceCapture, type KernelTraceOptions, type LiveTraceMatch, type PassFacts } from '../collect/live-trace.js';
import { parsePacketArgs } from '../trace/packet.js';
import type { TraceResult } from '../trace/types.js';
import { headText, showHead } from './header.js';
import { toDocument } from '../text/document.js';
import { traceFromSnapshot, type TraceCommandArgs } from '../trace/choose-engine.js';
import { traceJson, traceText } from './trace.js';
import { joinHostPort } from '../net/address.js';
import { t, tf, type Lang, type MessageKey } from '../text/i18n.js';

/** One row of the side-by-side view; `same` false marks a difference. */
export interface LiveTraceRow {
  readonly kernel: KernelEvent | null;
  readonly nodescope: KernelEvent | null;
  readonly same: boolean;
}

/** The comparison of one traced packet (or of none: `walk` null, `facts` null). */
export interface LiveTraceComparison {
  readonly match: LiveTraceMatch;
  readonly seconds: number;
  readonly packets: number;
  readonly removed: boolean;
  /** This run's trace table (`nodescope-trace-<run id>`). */
  readonly table: string;
  readonly facts: PassFacts | null;
  /** The kernel's lines of the compared packet, as printed. */
  readonly raw: readonly string[];
  readonly rows: readonly LiveTraceRow[];
  readonly differences: readonly string[];
  readonly walk: TraceResult | null;
  /** The notes in English (the JSON document's `notes`). */
  readonly notes: readonly string[];
  /** The same notes by key, for the text in another language. */
  readonly notesSaid: readonly LiveNote[];
}

/** A note of the comparison: its message key and values. */
export interface LiveNote {
  readonly key: MessageKey;
  readonly params: Readonly<Record<string, string | number>>;
}

const note = (key: MessageKey, params: Readonly<Record<string, string | number>>): LiveNote => ({ key, params });

function sameEvent(a: KernelEvent, b: KernelEvent): boolean {
  return diffKernelEvents([a], [b]).length === 0;
}

/** Aligns two event lists by their longest common subsequence (rows in walk order). */
export function alignEvents(kernel: readonly KernelEvent[], mine: readonly KernelEvent[]): LiveTraceRow[] {
  const n = kernel.length;
  const m = mine.length;
  const lcs: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i]![j] = sameEvent(kernel[i]!, mine[j]!) ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
    }
  }
  const rows: LiveTraceRow[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && sameEvent(kernel[i]!, mine[j]!)) rows.push({ kernel: kernel[i++]!, nodescope: mine[j++]!, same: true });
    else if (j < m && (i === n || lcs[i]![j + 1]! >= lcs[i + 1]![j]!)) rows.push({ kernel: null, nodescope: mine[j++]!, same: false });
    else rows.push({ kernel: kernel[i++]!, nodescope: null, same: false });
  }
  return rows;
}

/**
 * Walks the kernel's packet with nodescope over `snapshot` (the kernel's source port,
 * its random branch, host entry when it was traced on output) and compares. Throws
 * `UserError` as `traceFromSnapshot` does.
 */
export function compareLiveTrace(snapshot: NodeSnapshot, args: TraceCommandArgs, match: LiveTraceMatch, capture: KernelTraceCapture, seconds: number): LiveTraceComparison {
  const pass = chosenPass(capture.passes);
  const base = { match, seconds, packets: capture.passes.length, removed: capture.removed, table: capture.table };
  if (!pass) {
    const none = [note('cli.live.noPacket', { tuple: tuple(match), seconds })];
    return { ...base, facts: null, raw: [], rows: [], differences: [], walk: null, notes: none.map((n) => tf('en', n.key, n.params)), notesSaid: none };
  }
  const facts = passFacts(pass);
  const said: LiveNote[] = [];
  if (facts.tcpFlags !== null && facts.tcpFlags !== 'syn') said.push(note('cli.live.notStart', { flags: facts.tcpFlags }));
  if ((args.endpoint !== undefined || args.branch !== undefined) && facts.endpoint !== null) said.push(note('cli.live.kernelChose', { endpoint: facts.endpoint }));
  const notes = said.map((n) => tf('en', n.key, n.params));
  const from = facts.sport !== null ? joinHostPort(match.src, facts.sport) : match.src;
  const { endpoint: _e, branch: _b, ...rest } = args;
  const nft = args.nft ?? snapshot.nft?.value ?? undefined;
  const walk = traceFromSnapshot(snapshot, {
    ...rest,
    ...(nft ? { nft: withoutTraceTables(nft) } : {}),
    from,
    ...(facts.tcpFlags !== null && facts.tcpFlags !== 'syn' && /^[a-z|]+$/.test(facts.tcpFlags) ? { flags: facts.tcpFlags.split('|').join(',') } : {}),
    ...(args.entry === undefined && facts.chain === 'out' ? { entry: 'host' } : {}),
    ...(facts.endpoint !== null ? { endpoint: facts.endpoint } : {}),
  });
  // Every nodescope trace table is left out: ours, and another run's tracing the same node.
  const skip = [...new Set([...liveTraceSkip(capture.table), ...traceTablesIn(pass.events)])];
  const kernel = kernelEventsOfTrace(pass.events, skip);
  const mine = kernelEventsOfWalk(walk);
  const differences = [...diffKernelEvents(mine, kernel), ...diffPacketsSeen(walk, packetsOfTrace(pass.events, skip))];
  return { ...base, facts, raw: pass.events.map((e) => e.raw), rows: alignEvents(kernel, mine), differences, walk, notes, notesSaid: said };
}

function tuple(m: LiveTraceMatch): string {
  return `${m.src}${m.sport !== null ? `:${m.sport}` : ''} → ${m.dst}:${m.dport}/${m.proto}`;
}

function pad(text: string, width: number): string {
  return text + ' '.repeat(Math.max(0, width - stringWidth(text)));
}

/**
 * A difference (`diffKernelEvents`, `diffPacketsSeen`: English, the JSON document's) in
 * `lang`: the three shapes they write, by pattern; the events and addresses in them are data.
 */
function differenceText(d: string, lang: Lang): string {
  if (lang === 'en') return d;
  const nothing = (x: string) => (x === '(nothing)' ? t(lang, 'cli.live.nothing') : x);
  const events = /^#(\d+): nodescope (.*) \| kernel (.*)$/.exec(d);
  if (events) return tf(lang, 'cli.live.diffEvent', { n: events[1]!, mine: nothing(events[2]!), kernel: nothing(events[3]!) });
  const entered = /^kernel entered (.*); nodescope did not$/.exec(d);
  if (entered) return tf(lang, 'cli.live.diffEntered', { chain: entered[1]! });
  return d;
}

/** The comparison as text (see the module comment), in `lang` (default `en`). */
export function liveTraceText(c: LiveTraceComparison, lang: Lang = 'en'): string {
  const say = (key: MessageKey, params: Readonly<Record<string, string | number>> = {}) => tf(lang, key, params);
  const lines: string[] = [];
  const removed = c.removed ? say('cli.live.removed') : say('cli.live.notRemoved', { table: c.table });
  lines.push(say(c.packets === 1 ? 'cli.live.head' : 'cli.live.headMany', { tuple: tuple(c.match), packets: c.packets, seconds: c.seconds, table: c.table, removed }));
  if (c.facts) {
    const what = say(c.facts.tcpFlags === null || c.facts.tcpFlags === 'syn' ? 'cli.live.connectionStart' : 'cli.live.packet');
    const where = say(c.facts.chain === 'out' ? 'cli.live.sent' : 'cli.live.arriving');
    lines.push(say('cli.live.compared', { what, sport: c.facts.sport ?? '?', where, chose: c.facts.endpoint ? say('cli.live.chose', { endpoint: c.facts.endpoint }) : '' }));
  }
  if (c.rows.length) {
    const left = c.rows.map((r) => (r.kernel ? formatKernelEvent(r.kernel) : '-'));
    const kernelHead = say('cli.live.kernelColumn');
    const width = Math.min(70, Math.max(stringWidth(kernelHead), ...left.map((l) => stringWidth(l))));
    lines.push('');
    lines.push(`    ${pad(kernelHead, width)} | ${say('cli.live.nodescopeColumn')}`);
    c.rows.forEach((r, i) => {
      lines.push(`${r.same ? ' ' : '≠'}${String(i + 1).padStart(3)} ${pad(left[i]!, width)} | ${r.nodescope ? formatKernelEvent(r.nodescope) : '-'}`);
    });
  }
  lines.push('');
  if (c.walk) lines.push(c.differences.length === 0 ? say('cli.live.same') : say('cli.live.differences', { n: c.differences.length }));
  for (const d of c.differences) lines.push(`  ${differenceText(d, lang)}`);
  for (const n of c.notesSaid) lines.push(say('cli.live.note', { note: tf(lang, n.key, n.params) }));
  if (c.raw.length) {
    lines.push('', say('cli.live.raw'), ...c.raw.map((r) => `  ${r}`));
  }
  let out = `${lines.join('\n')}\n`;
  if (c.walk) out += `\n${say('cli.live.walk')}\n${traceText(c.walk, lang)}`;
  return out;
}

/** The comparison as the JSON value described in the module comment (without the head). */
export function liveTraceJson(c: LiveTraceComparison): unknown {
  return {
    traced: { seconds: c.seconds, packets: c.packets, table: `inet ${c.table}`, removed: c.removed, chain: c.facts?.chain ?? null, sport: c.facts?.sport ?? null, endpoint: c.facts?.endpoint ?? null, raw: c.raw },
    rows: c.rows.map((r) => ({ kernel: r.kernel ? formatKernelEvent(r.kernel) : null, nodescope: r.nodescope ? formatKernelEvent(r.nodescope) : null, same: r.same })),
    differences: c.differences,
    walk: c.walk ? traceJson(c.walk) : null,
    notes: c.notes,
  };
}

/** The whole `trace --allow-trace` document for `snapshot` (`output` default text). */
export function liveTraceDocument(snapshot: NodeSnapshot, c: LiveTraceComparison, output: 'text' | 'json' | 'yaml' = 'text', lang: Lang = 'en'): string {
  if (output === 'json' || output === 'yaml') return toDocument('LiveTrace', { ...showHead(snapshot), ...(liveTraceJson(c) as object) }, output);
  return headText(showHead(snapshot), lang) + liveTraceText(c, lang);
}

/** Inputs of {@link runLiveTraceCommand}; `seconds` is the monitor's bound. */
export interface LiveTraceCommand {
  /** The node's transport (what the session runs probes through). */
  readonly transport: KernelTraceOptions['transport'];
  readonly snapshot: NodeSnapshot;
  readonly args: TraceCommandArgs;
  readonly allowTrace: boolean;
  readonly seconds: number;
  readonly onListening?: () => void | Promise<void>;
  /** Lines about other runs' trace tables found on the node (see `captureKernelTrace`). */
  readonly onNotice?: (message: string) => void;
  readonly settleMs?: number;
  /** The text's language (default `en`). */
  readonly lang?: Lang;
}

/**
 * `nodescope trace --allow-trace`: validates the packet (before anything is written),
 * traces it in the kernel through `transport`, compares, returns the document. Throws
 * `UserError` without `allowTrace`, on a replay source, and for bad packet words.
 */
export async function runLiveTraceCommand(cmd: LiveTraceCommand): Promise<string> {
  const spec = parsePacketArgs(cmd.args);
  const sportGiven = cmd.args.from !== undefined && /:[0-9]+$/.test(cmd.args.from.trim()) && !/^[^[]*:.*:/.test(cmd.args.from.trim());
  const match = liveTraceMatch(spec, sportGiven);
  const capture = await captureKernelTrace({
    transport: cmd.transport,
    match,
    allowTrace: cmd.allowTrace,
    seconds: cmd.seconds,
    ...(cmd.onListening ? { onListening: cmd.onListening } : {}),
    ...(cmd.onNotice ? { onNotice: cmd.onNotice } : {}),
    ...(cmd.settleMs !== undefined ? { settleMs: cmd.settleMs } : {}),
  });
  return liveTraceDocument(cmd.snapshot, compareLiveTrace(cmd.snapshot, cmd.args, match, capture, cmd.seconds), cmd.args.output ?? 'text', cmd.lang ?? 'en');
}
