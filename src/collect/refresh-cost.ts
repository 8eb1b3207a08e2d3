/**
 * How often a live session reads the node again, given what reading costs it. Issue 23's
 * budget: the node CPU refreshes spend stays ≤ 5 % of one core whatever is on screen. A read
 * of a 10,000-rule chain (`iptables -S KUBE-SERVICES -v`: the kernel dumps every rule of the
 * chain, there is no per-range read) costs far more than one of a per-Service chain, so the
 * wait after a refresh stretches with that refresh's own cost; slow parts of a full read are
 * left alone for a while ({@link slowPartDelayMs}). Pure: numbers in, milliseconds out.
 */
import type { ProbeRun } from '../sources/probe-runner.js';

/** The share of one core that refreshes may spend on the node (issue 23: 5 %). */
export const REFRESH_CPU_SHARE = 0.05;

/** A slow part is still re-read at least this often (ms): the header says when the rules were read whole. */
export const MAX_SLOW_PART_DELAY_MS = 300_000;

/** A focused refresh (the open chain alone) gives way to a full read at least every this many refreshes. */
export const FULL_READ_EVERY = 30;

/**
 * How long refreshes leave a part alone after reading it, given what reading and parsing it
 * cost last time (`lastCostMs`): nothing while twenty times that cost fits in the interval,
 * else twenty times the cost, at most {@link MAX_SLOW_PART_DELAY_MS}: a slow part's reads take
 * ≤ ~5 % of the time (issue 23's budget). A 1M-entry conntrack table (~5 s) is re-read every
 * ~100 s, kube-proxy's table of a 10,000-Service nftables node (~15 s) every ~5 min.
 */
export function slowPartDelayMs(intervalMs: number, lastCostMs: number): number {
  const wanted = lastCostMs * 20;
  return wanted <= intervalMs ? 0 : Math.min(MAX_SLOW_PART_DELAY_MS, wanted);
}

/**
 * The node CPU (ms) the probes of one refresh used: each run's `cpuMs` (user + system of the
 * command and its children), or its wall time where the transport cannot measure CPU (SSH,
 * kubectl-debug): a probe is one single-threaded command, so its wall time bounds its CPU.
 */
export function refreshNodeCpuMs(runs: readonly ProbeRun[]): number {
  return runs.reduce((sum, r) => sum + (r.result.cpuMs ?? r.result.durationMs), 0);
}

/**
 * The wait (ms) before the next refresh: the interval, or longer when the last refresh took
 * longer than it (`wallMs`: never two at once) or when its node CPU (`nodeCpuMs`) over the
 * interval would pass {@link REFRESH_CPU_SHARE} of a core (the wait is then `nodeCpuMs / share`).
 */
export function nextRefreshDelayMs(intervalMs: number, wallMs: number, nodeCpuMs: number): number {
  return Math.max(intervalMs, wallMs, Math.ceil(nodeCpuMs / REFRESH_CPU_SHARE));
}
