/**
 * Wrapping narration by terminal cells, for English and Japanese alike. Widths come from
 * string-width (a kanji or kana is 2 cells); text is cut only between grapheme clusters
 * (`Intl.Segmenter`), so no character is ever split. English breaks at spaces; Japanese
 * may break between any two characters, except that closing punctuation (`、。）」` …)
 * never starts a line and opening brackets (`（「` …) never end one (the basic rule of
 * JIS X 4051 line breaking, "kinsoku"). Pure.
 */
import stringWidth from 'string-width';

/** Characters that must not start a line (closing brackets, small kana, punctuation). */
const NO_START = new Set([...'、。，．・：；？！ー―…‥）〕］｝〉》」』】’”ゝゞぁぃぅぇぉっゃゅょゎァィゥェォッャュョヮヵヶ,.:;!?)]}%']);
/** Characters that must not end a line (opening brackets). */
const NO_END = new Set([...'（〔［｛〈《「『【‘“([{']);

const segmenter = new Intl.Segmenter('ja', { granularity: 'grapheme' });

/** One unbreakable piece of text and whether a space preceded it. */
interface Unit {
  text: string;
  width: number;
  spaceBefore: boolean;
}

function graphemes(text: string): string[] {
  return [...segmenter.segment(text)].map((s) => s.segment);
}

/** Splits a paragraph into units: Latin words, single wide characters, kinsoku glue applied. */
function units(paragraph: string): Unit[] {
  const out: Unit[] = [];
  let space = false;
  // The Latin word being read, which narrow characters extend.
  let current: Unit | null = null;
  let glueNext = false;
  for (const g of graphemes(paragraph)) {
    if (/^\s+$/u.test(g)) {
      current = null;
      space = true;
      glueNext = false;
      continue;
    }
    const w = stringWidth(g);
    const last = out[out.length - 1];
    if (last && !space && (NO_START.has(g) || glueNext)) {
      // Closing punctuation stays with what it closes; an opening bracket with what it opens.
      last.text += g;
      last.width += w;
      current = w === 1 ? last : null;
    } else if (w === 1 && current !== null && !space) {
      current.text += g;
      current.width += w;
    } else {
      const u: Unit = { text: g, width: w, spaceBefore: space };
      out.push(u);
      current = w === 1 ? u : null;
    }
    glueNext = NO_END.has(g);
    space = false;
  }
  return out;
}

/** Cuts one over-wide unit into pieces of at most `width` cells, between graphemes. */
function hardSplit(text: string, width: number): string[] {
  const out: string[] = [];
  let line = '';
  let used = 0;
  for (const g of graphemes(text)) {
    const w = stringWidth(g);
    if (used + w > width && line !== '') {
      out.push(line);
      line = '';
      used = 0;
    }
    line += g;
    used += w;
  }
  if (line !== '') out.push(line);
  return out;
}

/**
 * Wraps `text` into lines of at most `width` cells (`width` ≥ 2). Newlines in `text`
 * start new paragraphs; runs of blanks become one space; lines carry no leading or
 * trailing blanks. A word longer than the width is cut between graphemes.
 */
export function wrapCells(text: string, width: number): string[] {
  const w = Math.max(2, Math.floor(width));
  const lines: string[] = [];
  for (const paragraph of text.split(/\r?\n/)) {
    let line = '';
    let used = 0;
    for (const u of units(paragraph)) {
      const gap = line !== '' && u.spaceBefore ? 1 : 0;
      if (used + gap + u.width <= w) {
        line += (gap ? ' ' : '') + u.text;
        used += gap + u.width;
        continue;
      }
      if (line !== '') lines.push(line);
      if (u.width <= w) {
        line = u.text;
        used = u.width;
      } else {
        const pieces = hardSplit(u.text, w);
        lines.push(...pieces.slice(0, -1));
        line = pieces[pieces.length - 1] ?? '';
        used = stringWidth(line);
      }
    }
    if (line !== '' || lines.length === 0 || paragraph === '') lines.push(line);
  }
  return lines;
}

/** Whether `line` breaks a kinsoku rule (starts with closing punctuation or ends with an opening bracket). */
export function breaksKinsoku(line: string): boolean {
  const gs = graphemes(line);
  return gs.length > 0 && (NO_START.has(gs[0]!) || NO_END.has(gs[gs.length - 1]!));
}
