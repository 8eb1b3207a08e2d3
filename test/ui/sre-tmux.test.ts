/**
 * Issue 22's "what must show", on the real binary in tmux: a resize redraws without a key;
 * the shell comes back clean on quit (alternate screen). (`:svc`, `/` with a regex and `!`
 * and the packets sort are frame tests so far: test/ui/command-filter.test.tsx,
 * test/ui/sort-terminal.test.tsx.)
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/paths.js';
import { BINARY, TmuxSession, tmuxAvailable } from '../helpers/tmux.js';

const fixture = path.join(packageRoot(), 'fixtures', 'lab-iptables');
const sessions: TmuxSession[] = [];
const open = (what: string) => {
  const s = new TmuxSession(`nodescope-sre-${what}-${process.pid}`);
  sessions.push(s);
  return s;
};
afterEach(() => {
  for (const s of sessions.splice(0)) s.kill();
});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const widest = (screen: string) => Math.max(...screen.split('\n').map((l) => l.trimEnd().length));

describe.runIf(tmuxAvailable('the SRE tmux runs'))('nodescope in tmux, as an SRE uses it', () => {
  it('redraws at the new width when the window is resized, with no key pressed', async () => {
    const tmux = open('resize');
    expect(tmux.start(`node ${BINARY} --replay ${fixture} --lang en`, 140, 30)).toBe(0);
    const wide = await tmux.waitFor(['node lab-node', 'NAMESPACE']);
    expect(widest(wide)).toBeGreaterThan(100);
    spawnSync('tmux', ['resize-window', '-t', tmux.name, '-x', '80', '-y', '30']);
    await sleep(800);
    const narrow = tmux.screen();
    expect(widest(narrow)).toBeLessThanOrEqual(80);
    expect(narrow).toContain('NAMESPACE');
    // Ink's redraw fits the frame to the new width: no line of the old 140-column frame is left.
    expect(narrow.split('\n').filter((l) => l.includes('NAMESPACE'))).toHaveLength(1);
  }, 60_000);

  it('gives the shell back as it was on q (alternate screen)', async () => {
    const tmux = open('altscreen');
    expect(tmux.start('bash --norc --noprofile', 120, 30)).toBe(0);
    await sleep(300);
    await tmux.keys('echo BEFORE-NODESCOPE', 'Enter');
    await tmux.waitFor(['BEFORE-NODESCOPE']);
    spawnSync('tmux', ['send-keys', '-t', tmux.name, `env CI=false node ${BINARY} --replay ${fixture} --lang en`, 'Enter']);
    await tmux.waitFor(['node lab-node']);
    await tmux.keys('q');
    await sleep(1000);
    const after = tmux.screen();
    expect(after).toContain('BEFORE-NODESCOPE');
    expect(after).not.toContain('node lab-node');
    expect(after).not.toContain('NAMESPACE');
  }, 60_000);
});
