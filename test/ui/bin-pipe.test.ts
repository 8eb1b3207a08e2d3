/**
 * A document bigger than a pipe's buffer reaches the reader whole: Node writes to pipes
 * asynchronously, and the exit (src/cleanup.ts `exitAfterCleanup`) waits for stdout to drain
 * (before, `nodescope show services -o json | jq` got the first 64 KiB). Runs the bundled bin
 * (`npm test` builds it).
 */
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeGeneratedBundles } from '../../bench/gen/capture.js';
import { packageRoot } from '../../src/paths.js';

const bin = path.join(packageRoot(), 'dist', 'bin', 'nodescope.js');
const dir = mkdtempSync(path.join(os.tmpdir(), 'nodescope-bin-pipe-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the bin piped to a reader', () => {
  it('writes a document of several pipe buffers whole, as it writes it to a file', () => {
    if (!existsSync(bin)) throw new Error(`${bin} is missing: run \`npm run build\` (npm test does)`);
    writeGeneratedBundles(dir, { services: 150, endpoints: 3, seed: 'bin-pipe', modes: ['iptables'], conntrack: 10 });
    const args = [bin, 'show', 'services', '-o', 'json', '--replay', path.join(dir, 'iptables')];
    const file = path.join(dir, 'out.json');
    const fd = openSync(file, 'w');
    const toFile = spawnSync(process.execPath, args, { stdio: ['ignore', fd, 'pipe'], encoding: 'utf8' });
    closeSync(fd);
    expect(toFile.status, toFile.stderr).toBe(0);
    const whole = readFileSync(file, 'utf8');
    expect(whole.length).toBeGreaterThan(4 * 65_536);
    const piped = spawnSync(process.execPath, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    expect(piped.status, piped.stderr).toBe(0);
    expect(piped.stdout.length).toBe(whole.length);
    expect(piped.stdout).toBe(whole);
  }, 60_000);
});
