/**
 * Finding messages in the UI's languages (src/text/messages/diagnose.ts): a finding keeps its
 * English `message` (the JSON contract, scripts, the fleet) and carries what it said as a key
 * with params, a param being text or another such phrase, so a report or pane renders it in
 * `ja` too. Codes, names, addresses and commands are params and stay as they are. Pure.
 */
import { tf, type Lang, type MessageKey } from '../../text/i18n.js';

/** A param of a message: text, a number, a phrase of its own, or a list of them joined by `sep`. */
export type SaidParam = string | number | Said | SaidList;

/** Params joined by `sep` (`a, b, c`). */
export interface SaidList {
  readonly list: readonly SaidParam[];
  readonly sep: string;
}

/** `items` joined by `sep` when rendered. */
export function joined(items: readonly SaidParam[], sep = ', '): SaidList {
  return { list: items, sep };
}

function param(v: SaidParam, lang: Lang): string | number {
  if (typeof v !== 'object') return v;
  return 'list' in v ? v.list.map((x) => param(x, lang)).join(v.sep) : sayIn(v, lang);
}

/** A message as a key of the i18n tables and its `{params}`. */
export interface Said {
  readonly key: MessageKey;
  readonly params: Readonly<Record<string, SaidParam>>;
}

/** A phrase: `key` with `params`. */
export function said(key: MessageKey, params: Readonly<Record<string, SaidParam>> = {}): Said {
  return { key, params };
}

/** The text of `s` in `lang`, its phrases rendered first. */
export function sayIn(s: Said, lang: Lang): string {
  const flat: Record<string, string | number> = {};
  for (const [k, v] of Object.entries(s.params)) flat[k] = param(v, lang);
  return tf(lang, s.key, flat);
}

/** A finding's `message` (English) and `said` from one key and params. */
export function saying(key: MessageKey, params: Readonly<Record<string, SaidParam>> = {}): { readonly message: string; readonly said: Said } {
  const s = said(key, params);
  return { message: sayIn(s, 'en'), said: s };
}

/** A finding's message in `lang`: its `said` rendered, else its English `message`. */
export function findingMessage(f: { readonly message: string; readonly said?: Said }, lang: Lang): string {
  return f.said ? sayIn(f.said, lang) : f.message;
}
