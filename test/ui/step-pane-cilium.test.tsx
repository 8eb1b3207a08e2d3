/**
 * Frames of the Step pane at 80 and 120 columns for a walk on the Cilium lab capture: a
 * ClusterIP packet from a pod, translated by socket LB; the cursor on the service lookup
 * (the map entry's bytes), on the backend choice (active slots and probabilities), and
 * on the final step (conntrack holds the backend address), and on the reply's reverse
 * translation after it (getpeername4, cilium_lb4_reverse_sk). Japanese labels once.
 */
import React from 'react';
import { describe, expect, it } from 'vitest';
import { traceFromSnapshot } from '../../src/trace/choose-engine.js';
import type { Lang } from '../../src/text/i18n.js';
import { StepPane, type StepPaneData } from '../../src/ui/panes/StepPane.js';
import { snapshotOf } from '../helpers/fixtures.js';
import { FRAME_WIDTHS, renderAt } from '../helpers/render.js';

function frame(data: StepPaneData, width: number, cursor: number, lang: Lang = 'en', height = 24): string {
  const r = renderAt(<StepPane data={data} width={width} height={height} focused cursor={cursor} lang={lang} />, width);
  const text = r.frame();
  r.unmount();
  return text;
}

describe.each(FRAME_WIDTHS)('Cilium Step pane at %i columns', async (width) => {
  const snapshot = await snapshotOf('lab-cilium');
  const result = traceFromSnapshot(snapshot, { from: '10.244.0.9', to: '10.96.12.34:80/tcp' });
  const data: StepPaneData = { kind: 'result', result };
  const lookup = result.steps.findIndex((s) => s.kind === 'map-lookup' && s.matched === true);
  const choice = result.steps.findIndex((s) => s.branches !== null);
  // The forward walk's final step (the reply's reverse translation comes after it).
  const last = result.verdict.step;

  it('shows the service lookup with the map entry bytes', () => {
    const f = frame(data, width, lookup);
    const lines = f.split('\n');
    expect(lines[0]).toContain('10.244.0.9:43210 → 10.96.12.34:80');
    expect(lines[1]).toContain('forwarded → 10.244.0.23:8080');
    expect(f).toContain('bpf_sock/cilium_lb4_services_v2');
    expect(f).toMatch(/map entry\s+key 0a 60 0c 22 00 50 00 00 06 00 00 00/);
    for (const l of lines) expect(l.length).toBeLessThanOrEqual(width);
    expect(lines.length).toBeLessThanOrEqual(24);
    expect(f).toMatchSnapshot();
  });

  it('shows the backend choice: the two active backends at 50% each', () => {
    const f = frame(data, width, choice);
    expect(f).toMatch(/branches\s+→ 1\s+50\.0%\s+slot 1 → backend 1\s+10\.244\.0\.23:8080/);
    expect(f).toMatch(/2\s+50\.0%\s+slot 2 → backend 2\s+10\.244\.0\.31:8080/);
    expect(f).not.toMatch(/\d\s+\d+\.\d%\s+slot 3/);
    expect(f).toMatchSnapshot();
  });

  it('the last step shows conntrack with the backend address (socket LB)', () => {
    const f = frame(data, width, last);
    expect(f).toMatch(/conntrack\s+tcp\s+6 120 SYN_SENT src=10\.244\.0\.9 dst=10\.244\.0\.23/);
    // `step N of M`, or `N/M` where the keys would not fit beside the long form (80 columns).
    expect(f).toMatch(new RegExp(`step ${last + 1} of ${result.steps.length}|^${last + 1}/${result.steps.length} `, 'm'));
    expect(f).toMatchSnapshot();
  });

  it('the reply step after the final one: getpeername4 whole in HOOK, cilium_lb4_reverse_sk, "on the reply" (en and ja)', () => {
    const reply = result.steps.length - 1;
    expect(reply).toBeGreaterThan(last);
    const en = frame(data, width, reply);
    expect(en).toMatch(/^ +11 getpeername4 +bpf_sock\/cilium_lb4_reverse_sk +✓ 10\.96\.12\.34:80$/m);
    expect(en).toMatch(/^ +5 connect4 +bpf_sock\/cgroup\/connect4 +· connect to 10\.244\.0\.23:/m);
    expect(en).toMatch(/why +on the reply: the application reads the peer with getpeername\(\);/);
    const ja = frame(data, width, reply, 'ja');
    expect(ja).toMatch(/11 getpeername4 +bpf_sock\/cilium_lb4_reverse_sk/);
    expect(ja).toContain('応答で: アプリケーションは getpeername() で');
  });

  it('labels the map entry in Japanese', () => {
    const f = frame(data, width, lookup, 'ja');
    expect(f).toContain('マップ項目');
  });
});
