/**
 * The Step pane: one packet walked through the node's hooks. On top the packet and the
 * verdict; then every step (hook, table/chain and rule number, ✓/✗, verdict, why) with
 * the current step highlighted (`cursor` is the step index; the app moves it with n/p);
 * below, the current step in full: the rule's text, why it matched or not (wrapped over
 * the lines the step table can spare, so a long reason reads whole), the packet
 * header as it is at that step, the rule's counters, and the branches of a random choice
 * with their probabilities. The last step adds the conntrack entry and the reply's way back.
 */
import { Box } from 'ink';
import { Text } from '../components/SafeText.js';
import React from 'react';
import { branchLines, formatHeader, stepHook, stepMark, stepNumber, tupleText } from '../../trace/describe.js';
import type { StepNoPacketReason } from '../../analysis/step-defaults.js';
import type { TraceResult, TraceStep, VerdictKind } from '../../trace/types.js';
import { wrapCells } from '../../tour/wrap.js';
import { Table, type TableRow } from '../components/Table.js';
import { t, tf, type Lang, type MessageKey } from '../../text/i18n.js';
import { saidText, whyPieces, whyText } from '../../text/why.js';
import { cellWidth, fitCell, humanBytes, humanCount, layoutColumns, type ColumnSpec } from '../../text/cells.js';
import { theme, type ColorToken } from '../theme.js';

/** What the pane shows: nothing walked yet, a walk that could not start (why), or a walk. */
export type StepPaneData =
  | { readonly kind: 'none' }
  /** The snapshot's dataplane parts are still being parsed (staged load); `text` says so. */
  | { readonly kind: 'loading'; readonly text: string }
  | { readonly kind: 'failed'; readonly reason: string }
  /** `t` on Service `service` (`ns/name`) made no packet: `reason` says why (headless, no API objects, …). */
  | { readonly kind: 'noPacket'; readonly service: string; readonly reason: StepNoPacketReason }
  | { readonly kind: 'result'; readonly result: TraceResult };

/** Props of {@link StepPane}. `cursor`: index of the current step; `height`: lines available. */
export interface StepPaneProps {
  readonly data: StepPaneData;
  readonly width: number;
  readonly height: number;
  readonly focused: boolean;
  readonly cursor: number;
  readonly lang: Lang;
}

const VERDICT_COLOR: Readonly<Record<VerdictKind, ColorToken>> = {
  local: 'ok',
  forwarded: 'ok',
  sent: 'ok',
  dropped: 'error',
  rejected: 'error',
  unsupported: 'warn',
  unknown: 'warn',
  ambiguous: 'warn',
};

/** Cells of the HOOK column: `prerouting`, `tc ingress`; wider only for a walk with a longer hook (`getpeername4`). */
const HOOK_WIDTH = 11;

/**
 * The step table's columns. No WHY column: a reason cut to a column's width misleads; the
 * current step's why is below the table, whole (wrapped), with its whole rule text.
 * `hookWidth`: the HOOK column's cells, so every hook of the walk shows whole.
 */
function columns(lang: Lang, hookWidth: number = HOOK_WIDTH): ColumnSpec[] {
  return [
    { key: 'num', title: t(lang, 'col.num'), width: 3, align: 'right' },
    { key: 'hook', title: t(lang, 'col.hook'), width: hookWidth },
    { key: 'where', title: t(lang, 'col.where'), flex: 3, minWidth: 12, elide: 'middle' },
    { key: 'mark', title: '', width: 1 },
    { key: 'verdict', title: t(lang, 'col.verdict'), flex: 2, minWidth: 8 },
  ];
}

/** `table/chain #n`, cut in the chain name so the rule number always shows in `width` cells. */
function where(s: TraceStep, width: number, lang: Lang): string {
  if (s.table === null || s.chain === null) return t(lang, `step.kind.${s.kind}`);
  const base = `${s.backend === 'nft' ? `${s.family} ` : ''}${s.xtables ? `${s.xtables} ` : ''}${s.table}/${s.chain}`;
  const suffix = s.ruleIndex !== null ? ` #${s.ruleIndex}` : '';
  if (cellWidth(base + suffix) <= width) return base + suffix;
  return fitCell(base, Math.max(1, width - suffix.length)).trimEnd() + suffix;
}

function rowColor(s: TraceStep): ColorToken | undefined {
  if (s.kind === 'unsupported') return 'warn';
  if (s.kind === 'nat') return 'nat';
  if (s.kind === 'final') return s.verdict === 'dropped' || s.verdict === 'rejected' ? 'error' : 'ok';
  if (s.verdict === 'drop' || s.verdict === 'reject') return 'error';
  if (s.matched && s.verdict && /^(jump|goto) /.test(s.verdict)) return 'jump';
  return undefined;
}

/** One step's row; numbered from 1, as `nodescope trace` prints it, the footer (`step n of total`) and the branch lines count. */
function stepRow(s: TraceStep, whereWidth: number, lang: Lang): TableRow {
  const cells = [String(stepNumber(s)), stepHook(s), where(s, whereWidth, lang), stepMark(s), s.kind === 'final' ? '' : whyText(lang, s.verdict ?? '')];
  const color = rowColor(s);
  return { key: String(s.index), cells, ...(color ? { color } : {}), ...(s.matched === false ? { dim: true } : {}) };
}

/** One detail line: label, text, colour; `wrap`: the text may take several lines (the why). */
interface DetailLine {
  readonly label: string;
  readonly text: string;
  readonly color?: ColorToken;
  readonly wrap?: boolean;
}

/** The detail lines for the current step, fitted (and the why wrapped) by the caller. */
function detailLines(r: TraceResult, s: TraceStep, lang: Lang): DetailLine[] {
  const out: DetailLine[] = [];
  if (s.ruleText !== null) out.push({ label: t(lang, s.backend === 'ebpf' ? 'step.mapEntry' : 'step.rule'), text: whyPieces(lang, `${s.ruleText}${s.handle !== null ? `  (handle ${s.handle})` : ''}`), wrap: true });
  out.push({ label: t(lang, 'step.why'), text: saidText(lang, s.said, s.reason), wrap: true, ...(s.kind === 'unsupported' ? { color: 'warn' as const } : {}) });
  out.push({ label: t(lang, 'step.here'), text: whyText(lang, formatHeader(s.header)) });
  if (s.counters) out.push({ label: t(lang, 'step.counters'), text: tf(lang, 'step.countersText', { packets: humanCount(s.counters.packets), bytes: humanBytes(s.counters.bytes) }) });
  if (s.branches) for (const [i, line] of branchLines(s.branches).entries()) out.push({ label: i === 0 ? t(lang, 'step.branches') : '', text: line, color: 'accent' });
  if (s.kind === 'final') {
    out.push({ label: t(lang, 'step.leaves'), text: whyText(lang, formatHeader(r.final)) });
    if (r.conntrack) out.push({ label: t(lang, 'step.conntrack'), text: r.conntrack.text });
    if (r.reply) out.push({ label: t(lang, 'step.reply'), text: whyText(lang, `${tupleText(r.reply.sent)} ⇒ ${tupleText(r.reply.received)}`) });
    // What the API expects for this Service on this node (src/trace/with-expectation.ts).
    for (const n of r.notes.filter((x) => x.startsWith('the API expects') || x.startsWith('the walk reached'))) {
      out.push({ label: t(lang, 'step.expected'), text: whyText(lang, n), wrap: true, ...(n.startsWith('the walk reached') ? { color: 'warn' as const } : {}) });
    }
  }
  return out;
}

/** Width of the detail labels (`why`, `packet`, …), cells. */
const LABEL_WIDTH = 11;
/** Step rows the table keeps when a long why takes more lines: the current step and its neighbours. */
const MIN_TABLE_ROWS = 5;

/**
 * The detail lines as rendered: the rule and the why wrapped at word boundaries over as
 * many lines as `spare` allows beyond their first, in order (the rule first: it is what
 * Enter opens); the last one kept is cut with `…` when more remain.
 */
export function layoutDetails(details: readonly DetailLine[], width: number, spare: number): DetailLine[] {
  const textWidth = Math.max(2, width - LABEL_WIDTH);
  const out: DetailLine[] = [];
  let left = Math.max(0, spare);
  for (const d of details) {
    if (!d.wrap) {
      out.push(d);
      continue;
    }
    const all = wrapCells(d.text, textWidth);
    const kept = all.slice(0, 1 + left);
    left -= kept.length - 1;
    if (kept.length < all.length) kept[kept.length - 1] = fitCell(`${kept[kept.length - 1]} ${all.slice(kept.length).join(' ')}`, textWidth);
    kept.forEach((text, i) => out.push({ label: i === 0 ? d.label : '', text, ...(d.color ? { color: d.color } : {}) }));
  }
  return out;
}

function Line({ label, text, color, width }: { label: string; text: string; color?: ColorToken | undefined; width: number }): React.JSX.Element {
  const labelWidth = LABEL_WIDTH;
  return (
    <Text>
      <Text color={theme.muted}>{fitCell(label, labelWidth)}</Text>
      <Text color={color ? theme[color] : undefined}>{fitCell(text, Math.max(1, width - labelWidth))}</Text>
    </Text>
  );
}

/** The last line: which step of how many, and every key of the walk (the count shortened to `n/total` when both would not fit). */
function keysLine(lang: Lang, n: number, total: number, width: number): string {
  const keys = t(lang, 'step.keysAll');
  const long = `${tf(lang, 'step.count', { n, total })}  ${keys}`;
  return cellWidth(long) <= width ? long : `${n}/${total}  ${keys}`;
}

/** Lines of text wrapped to the pane's width (a message is read whole, not cut at the edge), the first in `first`'s colour. */
function Message({ lines, width, color, first = color }: { readonly lines: readonly string[]; readonly width: number; readonly color: string; readonly first?: string }): React.JSX.Element {
  return (
    <Box flexDirection="column">
      {lines.flatMap((l, i) =>
        wrapCells(l, width).map((w, j) => (
          <Text key={`${i}.${j}`} color={i === 0 ? first : color}>
            {w}
          </Text>
        )),
      )}
    </Box>
  );
}

/** Renders the pane. */
export function StepPane({ data, width, height, focused, cursor, lang }: StepPaneProps): React.JSX.Element {
  if (data.kind === 'none') return <Message lines={[t(lang, 'step.none')]} width={width} color={theme.muted} />;
  if (data.kind === 'loading') return <Text color={theme.muted}>{fitCell(data.text, width)}</Text>;
  if (data.kind === 'noPacket') {
    const lines = [tf(lang, 'step.noPacket', { service: data.service }), t(lang, `step.noPacket.${data.reason}`), t(lang, 'step.noPacket.hint')];
    return <Message lines={lines} width={width} color={theme.muted} first={theme.warn} />;
  }
  if (data.kind === 'failed') return <Message lines={[tf(lang, 'step.failed', { reason: data.reason })]} width={width} color={theme.error} />;
  const r = data.result;
  const steps = r.steps;
  const at = Math.min(Math.max(0, cursor), steps.length - 1);
  const current = steps[at]!;
  const verdictWord = t(lang, `step.verdict.${r.verdict.kind}` as MessageKey) + (r.verdict.rejectWith ? ` (${r.verdict.rejectWith})` : '');
  const endpoint = r.verdict.endpoint ? ` → ${r.verdict.endpoint}` : '';
  const via = r.verdict.oif ? ` (${r.verdict.oif}${r.verdict.nexthop && r.verdict.nexthop !== r.final.dst ? tf(lang, 'step.via', { nexthop: r.verdict.nexthop }) : ''})` : '';
  const headLines = 2;
  const footer = 1;
  const base = detailLines(r, current, lang);
  // The why gets the lines the table can spare while it still shows the current step and its neighbours.
  const spare = height - headLines - 1 - base.length - footer - Math.min(steps.length, MIN_TABLE_ROWS);
  const details = layoutDetails(base, width, spare);
  const tableHeight = Math.max(1, height - headLines - 1 - details.length - footer);
  const cols = columns(lang, Math.max(HOOK_WIDTH, ...steps.map((s) => cellWidth(stepHook(s)))));
  const whereWidth = layoutColumns(cols, width)[cols.findIndex((c) => c.key === 'where')]!;
  const rows = steps.map((s) => stepRow(s, whereWidth, lang));
  return (
    <Box flexDirection="column">
      <Text bold>{fitCell(`${whyText(lang, formatHeader(r.request.packet))}  ·  ${tf(lang, 'step.entry', { entry: t(lang, `step.entry.${r.request.entry}`) })}${r.request.packet.iif ? ` (${r.request.packet.iif})` : ''}`, width)}</Text>
      <Text color={theme[VERDICT_COLOR[r.verdict.kind]]}>{fitCell(`${verdictWord}${endpoint}${via}: ${saidText(lang, r.verdict.said, r.verdict.reason)}`, width)}</Text>
      <Table columns={cols} rows={rows} cursor={at} width={width} height={tableHeight} focused={focused} />
      {details.map((d, i) => (
        <Line key={i} label={d.label} text={d.text} color={d.color} width={width} />
      ))}
      <Text color={theme.muted}>{fitCell(keysLine(lang, stepNumber(current), steps.length, width), width)}</Text>
    </Box>
  );
}
