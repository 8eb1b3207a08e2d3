/**
 * What one benchmark child process reports, and how the parent runs it.
 *
 * Every measurement runs in a fresh `node` child (`dist/bench/worker.js`), so its peak
 * memory is its own (`process.resourceUsage().maxRSS`, kilobytes → MB) and its parse is a
 * cold one, as the app's first load is. The child prints one JSON object on stdout.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** One child's report. Times in milliseconds, sizes in MB (10^6 bytes for files, 2^20 for RSS). */
export interface Measurement {
  readonly ms: number;
  /** CPU time (user + system) of the measured section, ms: less disturbed by other load than wall time. */
  readonly cpuMs: number;
  /** Peak resident set size of the whole child, MB (2^20 bytes). */
  readonly rssMb: number;
  readonly lines?: number;
  readonly bytesMb?: number;
  readonly diagnostics?: number;
  /** Anything else the task reports (e.g. the walk's verdict). */
  readonly extra?: Readonly<Record<string, string | number>>;
}

/** A failed or timed-out child. */
export interface MeasureFailure {
  readonly error: string;
}

const BENCH_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');

/** A compiled script of dist/bench/ by file name (`worker.js`, `import-worker.js`, `gen.js`). */
export function benchScript(name: string): string {
  return path.join(BENCH_DIR, name);
}

/**
 * Runs `node <script> <args…>` (default `worker.js`) in a fresh node with a heap of up to
 * `heapMb` and `global.gc` exposed (for retained-memory figures), for at most `timeoutMs`.
 * Never throws: a crash, a timeout or unreadable output becomes a {@link MeasureFailure}.
 */
export function measureInChild(args: readonly string[], timeoutMs: number, options: { heapMb?: number; script?: string } = {}): Promise<Measurement | MeasureFailure> {
  return new Promise((resolve) => {
    const script = benchScript(options.script ?? 'worker.js');
    const child = spawn(process.execPath, [`--max-old-space-size=${options.heapMb ?? 4096}`, '--expose-gc', script, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (signal === 'SIGKILL') return resolve({ error: `timeout after ${Math.round(timeoutMs / 1000)} s` });
      if (code !== 0) return resolve({ error: `exit ${code}: ${err.trim().split('\n').slice(-3).join(' | ')}` });
      try {
        resolve(JSON.parse(out.trim().split('\n').pop() ?? '') as Measurement);
      } catch {
        resolve({ error: `unreadable output: ${out.slice(0, 200)}` });
      }
    });
  });
}

/** True for a failure report. */
export function failed(m: Measurement | MeasureFailure): m is MeasureFailure {
  return 'error' in m;
}

/** Median of numbers (mean of the middle two for an even count); NaN for none. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** Times `f` (wall and CPU, ms). */
export function timed<T>(f: () => T): { value: T; ms: number; cpuMs: number } {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const value = f();
  const ms = performance.now() - t0;
  const c = process.cpuUsage(c0);
  return { value, ms, cpuMs: (c.user + c.system) / 1000 };
}

/** Peak RSS of this process so far, MB (2^20 bytes). */
export function peakRssMb(): number {
  return process.resourceUsage().maxRSS / 1024;
}
