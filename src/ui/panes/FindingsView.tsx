/**
 * The findings of one Service's diagnosis (issue 17), shown in the Services pane after `d`:
 * a title with the verdict, then one row per finding (severity, layer, frontend, message) and,
 * under the table, the proving row of the finding under the cursor. Enter opens that row.
 */
import { findingMessage } from '../../analysis/diagnose/say.js';
import { Box } from 'ink';
import { Text } from '../components/SafeText.js';
import React from 'react';
import type { ServiceDiagnosis } from '../../analysis/diagnose/index.js';
import { DIAGNOSE_LAYERS } from '../../analysis/diagnose/types.js';
import { Table, windowStart, type TableRow } from '../components/Table.js';
import { t, tf, type Lang, type MessageKey } from '../../text/i18n.js';
import { cellWidth, fitCell, type ColumnSpec } from '../../text/cells.js';
import { theme } from '../theme.js';
import { wrapCellsAtMost } from '../../tour/wrap.js';

/** Props: `service` null while the diagnosis is not made yet. */
export interface FindingsViewProps {
  readonly service: ServiceDiagnosis | null;
  readonly cursor: number;
  readonly width: number;
  readonly height: number;
  readonly lang: Lang;
}

const SEVERITIES = ['info', 'unknown', 'degraded', 'broken'] as const;

function columns(lang: Lang): ColumnSpec[] {
  return [
    // As wide as the widest word in `lang` (エンドポイント is 14 cells), never cut.
    { key: 'sev', title: t(lang, 'col.severity'), width: Math.max(9, ...SEVERITIES.map((v) => cellWidth(t(lang, `cli.verdict.${v}`)))) },
    { key: 'layer', title: t(lang, 'col.layer'), width: Math.max(10, ...DIAGNOSE_LAYERS.map((l) => cellWidth(t(lang, `findings.layer.${l}`)))) },
    { key: 'fe', title: t(lang, 'col.frontend'), width: 20 },
    { key: 'msg', title: t(lang, 'col.finding'), flex: 1, minWidth: 10 },
  ];
}

const COLOR = { broken: 'error', degraded: 'warn', unknown: 'warn', info: undefined } as const;

/** The verdict word in `lang`. */
export function verdictText(lang: Lang, verdict: string): string {
  return t(lang, `verdict.${verdict}` as MessageKey);
}

/** Renders the findings. */
export function FindingsView({ service, cursor, width, height, lang }: FindingsViewProps): React.JSX.Element {
  if (!service) return <Text color={theme.muted}>{fitCell(t(lang, 'findings.notYet'), width)}</Text>;
  const findings = service.findings;
  const tableHeight = Math.max(1, height - 7);
  const start = windowStart(findings.length, cursor, tableHeight);
  const rows: TableRow[] = findings.slice(start, start + tableHeight).map((f, i) => ({
    key: `${start + i}`,
    cells: [t(lang, `cli.verdict.${f.severity}`), t(lang, `findings.layer.${f.layer}`), f.frontend ?? '', findingMessage(f, lang)],
    ...(COLOR[f.severity] ? { color: COLOR[f.severity] } : {}),
  }));
  const at = findings[cursor];
  const proof = at?.evidence[0];
  const title = tf(lang, 'findings.title', { service: `${service.namespace}/${service.name}`, verdict: verdictText(lang, service.verdict), count: String(findings.length) });
  return (
    <Box flexDirection="column">
      <Text bold color={service.verdict === 'broken' ? theme.error : service.verdict === 'ok' ? theme.accent : theme.warn}>{fitCell(title, width)}</Text>
      {findings.length === 0 ? (
        <Text color={theme.muted}>{fitCell(t(lang, 'findings.none'), width)}</Text>
      ) : (
        <Table columns={columns(lang)} rows={rows} cursor={cursor - start} width={width} height={tableHeight} focused />
      )}
      {(at ? wrapCellsAtMost(findingMessage(at, lang), width, 3) : []).map((line, i) => (
        <Text key={`m${i}`}>{fitCell(line, width)}</Text>
      ))}
      <Text color={theme.muted}>{fitCell(proof ? `${proof.pane} ${proof.ref}${proof.text ? ` — ${proof.text}` : ''}` : '', width)}</Text>
    </Box>
  );
}
