/**
 * `--ssh` targets and their resolution through an ssh config file (written per test in
 * a temp HOME): aliases, HostName, User, Port, IdentityFile tokens, ProxyJump chains.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { UserError } from '../../src/errors.js';
import { knownHostsFiles, parseSshTarget, resolveSshTarget } from '../../src/sources/ssh-target.js';

const home = mkdtempSync(path.join(tmpdir(), 'nodescope-sshcfg-'));
mkdirSync(path.join(home, '.ssh'));
afterAll(() => rmSync(home, { recursive: true, force: true }));

/** A HOME whose ~/.ssh/config is `text`; key files named in `keys` exist. */
function withConfig(text: string, keys: string[] = []): { home: string; localUser: string } {
  writeFileSync(path.join(home, '.ssh', 'config'), text);
  for (const k of keys) writeFileSync(path.join(home, '.ssh', k), 'x');
  return { home, localUser: 'me' };
}

describe('parseSshTarget', () => {
  it.each([
    ['node1', { user: undefined, host: 'node1', port: undefined }],
    ['admin@node1', { user: 'admin', host: 'node1', port: undefined }],
    ['admin@10.0.0.5:2222', { user: 'admin', host: '10.0.0.5', port: 2222 }],
    ['[fd00::5]:22', { user: undefined, host: 'fd00::5', port: 22 }],
    ['fd00::5', { user: undefined, host: 'fd00::5', port: undefined }],
    ['ssh://u@h:2', { user: 'u', host: 'h', port: 2 }],
  ])('%s', (text, want) => {
    expect(parseSshTarget(text)).toEqual(want);
  });

  it.each(['', '@host', 'host:0', 'host:99999', 'host:ab', 'a b', 'h;rm'])('refuses %j', (text) => {
    expect(() => parseSshTarget(text)).toThrow(UserError);
  });
});

describe('resolveSshTarget', () => {
  it('applies the Host block of an alias, first value winning', () => {
    const ctx = withConfig('Host n1\n  HostName 10.0.0.5\n  User admin\n  Port 2222\n  IdentityFile ~/.ssh/k1\n  IdentityFile %d/.ssh/k_%r\nHost *\n  User other\n  IdentityFile ~/.ssh/k3\n', ['k1', 'k_admin']);
    const e = resolveSshTarget(parseSshTarget('n1'), ctx);
    expect(e).toMatchObject({ alias: 'n1', hostName: '10.0.0.5', user: 'admin', port: 2222, hostKeyAlias: '10.0.0.5', jumps: [] });
    // k3 is named but does not exist, so it is not tried.
    expect(e.identityFiles).toEqual([path.join(home, '.ssh/k1'), path.join(home, '.ssh/k_admin')]);
  });

  it('lets the command line override user and port', () => {
    const ctx = withConfig('Host n1\n  User admin\n  Port 2222\n');
    expect(resolveSshTarget(parseSshTarget('root@n1:22'), ctx)).toMatchObject({ user: 'root', port: 22 });
  });

  it('defaults to the local user, port 22 and the default identity files', () => {
    const ctx = withConfig('', ['id_ed25519']);
    expect(resolveSshTarget(parseSshTarget('plain'), ctx)).toMatchObject({ hostName: 'plain', user: 'me', port: 22, identityFiles: [path.join(home, '.ssh/id_ed25519')] });
  });

  it('resolves ProxyJump hops through the same config, nested hops first', () => {
    const ctx = withConfig('Host n1\n  HostName 10.0.0.5\n  ProxyJump b2\nHost b2\n  HostName 192.0.2.2\n  User jump\n  ProxyJump b1:2200\nHost b1\n  HostName 192.0.2.1\n');
    const e = resolveSshTarget(parseSshTarget('n1'), ctx);
    expect(e.jumps.map((j) => `${j.user}@${j.hostName}:${j.port}`)).toEqual(['me@192.0.2.1:2200', 'jump@192.0.2.2:22']);
  });

  it('stops a ProxyJump loop', () => {
    const ctx = withConfig('Host a\n  ProxyJump b\nHost b\n  ProxyJump a\n');
    expect(() => resolveSshTarget(parseSshTarget('a'), ctx)).toThrow(UserError);
  });

  it('reads UserKnownHostsFile and HostKeyAlias', () => {
    const ctx = withConfig('Host n1\n  HostKeyAlias node-one\n  UserKnownHostsFile ~/kh1 ~/kh2\n');
    expect(resolveSshTarget(parseSshTarget('n1'), ctx).hostKeyAlias).toBe('node-one');
    expect(knownHostsFiles('n1', ctx)).toEqual([path.join(home, 'kh1'), path.join(home, 'kh2')]);
    expect(knownHostsFiles('other', ctx)).toEqual([path.join(home, '.ssh/known_hosts')]);
  });
});
