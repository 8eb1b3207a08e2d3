/**
 * A bundle from a customer is untrusted input (issue 24 item 4): a manifest that names a
 * file outside its folder — `..`, an absolute path, a symlinked file or folder leading out —
 * is refused by the real binary with a UserError naming the manifest field and the path,
 * and neither `show` nor `capture --replay` reads or copies the outside file.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/paths.js';
import { ReplayDnsTransport } from '../../src/dns/replay.js';
import { UserError } from '../../src/errors.js';

const binary = path.join(packageRoot(), 'dist', 'bin', 'nodescope.js');
const fixture = path.join(packageRoot(), 'fixtures', 'lab-iptables');
const run = (...args: string[]) => spawnSync('node', [binary, ...args], { encoding: 'utf8', input: '' });
const root = mkdtempSync(path.join(tmpdir(), 'nodescope-hostile-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** The word only the outside files hold: seen in any output, the outside was read. */
const LEAK = 'LEAKED-OUTSIDE-SECRET';

/** A folder outside every bundle: an iptables-save text holding {@link LEAK} and a "kubeconfig". */
const outside = path.join(root, 'secret');
mkdirSync(outside);
const rules = readFileSync(path.join(fixture, 'probes', 'iptables-save.stdout'), 'utf8').replace(':KUBE-SERVICES - [0:0]', `:KUBE-SERVICES - [0:0]\n:${LEAK} - [0:0]`);
writeFileSync(path.join(outside, 'iptables-save.stdout'), rules);
writeFileSync(path.join(outside, 'kubeconfig'), `apiVersion: v1\nkind: Config\nusers: [{name: ${LEAK}, user: {token: ${LEAK}}}]\n`);
writeFileSync(path.join(outside, 'dns.json'), `{"formatVersion":1,"exchanges":[],"note":"${LEAK}"}\n`);

interface Manifest { probes: { id: string; stdoutFile: string }[]; api: { file: string } | null }

let n = 0;
/** A copy of the lab-iptables fixture whose manifest or files `hostile` changes. */
function hostileBundle(hostile: (dir: string, manifest: Manifest) => void): string {
  const dir = path.join(root, `bundle-${n++}`);
  cpSync(fixture, dir, { recursive: true });
  const manifest = JSON.parse(readFileSync(path.join(dir, 'manifest.json'), 'utf8')) as Manifest;
  hostile(dir, manifest);
  writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify(manifest, null, 2));
  return dir;
}

const iptablesIndex = (m: Manifest) => m.probes.findIndex((p) => p.id === 'iptables-save');

/** Every file under `dir`, read (symlinks followed), joined: what a new bundle holds. */
function allText(dir: string): string {
  if (!existsSync(dir)) return '';
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((f) => path.join(dir, f))
    .filter((f) => statSync(f).isFile())
    .map((f) => readFileSync(f, 'utf8'))
    .join('\n');
}

const cases: [string, (dir: string, m: Manifest) => void, RegExp][] = [
  ['a relative path that climbs out (..)', (_d, m) => void (m.probes[iptablesIndex(m)]!.stdoutFile = '../secret/iptables-save.stdout'), /probes\[2\]\.stdoutFile "\.\.\/secret\/iptables-save\.stdout" leads out of the bundle/],
  ['an absolute path', (_d, m) => void (m.probes[iptablesIndex(m)]!.stdoutFile = path.join(outside, 'iptables-save.stdout')), /probes\[2\]\.stdoutFile ".*\/secret\/iptables-save\.stdout" is an absolute path/],
  [
    'a symlinked file that leads out',
    (d) => {
      rmSync(path.join(d, 'probes', 'iptables-save.stdout'));
      symlinkSync(path.join(outside, 'iptables-save.stdout'), path.join(d, 'probes', 'iptables-save.stdout'));
    },
    /probes\[2\]\.stdoutFile "probes\/iptables-save\.stdout" is a symlink that leads out of the bundle/,
  ],
  [
    'a symlinked folder that leads out',
    (d) => {
      const elsewhere = path.join(root, `probes-elsewhere-${n}`);
      cpSync(path.join(d, 'probes'), elsewhere, { recursive: true });
      cpSync(path.join(outside, 'iptables-save.stdout'), path.join(elsewhere, 'iptables-save.stdout'));
      rmSync(path.join(d, 'probes'), { recursive: true });
      symlinkSync(elsewhere, path.join(d, 'probes'));
    },
    /probes\[0\]\.stdoutFile "probes\/uname\.stdout" is a symlink that leads out of the bundle/,
  ],
];

describe('replay of a bundle whose manifest names a file outside it', () => {
  it.each(cases)('%s: show rules exits 1 naming the field and the path, and prints nothing of the outside file', (_what, hostile, message) => {
    const dir = hostileBundle(hostile);
    const r = run('show', 'rules', '-o', 'json', '--replay', dir);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(message);
    expect(r.stdout + r.stderr).not.toContain(LEAK);
  });

  it.each(cases)('%s: capture --replay exits 1 and copies nothing of the outside file', (_what, hostile, message) => {
    const dir = hostileBundle(hostile);
    const out = path.join(root, `out-${n++}`);
    const r = run('capture', '--replay', dir, '--no-dns', '-o', out);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(message);
    expect(allText(out)).not.toContain(LEAK);
  });

  it('api.file that climbs out: show services exits 1 naming api.file, the kubeconfig is not read', () => {
    const dir = hostileBundle((_d, m) => void (m.api = { ...m.api!, file: '../secret/kubeconfig' }));
    const r = run('show', 'services', '--replay', dir);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/api\.file "\.\.\/secret\/kubeconfig" leads out of the bundle/);
    expect(r.stdout + r.stderr).not.toContain(LEAK);
  });

  it('a manifest.json that is a symlink out is refused before it is parsed (its text is never echoed)', () => {
    const dir = hostileBundle(() => {});
    rmSync(path.join(dir, 'manifest.json'));
    symlinkSync(path.join(outside, 'kubeconfig'), path.join(dir, 'manifest.json'));
    const r = run('show', 'rules', '--replay', dir);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/manifest\.json "manifest\.json" is a symlink that leads out of the bundle/);
    expect(r.stdout + r.stderr).not.toContain(LEAK);
  });

  it('extra/dns.json through a symlinked extra/ folder is refused (UserError), not read', () => {
    const dir = hostileBundle((d) => {
      rmSync(path.join(d, 'extra'), { recursive: true });
      symlinkSync(outside, path.join(d, 'extra'));
    });
    expect(() => ReplayDnsTransport.fromBundle(dir)).toThrow(UserError);
    expect(() => ReplayDnsTransport.fromBundle(dir)).toThrow(/extra\/dns\.json .* symlink that leads out/);
  });

  it('an untouched copy of the same fixture still replays (the checks refuse only what leads out)', () => {
    const dir = hostileBundle(() => {});
    const r = run('show', 'rules', '-o', 'json', '--replay', dir);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('KUBE-SERVICES');
  });
});
