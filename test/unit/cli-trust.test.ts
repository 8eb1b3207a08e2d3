/** The real binary refuses what it cannot honour, instead of printing an empty answer with exit 0. */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/paths.js';

const binary = path.join(packageRoot(), 'dist', 'bin', 'nodescope.js');
const fixture = (name: string) => path.join(packageRoot(), 'fixtures', name);
const run = (...args: string[]) => spawnSync('node', [binary, ...args], { encoding: 'utf8', input: '' });
const tmp = () => mkdtempSync(path.join(tmpdir(), 'nodescope-cli-trust-'));

describe('--api-file that holds no API objects', () => {
  it('exits 1 with the parser diagnostic and a hint, printing no table', () => {
    const file = path.join(tmp(), 'bad.json');
    writeFileSync(file, '{bad');
    const r = run('show', 'services', '--replay', fixture('lab-iptables'), '--api-file', file);
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`${file}:1:`);
    expect(r.stderr).toMatch(/^ {2}try: /m);
  });
});

describe('--netns that does not exist', () => {
  it('exits 1 naming it, with the hint `ip netns list`, for show and trace alike', () => {
    const name = `nosuchns-${process.pid}`;
    for (const args of [['show', 'rules'], ['trace', '--to', '10.96.12.34:80/tcp']]) {
      const r = run(...args, '--netns', name);
      expect(r.status).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain(`"${name}"`);
      expect(r.stderr).toContain('try: ip netns list');
    }
  });
});

describe('capture -o DIR', () => {
  it('refuses a non-empty DIR; --force replaces the old bundle without leaving its files', () => {
    const dir = tmp();
    mkdirSync(path.join(dir, 'probes'));
    writeFileSync(path.join(dir, 'probes', 'stale.stdout'), 'stale');
    writeFileSync(path.join(dir, 'api.json'), 'stale');
    const refused = run('capture', '--replay', fixture('lab-iptables'), '--no-dns', '-o', dir);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(/--force/);
    const forced = run('capture', '--replay', fixture('lab-iptables'), '--no-dns', '--force', '-o', dir);
    expect(forced.status).toBe(0);
    const manifest = JSON.parse(readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
    expect(readFileSync(path.join(dir, 'api.json'), 'utf8')).not.toBe('stale');
    expect(manifest.api).not.toBeNull();
    expect(existsSync(path.join(dir, 'probes', 'stale.stdout'))).toBe(false);
  });

  it('says on stderr that it captured the embedded default capture when no source is named', () => {
    const r = run('capture', '--no-dns', '-o', path.join(tmp(), 'out'));
    expect(r.status).toBe(0);
    expect(r.stderr).toMatch(/no source given: capturing the embedded default capture \(replay of .*lab-cilium\)/);
    const named = run('capture', '--replay', fixture('lab-iptables'), '--no-dns', '-o', path.join(tmp(), 'out'));
    expect(named.stderr).not.toMatch(/no source given/);
  });
});

describe('show services --service', () => {
  it('exits 1 for a Service that is not there, naming close ones, and prints no table', () => {
    const r = run('show', 'services', '--replay', fixture('lab-iptables'), '--service', 'default/wbe');
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/no Service default\/wbe/);
    expect(r.stderr).toMatch(/try: one of default\/web/);
  });
});

describe('show dns without --service', () => {
  it('exits 2 (a usage error) and names Services the capture holds', () => {
    const r = run('show', 'dns', '--replay', fixture('lab-iptables'));
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/show dns needs --service NS\/NAME/);
    expect(r.stderr).toMatch(/try: e\.g\. .*default\/web/);
  });
});

describe('dig exit status', () => {
  it('is 9 for a question the capture does not hold (no reply), 0 for a recorded answer', () => {
    const missing = run('dig', 'nope.default.svc.cluster.local', '--replay', fixture('lab-iptables'));
    expect(missing.status).toBe(9);
    expect(missing.stdout).toMatch(/no reply: NOT-CAPTURED/);
    const answered = run('dig', 'web.default.svc.cluster.local', '--replay', fixture('lab-iptables'));
    expect(answered.status).toBe(0);
    expect(answered.stdout).toMatch(/status: NOERROR/);
  });
});

describe('dig --help', () => {
  it('offers only the record types dig asks: each one it lists is accepted (PTR and TXT were listed, then refused)', () => {
    const help = run('dig', '--help');
    expect(help.status).toBe(0);
    const choices = /--type <type> +record type \(choices: ([^)]*?),\s+default/.exec(help.stdout.replace(/\s+/g, ' '))?.[1];
    expect(choices).toBeDefined();
    const types = [...choices!.matchAll(/"([A-Z]+)"/g)].map((m) => m[1]!);
    expect(types).toEqual(['A', 'AAAA', 'SRV', 'CNAME']);
    for (const type of types) {
      const r = run('dig', 'web.default.svc.cluster.local', '--type', type, '--replay', fixture('lab-iptables'));
      expect(r.stderr).not.toMatch(/not a type nodescope asks|invalid/);
      expect(r.status, `${type}: ${r.stderr}`).not.toBe(1); // 0 answered, 9 not in the capture (dig(1)'s no reply)
    }
  });
});
