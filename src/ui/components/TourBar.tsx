/**
 * The tour bar under the active pane during a guided tour: the tour's title, step k/n
 * and the capture it runs on; the highlighted object (focus lines, or why the capture
 * lacks it); the narration wrapped by terminal cells (Japanese included: never a broken
 * character, no line starting with closing punctuation); and the keys (n / p / .).
 *
 * Also the hook that drives a tour inside the app ({@link useTour}): the position
 * reducer, the session of the step's capture, and applying a step's reducer actions
 * once per position change.
 */
import { Box } from 'ink';
import { Text } from './SafeText.js';
import React, { useEffect, useMemo, useReducer, useRef } from 'react';
import type { NodeSnapshot } from '../../model/snapshot.js';
import type { SessionLike } from '../../collect/session.js';
import { actionsFor } from '../tour-apply.js';
import { startTour, tourKey, tourReducer, type TourPosition } from '../../tour/machine.js';
import type { Tour, TourStep } from '../../tour/model.js';
import { resolveStep, type FocusLine, type StepResolution } from '../../tour/resolve.js';
import { wrapCells } from '../../tour/wrap.js';
import { t, tf, type Lang } from '../../text/i18n.js';
import type { UiAction, UiState } from '../state.js';
import { cellWidth, fitCell } from '../../text/cells.js';
import { theme, type ColorToken } from '../theme.js';

/** A tour the app runs: the tour and the session of each capture it names. */
export interface TourRun {
  readonly tour: Tour;
  session(capture: string): SessionLike;
}

/** Props of {@link TourBar}. `resolution` null: the step's capture is still loading. */
export interface TourBarProps {
  readonly tour: Tour;
  readonly position: TourPosition;
  readonly resolution: StepResolution | null;
  /** Why the step's capture could not be read, if it could not. */
  readonly error: string | null;
  readonly width: number;
  readonly lang: Lang;
}

/** One line of the bar: text (already fitted), colour role, bold. */
export interface BarLine {
  readonly text: string;
  readonly color: ColorToken | null;
  readonly bold: boolean;
}

/** At most this many narration lines; a longer narration ends with `…`. */
export const MAX_NARRATION_LINES = 5;
/** At most this many focus lines. */
export const MAX_FOCUS_LINES = 4;

function rule(text: string, width: number): string {
  const head = `─ ${text} `;
  return cellWidth(head) >= width ? fitCell(head, width) : head + '─'.repeat(width - cellWidth(head));
}

function focusLine(f: FocusLine, width: number): BarLine {
  return { text: fitCell(`▶ ${f.text}`, width), color: f.tone, bold: false };
}

/** The bar's lines (its height is their number), so the app can size the pane above it. */
export function tourBarLines({ tour, position, resolution, error, width, lang }: TourBarProps): BarLine[] {
  const step: TourStep | undefined = tour.steps[position.index];
  const lines: BarLine[] = [];
  const head = [tf(lang, 'tour.title', { title: tour.title[lang] }), tf(lang, 'tour.step', { n: position.index + 1, total: tour.steps.length }), step?.capture ?? ''];
  lines.push({ text: rule(head.filter(Boolean).join(' · '), width), color: 'accent', bold: true });
  if (error !== null && step) lines.push({ text: fitCell(`! ${tf(lang, 'tour.failed', { capture: step.capture, reason: error })}`, width), color: 'error', bold: false });
  else if (resolution === null && step) lines.push({ text: fitCell(tf(lang, 'tour.loading', { capture: step.capture }), width), color: 'muted', bold: false });
  else if (resolution) {
    if (resolution.problem !== null) lines.push({ text: fitCell(`! ${resolution.problem}`, width), color: 'warn', bold: false });
    for (const f of resolution.focus.slice(0, MAX_FOCUS_LINES)) lines.push(focusLine(f, width));
  }
  if (step) {
    const wrapped = wrapCells(step.narration[lang], width);
    const shown = wrapped.slice(0, MAX_NARRATION_LINES);
    if (wrapped.length > MAX_NARRATION_LINES) shown[shown.length - 1] = fitCell(`${shown[shown.length - 1]!}…`, width).trimEnd();
    for (const l of shown) lines.push({ text: fitCell(l, width), color: null, bold: false });
  }
  const last = position.index === tour.steps.length - 1;
  const hint = position.exploring ? tf(lang, 'tour.exploring', { n: position.index + 1 }) : `${t(lang, 'tour.keys')}${last ? `   ${t(lang, 'tour.lastStep')}` : ''}`;
  lines.push({ text: fitCell(hint, width), color: position.exploring ? 'warn' : 'muted', bold: false });
  return lines;
}

/** Renders the bar. */
export function TourBar(props: TourBarProps): React.JSX.Element {
  return (
    <Box flexDirection="column">
      {tourBarLines(props).map((l, i) => (
        <Text key={i} color={l.color ? theme[l.color] : undefined} bold={l.bold}>
          {l.text}
        </Text>
      ))}
    </Box>
  );
}

/** What {@link useTour} gives the app. */
export interface TourControl {
  readonly position: TourPosition;
  /** The session of the current step's capture (the app shows it instead of its own). */
  readonly session: SessionLike;
  readonly step: TourStep;
  /** Handles a key: true when it was the tour's (n, p, .); any other key marks exploring. */
  onKey(input: string): boolean;
}

/** The tour's position and the session of its current capture (null without a tour). */
export function useTour(run: TourRun | undefined): TourControl | null {
  const [position, move] = useReducer(tourReducer, run?.tour.steps.length ?? 1, startTour);
  if (!run) return null;
  const step = run.tour.steps[position.index]!;
  return {
    position,
    session: run.session(step.capture),
    step,
    onKey(input: string): boolean {
      const action = tourKey(input);
      move(action ?? { type: 'explore' });
      return action !== null;
    },
  };
}

/**
 * Resolves the current step on `snapshot` (memoised) and, once per position change
 * (`epoch`), dispatches the step's reducer actions, first leaving the views of the last
 * step's capture when the step is on another. Returns the resolution the bar shows.
 */
export function useTourSteps(control: TourControl | null, snapshot: NodeSnapshot | null, ui: UiState, dispatch: (a: UiAction) => void, lang: Lang): StepResolution | null {
  const applied = useRef(-1);
  // The capture the UI state was last built on: a step on another leaves its views first.
  const shownCapture = useRef<string | null>(null);
  const step = control?.step ?? null;
  // A snapshot with parts still loading (staged load) would resolve chains as missing: wait.
  const resolution = useMemo(() => (step && snapshot && !snapshot.pending?.length ? resolveStep(snapshot, step, lang) : null), [step, snapshot, lang]);
  const epoch = control?.position.epoch ?? -1;
  useEffect(() => {
    if (!step || !resolution || applied.current === epoch) return;
    applied.current = epoch;
    const actions = actionsFor(ui, step, resolution, shownCapture.current);
    shownCapture.current = step.capture;
    for (const a of actions) dispatch(a);
  }, [epoch, step, resolution, ui, dispatch]);
  return resolution;
}
