/**
 * What a parser could not read, shown inside the pane that needed it: the count,
 * then the first diagnostics with their line number and the offending text.
 */
import { Box } from 'ink';
import { Text } from './SafeText.js';
import React from 'react';
import { formatDiagnostic, type Diagnostic } from '../../model/diagnostics.js';
import { tf, type Lang } from '../../text/i18n.js';
import { fitCell } from '../../text/cells.js';
import { theme } from '../theme.js';

/** Props of {@link Diagnostics}: `max` lines at most (default 2). Info-level ones are left out. */
export interface DiagnosticsProps {
  readonly diagnostics: readonly Diagnostic[];
  readonly width: number;
  readonly lang: Lang;
  readonly max?: number;
}

/** Diagnostics worth a reader's attention: warnings and errors. */
export function visibleDiagnostics(diagnostics: readonly Diagnostic[]): Diagnostic[] {
  return diagnostics.filter((d) => d.severity !== 'info');
}

/** Renders nothing when there is nothing to say. */
export function Diagnostics({ diagnostics, width, lang, max = 2 }: DiagnosticsProps): React.JSX.Element | null {
  const shown = visibleDiagnostics(diagnostics);
  if (shown.length === 0) return null;
  return (
    <Box flexDirection="column">
      <Text color={theme.warn}>{fitCell(`⚠ ${tf(lang, 'status.diagnostics', { count: shown.length })}`, width)}</Text>
      {shown.slice(0, max).map((d, i) => (
        <Text key={i} color={d.severity === 'error' ? theme.error : theme.warn}>
          {fitCell('  ' + formatDiagnostic(d), width)}
        </Text>
      ))}
    </Box>
  );
}

/** How many lines {@link Diagnostics} takes for these diagnostics. */
export function diagnosticsHeight(diagnostics: readonly Diagnostic[], max = 2): number {
  const n = visibleDiagnostics(diagnostics).length;
  return n === 0 ? 0 : 1 + Math.min(n, max);
}
