/**
 * The parts of one SSH hop that need no server: host key algorithm order, which
 * credentials are tried (keys made by ssh-keygen, one of them encrypted), and the
 * refusal errors for unknown, changed and revoked host keys.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { UserError } from '../../src/errors.js';
import { authMethods, hostKeyError, hostKeyOrder } from '../../src/sources/ssh-connect.js';
import { fingerprintSha256, parseKnownHosts } from '../../src/sources/ssh-known-hosts.js';
import type { SshEndpoint } from '../../src/sources/ssh-target.js';

const haveKeygen = spawnSync('ssh-keygen', ['-?']).error === undefined;
if (!haveKeygen) console.warn('skipping ssh-connect key tests: ssh-keygen is not installed');
const dir = mkdtempSync(path.join(tmpdir(), 'nodescope-sshc-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function keygen(name: string, passphrase = ''): { file: string; blob: Buffer; line: string } {
  const file = path.join(dir, name);
  expect(spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', passphrase, '-f', file]).status).toBe(0);
  const line = readFileSync(`${file}.pub`, 'utf8').trim();
  return { file, blob: Buffer.from(line.split(' ')[1]!, 'base64'), line };
}

function endpoint(identityFiles: string[]): SshEndpoint {
  return { alias: 'n1', hostName: '10.0.0.5', port: 22, user: 'admin', identityFiles, hostKeyAlias: '10.0.0.5', jumps: [] };
}

describe('hostKeyOrder', () => {
  it('offers the algorithms of known key types first, ssh-rsa as its SHA-2 variants', () => {
    expect(hostKeyOrder(['ssh-rsa']).slice(0, 3)).toEqual(['rsa-sha2-512', 'rsa-sha2-256', 'ssh-rsa']);
    expect(hostKeyOrder(['ecdsa-sha2-nistp256'])[0]).toBe('ecdsa-sha2-nistp256');
    expect(hostKeyOrder([])[0]).toBe('ssh-ed25519');
    expect(new Set(hostKeyOrder(['ssh-ed25519', 'ssh-rsa'])).size).toBe(hostKeyOrder([]).length);
  });
});

describe.skipIf(!haveKeygen)('authMethods', () => {
  it('tries the agent first, then each readable unencrypted key; encrypted ones get a note', () => {
    const plain = keygen('plain');
    const locked = keygen('locked', 'secret phrase');
    const { methods, notes } = authMethods(endpoint([locked.file, plain.file, path.join(dir, 'absent')]), '/run/agent.sock');
    expect(methods.map((m) => m.type)).toEqual(['agent', 'publickey']);
    expect(methods.every((m) => m.username === 'admin')).toBe(true);
    expect(notes).toHaveLength(2);
    expect(notes[0]).toContain(locked.file);
    expect(notes[0]).toContain('ssh-add');
  });
});

describe.skipIf(!haveKeygen)('hostKeyError', () => {
  it('names the presented fingerprint, and for a changed key the known line and its fingerprint', () => {
    const presented = keygen('presented');
    const old = keygen('old');
    const entry = parseKnownHosts(`10.0.0.5 ${old.line}\n`, '/home/u/.ssh/known_hosts')[0]!;
    const unknown = hostKeyError({ kind: 'unknown' }, '10.0.0.5', presented.blob, '/home/u/.ssh/known_hosts');
    expect(unknown).toBeInstanceOf(UserError);
    expect(unknown.message).toContain(fingerprintSha256(presented.blob));
    expect(unknown.hint).toContain('--accept-new-host-key');
    const changed = hostKeyError({ kind: 'changed', entry, sameType: true }, '10.0.0.5', presented.blob, '/home/u/.ssh/known_hosts');
    expect(changed.message).toContain(fingerprintSha256(old.blob));
    expect(changed.message).toContain('/home/u/.ssh/known_hosts:1');
    expect(changed.hint).not.toContain('--accept-new-host-key');
    expect(hostKeyError({ kind: 'revoked', entry }, '10.0.0.5', presented.blob, 'f').message).toContain('revoked');
  });
});
