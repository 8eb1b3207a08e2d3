/**
 * End to end: the real binary in a real terminal (tmux), driven by keys like a
 * user: select a Service, open its KUBE-SVC chain, follow a jump, and read the
 * KUBE-SEP chain's DNAT target off the screen.
 */
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/paths.js';
import { BINARY, TmuxSession, tmuxAvailable } from '../helpers/tmux.js';

const tmux = new TmuxSession(`nodescope-e2e-${process.pid}`);

afterAll(() => tmux.kill());

describe.runIf(tmuxAvailable('the tmux end-to-end test'))('nodescope in tmux', () => {
  it('selects web, follows its KUBE-SVC chain to a KUBE-SEP with its DNAT target, and quits on q', async () => {
    const fixture = path.join(packageRoot(), 'fixtures', 'lab-iptables');
    expect(tmux.start(`node ${BINARY} --replay ${fixture} --lang en`, 120, 32)).toBe(0);
    await tmux.waitFor(['node lab-node']);
    await tmux.keys('j'); // empty → web
    await tmux.waitFor(['endpoints of default/web']);
    await tmux.keys('Enter');
    const svc = await tmux.waitFor([/chain nat\/KUBE-SVC-[A-Z2-7]{16}/]);
    expect(svc.match(/33\.3%/g)).toHaveLength(3);
    await tmux.keys('Enter'); // the cursor sits on the first endpoint branch
    const sep = await tmux.waitFor([/chain nat\/KUBE-SEP-[A-Z2-7]{16}/]);
    expect(sep).toMatch(/DNAT 10\.244\.0\.23:8080/);
    await tmux.keys('q');
    await tmux.waitExit();
    expect(tmux.alive()).toBe(false);
  });
});
