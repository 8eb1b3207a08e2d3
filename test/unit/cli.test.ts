/** The real binary's argument handling (built by `npm test` before the tests run). */
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/paths.js';

const binary = path.join(packageRoot(), 'dist', 'bin', 'nodescope.js');
const fixture = (name: string) => path.join(packageRoot(), 'fixtures', name);
const run = (...args: string[]) => spawnSync('node', [binary, ...args], { encoding: 'utf8', input: '' });

describe('nodescope command line', () => {
  it('applies source options given before the subcommand to it', () => {
    const before = run('--replay', fixture('lab-iptables'), 'show', 'services', '-o', 'json');
    const after = run('show', 'services', '-o', 'json', '--replay', fixture('lab-iptables'));
    expect(before.status).toBe(0);
    expect(JSON.parse(before.stdout).mode).toBe('iptables');
    expect(before.stdout).toBe(after.stdout);
  });

  it('fails with exit 1 and what to try for a source that is not a bundle, wherever the option stands', () => {
    const empty = mkdtempSync(path.join(tmpdir(), 'nodescope-not-bundle-'));
    for (const args of [['--replay', empty, 'show', 'services'], ['show', 'services', '--replay', empty]]) {
      const r = run(...args);
      expect(r.status).toBe(1);
      expect(r.stderr).toMatch(/is not a capture bundle/);
      expect(r.stderr).toMatch(/^ {2}try: /m);
    }
  });

  it('says a --replay folder that is not there does not exist', () => {
    const r = run('show', 'services', '--replay', '/nonexistent-bundle');
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('nodescope: /nonexistent-bundle does not exist');
    expect(r.stderr).not.toContain('is not a capture bundle');
  });

  it('trace --help says --from is required except with --entry host (what the command does)', () => {
    const help = run('trace', '--help').stdout.replace(/\s+/g, ' ');
    expect(help).toContain('--from <ip[:port]|pod> source: IP[:PORT], or a Pod as NAME or NAMESPACE/NAME');
    expect(help).toContain('required, except with --entry host: then the node uses its own address');
    const missing = run('trace', '--to', '10.96.12.34:80/tcp', '--replay', fixture('lab-iptables'));
    expect(missing.status).toBe(2);
    expect(missing.stderr).toContain('--from is missing');
    const host = run('trace', '--entry', 'host', '--to', '10.96.12.34:80/tcp', '--replay', fixture('lab-iptables'));
    expect(host.status, host.stderr).toBe(0);
  });

  it('takes --replay DIR/manifest.json as the bundle DIR', () => {
    const byDir = run('show', 'services', '-o', 'json', '--replay', fixture('lab-iptables'));
    const byManifest = run('show', 'services', '-o', 'json', '--replay', path.join(fixture('lab-iptables'), 'manifest.json'));
    expect(byManifest.status, byManifest.stderr).toBe(0);
    expect(byManifest.stdout).toBe(byDir.stdout);
  });

  it('says a DNS server that is not an IP address is not one, naming the flag given and what it expects', () => {
    for (const [flag, args] of [
      ['--server', ['dig', 'kubernetes.default.svc.cluster.local', '--replay', fixture('lab-iptables'), '--server', 'notanip']],
      ['--dns-server', ['show', 'dns', '--service', 'default/kubernetes', '--replay', fixture('lab-iptables'), '--dns-server', 'notanip']],
      ['--dns-server', ['capture', '-o', '/nonexistent-out', '--replay', fixture('lab-iptables'), '--dns-server', 'notanip']],
    ] as const) {
      const r = run(...args);
      expect(r.status, args.join(' ')).toBe(2);
      expect(r.stderr).toContain(`option '${flag} <ip>' argument 'notanip' is invalid. not an IP address: expected an IPv4 or IPv6 address`);
      expect(r.stderr.replace(`'${flag} <ip>'`, '')).not.toMatch(/--(dns-)?server/);
    }
  });

  it('capture reports its stages on stderr before the final line', () => {
    const out = path.join(mkdtempSync(path.join(tmpdir(), 'nodescope-cli-cap-')), 'bundle');
    const r = run('capture', '--replay', fixture('lab-iptables'), '-o', out);
    expect(r.status, r.stderr).toBe(0);
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines[0]).toBe('nodescope: running the node probes…');
    expect(lines[1]).toMatch(/^nodescope: node probes: \d+ ok/);
    expect(lines.at(-1)).toMatch(/^captured \d+ probes of lab-node into /);
  });

  it('checks --interval and --lang for every command, a replay and show too', () => {
    for (const args of [
      ['show', 'services', '--replay', fixture('lab-iptables'), '--interval', 'abc'],
      ['--interval', '0', 'show', 'services', '--replay', fixture('lab-iptables')],
      ['show', 'services', '--replay', fixture('lab-iptables'), '--lang', 'fr'],
      ['tour', 'where-rewritten', '--lang', 'xx'],
    ]) {
      const r = run(...args);
      expect(r.status, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(/option '--(interval <seconds>|lang <lang>)' argument '(abc|0|fr|xx)' is invalid\. (must be a positive number of seconds|Allowed choices are en, ja\.)/);
    }
    const ok = run('--interval', '0.5', '--lang', 'ja', 'show', 'services', '--replay', fixture('lab-iptables'), '-o', 'json');
    expect(ok.status, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout).mode).toBe('iptables');
  });

  it('refuses to start the TUI without a terminal, pointing to show', () => {
    const r = run('--replay', fixture('lab-iptables'));
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/needs a terminal/);
    expect(r.stderr).not.toMatch(/internal error/);
  });

  it('says "try:" once in a hint', () => {
    const r = run('show', 'bogus', '--replay', fixture('lab-iptables'));
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('try: services, rules');
    expect(r.stderr).not.toContain('try: try:');
  });
});

describe('the nodescope executable', () => {
  const main = path.join(packageRoot(), 'dist', 'src', 'main.js');
  it('runs the command line with React in production mode, and a closed pipe is not an error', () => {
    const r = spawnSync('sh', ['-c', `node ${main} show rules --replay ${fixture('lab-iptables')} | head -1`], { encoding: 'utf8' });
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^node lab-node /);
    expect(r.stderr).toBe('');
  });
});
