/**
 * Issue 22, item 4 (terminal habits) in frames: the app redraws on a resize without a key;
 * `s` + a column's letter sorts a table (the header carries the arrow, the same letter
 * reverses, Enter opens the row the sorted cursor is on); Conntrack sorts by packets; a
 * long name is cut in its middle; nft chains without counters show `-`; the LB pane on a
 * node without Cilium names the dataplane the node uses.
 */
import React from 'react';
import { act } from 'react';
import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import { staticSession } from '../../src/collect/session.js';
import { App } from '../../src/ui/App.js';
import { fitCellMiddle } from '../../src/text/cells.js';
import { sortLetters, sortRows } from '../../src/ui/table-sort.js';
import { snapshotOf } from '../helpers/fixtures.js';
import { FRAME_WIDTHS, KEYS, plainFrame, renderApp } from '../helpers/render.js';

async function app(width: number, fixture = 'lab-iptables', height = 30) {
  return renderApp(<App session={staticSession(await snapshotOf(fixture))} lang="en" width={width} height={height} />, width, height);
}

/** The Services pane's data rows (namespace, name) in screen order. */
function serviceNames(frame: string): string[] {
  const lines = frame.split('\n');
  const head = lines.findIndex((l) => /^NAMESPACE/.test(l));
  const out: string[] = [];
  for (const l of lines.slice(head + 1)) {
    const m = /^(\S+)\s+(\S+)\s+(ClusterIP|NodePort|LoadBalancer|ExternalName)\b/.exec(l);
    if (!m) break;
    out.push(`${m[1]}/${m[2]}`);
  }
  return out;
}

describe('a resize redraws at once', () => {
  it('draws the frame at the new width when the terminal says so, without a key', async () => {
    const element = <App session={staticSession(await snapshotOf('lab-iptables'))} lang="en" />;
    let instance!: ReturnType<typeof render>;
    await act(async () => {
      instance = render(element);
      Object.defineProperty(instance.stdout, 'columns', { value: 120, configurable: true, writable: true });
      Object.defineProperty(instance.stdout, 'rows', { value: 30, configurable: true, writable: true });
      instance.stdout.emit('resize');
      await new Promise((r) => setTimeout(r, 30));
    });
    const wide = plainFrame(instance.lastFrame());
    expect(Math.max(...wide.split('\n').map((l) => l.length))).toBeGreaterThan(100);
    await act(async () => {
      Object.defineProperty(instance.stdout, 'columns', { value: 80, configurable: true, writable: true });
      instance.stdout.emit('resize');
      await new Promise((r) => setTimeout(r, 30));
    });
    const narrow = plainFrame(instance.lastFrame());
    expect(Math.max(...narrow.split('\n').map((l) => l.length))).toBeLessThanOrEqual(80);
    expect(narrow).toContain('node lab-node');
    act(() => instance.unmount());
  });
});

describe.each(FRAME_WIDTHS)('sorting at %i columns', (width) => {
  it('sorts Services by NAME with s then its letter, marks the header, reverses on the same letter', async () => {
    const r = await app(width);
    const before = serviceNames(r.frame());
    await r.press('s');
    expect(r.frame()).toMatch(/sort by: n:NAMESPACE a:NAME t:TYPE/);
    await r.press('a');
    let frame = r.frame();
    expect(frame).toMatch(/NAME↑/);
    const ascending = serviceNames(frame);
    expect(ascending).toEqual([...before].sort((x, y) => x.split('/')[1]!.localeCompare(y.split('/')[1]!)));
    await r.press('s', 'a');
    frame = r.frame();
    expect(frame).toMatch(/NAME↓/);
    expect(serviceNames(frame)).toEqual([...ascending].reverse());
    // The cursor indexes the sorted rows: the endpoints shown are the first row's.
    const [ns, name] = serviceNames(frame)[0]!.split('/');
    expect(frame).toContain(`endpoints of ${ns}/${name!.split('…')[0]}`);
    r.unmount();
  });

  it('sorts Conntrack by packets, the busiest flow first, and S reverses it', async () => {
    const snapshot = await snapshotOf('lab-iptables');
    const entries = snapshot.conntrack!.value!.entries;
    const totals = entries.map((e) => Number((e.orig.packets ?? 0n) + (e.reply.packets ?? 0n)));
    const r = await app(width);
    await r.press('4', 's');
    expect(r.frame()).toMatch(/k:PKTS b:BYTES/);
    await r.press('k');
    let frame = r.frame();
    expect(frame).toContain('sort packets↓');
    // The selected flow's raw line is shown under the table: the busiest flow is first.
    const busiest = entries[totals.indexOf(Math.max(...totals))]!;
    expect(frame).toContain(`sport=${busiest.orig.sport} `);
    if (width >= 100) expect(frame).toMatch(/PKTS↓/);
    await r.press('S');
    frame = r.frame();
    expect(frame).toContain('sort packets↑');
    const least = entries[totals.indexOf(Math.min(...totals))]!;
    expect(frame).toContain(`sport=${least.orig.sport} `);
    r.unmount();
  });

  it('sorts the chain list by packets and keeps Enter on the row the sorted cursor shows', async () => {
    const r = await app(width);
    await r.press('2', 's');
    expect(r.frame()).toMatch(/k:PKTS/);
    await r.press('k');
    const frame = r.frame();
    expect(frame).toMatch(/PKTS↓/);
    const first = frame.split('\n').find((l) => /^(nat|filter|mangle|raw)\s/.test(l))!;
    const chain = first.split(/\s+/)[1]!;
    await r.press(KEYS.enter);
    expect(r.frame()).toContain(`/${chain}`);
    r.unmount();
  });
});

describe.each(FRAME_WIDTHS)('terminal details at %i columns', (width) => {
  it('shows - for nft chains and sets without counters in the chain list', async () => {
    const r = await app(width, 'lab-nftables');
    await r.press('2', '/', ...'service-ips', KEYS.enter);
    const lines = r.frame().split('\n');
    const set = lines.find((l) => /@service-ips/.test(l));
    expect(set, 'a set row').toBeDefined();
    expect(set!.trimEnd()).toMatch(/ - +-$/);
    // kube-proxy's `services` chain has no counter statement: no count, not 0.
    await r.press(KEYS.escape, '/', ...'proxy services', KEYS.enter);
    const chain = r.frame().split('\n').find((l) => /^ip kube-proxy\s+services\s/.test(l));
    expect(chain, r.frame()).toBeDefined();
    expect(chain!.trimEnd()).toMatch(/ - +-$/);
    r.unmount();
  });

  it('says on the LB pane of an iptables node that its dataplane is iptables, not that maps are missing', async () => {
    const r = await app(width);
    await r.press('3');
    const frame = r.frame();
    expect(frame).toContain('no Cilium LB maps on this node: its Service dataplane is iptables');
    expect(frame).not.toContain('--bpf-root');
    r.unmount();
  });
});

describe('pure parts', () => {
  it('cuts in the middle so the end (an endpoint address) stays', () => {
    const cut = fitCellMiddle('default/a-very-long-service-name-for-a-demo:http -> 10.244.0.23:8080', 30);
    expect(cut).toHaveLength(30);
    expect(cut).toContain('…');
    expect(cut.endsWith('10.244.0.23:8080')).toBe(true);
    expect(cut.startsWith('default/')).toBe(true);
    expect(fitCellMiddle('short', 10)).toBe('short     ');
  });

  it('gives each column its own letter, never s or q', () => {
    const letters = sortLetters(['SERVICE', 'STATE', 'PROTO', 'PKTS', 'QUEUE']);
    expect(new Set(letters).size).toBe(5);
    expect(letters).not.toContain('s');
    expect(letters).not.toContain('q');
  });

  it('sorts numbers by value, addresses by their numbers, absent last in both directions, ties in input order', () => {
    const rows = [{ v: '10.96.0.10' }, { v: null }, { v: '10.96.0.9' }, { v: '10.96.0.9' }];
    const cols = [{ key: 'v', title: 'V', value: (r: { v: string | null }) => r.v }];
    expect(sortRows(rows, cols, { column: 'v', descending: false })).toEqual([rows[2], rows[3], rows[0], rows[1]]);
    expect(sortRows(rows, cols, { column: 'v', descending: true })).toEqual([rows[0], rows[2], rows[3], rows[1]]);
  });
});
