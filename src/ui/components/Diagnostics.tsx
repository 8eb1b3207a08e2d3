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

/**
 * Props of {@link Diagnostics}: `max` lines at most (default 2). Info-level ones are left out.
 * `unreadChains` > 0: `diagnostics` is what is known so far (an iptables ruleset parsed on first
 * read, src/model/iptables-facts.ts `rulesetReadState`): the count says "so far" and a line
 * says how many chains' rule diagnostics are not read yet.
 */
export interface DiagnosticsProps {
  readonly diagnostics: readonly Diagnostic[];
  readonly width: number;
  readonly lang: Lang;
  readonly max?: number;
  readonly unreadChains?: number;
}

/** Diagnostics worth a reader's attention: warnings and errors. */
export function visibleDiagnostics(diagnostics: readonly Diagnostic[]): Diagnostic[] {
  return diagnostics.filter((d) => d.severity !== 'info');
}

/** Renders nothing when there is nothing to say. */
export function Diagnostics({ diagnostics, width, lang, max = 2, unreadChains = 0 }: DiagnosticsProps): React.JSX.Element | null {
  const shown = visibleDiagnostics(diagnostics);
  if (shown.length === 0 && unreadChains === 0) return null;
  return (
    <Box flexDirection="column">
      {unreadChains > 0 ? <Text color={theme.muted}>{fitCell(tf(lang, 'rules.unreadChains', { chains: unreadChains }), width)}</Text> : null}
      {shown.length > 0 ? (
        <Text color={theme.warn}>{fitCell(`⚠ ${tf(lang, unreadChains > 0 ? 'status.diagnosticsSoFar' : 'status.diagnostics', { count: shown.length })}`, width)}</Text>
      ) : null}
      {shown.slice(0, max).map((d, i) => (
        <Text key={i} color={d.severity === 'error' ? theme.error : theme.warn}>
          {fitCell('  ' + formatDiagnostic(d), width)}
        </Text>
      ))}
    </Box>
  );
}

/** How many lines {@link Diagnostics} takes for these diagnostics. */
export function diagnosticsHeight(diagnostics: readonly Diagnostic[], max = 2, unreadChains = 0): number {
  const n = visibleDiagnostics(diagnostics).length;
  return (unreadChains > 0 ? 1 : 0) + (n === 0 ? 0 : 1 + Math.min(n, max));
}
