/**
 * A step of the walk says why in a key and params (issue 22 item 5): the trace engines
 * (src/trace/) record `said` on each step and verdict, and the text layer renders it in
 * the UI language from the tables of src/text/messages/steps.ts. English rendered from
 * the key is the step's `reason` (`nodescope trace` output, JSON), so it never drifts.
 *
 * A param is data copied as it is (an address, a chain name, rule text), another phrase,
 * a list of them, or `{phrase}`: English words a matcher wrote (a rule's condition list,
 * `daddr 10.96.0.10 is in @service-ips`), which Japanese renders through the phrase table
 * (src/text/why.ts) — the conditions are per-match-module words, not one sentence per step.
 */
import type { Lang } from './i18n.js';
import { en as stepEn, ja as stepJa } from './messages/steps.js';

/** A key of the step tables: named for what happened (`dnat-to-endpoint`, `no-endpoints-reject`). */
export type StepKey = keyof typeof stepEn;

/** English words of a matcher, rendered through the phrase table in Japanese. */
export interface StepPhrase {
  readonly phrase: string;
}

/** Params joined by `sep` (English) and `sepJa` (Japanese, default `sep`). */
export interface StepList {
  readonly list: readonly StepParam[];
  readonly sep: string;
  readonly sepJa?: string;
}

/** A param of a step phrase (see the module comment). */
export type StepParam = string | number | StepSaid | StepPhrase | StepList;

/** What a step (or verdict) said: a key of the step tables and its `{params}`. */
export interface StepSaid {
  readonly key: StepKey;
  readonly params: Readonly<Record<string, StepParam>>;
}

/** A phrase: `key` with `params`. */
export function stepSaid(key: StepKey, params: Readonly<Record<string, StepParam>> = {}): StepSaid {
  return { key, params };
}

/** Matcher words (a condition list) as a param. */
export function phrase(text: string): StepPhrase {
  return { phrase: text };
}

/** The text of `s` in `lang`; `phraseIn` renders a {@link StepPhrase} (identity for English). */
export function stepSaidText(lang: Lang, s: StepSaid, phraseIn: (text: string) => string = (x) => x): string {
  const table: Record<string, string> = lang === 'en' ? stepEn : stepJa;
  const param = (v: StepParam): string => {
    if (typeof v === 'string') return v;
    if (typeof v === 'number') return String(v);
    if ('key' in v) return stepSaidText(lang, v, phraseIn);
    if ('phrase' in v) return lang === 'en' ? v.phrase : phraseIn(v.phrase);
    return v.list.map(param).join(lang === 'en' ? v.sep : (v.sepJa ?? v.sep));
  };
  return table[s.key]!.replace(/\{(\w+)\}/g, (m, name: string) => {
    const v = s.params[name];
    return v === undefined ? m : param(v);
  });
}

/** The English of `s` (a step's `reason`). */
export function stepSaidEn(s: StepSaid): string {
  return stepSaidText('en', s);
}
