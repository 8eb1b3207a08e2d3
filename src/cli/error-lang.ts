/**
 * Error messages in the user's language (issue 22 item 5): the language the TUI would use
 * (`--lang` on the command line, else LANG/LC_ALL/LC_MESSAGES, src/text/i18n.ts), read from
 * argv because an error may come before (or from) commander's parse; and a message matched
 * against the `err.*` rows of src/text/messages/cli-errors.ts (`{name}` holes), its Japanese
 * filled with the same values, each value itself translated when a row matches it whole.
 * A message no row matches is returned as it is. Pure.
 */
import { detectLang, messageKeys, t, type Lang, type MessageKey } from '../text/i18n.js';

/** The language of error messages for this `argv` and environment: `--lang X`/`--lang=X`, else the locale. */
export function errorLang(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Lang {
  let flag: string | undefined;
  argv.forEach((a, i) => {
    if (a === '--lang') flag = argv[i + 1];
    else if (a.startsWith('--lang=')) flag = a.slice('--lang='.length);
  });
  return detectLang(flag, env);
}

interface Row {
  readonly pattern: RegExp;
  readonly holes: readonly string[];
  readonly key: MessageKey;
  /** Characters of the row outside its holes. */
  readonly fixed: number;
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Every `err.*` row as a whole-message pattern, the rows with more fixed text first (the narrower sentence wins). */
const ROWS: readonly Row[] = messageKeys
  .filter((k) => k.startsWith('err.'))
  .map((key) => {
    const en = t('en', key);
    const holes: string[] = [];
    let source = '';
    let last = 0;
    for (const m of en.matchAll(/\{(\w+)\}/g)) {
      source += escape(en.slice(last, m.index)) + '(.+?)';
      holes.push(m[1]!);
      last = m.index + m[0].length;
    }
    source += escape(en.slice(last));
    return { pattern: new RegExp(`^${source}$`, 's'), holes, key, fixed: en.replace(/\{\w+\}/g, '').length };
  })
  .sort((a, b) => b.fixed - a.fixed);

function translate(text: string, lang: Lang, depth: number): string | null {
  if (depth > 3) return null;
  for (const row of ROWS) {
    const m = row.pattern.exec(text);
    if (!m) continue;
    const values = new Map(row.holes.map((h, i) => [h, translate(m[i + 1]!, lang, depth + 1) ?? m[i + 1]!]));
    return t(lang, row.key).replace(/\{(\w+)\}/g, (hole, name: string) => values.get(name) ?? hole);
  }
  return null;
}

/** `message` (one line of an error, a hint) in `lang`: itself in English, or when no row matches it. */
export function errorText(message: string, lang: Lang): string {
  if (lang === 'en') return message;
  return translate(message, lang, 0) ?? message;
}

/** Commander's error output (`error: …` lines, maybe a `(Did you mean …?)` line) in `lang`, line by line. */
export function commanderErrorText(output: string, lang: Lang): string {
  if (lang === 'en') return output;
  return output
    .split('\n')
    .map((line) => errorText(line, lang))
    .join('\n');
}
