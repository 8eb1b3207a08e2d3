/**
 * The CPU time of one child process, measured from this process's side.
 *
 * Node 20 gives no child's rusage: `process.resourceUsage()` and `process.cpuUsage()` are
 * this process's own, `child_process` returns no `rusage`, and libuv reaps children with
 * `waitpid`, not `wait4`. What Linux does give: `/proc/self/stat` fields 16 and 17,
 * `cutime` and `cstime` (proc(5)), the user and system time of every child this process
 * has waited for, including what those children waited for in turn (`ip netns exec`
 * execs its command, so the probe itself is the child). Read just after a child is reaped
 * and compared with the reading after the previous reap, the increase is that child's
 * time. Two children reaped in the same turn of the event loop (libuv reaps all that
 * ended in one pass before their exit callbacks run) are counted together on the first
 * of them; nodescope runs at most one heavy dump at a time, so the big figures are
 * the heavy probe's own. Units: clock ticks of `USER_HZ`, 100 per second on Linux
 * (the /proc ABI fixes it whatever the kernel's HZ).
 */
import { readFileSync } from 'node:fs';

/** Clock ticks per second of /proc's time fields (`sysconf(_SC_CLK_TCK)`, USER_HZ: 100 on every Linux architecture nodescope runs on). */
export const USER_HZ = 100;

/** `cutime + cstime` of `/proc/self/stat`, in ticks; null where there is no /proc (not Linux). */
export function waitedChildrenTicks(statText?: string): number | null {
  let text = statText;
  if (text === undefined) {
    try {
      text = readFileSync('/proc/self/stat', 'utf8');
    } catch {
      return null;
    }
  }
  // The command name (field 2) is in parentheses and may hold spaces: count fields after the last `)`.
  const rest = text.slice(text.lastIndexOf(')') + 2).split(' ');
  // rest[0] is field 3 (state): field n is rest[n - 3].
  const cutime = Number(rest[13]);
  const cstime = Number(rest[14]);
  return Number.isFinite(cutime) && Number.isFinite(cstime) ? cutime + cstime : null;
}

let lastTicks: number | null = null;

/**
 * Call when a child is about to start and no other measured child is running: what was
 * waited for before (a child started elsewhere) is not counted on the next probe.
 */
export function resetChildCpuCount(): void {
  lastTicks = waitedChildrenTicks();
}

/**
 * Call when a child has been reaped (its `exit` event): the CPU milliseconds the
 * children reaped since the previous call (or reset) used; undefined when /proc cannot say.
 */
export function childCpuSinceLastReap(): number | undefined {
  const before = lastTicks;
  const now = waitedChildrenTicks();
  lastTicks = now;
  if (now === null || before === null) return undefined;
  return (Math.max(0, now - before) * 1000) / USER_HZ;
}

/**
 * Call when a child reaped by another thread of this process (the exec worker,
 * exec-off-thread.ts) was measured there: its `ms` are in `/proc/self/stat`'s count too, so
 * they are taken off what this thread's next reap reports.
 */
export function childCpuCountedElsewhere(ms: number): void {
  if (lastTicks !== null) lastTicks += Math.round((ms * USER_HZ) / 1000);
}
