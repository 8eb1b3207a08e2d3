/**
 * A virtualised table: only the rows that fit in `height` are rendered, so a
 * million-row conntrack table costs the same per frame as ten rows.
 */
import { Box } from 'ink';
import { Text } from './SafeText.js';
import React, { createContext, useContext } from 'react';
import { sortedTitle, type TableSort } from '../table-sort.js';
import { cellWidth, fitCell, fitCellMiddle, layoutColumns, type ColumnSpec } from '../../text/cells.js';
import { theme, type ColorToken } from '../theme.js';

/** One row: its cells in column order, and an optional colour role. */
export interface TableRow {
  readonly key: string;
  readonly cells: readonly string[];
  readonly color?: ColorToken;
  readonly dim?: boolean;
}

/** Props of {@link Table}. `height` counts body rows (the header line is extra). */
export interface TableProps {
  readonly columns: readonly ColumnSpec[];
  readonly rows: readonly TableRow[];
  readonly cursor: number;
  readonly width: number;
  readonly height: number;
  readonly focused: boolean;
  /** False for a pane's second table (a Service's endpoints, a frontend's backends): the sort is the first one's. */
  readonly sortable?: boolean;
}

/** The shown table's sort (src/ui/table-sort.ts): the App provides it, the column with its key gets the arrow. */
export const TableSortContext = createContext<TableSort | null>(null);

/**
 * The column widened to its title's display width (a Japanese title takes two cells a
 * character), so a header is never cut while the terminal has room: `ポリシー` needs 8 cells
 * where `POLICY` needed 6. Flex columns give the cells back ({@link layoutColumns}).
 */
function titleFits(c: ColumnSpec): ColumnSpec {
  const need = cellWidth(c.title);
  if (c.width !== undefined) return need > c.width ? { ...c, width: need } : c;
  return need > (c.minWidth ?? 4) ? { ...c, minWidth: need } : c;
}

/** The first visible row index that keeps `cursor` in view, centred when possible. */
export function windowStart(count: number, cursor: number, height: number): number {
  if (count <= height) return 0;
  return Math.min(Math.max(0, cursor - Math.floor(height / 2)), count - height);
}

/** Renders a header line and the visible slice of rows; the cursor row is inverse. */
export function Table({ columns: given, rows, cursor, width, height, focused, sortable = true }: TableProps): React.JSX.Element {
  const sort = useContext(TableSortContext);
  const columns = given.map(titleFits);
  const widths = layoutColumns(columns, width);
  const line = (cells: readonly string[]) => columns.map((c, i) => (c.elide === 'middle' ? fitCellMiddle : fitCell)(cells[i] ?? '', widths[i]!, c.align)).join(' ');
  const start = windowStart(rows.length, cursor, height);
  const visible = rows.slice(start, start + height);
  return (
    <Box flexDirection="column">
      <Text color={theme.header} bold>
        {line(columns.map((c) => (sortable ? sortedTitle(c.title, c.key, sort) : c.title)))}
      </Text>
      {visible.map((row, i) => {
        const selected = start + i === cursor;
        return (
          <Text key={row.key} inverse={selected && focused} bold={selected} color={row.color ? theme[row.color] : undefined} dimColor={row.dim}>
            {line(row.cells)}
          </Text>
        );
      })}
    </Box>
  );
}
