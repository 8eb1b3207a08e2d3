/**
 * Error messages in Japanese (issue 22 item 5): under `--lang ja` or LANG=ja_JP.UTF-8 the real
 * binary prints commander's parse errors, nodescope's own `nodescope: …` errors with their
 * `try:` hints, and the `-o` refusals in Japanese (no English word left, by the ja sweep's
 * finder), with flags, values and exit codes untouched; `--lang en` wins over the locale.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { commanderErrorText, errorLang, errorText } from '../../src/cli/error-lang.js';
import { packageRoot } from '../../src/paths.js';
import { englishLeft } from '../helpers/english.js';
import { fixtureDir } from '../helpers/fixtures.js';

const binary = path.join(packageRoot(), 'dist', 'bin', 'nodescope.js');
const run = (env: Record<string, string>, ...args: string[]) => spawnSync('node', [binary, ...args], { encoding: 'utf8', input: '', env: { ...process.env, LC_ALL: '', LC_MESSAGES: '', LANG: 'C.UTF-8', ...env } });
const JA = { LANG: 'ja_JP.UTF-8' };
const replay = fixtureDir('lab-iptables');
/** What the user typed is data, not our English. */
const typed = (...words: string[]) => new Set(words);

describe('errorLang and errorText', () => {
  it('takes --lang from argv (both spellings), else the locale as the TUI does', () => {
    expect(errorLang(['node', 'x', 'show', '--lang', 'ja'], {})).toBe('ja');
    expect(errorLang(['node', 'x', '--lang=ja'], {})).toBe('ja');
    expect(errorLang(['node', 'x', '--lang', 'en'], { LANG: 'ja_JP.UTF-8' })).toBe('en');
    expect(errorLang(['node', 'x'], { LANG: 'ja_JP.UTF-8' })).toBe('ja');
    expect(errorLang(['node', 'x'], { LANG: 'C' })).toBe('en');
  });

  it('fills the Japanese row with the values of the English message; a message without a row stays as it is', () => {
    expect(errorText('choose one source, not --replay and --ssh', 'ja')).toBe('ソースは 1 つだけ選んでください（指定: --replay and --ssh）');
    expect(errorText('no completion for shell "tcsh"', 'ja')).toBe('シェル "tcsh" の補完はありません');
    expect(errorText('one of bash, zsh, fish', 'ja')).toBe('次のどれか: bash, zsh, fish');
    expect(errorText('an error nobody wrote a row for', 'ja')).toBe('an error nobody wrote a row for');
    expect(errorText('nothing to show called "x"', 'en')).toBe('nothing to show called "x"');
    // A value that is a sentence of its own is translated too (the -o refusal's reason).
    expect(errorText('trace prints text, json, yaml, not wide: a walk has no wider columns and no object names', 'ja')).toBe('trace が出力できるのは text, json, yaml で、wide はありません: 経路の表示には追加の列もオブジェクト名もありません');
    expect(commanderErrorText("error: unknown option '--bogus'\n(Did you mean --local?)\n", 'ja')).toBe('エラー: 不明なオプション --bogus\n（もしかして --local？）\n');
  });
});

describe('the binary under --lang ja / LANG=ja_JP.UTF-8', () => {
  it.each([
    ['commander: an unknown option', [JA, '--bogus'], 2, /^エラー: 不明なオプション --bogus$/m, typed('bogus')],
    ['commander: a missing argument', [JA, 'completion'], 2, /^エラー: 必須の引数 shell がありません$/m, typed('shell', 'completion')],
    ['commander: a bad --interval', [JA, 'show', 'services', '--interval', '-1', '--replay', replay], 2, /^エラー: オプション --interval <seconds> の値 -1 は使えません。正の秒数を指定してください$/m, typed('seconds')],
    ['the -o refusal', [JA, 'trace', '-o', 'name', '--replay', replay], 2, /trace が出力できるのは text, json, yaml で、name はありません: /, typed('format', 'name', 'text')],
    ['a usage error with its hint', [JA, 'show', 'foo', '--replay', replay], 2, /^nodescope: "foo" という表示対象はありません\n {2}対処: services, rules, lb, conntrack, dns, compare$/m, typed('foo', 'rules', 'compare')],
    ['a missing --replay folder', [JA, 'show', 'services', '--replay', '/nonexistent-bundle'], 1, /^nodescope: \/nonexistent-bundle は存在しません\n {2}対処: キャプチャバンドルのディレクトリ/m, typed()],
    ['trace without a destination', [{}, 'trace', '--replay', replay, '--lang', 'ja'], 2, /^nodescope: trace には宛先が必要です\n {2}対処: --to 10\.96\.12\.34:80\/tcp か --to-service default\/web:80$/m, typed()],
  ] as const)('%s', (_what, [env, ...args], status, expected, data) => {
    const r = run(env, ...args);
    expect(r.status).toBe(status);
    expect(r.stderr).toMatch(expected);
    expect(englishLeft(r.stderr, data)).toEqual([]);
  });

  it('--lang en wins over LANG=ja_JP.UTF-8; the English messages are unchanged', () => {
    const r = run(JA, 'show', 'foo', '--replay', replay, '--lang', 'en');
    expect(r.status).toBe(2);
    expect(r.stderr).toBe('nodescope: nothing to show called "foo"\n  try: services, rules, lb, conntrack, dns, compare\nSee \'nodescope show --help\' for usage.\n');
    const c = run({}, 'trace', '-o', 'wide', '--replay', replay);
    expect(c.stderr).toContain("error: option '-o, --output <format>' argument 'wide' is invalid. trace prints text, json, yaml, not wide: a walk has no wider columns and no object names");
  });
});
