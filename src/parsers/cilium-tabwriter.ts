/**
 * Go's `text/tabwriter` (left-aligned, space padding, flags 0), so the formatters print
 * byte-for-byte what `cilium-dbg` prints: `service list` and `bpf lb list` both write
 * through `tabwriter.NewWriter(os.Stdout, 5, 0, 3, ' ', 0)` (minwidth 5, padding 3).
 *
 * Semantics kept from Go (src/text/tabwriter/tabwriter.go `format`/`writeLines`):
 * cells are tab-terminated; the last cell of a line is not part of any column; a column
 * block is a run of consecutive lines that have a cell in that column; a cell's width is
 * padded to the block's widest cell plus `padding`, at least `minwidth`. Tab-terminated
 * trailing cells are padded too, which is why Cilium's rows end in spaces.
 */

/** Writer options: `minwidth` and `padding` in characters, `padchar` (default space). */
export interface TabwriterOptions {
  readonly minwidth: number;
  readonly padding: number;
  readonly padchar?: string;
}

/** Cilium's `tabwriter.NewWriter(os.Stdout, 5, 0, 3, ' ', 0)`. */
export const CILIUM_TABWRITER: TabwriterOptions = { minwidth: 5, padding: 3 };

/**
 * Formats `text` (lines of `\t`-separated cells, `\n`-terminated) as Go's tabwriter would.
 * Width is counted in UTF-16 code units, which equals Go's rune count for the ASCII Cilium prints.
 * Without a final newline, a trailing empty cell is dropped as Go's `Flush` does.
 */
export function tabwrite(text: string, opts: TabwriterOptions): string {
  const endsWithNewline = text.endsWith('\n');
  const lines = (endsWithNewline ? text.slice(0, -1) : text).split('\n').map((l) => l.split('\t'));
  const last = lines[lines.length - 1] ?? [];
  // Flush adds an unterminated final cell only when it is non-empty.
  if (!endsWithNewline && last.length > 1 && last[last.length - 1] === '') last.pop();
  const pad = opts.padchar ?? ' ';
  const widths: number[] = [];
  const out: string[] = [];

  const writeLines = (from: number, to: number) => {
    for (let i = from; i < to; i++) {
      const cells = lines[i] ?? [];
      let line = '';
      cells.forEach((cell, j) => {
        line += cell;
        const w = widths[j];
        if (j < cells.length - 1 && w !== undefined) line += pad.repeat(Math.max(0, w - cell.length));
      });
      out.push(line);
    }
  };

  const format = (line0: number, line1: number) => {
    const column = widths.length;
    let start = line0;
    for (let i = line0; i < line1; i++) {
      if (column >= (lines[i]?.length ?? 0) - 1) continue;
      writeLines(start, i);
      start = i;
      let width = opts.minwidth;
      let j = i;
      for (; j < line1; j++) {
        const cells = lines[j] ?? [];
        if (column >= cells.length - 1) break;
        width = Math.max(width, (cells[column] ?? '').length + opts.padding);
      }
      widths.push(width);
      format(start, j);
      widths.pop();
      start = j;
      i = j - 1;
    }
    writeLines(start, line1);
  };

  format(0, lines.length);
  return out.join('\n') + (endsWithNewline ? '\n' : '');
}
