/**
 * known_hosts reading and host key checks, with OpenSSH's own `ssh-keygen` as the
 * oracle: it makes the keys, prints fingerprints, and hashes known_hosts files (`-H`).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  appendKnownHost, fingerprintSha256, hostsFieldMatches, keyTypeOfBlob, knownHostsLine, knownHostsName, knownKeyTypes, parseKnownHosts, verifyHostKey,
} from '../../src/sources/ssh-known-hosts.js';

const haveKeygen = spawnSync('ssh-keygen', ['-?'], { encoding: 'utf8' }).error === undefined;
if (!haveKeygen) console.warn('skipping known_hosts tests: ssh-keygen is not installed');
const dir = mkdtempSync(path.join(tmpdir(), 'nodescope-kh-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
/** A fresh key made by ssh-keygen: its public line's type, blob and ssh-keygen's fingerprint. */
function makeKey(type: 'ed25519' | 'ecdsa' | 'rsa' = 'ed25519'): { type: string; blob: Buffer; b64: string; fingerprint: string } {
  const file = path.join(dir, `key${n++}`);
  const gen = spawnSync('ssh-keygen', ['-q', '-t', type, ...(type === 'rsa' ? ['-b', '2048'] : []), '-N', '', '-f', file], { encoding: 'utf8' });
  expect(gen.status, gen.stderr).toBe(0);
  const [keyType, b64] = readFileSync(`${file}.pub`, 'utf8').trim().split(/\s+/) as [string, string];
  const fp = spawnSync('ssh-keygen', ['-l', '-E', 'sha256', '-f', `${file}.pub`], { encoding: 'utf8' }).stdout.split(/\s+/)[1]!;
  return { type: keyType, blob: Buffer.from(b64, 'base64'), b64, fingerprint: fp };
}

/** A known_hosts file written from `lines`, hashed by `ssh-keygen -H` when asked. */
function knownHostsFile(lines: string[], hashed = false): { file: string; text: string } {
  const file = path.join(dir, `kh${n++}`);
  writeFileSync(file, lines.join('\n') + '\n');
  if (hashed) expect(spawnSync('ssh-keygen', ['-H', '-f', file], { encoding: 'utf8' }).status).toBe(0);
  return { file, text: readFileSync(file, 'utf8') };
}

describe.skipIf(!haveKeygen)('known_hosts', () => {
  it('fingerprints and key types agree with ssh-keygen', () => {
    for (const t of ['ed25519', 'ecdsa', 'rsa'] as const) {
      const k = makeKey(t);
      expect(fingerprintSha256(k.blob)).toBe(k.fingerprint);
      expect(keyTypeOfBlob(k.blob)).toBe(k.type);
    }
  });

  it('finds plain, [host]:port, wildcard and negated entries', () => {
    const k = makeKey();
    const { file, text } = knownHostsFile([`node1,10.0.0.5 ${k.type} ${k.b64}`, `[node2]:2222 ${k.type} ${k.b64}`, `*.lab,!bad.lab ${k.type} ${k.b64}`]);
    const entries = parseKnownHosts(text, file);
    expect(verifyHostKey(entries, 'node1', k.blob).kind).toBe('known');
    expect(verifyHostKey(entries, '10.0.0.5', k.blob).kind).toBe('known');
    expect(verifyHostKey(entries, knownHostsName('node2', 2222), k.blob).kind).toBe('known');
    expect(verifyHostKey(entries, knownHostsName('node2', 22), k.blob).kind).toBe('unknown');
    expect(verifyHostKey(entries, 'x.lab', k.blob).kind).toBe('known');
    expect(verifyHostKey(entries, 'bad.lab', k.blob).kind).toBe('unknown');
  });

  it('reads entries hashed by ssh-keygen -H', () => {
    const k = makeKey();
    const { file, text } = knownHostsFile([`node1 ${k.type} ${k.b64}`, `[10.1.2.3]:2200 ${k.type} ${k.b64}`], true);
    expect(text.startsWith('|1|')).toBe(true);
    const entries = parseKnownHosts(text, file);
    expect(verifyHostKey(entries, 'node1', k.blob).kind).toBe('known');
    expect(verifyHostKey(entries, '[10.1.2.3]:2200', k.blob).kind).toBe('known');
    expect(verifyHostKey(entries, 'node9', k.blob).kind).toBe('unknown');
  });

  it('a different key of the same type is "changed", with the line that holds the old one', () => {
    const old = makeKey();
    const fresh = makeKey();
    const { file, text } = knownHostsFile(['# comment', `node1 ${old.type} ${old.b64}`]);
    const v = verifyHostKey(parseKnownHosts(text, file), 'node1', fresh.blob);
    expect(v.kind).toBe('changed');
    if (v.kind === 'changed') expect({ file: v.entry.file, line: v.entry.line }).toEqual({ file, line: 2 });
  });

  it('a key of another type is "changed" (never new), naming the line with the other key; @revoked refuses', () => {
    const rsa = makeKey('rsa');
    const ed = makeKey('ed25519');
    const { file, text } = knownHostsFile([`node1 ${rsa.type} ${rsa.b64}`, `@revoked * ${ed.type} ${ed.b64}`]);
    const entries = parseKnownHosts(text, file);
    expect(entries).toHaveLength(2);
    expect(verifyHostKey(entries, 'node1', ed.blob).kind).toBe('revoked');
    const other = makeKey('ecdsa');
    const v = verifyHostKey(entries, 'node1', other.blob);
    expect(v.kind).toBe('changed');
    if (v.kind === 'changed') expect({ line: v.entry.line, type: v.entry.keyType, sameType: v.sameType }).toEqual({ line: 1, type: 'ssh-rsa', sameType: false });
    expect(knownKeyTypes(entries, 'node1')).toEqual(['ssh-rsa']);
    // A @revoked line for another key is no entry for the host: a host listed nowhere else is new.
    expect(verifyHostKey(entries, 'node2', other.blob)).toEqual({ kind: 'unknown' });
  });

  it('a host named only by @cert-authority is not new (and the CA key never verifies a plain key)', () => {
    const ca = makeKey('ed25519');
    const host = makeKey('ed25519');
    const { file, text } = knownHostsFile([`@cert-authority *.lab,[10.0.0.9]:2222 ${ca.type} ${ca.b64}`]);
    const entries = parseKnownHosts(text, file);
    expect(verifyHostKey(entries, 'n1.lab', host.blob)).toMatchObject({ kind: 'cert-authority', entry: { line: 1 } });
    expect(verifyHostKey(entries, '[10.0.0.9]:2222', ca.blob).kind).toBe('cert-authority');
    expect(verifyHostKey(entries, '10.0.0.9', host.blob).kind).toBe('unknown');
    expect(knownKeyTypes(entries, 'n1.lab')).toEqual([]);
  });

  it('hashed entries and [host]:port: a key of another type under the hashed name is changed; the port-22 name is another host', () => {
    const ed = makeKey('ed25519');
    const rsa = makeKey('rsa');
    const { file, text } = knownHostsFile([knownHostsLine('[10.0.0.7]:2022', ed.blob).trim()]);
    const entries = parseKnownHosts(text, file);
    expect(verifyHostKey(entries, '[10.0.0.7]:2022', rsa.blob)).toMatchObject({ kind: 'changed', sameType: false, entry: { line: 1 } });
    expect(verifyHostKey(entries, '10.0.0.7', rsa.blob).kind).toBe('unknown');
  });

  it('the appended line is hashed, found by ssh-keygen -F, and read back as known', () => {
    const k = makeKey();
    const file = path.join(dir, `kh${n++}`);
    writeFileSync(file, `other ${k.type} ${k.b64}`); // no trailing newline: append must not glue lines
    appendKnownHost(file, '[node1]:2222', k.blob);
    const text = readFileSync(file, 'utf8');
    expect(text.split('\n').filter((l) => l !== '')).toHaveLength(2);
    expect(text).not.toContain('node1');
    const found = spawnSync('ssh-keygen', ['-F', '[node1]:2222', '-f', file], { encoding: 'utf8' });
    expect(found.status).toBe(0);
    expect(verifyHostKey(parseKnownHosts(text, file), '[node1]:2222', k.blob).kind).toBe('known');
  });

  it('hash check is exact and garbage lines are skipped', () => {
    const k = makeKey();
    const line = knownHostsLine('node1', k.blob, Buffer.alloc(20, 1));
    const hosts = line.split(' ')[0]!;
    expect(hostsFieldMatches(hosts, 'node1')).toBe(true);
    expect(hostsFieldMatches(hosts, 'node11')).toBe(false);
    expect(parseKnownHosts(`garbage\n\u0000\u0001\nnode1 ssh-ed25519 !!!\n${line}`, 'f')).toHaveLength(1);
  });
});
