/**
 * Line and column helpers shared by the Cilium text parsers. Cilium's listings are Go
 * `tabwriter` tables (padding ≥ 3 spaces between columns, cells may be empty), so a row is
 * read by matching each run of text to the header column it starts under.
 */

/** Text → lines without `\r`; a final newline does not make an extra empty line. */
export function textLines(text: string): string[] {
  const lines = text.split('\n').map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/**
 * Lines that are not command output but appear in captures: kubectl's
 * `Defaulted container "cilium-agent" out of: …` notice (printed on stderr, often merged).
 */
export function isKubectlNotice(line: string): boolean {
  return /^Defaulted container "[^"]*" out of: /.test(line);
}

/** A header column: its name and the 0-based character offset where it starts. */
export interface HeaderColumn {
  readonly name: string;
  readonly start: number;
}

/**
 * Finds `names` in a header line in that order, each starting the line or after a space and
 * followed by 2+ spaces or the end. Returns null if any name is missing — the line is then
 * not that table's header.
 */
export function headerColumns(line: string, names: readonly string[]): HeaderColumn[] | null {
  const cols: HeaderColumn[] = [];
  let from = 0;
  for (const name of names) {
    const re = new RegExp(`(?<=^| )${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?=  |\\s*$)`, 'g');
    re.lastIndex = from;
    const m = re.exec(line);
    if (m === null) return null;
    cols.push({ name, start: m.index });
    from = m.index + name.length;
  }
  return cols;
}

/**
 * Splits a row into one string per header column. Text runs are separated by 2+ spaces;
 * each run goes to the last column starting at or before it (one column of drift is
 * tolerated), and runs landing in the same column are joined as they appear in the line.
 * Cells are trimmed; missing cells are `''`.
 */
export function splitRow(line: string, cols: readonly HeaderColumn[]): string[] {
  const cells = cols.map(() => '');
  const runs = [...line.matchAll(/\S+(?: \S+)*/g)];
  const firstRunAt: number[] = cols.map(() => -1);
  for (const run of runs) {
    const at = run.index ?? 0;
    let idx = 0;
    for (let c = 0; c < cols.length; c++) if ((cols[c]?.start ?? 0) <= at + 1) idx = c;
    if (firstRunAt[idx] === -1) {
      firstRunAt[idx] = at;
      cells[idx] = run[0];
    } else {
      cells[idx] = line.slice(firstRunAt[idx], at + run[0].length);
    }
  }
  return cells;
}
