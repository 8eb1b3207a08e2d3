/**
 * The executable users run: package.json's bin, the esbuild bundle dist/bin/nodescope.js
 * (`npm test` builds it: tsc, then scripts/bundle.mjs). It answers --version and --help,
 * prints what the unbundled build prints, names src/ files in its stack traces, and opens
 * the embedded default capture in a real terminal.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/paths.js';
import { SourceMapper } from '../../src/stack-trace.js';
import { TmuxSession, tmuxAvailable } from '../helpers/tmux.js';

const root = packageRoot();
const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string; bin: Record<string, string>; scripts: Record<string, string> };
const bin = path.join(root, pkg.bin.nodescope!);
const unbundled = path.join(root, 'dist', 'src', 'cli.js');
const fixture = (name: string) => path.join(root, 'fixtures', name);
const run = (script: string, ...args: string[]) => spawnSync(process.execPath, [script, ...args], { encoding: 'utf8', input: '' });

beforeAll(() => {
  if (!existsSync(bin)) throw new Error(`${bin} is missing: run \`npm run build\` (npm test does)`);
});

describe('the bundled bin', () => {
  it('is the bundle, what `npm start` runs, and prints the package version and the commands', () => {
    expect(path.relative(root, bin)).toBe(path.join('dist', 'bin', 'nodescope.js'));
    expect(pkg.scripts.start).toBe(`node ${pkg.bin.nodescope}`);
    const version = run(bin, '--version');
    expect(version.status).toBe(0);
    expect(version.stdout.trim()).toBe(pkg.version);
    const help = run(bin, '--help');
    expect(help.status).toBe(0);
    for (const command of ['show', 'trace', 'dig', 'capture', 'tour', 'dash', 'replay']) expect(help.stdout).toMatch(new RegExp(`^ {2}${command}\\b`, 'm'));
  });

  it('prints what the unbundled build prints, for every mode of capture', () => {
    for (const [name, what] of [['lab-iptables', 'rules'], ['lab-nftables', 'rules'], ['lab-cilium', 'lb'], ['lab-iptables', 'services']] as const) {
      const a = run(bin, 'show', what, '-o', 'json', '--replay', fixture(name));
      const b = run(unbundled, 'show', what, '-o', 'json', '--replay', fixture(name));
      expect(a.status, a.stderr).toBe(0);
      expect(a.stdout.length).toBeGreaterThan(100);
      expect(a.stdout).toBe(b.stdout);
    }
    // Eight process runs that each load a capture: slow on a loaded machine, not a hang.
  }, 60_000);

  it('keeps user errors short: exit 1, the message and what to try, no stack', () => {
    const r = run(bin, 'show', 'services', '--replay', '/nonexistent-bundle');
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/is not a capture bundle/);
    expect(r.stderr).not.toMatch(/\bat .*:\d+:\d+/);
  });

  it('names src/ files and lines in a stack trace (a copy away from its package.json cannot find it)', () => {
    const away = mkdtempSync(path.join(os.tmpdir(), 'nodescope-bin-'));
    try {
      cpSync(path.dirname(bin), away, { recursive: true });
      const r = run(path.join(away, path.basename(bin)), '--version');
      expect(r.status).not.toBe(0);
      expect(r.stderr).toMatch(/nodescope package\.json not found/);
      expect(r.stderr).toMatch(/at packageRoot \(.*src\/paths\.ts:\d+:\d+\)/);
      expect(r.stderr).toMatch(/at buildProgram \(.*src\/cli\.tsx:\d+:\d+\)/);
    } finally {
      rmSync(away, { recursive: true, force: true });
    }
  });

  it('maps a bundled position back to its line in src/', () => {
    const chunks = path.join(path.dirname(bin), 'chunks');
    const file = readdirSync(chunks)
      .filter((f) => f.endsWith('.js'))
      .map((f) => path.join(chunks, f))
      .find((f) => readFileSync(f, 'utf8').includes('function packageRoot('));
    expect(file).toBeDefined();
    const lines = readFileSync(file!, 'utf8').split('\n');
    const line = lines.findIndex((l) => l.includes('function packageRoot('));
    const column = lines[line]!.indexOf('function packageRoot(');
    const at = new SourceMapper(path.dirname(bin)).map(file!, line + 1, column + 1);
    const srcLines = readFileSync(path.join(root, 'src', 'paths.ts'), 'utf8').split('\n');
    expect(at?.file).toBe(path.join(root, 'src', 'paths.ts'));
    expect(srcLines[at!.line - 1]).toContain('export function packageRoot(');
    expect(new SourceMapper(path.dirname(bin)).map(path.join(root, 'node_modules', 'x.js'), 1, 1)).toBeNull();
  });
});

const tmux = new TmuxSession(`nodescope-bin-${process.pid}`);
afterAll(() => tmux.kill());

describe.runIf(tmuxAvailable('the bundled bin in tmux'))('the bundled bin in a terminal', () => {
  it('opens the embedded default capture with no source given, and quits on q', async () => {
    expect(tmux.start(`node ${bin} --lang en`, 120, 32)).toBe(0);
    const screen = await tmux.waitFor(['nodescope │', 'node lab-node', 'mode: cilium', 'kube-dns']);
    expect(screen).toMatch(/1 Services +2 Rules/);
    await tmux.keys('q');
    await tmux.waitExit();
    expect(tmux.alive()).toBe(false);
  });
});
