/**
 * The real binary (`node dist/bin/nodescope.js --replay DIR --lang en`, the package's bin)
 * in a 120×40 tmux terminal: process start → first frame, → first frame with data,
 * keypress → next frame while scrolling nat KUBE-SERVICES and the conntrack pane, and the
 * process's peak RSS.
 *
 * Frames are detected by polling `tmux capture-pane` (see tmux.ts): the first frame is the
 * first screen showing the header (`nodescope │`), the data frame the first one showing the
 * node's name and a Service row. A tiny `--require` preload records, inside the app, the
 * CPU time it had used when it first wrote the header and the data to its terminal (wall
 * times on a shared machine move with the load; CPU time much less), and its
 * `process.resourceUsage().maxRSS`; it writes them as JSON when the process exits (after `q`).
 * A whole load's time ({@link measureAppLoad}) is when the app wrote its loaded frame, by the
 * preload's clock: the screen is polled slowly meanwhile, so the poller does not take a core
 * from the app it measures.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TmuxProgram } from './tmux.js';

/** One run of the app on one bundle. Times in ms; null where the step could not be measured. */
export interface AppRun {
  readonly firstFrameMs: number;
  readonly dataFrameMs: number;
  readonly kubeServicesKeysMs: readonly number[];
  /** Key → frame in the conntrack pane; null when the binary has no conntrack pane yet. */
  readonly conntrackKeysMs: readonly number[] | null;
  readonly rssMb: number | null;
  /** CPU ms (user + system, all threads) from process start to the first write of the header. */
  readonly firstFrameCpuMs: number | null;
  /** CPU ms from process start to the first write holding the node's name and a Service row. */
  readonly dataFrameCpuMs: number | null;
}

/**
 * What the preload writes at exit (NODESCOPE_BENCH_OUT): CPU ms at the two frames, maxRSS in KB;
 * with NODESCOPE_BENCH_LOADED (a regular expression), the process' and the main thread's CPU ms
 * (Linux /proc, 10 ms ticks) at the first write it matches.
 */
interface HookReport {
  readonly firstCpuMs?: number;
  readonly dataCpuMs?: number;
  readonly loadedCpuMs?: number;
  readonly loadedMainCpuMs?: number;
  /** When the loaded frame was written, ms since the epoch (`performance.timeOrigin + performance.now()`, the clock the bench starts tmux by). */
  readonly loadedAtMs?: number;
  readonly maxRssKb?: number;
}

const HOOK = `const fs = require('fs');
const out = {};
const [node, service] = (process.env.NODESCOPE_BENCH_MARK || '').split(',');
const loaded = process.env.NODESCOPE_BENCH_LOADED ? new RegExp(process.env.NODESCOPE_BENCH_LOADED, 's') : null;
const cpu = () => { const c = process.cpuUsage(); return (c.user + c.system) / 1000; };
const mainCpu = () => { try { const f = fs.readFileSync('/proc/self/task/' + process.pid + '/stat', 'utf8'); const x = f.slice(f.lastIndexOf(')') + 2).split(' '); return (Number(x[11]) + Number(x[12])) * 10; } catch { return undefined; } };
const write = process.stdout.write;
process.stdout.write = function (chunk, ...rest) {
  const s = typeof chunk === 'string' ? chunk : String(chunk);
  if (out.firstCpuMs === undefined && s.includes('nodescope')) out.firstCpuMs = cpu();
  if (out.dataCpuMs === undefined && s.includes(node) && s.includes(service)) out.dataCpuMs = cpu();
  if (out.loadedCpuMs === undefined && loaded && loaded.test(s)) { out.loadedAtMs = performance.timeOrigin + performance.now(); out.loadedCpuMs = cpu(); out.loadedMainCpuMs = mainCpu(); }
  return write.call(this, chunk, ...rest);
};
process.on('exit', () => {
  out.maxRssKb = process.resourceUsage().maxRSS;
  try { fs.writeFileSync(process.env.NODESCOPE_BENCH_OUT, JSON.stringify(out)); } catch {}
});
`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The real binary running in tmux under the preload, and how to end it. */
interface StartedApp {
  readonly app: TmuxProgram;
  /** Presses `q`, waits for the process to exit and returns what the preload wrote ({} when nothing). */
  quit(): Promise<HookReport>;
  /** Kills the tmux session and removes the preload's files (call in `finally`). */
  end(): void;
}

/** Starts `cli --replay bundleDir --lang en` in a 120×40 tmux terminal with the preload that marks `node`'s data frame. */
function startApp(tag: string, cli: string, bundleDir: string, node: string, nodeEnv: string | null, loadedMark: RegExp | null = null): StartedApp {
  const work = path.join(os.tmpdir(), `nodescope-bench-${tag}-${process.pid}`);
  const hook = `${work}.cjs`;
  const outFile = `${work}.json`;
  writeFileSync(hook, HOOK);
  rmSync(outFile, { force: true });
  const mark = loadedMark ? `NODESCOPE_BENCH_LOADED='${loadedMark.source.replace(/'/g, `'\\''`)}' ` : '';
  // tmux starts the command in its server's environment, not this process's: the parse worker's switch is passed on explicitly.
  const workers = process.env.NODESCOPE_PARSE_WORKERS ? `NODESCOPE_PARSE_WORKERS=${process.env.NODESCOPE_PARSE_WORKERS.replace(/[^0-9]/g, '')} ` : '';
  const cmd = `${nodeEnv ? `NODE_ENV=${nodeEnv} ` : ''}${mark}${workers}NODESCOPE_BENCH_OUT=${outFile} NODESCOPE_BENCH_MARK=${node},kube-dns ${process.execPath} --require ${hook} ${cli} --replay ${bundleDir} --lang en`;
  const app = TmuxProgram.start(`nodescope-bench-${tag}-${process.pid}`, cmd, 120, 40);
  return {
    app,
    async quit() {
      app.keys('q');
      for (let i = 0; i < 200 && app.alive(); i++) await sleep(50);
      try {
        return JSON.parse(readFileSync(outFile, 'utf8')) as HookReport;
      } catch {
        return {};
      }
    },
    end() {
      app.kill();
      rmSync(hook, { force: true });
      rmSync(outFile, { force: true });
    },
  };
}

const rssMbOf = (report: HookReport): number | null => (report.maxRssKb !== undefined ? report.maxRssKb / 1024 : null);

/**
 * Runs the app (`cli`: the script node starts; `nodeEnv`: its NODE_ENV, unset by default) once
 * on `bundleDir`, presses `keys` keys in each pane. Throws when the app
 * never shows its data (within `timeoutMs`); always ends the tmux session.
 */
export async function measureApp(cli: string, bundleDir: string, node: string, keys: number, timeoutMs: number, nodeEnv: string | null = null): Promise<AppRun> {
  const started = startApp('app', cli, bundleDir, node, nodeEnv);
  const { app } = started;
  try {
    const first = await app.waitFor((s) => s.includes('nodescope │'), timeoutMs);
    const data = await app.waitFor((s) => s.includes(`node ${node}`) && s.includes('kube-dns'), timeoutMs);
    app.keys('2');
    await app.waitFor((s) => s.includes('KUBE-SERVICES'), timeoutMs);
    // Each key waits for the frame of the previous one: the app's key handler reads the
    // state of the last render, so keys sent faster than frames are read with stale state.
    app.keys('/');
    await app.waitFor((s) => s.includes('filter:'), timeoutMs);
    app.type('nat KUBE-SERVICES');
    await app.waitFor((s) => s.includes('filter: nat KUBE-SERVICES'), timeoutMs);
    app.keys('Enter');
    await app.waitFor((s) => !s.includes('▏'), timeoutMs);
    app.keys('Enter');
    await app.waitFor((s) => s.includes('chain nat/KUBE-SERVICES'), timeoutMs);
    await sleep(100);
    const kubeServices = await keyTimes(app, keys);
    app.keys('4');
    await sleep(300);
    const conntrackShown = !/nothing here/.test(app.screen());
    const conntrack = conntrackShown ? await keyTimes(app, keys) : null;
    const report = await started.quit();
    return {
      firstFrameMs: first.ms,
      dataFrameMs: data.ms,
      kubeServicesKeysMs: kubeServices,
      conntrackKeysMs: conntrack,
      rssMb: rssMbOf(report),
      firstFrameCpuMs: report.firstCpuMs ?? null,
      dataFrameCpuMs: report.dataCpuMs ?? null,
    };
  } finally {
    started.end();
  }
}

/** One run of the app until a bundle is wholly loaded. Time in ms, RSS in MB (null: not reported). */
export interface AppLoadRun {
  /**
   * Process start (tmux started) → the app wrote the loaded frame: the rules' mode in the header
   * and the conntrack pane's entries (the preload's clock); the screen's time when the preload
   * did not report it.
   */
  readonly loadedMs: number;
  /** Process start → the loaded frame seen on tmux's screen, polled every {@link LOAD_POLL_MS} ms (late by up to one poll). */
  readonly seenMs: number;
  readonly rssMb: number | null;
  /** CPU ms (all threads) and the main thread's, when the app wrote the loaded frame; null when not seen. */
  readonly loadedCpuMs: number | null;
  readonly loadedMainCpuMs: number | null;
}

/**
 * How often {@link measureAppLoad} reads tmux's screen while the app loads. The load's time comes
 * from the app's own write (the preload), so the screen is only polled to know when to go on: at
 * tmux.ts's 2 ms the polls (a tmux client each, and the server's capture) kept about one of a
 * 2-core machine's cores busy for the whole load, beside the app and its GC threads.
 */
export const LOAD_POLL_MS = 100;

/**
 * Starts the real binary on `bundleDir` (any mode: iptables, nftables, cilium), opens the
 * conntrack pane and waits until the header names the mode (rules parsed, no longer
 * `reading rules`) and the pane counts its entries (the conntrack table parsed), then
 * quits: the time and peak RSS of a whole load. `also`, when given, must match the screen too (the
 * Cilium mode line counts the LB map frontends once those maps are parsed). `pollMs`: how often
 * the screen is read meanwhile. Throws when that takes over `timeoutMs`; always ends the tmux session.
 */
export async function measureAppLoad(
  cli: string,
  bundleDir: string,
  node: string,
  timeoutMs: number,
  also: RegExp | null = null,
  nodeEnv: string | null = null,
  pollMs = LOAD_POLL_MS,
): Promise<AppLoadRun> {
  // The loaded frame as the app writes it (a whole frame per write): the mode read, the entries counted.
  const started = startApp('load', cli, bundleDir, node, nodeEnv, new RegExp(`^(?!.*reading rules)(?=.*mode: )(?=.* entries · )${also ? `(?=.*${also.source})` : ''}`));
  const { app } = started;
  try {
    await app.waitFor((s) => s.includes('nodescope │'), timeoutMs, app.startedAt, pollMs);
    app.keys('4');
    const loaded = await app.waitFor((s) => /^mode: (?!… \(reading rules\))/m.test(s) && / entries · /.test(s) && (also === null || also.test(s)), timeoutMs, app.startedAt, pollMs);
    // A last stage may still be settling: give it a moment before reading the peak.
    await sleep(1000);
    const report = await started.quit();
    const written = report.loadedAtMs !== undefined ? report.loadedAtMs - (performance.timeOrigin + app.startedAt) : null;
    return {
      loadedMs: written ?? loaded.ms,
      seenMs: loaded.ms,
      rssMb: rssMbOf(report),
      loadedCpuMs: report.loadedCpuMs ?? null,
      loadedMainCpuMs: report.loadedMainCpuMs ?? null,
    };
  } finally {
    started.end();
  }
}

async function keyTimes(app: TmuxProgram, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const ms = await app.keyToFrame('j');
    if (ms !== null) out.push(ms);
    // Let Ink's 30 fps render throttle settle so each key is a leading-edge render.
    await sleep(60);
  }
  return out;
}
