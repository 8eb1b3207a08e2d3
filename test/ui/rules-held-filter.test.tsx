/**
 * Issue 22 item 2 in frames: `/` in the Rules pane's chain list matches what each chain holds
 * (rule text, comments, addresses), not only its name, with a regex and `!` inverse, and the
 * cursor stays on its chain. The expected chains come from the capture's iptables-save lines
 * (`rule.raw`), not from the pane's own filter text.
 */
import React from 'react';
import { describe, expect, it } from 'vitest';
import { staticSession } from '../../src/collect/session.js';
import type { NodeSnapshot } from '../../src/model/snapshot.js';
import { App } from '../../src/ui/App.js';
import { snapshotOf } from '../helpers/fixtures.js';
import { FRAME_WIDTHS, KEYS, renderApp } from '../helpers/render.js';

const TABLE_ROW = /^(nat|filter|mangle|raw)\s+(\S+)/;

/** The chain list rows on screen, as `table chain` (a middle-elided name kept with its `…`). */
function listed(frame: string): string[] {
  return frame
    .split('\n')
    .map((l) => TABLE_ROW.exec(l))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => `${m[1]} ${m[2]}`);
}

/** Every iptables chain of the capture, as `table chain`, with whether one of its lines matches `re` outside its `-A NAME`. */
function chainsHolding(snapshot: NodeSnapshot, re: RegExp): { name: string; holds: boolean }[] {
  return snapshot.iptables!.value!.tables.flatMap((t) =>
    t.chains.map((c) => ({ name: `${t.name} ${c.name}`, holds: c.rules.some((r) => re.test(r.raw.replace(/-A \S+/, ''))) })),
  );
}

/** Whether a shown row (its name possibly middle-elided) is `full`. */
function shows(row: string, full: string): boolean {
  if (!row.includes('…')) return row === full;
  const [head, tail] = row.split('…') as [string, string];
  return full.startsWith(head) && full.endsWith(tail) && full.length > head.length + tail.length;
}

describe.each(FRAME_WIDTHS)('the Rules chain list / over what chains hold, at %i columns', (width) => {
  it('lists every chain holding 10.244. (names without it), then with ! every chain holding none', async () => {
    const snapshot = await snapshotOf('lab-iptables');
    const r = await renderApp(<App session={staticSession(snapshot)} lang="en" width={width} height={60} />, width, 60);
    const chains = chainsHolding(snapshot, /10\.244\./);
    const holding = chains.filter((c) => c.holds || c.name.includes('10.244.')).map((c) => c.name);
    expect(holding.length).toBeGreaterThan(5);
    expect(holding.every((c) => !c.includes('10.244.'))).toBe(true);
    await r.press('2', '/', ...'10.244.', KEYS.enter);
    const rows = listed(r.frame());
    expect(rows).toHaveLength(holding.length);
    rows.forEach((row, i) => expect(shows(row, holding[i]!), `${row} vs ${holding[i]}`).toBe(true));
    await r.press(KEYS.escape, '/', ...'!10.244.', KEYS.enter);
    const none = chains.filter((c) => !c.holds).map((c) => c.name);
    const inverse = listed(r.frame());
    expect(inverse.length).toBeGreaterThan(5);
    inverse.slice(0, none.length).forEach((row, i) => expect(shows(row, none[i]!), `${row} vs ${none[i]}`).toBe(true));
    r.unmount();
  });

  it('matches a Service comment and a regex over rule text; the cursor stays on its chain', async () => {
    const snapshot = await snapshotOf('lab-iptables');
    const r = await renderApp(<App session={staticSession(snapshot)} lang="en" width={width} height={60} />, width, 60);
    const web = chainsHolding(snapshot, /default\/web:http/).filter((c) => c.holds).map((c) => c.name);
    expect(web.length).toBeGreaterThan(2);
    await r.press('2', '/', ...'default/web:http', KEYS.enter);
    const rows = listed(r.frame());
    expect(rows).toHaveLength(web.length);
    rows.forEach((row, i) => expect(shows(row, web[i]!), `${row} vs ${web[i]}`).toBe(true));
    // A regex: DNAT to port 8080 of any pod address.
    await r.press(KEYS.escape, '/', ...'dnat.*10\\.244\\.\\d+\\.\\d+:8080', KEYS.enter);
    const dnat = chainsHolding(snapshot, /DNAT --to-destination 10\.244\.\d+\.\d+:8080/).filter((c) => c.holds).map((c) => c.name);
    expect(dnat.length).toBeGreaterThan(0);
    expect(listed(r.frame())).toHaveLength(dnat.length);
    // The cursor on the last KUBE-SEP chain stays there while a filter that keeps it is typed.
    await r.press(KEYS.escape);
    const all = listed(r.frame());
    const target = all.map((row, i) => [row, i] as const).filter(([row]) => /^nat KUBE-SEP-/.test(row)).at(-1)!;
    expect(target).toBeDefined();
    for (let i = 0; i < target[1]; i++) await r.press(KEYS.down);
    await r.press('/', ...'10.244.', KEYS.enter, KEYS.enter);
    const chain = /chain nat\/(KUBE-SEP-\S+)/.exec(r.frame());
    expect(chain, r.frame()).not.toBeNull();
    expect(shows(target[0], `nat ${chain![1]}`)).toBe(true);
    r.unmount();
  });
});
