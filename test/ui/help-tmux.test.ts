/**
 * End to end: the real binary's `?` help in an 80×30 terminal (tmux), where session 18's new
 * user found it cut with no way to scroll: it opens on the keys with the bottom border drawn,
 * G scrolls to the last probe, g back to the top, Esc closes it.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { BINARY, TmuxSession, tmuxAvailable } from '../helpers/tmux.js';

const tmux = new TmuxSession(`nodescope-help-${process.pid}`);

afterAll(() => tmux.kill());

describe.runIf(tmuxAvailable('the help scroll tmux test'))('the ? help in tmux at 80×30', () => {
  it('fits the screen, scrolls to the last probe with G and back with g, and closes on Esc', async () => {
    // The embedded default capture (the Cilium lab replay), as `npm start` opens it.
    expect(tmux.start(`node ${BINARY} --lang en`, 80, 30)).toBe(0);
    await tmux.waitFor(['node lab-node', 'NAMESPACE']);
    await tmux.keys('?');
    let screen = await tmux.waitFor([/lines 1–23 of \d+ · /]);
    const rows = screen.trimEnd().split('\n');
    expect(rows).toHaveLength(30);
    expect(rows[3]).toMatch(/^╭─+╮$/);
    expect(rows[4]).toMatch(/^│ Keys\s+│$/);
    expect(rows[28]).toMatch(/^╰─+╯$/);
    expect(screen).not.toContain('kube-proxy-metrics');
    await tmux.keys('G');
    screen = await tmux.waitFor(['kube-proxy-metrics']);
    const [, from, to, total] = /lines (\d+)–(\d+) of (\d+)/.exec(screen)!;
    expect(Number(to)).toBe(Number(total));
    expect(Number(to) - Number(from)).toBe(22);
    await tmux.keys('g');
    await tmux.waitFor([/│ Keys\s+│/, /lines 1–23 of /]);
    await tmux.keys('Escape');
    screen = await tmux.waitFor([/NAMESPACE\s+NAME/]);
    expect(screen).not.toContain('lines 1–');
    await tmux.keys('q');
    await tmux.waitExit();
    expect(tmux.alive()).toBe(false);
  });
});
