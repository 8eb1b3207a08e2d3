/**
 * Every user-facing error has its Japanese (issue 22 item 5): a `UserError` is built from
 * message keys (`new UserError(said(key, params), said(hintKey))`, src/errors.ts), so a throw
 * site without a key does not compile; this test walks src/ for every construction and every
 * error key it names, and fails when a key has no row, when a Japanese row leaves English
 * words (the ja sweep's finder, test/helpers/english.ts; holes are data), or when a message
 * is built from anything but keys. The English rendered from the keys is the message as it
 * was thrown before (checked on real throws here and in the tests of each module).
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { said, saidIn, UserError } from '../../src/errors.js';
import { packageRoot } from '../../src/paths.js';
import { messageKeys, t, type MessageKey } from '../../src/text/i18n.js';
import { englishLeft } from '../helpers/english.js';
import { fixtureDir } from '../helpers/fixtures.js';

const SRC = path.join(packageRoot(), 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sourceFiles(path.join(dir, e.name)) : /\.tsx?$/.test(e.name) ? [path.join(dir, e.name)] : []));
}

const sources = sourceFiles(SRC).map((file) => ({ file: path.relative(SRC, file), text: readFileSync(file, 'utf8') }));
/** Keys that pass another program's words or a list of names through as they are. */
const PASS_THROUGH = new Set<MessageKey>(['ue.data', 'ue.detail']);
const errorKeys = messageKeys.filter((k) => k.startsWith('ue.') || k.startsWith('err.'));
/** A `command` in backticks reads as quoted text: a command, not a sentence. */
const commandsQuoted = (text: string) => text.replace(/`([^`]*)`/g, '"$1"');
/** A row's Japanese as the finder reads it: holes blanked (data), commands quoted. */
const jaOf = (k: MessageKey) => commandsQuoted(t('ja', k).replace(/\{\w+\}/g, ' '));

describe('every UserError is built from keys with a Japanese row', () => {
  it('each construction in src/ passes a said(…) message (or a caught UserError\'s)', () => {
    const sites = sources.flatMap(({ file, text }) => [...text.matchAll(/new Us(?:er|age)Error\(\s*([^\n]{0,60})/g)].map((m) => ({ file, start: m[1]! })));
    expect(sites.length).toBeGreaterThan(140);
    const bad = sites.filter((s) => !/^(said\(|e instanceof UserError \? e\.said|names\.length === 0 \? said\()/.test(s.start) && !/^[a-zA-Z]+\.said/.test(s.start));
    expect(bad).toEqual([]);
  });

  it('every error key named in src/ has a row', () => {
    const named = new Set(sources.flatMap(({ text }) => [...text.matchAll(/'((?:ue|err)\.[\w.-]+)'/g)].map((m) => m[1]!)));
    expect(named.size).toBeGreaterThan(150);
    expect([...named].filter((k) => !(messageKeys as readonly string[]).includes(k))).toEqual([]);
  });

  it('no Japanese error row leaves English (holes are data, flags and commands stay)', () => {
    const left = errorKeys
      .filter((k) => !PASS_THROUGH.has(k))
      .flatMap((k) => englishLeft(jaOf(k), new Set()).map((w) => `${k}: ${w.word} in ${t('ja', k)}`));
    expect(left).toEqual([]);
    for (const k of PASS_THROUGH) expect(t('ja', k)).toBe(t('en', k));
  });

  it('renders English as thrown before and Japanese from the same values, nested messages too', () => {
    const e = new UserError(said('ue.rules.noChain', { chain: 'KUBE-X', table: said('ue.rules.inTable', { table: 'nat' }) }), said('ue.rules.listChains'));
    expect(e.message).toBe('no chain named KUBE-X in table nat');
    expect(e.hint).toBe('list chains with `nodescope show rules`');
    expect(e.text('ja')).toBe('KUBE-X という名前のチェインはありません（テーブル nat）');
    expect(e.text('ja', 'hint')).toBe('チェインの一覧は "nodescope show rules" で表示できます');
    expect(saidIn(said('err.oneSource', { sources: said('ue.and', { a: '--replay', b: '--ssh' }) }), 'en')).toBe('choose one source, not --replay and --ssh');
  });
});

describe('the binary prints the keyed errors in Japanese', () => {
  const binary = path.join(packageRoot(), 'dist', 'bin', 'nodescope.js');
  const replay = fixtureDir('lab-iptables');
  const run = (...args: string[]) => spawnSync('node', [binary, ...args], { encoding: 'utf8', input: '', env: { ...process.env, LC_ALL: '', LC_MESSAGES: '', LANG: 'C.UTF-8' } });
  // A word of the command line that is wrong is a usage error (exit 2); a chain the capture lacks is not (1).
  it.each([
    [['trace', '--replay', replay, '--from', '10.244.0.9', '--to', '10.96.12.34:80/tcp', '--mark', 'zz'], 2, /^nodescope: --mark: "zz" は 32 ビットのマークではありません\n {2}対処: 10 進か 16 進で指定してください（例 0x4000）$/m, /^nodescope: --mark: "zz" is not a 32-bit mark\n {2}try: give it as decimal or hex, e\.g\. 0x4000$/m],
    [['show', 'rules', '--replay', replay, '--chain', 'NOPE'], 1, /^nodescope: NOPE という名前のチェインはありません\n/m, /^nodescope: no chain named NOPE\n {2}try: list chains with `nodescope show rules`$/m],
    [['dig', '+search', 'a', 'b', '--replay', replay], 2, /^nodescope: dig が受け付ける名前は 1 つです（2 個: a b）$/m, /^nodescope: dig takes one name, got 2: a b$/m],
  ] as const)('%j', (args, status, ja, en) => {
    const j = run(...args, '--lang', 'ja');
    expect(j.status).toBe(status);
    expect(j.stderr).toMatch(ja);
    expect(englishLeft(commandsQuoted(j.stderr), new Set(['zz', 'NOPE']))).toEqual([]);
    const e = run(...args);
    expect(e.status).toBe(status);
    expect(e.stderr).toMatch(en);
  });
});
