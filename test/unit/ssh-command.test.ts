/**
 * ssh-command: quoting checked against a real `sh` (what the remote shell will do with
 * the string), catalog matching (only probes run), and the wrappers put in front.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { BugError } from '../../src/errors.js';
import { catalog } from '../../src/sources/catalog.js';
import { probeForArgv, remoteArgv, shellQuote, shellQuoteWord } from '../../src/sources/ssh-command.js';

/** What `sh` makes of a command line: the words it passes to printf, NUL-separated. */
function shWords(line: string): string[] {
  const r = spawnSync('sh', ['-c', `printf '%s\\0' ${line}`], { encoding: 'utf8' });
  expect(r.status).toBe(0);
  return r.stdout.split('\0').slice(0, -1);
}

const NASTY = [
  '', ' ', 'plain', "it's", '"double"', '$(touch /tmp/x)', '`id`', 'a;b', 'a|b', 'a&&b', '*', '?', '~', '~root', '#c', 'new\nline', 'tab\there',
  '\\', "'", "''", '\'"\'"\'', '$HOME', '${IFS}', '!', 'ü日本', '-n', '--', 'a=b', '{a,b}', '[x]', '>out', '<in', '\u00a0',
];

describe('shellQuote', () => {
  it('every word reaches the remote program unchanged through sh', () => {
    expect(shWords(shellQuote(NASTY))).toEqual(NASTY);
  });

  it('random byte strings survive too', () => {
    let seed = 7;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const words = Array.from({ length: 50 }, () => Array.from({ length: 1 + Math.floor(rand() * 12) }, () => String.fromCharCode(1 + Math.floor(rand() * 126))).join(''));
    expect(shWords(shellQuote(words))).toEqual(words);
  });

  it('leaves safe words bare and quotes the rest', () => {
    expect(shellQuoteWord('iptables-save')).toBe('iptables-save');
    expect(shellQuoteWord('/sys/fs/bpf/tc/globals/cilium_lb4_services_v2')).toBe('/sys/fs/bpf/tc/globals/cilium_lb4_services_v2');
    expect(shellQuoteWord('a b')).toBe("'a b'");
    expect(shellQuoteWord('')).toBe("''");
  });

  it('refuses NUL bytes and an empty argv', () => {
    expect(() => shellQuoteWord('a\0b')).toThrow(BugError);
    expect(() => shellQuote([])).toThrow(BugError);
  });
});

describe('probeForArgv', () => {
  it('finds each catalog argv and alternative', () => {
    for (const p of catalog().probes) {
      if (p.argv.some((a) => a.includes('{'))) continue;
      expect(probeForArgv(p.argv)?.id).toBe(p.id);
      for (const alt of p.alternatives) if (!alt.some((a) => a.includes('{'))) expect(probeForArgv(alt)).toBeDefined();
    }
  });

  it('fills placeholders only with values of the parameter pattern', () => {
    expect(probeForArgv(['bpftool', '-j', 'map', 'dump', 'pinned', '/sys/fs/bpf/x/cilium_lb4_services_v2'])?.id).toBe('bpf-lb4-services');
    expect(probeForArgv(['bpftool', '-j', 'map', 'dump', 'pinned', '$(reboot)/cilium_lb4_services_v2'])).toBeUndefined();
  });

  it('does not match anything else', () => {
    expect(probeForArgv(['rm', '-rf', '/'])).toBeUndefined();
    expect(probeForArgv(['iptables-save'])).toBeUndefined();
    expect(probeForArgv(['iptables-save', '-c', 'extra'])).toBeUndefined();
  });
});

describe('remoteArgv', () => {
  it('puts sudo (root probes, non-root user) and the C locale in front, from the catalog wrappers', () => {
    expect(remoteArgv(['iptables-save', '-c'], { sudo: true })).toEqual(['sudo', '-n', '--', 'env', 'LC_ALL=C', 'iptables-save', '-c']);
    expect(remoteArgv(['uname', '-nrm'], { sudo: false })).toEqual(['env', 'LC_ALL=C', 'uname', '-nrm']);
    expect(remoteArgv(['nft', '-j', 'list', 'ruleset'], { sudo: false, outer: 'host-root' })).toEqual(['chroot', '/host', 'env', 'LC_ALL=C', 'nft', '-j', 'list', 'ruleset']);
  });

  it('refuses an argv that is not a probe', () => {
    expect(() => remoteArgv(['sh', '-c', 'id'], { sudo: false })).toThrow(BugError);
  });
});
