/** The two header lines: node, source and freshness, detected mode with evidence; then the pane tabs. */
import { Box, Text } from 'ink';
import React from 'react';
import { t, tf, type Lang } from '../i18n.js';
import { PANES, type PaneId } from '../state.js';
import { fitCell, humanAge } from '../text.js';
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
};

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
        {PANES.map((id, i) => {
          const label = ` ${i + 1} ${t(p.lang, PANE_KEYS[id])} `;
          return (
            <Text key={id} inverse={id === p.pane} bold={id === p.pane} color={id === p.pane ? theme.accent : undefined}>
              {label}
            </Text>
          );
        })}
      </Text>
    </Box>
  );
}
