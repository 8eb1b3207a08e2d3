/**
 * End to end (issue 17): the real binary in tmux on a capture whose web Service DNATs every
 * endpoint to the wrong port — from its broken VERDICT to the rule that proves it in 2 keys
 * (`d`, Enter), and Esc back to the findings.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { copyFixture } from '../helpers/fixtures.js';
import { BINARY, TmuxSession, tmuxAvailable } from '../helpers/tmux.js';

const tmux = new TmuxSession(`nodescope-diag-${process.pid}`);

afterAll(() => tmux.kill());

describe.runIf(tmuxAvailable('the diagnose tmux test'))('diagnose in tmux', () => {
  it('broken web (every DNAT to port 8081): VERDICT broken → d → Enter lands on the KUBE-SEP DNAT rule; Esc returns', async () => {
    const dir = copyFixture('lab-iptables');
    const file = path.join(dir, 'probes', 'iptables-save.stdout');
    writeFileSync(file, readFileSync(file, 'utf8').replace(/--to-destination (10\.244\.\d+\.\d+):8080/g, '--to-destination $1:8081'));
    expect(tmux.start(`node ${BINARY} --replay ${dir} --lang en`, 120, 32)).toBe(0);
    await tmux.waitFor(['node lab-node']);
    await tmux.keys('j'); // empty → web
    const list = await tmux.waitFor([/default\s+web\s.*broken/]);
    expect(list).toMatch(/endpoints of default\/web/);
    await tmux.keys('d');
    const findings = await tmux.waitFor(['default/web: broken']);
    expect(findings).toMatch(/wrong-target-port|DNAT to port 8081/);
    await tmux.keys('Enter');
    const rule = await tmux.waitFor([/chain nat\/KUBE-SEP-[A-Z2-7]{16}/]);
    expect(rule).toMatch(/DNAT 10\.244\.\d+\.\d+:8081/);
    await tmux.keys('Escape');
    await tmux.waitFor(['default/web: broken']);
    await tmux.keys('q');
    await tmux.waitExit();
    expect(tmux.alive()).toBe(false);
  });
});
