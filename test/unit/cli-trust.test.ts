/** The real binary refuses what it cannot honour, instead of printing an empty answer with exit 0. */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
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
