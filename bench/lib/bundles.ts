/**
 * The generated captures a benchmark size needs, made once per size, seed and generator
 * version in a temporary directory (never in the repository), by `dist/bench/gen.js` in a
 * child process of its own.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { benchScript } from './measure.js';

/** A benchmark size: Services × endpoints each, and conntrack flows per bundle. */
export interface BenchSize {
  readonly name: string;
  readonly services: number;
  readonly endpoints: number;
  readonly conntrack: number;
}

/** The sizes `npm run bench -- --sizes …` knows. */
export const SIZES: Readonly<Record<string, BenchSize>> = {
  small: { name: 'small', services: 100, endpoints: 5, conntrack: 1_000 },
  large: { name: 'large', services: 10_000, endpoints: 5, conntrack: 100_000 },
  huge: { name: 'huge', services: 25_000, endpoints: 10, conntrack: 1_000_000 },
};

/** A hash of the compiled generator, so a changed generator never reuses old captures. */
function generatorHash(): string {
  const h = createHash('sha256');
  const dir = path.dirname(benchScript('gen.js'));
  for (const f of ['gen.js', ...readdirSync(path.join(dir, 'gen')).filter((x) => x.endsWith('.js')).sort().map((x) => `gen/${x}`)]) {
    h.update(readFileSync(path.join(dir, f)));
  }
  return h.digest('hex').slice(0, 12);
}

/** Where the bundles of `size` live (`<dir>/iptables`, `nftables`, `cilium`). */
export function bundleRoot(size: BenchSize, seed: string, cacheDir = path.join(os.tmpdir(), 'nodescope-bench')): string {
  return path.join(cacheDir, `${size.name}-${size.services}x${size.endpoints}-ct${size.conntrack}-${seed}-${generatorHash()}`);
}

/**
 * Makes the bundles of `size` unless they exist; returns their root and how long
 * generation took (0 when reused). Throws `Error` when the generator fails.
 */
export function ensureBundles(size: BenchSize, seed: string, cacheDir?: string): Promise<{ root: string; generatedMs: number }> {
  const root = bundleRoot(size, seed, cacheDir);
  const done = ['iptables', 'nftables', 'cilium'].every((m) => existsSync(path.join(root, m, 'manifest.json')));
  if (done) return Promise.resolve({ root, generatedMs: 0 });
  rmSync(root, { recursive: true, force: true });
  const t0 = performance.now();
  const args = [
    '--max-old-space-size=8192',
    '--max-semi-space-size=64',
    benchScript('gen.js'),
    '--services', String(size.services),
    '--endpoints', String(size.endpoints),
    '--conntrack', String(size.conntrack),
    '--seed', seed,
    '--out', root,
  ];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('close', (code) => {
      if (code === 0) resolve({ root, generatedMs: performance.now() - t0 });
      else reject(new Error(`generating ${size.name} failed (exit ${code}): ${err.slice(-500)}`));
    });
  });
}
