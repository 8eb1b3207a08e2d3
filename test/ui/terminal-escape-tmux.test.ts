/**
 * Issue 24, item 1, end to end: the TUI and the dashboard of the real binary on a hostile
 * bundle (test/helpers/hostile-bundle.ts: OSC 0 retitle, OSC 52 clipboard write, CSI 2J clear
 * screen, a C1 CSI and a bidi override in a node name, a Service's namespace and name, comments,
 * a CNAME) in a tmux that obeys them: `set-clipboard on` (an OSC 52 makes a paste buffer),
 * `allow-rename on`, `set-titles on` (automatic-rename off: only an escape may rename). After visiting every pane (1..7): the pane title is the one
 * it had, no paste buffer exists, and the screen shows the payload escaped and was not cleared.
 * A private tmux server (`-L`), so no option or buffer of anyone else's is touched.
 */
import { spawnSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BINARY, tmuxAvailable } from '../helpers/tmux.js';
import { makeHostileBundle, PAYLOAD_SHOWN_HEAD } from '../helpers/hostile-bundle.js';

// NODESCOPE_BIN: run against another build (e.g. main's, to see it fail there).
const binary = process.env.NODESCOPE_BIN ?? BINARY;
const SOCKET = `nodescope-esc-${process.pid}`;
const CONF = path.join(tmpdir(), `${SOCKET}.conf`);
const tmux = (...args: string[]) => spawnSync('tmux', ['-L', SOCKET, '-f', CONF, ...args], { encoding: 'utf8' });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let bundle = '';

beforeAll(() => {
  bundle = makeHostileBundle();
  writeFileSync(CONF, 'set -g set-clipboard on\nset -g allow-rename on\nset -g set-titles on\nset -g history-limit 0\nset -g automatic-rename off\n');
});
afterAll(() => {
  tmux('kill-server');
  rmSync(CONF, { force: true });
  if (bundle) rmSync(bundle, { recursive: true, force: true });
});

/** Starts `command` in session `name` once Enter is sent (so the title can be read before it runs); returns the title then. */
function startPaused(name: string, command: string): string {
  expect(tmux('new-session', '-d', '-s', name, '-x', '160', '-y', '40', `read _; exec env CI=false LANG=C.UTF-8 ${command}`).status).toBe(0);
  return tmux('display-message', '-p', '-t', name, '#{pane_title}').stdout;
}

const screen = (name: string) => tmux('capture-pane', '-p', '-t', name).stdout;

async function waitFor(name: string, test: (s: string) => boolean, what: string, ms = 20_000): Promise<string> {
  for (const started = Date.now(); Date.now() - started < ms; await sleep(100)) {
    const s = screen(name);
    if (test(s)) return s;
  }
  throw new Error(`screen never showed ${what}:\n${screen(name)}`);
}

/** What the terminal was told: the pane title, the window name and the paste buffers. */
function terminalState(name: string) {
  return {
    title: tmux('display-message', '-p', '-t', name, '#{pane_title}').stdout,
    window: tmux('display-message', '-p', '-t', name, '#{window_name}').stdout,
    buffers: tmux('list-buffers').stdout,
  };
}

describe.runIf(tmuxAvailable('the terminal-escape tmux test'))('a hostile bundle in a tmux that obeys OSC 0 and OSC 52', () => {
  it('the TUI: every pane shows the payload escaped; title, window name and paste buffers untouched; screen not cleared', async () => {
    const name = 'tui';
    const title = startPaused(name, `node ${binary} --replay ${bundle} --lang en`);
    const before = terminalState(name);
    tmux('send-keys', '-t', name, 'Enter');
    // The pane bar is ours alone; once drawn, the hostile names were drawn too (raw or escaped).
    await waitFor(name, (s) => s.includes('1 Services'), 'the pane bar');
    await sleep(500);
    expect(terminalState(name), 'after the first frame').toEqual(before);
    // The header names the node (hostile) on every pane.
    const header = `node lab-node${PAYLOAD_SHOWN_HEAD}`;
    const first = await waitFor(name, (s) => s.includes(header) && s.includes(`svc${PAYLOAD_SHOWN_HEAD}`), 'the escaped node and Service names');
    expect(first).toContain(`ns${PAYLOAD_SHOWN_HEAD}`);
    for (const key of ['1', '2', '3', '4', '5', '6', '7']) {
      tmux('send-keys', '-t', name, key);
      await sleep(700);
      const s = screen(name);
      expect(s, `pane ${key}`).toContain(header);
      expect(s, `pane ${key}`).not.toContain('PWNED\n');
    }
    tmux('send-keys', '-t', name, '1');
    const last = await waitFor(name, (s) => s.includes(`svc${PAYLOAD_SHOWN_HEAD}`), 'the Services pane again');
    // A CSI 2J that got through would have left the screen blank below where it was drawn.
    expect(last.split('\n').filter((l) => l.trim() !== '').length).toBeGreaterThan(10);
    const after = terminalState(name);
    expect(after).toEqual(before);
    expect(after.title).toBe(title);
    expect(after.title).not.toContain('PWNED');
    expect(after.buffers).toBe('');
    tmux('send-keys', '-t', name, 'q');
  });

  it('the dashboard: its head shows the node name escaped; title and paste buffers untouched', async () => {
    const name = 'dash';
    startPaused(name, `node ${binary} dash --service default/web --replay ${bundle} --lang en`);
    const before = terminalState(name);
    tmux('send-keys', '-t', name, 'Enter');
    await waitFor(name, (x) => x.includes('nodescope dash'), 'the dashboard head');
    await sleep(500);
    const after = terminalState(name);
    const s = await waitFor(name, (x) => x.includes(`node lab-node${PAYLOAD_SHOWN_HEAD}`), 'the escaped node name in the dashboard head');
    expect(s).toContain('conntrack');
    // blessed sets its own title ("nodescope dash") on start: only the hostile one must not appear.
    expect(after.title).not.toContain('PWNED');
    expect(after.window).toBe(before.window);
    expect(after.buffers).toBe('');
    expect(terminalState(name).buffers).toBe('');
    tmux('send-keys', '-t', name, 'q');
  });
});
