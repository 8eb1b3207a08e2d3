/**
 * End to end: `nodescope --fleet DIR` (the real binary in tmux) over a generated lab fleet:
 * the matrix with its counts, Down + Enter opens lab-node2 on default/web (its usual panes,
 * the Service pinned), Esc returns to the matrix, q quits.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeLabFleet } from '../helpers/fleet-fixtures.js';
import { BINARY, TmuxSession, tmuxAvailable } from '../helpers/tmux.js';

const tmux = new TmuxSession(`nodescope-fleet-${process.pid}`);
const dir = mkdtempSync(path.join(tmpdir(), 'nodescope-fleet-tmux-'));

afterAll(() => {
  tmux.kill();
  rmSync(dir, { recursive: true, force: true });
});

describe.runIf(tmuxAvailable('the fleet tmux test'))('nodescope --fleet in tmux', () => {
  it('shows the matrix, opens a node on a Service with Enter, returns with Esc and quits on q', async () => {
    writeLabFleet(dir);
    expect(tmux.start(`node ${BINARY} --fleet ${dir} --lang en`, 120, 32)).toBe(0);
    const matrix = await tmux.waitFor(['4 nodes: 1 ok · 1 degraded · 1 broken · 1 failed'], 30_000);
    expect(matrix).toMatch(/default\/web +degraded +ok +ok +failed/);
    await tmux.keys('Down');
    await tmux.waitFor(['lab-node2 · default/web: degraded']);
    await tmux.keys('Enter');
    const node = await tmux.waitFor([/\* web \(pinned\)/], 30_000);
    expect(node).toContain('node lab-node2');
    await tmux.keys('Escape');
    await tmux.waitFor(['4 nodes: 1 ok · 1 degraded · 1 broken · 1 failed']);
    await tmux.keys('q');
    await tmux.waitExit();
    expect(tmux.alive()).toBe(false);
  }, 90_000);
});
