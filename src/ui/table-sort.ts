/**
 * Sorting any table by any of its columns: `s` then a column's letter (shown in the footer,
 * taken from the column's header), again on the same column to reverse; `S` reverses. The
 * sorted column's header carries an arrow (as k9s marks its sort column). Pure: the
 * views sort their rows here, so the cursor, Enter and what is drawn see one order.
 */
import { cellWidth } from '../text/cells.js';

/** A table's sort: the column's key (a Table `ColumnSpec.key`) and its direction. */
export interface TableSort {
  readonly column: string;
  readonly descending: boolean;
}

/** What a column sorts on: a number or bigint (counts, ports), a string (names, addresses), or null (absent: sorted last). */
export type SortValue = string | number | bigint | null;

/** One sortable column of a table: its key (as the Table's column), its header title, and the row's value. */
export interface SortColumn<T> {
  readonly key: string;
  readonly title: string;
  readonly value: (row: T) => SortValue;
}

// Digit runs compare as numbers (10.96.0.9 before 10.96.0.10, port 80 before 443); a fixed locale keeps the order the same everywhere.
const collator = new Intl.Collator('en', { numeric: true, sensitivity: 'base' });

/** Compares two sort values: absent last, numbers by value, strings naturally. */
export function compareValues(a: SortValue, b: SortValue): number {
  if (a === null || a === '') return b === null || b === '' ? 0 : 1;
  if (b === null || b === '') return -1;
  if (typeof a !== 'string' && typeof b !== 'string') return a < b ? -1 : a > b ? 1 : 0;
  return collator.compare(String(a), String(b));
}

/**
 * `rows` in `sort` order (a stable sort: ties keep the input order), or `rows` itself when
 * there is no sort or its column is not one of `columns`. Absent values stay last in both directions.
 */
export function sortRows<T>(rows: readonly T[], columns: readonly SortColumn<T>[], sort: TableSort | null | undefined): readonly T[] {
  const column = sort ? columns.find((c) => c.key === sort.column) : undefined;
  if (!sort || !column) return rows;
  const keyed = rows.map((row, i) => ({ row, i, v: column.value(row) }));
  const sign = sort.descending ? -1 : 1;
  keyed.sort((x, y) => {
    const absent = (v: SortValue) => v === null || v === '';
    if (absent(x.v) !== absent(y.v)) return absent(x.v) ? 1 : -1;
    return sign * compareValues(x.v, y.v) || x.i - y.i;
  });
  return keyed.map((k) => k.row);
}

/** Columns of counters: chosen, they start with the largest (what an SRE looks for first). */
const COUNT_COLUMNS: ReadonlySet<string> = new Set(['pkts', 'bytes', 'rate', 'packets']);

/** The sort after choosing `column`: the same column reverses, another starts ascending (counters descending). */
export function chooseSort(current: TableSort | null | undefined, column: string): TableSort {
  return current?.column === column ? { column, descending: !current.descending } : { column, descending: COUNT_COLUMNS.has(column) };
}

/**
 * One letter per column to choose it after `s`: the first letter of its title not taken by
 * an earlier column (then any free letter). Lowercase; `s`, `S`, `q` and digits are left out
 * so the choice can never be read as another key.
 */
export function sortLetters(titles: readonly string[]): string[] {
  const taken = new Set(['s', 'q']);
  return titles.map((title) => {
    const letters = [...title.toLowerCase()].filter((c) => /[a-z]/.test(c));
    const pick = letters.find((c) => !taken.has(c)) ?? [...'abcdefghijklmnoprtuvwxyz'].find((c) => !taken.has(c)) ?? '';
    taken.add(pick);
    return pick;
  });
}

/** A header title with the sort arrow when its column is the sorted one (`PKTS↓`). */
export function sortedTitle(title: string, key: string, sort: TableSort | null | undefined): string {
  if (!sort || sort.column !== key) return title;
  return `${title}${sort.descending ? '↓' : '↑'}`;
}

/** The footer's choices after `s`: `n:NAMESPACE a:NAME …` (titles as the headers spell them; one line at 80 columns). */
export function sortPrompt(columns: readonly { readonly title: string }[]): string {
  const letters = sortLetters(columns.map((c) => c.title));
  return columns.map((c, i) => `${letters[i]}:${c.title}`).filter((_, i) => cellWidth(letters[i] ?? '') > 0).join(' ');
}
