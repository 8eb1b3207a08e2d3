/**
 * The step walk's sentences in the UI language. The step engine writes its reasons,
 * verdicts and notes in English (they are also `nodescope trace` output and test
 * expectations); for Japanese this module matches each sentence against the phrase
 * table of src/text/messages/why.ts and fills the Japanese with the same data.
 *
 * Order of trial for one text: the narrow sentences whole; else a text with `; ` in it
 * part by part (a list of conditions); else the wide sentences (`$a is in $b`); else the
 * pieces (`ct (not tracked yet)`, a reason word of the expectation) where they stand.
 * What nothing matches stays English: the Japanese frame sweep (test/ui/ja-sweep.test.tsx)
 * is what finds such a sentence on the shipped captures. Pure.
 *
 * Steps and verdicts carry their reason as a key (`said`, src/text/step-said.ts): {@link saidText}
 * renders that, and only a matcher's condition list inside it (and notes, the reply line,
 * anything without a key) goes through the phrase table: the fallback.
 */
import type { Lang } from './i18n.js';
import * as expectationMessages from './messages/expectation.js';
import { stepSaidText, type StepSaid } from './step-said.js';
import { WHY_GENERIC, WHY_PHRASES, WHY_PIECES } from './messages/why.js';

interface Phrase {
  readonly pattern: RegExp;
  /** Hole names in pattern order, and whether each holds a sentence to translate in turn. */
  readonly holes: readonly { readonly name: string; readonly sentence: boolean }[];
  readonly ja: string;
}

const HOLE = /\$(\*?)([A-Za-z]\w*)/g;

function compile([en, ja]: readonly [string, string]): Phrase {
  const holes: { name: string; sentence: boolean }[] = [];
  let source = '';
  let last = 0;
  for (const m of en.matchAll(HOLE)) {
    source += en.slice(last, m.index).replace(/[.*+?^${}()|[\]\\]/g, '\\$&') + '(.+?)';
    holes.push({ name: m[2]!, sentence: m[1] === '*' });
    last = m.index + m[0].length;
  }
  source += en.slice(last).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return { pattern: new RegExp(`^${source}$`, 's'), holes, ja };
}

/** The expectation's reason codes as sentences: `{zone}` holes become `$zone`. */
function reasonRows(): [string, string][] {
  const en: Record<string, string> = expectationMessages.en;
  const ja: Record<string, string> = expectationMessages.ja;
  return Object.keys(en)
    .filter((k) => k.startsWith('reason.'))
    .map((k) => [en[k]!.replace(/\{(\w+)\}/g, '$$$1'), ja[k]!.replace(/\{(\w+)\}/g, '$$$1')]);
}

const narrow = [...WHY_PHRASES, ...reasonRows()].map(compile);
const wide = WHY_GENERIC.map(compile);
/** Reason words inside an endpoint list (`10.244.0.23:8080 (ready, hinted for a)`), longest first. */
const reasonWords = reasonRows()
  .filter(([en]) => !en.includes('$'))
  .sort((a, b) => b[0].length - a[0].length);

function fill(p: Phrase, m: RegExpExecArray, depth: number): string {
  const values = new Map(p.holes.map((h, i) => [h.name, h.sentence ? translate(m[i + 1]!, depth + 1) : m[i + 1]!]));
  return p.ja.replace(/\$([A-Za-z]\w*)/g, (hole, name: string) => values.get(name) ?? hole);
}

function matchOne(phrases: readonly Phrase[], text: string, depth: number): string | null {
  for (const p of phrases) {
    const m = p.pattern.exec(text);
    if (m) return fill(p, m, depth);
  }
  return null;
}

function pieces(text: string): string {
  let out = text;
  for (const [en, ja] of WHY_PIECES) out = out.split(en).join(ja);
  for (const [en, ja] of reasonWords) out = out.replace(new RegExp(`(?<=[(, ])${en.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?=[),])`, 'g'), ja);
  return out;
}

function translate(text: string, depth: number): string {
  if (depth > 6 || text === '') return text;
  const whole = matchOne(narrow, text, depth);
  if (whole !== null) return pieces(whole);
  if (text.includes('; ')) return text.split('; ').map((part) => translate(part, depth + 1)).join('。');
  return pieces(matchOne(wide, text, depth) ?? text);
}

/** `text` (a rule or map entry as the node wrote it, a packet line) with only the pieces of src/text/messages/why.ts in `lang`. */
export function whyPieces(lang: Lang, text: string): string {
  return lang === 'en' ? text : pieces(text);
}

/**
 * `text` (a reason, verdict, note, entry or reply sentence of a walk, or a packet line)
 * in `lang`: itself for English, the Japanese of src/text/messages/why.ts otherwise.
 */
export function whyText(lang: Lang, text: string): string {
  return lang === 'en' ? text : translate(text, 0);
}

/**
 * A step's or verdict's reason in `lang`: `text` (its English) for English; else `said`
 * rendered from the step tables (its condition lists through the phrase table), or `text`
 * through the phrase table when it has none (a verdict of an ambiguous walk).
 */
export function saidText(lang: Lang, said: StepSaid | undefined, text: string): string {
  if (lang === 'en') return text;
  return said ? pieces(stepSaidText(lang, said, (t) => translate(t, 0))) : translate(text, 0);
}
