/**
 * The Compare pane: for the Services of the capture, what kube-proxy's iptables mode, its
 * nftables mode and Cilium would each program (chains, rules, set/map elements, LB map
 * entries — generated, not estimated), next to what this node has; then every Service's
 * own cost, and for the selected one the chains (or LB frontends) it adds in each mode.
 * Costs are generated per Service when shown (src/analysis/compare-modes-lazy.ts); the
 * totals pass runs between keypresses.
 */
import { Box } from 'ink';
import { Text } from '../components/SafeText.js';
import React, { useEffect, useRef, useState } from 'react';
import { COMPARE_MODES, modeTotal, type CompareMode, type ServiceCost } from '../../analysis/compare-modes.js';
import type { ModeComparer } from '../../analysis/compare-modes-lazy.js';
import { Table, windowStart, type TableRow } from '../components/Table.js';
import { t, tf, type Lang, type MessageKey } from '../../text/i18n.js';
import { shownServiceLabel, type ShownService } from '../shown-service.js';
import { fitCell, type ColumnSpec } from '../../text/cells.js';
import { theme } from '../theme.js';

/**
 * Props of {@link ComparePane}. `data` null: no API objects; else the comparer, whose totals
 * pass the pane runs in slices while shown (the title says `computing…` until it ends).
 * `shown`: the Service the app shows (pinned, or under the Services cursor): its row is
 * the cursor's, its chains are listed, the title names it; a headless, ExternalName or
 * IPv6-only one gets a line saying it programs nothing; not among the rows: no row selected.
 */
export interface ComparePaneProps {
  readonly data: ModeComparer | null;
  readonly shown: ShownService | null;
  readonly width: number;
  readonly height: number;
  readonly focused: boolean;
  readonly lang: Lang;
  /** The Service rows to list (the `/` filter's; default every Service of `data`). */
  readonly services?: readonly string[] | undefined;
  /** Up to this many Services the comparison is made whole in the render (default {@link SYNC_SERVICES}). */
  readonly syncServices?: number;
}

const LABEL: Readonly<Record<CompareMode, string>> = { iptables: 'iptables', nftables: 'nftables', cilium: 'Cilium' };

function modeColumns(lang: Lang): ColumnSpec[] {
  return [
    { key: 'mode', title: t(lang, 'compare.mode'), width: 9 },
    { key: 'chains', title: t(lang, 'compare.chains'), width: 8, align: 'right' },
    { key: 'rules', title: t(lang, 'compare.rules'), width: 6, align: 'right' },
    { key: 'elements', title: t(lang, 'compare.elements'), width: 8, align: 'right' },
    { key: 'total', title: t(lang, 'compare.total'), width: 6, align: 'right' },
    { key: 'node', title: t(lang, 'compare.node'), flex: 1, minWidth: 10 },
  ];
}

function serviceColumns(lang: Lang): ColumnSpec[] {
  return [
    { key: 'service', title: t(lang, 'col.service'), flex: 1, minWidth: 12 },
    ...COMPARE_MODES.map((m): ColumnSpec => ({ key: m, title: LABEL[m], width: 9, align: 'right' })),
  ];
}

/** `KUBE-SEP-… ×3`: names grouped by their kind prefix, so a Service's chains fit one line. */
export function groupNames(names: readonly string[]): string {
  const groups = new Map<string, number>();
  for (const n of names) {
    const kind = /^(KUBE-[A-Z]+-|[a-z]+-)/.exec(n)?.[1] ?? n;
    groups.set(kind, (groups.get(kind) ?? 0) + 1);
  }
  return [...groups].map(([k, n]) => (k.endsWith('-') ? `${k}…${n > 1 ? ` ×${n}` : ''}` : k)).join(', ');
}

/**
 * One mode's "adds" line: its own chains (grouped) or frontends, then what it adds to chains
 * and sets that exist without it (a Service without endpoints adds only those).
 */
function addsText(lang: Lang, m: CompareMode, selected: ServiceCost): string {
  const own = m === 'cilium' ? selected.names[m].join(', ') : groupNames(selected.names[m]);
  const grown = selected.grown[m].join(', ');
  if (!grown) return own;
  return own ? `${own}; ${tf(lang, 'compare.grown', { list: grown })}` : tf(lang, 'compare.grown', { list: grown });
}

/** Longest slice of the totals pass between two event-loop turns (ms): keys wait at most this long. */
const SLICE_MS = 12;
/** How often the pass's progress is drawn (ms). */
const PROGRESS_EVERY_MS = 250;
/** What the render itself may spend on the costs of the visible rows (ms); the pass does the rest. */
const RENDER_PREFETCH_MS = 8;
/**
 * Up to this many Services the whole comparison is made in the render (a few ms), so the
 * first frame is complete on small nodes and in tours; above it, the pass runs in slices.
 */
const SYNC_SERVICES = 100;

/**
 * Runs `data`'s totals pass in slices off the render path while the pane is shown (the
 * visible rows' costs first), and redraws on progress. Stops when unmounted.
 */
function useTotalsPass(data: ModeComparer | null, wanted: React.MutableRefObject<readonly string[]>): void {
  const [, setTick] = useState(0);
  useEffect(() => {
    if (!data) return;
    let timer: NodeJS.Immediate | undefined;
    let drawn = performance.now();
    const run = (): void => {
      // The first rules of the process are generated here, not on the keypress (cold code: tens of ms).
      if (!data.ready) {
        if (data.warmUp()) setTick((n) => n + 1);
        timer = setImmediate(run);
        return;
      }
      const missing = wanted.current.filter((s) => data.countOf(s) === undefined);
      if (missing.length) data.prefetch(missing, performance.now() + SLICE_MS);
      const done = missing.length ? data.totals() !== null : data.advance(SLICE_MS);
      const now = performance.now();
      if (done || missing.length || now - drawn >= PROGRESS_EVERY_MS) {
        drawn = now;
        setTick((n) => n + 1);
      }
      if (!done || wanted.current.some((s) => data.countOf(s) === undefined)) timer = setImmediate(run);
    };
    timer = setImmediate(run);
    return () => {
      if (timer) clearImmediate(timer);
    };
  }, [data, wanted]);
}

const DOTS = '…';

/** The line said instead of a Service's chains when it programs nothing, or null. */
function notProgrammedLine(data: ModeComparer, service: string, lang: Lang): string | null {
  const standing = data.standingOf(service);
  if (standing === 'headless' || standing === 'externalName') return tf(lang, 'compare.notProgrammed', { service });
  if (standing === 'ipv6-only') return tf(lang, 'compare.note.ipv6-only', { service });
  return null;
}

/** Renders the pane. */
export function ComparePane({ data, services: listed, shown, width, height, focused, lang, syncServices = SYNC_SERVICES }: ComparePaneProps): React.JSX.Element {
  const wanted = useRef<readonly string[]>([]);
  useTotalsPass(data, wanted);
  if (data === null) return <Text color={theme.muted}>{fitCell(t(lang, 'compare.noApi'), width)}</Text>;
  if (data.services.length <= syncServices && data.totals() === null) data.runToEnd();
  const totals = data.totals();
  const modeRows: TableRow[] = COMPARE_MODES.map((m) => {
    const c = totals?.predicted[m];
    const actual = totals?.actual.find((a) => a.mode === m && a.family === 'ipv4');
    if (!c) return { key: m, cells: [LABEL[m], DOTS, DOTS, DOTS, DOTS, DOTS], color: 'muted' as const };
    const diff = actual ? modeTotal(actual.count) - modeTotal(c) : 0;
    const node = actual ? `${modeTotal(actual.count)} ${diff === 0 ? t(lang, 'compare.same') : tf(lang, 'compare.differs', { diff })}` : '-';
    return { key: m, cells: [LABEL[m], String(c.chains), String(c.rules), String(c.elements), String(modeTotal(c)), node], ...(actual ? { color: diff === 0 ? ('ok' as const) : ('warn' as const) } : {}) };
  });
  const services = listed ?? data.services;
  const at = shown ? (listed ? listed.indexOf(shown.service) : data.indexOf(shown.service)) : -1;
  // Before the base rules exist (the first frame after the keypress) nothing is generated: rows say `…`.
  const warm = data.ready;
  const selected = at >= 0 && shown && warm ? data.costOf(shown.service) : null;
  const waiting = at >= 0 && shown && !warm ? shown.service : null;
  const nothing = shown && at < 0 ? notProgrammedLine(data, shown.service, lang) : null;
  const units = COMPARE_MODES.map((m) => `${LABEL[m]}: ${t(lang, `compare.unit.${m}` as MessageKey)}`);
  const notes = totals?.notes.slice(0, 2) ?? [];
  // The node's IPv6 rules, beside the IPv4 comparison: never set against the IPv4 prediction.
  const v6 = (totals?.actual ?? []).filter((a) => a.family === 'ipv6').map((a) => tf(lang, 'compare.ipv6', { mode: LABEL[a.mode], total: modeTotal(a.count) }));
  const fixed = 1 + 1 + COMPARE_MODES.length + v6.length + units.length + 1 + (selected || waiting ? 1 + COMPARE_MODES.length : 0) + (nothing ? 1 : 0) + notes.length;
  // Only the visible window of the Service rows is built: at 10,000 Services the rest is never read.
  const count = 1 + services.length;
  const cursor = at >= 0 ? at + 1 : -1;
  const svcHeight = Math.max(1, Math.min(count, height - fixed - 1));
  const start = windowStart(count, cursor, svcHeight);
  const names = services.slice(Math.max(0, start - 1), start + svcHeight - 1);
  wanted.current = names;
  if (warm) data.prefetch(names, performance.now() + RENDER_PREFETCH_MS);
  const svcRows: TableRow[] = [
    ...(start === 0 ? [{ key: '(base)', cells: [`(${t(lang, 'compare.base')})`, ...COMPARE_MODES.map((m) => (warm ? String(modeTotal(data.base[m])) : DOTS))], color: 'muted' as const }] : []),
    ...names.map((service) => {
      const known = data.countOf(service);
      return { key: service, cells: [service, ...COMPARE_MODES.map((m) => (known ? String(modeTotal(known.cost[m])) : DOTS))] };
    }),
  ];
  const progress = data.progress();
  const head = totals
    ? tf(lang, 'compare.title', { services: totals.services, ports: totals.servicePorts, endpoints: totals.endpoints })
    : tf(lang, 'compare.computing', { services: data.services.length, done: progress.done, total: progress.total });
  return (
    <Box flexDirection="column">
      <Text bold>{fitCell(`${shown ? `${shownServiceLabel(lang, shown)} · ` : ''}${head}`, width)}</Text>
      <Table columns={modeColumns(lang)} rows={modeRows} cursor={-1} width={width} height={COMPARE_MODES.length} focused={false} />
      {v6.map((line) => (
        <Text key={line} color={theme.info}>
          {fitCell(line, width)}
        </Text>
      ))}
      {units.map((u) => (
        <Text key={u} color={theme.muted}>
          {fitCell(u, width)}
        </Text>
      ))}
      <Table columns={serviceColumns(lang)} rows={svcRows} cursor={cursor - start} width={width} height={svcHeight} focused={focused} />
      {selected || waiting ? (
        <Box flexDirection="column">
          <Text bold color={theme.accent}>
            {fitCell(tf(lang, 'compare.chainsOf', { service: selected?.service ?? waiting ?? '' }), width)}
          </Text>
          {COMPARE_MODES.map((m) => (
            <Text key={m}>{fitCell(`${LABEL[m]}: ${!selected ? DOTS : addsText(lang, m, selected)}`, width)}</Text>
          ))}
        </Box>
      ) : null}
      {nothing ? <Text color={theme.info}>{fitCell(nothing, width)}</Text> : null}
      {notes.map((n) => (
        <Text key={n.kind} color={theme.info}>
          {fitCell(`${t(lang, 'compare.notes')}: ${tf(lang, `compare.note.${n.kind}`, n.params)}`, width)}
        </Text>
      ))}
    </Box>
  );
}
