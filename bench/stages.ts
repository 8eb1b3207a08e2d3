/**
 * Per-stage budget of a replay's whole load (issue 23 item 4), headless: the app's own
 * {@link Session} over `--replay DIR/MODE`, each published snapshot a stage boundary
 * (first snapshot = bundle open + API objects; then the rules, the LB maps and listings,
 * conntrack, Cilium's CT), then the conntrack pane's index (`conntrackIndex`, what the pane
 * builds on its first frame). Per stage: wall ms, process CPU ms (user + system of every
 * thread: `process.cpuUsage`, so a parse worker counts), heap in use and RSS after it; the
 * run's peak RSS (`resourceUsage().maxRSS`) at the end. Each mode runs in a fresh process.
 *
 * Usage: `node dist/bench/stages.js DIR [--modes iptables,nftables,cilium] [--runs N] [--workers 1,0]`
 * where DIR holds one bundle per mode (a bench capture: /tmp/bn2-bench/huge-…). The parse
 * worker is used as the app uses it (beside a long nft -j rules stage); set
 * `NODESCOPE_PARSE_WORKERS=1` (or `=0`) in the environment to force it on (off), or pass
 * `--workers 1,0` to run each mode with each setting, alternated (medians at the end).
 * Total CPU is also given for the main thread alone (Linux /proc), beside the process'.
 * Prints a Markdown table per mode on stdout; progress on stderr.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openReplaySession } from '../src/collect/replay-session.js';
import { conntrackIndex } from '../src/analysis/conntrack-index.js';
import type { NodeSnapshot } from '../src/model/snapshot.js';

/** One stage's figures: ms, CPU ms, MB (2^20 bytes). */
interface StageFigure {
  readonly stage: string;
  readonly ms: number;
  readonly cpuMs: number;
  readonly heapMb: number;
  readonly rssMb: number;
}

/** What a child reports for one mode. */
interface ModeReport {
  readonly mode: string;
  readonly stages: readonly StageFigure[];
  readonly totalMs: number;
  readonly totalCpuMs: number;
  readonly mainCpuMs: number;
  readonly peakRssMb: number;
  readonly entries: number;
}

const MB = 1024 * 1024;

/**
 * CPU ms of this process' main thread alone (Linux: utime + stime of
 * /proc/self/task/PID/stat, in clock ticks of 10 ms); NaN elsewhere. A parse worker's
 * CPU is in {@link cpuMsNow} but not here.
 */
function mainThreadCpuMs(): number {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return Number.NaN;
  }
}

function cpuMsNow(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/** Loads `dir` whole through a replay session, timing each published snapshot; then the pane's index. */
async function measureMode(dir: string, mode: string): Promise<ModeReport> {
  const stages: StageFigure[] = [];
  const t0 = performance.now();
  const c0 = cpuMsNow();
  const m0 = mainThreadCpuMs();
  let [lastT, lastC] = [t0, c0];
  const mark = (stage: string): void => {
    const [t, c] = [performance.now(), cpuMsNow()];
    if (process.env.NODESCOPE_GC_LOG === '1') process.stderr.write(`stage-end at ${t.toFixed(0)} ms: ${stage}\n`);
    const mem = process.memoryUsage();
    stages.push({ stage, ms: t - lastT, cpuMs: c - lastC, heapMb: mem.heapUsed / MB, rssMb: mem.rss / MB });
    [lastT, lastC] = [t, c];
  };
  const session = await openReplaySession(dir);
  mark('open (manifest, api.json read)');
  let pending: readonly string[] | null = null;
  session.subscribe(() => {
    const snap = session.getState().snapshot;
    if (!snap) return;
    const now: readonly string[] = snap.pending ?? [];
    if (pending === null) mark('first snapshot (API objects)');
    else if (now.length < pending.length) mark(pending.filter((p) => !now.includes(p)).join(', '));
    pending = now;
  });
  await session.start();
  const snapshot = session.getState().snapshot as NodeSnapshot;
  if (pending !== null && (pending as readonly string[]).length > 0) mark(`${(pending as readonly string[]).join(', ')} (last)`);
  const index = conntrackIndex(snapshot);
  mark('conntrack pane index');
  await session.stop();
  return {
    mode,
    stages,
    totalMs: performance.now() - t0,
    totalCpuMs: cpuMsNow() - c0,
    mainCpuMs: mainThreadCpuMs() - m0,
    peakRssMb: process.resourceUsage().maxRSS / 1024,
    entries: index.rows.length,
  };
}

function table(r: ModeReport & { readonly workers?: string }): string[] {
  const f = (x: number) => Math.round(x).toLocaleString('en-US');
  return [
    `### ${r.mode}${r.workers ? ` (NODESCOPE_PARSE_WORKERS=${r.workers})` : ''}: ${f(r.totalMs)} ms wall, ${f(r.totalCpuMs)} ms CPU (main thread ${f(r.mainCpuMs)}), peak RSS ${f(r.peakRssMb)} MB, ${f(r.entries)} conntrack entries in the index`,
    '',
    '| stage | wall ms | CPU ms | heap after MB | RSS after MB |',
    '|---|--:|--:|--:|--:|',
    ...r.stages.map((s) => `| ${s.stage} | ${f(s.ms)} | ${f(s.cpuMs)} | ${f(s.heapMb)} | ${f(s.rssMb)} |`),
    '',
  ];
}

/** Medians per mode and worker setting (wall, process CPU, main-thread CPU, peak RSS) over the runs. */
function medians(all: readonly (ModeReport & { readonly workers?: string })[]): string[] {
  const groups = new Map<string, (ModeReport & { readonly workers?: string })[]>();
  for (const r of all) {
    const key = `${r.mode}${r.workers === undefined ? '' : ` workers=${r.workers}`}`;
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  const median = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
  };
  const f = (x: number) => Math.round(x).toLocaleString('en-US');
  return [
    '### medians',
    '',
    '| mode | runs | wall ms | process CPU ms | main-thread CPU ms | peak RSS MB |',
    '|---|--:|--:|--:|--:|--:|',
    ...[...groups].map(([k, rs]) => `| ${k} | ${rs.length} | ${f(median(rs.map((r) => r.totalMs)))} | ${f(median(rs.map((r) => r.totalCpuMs)))} | ${f(median(rs.map((r) => r.mainCpuMs)))} | ${f(median(rs.map((r) => r.peakRssMb)))} |`),
    '',
  ];
}

async function main(argv: readonly string[]): Promise<void> {
  const child = argv.indexOf('--child');
  if (child >= 0) {
    const [dir, mode] = [argv[child + 1]!, argv[child + 2]!];
    process.stdout.write(`${JSON.stringify(await measureMode(path.join(dir, mode), mode))}\n`);
    return;
  }
  const dir = argv.find((a, i) => !a.startsWith('--') && !argv[i - 1]?.startsWith('--'));
  if (!dir) throw new Error('usage: node dist/bench/stages.js DIR [--modes iptables,nftables,cilium] [--runs N]');
  const opt = (name: string) => argv[argv.indexOf(name) + 1];
  const modes = argv.includes('--modes') ? opt('--modes')!.split(',') : ['iptables', 'nftables', 'cilium'];
  const runs = argv.includes('--runs') ? Number(opt('--runs')) : 1;
  // `--workers 1,0`: each mode with the parse worker on and off, alternated, in the same run.
  const workers = argv.includes('--workers') ? opt('--workers')!.split(',') : [undefined];
  const self = fileURLToPath(import.meta.url);
  const out: string[] = [];
  const all: (ModeReport & { readonly workers?: string })[] = [];
  for (let i = 0; i < runs; i++) {
    for (const mode of modes) {
      for (const w of workers) {
        process.stderr.write(`stages: ${mode}${w === undefined ? '' : ` workers=${w}`} run ${i + 1} (${new Date().toISOString()}, load ${loadavg()[0]!.toFixed(1)})\n`);
        const env = w === undefined ? process.env : { ...process.env, NODESCOPE_PARSE_WORKERS: w };
        const r = spawnSync(process.execPath, [self, '--child', dir, mode], { stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 1 << 24, env });
        if (r.status !== 0) {
          out.push(`### ${mode}: failed (${r.status ?? r.signal})`, '');
          continue;
        }
        const report = { ...(JSON.parse(r.stdout.toString().trim().split('\n').pop()!) as ModeReport), ...(w === undefined ? {} : { workers: w }) };
        all.push(report);
        out.push(...table(report));
      }
    }
  }
  out.push(...medians(all));
  process.stdout.write(`${out.join('\n')}\n`);
}

await main(process.argv.slice(2));
