import { act } from 'react';
import React from 'react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { compactReason, Header, type HeaderProps } from '../../src/ui/components/Header.js';
import { tf } from '../../src/text/i18n.js';
import { cellWidth } from '../../src/text/cells.js';
import { FRAME_WIDTHS, renderAt } from '../helpers/render.js';

/** The error a live session reports when the netns went away under it (its lost probes). */
const LOST = ['iptables-save', 'ip6tables-save', 'nft-json', 'conntrack', 'conntrack-count'].map((id) => `${id}: failed`).join(', ');

function props(width: number, patch: Partial<HeaderProps> = {}): HeaderProps {
  return {
    node: 'vm', live: true, sourceLabel: 'netns:nsx-lab', capturedAt: null, mode: 'iptables', evidence: 'KUBE-SERVICES in nat',
    ageSeconds: 1, error: null, refreshing: false, pane: 'services', width, lang: 'en', ...patch,
  };
}

const tick = (ms: number) => act(() => { vi.advanceTimersByTime(ms); });
const firstLine = (frame: string) => frame.split('\n')[0]!;

describe('compactReason', () => {
  it('groups the lost probes by status, names first', () => {
    expect(compactReason(LOST)).toBe('failed: iptables-save, ip6tables-save, nft-json, conntrack, conntrack-count');
    expect(compactReason('nft-json: timeout, conntrack: failed, ip-addr: timeout')).toBe('timeout: nft-json, ip-addr; failed: conntrack');
    // The node's own words after " — " stay after the grouped list.
    expect(compactReason('iptables-save: failed, nft-json: failed — Cannot open network namespace "x": No such file or directory')).toBe(
      'failed: iptables-save, nft-json — Cannot open network namespace "x": No such file or directory',
    );
  });

  it('keeps any other text as it is', () => {
    const text = 'exit code 1: Cannot open network namespace "nsx-lab": No such file or directory';
    expect(compactReason(text)).toBe(text);
  });
});

describe.each(FRAME_WIDTHS)('Header during a long refresh at %i columns', (width) => {
  it("shows the data's age, not only refreshing… (a refresh stalled on a dead SSH link)", () => {
    const r = renderAt(<Header {...props(width, { refreshing: true, ageSeconds: 38 })} />, width);
    expect(firstLine(r.frame())).toContain('data 38s old, refreshing…');
    r.unmount();
    const first = renderAt(<Header {...props(width, { refreshing: true, ageSeconds: null })} />, width);
    expect(firstLine(first.frame())).toContain('refreshing…');
    first.unmount();
  });
});

describe.each(FRAME_WIDTHS)('Header while stale at %i columns', (width) => {
  beforeEach(() => vi.useFakeTimers({ now: Date.parse('2026-11-29T18:00:00Z') }));
  afterEach(() => vi.useRealTimers());

  it('counts the stale age up once a second with no new props, and keeps the probe names in view', () => {
    const r = renderAt(<Header {...props(width, { error: LOST, ageSeconds: 2 })} />, width);
    expect(firstLine(r.frame())).toMatch(/^nodescope │ stale since 2s: failed: iptables-.* │ node vm │ live netns:nsx-lab$/);
    tick(3000);
    expect(firstLine(r.frame())).toContain('stale since 5s: failed: iptables-');
    tick(60_000);
    expect(firstLine(r.frame())).toMatch(/^nodescope │ stale since 1m05s: failed: iptables-.* │ node vm │ live netns:nsx-lab$/);
    expect(firstLine(r.frame()).length).toBeLessThanOrEqual(width);
    if (width >= 120) expect(firstLine(r.frame())).toContain('ip6tables-save, nft-json');
    r.unmount();
  });

  it('keeps counting when the session moves the data time while still failing, and starts over after a success', () => {
    const r = renderAt(<Header {...props(width, { error: LOST, ageSeconds: 0 })} />, width);
    tick(4000);
    // A refresh that lost probes again: same error, data age back to 0.
    expect(firstLine(r.rerender(<Header {...props(width, { error: LOST, ageSeconds: 0 })} />))).toContain('stale since 4s');
    expect(firstLine(r.rerender(<Header {...props(width, { error: null, ageSeconds: 0 })} />))).toContain('data 0s old');
    expect(vi.getTimerCount()).toBe(0);
    expect(firstLine(r.rerender(<Header {...props(width, { error: LOST, ageSeconds: 0 })} />))).toContain('stale since 0s');
    r.unmount();
  });

  it('stops ticking on unmount', () => {
    // Ink may leave a timer of its own at unmount: compare with a header that never ticked.
    const calm = renderAt(<Header {...props(width)} />, width);
    calm.unmount();
    const inkTimers = vi.getTimerCount();
    vi.clearAllTimers();
    const r = renderAt(<Header {...props(width, { error: LOST })} />, width);
    expect(vi.getTimerCount()).toBe(1);
    r.unmount();
    expect(vi.getTimerCount()).toBe(inkTimers);
  });
});

describe.each(FRAME_WIDTHS)('Header with old API objects at %i columns', (width) => {
  /** What `ApiFileFeed.error()` says after the file was emptied. */
  const EMPTIED = 'the file is empty (--api-file /srv/nodescope/cluster-objects.json: showing the objects read before)';

  it.each(['en', 'ja'] as const)('leads with the reason, keeps the node and the source (%s)', (lang) => {
    const r = renderAt(<Header {...props(width, { apiError: EMPTIED, lang })} />, width);
    const line = firstLine(r.frame());
    r.unmount();
    expect(line).toMatch(/^nodescope │ API: the file is em/);
    expect(line).toContain(lang === 'en' ? '│ node vm │ live netns:nsx-lab' : '│ ノード vm │ ライブ netns:nsx-lab');
    // The reason is cut to the room the node, source and age leave, never them.
    if (width >= 120) expect(line).toContain('API: the file is empty (--api-file /srv/');
    // The age follows when the line has room for it (not beside the wider Japanese words at 80).
    if (lang === 'en' || width >= 120) expect(line.endsWith(tf(lang, 'header.age', { age: '1s' }))).toBe(true);
    expect(cellWidth(line)).toBeLessThanOrEqual(width);
  });

  it('gives way to a stale session error, and is gone when cleared', () => {
    const r = renderAt(<Header {...props(width, { apiError: EMPTIED, error: LOST })} />, width);
    expect(firstLine(r.frame())).toMatch(/^nodescope │ stale since /);
    expect(firstLine(r.rerender(<Header {...props(width, { apiError: null })} />))).toBe('nodescope │ node vm │ live netns:nsx-lab │ data 1s old');
    r.unmount();
  });
});
