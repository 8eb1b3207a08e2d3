/**
 * Every user-visible UI string, in English and Japanese. Panes call `t(lang, key)`
 * (or `tf` with `{name}` parameters) and never hard-code text. The strings live under
 * `messages/`: the app's in `en.ts` and `ja.ts`, a pane's own in one module holding both
 * languages side by side (`ipvs.ts`, `expectation.ts`, `diagnose.ts`), merged here.
 */
import * as cliMessages from './messages/cli.js';
import * as cliBodyMessages from './messages/cli-body.js';
import * as cliErrorMessages from './messages/cli-errors.js';
import * as userErrorMessages from './messages/user-errors.js';
import * as userErrorIoMessages from './messages/user-errors-io.js';
import { coreEn } from './messages/en.js';
import * as diagnoseMessages from './messages/diagnose.js';
import * as expectationMessages from './messages/expectation.js';
import * as fleetMessages from './messages/fleet.js';
import * as ipvsMessages from './messages/ipvs.js';
import { coreJa } from './messages/ja.js';
import * as walkMessages from './messages/walk.js';

/** A supported UI language. */
export type Lang = 'en' | 'ja';

const en = { ...coreEn, ...ipvsMessages.en, ...fleetMessages.en, ...expectationMessages.en, ...walkMessages.en, ...diagnoseMessages.en, ...cliMessages.en, ...cliBodyMessages.en, ...cliErrorMessages.en, ...userErrorMessages.en, ...userErrorIoMessages.en } as const;

/** A UI string key. */
export type MessageKey = keyof typeof en;

const ja: Record<MessageKey, string> = { ...coreJa, ...ipvsMessages.ja, ...fleetMessages.ja, ...expectationMessages.ja, ...walkMessages.ja, ...diagnoseMessages.ja, ...cliMessages.ja, ...cliBodyMessages.ja, ...cliErrorMessages.ja, ...userErrorMessages.ja, ...userErrorIoMessages.ja };

const tables: Record<Lang, Record<MessageKey, string>> = { en, ja };

/** The string for `key` in `lang`. */
export function t(lang: Lang, key: MessageKey): string {
  return tables[lang][key];
}

/** The string for `key` with `{name}` parameters filled. */
export function tf(lang: Lang, key: MessageKey, params: Readonly<Record<string, string | number>>): string {
  return tables[lang][key].replace(/\{(\w+)\}/g, (m, name: string) => (name in params ? String(params[name]) : m));
}

/**
 * The language from an explicit flag, else from `LANG`/`LC_ALL`/`LC_MESSAGES`
 * (`ja_JP.UTF-8` → `ja`), else English.
 */
export function detectLang(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): Lang {
  if (flag === 'en' || flag === 'ja') return flag;
  const loc = env.LC_ALL || env.LC_MESSAGES || env.LANG || '';
  return loc.startsWith('ja') ? 'ja' : 'en';
}

/** Every key, for the test that checks both languages are complete. */
export const messageKeys = Object.keys(en) as MessageKey[];
