/**
 * What row a pane's cursor is on, as a key that survives a filter change (issue 22 item 2:
 * "the cursor kept", as k9s keeps the selected row while the filter is typed): a Service's
 * `ns/name`, a chain's ruleset/table/name, a rule's number and text, an LB frontend's key, a
 * conntrack entry's position in the table. Pure.
 */
import type { AppViews } from './app-views.js';
import type { UiState } from './state.js';

/** Rows searched for the kept row after a filter change (the cursor goes to the top beyond). */
const SEARCH_LIMIT = 50_000;

/** The key of row `i` of the shown pane, or null where rows have no key (DNS, Modes, Step, IPVS, the findings). */
export function rowKeyOf(ui: UiState, views: AppViews, i: number): string | null {
  if (i < 0) return null;
  switch (ui.pane) {
    case 'services': {
      const row = ui.findings ? undefined : views.services.rows?.[i];
      return row ? `${row.namespace}/${row.name}` : null;
    }
    case 'rules': {
      const r = views.rules;
      if (!r || r.kind === 'message') return null;
      if (r.kind === 'chains') {
        const row = r.rows.at(i);
        return row ? `${row.ruleset} ${row.table} ${row.name}` : null;
      }
      const row = r.rows.at(i);
      return row ? `${row.index} ${row.label} ${row.matches} ${row.target}` : null;
    }
    case 'lb':
      return views.lb?.frontends[i]?.key ?? null;
    case 'conntrack': {
      const entry = views.conntrack?.order[i];
      return entry === undefined ? null : String(entry);
    }
    default:
      return null;
  }
}

/** The position of the row with `key` among the shown pane's `count` rows, or -1. */
export function rowIndexOf(ui: UiState, views: AppViews, count: number, key: string): number {
  if (ui.pane === 'conntrack' && views.conntrack) return views.conntrack.order.indexOf(Number(key));
  const n = Math.min(count, SEARCH_LIMIT);
  for (let i = 0; i < n; i++) if (rowKeyOf(ui, views, i) === key) return i;
  return -1;
}
