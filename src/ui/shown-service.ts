/**
 * Which Service the Conntrack, DNS and Modes panes show: the one the user pinned (Space),
 * else the one highlighted in the Services pane (its cursor, under its own filter) — as in
 * k9s, the highlighted row is the context the other views follow; Enter and `t` open a
 * Service without pinning it. One rule for the three panes, and one title label.
 */
import type { ServiceRow } from '../analysis/service-view.js';
import { tf, type Lang } from '../text/i18n.js';
import type { UiState } from './state.js';
import { formatServiceRef } from '../model/service-ref.js';

/** The Service shown (`ns/name`) and whether the user pinned it (else it follows the Services cursor). */
export interface ShownService {
  readonly service: string;
  readonly pinned: boolean;
}

/**
 * `ns/name` of the row under the Services cursor in `rows` (the Services pane's rows under
 * its own filter), the cursor clamped to the rows; null without rows.
 */
export function highlightedService(rows: readonly ServiceRow[] | null, ui: UiState): string | null {
  if (!rows || rows.length === 0) return null;
  const row = rows[Math.max(0, Math.min(ui.cursors['services'] ?? 0, rows.length - 1))]!;
  return formatServiceRef(row);
}

/** The pinned Service, else the highlighted one (null: neither, e.g. no API objects). */
export function shownService(highlighted: string | null, ui: UiState): ShownService | null {
  if (ui.pinnedService !== null) return { service: ui.pinnedService, pinned: true };
  return highlighted === null ? null : { service: highlighted, pinned: false };
}

/** The title label: `default/web (pinned)` or `default/web (Services cursor)`. */
export function shownServiceLabel(lang: Lang, shown: ShownService): string {
  return tf(lang, shown.pinned ? 'shown.pinned' : 'shown.following', { service: shown.service });
}

/**
 * What Space does: in the Services pane, pin the highlighted Service (unpin when it is the
 * pinned one); in the panes that follow, unpin when pinned, else pin the Service shown.
 * Returns the new pin (null: none).
 */
export function togglePin(inServicesPane: boolean, highlighted: string | null, ui: UiState): string | null {
  if (inServicesPane) return ui.pinnedService !== null && ui.pinnedService === highlighted ? null : highlighted;
  return ui.pinnedService !== null ? null : highlighted;
}
