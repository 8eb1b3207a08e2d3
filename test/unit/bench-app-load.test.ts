/**
 * bench/lib/app.ts `measureAppLoad` (the whole-load rows of `npm run bench`): the real binary
 * in tmux on a lab capture, its load's time taken from the app's own write of the loaded frame
 * (the preload), not from a tight screen poll — so the time is there, it is not after the
 * screen showed the frame, and the CPU and peak RSS at that frame are reported.
 */
import { describe, expect, it } from 'vitest';
import { LOAD_POLL_MS, measureAppLoad } from '../../bench/lib/app.js';
import { fixtureDir } from '../helpers/fixtures.js';
import { BINARY, tmuxAvailable } from '../helpers/tmux.js';

describe.runIf(tmuxAvailable('the whole-load measure'))('measureAppLoad', () => {
  it('times the load by the app’s write of the loaded frame, polling the screen slowly', async () => {
    const run = await measureAppLoad(BINARY, fixtureDir('lab-iptables'), 'lab-node', 60_000);
    expect(LOAD_POLL_MS).toBeGreaterThanOrEqual(50);
    // The preload saw the loaded frame: its CPU, the main thread's and the process's peak.
    expect(run.loadedCpuMs).not.toBeNull();
    expect(run.loadedMainCpuMs).not.toBeNull();
    expect(run.rssMb).toBeGreaterThan(0);
    expect(run.loadedMs).toBeGreaterThan(0);
    // Written before (or as) the screen showed it; 1 ms for the two processes' clocks.
    expect(run.loadedMs).toBeLessThanOrEqual(run.seenMs + 1);
  }, 90_000);
});
