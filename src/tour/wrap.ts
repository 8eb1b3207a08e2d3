/**
 * Wrapping text by terminal cells, for English and Japanese alike. Widths come from
 * string-width (a kanji or kana is 2 cells); text is cut only between grapheme clusters
 * (`Intl.Segmenter`), so no character is ever split. English breaks at spaces; Japanese
 * breaks between the phrases BudouX finds (google/budoux, its default Japanese model), so
 * a word, or a particle and the word before it, stays on one line, and punctuation stays
 * with what it closes. A BudouX boundary between two narrow characters (inside a Latin
 * word or an address) is not a break. Pure.
 */
import { loadDefaultJapaneseParser } from 'budoux';
import stringWidth from 'string-width';
import { fitCell } from '../text/cells.js';

/** Characters that must not start a line (closing brackets, small kana, punctuation): for {@link hardSplit} and {@link breaksKinsoku}. */
const NO_START = new Set([...'、。，．・：；？！ー―…‥）〕］｝〉》」』】’”ゝゞぁぃぅぇぉっゃゅょゎァィゥェォッャュョヮヵヶ,.:;!?)]}%']);
/** Characters that must not end a line (opening brackets): for {@link hardSplit} and {@link breaksKinsoku}. */
const NO_END = new Set([...'（〔［｛〈《「『【‘“([{']);

const segmenter = new Intl.Segmenter('ja', { granularity: 'grapheme' });

let parser: ReturnType<typeof loadDefaultJapaneseParser> | null = null;

/** BudouX's phrases of `text` (the parser is loaded on first use). */
function phrases(text: string): string[] {
  if (!/[^\x00-\u2e7f]/u.test(text)) return [text];
  parser ??= loadDefaultJapaneseParser();
  return parser.parse(text);
}

/** One unbreakable piece of text and whether a space preceded it. */
interface Unit {
  text: string;
  width: number;
  spaceBefore: boolean;
}

function graphemes(text: string): string[] {
  return [...segmenter.segment(text)].map((s) => s.segment);
}

/**
 * Splits a paragraph into units: words between spaces, cut further at BudouX's phrase
 * boundaries where a wide character stands on either side.
 */
function units(paragraph: string): Unit[] {
  const out: Unit[] = [];
  let space = false;
  let current: Unit | null = null;
  for (const phrase of phrases(paragraph)) {
    let first = true;
    for (const g of graphemes(phrase)) {
      if (/^\s+$/u.test(g)) {
        current = null;
        space = true;
        first = false;
        continue;
      }
      const w = stringWidth(g);
      // A phrase boundary breaks only next to a wide character: never inside a Latin word.
      const boundary = first && current !== null && (w > 1 || stringWidth([...current.text].pop() ?? '') > 1);
      if (current !== null && !space && !boundary) {
        current.text += g;
        current.width += w;
      } else {
        current = { text: g, width: w, spaceBefore: space };
        out.push(current);
      }
      space = false;
      first = false;
    }
  }
  return out;
}

/**
 * Cuts one phrase wider than the line into pieces of at most `width` cells, between
 * graphemes. Only here, where BudouX's phrase itself does not fit, does the old line-break
 * rule of JIS X 4051 decide: closing punctuation stays with the character before it and
 * an opening bracket with the one after it, so no piece starts with `。` or ends with `「`.
 */
function hardSplit(text: string, width: number): string[] {
  const glued: string[] = [];
  let glueNext = false;
  for (const g of graphemes(text)) {
    const prev = glued[glued.length - 1];
    // Only next to Japanese: a Latin word or an address is cut exactly at the width.
    const japanese = prev !== undefined && (stringWidth(g) > 1 || stringWidth(graphemes(prev).pop() ?? '') > 1);
    if (prev !== undefined && japanese && (NO_START.has(g) || glueNext) && stringWidth(prev + g) <= width) glued[glued.length - 1] += g;
    else glued.push(g);
    glueNext = NO_END.has(g);
  }
  const out: string[] = [];
  let line = '';
  let used = 0;
  for (const g of glued) {
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

/**
 * {@link wrapCells} kept to `max` lines, the leading blanks of `text` repeated on every line
 * (a hanging indent); when more lines would follow, the last one kept ends with `…`.
 */
export function wrapCellsAtMost(text: string, width: number, max: number): string[] {
  const indent = /^ */.exec(text)![0];
  const lines = wrapCells(text.slice(indent.length), width - indent.length).map((l) => indent + l);
  return lines.length <= max ? lines : [...lines.slice(0, max - 1), fitCell(`${lines[max - 1]!}…`, width)];
}

/** Whether `line` breaks a kinsoku rule (starts with closing punctuation or ends with an opening bracket). */
export function breaksKinsoku(line: string): boolean {
  const gs = graphemes(line);
  return gs.length > 0 && (NO_START.has(gs[0]!) || NO_END.has(gs[gs.length - 1]!));
}
