/**
 * The tour's position as a pure state machine: which step is current, whether the user
 * has wandered off to explore, and an `epoch` that changes exactly when the app must
 * (re)apply the current step to its panes (moving to a step, or coming back to it).
 *
 * Keys (the app maps them): `n` next, `p` previous, `.` back to the current step; any
 * other navigation key means the user explores (the step is not re-applied, the bar says
 * how to return).
 */

/** Where a tour is. `index`: 0-based current step; `count`: number of steps (≥ 1). */
export interface TourPosition {
  readonly index: number;
  readonly count: number;
  /** The user moved away from what the step showed. */
  readonly exploring: boolean;
  /** Increments whenever the current step has to be shown again. */
  readonly epoch: number;
}

/** Everything that moves a tour. */
export type TourAction =
  | { readonly type: 'next' }
  | { readonly type: 'prev' }
  | { readonly type: 'goto'; readonly index: number }
  | { readonly type: 'resume' }
  | { readonly type: 'explore' };

/** The position of a tour of `count` steps before its first step is shown (`count` < 1 is treated as 1). */
export function startTour(count: number): TourPosition {
  return { index: 0, count: Math.max(1, Math.floor(count)), exploring: false, epoch: 0 };
}

function show(pos: TourPosition, index: number): TourPosition {
  return { ...pos, index, exploring: false, epoch: pos.epoch + 1 };
}

/**
 * The reducer. `next`/`prev` at either end stay put (but bring an exploring user back to
 * the step); `goto` clamps; `resume` re-shows the current step; `explore` only marks.
 */
export function tourReducer(pos: TourPosition, action: TourAction): TourPosition {
  switch (action.type) {
    case 'next':
      if (pos.index < pos.count - 1) return show(pos, pos.index + 1);
      return pos.exploring ? show(pos, pos.index) : pos;
    case 'prev':
      if (pos.index > 0) return show(pos, pos.index - 1);
      return pos.exploring ? show(pos, pos.index) : pos;
    case 'goto':
      return show(pos, Math.max(0, Math.min(pos.count - 1, Math.floor(action.index))));
    case 'resume':
      return show(pos, pos.index);
    case 'explore':
      return pos.exploring ? pos : { ...pos, exploring: true };
  }
}

/** The tour action for a key, or null when the key is not the tour's. */
export function tourKey(input: string): TourAction | null {
  if (input === 'n') return { type: 'next' };
  if (input === 'p') return { type: 'prev' };
  if (input === '.') return { type: 'resume' };
  return null;
}
