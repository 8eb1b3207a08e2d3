/**
 * Issue 22, item 2 in frames: the `:` command line (`:svc`, `:ns`, `:rules`, `:trace`, a
 * pane's name, `:q`, Tab completion, an unknown command said so) and the `/` filter as k9s
 * has it (a regular expression, `!` keeping what does not match) on Services, Rules,
 * Conntrack and LB; the pure matcher's rules.
 */
import React from 'react';
import { describe, expect, it } from 'vitest';
import { staticSession } from '../../src/collect/session.js';
import { App } from '../../src/ui/App.js';
import { isPlainFilter, rowMatcher } from '../../src/text/row-filter.js';
import { completeCommand, runCommand } from '../../src/ui/command-line.js';
import { snapshotOf } from '../helpers/fixtures.js';
import { FRAME_WIDTHS, KEYS, renderApp } from '../helpers/render.js';

async function app(width: number, fixture = 'lab-iptables', height = 30, onQuit?: () => void) {
  return renderApp(<App session={staticSession(await snapshotOf(fixture))} lang="en" width={width} height={height} {...(onQuit ? { onQuit } : {})} />, width, height);
}

/** Services rows (`ns/name`) on screen. */
function services(frame: string): string[] {
  return [...frame.matchAll(/^(\S+)\s+(\*?\s?\S+)\s+(ClusterIP|NodePort|LoadBalancer|ExternalName)\b/gm)].map((m) => `${m[1]}/${m[2]}`);
}

describe.each(FRAME_WIDTHS)('the : command line at %i columns', (width) => {
  it(':svc web puts the cursor on default/web; Tab completes the command and the name', async () => {
    const r = await app(width);
    await r.press(':', 's', 'v', KEYS.tab);
    expect(r.frame()).toContain(':svc ▏');
    await r.press('w', 'e', KEYS.tab);
    expect(r.frame()).toMatch(/:svc web▏ +web web-headless/);
    await r.press(KEYS.enter);
    const frame = r.frame();
    expect(frame).toContain('endpoints of default/web');
    expect(frame).not.toContain(':svc');
    r.unmount();
  });

  it(':svc lands on the Service named while Services is sorted (NAME descending)', async () => {
    const r = await app(width);
    await r.press('s', 'a', 's', 'a');
    expect(r.frame()).toMatch(/NAME↓/);
    for (const [typed, shown] of [['web', 'default/web'], ['kube-dns', 'kube-system/kube-dns'], ['default/empty', 'default/empty']] as const) {
      await r.press(':', ...`svc ${typed}`, KEYS.enter);
      expect(r.frame(), typed).toContain(`endpoints of ${shown}`);
    }
    r.unmount();
  });

  it(':ns kube-system lists that namespace only; :rules KUBE-SERVICES opens the chain; :conntrack switches pane', async () => {
    const r = await app(width);
    await r.press(':', ...'ns kube-system', KEYS.enter);
    expect(services(r.frame())).toEqual(['kube-system/kube-dns']);
    await r.press(':', ...'rules KUBE-SERVICES', KEYS.enter);
    expect(r.frame()).toContain('chain nat/KUBE-SERVICES');
    await r.press(':', ...'conntrack', KEYS.enter);
    expect(r.frame()).toMatch(/\d+\/\d+ entries/);
    r.unmount();
  });

  it(':trace walks the packet given; an unknown command says so and stays open; :q quits', async () => {
    let quit = false;
    const r = await app(width, 'lab-iptables', 30, () => (quit = true));
    await r.press(':', ...'trace 10.244.0.9 10.96.12.34:80/tcp', KEYS.enter);
    expect(r.frame()).toMatch(/10\.244\.0\.9/);
    expect(r.frame()).toMatch(/DNAT|KUBE-SEP/);
    await r.press(':', ...'nope', KEYS.enter);
    expect(r.frame()).toContain('unknown command nope');
    await r.press(KEYS.escape, ':', 'q', KEYS.enter);
    expect(quit).toBe(true);
    r.unmount();
  });
});

describe.each(FRAME_WIDTHS)('the / filter at %i columns', (width) => {
  it('takes a regular expression and ! for the rows that do not match, on Services', async () => {
    const r = await app(width);
    await r.press('/', ...'^default/web', KEYS.enter);
    expect(services(r.frame()).sort().map((s) => s.slice(0, 'default/web'.length))).toEqual(['default/web', 'default/web']);
    expect(services(r.frame())).toHaveLength(2);
    await r.press(KEYS.escape, '/', ...'!^default/', KEYS.enter);
    expect(services(r.frame())).toEqual(['kube-system/kube-dns']);
    await r.press(KEYS.escape, '/', ...'/web |dns', KEYS.enter);
    expect(services(r.frame()).sort()).toEqual(['default/web', 'kube-system/kube-dns']);
    r.unmount();
  });

  it('filters the chain list by expression and inverse over names and what the chains hold', async () => {
    const r = await app(width);
    await r.press('2', '/', ...'KUBE-(SVC|SEP)-', KEYS.enter);
    let rows = r.frame().split('\n').filter((l) => /^(nat|filter|mangle|raw)\s/.test(l));
    expect(rows.length).toBeGreaterThan(3);
    // KUBE-SERVICES holds the jumps to KUBE-SVC-…; INPUT holds none.
    expect(rows.some((l) => /^nat\s+KUBE-SERVICES\b/.test(l))).toBe(true);
    expect(rows.some((l) => /^filter\s+INPUT\b/.test(l))).toBe(false);
    await r.press(KEYS.escape, '/', ...'!KUBE-', KEYS.enter);
    rows = r.frame().split('\n').filter((l) => /^(nat|filter|mangle|raw)\s/.test(l));
    expect(rows.length).toBeGreaterThan(0);
    for (const l of rows) expect(l).not.toMatch(/KUBE-/);
    r.unmount();
  });

  it('filters Conntrack flows by expression and inverse', async () => {
    const r = await app(width);
    await r.press('4', '/', ...'udp.*10\\.96\\.0\\.10', KEYS.enter);
    const shown = /(\d+)\/(\d+) entries/.exec(r.frame())!;
    expect(Number(shown[1])).toBeGreaterThan(0);
    await r.press(KEYS.escape, '/', ...'!udp.*10\\.96\\.0\\.10', KEYS.enter);
    const inverse = /(\d+)\/(\d+) entries/.exec(r.frame())!;
    expect(Number(inverse[1]) + Number(shown[1])).toBe(Number(shown[2]));
    r.unmount();
  });
});

describe('the pure parts', () => {
  it('matches plain text, expressions and inverses; an invalid expression is text', () => {
    expect(isPlainFilter('10.96.0.10')).toBe(true);
    expect(isPlainFilter('web$')).toBe(false);
    expect(rowMatcher('WEB').test('default/web')).toBe(true);
    expect(rowMatcher('^kube').test('default/kube')).toBe(false);
    expect(rowMatcher('!web').test('default/web')).toBe(false);
    expect(rowMatcher('!web').test('kube-system/kube-dns')).toBe(true);
    expect(rowMatcher('10.96.0.1[').test('dst=10.96.0.1[x')).toBe(true);
    expect(rowMatcher('!').test('anything')).toBe(true);
  });

  it('completes commands and Service names, and says what it cannot run', async () => {
    const snapshot = await snapshotOf('lab-iptables');
    expect(completeCommand('tr', snapshot).text).toBe('trace ');
    expect(completeCommand('rules KUBE-SVC', snapshot).choices.every((c) => c.startsWith('KUBE-SVC'))).toBe(true);
    expect(completeCommand('ns kube', snapshot).text).toBe('ns kube-system');
    expect(runCommand('rules NOPE', snapshot)).toEqual({ kind: 'error', message: 'no chain or set NOPE in this capture' });
    expect(runCommand('trace 10.0.0.1', snapshot).kind).toBe('error');
  });
});
