/**
 * The Compare pane: for the Services of the capture, what kube-proxy's iptables mode, its
 * nftables mode and Cilium would each program (chains, rules, set/map elements, LB map
 * entries — generated, not estimated), next to what this node has; then every Service's
 * own cost, and for the selected one the chains (or LB frontends) it adds in each mode.
 */
import { Box, Text } from 'ink';
import React from 'react';
import { COMPARE_MODES, modeTotal, type CompareMode, type ModeComparison } from '../../analysis/compare-modes.js';
import { Table, type TableRow } from '../components/Table.js';
import { t, tf, type Lang, type MessageKey } from '../i18n.js';
import { shownServiceLabel, type ShownService } from '../shown-service.js';
import { fitCell, type ColumnSpec } from '../text.js';
import { theme } from '../theme.js';

/**
 * Props of {@link ComparePane}. `data` null: no API objects. `shown`: the Service the app
 * shows (pinned, or under the Services cursor): its row is the cursor's, its chains are
 * listed, the title names it; null or not among the rows: no row selected.
 */
export interface ComparePaneProps {
  readonly data: ModeComparison | null;
  readonly shown: ShownService | null;
  readonly width: number;
  readonly height: number;
  readonly focused: boolean;
  readonly lang: Lang;
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

/** Renders the pane. */
export function ComparePane({ data, shown, width, height, focused, lang }: ComparePaneProps): React.JSX.Element {
  if (data === null) return <Text color={theme.muted}>{fitCell(t(lang, 'compare.noApi'), width)}</Text>;
  const modeRows: TableRow[] = COMPARE_MODES.map((m) => {
    const c = data.predicted[m];
    const actual = data.actual.find((a) => a.mode === m);
    const diff = actual ? modeTotal(actual.count) - modeTotal(c) : 0;
    const node = actual ? `${modeTotal(actual.count)} ${diff === 0 ? t(lang, 'compare.same') : tf(lang, 'compare.differs', { diff })}` : '-';
    return { key: m, cells: [LABEL[m], String(c.chains), String(c.rules), String(c.elements), String(modeTotal(c)), node], ...(actual ? { color: diff === 0 ? ('ok' as const) : ('warn' as const) } : {}) };
  });
  const svcRows: TableRow[] = [
    { key: '(base)', cells: [`(${t(lang, 'compare.base')})`, ...COMPARE_MODES.map((m) => String(modeTotal(data.base[m])))], color: 'muted' },
    ...data.perService.map((p) => ({ key: p.service, cells: [p.service, ...COMPARE_MODES.map((m) => String(modeTotal(p.cost[m])))] })),
  ];
  const at = shown ? data.perService.findIndex((p) => p.service === shown.service) : -1;
  const selected = data.perService[at];
  const units = COMPARE_MODES.map((m) => `${LABEL[m]}: ${t(lang, `compare.unit.${m}` as MessageKey)}`);
  const notes = data.notes.slice(0, 2);
  const fixed = 1 + 1 + COMPARE_MODES.length + units.length + 1 + (selected ? 1 + COMPARE_MODES.length : 0) + notes.length;
  const svcHeight = Math.max(1, Math.min(svcRows.length, height - fixed - 1));
  return (
    <Box flexDirection="column">
      <Text bold>{fitCell(`${shown ? `${shownServiceLabel(lang, shown)} · ` : ''}${tf(lang, 'compare.title', { services: data.services, ports: data.servicePorts, endpoints: data.endpoints })}`, width)}</Text>
      <Table columns={modeColumns(lang)} rows={modeRows} cursor={-1} width={width} height={COMPARE_MODES.length} focused={false} />
      {units.map((u) => (
        <Text key={u} color={theme.muted}>
          {fitCell(u, width)}
        </Text>
      ))}
      <Table columns={serviceColumns(lang)} rows={svcRows} cursor={selected ? at + 1 : -1} width={width} height={svcHeight} focused={focused} />
      {selected ? (
        <Box flexDirection="column">
          <Text bold color={theme.accent}>
            {fitCell(tf(lang, 'compare.chainsOf', { service: selected.service }), width)}
          </Text>
          {COMPARE_MODES.map((m) => (
            <Text key={m}>{fitCell(`${LABEL[m]}: ${m === 'cilium' ? selected.names[m].join(', ') : groupNames(selected.names[m])}`, width)}</Text>
          ))}
        </Box>
      ) : null}
      {notes.map((n) => (
        <Text key={n.kind} color={theme.info}>
          {fitCell(`${t(lang, 'compare.notes')}: ${tf(lang, `compare.note.${n.kind}`, n.params)}`, width)}
        </Text>
      ))}
    </Box>
  );
}
