/**
 * Issue 22's "what must show", on the real bundled binary in tmux over the iptables lab capture:
 * Enter on a step opens its rule (Esc back to the step); `:svc` puts the cursor on a Service;
 * `/` with a regular expression and with `!` (Services, and the Rules chain list over what the
 * chains hold); Conntrack sorted by packets; a trace chosen in
 * the TUI from a Pod by name to a NodePort (`:trace` typed with Tab), and given at startup
 * (`--from POD --to-service NS/NAME:PORT`). The resize without a key
 * and the alternate screen are test/ui/sre-tmux.test.ts. Run under the lab lock (tmux is shared):
 * `flock /tmp/nodescope-lab.lock npx vitest run test/lab/ux-tmux.test.ts`.
 */
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/paths.js';
import { snapshotOf } from '../helpers/fixtures.js';
import { BINARY, TmuxSession, tmuxAvailable } from '../helpers/tmux.js';

/** This file's tmux session prefix (tmux is shared by every lab test). */
const PREFIX = 'nsux-';
const fixture = path.join(packageRoot(), 'fixtures', 'lab-iptables');
const sessions: TmuxSession[] = [];
afterEach(() => {
  for (const s of sessions.splice(0)) s.kill();
});

/** The TUI on the iptables lab capture in a new tmux session, its first frame drawn. */
async function tui(what: string, width = 120, height = 34): Promise<TmuxSession> {
  const s = new TmuxSession(`${PREFIX}${what}-${process.pid}`);
  sessions.push(s);
  expect(s.start(`node ${BINARY} --replay ${fixture} --lang en`, width, height)).toBe(0);
  await s.waitFor(['node lab-node', 'NAMESPACE']);
  // The first frame can be drawn before Ink reads the keyboard: a key sent at once may be lost.
  await new Promise((r) => setTimeout(r, 1000));
  return s;
}

/** Types `text` as one tmux literal key string each character (a space is tmux's `Space`). */
function chars(text: string): string[] {
  return [...text].map((c) => (c === ' ' ? 'Space' : c));
}

describe.runIf(tmuxAvailable('the issue 22 tmux runs'))('nodescope in tmux, as issue 22 asks', () => {
  it('Enter on a step opens the rule it names, Esc goes back to that step', async () => {
    const s = await tui('step');
    await s.keys(':', ...chars('trace client web'), 'Enter');
    await s.waitFor(['tcp 10.244.0.9:43210 → 10.96.12.34:80', 'step 1 of']);
    // Step 3 is KUBE-SERVICES' rule for web's ClusterIP (the jump to its KUBE-SVC chain).
    await s.keys('n', 'n');
    const step = await s.waitFor(['step 3 of']);
    expect(step).toMatch(/\s3 prerouting\s+nat\/KUBE-SERVICES #\d+\s+✓ jump KUBE-SVC-/);
    await s.keys('Enter');
    const rules = await s.waitFor([/chain nat\/KUBE-SERVICES/]);
    // The detail under the table is the cursor's rule: web's ClusterIP rule.
    expect(rules).toMatch(/-A KUBE-SERVICES -d 10\.96\.12\.34\/32 /);
    expect(rules).toContain('default/web:http cluster IP');
    await s.keys('Escape');
    await s.waitFor(['step 3 of', 'tcp 10.244.0.9:43210 → 10.96.12.34:80']);
  }, 60_000);

  it(':svc kube-dns puts the cursor on kube-dns; Tab completes the name', async () => {
    const s = await tui('svc');
    await s.keys(':', ...chars('svc kube-d'), 'Tab');
    await s.waitFor([':svc kube-dns']);
    await s.keys('Enter');
    await s.waitFor(['endpoints of kube-system/kube-dns']);
  }, 60_000);

  it('/ takes a regular expression, and ! keeps the rows that do not match', async () => {
    const s = await tui('filter');
    await s.keys('/', ...chars('^default/web'), 'Enter');
    let screen = await s.waitFor(['filter: ^default/web']);
    expect(screen).toMatch(/default\s+web\s+NodePort/);
    expect(screen).not.toMatch(/kube-system\s+kube-dns/);
    await s.keys('Escape', '/', ...chars('!^default/'), 'Enter');
    screen = await s.waitFor(['filter: !^default/']);
    expect(screen).toMatch(/kube-system\s+kube-dns/);
    expect(screen).not.toMatch(/default\s+web\s+NodePort/);
  }, 60_000);

  it('/ in the Rules chain list finds chains by what they hold (an address, a comment), and ! the chains holding none', async () => {
    const s = await tui('held');
    await s.keys('2');
    await s.waitFor([/nat\s+KUBE-SERVICES/]);
    await s.keys('/', ...chars('10.244.'), 'Enter');
    let screen = await s.waitFor(['filter: 10.244.']);
    // The KUBE-SEP chains DNAT to pod addresses: their names do not contain the address.
    const seps = screen.split('\n').filter((l) => /^nat\s+KUBE-SEP-/.test(l));
    expect(seps.length).toBeGreaterThan(2);
    expect(screen).not.toMatch(/^nat\s+KUBE-SERVICES\b/m);
    await s.keys('Escape', '/', ...chars('default/web:http'), 'Enter');
    screen = await s.waitFor(['filter: default/web:http']);
    expect(screen).toMatch(/^nat\s+KUBE-SERVICES\b/m);
    expect(screen).toMatch(/^nat\s+KUBE-SVC-/m);
    await s.keys('Escape', '/', ...chars('!10.244.'), 'Enter');
    screen = await s.waitFor(['filter: !10.244.']);
    expect(screen).toMatch(/^nat\s+KUBE-SERVICES\b/m);
    expect(screen).not.toMatch(/^nat\s+KUBE-SEP-/m);
  }, 60_000);

  it('--from a Pod by name --to-service opens the TUI on the Step pane with that walk; a wrong name is said on the :trace line', async () => {
    const s = new TmuxSession(`${PREFIX}from-${process.pid}`);
    sessions.push(s);
    expect(s.start(`node ${BINARY} --replay ${fixture} --lang en --from client --to-service default/web:80`, 120, 34)).toBe(0);
    const screen = await s.waitFor(['tcp 10.244.0.9:43210 → 10.96.12.34:80', 'step 1 of']);
    expect(screen).toMatch(/DNAT|KUBE-S/);
    const wrong = new TmuxSession(`${PREFIX}from-wrong-${process.pid}`);
    sessions.push(wrong);
    expect(wrong.start(`node ${BINARY} --replay ${fixture} --lang en --from web-abc --to-service default/web:80`, 120, 34)).toBe(0);
    await wrong.waitFor([':trace from web-abc to default/web:80', 'no Pod web-abc in the API objects']);
  }, 60_000);

  it('sorts Conntrack by packets, the busiest flow first', async () => {
    const entries = (await snapshotOf('lab-iptables')).conntrack!.value!.entries;
    const totals = entries.map((e) => Number((e.orig.packets ?? 0n) + (e.reply.packets ?? 0n)));
    const busiest = entries[totals.indexOf(Math.max(...totals))]!;
    const s = await tui('sort');
    await s.keys('4', 's');
    await s.waitFor([/k:PKTS/]);
    await s.keys('k');
    const screen = await s.waitFor(['sort packets↓', 'PKTS↓']);
    // The cursor's flow, detailed under the table, is the busiest one.
    expect(screen).toContain(`sport=${busiest.orig.sport} `);
  }, 60_000);

  it('walks a packet chosen in the TUI from a Pod by name to a NodePort', async () => {
    const s = await tui('trace');
    await s.keys(':', ...chars('trace from cl'), 'Tab', ...chars('to web:'), 'Tab', ...chars('nodep'), 'Tab');
    await s.waitFor([':trace from client to web:80 nodeport']);
    await s.keys('Enter');
    const screen = await s.waitFor(['tcp 10.244.0.9:43210 → 192.168.49.2:30080', 'step 1 of']);
    expect(screen).toMatch(/forwarded → 10\.244\.\d+\.\d+:8080/);
    await s.keys('n', 'n', 'n', 'n', 'n');
    await s.waitFor([/nat\/KUBE-NODEPORTS/]);
  }, 60_000);
});
