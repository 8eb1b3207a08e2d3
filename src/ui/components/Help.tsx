/** The `?` overlay listing every key, generated from the key bindings (src/ui/key-bindings.ts). */
import { Box } from 'ink';
import { Text } from './SafeText.js';
import React from 'react';
import { t, tf, type Lang } from '../../text/i18n.js';
import { helpRows } from '../key-bindings.js';
import { theme } from '../theme.js';

/** One probe under `?`: its wall and node CPU time (ms; CPU unknown over SSH), or why the probe plan skipped it. */
export interface HelpProbeRow {
  readonly id: string;
  readonly status: string;
  readonly durationMs: number;
  readonly cpuMs?: number;
  readonly skipped?: string;
}

/** Milliseconds rounded, for the probe rows. */
const ms = (n: number): string => String(Math.round(n));

const PROBE_STATUS = { ok: 'help.status.ok', failed: 'help.status.failed', missing: 'help.status.missing', timeout: 'help.status.timeout' } as const;

/** A probe's status (src/sources/probe-runner.ts `ProbeStatus`) in `lang`; an unknown word as it is. */
function probeStatus(lang: Lang, status: string): string {
  return status in PROBE_STATUS ? t(lang, PROBE_STATUS[status as keyof typeof PROBE_STATUS]) : status;
}

/** The probe rows of `?` from a snapshot's probe summaries and skipped probes (heavy ones first are not reordered: catalog order). */
export function helpProbeRows(probes: readonly { id: string; status: string; durationMs: number; cpuMs?: number }[], skipped: readonly { id: string; reason: string }[] = []): HelpProbeRow[] {
  return [...probes.map((p) => ({ id: p.id, status: p.status, durationMs: p.durationMs, ...(p.cpuMs !== undefined ? { cpuMs: p.cpuMs } : {}) })), ...skipped.map((s) => ({ id: s.id, status: 'skipped', durationMs: 0, skipped: s.reason }))];
}

/**
 * Renders the help box; `apiError` (`SessionState.apiError`: why the API objects shown are
 * not the source's latest, which the header only names in short) is shown whole under the
 * title. With it, the box is `height` rows (the pane's) and the keys that do not fit are
 * cut at the bottom (the footer repeats `?` and `q`) rather than drawn over each other.
 * `probes`: each probe's wall and node CPU time, and the ones the probe plan skipped with why,
 * listed after the keys (the box is then `height` rows too).
 */
export function Help({ lang, apiError = null, height, probes, note }: { readonly lang: Lang; readonly apiError?: string | null; readonly height?: number; readonly probes?: readonly HelpProbeRow[]; readonly note?: string }): React.JSX.Element {
  const sized = (apiError || probes?.length) && height !== undefined ? { height, overflow: 'hidden' as const } : {};
  return (
    <Box flexDirection="column" borderStyle="round" borderColor={theme.accent} paddingX={1} {...sized}>
      {/* Not shrunk to the height (yoga would squeeze rows out of the middle): cut at the bottom. */}
      <Box flexDirection="column" flexShrink={0}>
        <Text bold>{t(lang, 'help.title')}</Text>
        {/* A replay's provenance: a re-captured replay says it is a copy, and of what. */}
        {note ? <Text color={theme.info}>{tf(lang, 'help.note', { note })}</Text> : null}
        {apiError ? <Text color={theme.warn}>{tf(lang, 'help.apiError', { reason: apiError })}</Text> : null}
        {helpRows().map(([keys, msg]) => (
          <Text key={keys}>
            <Text color={theme.accent}>{keys.padEnd(12)}</Text>
            {t(lang, msg)}
          </Text>
        ))}
        <Text color={theme.muted}>{t(lang, 'help.close')}</Text>
        {probes?.length ? <Text bold>{t(lang, 'help.probes')}</Text> : null}
        {(probes ?? []).map((p) => (
          <Text key={p.id}>
            <Text color={theme.accent}>{p.id.padEnd(22)}</Text>
            {p.skipped === undefined ? `${ms(p.durationMs)} / ${p.cpuMs === undefined ? '?' : ms(p.cpuMs)}  ${probeStatus(lang, p.status)}` : tf(lang, 'help.skipped', { reason: p.skipped })}
          </Text>
        ))}
      </Box>
    </Box>
  );
}
