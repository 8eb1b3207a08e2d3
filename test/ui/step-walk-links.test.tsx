/**
 * Issue 22 item 1 in frames: Enter on a step of the walk opens its row — an iptables rule in
 * its chain, the element of kube-proxy's nftables map the lookup hit, the branch an nft
 * random choice took, Cilium's LB frontend, the conntrack entry of a known flow — with the
 * cursor on it, and Esc comes back to the same step; `:trace` chooses the packet from a Pod
 * name to a NodePort (Tab completes each word); `b` keeps the cursor; the HOOK column names
 * Cilium's attach points; every key of the walk is on its last line (80 and 120 columns, en and ja).
 */
import React from 'react';
import { describe, expect, it } from 'vitest';
import { staticSession } from '../../src/collect/session.js';
import { chooseTracePacket, traceWordChoices } from '../../src/analysis/trace-choice.js';
import { t, tf, type Lang } from '../../src/text/i18n.js';
import { App } from '../../src/ui/App.js';
import { completeCommand } from '../../src/ui/command-line.js';
import { snapshotOf } from '../helpers/fixtures.js';
import { FRAME_WIDTHS, KEYS, renderApp } from '../helpers/render.js';

async function app(width: number, fixture: string, lang: Lang = 'en', height = 34) {
  const snapshot = await snapshotOf(fixture);
  return renderApp(<App session={staticSession(snapshot)} lang={lang} width={width} height={height} />, width, height);
}

/** The number of the highlighted step, from the walk's last line (`step N of M` or `N/M`). */
function stepAt(frame: string): number {
  const m = /step (\d+) of \d+|ステップ (\d+) \/ \d+|^(\d+)\/\d+ /m.exec(frame);
  return Number(m?.[1] ?? m?.[2] ?? m?.[3] ?? NaN);
}

/** Presses `n` until the highlighted step's row matches `re` (at most 60 steps). */
async function stepTo(r: Awaited<ReturnType<typeof app>>, re: RegExp): Promise<void> {
  for (let i = 0; i < 60; i++) {
    if (re.test(currentRow(r.frame()))) return;
    await r.press('n');
  }
  throw new Error(`no step matches ${re}`);
}

/** The Rules pane's detail of the cursor's rule or element (`line N:` / `rule:` and its text). */
function ruleDetail(frame: string): string {
  const lines = frame.split('\n');
  const at = lines.map((l) => /^(line \d+|rule):$/.test(l)).lastIndexOf(true);
  return at < 0 ? '' : lines.slice(at + 1, at + 3).join('');
}

/** The row of the step table whose number is the highlighted step's. */
function currentRow(frame: string): string {
  const n = stepAt(frame);
  const lines = frame.split('\n');
  // Below the table's header line (`  # HOOK …`): the header's pane tabs also start with digits.
  const head = lines.findIndex((l) => /^\s+# /.test(l));
  return lines.slice(head + 1).find((l) => new RegExp(`^\\s*${n} `).test(l)) ?? '';
}

describe.each(FRAME_WIDTHS)('Enter on a step at %i columns', (width) => {
  it('iptables: opens the KUBE-SVC rule the walk jumped by, cursor on it; Esc returns to the same step', async () => {
    const r = await app(width, 'lab-iptables');
    await r.press(':', ...'trace from client to web:80', KEYS.enter);
    expect(r.frame()).toContain('tcp 10.244.0.9:43210 → 10.96.12.34:80');
    await stepTo(r, /nat\/KUBE-SVC-\S+ #\d+\s+✓ jump KUBE-SEP/);
    const at = stepAt(r.frame());
    await r.press(KEYS.enter);
    const rules = r.frame();
    expect(rules).toMatch(/chain nat\/KUBE-SVC-[A-Z2-7]{16}/);
    // The cursor's rule is the branch the walk took (the first endpoint), not the chain's first rule.
    expect(ruleDetail(rules)).toMatch(/-A KUBE-SVC-\S+ .*10\.244\.0\.23:8080/);
    await r.press(KEYS.escape);
    expect(stepAt(r.frame())).toBe(at);
    expect(r.frame()).toContain('tcp 10.244.0.9:43210 → 10.96.12.34:80');
    r.unmount();
  });

  it.each(['en', 'ja'] as const)('titles the chain opened from a step with where Esc goes: the step, then deeper chains back to their chain (%s)', async (lang) => {
    const r = await app(width, 'lab-iptables', lang);
    await r.press(':', ...'trace from client to web:80', KEYS.enter);
    await stepTo(r, /nat\/KUBE-SVC-\S+ #\d+\s+✓ jump KUBE-SEP/);
    await r.press(KEYS.enter);
    const title = (frame: string) => frame.split('\n').find((l) => /KUBE-SVC-|KUBE-SEP-/.test(l) && /Esc/.test(l)) ?? '';
    const svc = title(r.frame());
    expect(svc).toContain(tf(lang, 'rules.back', { chain: t(lang, 'pane.step') }));
    expect(svc).not.toContain(t(lang, 'rules.tables'));
    // Enter on the jump opens KUBE-SEP: its Esc goes back to the KUBE-SVC chain, whose Esc then goes to the step.
    await r.press(KEYS.enter);
    expect(title(r.frame())).toMatch(new RegExp(tf(lang, 'rules.back', { chain: 'KUBE-SVC-[A-Z2-7]{16}' })));
    await r.press(KEYS.escape);
    expect(title(r.frame())).toContain(tf(lang, 'rules.back', { chain: t(lang, 'pane.step') }));
    await r.press(KEYS.escape);
    expect(r.frame()).toContain('tcp 10.244.0.9:43210 → 10.96.12.34:80');
    r.unmount();
  });

  it('nftables: opens the service-ips element the vmap lookup hit, and the branch numgen chose', async () => {
    const r = await app(width, 'lab-nftables');
    await r.press(':', ...'trace client web', KEYS.enter);
    await stepTo(r, /kube-proxy\/services #\d+\s+✓/);
    await r.press(KEYS.enter);
    let f = r.frame();
    expect(f).toContain('@service-ips');
    expect(ruleDetail(f)).toMatch(/10\.96\.12\.34 \. tcp \. 80 .*: goto service-/);
    await r.press(KEYS.escape);
    expect(r.frame()).toContain('tcp 10.244.0.9:43210 → 10.96.12.34:80');
    await stepTo(r, /kube-proxy\/service-\S+ #\d+\s+✓ goto endpoint/);
    await r.press(KEYS.enter);
    f = r.frame();
    // The cursor is on the random branch taken: the detail is the numgen rule, the title the service chain.
    expect(f).toMatch(/chain ip kube-proxy\/service-/);
    expect(ruleDetail(f)).toContain('numgen random mod 3');
    r.unmount();
  });

  it('Cilium: a services-map lookup opens its frontend in the LB maps pane, Esc back to the step', async () => {
    const r = await app(width, 'lab-cilium');
    await r.press(':', ...'trace 10.244.0.9 10.96.12.34:80/tcp', KEYS.enter);
    expect(r.frame()).toMatch(/connect4|tc ingress/);
    await stepTo(r, /cilium_lb4_services/);
    await r.press(KEYS.enter);
    const lb = r.frame();
    // The title under the frontends names the selected one: the ClusterIP frontend the walk looked up.
    expect(lb).toMatch(/^default\/web( \(http\))? · 10\.96\.12\.34:80\/TCP · ID \d+/m);
    await r.press(KEYS.escape);
    expect(r.frame()).toMatch(/cilium_lb4_services/);
    r.unmount();
  });

  it('a packet of a known flow: the conntrack step opens its entry in the Conntrack pane', async () => {
    const r = await app(width, 'lab-iptables');
    await r.press(':', ...'trace 10.244.0.9:33052 10.96.12.34:80/tcp established', KEYS.enter);
    await stepTo(r, /conntrack/);
    await r.press(KEYS.enter);
    const f = r.frame();
    // The detail under the table is the cursor's entry: the flow of the walk (table rows start with the protocol).
    expect(f).toMatch(/^10\.244\.0\.9:33052 → 10\.96\.12\.34:80 ⇒ 10\.244\.0\.31:8080$/m);
    await r.press(KEYS.escape);
    expect(r.frame()).toContain('[ack]');
    r.unmount();
  });
});

describe('a step with no row', () => {
  it('Enter on the routing decision says why nothing opens, and stays on the step', async () => {
    const r = await app(120, 'lab-iptables');
    await r.press(':', ...'trace client web', KEYS.enter);
    await stepTo(r, /^\s*\d+\s+routing/);
    const at = stepAt(r.frame());
    await r.press(KEYS.enter);
    expect(r.frame()).toContain('this step has no rule, map entry or flow to open');
    expect(stepAt(r.frame())).toBe(at);
    r.unmount();
  });
});

describe('the walk keys', () => {
  it('b follows the next branch and keeps the cursor on its step number', async () => {
    const r = await app(120, 'lab-iptables');
    await r.press(':', ...'trace client web', KEYS.enter);
    await r.press('n', 'n', 'n');
    const at = stepAt(r.frame());
    await r.press('b');
    expect(r.frame()).toMatch(/forwarded → 10\.244\.0\.31:8080/);
    expect(stepAt(r.frame())).toBe(at);
    r.unmount();
  });

  it.each([
    [80, 'en'],
    [120, 'en'],
    [80, 'ja'],
    [120, 'ja'],
  ] as const)('shows every key of the walk at %i columns (%s); the whole rule text wraps under the table', async (width, lang) => {
    const r = await app(width, 'lab-iptables', lang);
    await r.press(':', ...'trace client web', KEYS.enter);
    await stepTo(r, /nat\/KUBE-SERVICES #\d+\s+✓/);
    const f = r.frame();
    for (const key of ['n/p', 'Enter', 'b ', 'Esc', ':trace', '?']) expect(f).toContain(key);
    // The rule's comment and its target are both on screen, however narrow.
    expect(f).toContain('"default/web:http cluster IP"');
    expect(f).toMatch(/KUBE-SVC-[A-Z2-7]{16}( \(handle \d+\))?$/m);
    for (const l of f.split('\n')) expect(l.length).toBeLessThanOrEqual(width);
    if (lang === 'ja') expect(f).toContain('開く');
    r.unmount();
  });

  it('fills the HOOK column of Cilium steps with the attach point', async () => {
    const r = await app(120, 'lab-cilium');
    await r.press(':', ...'trace 10.244.0.9 10.96.12.34:80/tcp', KEYS.enter);
    const rows = r.frame().split('\n').filter((l) => /^\s*\d+ /.test(l) && l.includes('bpf_'));
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) expect(row).toMatch(/^\s*\d+ (connect4|tc ingress|tc egress|sendmsg4|recvmsg4|getpeername4)\s/);
    r.unmount();
  });
});

describe(':trace chosen in the TUI', () => {
  it('from a Pod by name to the NodePort of a Service, first or established', async () => {
    const snapshot = await snapshotOf('lab-iptables');
    expect(chooseTracePacket(snapshot, ['from', 'client', 'to', 'web:80', 'nodeport'])).toEqual({ kind: 'packet', packet: { from: '10.244.0.9', to: '192.168.49.2:30080/tcp' } });
    expect(chooseTracePacket(snapshot, ['client', 'web:http', 'nodeport', 'established'])).toEqual({ kind: 'packet', packet: { from: '10.244.0.9', to: '192.168.49.2:30080/tcp', flags: 'ack' } });
    expect(chooseTracePacket(snapshot, ['node', 'kube-system/kube-dns:53'])).toEqual({ kind: 'packet', packet: { from: '', to: '10.96.0.10:53/udp', entry: 'host' } });
    expect(chooseTracePacket(snapshot, ['outside', 'web', 'nodeport'])).toMatchObject({ kind: 'packet', packet: { from: '203.0.113.10', entry: 'external' } });
    expect(chooseTracePacket(snapshot, ['client', 'kube-dns', 'nodeport'])).toEqual({ kind: 'error', message: 'Service kube-system/kube-dns port 53 has no NodePort (type ClusterIP)' });
    expect(chooseTracePacket(snapshot, ['client', 'web', 'lb'])).toEqual({ kind: 'error', message: 'Service default/web has no load-balancer IP (status.loadBalancer.ingress)' });
    expect(chooseTracePacket(snapshot, ['nobody', 'web'])).toMatchObject({ kind: 'error', message: expect.stringContaining('no Pod nobody') });
  });

  it('Tab completes each word: Pod, Service, port, frontend, packet', async () => {
    const snapshot = await snapshotOf('lab-iptables');
    expect(traceWordChoices(snapshot, [], 'cl')).toEqual(['client']);
    expect(traceWordChoices(snapshot, ['from', 'client', 'to'], 'web:')).toEqual(['web:80']);
    expect(traceWordChoices(snapshot, ['client', 'web:80'], 'node')).toEqual(['nodeport']);
    expect(completeCommand('trace from cl', snapshot).text).toBe('trace from client ');
    expect(completeCommand('trace from client to web-h', snapshot).text).toBe('trace from client to web-headless ');
    expect(completeCommand('trace client web:80 nodep', snapshot).text).toBe('trace client web:80 nodeport ');
    expect(completeCommand('trace client web:80 nodeport est', snapshot).text).toBe('trace client web:80 nodeport established ');
  });

  it.each(FRAME_WIDTHS)('walks a Pod-to-NodePort packet typed with Tab at %i columns', async (width) => {
    const r = await app(width, 'lab-iptables');
    await r.press(':', ...'trace from cl', KEYS.tab, ...'to web:', KEYS.tab, ...'nodep', KEYS.tab, KEYS.enter);
    const f = r.frame();
    expect(f).toContain('tcp 10.244.0.9:43210 → 192.168.49.2:30080');
    expect(f).toMatch(/nat\/KUBE-NODEPORTS/);
    r.unmount();
  });
});
