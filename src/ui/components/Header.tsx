/** The two header lines: node, source and freshness, detected mode with evidence; then the pane tabs. */
import { Box, Text } from 'ink';
import React from 'react';
import { t, tf, type Lang } from '../i18n.js';
import { PANES, type PaneId } from '../state.js';
import { cellWidth, fitCell, humanAge } from '../text.js';
import { theme } from '../theme.js';

/** Props of {@link Header}. `ageSeconds`: age of the shown data; null for a replay. */
export interface HeaderProps {
  readonly node: string;
  readonly live: boolean;
  readonly sourceLabel: string;
  readonly capturedAt: string | null;
  readonly mode: string;
  readonly evidence: string;
  readonly ageSeconds: number | null;
  readonly error: string | null;
  readonly refreshing: boolean;
  readonly pane: PaneId;
  readonly width: number;
  readonly lang: Lang;
}

const PANE_KEYS: Record<PaneId, Parameters<typeof t>[1]> = {
  services: 'pane.services',
  rules: 'pane.rules',
  lb: 'pane.lb',
  conntrack: 'pane.conntrack',
  dns: 'pane.dns',
  step: 'pane.step',
  compare: 'pane.compare',
};

/**
 * The pane tabs as they fit in `width` cells: every label when they fit, else the
 * numbers with only the current pane named (Japanese labels are twice as wide).
 */
export function paneTabs(current: PaneId, width: number, lang: Lang): { id: PaneId; label: string }[] {
  const full = PANES.map((id, i) => ({ id, label: ` ${i + 1} ${t(lang, PANE_KEYS[id])} ` }));
  if (cellWidth(full.map((f) => f.label).join('')) <= width) return full;
  return PANES.map((id, i) => ({ id, label: id === current ? full[i]!.label : ` ${i + 1} ` }));
}

/** Renders the header. */
export function Header(p: HeaderProps): React.JSX.Element {
  const source = p.live ? `${t(p.lang, 'header.live')} ${p.sourceLabel}` : `${t(p.lang, 'header.replay')} ${p.capturedAt ? tf(p.lang, 'header.capturedAt', { time: p.capturedAt.replace('T', ' ').replace(/\.\d+Z$/, 'Z') }) : ''}`;
  let freshness = '';
  if (p.error) freshness = tf(p.lang, 'header.stale', { age: humanAge(p.ageSeconds ?? 0), reason: p.error });
  else if (p.refreshing) freshness = t(p.lang, 'header.refreshing');
  else if (p.live && p.ageSeconds !== null) freshness = tf(p.lang, 'header.age', { age: humanAge(p.ageSeconds) });
  const line1 = `nodescope │ ${t(p.lang, 'header.node')} ${p.node} │ ${source}${freshness ? ' │ ' + freshness : ''}`;
  const line2 = `${t(p.lang, 'header.mode')}: ${p.mode} — ${p.evidence}`;
  return (
    <Box flexDirection="column">
      <Text color={p.error ? theme.warn : theme.accent} bold>
        {fitCell(line1, p.width)}
      </Text>
      <Text color={theme.muted}>{fitCell(line2, p.width)}</Text>
      <Text>
        {paneTabs(p.pane, p.width, p.lang).map(({ id, label }) => (
          <Text key={id} inverse={id === p.pane} bold={id === p.pane} color={id === p.pane ? theme.accent : undefined}>
            {label}
          </Text>
        ))}
      </Text>
    </Box>
  );
}
