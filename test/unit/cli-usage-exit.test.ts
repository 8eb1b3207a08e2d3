/**
 * Exit status of the real binary (README "Exit status"): a usage error exits 2 in every
 * command, with its message and the command's `--help` named; 1 keeps its one meaning in the
 * commands where it is a finding (diagnose, fleet); elsewhere an error the user can fix is 1.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runBinary } from '../helpers/run-binary.js';
import { fixtureDir } from '../helpers/fixtures.js';

const home = mkdtempSync(path.join(tmpdir(), 'nodescope-usage-'));
const replay = fixtureDir('lab-iptables');
const usage = (command: string) => `See '${command} --help' for usage.\n`;

describe('a usage error exits 2 with its message and the usage line, in every command', () => {
  it.each([
    ['nodescope', ['--bogus'], "error: unknown option '--bogus'"],
    ['nodescope', ['bogus'], "error: unknown command 'bogus'"],
    ['nodescope', ['--replay', replay, '--to', '10.96.12.34:80/tcp'], 'nodescope: the walk needs a source: --from'],
    ['nodescope show', ['show', 'services', '-o', 'wider', '--replay', replay], "error: option '-o, --output <format>' argument 'wider' is invalid"],
    ['nodescope show', ['show', 'pods', '--replay', replay], 'nodescope: nothing to show called "pods"'],
    ['nodescope show', ['show', 'dns', '--replay', replay], 'nodescope: show dns needs --service NS/NAME'],
    ['nodescope diagnose', ['diagnose', '--bogus'], "error: unknown option '--bogus'"],
    ['nodescope diagnose', ['diagnose', '-o', 'wide', '--replay', replay], "error: option '-o, --output <format>' argument 'wide' is invalid. diagnose prints text, json, yaml"],
    ['nodescope trace', ['trace', '--replay', replay], 'nodescope: trace needs a destination'],
    ['nodescope trace', ['trace', '--to', '10.96.12.34:80/tcp', '--replay', replay], 'nodescope: --from is missing'],
    ['nodescope trace', ['trace', '--from', '10.244.0.9', '--to', 'default/web:80', '--replay', replay], 'nodescope: --to takes an address (IP:PORT/PROTO); default/web:80 names a Service\n  try: --to-service default/web:80'],
    // Every malformed --to/--from word (session 19: a bad port exited 1 without the usage line).
    ['nodescope trace', ['trace', '--from', '10.244.0.9', '--to', '10.96.12.34:99999/tcp', '--replay', replay], 'nodescope: --to: port "99999" is not a number from 1 to 65535\n  try: write it like 10.96.0.10:53'],
    ['nodescope trace', ['trace', '--from', '10.244.0.9:abc', '--to', '10.96.12.34:80/tcp', '--replay', replay], 'nodescope: --from: port "abc" is not a number from 1 to 65535'],
    ['nodescope trace', ['trace', '--from', '10.244.0.9', '--to', '10.96.12.x:80/tcp', '--replay', replay], 'nodescope: --to: "10.96.12.x" is not an IPv4 or IPv6 address'],
    ['nodescope trace', ['trace', '--from', '10.244.0.9', '--to', '[fd00::1:80/tcp', '--replay', replay], 'nodescope: --to: missing "]" in "[fd00::1:80"'],
    ['nodescope trace', ['trace', '--from', '10.244.0.9', '--to', '10.96.12.34:80/tcp', '--to-service', 'default/web:80', '--replay', replay], 'nodescope: give --to or --to-service, not both\n  try: drop one: --to IP:PORT/PROTO for an address, --to-service NAMESPACE/NAME[:PORT] for a Service'],
    ['nodescope dig', ['dig'], "error: missing required argument 'NAME'"],
    ['nodescope dig', ['dig', '+short', 'web', '--replay', replay], 'nodescope: +short: not a dig option nodescope knows'],
    ['nodescope dig', ['dig', 'web', '--resolv-conf', '/etc/resolv.conf', '--replay', replay], 'nodescope: --resolv-conf applies to a search'],
    ['nodescope capture', ['capture', '--replay', replay], "error: required option '-o, --output <dir>' not specified"],
    ['nodescope tour', ['tour', 'bogus'], 'nodescope: no tour called "bogus"'],
    ['nodescope fleet', ['fleet', 'bogus'], "error: unknown command 'bogus'"],
    ['nodescope fleet capture', ['fleet', 'capture'], "error: required option '-o, --output <dir>' not specified"],
    ['nodescope fleet diagnose', ['fleet', 'diagnose', '-o', 'name', 'DIR'], "error: option '-o, --output <format>' argument 'name' is invalid"],
    ['nodescope completion', ['completion', 'tcsh'], 'nodescope: no completion for shell "tcsh"'],
    ['nodescope dash', ['dash'], "error: required option '--service <ns/name>' not specified"],
    ['nodescope replay', ['replay'], "error: missing required argument 'dir'"],
  ] as const)('%s %j', async (command, args, message) => {
    const r = await runBinary(args, home);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(message);
    expect(r.stderr.endsWith(usage(command)), r.stderr).toBe(true);
  }, 30_000);

  it('names the command a mistyped one is close to', async () => {
    const r = await runBinary(['dignose'], home);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`error: unknown command 'dignose'\n(Did you mean diagnose?)\n${usage('nodescope')}`);
  });

  it('says the usage line in Japanese under --lang ja', async () => {
    const r = await runBinary(['diagnose', '--bogus', '--lang', 'ja'], home);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('エラー: 不明なオプション --bogus\n使い方は nodescope diagnose --help を参照してください。\n');
  });

  it('names dig\'s missing argument NAME, as its usage line does, in Japanese too', async () => {
    const r = await runBinary(['dig', '--lang', 'ja'], home);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('エラー: 必須の引数 NAME がありません\n使い方は nodescope dig --help を参照してください。\n');
    expect((await runBinary(['dig', '--help'], home)).stdout).toContain('Usage: nodescope dig [options] <NAME...>\n');
  });
});

describe('1 keeps its meaning', () => {
  it('help and the version exit 0', async () => {
    for (const args of [['--help'], ['diagnose', '--help'], ['help', 'trace'], ['--version']]) expect((await runBinary(args, home)).code, args.join(' ')).toBe(0);
  });

  it('diagnose and fleet exit 2 for any error (their 1 is a finding); show and trace 1 for a bundle that is not there', async () => {
    for (const args of [['diagnose', '--replay', '/nonexistent-bundle'], ['fleet', 'diagnose', '/nonexistent-bundle']]) {
      const r = await runBinary(args, home);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).not.toContain('--help');
    }
    for (const args of [['show', 'services', '--replay', '/nonexistent-bundle'], ['trace', '--from', '10.244.0.9', '--to', '10.96.12.34:80/tcp', '--replay', '/nonexistent-bundle']]) {
      const r = await runBinary(args, home);
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.stderr).toContain('nodescope: /nonexistent-bundle does not exist');
      expect(r.stderr).not.toContain('--help');
    }
  });

  it('diagnose exits 1 for a node it finds broken (lab-iptables: default/empty)', async () => {
    const r = await runBinary(['diagnose', '--replay', replay], home);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stdout).toMatch(/^BROKEN {3}default\/empty$/m);
  });
});
