/** The real binary's argument handling (built by `npm test` before the tests run). */
import { spawnSync } from 'node:child_process';
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
    for (const args of [['--replay', '/nonexistent-bundle', 'show', 'services'], ['show', 'services', '--replay', '/nonexistent-bundle']]) {
      const r = run(...args);
      expect(r.status).toBe(1);
      expect(r.stderr).toMatch(/is not a capture bundle/);
      expect(r.stderr).toMatch(/^ {2}try: /m);
    }
  });

  it('checks --interval and --lang for every command, a replay and show too', () => {
    for (const args of [
      ['show', 'services', '--replay', fixture('lab-iptables'), '--interval', 'abc'],
      ['--interval', '0', 'show', 'services', '--replay', fixture('lab-iptables')],
      ['show', 'services', '--replay', fixture('lab-iptables'), '--lang', 'fr'],
      ['tour', 'where-rewritten', '--lang', 'xx'],
    ]) {
      const r = run(...args);
      expect(r.status, args.join(' ')).toBe(1);
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
    expect(r.status).toBe(1);
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
