/** The two header lines: node, source and freshness, detected mode with evidence; then the pane tabs. */
import { Box } from 'ink';
import { Text } from './SafeText.js';
import React, { useEffect, useRef, useState } from 'react';
import { clockTime } from '../../text/clock.js';
import type { ApiProblem } from '../../collect/session.js';
import { t, tf, type Lang } from '../../text/i18n.js';
import { PANE_REGISTRY, type PaneEntry, type PaneId } from '../pane-registry.js';
import { cellWidth, fitCell, humanAge } from '../../text/cells.js';
import { theme } from '../theme.js';

/**
 * Props of {@link Header}. `ageSeconds`: age of the shown data; null for a replay.
 * `now`: the clock (ms since epoch) the stale age is counted on; default `Date.now`.
 */
export interface HeaderProps {
  readonly node: string;
  readonly live: boolean;
  readonly sourceLabel: string;
  readonly capturedAt: string | null;
  readonly mode: string;
  /**
   * The mode's evidence: the text, or a function giving the evidence that fits `room`
   * cells (what the line leaves after `mode: X — `), so the facts that matter survive a
   * narrow terminal instead of being cut at its edge. Empty: the line is `mode: X` alone
   * (no mode detected yet: `… (reading rules)`).
   */
  readonly evidence: string | ((room: number) => string);
  readonly ageSeconds: number | null;
  readonly error: string | null;
  /** Why the API objects shown are not the source's latest (`SessionState.apiError`); null or absent when they are. */
  readonly apiError?: string | null;
  /**
   * `apiError` in short (`SessionState.apiProblem`): when given, the line says what is wrong
   * and when the objects shown were read, e.g. `API: file empty — kept objects read 23:41:07`.
   */
  readonly apiProblem?: ApiProblem | null;
  readonly refreshing: boolean;
  /** Warnings of the dumps themselves (src/analysis/iptables-faults.ts): lead the mode line, before the evidence. */
  readonly notes?: readonly string[];
  /** Probes the probe plan skipped for the node's mode (ids; `?` lists why): named after the notes. */
  readonly skipped?: readonly string[];
  /** When the rules shown were last read whole (ms since epoch), when a refresh re-reads only the open chain; absent otherwise. */
  readonly fullReadAt?: number | null;
  /** The refresh wait stretched by its node CPU (`SessionState.stretched`, ms): said on the mode line; absent when not stretched. */
  readonly stretched?: { readonly everyMs: number; readonly nodeCpuMs: number } | null;
  readonly pane: PaneId;
  readonly width: number;
  readonly lang: Lang;
  readonly now?: () => number;
}

/**
 * The pane tabs as they fit in `width` cells, every pane named as k9s names them all: the
 * titles when they fit, else the short titles (`追跡` for `コネクション追跡`; Japanese
 * titles are twice as wide), else the other panes' short titles cut to the widest that fits
 * (the current one whole), and only on a very narrow terminal the other panes' numbers alone.
 */
export function paneTabs(current: PaneId, width: number, lang: Lang): { id: PaneId; label: string }[] {
  const titled = (short: boolean, cut = Infinity) =>
    PANE_REGISTRY.map((p) => {
      const entry: PaneEntry = p;
      const title = t(lang, short && entry.short ? entry.short : entry.title);
      const shown = p.id === current || cellWidth(title) <= cut ? title : fitCell(title, cut).trimEnd();
      return { id: p.id as PaneId, label: ` ${p.key} ${shown} ` };
    });
  const fits = (tabs: { label: string }[]) => cellWidth(tabs.map((tab) => tab.label).join('')) <= width;
  for (const tabs of [titled(false), titled(true)]) if (fits(tabs)) return tabs;
  // Down to 3 cells (a wide character and `…`): a shorter cut names nothing.
  const widest = Math.max(
    ...PANE_REGISTRY.map((p) => {
      const entry: PaneEntry = p;
      return cellWidth(t(lang, entry.short ?? entry.title));
    }),
  );
  for (let cut = widest - 1; cut >= 3; cut--) {
    const tabs = titled(true, cut);
    if (fits(tabs)) return tabs;
  }
  const named = titled(true);
  return named.map((tab) => (tab.id === current ? tab : { id: tab.id, label: ` ${PANE_REGISTRY.find((p) => p.id === tab.id)!.key} ` }));
}

/**
 * A session error as the header shows it: `id: status` lists (the session's lost probes)
 * grouped by status, so the statuses and probe names come before the cut instead of
 * `: failed` repeated (`failed: iptables-save, nft-json`), then the node's words the
 * session appends after ` — `; any other text as it is.
 */
export function compactReason(reason: string): string {
  // The session appends the node's own words after " — ": keep them after the grouped list.
  const cut = reason.indexOf(' — ');
  const list = cut < 0 ? reason : reason.slice(0, cut);
  const detail = cut < 0 ? '' : reason.slice(cut);
  const parts = list.split(', ').map((part) => /^([\w.-]+): (\w+)$/.exec(part));
  if (parts.some((m) => m === null)) return reason;
  const byStatus = new Map<string, string[]>();
  for (const m of parts) byStatus.set(m![2]!, [...(byStatus.get(m![2]!) ?? []), m![1]!]);
  return [...byStatus].map(([status, ids]) => `${status}: ${ids.join(', ')}`).join('; ') + detail;
}

/**
 * Seconds the data has been stale while `error` is set: counted from when the data first
 * went stale (its age then) and kept while the error stays, even if the session's data
 * time moves; re-renders once a second meanwhile, since nothing else may (a dead source
 * sends no events). 0 when not stale.
 */
function useStaleSeconds(error: string | null, ageSeconds: number | null, now: () => number): number {
  const since = useRef<number | null>(null);
  if (error === null) since.current = null;
  else since.current ??= now() - (ageSeconds ?? 0) * 1000;
  const stale = error !== null;
  const [, setTick] = useState(0);
  useEffect(() => {
    if (!stale) return;
    const id = setInterval(() => setTick((n) => n + 1), 1000);
    return () => clearInterval(id);
  }, [stale]);
  return since.current === null ? 0 : (now() - since.current) / 1000;
}

/**
 * The first line while stale: the age first, then the reason cut to the room the node
 * and source leave (at least 16 cells), so neither the age nor the node is cut away.
 */
function staleLine(error: string, age: string, where: string, p: HeaderProps): string {
  const head = 'nodescope │ ';
  const tail = ` │ ${where}`;
  const room = Math.max(16, p.width - cellWidth(head + tf(p.lang, 'header.stale', { age, reason: '' }) + tail));
  const reason = compactReason(error);
  const fitted = cellWidth(reason) > room ? fitCell(reason, room).trimEnd() : reason;
  return head + tf(p.lang, 'header.stale', { age, reason: fitted }) + tail;
}

/**
 * The first line while the API objects are old (an `--api-file` without objects, a failing
 * watch): `API: reason` first, cut to the room the node and source leave (at least 16
 * cells), as {@link staleLine} does; the data's age follows when there is room for it.
 */
function apiLine(apiError: string, where: string, freshness: string, p: HeaderProps): string {
  const head = `nodescope │ ${tf(p.lang, 'header.apiError', { reason: '' })}`;
  const withAge = ` │ ${where}${freshness ? ' │ ' + freshness : ''}`;
  const tail = cellWidth(head + withAge) + 16 <= p.width ? withAge : ` │ ${where}`;
  const room = Math.max(16, p.width - cellWidth(head + tail));
  const fitted = cellWidth(apiError) > room ? fitCell(apiError, room).trimEnd() : apiError;
  return `nodescope │ ${tf(p.lang, 'header.apiError', { reason: fitted })}${tail}`;
}

/**
 * The first line while an `--api-file` version is refused ({@link ApiProblem}): the short
 * reason and the time of the objects shown, whole, then the node and source (cut at the
 * edge); `nodescope │ ` leads only when the node's name fits after the reason with it.
 */
function apiKeptLine(problem: ApiProblem, where: string, freshness: string, p: HeaderProps): string {
  const reason = tf(p.lang, 'header.apiKept', { what: t(p.lang, `api.${problem.kind}`), time: clockTime(problem.keptAt) });
  const node = `${t(p.lang, 'header.node')} ${p.node}`;
  const head = cellWidth(`nodescope │ ${reason} │ ${node} │`) <= p.width ? 'nodescope │ ' : '';
  return `${head}${reason} │ ${where}${freshness ? ' │ ' + freshness : ''}`;
}

/** Renders the header. */
export function Header(p: HeaderProps): React.JSX.Element {
  const staleSeconds = useStaleSeconds(p.error, p.ageSeconds, p.now ?? Date.now);
  const source = p.live ? `${t(p.lang, 'header.live')} ${p.sourceLabel}` : `${t(p.lang, 'header.replay')} ${p.capturedAt ? tf(p.lang, 'header.capturedAt', { time: p.capturedAt.replace('T', ' ').replace(/\.\d+Z$/, 'Z') }) : ''}`;
  let freshness = '';
  // The data's age stays in view while a refresh is under way: a refresh stalled on a
  // dead SSH link can take tens of seconds, and "refreshing…" alone hid how old the data is.
  if (p.live && p.ageSeconds !== null) freshness = tf(p.lang, 'header.age', { age: humanAge(p.ageSeconds) }) + (p.refreshing ? `, ${t(p.lang, 'header.refreshing')}` : '');
  else if (p.refreshing) freshness = t(p.lang, 'header.refreshing');
  const where = `${t(p.lang, 'header.node')} ${p.node} │ ${source}`;
  const line1 = p.error
    ? staleLine(p.error, humanAge(staleSeconds), where, p)
    : p.apiProblem
      ? apiKeptLine(p.apiProblem, where, freshness, p)
      : p.apiError
        ? apiLine(p.apiError, where, freshness, p)
      : `nodescope │ ${where}${freshness ? ' │ ' + freshness : ''}`;
  const skippedText = p.skipped?.length ? `${tf(p.lang, 'header.skipped', { ids: p.skipped.join(', ') })} · ` : '';
  const fullText = p.fullReadAt ? `${tf(p.lang, 'header.fullRead', { time: clockTime(p.fullReadAt) })} · ` : '';
  const stretchedText = p.stretched ? `${tf(p.lang, 'header.stretched', { every: (p.stretched.everyMs / 1000).toFixed(1), cpu: (p.stretched.nodeCpuMs / 1000).toFixed(2) })} · ` : '';
  const noteText = (p.notes?.length ? `⚠ ${p.notes.join(' · ')} · ` : '') + skippedText + fullText + stretchedText;
  const modeHead = p.evidence === '' ? `${t(p.lang, 'header.mode')}: ${p.mode}` : `${t(p.lang, 'header.mode')}: ${p.mode} — ${noteText}`;
  const line2 = modeHead + (typeof p.evidence === 'string' ? p.evidence : p.evidence(p.width - cellWidth(modeHead)));
  return (
    <Box flexDirection="column">
      <Text color={p.error || p.apiError || p.apiProblem ? theme.warn : theme.accent} bold>
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
