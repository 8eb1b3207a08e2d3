/**
 * End to end: the real binary in a real terminal (tmux), driven by keys like a
 * user: select a Service, open its KUBE-SVC chain, follow a jump, and read the
 * KUBE-SEP chain's DNAT target off the screen.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/paths.js';

const session = `nodescope-e2e-${process.pid}`;
const binary = path.join(packageRoot(), 'dist', 'src', 'cli.js');

function tmuxAvailable(): boolean {
  const ok = spawnSync('tmux', ['-V']).status === 0;
  if (!ok && process.env.NODESCOPE_REQUIRE_LAB === '1') throw new Error('tmux is required for the end-to-end test');
  if (!ok) console.warn('skipping the tmux end-to-end test: tmux is not installed');
  if (ok && !existsSync(binary)) throw new Error(`${binary} is missing: run \`npm run build\` (npm test does)`);
  return ok;
}

const tmux = (...args: string[]) => spawnSync('tmux', args, { encoding: 'utf8' });
const screen = () => tmux('capture-pane', '-p', '-t', session).stdout;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits (at most 15 s) until the screen shows `text`; returns the screen. */
async function waitFor(text: string | RegExp): Promise<string> {
  for (let i = 0; i < 150; i++) {
    const s = screen();
    if (typeof text === 'string' ? s.includes(text) : text.test(s)) return s;
    await sleep(100);
  }
  throw new Error(`screen never showed ${String(text)}:\n${screen()}`);
}

async function keys(...k: string[]): Promise<void> {
  for (const key of k) {
    tmux('send-keys', '-t', session, key);
    await sleep(150);
  }
}

afterAll(() => {
  tmux('kill-session', '-t', session);
});

describe.runIf(tmuxAvailable())('nodescope in tmux', () => {
  it('selects web, follows its KUBE-SVC chain to a KUBE-SEP with its DNAT target, and quits on q', async () => {
    const fixture = path.join(packageRoot(), 'fixtures', 'lab-iptables');
    const started = tmux('new-session', '-d', '-s', session, '-x', '120', '-y', '32', `node ${binary} --replay ${fixture} --lang en`);
    expect(started.status).toBe(0);
    await waitFor('node lab-node');
    await keys('j'); // empty → web
    await waitFor('endpoints of default/web');
    await keys('Enter');
    const svc = await waitFor(/chain nat\/KUBE-SVC-[A-Z2-7]{16}/);
    expect(svc.match(/33\.3%/g)).toHaveLength(3);
    await keys('Enter'); // the cursor sits on the first endpoint branch
    const sep = await waitFor(/chain nat\/KUBE-SEP-[A-Z2-7]{16}/);
    expect(sep).toMatch(/DNAT 10\.244\.0\.23:8080/);
    await keys('q');
    for (let i = 0; i < 50 && tmux('has-session', '-t', session).status === 0; i++) await sleep(100);
    expect(tmux('has-session', '-t', session).status).not.toBe(0);
  });
});
